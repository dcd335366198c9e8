/*
 * ik_foot.c: foot placement (ray down, raise, align, smooth) and the pelvis spring.
 *
 * The foot's correction is measured along `up` from the animated position: a planted
 * foot keeps its animated x/z (for +Y up) and only rises, so the animation's stride is
 * untouched. Both springs share spring_step(), the exact solution of
 *   x'' = omega^2 (g(t) - x) - 2 omega x'
 * over one step for a goal g moving linearly from g0 to g1.
 */
#include "ik_foot.h"

#include <stddef.h>

#include "ik_internal.h"
#include "ik_scene_internal.h"

#ifdef IK_REAL_FLOAT
#define ik__expm1 expm1f
#else
#define ik__expm1 expm1
#endif

/* ---- the spring ---- */

/* Advances x, v by dt >= 0 with omega > 0. With h = omega dt, m = 1 - e^-h and
 * delta = g1 - g0, the exact solution is
 *   x1 = g0 + e^-h ((x0 - g0)(1 + h) + v0 dt) + delta (2 - m - 2m / h)
 *   v1 = e^-h (v0 (1 - h) - omega h (x0 - g0)) + delta omega (m / h + m - 1)
 * (the delta terms are the goal's motion: as h -> 0 both vanish like h^2 and h; as
 * h -> inf the goal is reached). m comes from expm1, so m / h keeps full precision for
 * tiny steps, where 1 - exp(-h) would cancel. Once e^-h underflows, the terms it scales
 * are dropped rather than computed, so no step is too long: 0 times a product that
 * overflowed would be NaN. At the other end, a step so short (or a spring so slow) that
 * h underflows to 0 is no motion at all, the limit of the solution as h -> 0: m / h
 * would be 0 / 0. */
static void spring_step(ik_real *x, ik_real *v, ik_real g0, ik_real g1, ik_real omega, ik_real dt) {
  const ik_real h = omega * dt;
  ik_real m, e, m_h, delta, from_goal, x1, v1;
  if (!(h > 0)) return;
  m = -ik__expm1(-h);
  e = 1 - m;
  m_h = m / h;
  delta = g1 - g0;
  from_goal = *x - g0;
  x1 = g0 + delta * ((2 - m) - 2 * m_h);
  v1 = delta * omega * ((m_h - 1) + m);
  if (e > 0) {
    x1 += e * (from_goal * (1 + h) + *v * dt);
    v1 += e * (*v * (1 - h) - omega * h * from_goal);
  }
  *x = x1;
  *v = v1;
}

/* omega for a smooth time, 0 meaning "no smoothing". Below IK_FOOT_MIN_SMOOTH_TIME the
 * spring would settle within rounding of one step anyway, and omega times a velocity
 * could overflow. */
static ik_real spring_omega(ik_real smooth_time) {
  return smooth_time >= IK_FOOT_MIN_SMOOTH_TIME ? 2 / smooth_time : 0;
}

/* One step of the spring on a scalar, snapping when there is no smoothing. */
static void smooth_scalar(ik_real *x, ik_real *v, ik_real g0, ik_real g1, ik_real smooth_time, ik_real dt) {
  const ik_real omega = spring_omega(smooth_time);
  if (omega > 0) {
    spring_step(x, v, g0, g1, omega, dt);
  } else {
    *x = g1;
    *v = 0;
  }
}

/* ---- parameters and state ---- */

void ik_foot_params_init(ik_foot_params *params) {
  params->ray_height = (ik_real)0.5;
  params->ray_length = 1;
  params->foot_offset = (ik_real)0.08;
  params->smooth_time = (ik_real)0.05;
  params->up = ik_vec3_make(0, 1, 0);
}

/* A non-negative real field. */
static ik_status check_non_negative(ik_real r, ik_error *err, const char *field) {
  const ik_status st = ik__check_real(r, err, field, -1);
  if (st != IK_OK) return st;
  if (r < 0) return ik__fail(err, IK_E_PARAMETER, field, -1);
  return IK_OK;
}

