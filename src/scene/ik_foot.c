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

/* A step x, v -> x1, v1 over dt >= 0 with omega > 0. With h = omega dt, m = 1 - e^-h and
 * delta = g1 - g0, the exact solution is
 *   x1 = g0 + e^-h ((x0 - g0)(1 + h) + v0 dt) + delta (2 - m - 2m / h)
 *   v1 = e^-h (v0 (1 - h) - omega h (x0 - g0)) + delta omega (m / h + m - 1)
 * (the delta terms are the goal's motion: as h -> 0 both vanish like h^2 and h; as
 * h -> inf the goal is reached). m comes from expm1, so m / h keeps full precision for
 * tiny steps, where 1 - exp(-h) would cancel. Once e^-h underflows, the terms it scales
 * are dropped rather than computed, so no step is too long: 0 times a product that
 * overflowed would be NaN. At the other end, a step so short (or a spring so slow) that
 * h underflows to 0 is no motion at all, the limit of the solution as h -> 0: m / h
 * would be 0 / 0. Everything but x0, v0, g0 and g1 depends on h alone: spring_coef holds
 * it, worked out once for the three axes of a foot and for every foot of a frame. */
typedef struct spring_coef {
  ik_real omega, dt, e;
  ik_real goal_x, goal_v;              /* (2 - m) - 2m / h; (m / h - 1) + m */
  ik_real one_plus_h, one_minus_h, oh; /* 1 + h, 1 - h, omega h */
  int smooth;                          /* omega > 0; else the spring snaps */
  int moves;                           /* h > 0 */
} spring_coef;

/* omega for a smooth time, 0 meaning "no smoothing". Below IK_FOOT_MIN_SMOOTH_TIME the
 * spring would settle within rounding of one step anyway, and omega times a velocity
 * could overflow. */
static ik_real spring_omega(ik_real smooth_time) {
  return smooth_time >= IK_FOOT_MIN_SMOOTH_TIME ? 2 / smooth_time : 0;
}

static spring_coef spring_coef_of(ik_real omega, ik_real dt) {
  spring_coef c = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ik_real h, m, m_h;
  c.omega = omega;
  c.dt = dt;
  c.smooth = omega > 0;
  h = omega * dt;
  c.moves = h > 0;
  if (!c.smooth || !c.moves) return c;
  m = -ik__expm1(-h);
  m_h = m / h;
  c.e = 1 - m;
  c.goal_x = (2 - m) - 2 * m_h;
  c.goal_v = (m_h - 1) + m;
  c.one_plus_h = 1 + h;
  c.one_minus_h = 1 - h;
  c.oh = omega * h;
  return c;
}

