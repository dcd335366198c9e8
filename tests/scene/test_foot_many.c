/*
 * test_foot_many.c: the feet's shared-work paths against what they replace, byte for
 * byte: ik__foot_update_many against one ik__foot_update_valid a foot and against the
 * update as it was before the work was shared (ref_update below, the old code kept as
 * the oracle, casting through the checked ik_ground_raycast); ik__foot_check_inputs
 * against ik_foot_validate; the vertical ray's path (ik__ground_raycast_unit) against
 * the general raycast.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ground_fixture.h"
#include "ik_foot.h"
#include "ik_scene_internal.h"

#ifdef IK_REAL_FLOAT
#define ref_expm1 expm1f
#else
#define ref_expm1 expm1
#endif

/* ---- the oracle: the foot update before its work was shared ---- */

static void ref_spring_step(ik_real *x, ik_real *v, ik_real g0, ik_real g1, ik_real omega, ik_real dt) {
  const ik_real h = omega * dt;
  ik_real m, e, m_h, delta, from_goal, x1, v1;
  if (!(h > 0)) return;
  m = -ref_expm1(-h);
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

static ik_real ref_omega(ik_real smooth_time) {
  return smooth_time >= IK_FOOT_MIN_SMOOTH_TIME ? 2 / smooth_time : 0;
}

static void ref_smooth_scalar(ik_real *x, ik_real *v, ik_real g0, ik_real g1, ik_real smooth_time,
                              ik_real dt) {
  const ik_real omega = ref_omega(smooth_time);
  if (omega > 0) {
    ref_spring_step(x, v, g0, g1, omega, dt);
  } else {
    *x = g1;
    *v = 0;
  }
}

static void ref_smooth_offset(ik_foot_state *s, ik_vec3 g0, ik_vec3 g1, ik_real smooth_time, ik_real dt) {
  ref_smooth_scalar(&s->offset.x, &s->velocity.x, g0.x, g1.x, smooth_time, dt);
  ref_smooth_scalar(&s->offset.y, &s->velocity.y, g0.y, g1.y, smooth_time, dt);
  ref_smooth_scalar(&s->offset.z, &s->velocity.z, g0.z, g1.z, smooth_time, dt);
}

static ik_real ref_slack(const ik_foot_params *p, ik_vec3 a) {
  const ik_real coord = ik_fabs(a.x) + ik_fabs(a.y) + ik_fabs(a.z);
  return 64 * IK_REAL_EPSILON * (1 + coord + p->ray_height + p->ray_length + p->foot_offset);
}

typedef struct ref_probe {
  ik_ray_hit hit;
  ik_real deficit;
  int grounded;
} ref_probe;

static ik_status ref_goal_at(const ik_foot_params *p, const ik_ground *g, ik_vec3 a, ik_vec3 up,
                             ref_probe *pr, ik_real *goal) {
  const ik_status st = ik_ground_raycast(g, ik_vec3_madd(a, up, p->ray_height), ik_vec3_neg(up),
                                         p->ray_height + p->ray_length, &pr->hit);
  ik_real cos_slope;
  pr->deficit = 0;
  pr->grounded = 0;
  if (st != IK_OK) return st;
  if (pr->hit.hit) {
    cos_slope = ik_vec3_dot(pr->hit.normal, up);
    if (cos_slope < IK_FOOT_MIN_COS) cos_slope = IK_FOOT_MIN_COS;
    pr->deficit = p->foot_offset / cos_slope - (pr->hit.distance - p->ray_height);
    pr->grounded = pr->deficit >= -ref_slack(p, a);
  }
  *goal = pr->grounded && pr->deficit > 0 ? pr->deficit : 0;
  return IK_OK;
}

static ik_status ref_find_edge(const ik_foot_params *p, const ik_ground *g, ik_vec3 from, ik_vec3 to,
                               ik_vec3 up, ik_real g0, ik_real g1, ik_real *at, ik_real *before,
                               ik_real *after) {
  ref_probe pr;
  ik_real lo = 0, hi = 1, glo = g0, ghi = g1, gm;
  ik_status st;
  int k;
  *at = -1;
  if (!(ik_fabs(g1 - g0) > ref_slack(p, to))) return IK_OK;
  if ((st = ref_goal_at(p, g, ik_vec3_lerp(from, to, (ik_real)0.5), up, &pr, &gm)) != IK_OK) return st;
  if (!(ik_fabs(gm - (ik_real)0.5 * (g0 + g1)) > (ik_real)0.25 * ik_fabs(g1 - g0))) return IK_OK;
  for (k = 0; k < 8; k++) {
    const ik_real mid = (lo + hi) / 2;
    if (k > 0 && (st = ref_goal_at(p, g, ik_vec3_lerp(from, to, mid), up, &pr, &gm)) != IK_OK) return st;
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

static ik_status ref_update(const ik_foot_params *p, ik_foot_state *s, const ik_ground *g, ik_vec3 pos,
                            ik_quat rot, ik_real dt, ik_foot_result *out) {
  const ik_vec3 up = ik_vec3_normalize(p->up);
  ik_status st;
  ik_vec3 goal_offset;
  ik_quat goal_rotation;
  ref_probe pr;
  ik_real goal, edge_at = -1, edge_before = 0, edge_after = 0;
  if ((st = ref_goal_at(p, g, pos, up, &pr, &goal)) != IK_OK) return st;
  if (s->initialised && dt > 0 && ref_omega(p->smooth_time) > 0 &&
      (st = ref_find_edge(p, g, s->animated, pos, up, ik_vec3_dot(s->goal, up), goal, &edge_at, &edge_before,
                          &edge_after)) != IK_OK)
    return st;
  goal_offset = ik_vec3_scale(up, goal);
  goal_rotation = pr.grounded ? ik_quat_from_to(up, pr.hit.normal) : ik_quat_identity();
  if (!s->initialised) {
    s->offset = goal_offset;
    s->velocity = ik_vec3_zero();
    s->goal = goal_offset;
    s->rotation = goal_rotation;
    s->animated = pos;
    s->initialised = 1;
  } else if (dt > 0) {
    const ik_real omega = ref_omega(p->smooth_time);
    if (edge_at > 0) {
      ref_smooth_offset(s, s->goal, ik_vec3_scale(up, edge_before), p->smooth_time, edge_at * dt);
      ref_smooth_offset(s, ik_vec3_scale(up, edge_after), goal_offset, p->smooth_time, (1 - edge_at) * dt);
    } else {
      ref_smooth_offset(s, s->goal, goal_offset, p->smooth_time, dt);
    }
    if (pr.hit.hit && omega * dt > 0) {
      const ik_real below = pr.deficit - ik_vec3_dot(s->offset, up);
      const ik_real down = ik_vec3_dot(s->velocity, up);
      if (below > 0) {
        s->offset = ik_vec3_madd(s->offset, up, below);
        if (down < 0) s->velocity = ik_vec3_madd(s->velocity, up, -down);
      }
    }
    s->goal = goal_offset;
    s->animated = pos;
    s->rotation = omega > 0
                      ? ik_quat_slerp(ik_quat_normalize(s->rotation), goal_rotation, -ref_expm1(-omega * dt))
                      : goal_rotation;
  }
  out->position = ik_vec3_add(pos, s->offset);
  out->rotation = ik_quat_normalize(ik_quat_mul(ik_quat_normalize(s->rotation), ik_quat_normalize(rot)));
  out->grounded = pr.grounded;
  out->ground_hit = pr.hit.hit;
  out->ground_point = pr.hit.point;
  out->ground_normal = pr.hit.normal;
  out->deficit = pr.deficit;
  return IK_OK;
}

/* ---- grounds ---- */

enum { G_PLANE, G_TILTED_PLANE, G_HILLS, G_STEPS, G_MESH, G_CUSTOM, G_KINDS };
static const char *const kind_names[G_KINDS] = {"plane", "tilted plane", "hills", "steps", "mesh", "custom"};

#define FIELD_N 9
#define FIELD_CELL 0.5

/* A plane at y = 0.1 that refuses (a failing query) any ray starting right of x = 2.5. */
static int custom_cast(void *user, ik_vec3 o, ik_vec3 d, ik_real t_max, ik_ray_hit *hit) {
  const ik_real plane_y = (ik_real)0.1;
  (void)user;
  if (o.x > (ik_real)2.5) return -1;
  if (!(d.y < 0) || o.y < plane_y) return 0;
  hit->distance = (o.y - plane_y) / -d.y;
  if (hit->distance > t_max) return 0;
  hit->normal = ik_vec3_make(0, 1, 0);
  return 1;
}

/* Each kind over about [-2, 2] in x and z: hills and steps are heightfields (steps: a
 * riser of 0.3 every other column, so the edge search's halvings run). */
static owned_ground make_kind(int kind, t_rng *r) {
  ik_real heights[FIELD_N * FIELD_N];
  int c, k;
  switch (kind) {
    case G_PLANE:
      return make_plane(v3(0, 0.05, 0), v3(0, 1, 0));
    case G_TILTED_PLANE:
      return make_plane(v3(0, 0, 0), v3(0.2, 1, -0.1));
    case G_HILLS:
      for (k = 0; k < FIELD_N * FIELD_N; k++) heights[k] = (ik_real)t_uniform(r, -0.2, 0.3);
      return make_heightfield(v3(-2, 0, -2), (ik_real)FIELD_CELL, FIELD_N, FIELD_N, heights);
    case G_STEPS:
      for (k = 0; k < FIELD_N * FIELD_N; k++) {
        c = k % FIELD_N;
        heights[k] = (ik_real)(0.3 * (c / 2));
      }
      return make_heightfield(v3(-2, -0.5, -2), (ik_real)FIELD_CELL, FIELD_N, FIELD_N, heights);
    case G_MESH: {
      static const int tris[12] = {0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 2};
      ik_vec3 verts[6];
      verts[0] = v3(-2, 0, -2);
      verts[1] = v3(0, 0.1, -2);
      verts[2] = v3(0, 0.1, 2);
      verts[3] = v3(-2, 0, 2);
      verts[4] = v3(2, 0.6, -2);
      verts[5] = v3(2, 0.6, 2);
      return make_mesh(verts, 6, tris, 4);
    }
    default:
      return make_custom(custom_cast, NULL);
  }
}

/* ---- byte comparisons ---- */

static void assert_same_bytes(const void *a, const void *b, size_t n, const char *what, int kind, int frame,
                              int foot) {
  if (memcmp(a, b, n) != 0)
    fail_msg("%s differs: ground %s, frame %d, foot %d", what, kind_names[kind], frame, foot);
}

/* ---- ik__foot_update_many ---- */

#define FEET 7
#define FRAMES 48

/* Params for case `c`: +y up (the vertical ray), a tilted up (the general ray) or -y
 * down-is-up; smoothing on, off (smooth_time 0) or below the minimum. */
static ik_foot_params params_for(int c, t_rng *r) {
  ik_foot_params p;
  ik_foot_params_init(&p);
  p.ray_height = (ik_real)t_uniform(r, 0.2, 0.8);
  p.ray_length = (ik_real)t_uniform(r, 0.3, 1.5);
  p.foot_offset = (ik_real)t_uniform(r, 0, 0.1);
  p.smooth_time = c % 3 == 0 ? (ik_real)t_uniform(r, 0.02, 0.2) : c % 3 == 1 ? 0 : (ik_real)1e-7;
  if (c % 4 == 3) p.up = v3(0.05, 1, 0.03);
  return p;
}

static ik_real dt_for(int frame, t_rng *r) {
  if (frame % 11 == 5) return 0;
  if (frame % 13 == 7) return (ik_real)1e-30; /* h underflows: no motion */
  return (ik_real)t_uniform(r, 1.0 / 240, 1.0 / 20);
}

static void test_update_many_is_byte_for_byte_each_foots_update_and_the_old_update(void **state) {
  const int cases = t_cases(16);
  int kind, c, frame, i;
  (void)state;
  for (kind = 0; kind < G_KINDS; kind++) {
    for (c = 0; c < cases; c++) {
      t_rng r = t_rng_make((uint64_t)(1000 * kind + c + 1));
      owned_ground g = make_kind(kind, &r);
      const ik_foot_params p = params_for(c, &r);
      ik_foot_state many[FEET], one[FEET], ref[FEET];
      ik_foot_state *ptrs[FEET];
      ik_foot_result out_many[FEET], out_one[FEET], out_ref[FEET];
      ik_status st_many[FEET];
      ik_vec3 pos[FEET], vel[FEET];
      ik_quat rot[FEET];
      memset(many, 0, sizeof many);
      for (i = 0; i < FEET; i++) {
        ik_foot_state_init(&many[i]);
        ptrs[i] = &many[i];
        /* Some start off the field, some walk across it fast enough to cross cells. */
        pos[i] = v3(t_uniform(&r, -2.6, 2.6), t_uniform(&r, -0.2, 0.9), t_uniform(&r, -2.6, 2.6));
        vel[i] = v3(t_uniform(&r, -3, 3), t_uniform(&r, -1, 1), t_uniform(&r, -3, 3));
      }
      memcpy(one, many, sizeof many);
      memcpy(ref, many, sizeof many);
      for (frame = 0; frame < FRAMES; frame++) {
        const ik_real dt = dt_for(frame, &r);
        if (frame == FRAMES / 2) { /* a foot back to uninitialised amid initialised ones */
          ik_foot_state_init(&many[2]);
          ik_foot_state_init(&one[2]);
          ik_foot_state_init(&ref[2]);
        }
        for (i = 0; i < FEET; i++) {
          pos[i] = ik_vec3_madd(pos[i], vel[i], dt);
          if (ik_fabs(pos[i].x) > (ik_real)2.7) vel[i].x = -vel[i].x;
          if (ik_fabs(pos[i].z) > (ik_real)2.7) vel[i].z = -vel[i].z;
          if (pos[i].y < (ik_real)-0.3 || pos[i].y > 1) vel[i].y = -vel[i].y;
          rot[i] = t_unit_quat(&r);
          assert_int_equal(ik__foot_check_inputs(&p, &many[i], pos[i], rot[i], dt), IK_OK);
        }
        memset(out_many, 0, sizeof out_many);
        memset(out_one, 0, sizeof out_one);
        memset(out_ref, 0, sizeof out_ref);
        ik__foot_update_many(&p, g.g, dt, FEET, ptrs, pos, rot, out_many, st_many);
        for (i = 0; i < FEET; i++) {
          const ik_status st_one = ik__foot_update_valid(&p, &one[i], g.g, pos[i], rot[i], dt, &out_one[i]);
          const ik_status st_ref = ref_update(&p, &ref[i], g.g, pos[i], rot[i], dt, &out_ref[i]);
          assert_int_equal(st_many[i], st_one);
          assert_int_equal(st_many[i], st_ref);
          assert_same_bytes(&many[i], &one[i], sizeof many[i], "state (many vs one)", kind, frame, i);
          assert_same_bytes(&many[i], &ref[i], sizeof many[i], "state (many vs old)", kind, frame, i);
          assert_same_bytes(&out_many[i], &out_one[i], sizeof out_many[i], "result (many vs one)", kind,
                            frame, i);
          assert_same_bytes(&out_many[i], &out_ref[i], sizeof out_many[i], "result (many vs old)", kind,
                            frame, i);
        }
      }
      release(&g);
    }
  }
}

/* The cases above must reach what they claim: feet planted and swinging, an edge found
 * (the spring split), a refused custom query, feet off the field. */
static void test_the_random_feet_reach_edges_misses_and_refusals(void **state) {
  t_rng r = t_rng_make(7);
  owned_ground steps = make_kind(G_STEPS, &r), custom = make_kind(G_CUSTOM, &r);
  ik_foot_params p;
  ik_foot_state s, ref;
  ik_foot_result out, out_ref;
  ik_foot_state *ptr = &s;
  ik_status st;
  ik_vec3 pos;
  const ik_quat q = ik_quat_identity();
  (void)state;
  ik_foot_params_init(&p);
  memset(&s, 0, sizeof s); /* its padding too: the states are compared byte for byte */
  ik_foot_state_init(&s);
  memset(&out, 0, sizeof out);
  memset(&out_ref, 0, sizeof out_ref);
  /* Across a riser in one frame: the halvings run (the goal's split shows in velocity). */
  pos = v3(-0.6, -0.5 + 0.3 + 0.08, 0.1);
  ik__foot_update_many(&p, steps.g, (ik_real)(1.0 / 60), 1, &ptr, &pos, &q, &out, &st);
  assert_int_equal(st, IK_OK);
  assert_true(out.grounded);
  memcpy(&ref, &s, sizeof s);
  pos = v3(0.4, -0.5 + 0.3 + 0.08, 0.1);
  ik__foot_update_many(&p, steps.g, (ik_real)(1.0 / 60), 1, &ptr, &pos, &q, &out, &st);
  assert_int_equal(ref_update(&p, &ref, steps.g, pos, q, (ik_real)(1.0 / 60), &out_ref), IK_OK);
  assert_int_equal(st, IK_OK);
  assert_memory_equal(&s, &ref, sizeof s);
  assert_memory_equal(&out, &out_ref, sizeof out);
  assert_true(s.velocity.y > 0);
  /* Off the field: no hit. */
  pos = v3(5, 0, 5);
  ik__foot_update_many(&p, steps.g, (ik_real)(1.0 / 60), 1, &ptr, &pos, &q, &out, &st);
  assert_int_equal(st, IK_OK);
  assert_false(out.ground_hit);
  /* A refused custom query: the status, and the state left as it was. */
  memset(&s, 0, sizeof s); /* its padding too: the states are compared byte for byte */
  ik_foot_state_init(&s);
  pos = v3(0, 0.2, 0);
  ik__foot_update_many(&p, custom.g, (ik_real)(1.0 / 60), 1, &ptr, &pos, &q, &out, &st);
  assert_int_equal(st, IK_OK);
  memcpy(&ref, &s, sizeof s);
  pos = v3(3, 0.2, 0);
  ik__foot_update_many(&p, custom.g, (ik_real)(1.0 / 60), 1, &ptr, &pos, &q, &out, &st);
  assert_int_equal(st, IK_E_PARAMETER);
  assert_memory_equal(&s, &ref, sizeof s);
  /* n = 0 touches nothing. */
  ik__foot_update_many(&p, custom.g, (ik_real)(1.0 / 60), 0, NULL, NULL, NULL, NULL, NULL);
  release(&steps);
  release(&custom);
}

/* ---- ik__foot_check_inputs ---- */

static void test_check_inputs_gives_validates_status_on_good_and_bad_inputs(void **state) {
  const ik_real nan = (ik_real)NAN, inf = (ik_real)INFINITY, huge = 2 * IK_REAL_MAX_COORD;
  const ik_real bad[4] = {nan, inf, -inf, huge};
  t_rng r = t_rng_make(3);
  owned_ground g = make_kind(G_PLANE, &r);
  ik_foot_params p;
  ik_foot_state good_state, s;
  ik_foot_result out;
  const ik_vec3 pos = v3(0.1, 0.2, 0.3);
  const ik_quat rot = ik_quat_identity(), zero_rot = {0, 0, 0, 0};
  int b, field, initialised, checked = 0;
  (void)state;
  ik_foot_params_init(&p);
  ik_foot_state_init(&good_state);
  good_state.offset = v3(0, 0.1, 0);
  good_state.rotation = t_unit_quat(&r);
  memset(&out, 0, sizeof out);
#define SAME(st_, pos_, rot_, dt_)                                                            \
  do {                                                                                        \
    const ik_status v_ = ik_foot_validate(&p, (st_), g.g, (pos_), (rot_), (dt_), &out, NULL); \
    assert_int_equal(ik__foot_check_inputs(&p, (st_), (pos_), (rot_), (dt_)), v_);            \
    checked += v_ != IK_OK;                                                                   \
  } while (0)
  for (initialised = 0; initialised <= 1; initialised++) {
    good_state.initialised = initialised;
    SAME(&good_state, pos, rot, (ik_real)0.016);
    SAME(&good_state, pos, rot, 0);
    SAME(&good_state, pos, zero_rot, (ik_real)0.016);
    SAME(NULL, pos, rot, (ik_real)0.016);
    SAME(&good_state, pos, rot, (ik_real)-0.001);
    for (b = 0; b < 4; b++) {
      ik_vec3 bad_pos = pos;
      ik_quat bad_rot = rot;
      for (field = 0; field < 3; field++) {
        bad_pos = pos;
        ((ik_real *)&bad_pos)[field] = bad[b];
        SAME(&good_state, bad_pos, rot, (ik_real)0.016);
      }
      for (field = 0; field < 4; field++) {
        bad_rot = rot;
        ((ik_real *)&bad_rot)[field] = bad[b];
        SAME(&good_state, pos, bad_rot, (ik_real)0.016);
      }
      SAME(&good_state, pos, rot, bad[b]);
      /* Every state field, read only when initialised. */
      for (field = 0; field < 16; field++) {
        s = good_state;
        ((ik_real *)&s)[field] = bad[b];
        SAME(&s, pos, rot, (ik_real)0.016);
      }
    }
    /* In range, but the ray's start is not. */
    SAME(&good_state, v3(0, IK_REAL_MAX_COORD, 0), rot, (ik_real)0.016);
    SAME(&good_state, v3(0, -IK_REAL_MAX_COORD, 0), rot, (ik_real)0.016);
  }
#undef SAME
  assert_true(checked > 80); /* the bad inputs were bad */
  release(&g);
}

/* ---- the vertical ray ---- */

static void assert_same_ray(const ik_ground *g, ik_vec3 o, ik_vec3 d, ik_real t_max, int *hits) {
  ik_ray_hit general, unit;
  const ik_status st = ik_ground_raycast(g, o, d, t_max, &general);
  memset(&unit, 0x5a, sizeof unit);
  assert_int_equal(ik__ground_raycast_unit(g, o, ik_vec3_normalize(d), t_max, &unit), st);
  if (st != IK_OK) return;
  if (memcmp(&general, &unit, sizeof unit) != 0)
    fail_msg("ray from (%g %g %g) along (%g %g %g): hit %d/%d at %.17g/%.17g", (double)o.x, (double)o.y,
             (double)o.z, (double)d.x, (double)d.y, (double)d.z, general.hit, unit.hit,
             (double)general.distance, (double)unit.distance);
  *hits += general.hit;
}

static void test_vertical_rays_give_the_general_raycasts_bytes(void **state) {
  const ik_real z = 0, nz = -(ik_real)0;
  int kind, k, s, hits = 0, rays = 0;
  (void)state;
  for (kind = 0; kind < G_CUSTOM; kind++) {
    t_rng r = t_rng_make((uint64_t)(77 + kind));
    owned_ground g = make_kind(kind, &r);
    for (k = 0; k < t_cases(400); k++) {
      /* Anywhere, on grid lines and corners exactly, and off the field. */
      ik_vec3 o = v3(t_uniform(&r, -2.4, 2.4), t_uniform(&r, -1, 2), t_uniform(&r, -2.4, 2.4));
      if (k % 4 == 1) o.x = (ik_real)(-2 + FIELD_CELL * t_int(&r, 0, FIELD_N - 1));
      if (k % 4 == 2) o.z = (ik_real)(-2 + FIELD_CELL * t_int(&r, 0, FIELD_N - 1));
      if (k % 8 == 3) o.x = nextafter(-2, -3), o.z = (ik_real)2;
      for (s = 0; s < 8; s++) {
        const ik_vec3 d = ik_vec3_make(s & 1 ? nz : z, s & 2 ? 1 : -1, s & 4 ? nz : z);
        const ik_vec3 d_scaled = ik_vec3_scale(d, (ik_real)3); /* normalized by the general path */
        assert_same_ray(g.g, o, d, (ik_real)t_uniform(&r, 0, 3), &hits);
        assert_same_ray(g.g, o, d_scaled, (ik_real)3, &hits);
        rays += 2;
      }
      /* Near vertical, crossing cells on the way down: the walk's path, not the cell's. */
      assert_same_ray(g.g, o, v3(1e-3, -1, 0), 4, &hits);
      assert_same_ray(g.g, o, v3(0, -1, -1e-3), 4, &hits);
      assert_same_ray(g.g, o, v3(1e-9, -1, 1e-9), 4, &hits);
      rays += 3;
    }
    release(&g);
  }
  assert_true(hits > rays / 4);
}

/* A ray leaning by 1e-3 that starts just left of a grid line and meets the ground only
 * right of it: the one-cell path would miss where the walk hits. */
static void test_a_near_vertical_ray_crossing_a_cell_line_hits_beyond_it(void **state) {
  ik_real heights[FIELD_N * FIELD_N];
  owned_ground g;
  ik_ray_hit general, unit;
  const ik_vec3 o = v3(-2 + 4 * FIELD_CELL - 1e-4, 2, 0.1);
  const ik_vec3 d = ik_vec3_normalize(v3(1e-3, -1, 0));
  int k;
  (void)state;
  for (k = 0; k < FIELD_N * FIELD_N; k++) heights[k] = (ik_real)(k % FIELD_N > 4 ? 1 : 0);
  g = make_heightfield(v3(-2, 0, -2), (ik_real)FIELD_CELL, FIELD_N, FIELD_N, heights);
  assert_int_equal(ik_ground_raycast(g.g, o, d, 4, &general), IK_OK);
  assert_int_equal(ik__ground_raycast_unit(g.g, o, d, 4, &unit), IK_OK);
  assert_true(general.hit);
  assert_true(general.point.x > (ik_real)(-2 + 4 * FIELD_CELL));
  assert_memory_equal(&general, &unit, sizeof unit);
  release(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_update_many_is_byte_for_byte_each_foots_update_and_the_old_update),
      cmocka_unit_test(test_the_random_feet_reach_edges_misses_and_refusals),
      cmocka_unit_test(test_check_inputs_gives_validates_status_on_good_and_bad_inputs),
      cmocka_unit_test(test_vertical_rays_give_the_general_raycasts_bytes),
      cmocka_unit_test(test_a_near_vertical_ray_crossing_a_cell_line_hits_beyond_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