ik_status ik_foot_params_validate(const ik_foot_params *params, ik_error *err) {
  ik_status st;
  if (params == NULL) return ik__fail(err, IK_E_NULL, "params", -1);
  if ((st = check_non_negative(params->ray_height, err, "ray_height")) != IK_OK) return st;
  if ((st = check_non_negative(params->ray_length, err, "ray_length")) != IK_OK) return st;
  if ((st = ik__check_real(params->ray_height + params->ray_length, err, "ray_length", -1)) != IK_OK)
    return st;
  if ((st = check_non_negative(params->foot_offset, err, "foot_offset")) != IK_OK) return st;
  if ((st = check_non_negative(params->smooth_time, err, "smooth_time")) != IK_OK) return st;
  if ((st = ik__check_vec3(params->up, err, "up", -1)) != IK_OK) return st;
  if (!(ik_vec3_len2(params->up) > IK_TINY_LEN2)) return ik__fail(err, IK_E_PARAMETER, "up", -1);
  return ik__fail(err, IK_OK, NULL, -1);
}

void ik_foot_state_init(ik_foot_state *state) {
  state->offset = ik_vec3_zero();
  state->velocity = ik_vec3_zero();
  state->goal = ik_vec3_zero();
  state->rotation = ik_quat_identity();
  state->animated = ik_vec3_zero();
  state->initialised = 0;
}

/* The ray's start and the animated position are both checked: the start is the
 * position moved by ray_height, and must be a usable coordinate too. */
static ik_status validate_probe(const ik_foot_params *params, const ik_ground *ground,
                                ik_vec3 animated_position, ik_error *err) {
  ik_status st;
  if ((st = ik_foot_params_validate(params, err)) != IK_OK) return st;
  if (ground == NULL) return ik__fail(err, IK_E_NULL, "ground", -1);
  if ((st = ik__check_vec3(animated_position, err, "animated_position", -1)) != IK_OK) return st;
  return ik__check_vec3(ik_vec3_madd(animated_position, ik_vec3_normalize(params->up), params->ray_height),
                        err, "animated_position", -1);
}

ik_status ik_foot_validate(const ik_foot_params *params, const ik_foot_state *state, const ik_ground *ground,
                           ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                           const ik_foot_result *out, ik_error *err) {
  ik_status st;
  if ((st = validate_probe(params, ground, animated_position, err)) != IK_OK) return st;
  if (state == NULL) return ik__fail(err, IK_E_NULL, "state", -1);
  if (out == NULL) return ik__fail(err, IK_E_NULL, "out", -1);
  if (state->initialised && ((st = ik__check_vec3(state->offset, err, "state", -1)) != IK_OK ||
                             (st = ik__check_vec3(state->velocity, err, "state", -1)) != IK_OK ||
                             (st = ik__check_vec3(state->goal, err, "state", -1)) != IK_OK ||
                             (st = ik__check_vec3(state->animated, err, "state", -1)) != IK_OK ||
                             (st = ik__check_quat(state->rotation, err, "state", -1)) != IK_OK))
    return st;
  if ((st = ik__check_quat(animated_rotation, err, "animated_rotation", -1)) != IK_OK) return st;
  if ((st = check_non_negative(dt, err, "dt")) != IK_OK) return st;
  return ik__fail(err, IK_OK, NULL, -1);
}

/* ---- the ground under a foot ---- */

/* How far above its standing height a foot still counts as planted: the rounding of
 * the ray's distance, relative to the coordinates involved. A foot the pelvis has just
 * lowered onto its ground sits at deficit 0 up to this noise, and must not flicker
 * between planted and swinging (its rotation goal would flicker with it). */
static ik_real contact_slack(const ik_foot_params *params, ik_vec3 animated_ws) {
  const ik_real coord = ik_fabs(animated_ws.x) + ik_fabs(animated_ws.y) + ik_fabs(animated_ws.z);
  return 64 * IK_REAL_EPSILON * (1 + coord + params->ray_height + params->ray_length + params->foot_offset);
}

typedef struct foot_probe {
  ik_ray_hit hit;
  ik_real deficit; /* see ik_foot_result */
  int grounded;
} foot_probe;

/* Casts the ray and measures the deficit. Inputs already validated; the only failure
 * left is a custom ground's callback. */