/* One step of the spring on a scalar, snapping when there is no smoothing. */
static void spring_apply(const spring_coef *c, ik_real *x, ik_real *v, ik_real g0, ik_real g1) {
  ik_real delta, from_goal, x1, v1;
  if (!c->smooth) {
    *x = g1;
    *v = 0;
    return;
  }
  if (!c->moves) return;
  delta = g1 - g0;
  from_goal = *x - g0;
  x1 = g0 + delta * c->goal_x;
  v1 = delta * c->omega * c->goal_v;
  if (c->e > 0) {
    x1 += c->e * (from_goal * c->one_plus_h + *v * c->dt);
    v1 += c->e * (*v * c->one_minus_h - c->oh * from_goal);
  }
  *x = x1;
  *v = v1;
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

/* Whether params pass: the common case, tested inline. */
static int params_ok(const ik_foot_params *p) {
  return ik__real_in_range(p->ray_height) && p->ray_height >= 0 && ik__real_in_range(p->ray_length) &&
         p->ray_length >= 0 && ik__real_in_range(p->ray_height + p->ray_length) &&
         ik__real_in_range(p->foot_offset) && p->foot_offset >= 0 && ik__real_in_range(p->smooth_time) &&
         p->smooth_time >= 0 && ik__vec3_in_range(p->up) && ik_vec3_len2(p->up) > IK_TINY_LEN2;
}

ik_status ik_foot_params_validate(const ik_foot_params *params, ik_error *err) {
  ik_status st;
  if (params == NULL) return ik__fail(err, IK_E_NULL, "params", -1);
  if (params_ok(params)) return ik__fail(err, IK_OK, NULL, -1);
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
static ik_status check_position(const ik_foot_params *params, ik_vec3 animated_position, ik_error *err) {
  ik_status st;
  if ((st = ik__check_vec3(animated_position, err, "animated_position", -1)) != IK_OK) return st;
  return ik__check_vec3(ik_vec3_madd(animated_position, ik_vec3_normalize(params->up), params->ray_height),
                        err, "animated_position", -1);
}

static ik_status validate_probe(const ik_foot_params *params, const ik_ground *ground,
                                ik_vec3 animated_position, ik_error *err) {
  ik_status st;
  if ((st = ik_foot_params_validate(params, err)) != IK_OK) return st;
  if (ground == NULL) return ik__fail(err, IK_E_NULL, "ground", -1);
  return check_position(params, animated_position, err);
}

/* Whether one foot's inputs pass (params already checked): the common case, tests
 * inline and no error to fill. */
static int foot_inputs_ok(const ik_foot_params *params, const ik_foot_state *state, ik_vec3 animated_position,
                          ik_quat animated_rotation, ik_real dt) {
  return state && ik__vec3_in_range(animated_position) &&
         ik__vec3_in_range(
             ik_vec3_madd(animated_position, ik_vec3_normalize(params->up), params->ray_height)) &&
         (!state->initialised ||
          (ik__vec3_in_range(state->offset) && ik__vec3_in_range(state->velocity) &&
           ik__vec3_in_range(state->goal) && ik__vec3_in_range(state->animated) &&
           ik__real_in_range(state->rotation.x) && ik__real_in_range(state->rotation.y) &&
           ik__real_in_range(state->rotation.z) && ik__real_in_range(state->rotation.w))) &&
         ik__real_in_range(animated_rotation.x) && ik__real_in_range(animated_rotation.y) &&
         ik__real_in_range(animated_rotation.z) && ik__real_in_range(animated_rotation.w) &&
         ik__real_in_range(dt) && dt >= 0;
}

/* One foot's inputs in ik_foot_validate's order and with its errors (params already
 * checked); `out_missing`: the result pointer it checks after the state's was NULL. */
static ik_status foot_inputs_status(const ik_foot_params *params, const ik_foot_state *state,
                                    ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                                    int out_missing, ik_error *err) {
  ik_status st;
  if ((st = check_position(params, animated_position, err)) != IK_OK) return st;
  if (state == NULL) return ik__fail(err, IK_E_NULL, "state", -1);
  if (out_missing) return ik__fail(err, IK_E_NULL, "out", -1);
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

ik_status ik_foot_validate(const ik_foot_params *params, const ik_foot_state *state, const ik_ground *ground,
                           ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                           const ik_foot_result *out, ik_error *err) {
  ik_status st;
  if ((st = ik_foot_params_validate(params, err)) != IK_OK) return st;
  if (ground == NULL) return ik__fail(err, IK_E_NULL, "ground", -1);
  if (out != NULL && foot_inputs_ok(params, state, animated_position, animated_rotation, dt))
    return ik__fail(err, IK_OK, NULL, -1);
  return foot_inputs_status(params, state, animated_position, animated_rotation, dt, out == NULL, err);
}

ik_status ik__foot_check_inputs(const ik_foot_params *params, const ik_foot_state *state,
                                ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt) {
  if (foot_inputs_ok(params, state, animated_position, animated_rotation, dt)) return IK_OK;
  return foot_inputs_status(params, state, animated_position, animated_rotation, dt, 0, NULL);
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

/* What every foot of an update shares: its params, ground and dt and what follows from
 * them alone (up, the ray's direction, the spring over the whole frame, the turn). */
typedef struct foot_frame {
  const ik_foot_params *params;
  const ik_ground *ground;
  ik_vec3 up_ws;
  ik_vec3 down_ws; /* the ray's direction, -up_ws as ik_ground_raycast normalizes it */
  ik_real dt, omega;
  spring_coef whole; /* the spring over dt */
  ik_real turn;      /* the rotation's slerp weight over dt, when it smooths */
} foot_frame;

static void foot_frame_init(foot_frame *f, const ik_foot_params *params, const ik_ground *ground,
                            ik_real dt) {
  f->params = params;
  f->ground = ground;
  f->up_ws = ik_vec3_normalize(params->up);
  f->down_ws = ik_vec3_normalize(ik_vec3_neg(f->up_ws));
  f->dt = dt;
  f->omega = spring_omega(params->smooth_time);
  f->whole = spring_coef_of(f->omega, dt);
  /* Same time scale as the spring; exact at any rate for a goal that holds still. */
  f->turn = f->omega > 0 && dt > 0 ? -ik__expm1(-f->omega * dt) : 0;
}

/* Casts the ray and measures the deficit. Inputs already validated; the only failure
 * left is a custom ground's callback (or a ray start out of range, which only an edge
 * search between two far places meets: the checked query refuses it as before). */
static ik_status probe_ground(const foot_frame *f, ik_vec3 animated_ws, foot_probe *probe) {
  const ik_foot_params *params = f->params;
  const ik_vec3 origin_ws = ik_vec3_madd(animated_ws, f->up_ws, params->ray_height);
  const ik_real reach = params->ray_height + params->ray_length;
  const ik_status st =
      ik__vec3_in_range(origin_ws)
          ? ik__ground_raycast_unit(f->ground, origin_ws, f->down_ws, reach, &probe->hit)
          : ik_ground_raycast(f->ground, origin_ws, ik_vec3_neg(f->up_ws), reach, &probe->hit);
  ik_real cos_slope, height_above_hit;
  probe->deficit = 0;
  probe->grounded = 0;
  if (st != IK_OK || !probe->hit.hit) return st;
  /* Along up the ankle must stand foot_offset / cos(slope) above the hit point to be
   * foot_offset from the surface along its normal (the hit is straight below it). */
  cos_slope = ik_vec3_dot(probe->hit.normal, f->up_ws);
  if (cos_slope < IK_FOOT_MIN_COS) cos_slope = IK_FOOT_MIN_COS;
  height_above_hit = probe->hit.distance - params->ray_height;
  probe->deficit = params->foot_offset / cos_slope - height_above_hit;
  probe->grounded = probe->deficit >= -contact_slack(params, animated_ws);
  return IK_OK;
}

ik_status ik_foot_deficit(const ik_foot_params *params, const ik_ground *ground, ik_vec3 animated_position,
                          ik_real *deficit) {
  foot_probe probe;
  foot_frame f;
  ik_status st = validate_probe(params, ground, animated_position, NULL);
  if (st != IK_OK) return st;
  if (deficit == NULL) return IK_E_NULL;
  foot_frame_init(&f, params, ground, 0);
  st = probe_ground(&f, animated_position, &probe);
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
static ik_status goal_at(const foot_frame *f, ik_vec3 animated_ws, foot_probe *probe, ik_real *goal) {
  const ik_status st = probe_ground(f, animated_ws, probe);
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
static ik_status find_edge(const foot_frame *f, ik_vec3 from_ws, ik_vec3 to_ws, ik_real g0, ik_real g1,
                           ik_real *at, ik_real *before, ik_real *after) {
  foot_probe probe;
  ik_real lo = 0, hi = 1, glo = g0, ghi = g1, gm;
  ik_status st;
  int k;
  *at = -1;
  if (!(ik_fabs(g1 - g0) > contact_slack(f->params, to_ws))) return IK_OK;
  if ((st = goal_at(f, ik_vec3_lerp(from_ws, to_ws, (ik_real)0.5), &probe, &gm)) != IK_OK) return st;
  if (!(ik_fabs(gm - (ik_real)0.5 * (g0 + g1)) > (ik_real)0.25 * ik_fabs(g1 - g0))) return IK_OK;
  for (k = 0; k < EDGE_HALVINGS; k++) {
    const ik_real mid = (lo + hi) / 2;
    if (k > 0 && (st = goal_at(f, ik_vec3_lerp(from_ws, to_ws, mid), &probe, &gm)) != IK_OK) return st;
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

/* The spring on each axis, the goal moving linearly from g0 to g1. */
static void smooth_offset(ik_foot_state *state, ik_vec3 g0, ik_vec3 g1, const spring_coef *c) {
  spring_apply(c, &state->offset.x, &state->velocity.x, g0.x, g1.x);
  spring_apply(c, &state->offset.y, &state->velocity.y, g0.y, g1.y);
  spring_apply(c, &state->offset.z, &state->velocity.z, g0.z, g1.z);
}

static ik_status update_one(const foot_frame *f, ik_foot_state *state, ik_vec3 animated_position,
                            ik_quat animated_rotation, ik_foot_result *out) {
  const ik_real dt = f->dt;
  ik_status st;
  ik_vec3 goal_offset_ws;
  ik_quat goal_rotation_ws;
  foot_probe probe;
  ik_real goal, edge_at = -1, edge_before = 0, edge_after = 0;
  /* The rays first: a failing custom ground must leave the state as it was. */
  if ((st = goal_at(f, animated_position, &probe, &goal)) != IK_OK) return st;
  if (state->initialised && dt > 0 && f->omega > 0 &&
      (st = find_edge(f, state->animated, animated_position, ik_vec3_dot(state->goal, f->up_ws), goal,
                      &edge_at, &edge_before, &edge_after)) != IK_OK)
    return st;

  /* The goal: raised and aligned when planted; no correction at all when swinging. Only
   * ever raised: a planted foot within contact_slack above its height stays put. */
  goal_offset_ws = ik_vec3_scale(f->up_ws, goal);
  goal_rotation_ws = probe.grounded ? ik_quat_from_to(f->up_ws, probe.hit.normal) : ik_quat_identity();

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
    if (edge_at > 0) {
      /* Up to the edge and on from it: the step in the goal when the foot crossed it,
       * at every frame rate alike. */
      const spring_coef to_edge = spring_coef_of(f->omega, edge_at * dt);
      const spring_coef from_edge = spring_coef_of(f->omega, (1 - edge_at) * dt);
      smooth_offset(state, state->goal, ik_vec3_scale(f->up_ws, edge_before), &to_edge);
      smooth_offset(state, ik_vec3_scale(f->up_ws, edge_after), goal_offset_ws, &from_edge);
    } else {
      smooth_offset(state, state->goal, goal_offset_ws, &f->whole);
    }
    /* (A step too short for the spring to measure moves nothing, floor included.) */
    if (probe.hit.hit && f->whole.moves) keep_above_ground(state, f->up_ws, probe.deficit);
    state->goal = goal_offset_ws;
    state->animated = animated_position;
    state->rotation = f->omega > 0
                          ? ik_quat_slerp(ik_quat_normalize(state->rotation), goal_rotation_ws, f->turn)
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

ik_status ik__foot_update_valid(const ik_foot_params *params, ik_foot_state *state, const ik_ground *ground,
                                ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                                ik_foot_result *out) {
  foot_frame f;
  foot_frame_init(&f, params, ground, dt);
  return update_one(&f, state, animated_position, animated_rotation, out);
}

void ik__foot_update_many(const ik_foot_params *params, const ik_ground *ground, ik_real dt, int n,
                          ik_foot_state *const *states, const ik_vec3 *animated_positions,
                          const ik_quat *animated_rotations, ik_foot_result *out, ik_status *status) {
  foot_frame f;
  int i;
  if (n <= 0) return;
  foot_frame_init(&f, params, ground, dt);
  for (i = 0; i < n; i++)
    status[i] = update_one(&f, states[i], animated_positions[i], animated_rotations[i], &out[i]);
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
    const spring_coef c = spring_coef_of(spring_omega(pelvis->smooth_time), dt);
    spring_apply(&c, &pelvis->offset, &pelvis->velocity, pelvis->goal, goal);
    pelvis->goal = goal;
  }
  if (offset_out) *offset_out = pelvis->offset;
  return IK_OK;
}