static ik_status probe_ground(const ik_foot_params *params, const ik_ground *ground, ik_vec3 animated_ws,
                              ik_vec3 up_ws, foot_probe *probe) {
  const ik_vec3 origin_ws = ik_vec3_madd(animated_ws, up_ws, params->ray_height);
  const ik_status st = ik_ground_raycast(ground, origin_ws, ik_vec3_neg(up_ws),
                                         params->ray_height + params->ray_length, &probe->hit);
  ik_real cos_slope, height_above_hit;
  probe->deficit = 0;
  probe->grounded = 0;
  if (st != IK_OK || !probe->hit.hit) return st;
  /* Along up the ankle must stand foot_offset / cos(slope) above the hit point to be
   * foot_offset from the surface along its normal (the hit is straight below it). */
  cos_slope = ik_vec3_dot(probe->hit.normal, up_ws);
  if (cos_slope < IK_FOOT_MIN_COS) cos_slope = IK_FOOT_MIN_COS;
  height_above_hit = probe->hit.distance - params->ray_height;
  probe->deficit = params->foot_offset / cos_slope - height_above_hit;
  probe->grounded = probe->deficit >= -contact_slack(params, animated_ws);
  return IK_OK;
}

ik_status ik_foot_deficit(const ik_foot_params *params, const ik_ground *ground, ik_vec3 animated_position,
                          ik_real *deficit) {
  foot_probe probe;
  ik_status st = validate_probe(params, ground, animated_position, NULL);
  if (st != IK_OK) return st;
  if (deficit == NULL) return IK_E_NULL;
  st = probe_ground(params, ground, animated_position, ik_vec3_normalize(params->up), &probe);
  if (st != IK_OK) return st;
  *deficit = probe.deficit;
  return IK_OK;
}

/* ---- the update ---- */

ik_status ik_foot_update(const ik_foot_params *params, ik_foot_state *state, const ik_ground *ground,
                         ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                         ik_foot_result *out) {
  const ik_status st =
      ik_foot_validate(params, state, ground, animated_position, animated_rotation, dt, out, NULL);
  if (st != IK_OK) return st;
  return ik__foot_update_valid(params, state, ground, animated_position, animated_rotation, dt, out);
}

/* The spring may slow a foot coming down, but never leaves its sole under the ground:
 * along up the offset is at least the deficit (the sole on the surface), and a foot
 * held there stops coming down. Its speed is not raised to the goal's: a riser's rise
 * over one frame would launch the foot at rise / dt, faster the higher the rate. */
static void keep_above_ground(ik_foot_state *state, ik_vec3 up_ws, ik_real deficit) {
  const ik_real below = deficit - ik_vec3_dot(state->offset, up_ws);
  const ik_real down = ik_vec3_dot(state->velocity, up_ws);
  if (!(below > 0)) return;
  state->offset = ik_vec3_madd(state->offset, up_ws, below);
  if (down < 0) state->velocity = ik_vec3_madd(state->velocity, up_ws, -down);
}

/* The correction a foot at animated_ws aims for along up (raised onto its ground when
 * planted; none when swinging), with the probe behind it. */
static ik_status goal_at(const ik_foot_params *params, const ik_ground *ground, ik_vec3 animated_ws,
                         ik_vec3 up_ws, foot_probe *probe, ik_real *goal) {
  const ik_status st = probe_ground(params, ground, animated_ws, up_ws, probe);
  if (st != IK_OK) return st;
  *goal = probe->grounded && probe->deficit > 0 ? probe->deficit : 0;
  return IK_OK;
}

/* Halvings of the frame spent finding when a foot crossed an edge (a riser, a kerb): the
 * crossing is then known to 1/256 of the frame, whatever the frame. */
#define EDGE_HALVINGS 8

/* Where in this frame the goal jumped, if it did. The foot is taken to move in a straight
 * line from last update's animated place to this one's; the goal halfway is asked, and
 * when it lies nearer one end's than a quarter of the change from their mean, the goal
 * stepped (a kink, a foot touching down, bends it by less): halvings then find the step,
 * *at in (0, 1) the fraction of the frame, *before and *after the goal either side of it.
 * Otherwise *at = -1: the goal moved evenly (a slope, flat ground, no ground). A frame's
 * goal moving by less than the contact slack is taken as even, without a ray. */
static ik_status find_edge(const ik_foot_params *params, const ik_ground *ground, ik_vec3 from_ws,
                           ik_vec3 to_ws, ik_vec3 up_ws, ik_real g0, ik_real g1, ik_real *at, ik_real *before,
                           ik_real *after) {
  foot_probe probe;
  ik_real lo = 0, hi = 1, glo = g0, ghi = g1, gm;
  ik_status st;
  int k;
  *at = -1;
  if (!(ik_fabs(g1 - g0) > contact_slack(params, to_ws))) return IK_OK;
  if ((st = goal_at(params, ground, ik_vec3_lerp(from_ws, to_ws, (ik_real)0.5), up_ws, &probe, &gm)) != IK_OK)
    return st;
  if (!(ik_fabs(gm - (ik_real)0.5 * (g0 + g1)) > (ik_real)0.25 * ik_fabs(g1 - g0))) return IK_OK;
  for (k = 0; k < EDGE_HALVINGS; k++) {
    const ik_real mid = (lo + hi) / 2;
    if (k > 0 &&
        (st = goal_at(params, ground, ik_vec3_lerp(from_ws, to_ws, mid), up_ws, &probe, &gm)) != IK_OK)
      return st;
    if (ik_fabs(gm - glo) <= ik_fabs(ghi - gm)) {
      lo = mid;
      glo = gm;
    } else {
      hi = mid;
      ghi = gm;
    }
  }
  *at = (lo + hi) / 2;
  *before = glo;
  *after = ghi;
  return IK_OK;
}

/* The spring on each axis over dt, the goal moving linearly from g0 to g1. */
static void smooth_offset(ik_foot_state *state, ik_vec3 g0, ik_vec3 g1, ik_real smooth_time, ik_real dt) {
  smooth_scalar(&state->offset.x, &state->velocity.x, g0.x, g1.x, smooth_time, dt);
  smooth_scalar(&state->offset.y, &state->velocity.y, g0.y, g1.y, smooth_time, dt);
  smooth_scalar(&state->offset.z, &state->velocity.z, g0.z, g1.z, smooth_time, dt);
}

ik_status ik__foot_update_valid(const ik_foot_params *params, ik_foot_state *state, const ik_ground *ground,
                                ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                                ik_foot_result *out) {
  ik_status st;
  ik_vec3 up_ws, goal_offset_ws;
  ik_quat goal_rotation_ws;
  foot_probe probe;
  ik_real goal, edge_at = -1, edge_before = 0, edge_after = 0;
  up_ws = ik_vec3_normalize(params->up);
  /* The rays first: a failing custom ground must leave the state as it was. */
  if ((st = goal_at(params, ground, animated_position, up_ws, &probe, &goal)) != IK_OK) return st;
  if (state->initialised && dt > 0 && spring_omega(params->smooth_time) > 0 &&
      (st = find_edge(params, ground, state->animated, animated_position, up_ws,
                      ik_vec3_dot(state->goal, up_ws), goal, &edge_at, &edge_before, &edge_after)) != IK_OK)
    return st;

  /* The goal: raised and aligned when planted; no correction at all when swinging. Only
   * ever raised: a planted foot within contact_slack above its height stays put. */
  goal_offset_ws = ik_vec3_scale(up_ws, goal);
  goal_rotation_ws = probe.grounded ? ik_quat_from_to(up_ws, probe.hit.normal) : ik_quat_identity();

  if (!state->initialised) {
    /* Nothing to spring from: springing from zero would drag the foot into the ground
     * for the first frames. */
    state->offset = goal_offset_ws;
    state->velocity = ik_vec3_zero();
    state->goal = goal_offset_ws;
    state->rotation = goal_rotation_ws;
    state->animated = animated_position;
    state->initialised = 1;
  } else if (dt > 0) {
    const ik_real omega = spring_omega(params->smooth_time);
    if (edge_at > 0) {
      /* Up to the edge and on from it: the step in the goal when the foot crossed it,
       * at every frame rate alike. */
      smooth_offset(state, state->goal, ik_vec3_scale(up_ws, edge_before), params->smooth_time, edge_at * dt);
      smooth_offset(state, ik_vec3_scale(up_ws, edge_after), goal_offset_ws, params->smooth_time,
                    (1 - edge_at) * dt);
    } else {
      smooth_offset(state, state->goal, goal_offset_ws, params->smooth_time, dt);
    }
    /* (A step too short for the spring to measure moves nothing, floor included.) */
    if (probe.hit.hit && omega * dt > 0) keep_above_ground(state, up_ws, probe.deficit);
    state->goal = goal_offset_ws;
    state->animated = animated_position;
    /* Same time scale as the spring; exact at any rate for a goal that holds still. */
    state->rotation = omega > 0 ? ik_quat_slerp(ik_quat_normalize(state->rotation), goal_rotation_ws,
                                                -ik__expm1(-omega * dt))
                                : goal_rotation_ws;
  }

  out->position = ik_vec3_add(animated_position, state->offset);
  out->rotation = ik_quat_normalize(
      ik_quat_mul(ik_quat_normalize(state->rotation), ik_quat_normalize(animated_rotation)));
  out->grounded = probe.grounded;
  out->ground_hit = probe.hit.hit;
  out->ground_point = probe.hit.point;
  out->ground_normal = probe.hit.normal;
  out->deficit = probe.deficit;
  return IK_OK;
}

/* ---- pelvis ---- */

ik_real ik_pelvis_offset(const ik_real *foot_deficits, int count) {
  ik_real lowest = 0;
  int i;
  if (foot_deficits == NULL) return 0;
  for (i = 0; i < count; i++) {
    if (foot_deficits[i] < lowest) lowest = foot_deficits[i];
  }
  return lowest;
}

void ik_pelvis_init(ik_pelvis *pelvis) {
  pelvis->smooth_time = (ik_real)0.05;
  pelvis->offset = 0;
  pelvis->velocity = 0;
  pelvis->goal = 0;
  pelvis->initialised = 0;
}

ik_status ik_pelvis_validate(const ik_pelvis *pelvis, const ik_real *foot_deficits, int count, ik_real dt,
                             ik_error *err) {
  ik_status st;
  int i;
  if (pelvis == NULL) return ik__fail(err, IK_E_NULL, "pelvis", -1);
  if ((st = check_non_negative(pelvis->smooth_time, err, "smooth_time")) != IK_OK) return st;
  if (pelvis->initialised && ((st = ik__check_real(pelvis->offset, err, "pelvis", -1)) != IK_OK ||
                              (st = ik__check_real(pelvis->velocity, err, "pelvis", -1)) != IK_OK ||
                              (st = ik__check_real(pelvis->goal, err, "pelvis", -1)) != IK_OK))
    return st;
  if (count < 0) return ik__fail(err, IK_E_COUNT, "count", -1);
  if (count > 0 && foot_deficits == NULL) return ik__fail(err, IK_E_NULL, "foot_deficits", -1);
  for (i = 0; i < count; i++) {
    if ((st = ik__check_real(foot_deficits[i], err, "foot_deficits", i)) != IK_OK) return st;
  }
  if ((st = check_non_negative(dt, err, "dt")) != IK_OK) return st;
  return ik__fail(err, IK_OK, NULL, -1);
}

ik_status ik_pelvis_update(ik_pelvis *pelvis, const ik_real *foot_deficits, int count, ik_real dt,
                           ik_real *offset_out) {
  const ik_status st = ik_pelvis_validate(pelvis, foot_deficits, count, dt, NULL);
  ik_real goal;
  if (st != IK_OK) return st;
  goal = ik_pelvis_offset(foot_deficits, count);
  if (!pelvis->initialised) {
    pelvis->offset = goal;
    pelvis->velocity = 0;
    pelvis->goal = goal;
    pelvis->initialised = 1;
  } else if (dt > 0) {
    smooth_scalar(&pelvis->offset, &pelvis->velocity, pelvis->goal, goal, pelvis->smooth_time, dt);
    pelvis->goal = goal;
  }
  if (offset_out) *offset_out = pelvis->offset;
  return IK_OK;
}
