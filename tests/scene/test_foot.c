/*
 * test_foot.c: foot placement on flat ground, stairs and a 20 degree slope (plane,
 * heightfield and mesh), swinging feet left alone, the exact spring (frame-rate
 * independence, exact composition, dt = 0), the pelvis drop, and every refusal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ground_fixture.h"
#include "ik_foot.h"

#ifdef IK_REAL_FLOAT
#define T_EXACT 2e-5
#else
#define T_EXACT 1e-10
#endif

/* ---- helpers ---- */

static const ik_vec3 world_up = {0, 1, 0};

/* 20 degrees, rising along +x through the origin. */
#define SLOPE_RAD (20 * 3.14159265358979323846 / 180)
static ik_vec3 slope_normal(void) { return v3(-sin(SLOPE_RAD), cos(SLOPE_RAD), 0); }
static double slope_height(double x) { return tan(SLOPE_RAD) * x; }

enum { SLOPE_PLANE, SLOPE_HEIGHTFIELD, SLOPE_MESH, SLOPE_KINDS };

/* The 20 degree slope as each kind of ground: a plane; a 17 x 17 heightfield over
 * [-2, 2]^2; two big triangles. */
static owned_ground make_slope(int kind) {
  if (kind == SLOPE_PLANE) return make_plane(ik_vec3_zero(), slope_normal());
  if (kind == SLOPE_HEIGHTFIELD) {
    enum { N = 17 };
    ik_real heights[N * N];
    int c, r;
    for (r = 0; r < N; r++) {
      for (c = 0; c < N; c++) heights[r * N + c] = (ik_real)slope_height(-2 + 0.25 * c);
    }
    return make_heightfield(v3(-2, 0, -2), (ik_real)0.25, N, N, heights);
  } else {
    static const int triangles[6] = {0, 1, 2, 0, 2, 3};
    ik_vec3 vertices[4];
    vertices[0] = v3(-2, slope_height(-2), -2);
    vertices[1] = v3(2, slope_height(2), -2);
    vertices[2] = v3(2, slope_height(2), 2);
    vertices[3] = v3(-2, slope_height(-2), 2);
    return make_mesh(vertices, 4, triangles, 2);
  }
}

/* Five steps up along +x: step k's tread at y = 0.2 k over x in [0.3 k, 0.3 (k + 1)]
 * (step 0 from x = -1), z in [-1, 1], with a vertical riser at each x = 0.3 k. */
#define STEPS 5
#define RISE 0.2
#define RUN 0.3
static owned_ground make_stairs(void) {
  ik_vec3 vertices[8 * STEPS];
  int triangles[12 * STEPS];
  int k, v = 0, t = 0;
  for (k = 0; k < STEPS; k++) {
    const double y = RISE * k, x0 = k == 0 ? -1 : RUN * k, x1 = RUN * (k + 1);
    const int tread = v;
    vertices[v++] = v3(x0, y, -1);
    vertices[v++] = v3(x1, y, -1);
    vertices[v++] = v3(x1, y, 1);
    vertices[v++] = v3(x0, y, 1);
    triangles[t++] = tread;
    triangles[t++] = tread + 1;
    triangles[t++] = tread + 2;
    triangles[t++] = tread;
    triangles[t++] = tread + 2;
    triangles[t++] = tread + 3;
    if (k > 0) {
      const int riser = v;
      vertices[v++] = v3(x0, y - RISE, -1);
      vertices[v++] = v3(x0, y, -1);
      vertices[v++] = v3(x0, y, 1);
      vertices[v++] = v3(x0, y - RISE, 1);
      triangles[t++] = riser;
      triangles[t++] = riser + 1;
      triangles[t++] = riser + 2;
      triangles[t++] = riser;
      triangles[t++] = riser + 2;
      triangles[t++] = riser + 3;
    }
  }
  return make_mesh(vertices, v, triangles, t / 3);
}

static ik_quat yaw(double angle) { return ik_quat_axis_angle(world_up, (ik_real)angle); }

static ik_foot_result update(const ik_foot_params *p, ik_foot_state *s, const ik_ground *g, ik_vec3 animated,
                             ik_quat rotation, double dt) {
  ik_foot_result out;
  memset(&out, 0x5a, sizeof out);
  assert_int_equal(ik_foot_update(p, s, g, animated, rotation, (ik_real)dt, &out), IK_OK);
  return out;
}

/* Holds the foot still for `seconds` at `hz`, returning the last result. */
static ik_foot_result hold(const ik_foot_params *p, ik_foot_state *s, const ik_ground *g, ik_vec3 animated,
                           ik_quat rotation, double seconds, int hz) {
  ik_foot_result out = update(p, s, g, animated, rotation, 1.0 / hz);
  int i;
  for (i = 1; i < (int)(seconds * hz + 0.5); i++) out = update(p, s, g, animated, rotation, 1.0 / hz);
  return out;
}

/* Angle between the foot's local up (turned by its rotation) and `normal`. */
static double up_axis_angle(ik_quat rotation, ik_vec3 normal) {
  return (double)ik_vec3_angle(ik_quat_rotate(rotation, world_up), normal);
}

/* ---- parameters ---- */

static void test_params_init_sets_the_documented_defaults(void **state) {
  ik_foot_params p;
  ik_foot_state s;
  ik_error err;
  (void)state;
  memset(&p, 0x5a, sizeof p);
  ik_foot_params_init(&p);
  assert_near(p.ray_height, 0.5, 0);
  assert_near(p.ray_length, 1.0, 0);
  assert_near(p.foot_offset, 0.08, 1e-7);
  assert_near(p.smooth_time, 0.05, 1e-7);
  assert_vec3_near(p.up, world_up, 0);
  assert_int_equal(ik_foot_params_validate(&p, &err), IK_OK);
  memset(&s, 0x5a, sizeof s);
  ik_foot_state_init(&s);
  assert_int_equal(s.initialised, 0);
  assert_quat_near(s.rotation, ik_quat_identity(), 0);
}

/* ---- planting ---- */

static void test_first_update_on_flat_ground_snaps_foot_offset_above_it(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_params p;
  ik_foot_state s;
  ik_foot_result out;
  const ik_quat rot = yaw(0.5);
  (void)state;
  ik_foot_params_init(&p);
  ik_foot_state_init(&s);
  out = update(&p, &s, ground.g, v3(0.2, 0.03, 0.1), rot, 1.0 / 60);
  assert_int_equal(out.grounded, 1);
  assert_int_equal(out.ground_hit, 1);
  assert_vec3_near(out.ground_point, v3(0.2, 0, 0.1), T_EXACT);
  assert_vec3_near(out.ground_normal, world_up, T_EXACT);
  assert_near(out.deficit, 0.05, T_EXACT);
  /* No spring from nothing: straight to the goal, at rest. */
  assert_vec3_near(out.position, v3(0.2, 0.08, 0.1), T_EXACT);
  assert_vec3_near(s.velocity, ik_vec3_zero(), 0);
  assert_quat_near(out.rotation, rot, T_EXACT);
  assert_int_equal(s.initialised, 1);
  /* Further frames keep it there. */
  out = hold(&p, &s, ground.g, v3(0.2, 0.03, 0.1), rot, 0.5, 60);
  assert_vec3_near(out.position, v3(0.2, 0.08, 0.1), T_EXACT);
  release(&ground);
}

static void test_foot_exactly_at_foot_offset_is_grounded_and_unmoved(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_params p;
  ik_foot_state s;
  ik_foot_result out;
  (void)state;
  ik_foot_params_init(&p);
  p.foot_offset = (ik_real)0.125; /* exact in binary */
  ik_foot_state_init(&s);
  out = update(&p, &s, ground.g, v3(1, 0.125, 1), ik_quat_identity(), 0.01);
  assert_int_equal(out.grounded, 1);
  assert_near(out.deficit, 0, 0);
  assert_vec3_near(out.position, v3(1, 0.125, 1), 0);
  release(&ground);
}

static void test_planted_foot_on_each_stair_tread_settles_foot_offset_above_it(void **state) {
  owned_ground stairs = make_stairs();
  ik_foot_params p;
  int k;
  (void)state;
  ik_foot_params_init(&p);
  for (k = 0; k < STEPS; k++) {
    ik_foot_state s;
    ik_foot_result out;
    /* First frame swinging above the tread, then sunk 4 cm in (an animation made for
     * flat ground), held for a second. */
    const ik_vec3 animated = v3(RUN * k + 0.1, RISE * k - 0.04, 0.3);
    ik_foot_state_init(&s);
    out = update(&p, &s, stairs.g, v3(RUN * k + 0.1, RISE * k + 0.3, 0.3), yaw(0.2), 1.0 / 60);
    assert_int_equal(out.grounded, 0);
    out = update(&p, &s, stairs.g, animated, yaw(0.2), 1.0 / 60);
    assert_int_equal(out.grounded, 1);
    /* Smoothing never leaves the sole in the tread: one frame in, it is on it. */
    assert_near(out.position.y, RISE * k + 0.08, T_EXACT);
    out = hold(&p, &s, stairs.g, animated, yaw(0.2), 1, 60);
    assert_vec3_near(out.ground_point, v3(RUN * k + 0.1, RISE * k, 0.3), T_EXACT);
    assert_near(out.position.y, RISE * k + 0.08, 1e-3);
    assert_near(out.position.x, animated.x, 0);
    assert_near(out.position.z, animated.z, 0);
    assert_true(up_axis_angle(out.rotation, world_up) < 1e-3);
  }
  release(&stairs);
}

static void test_planted_foot_on_20_degree_slope_stands_foot_offset_along_normal_and_aligned(void **state) {
  const ik_vec3 n = slope_normal();
  int kind;
  (void)state;
  for (kind = 0; kind < SLOPE_KINDS; kind++) {
    owned_ground ground = make_slope(kind);
    ik_foot_params p;
    ik_foot_state s;
    ik_foot_result out;
    /* The surface is at y = 0.182 under x = 0.5; the animated foot is level with the
     * flat ground of its animation, in the slope. */
    const ik_vec3 animated = v3(0.5, 0.1, 0.2);
    ik_foot_params_init(&p);
    ik_foot_state_init(&s);
    out = update(&p, &s, ground.g, v3(0.5, 0.9, 0.2), yaw(-0.7), 1.0 / 60);
    assert_int_equal(out.ground_hit, 1);
    assert_int_equal(out.grounded, 0);
    out = hold(&p, &s, ground.g, animated, yaw(-0.7), 1, 60);
    assert_int_equal(out.grounded, 1);
    assert_vec3_near(out.ground_normal, n, 1e-5);
    /* Distance from the surface along its normal (the surface passes through the
     * origin), position kept across the slope, foot's up on the normal. */
    assert_near(ik_vec3_dot(out.position, n), 0.08, 1e-3);
    assert_near(out.position.x, animated.x, 0);
    assert_near(out.position.z, animated.z, 0);
    assert_true(up_axis_angle(out.rotation, n) < 1e-3);
    /* Only the tilt is added: the animated heading about up survives. */
    assert_quat_near(out.rotation, ik_quat_mul(ik_quat_from_to(world_up, n), yaw(-0.7)), 1e-6);
    release(&ground);
  }
}

static void test_swinging_foot_above_ground_is_left_alone(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_params p;
  ik_foot_state s;
  int i;
  (void)state;
  ik_foot_params_init(&p);
  ik_foot_state_init(&s);
  for (i = 0; i < 30; i++) {
    const double t = i / 60.0;
    const ik_vec3 animated = v3(0.5 * t, 0.3 + 0.1 * sin(6 * t), 0.1);
    const ik_quat rot = ik_quat_axis_angle(v3(1, 0, 0), (ik_real)(0.4 * t));
    const ik_foot_result out = update(&p, &s, ground.g, animated, rot, 1.0 / 60);
    assert_int_equal(out.grounded, 0);
    assert_int_equal(out.ground_hit, 1);
    assert_near(out.deficit, 0.08 - (double)animated.y, T_EXACT);
    assert_vec3_near(out.position, animated, 0);
    assert_quat_near(out.rotation, rot, T_EXACT);
  }
  release(&ground);
}

static void test_foot_lifting_off_eases_back_onto_its_animation(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), slope_normal());
  ik_foot_params p;
  ik_foot_state s;
  ik_foot_result out;
  (void)state;
  ik_foot_params_init(&p);
  ik_foot_state_init(&s);
  out = hold(&p, &s, ground.g, v3(0.5, 0.1, 0), yaw(0), 0.5, 60);
  assert_int_equal(out.grounded, 1);
  /* Lifted well clear: the correction decays to nothing, position and rotation. */
  out = update(&p, &s, ground.g, v3(0.5, 0.7, 0), yaw(0), 1.0 / 60);
  assert_int_equal(out.grounded, 0);
  assert_true(out.position.y > (ik_real)0.71);
  out = hold(&p, &s, ground.g, v3(0.5, 0.7, 0), yaw(0), 1, 60);
  assert_vec3_near(out.position, v3(0.5, 0.7, 0), 1e-6);
  assert_quat_near(out.rotation, yaw(0), 1e-6);
  release(&ground);
}

static void test_foot_with_no_ground_in_reach_is_left_alone(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_params p;
  ik_foot_state s;
  ik_foot_result out;
  (void)state;
  ik_foot_params_init(&p);
  ik_foot_state_init(&s);
  /* 1.2 above the plane, the ray reaches 1.0 below the foot. */
  out = update(&p, &s, ground.g, v3(0, 1.2, 0), yaw(1), 1.0 / 60);
  assert_int_equal(out.ground_hit, 0);
  assert_int_equal(out.grounded, 0);
  assert_near(out.deficit, 0, 0);
  assert_vec3_near(out.ground_point, ik_vec3_zero(), 0);
  assert_vec3_near(out.position, v3(0, 1.2, 0), 0);
  /* Sunk deeper than ray_height: the ray starts under the ground and finds nothing
   * (a plane's far side faces away from it). */
  out = update(&p, &s, ground.g, v3(0, -0.6, 0), yaw(1), 1.0 / 60);
  assert_int_equal(out.ground_hit, 0);
  release(&ground);
}

static void test_custom_up_axis_is_honoured(void **state) {
  /* A world with +Z up: ground is the plane z = 0. */
  owned_ground ground = make_plane(v3(0, 0, 0), v3(0, 0, 1));
  ik_foot_params p;
  ik_foot_state s;
  ik_foot_result out;
  (void)state;
  ik_foot_params_init(&p);
  p.up = v3(0, 0, 2);
  ik_foot_state_init(&s);
  out = update(&p, &s, ground.g, v3(1, 2, -0.01), ik_quat_identity(), 1.0 / 60);
  assert_int_equal(out.grounded, 1);
  assert_vec3_near(out.position, v3(1, 2, 0.08), T_EXACT);
  assert_near(out.deficit, 0.09, T_EXACT);
  release(&ground);
}

/* ---- the spring ---- */

/* Walks a foot over the ground at `hz` for one second; returns the final result. */
static ik_foot_result walk(const ik_ground *g, int hz, int scenario) {
  ik_foot_params p;
  ik_foot_state s;
  ik_foot_result out;
  int i;
  ik_foot_params_init(&p);
  ik_foot_state_init(&s);
  for (i = 0; i <= hz; i++) {
    const double t = (double)i / hz;
    const double lift = sin(2 * 3.14159265358979 * t / 0.8);
    /* Stride along x at 1.2 m/s; the foot lifts 12 cm in swing (a kink at touch-down
     * and lift-off, as animations have). Scenario 0 is sunk 4 cm in stance, 1 is level
     * with its (flat) animation ground, so on the slope it goes ever deeper. */
    const ik_vec3 animated =
        v3(1.2 * t - 0.5, (scenario == 0 ? 0.04 : 0.08) + 0.12 * (lift > 0 ? lift : 0), 0.1);
    out = update(&p, &s, g, animated, yaw(0.3 * t), i == 0 ? 0 : 1.0 / hz);
  }
  return out;
}

static void test_30_60_and_144_hz_agree_within_1e_3_after_one_second(void **state) {
  int scenario;
  (void)state;
  for (scenario = 0; scenario < 2; scenario++) {
    owned_ground ground = scenario == 0 ? make_plane(v3(0, 0, 0), world_up) : make_slope(SLOPE_PLANE);
    const ik_foot_result at_30 = walk(ground.g, 30, scenario);
    const ik_foot_result at_60 = walk(ground.g, 60, scenario);
    const ik_foot_result at_144 = walk(ground.g, 144, scenario);
    assert_vec3_near(at_30.position, at_144.position, 1e-3);
    assert_vec3_near(at_60.position, at_144.position, 1e-3);
    assert_quat_near(at_30.rotation, at_144.rotation, 1e-2);
    release(&ground);
  }
}

static void test_steadily_rising_ground_is_followed_identically_at_any_rate(void **state) {
  /* Level animation up a 20 degree slope: the goal rises linearly in time, which the
   * spring integrates exactly, so every rate gives the same offsets at common times. */
  owned_ground ground = make_slope(SLOPE_PLANE);
  const int rates[3] = {30, 60, 144};
  double at_1s[3], at_half[3];
  int k;
  (void)state;
  for (k = 0; k < 3; k++) {
    ik_foot_params p;
    ik_foot_state s;
    int i;
    ik_foot_params_init(&p);
    ik_foot_state_init(&s);
    for (i = 0; i <= rates[k]; i++) {
      const double t = (double)i / rates[k];
      const ik_foot_result out =
          update(&p, &s, ground.g, v3(0.8 * t, 0.05, 0), yaw(0), i == 0 ? 0 : 1.0 / rates[k]);
      if (2 * i == rates[k]) at_half[k] = (double)out.position.y;
      if (i == rates[k]) at_1s[k] = (double)out.position.y;
    }
  }
  assert_near(at_1s[0], at_1s[2], T_EXACT * 10);
  assert_near(at_1s[1], at_1s[2], T_EXACT * 10);
  assert_near(at_half[1], at_half[2], T_EXACT * 10);
  release(&ground);
}

/* The lowest a planted foot's sole goes under the ground below it (negative: above) as
 * its level animation walks at 1.2 m/s over the ground for `seconds`, at 60 Hz. */
static double deepest_sole(const ik_ground *g, double smooth_time, double start_x, double seconds) {
  ik_foot_params p;
  ik_foot_state s;
  double deepest = -1;
  int i;
  ik_foot_params_init(&p);
  p.smooth_time = (ik_real)smooth_time;
  ik_foot_state_init(&s);
  for (i = 0; i <= (int)(60 * seconds); i++) {
    const ik_foot_result out =
        update(&p, &s, g, v3(start_x + 1.2 * i / 60.0, 0.08, 0.1), yaw(0), i ? 1 / 60.0 : 0);
    if (out.grounded) {
      const double cos_slope = (double)out.ground_normal.y;
      const double height = (double)(out.position.y - out.ground_point.y);
      const double depth = (double)p.foot_offset / cos_slope - height;
      if (depth > deepest) deepest = depth;
    }
  }
  return deepest;
}

/* Smoothing may slow a foot coming down, never leave its sole under the ground: the
 * spring with no floor under it left a level-animated foot's sole 18.9 cm under the
 * 0.2 m steps' treads it climbed (15.7 cm at a smooth time of 0.02 s), and 2.2 cm
 * under a 20 degree slope. */
static void test_a_smoothed_foot_never_sinks_into_the_ground(void **state) {
  owned_ground stairs = make_stairs(), slope = make_slope(SLOPE_PLANE);
  (void)state;
  assert_true(deepest_sole(stairs.g, 0.05, -0.6, 2) <= T_EXACT);
  assert_true(deepest_sole(stairs.g, 0.02, -0.6, 2) <= T_EXACT);
  assert_true(deepest_sole(slope.g, 0.05, -1.5, 2) <= T_EXACT);
  release(&stairs);
  release(&slope);
}

static void test_spring_matches_closed_form_and_one_long_step_equals_many_short(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_params p;
  ik_foot_state one, many, start;
  ik_foot_result out;
  const double omega = 2 / 0.05, x0 = 0.25, v0 = -1.5, goal = 0.05, t = 0.04;
  double want;
  int i;
  (void)state;
  ik_foot_params_init(&p);
  /* A state mid-spring, aiming where the foot's goal will stay: 5 cm up. */
  ik_foot_state_init(&start);
  start.initialised = 1;
  start.offset = v3(0, x0, 0);
  start.velocity = v3(0, v0, 0);
  start.goal = v3(0, goal, 0);
  one = many = start;
  update(&p, &one, ground.g, v3(0, 0.03, 0), yaw(0), t);
  for (i = 0; i < 40; i++) out = update(&p, &many, ground.g, v3(0, 0.03, 0), yaw(0), t / 40);
  want = goal + ((x0 - goal) * (1 + omega * t) + v0 * t) * exp(-omega * t);
  assert_near(one.offset.y, want, T_EXACT);
  assert_near(many.offset.y, want, T_EXACT * 40);
  assert_near(out.position.y, 0.03 + want, T_EXACT * 40);
  assert_near(one.velocity.y, many.velocity.y, T_EXACT * 400);
  /* One step of 10 s lands on the goal at rest, no overshoot. */
  one = start;
  update(&p, &one, ground.g, v3(0, 0.03, 0), yaw(0), 10);
  assert_near(one.offset.y, goal, T_EXACT);
  assert_near(one.velocity.y, 0, T_EXACT);
  release(&ground);
}

static void test_extreme_steps_and_smooth_times_stay_finite_and_land_on_the_goal(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  /* The largest a step or smooth time may be is the coordinate range. */
  const double steps[3] = {1e3, (double)IK_REAL_MAX_COORD, 1e-30};
  const double smooth_times[3] = {0.05, 1e-30, (double)IK_REAL_MAX_COORD};
  int i, j;
  (void)state;
  for (i = 0; i < 3; i++) {
    for (j = 0; j < 3; j++) {
      ik_foot_params p;
      ik_foot_state s;
      ik_pelvis pelvis;
      ik_foot_result out;
      const ik_real deficits[2] = {(ik_real)-0.3, 0};
      ik_real offset;
      ik_foot_params_init(&p);
      p.smooth_time = (ik_real)smooth_times[j];
      ik_foot_state_init(&s);
      update(&p, &s, ground.g, v3(0, 0.5, 0), yaw(0), 0.01);
      s.velocity = v3(0, 50, 0);
      out = update(&p, &s, ground.g, v3(0, -0.05, 0), yaw(0), steps[i]);
      assert_true(ik_vec3_is_finite(out.position) && ik_vec3_is_finite(s.velocity));
      assert_true(ik_quat_is_finite(out.rotation));
      /* A long step (or no smoothing) lands on the goal; a very slow spring barely moves. */
      if (steps[i] * 2 / smooth_times[j] > 100) assert_near(out.position.y, 0.08, 1e-3);
      ik_pelvis_init(&pelvis);
      pelvis.smooth_time = (ik_real)smooth_times[j];
      assert_int_equal(ik_pelvis_update(&pelvis, deficits, 0, (ik_real)0.01, &offset), IK_OK);
      assert_int_equal(ik_pelvis_update(&pelvis, deficits, 2, (ik_real)steps[i], &offset), IK_OK);
      assert_true(ik_real_is_finite(offset) && ik_real_is_finite(pelvis.velocity));
      if (steps[i] * 2 / smooth_times[j] > 100) assert_near(offset, -0.3, 1e-3);
    }
  }
  release(&ground);
}

static void test_dt_zero_returns_current_smoothed_value_and_changes_nothing(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_params p;
  ik_foot_state s, before;
  ik_foot_result out;
  (void)state;
  ik_foot_params_init(&p);
  memset(&s, 0, sizeof s); /* padding too: the state is compared byte for byte */
  ik_foot_state_init(&s);
  update(&p, &s, ground.g, v3(0, 0.5, 0), yaw(0), 1.0 / 60);
  update(&p, &s, ground.g, v3(0, -0.1, 0), yaw(0), 1.0 / 60); /* mid-spring now */
  memcpy(&before, &s, sizeof s);
  out = update(&p, &s, ground.g, v3(0.3, -0.2, 0.1), yaw(1), 0);
  assert_memory_equal(&s, &before, sizeof s);
  assert_vec3_near(out.position, ik_vec3_add(v3(0.3, -0.2, 0.1), s.offset), 0);
  assert_quat_near(out.rotation, ik_quat_mul(s.rotation, yaw(1)), T_EXACT);
  release(&ground);
}

/* A step so short, or a spring so slow, that omega * dt underflows to 0 is no motion:
 * the spring's m / h would be 0 / 0, and a NaN in the state would have every later
 * update refused. For the foot and the pelvis. */
static void test_a_step_too_short_for_the_spring_to_measure_moves_nothing(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
#ifdef IK_REAL_FLOAT
  const ik_real tiny_dt = nextafterf(0, 1);
#else
  const ik_real tiny_dt = nextafter(0, 1);
#endif
  const ik_real deficits[1] = {(ik_real)-0.3};
  ik_foot_params p;
  ik_foot_state s, before;
  ik_foot_result out;
  ik_pelvis pelvis, pelvis_before;
  ik_real offset;
  (void)state;
  ik_foot_params_init(&p);
  p.smooth_time = IK_REAL_MAX_COORD;
  ik_foot_state_init(&s);
  update(&p, &s, ground.g, v3(0, 0.01, 0), yaw(0), 0);
  s.velocity = v3(0, 1, 0); /* mid-spring */
  before = s;
  out = update(&p, &s, ground.g, v3(0, -0.5, 0), yaw(0), tiny_dt);
  assert_true(ik_vec3_is_finite(s.offset) && ik_vec3_is_finite(s.velocity));
  assert_memory_equal(&s.offset, &before.offset, sizeof s.offset);
  assert_memory_equal(&s.velocity, &before.velocity, sizeof s.velocity);
  assert_vec3_near(out.position, ik_vec3_add(v3(0, -0.5, 0), before.offset), 0);
  update(&p, &s, ground.g, v3(0, 0.01, 0), yaw(0), 1.0 / 60); /* still accepted */
  assert_true(ik_vec3_is_finite(s.offset) && ik_vec3_is_finite(s.velocity));

  ik_pelvis_init(&pelvis);
  pelvis.smooth_time = IK_REAL_MAX_COORD;
  assert_int_equal(ik_pelvis_update(&pelvis, deficits, 1, 0, &offset), IK_OK);
  pelvis.velocity = 1;
  pelvis_before = pelvis;
  assert_int_equal(ik_pelvis_update(&pelvis, deficits, 0, tiny_dt, &offset), IK_OK);
  assert_true(ik_real_is_finite(offset) && ik_real_is_finite(pelvis.velocity));
  assert_near(pelvis.offset, pelvis_before.offset, 0);
  assert_near(pelvis.velocity, pelvis_before.velocity, 0);
  assert_int_equal(ik_pelvis_update(&pelvis, deficits, 1, (ik_real)(1.0 / 60), &offset), IK_OK);
  release(&ground);
}

static void test_zero_smooth_time_follows_the_goal_at_once(void **state) {
  owned_ground ground = make_slope(SLOPE_PLANE);
  ik_foot_params p;
  ik_foot_state s;
  ik_foot_result out;
  (void)state;
  ik_foot_params_init(&p);
  p.smooth_time = 0;
  ik_foot_state_init(&s);
  update(&p, &s, ground.g, v3(0.5, 0.9, 0), yaw(0), 1.0 / 60);
  out = update(&p, &s, ground.g, v3(0.5, 0.1, 0), yaw(0), 1.0 / 60);
  assert_near(ik_vec3_dot(out.position, slope_normal()), 0.08, T_EXACT);
  assert_true(up_axis_angle(out.rotation, slope_normal()) < 1e-5);
  release(&ground);
}

/* ---- pelvis ---- */

static void test_pelvis_offset_is_the_lowest_negative_deficit(void **state) {
  const ik_real mixed[3] = {(ik_real)0.05, (ik_real)-0.2, (ik_real)-0.07};
  const ik_real all_raised[2] = {(ik_real)0.05, 0};
  (void)state;
  assert_near(ik_pelvis_offset(mixed, 3), mixed[1], 0);
  assert_near(ik_pelvis_offset(all_raised, 2), 0, 0);
  assert_near(ik_pelvis_offset(NULL, 3), 0, 0);
  assert_near(ik_pelvis_offset(mixed, 0), 0, 0);
}

static void test_pelvis_drops_by_the_lowest_foots_deficit_on_stairs(void **state) {
  /* Left foot on tread 2, right foot over tread 1, both at the animated height of a
   * foot standing on tread 2. The frame order of ik_foot.h: deficits, pelvis, lowered
   * feet, foot updates. */
  owned_ground stairs = make_stairs();
  ik_foot_params p;
  ik_foot_state left, right;
  ik_pelvis pelvis;
  ik_real deficits[2], offset = 1;
  const ik_vec3 left_anim = v3(RUN * 2 + 0.15, RISE * 2 + 0.08, 0.2);
  const ik_vec3 right_anim = v3(RUN * 1 + 0.15, RISE * 2 + 0.08, -0.2);
  const ik_vec3 up = world_up;
  ik_foot_result left_out, right_out;
  int frame;
  (void)state;
  ik_foot_params_init(&p);
  ik_foot_state_init(&left);
  ik_foot_state_init(&right);
  ik_pelvis_init(&pelvis);
  for (frame = 0; frame < 60; frame++) {
    assert_int_equal(ik_foot_deficit(&p, stairs.g, left_anim, &deficits[0]), IK_OK);
    assert_int_equal(ik_foot_deficit(&p, stairs.g, right_anim, &deficits[1]), IK_OK);
    assert_near(deficits[0], 0, T_EXACT);
    assert_near(deficits[1], -RISE, T_EXACT);
    assert_int_equal(ik_pelvis_update(&pelvis, deficits, 2, (ik_real)(1.0 / 60), &offset), IK_OK);
    left_out = update(&p, &left, stairs.g, ik_vec3_madd(left_anim, up, offset), yaw(0), 1.0 / 60);
    right_out = update(&p, &right, stairs.g, ik_vec3_madd(right_anim, up, offset), yaw(0), 1.0 / 60);
  }
  /* The pelvis went down by the right foot's 20 cm; that foot reaches its tread, the
   * left one is raised back onto its own. */
  assert_near(offset, -RISE, T_EXACT);
  assert_near(right_out.position.y, RISE * 1 + 0.08, 1e-6);
  assert_near(left_out.position.y, RISE * 2 + 0.08, 1e-6);
  /* Both planted: the right foot sits at deficit 0 give or take rounding, and must not
   * flicker to swinging. */
  assert_int_equal(right_out.grounded, 1);
  assert_int_equal(left_out.grounded, 1);
  release(&stairs);
}

static void test_pelvis_spring_snaps_first_then_eases_the_same_at_any_rate(void **state) {
  const int rates[3] = {30, 60, 144};
  double at_1s[3];
  int k;
  (void)state;
  for (k = 0; k < 3; k++) {
    ik_pelvis pelvis;
    ik_real offset;
    int i;
    ik_pelvis_init(&pelvis);
    for (i = 0; i <= rates[k]; i++) {
      const double t = (double)i / rates[k];
      /* A foot stepping down a slope: its deficit falls steadily for half a second. */
      const ik_real deficit = (ik_real)(t < 0.5 ? -0.3 * t : -0.15);
      assert_int_equal(
          ik_pelvis_update(&pelvis, &deficit, 1, (ik_real)(i == 0 ? 0 : 1.0 / rates[k]), &offset), IK_OK);
      if (i == 0) assert_near(offset, 0, 0);
      if (i == 1) assert_true(offset < 0 && (double)offset > -0.3 / rates[k]); /* lagging, not snapping */
    }
    at_1s[k] = (double)offset;
  }
  assert_near(at_1s[0], -0.15, 1e-6);
  assert_near(at_1s[0], at_1s[2], 1e-6);
  assert_near(at_1s[1], at_1s[2], 1e-6);
}

/* ---- refusals ---- */

static int failing_ground_flag;
static int failing_raycast(void *user, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_dist, ik_ray_hit *hit) {
  (void)user;
  (void)origin;
  (void)dir_unit;
  (void)max_dist;
  (void)hit;
  failing_ground_flag = 1;
  return -1;
}

typedef struct foot_call {
  ik_foot_params params;
  ik_foot_state state;
  const ik_ground *ground;
  ik_vec3 animated;
  ik_quat rotation;
  ik_real dt;
  int null_params, null_state, null_out;
} foot_call;

enum { SPOIL_COUNT = 27 };

/* Spoils one thing of a valid call; returns what validate must say. */
static ik_error spoil(foot_call *c, int which, const ik_ground *failing) {
  ik_error want;
  want.status = IK_OK;
  want.field = NULL;
  want.index = -1;
#define SPOIL(n, stmt, st, f) \
  case n:                     \
    stmt;                     \
    want.status = st;         \
    want.field = f;           \
    break
  switch (which) {
    SPOIL(0, c->null_params = 1, IK_E_NULL, "params");
    SPOIL(1, c->params.ray_height = -1, IK_E_PARAMETER, "ray_height");
    SPOIL(2, c->params.ray_height = (ik_real)NAN, IK_E_NOT_FINITE, "ray_height");
    SPOIL(3, c->params.ray_length = (ik_real)-0.5, IK_E_PARAMETER, "ray_length");
    SPOIL(4, c->params.ray_length = (ik_real)INFINITY, IK_E_NOT_FINITE, "ray_length");
    SPOIL(5, c->params.foot_offset = (ik_real)-0.01, IK_E_PARAMETER, "foot_offset");
    SPOIL(6, c->params.foot_offset = (ik_real)NAN, IK_E_NOT_FINITE, "foot_offset");
    SPOIL(7, c->params.smooth_time = -1, IK_E_PARAMETER, "smooth_time");
    SPOIL(8, c->params.smooth_time = IK_REAL_MAX_COORD * 10, IK_E_RANGE, "smooth_time");
    SPOIL(9, c->params.up = ik_vec3_zero(), IK_E_PARAMETER, "up");
    SPOIL(10, c->params.up.x = (ik_real)NAN, IK_E_NOT_FINITE, "up");
    SPOIL(11, c->ground = NULL, IK_E_NULL, "ground");
    SPOIL(12, c->animated.y = (ik_real)NAN, IK_E_NOT_FINITE, "animated_position");
    SPOIL(13, c->animated.x = IK_REAL_MAX_COORD * 10, IK_E_RANGE, "animated_position");
    /* Each fine, but the ray's start beyond range. */
    SPOIL(14, (c->params.ray_height = IK_REAL_MAX_COORD, c->animated.y = IK_REAL_MAX_COORD * (ik_real)0.75),
          IK_E_RANGE, "animated_position");
    SPOIL(15, c->null_state = 1, IK_E_NULL, "state");
    SPOIL(16, c->null_out = 1, IK_E_NULL, "out");
    SPOIL(17, c->state.offset.z = (ik_real)NAN, IK_E_NOT_FINITE, "state");
    SPOIL(18, c->state.velocity.x = (ik_real)INFINITY, IK_E_NOT_FINITE, "state");
    SPOIL(19, c->state.goal.y = (ik_real)NAN, IK_E_NOT_FINITE, "state");
    SPOIL(20, c->state.rotation.w = (ik_real)NAN, IK_E_NOT_FINITE, "state");
    SPOIL(21, c->rotation.x = (ik_real)NAN, IK_E_NOT_FINITE, "animated_rotation");
    SPOIL(22, c->dt = (ik_real)-1e-3, IK_E_PARAMETER, "dt");
    SPOIL(23, c->dt = (ik_real)NAN, IK_E_NOT_FINITE, "dt");
    SPOIL(24, c->dt = (ik_real)INFINITY, IK_E_NOT_FINITE, "dt");
    /* Valid input, failing ground: not a validation error, but refused all the same. */
    SPOIL(25, c->ground = failing, IK_OK, NULL);
    /* An uninitialised state may hold anything: nothing to check. */
    SPOIL(26, (c->state.initialised = 0, c->state.offset.x = (ik_real)NAN), IK_OK, NULL);
    default:
      break;
  }
#undef SPOIL
  return want;
}

static void make_valid_call(foot_call *c, const ik_ground *g) {
  ik_foot_result out;
  memset(c, 0, sizeof *c);
  ik_foot_params_init(&c->params);
  ik_foot_state_init(&c->state);
  c->ground = g;
  c->animated = v3(0.1, 0.02, 0.3);
  c->rotation = yaw(0.4);
  c->dt = (ik_real)(1.0 / 60);
  /* A state with history. */
  assert_int_equal(ik_foot_update(&c->params, &c->state, g, v3(0.1, 0.3, 0.3), c->rotation, c->dt, &out),
                   IK_OK);
  assert_int_equal(ik_foot_update(&c->params, &c->state, g, c->animated, c->rotation, c->dt, &out), IK_OK);
}

static void test_validate_reports_code_and_field_for_every_bad_input(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  int which;
  (void)state;
  for (which = 0; which < SPOIL_COUNT; which++) {
    foot_call c;
    ik_foot_result out;
    ik_error err, want;
    make_valid_call(&c, ground.g);
    want = spoil(&c, which, ground.g);
    memset(&err, 0x5a, sizeof err);
    assert_int_equal(ik_foot_validate(c.null_params ? NULL : &c.params, c.null_state ? NULL : &c.state,
                                      c.ground, c.animated, c.rotation, c.dt, c.null_out ? NULL : &out, &err),
                     want.status);
    assert_int_equal(err.status, want.status);
    if (want.field == NULL) {
      assert_null(err.field);
    } else {
      assert_string_equal(err.field, want.field);
    }
  }
  release(&ground);
}

static void test_refused_update_changes_no_state_and_no_output(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_result out, out_before;
  owned_ground failing = make_custom(failing_raycast, NULL);
  int which, refused = 0;
  (void)state;
  memset(&out_before, 0x3c, sizeof out_before);
  for (which = 0; which < SPOIL_COUNT; which++) {
    foot_call c;
    ik_foot_state state_before;
    ik_error want;
    ik_status st;
    make_valid_call(&c, ground.g);
    want = spoil(&c, which, failing.g);
    if (want.status == IK_OK && c.ground != failing.g) continue;
    refused++;
    state_before = c.state;
    out = out_before;
    failing_ground_flag = 0;
    st = ik_foot_update(c.null_params ? NULL : &c.params, c.null_state ? NULL : &c.state, c.ground,
                        c.animated, c.rotation, c.dt, c.null_out ? NULL : &out);
    assert_int_equal(st, c.ground == failing.g ? IK_E_PARAMETER : want.status);
    if (c.ground == failing.g) assert_int_equal(failing_ground_flag, 1);
    assert_memory_equal(&c.state, &state_before, sizeof state_before);
    assert_memory_equal(&out, &out_before, sizeof out);
  }
  assert_int_equal(refused, SPOIL_COUNT - 1);
  release(&failing);
  release(&ground);
}

static void test_deficit_and_pelvis_refusals(void **state) {
  owned_ground ground = make_plane(v3(0, 0, 0), world_up);
  ik_foot_params p;
  ik_pelvis pelvis, before;
  ik_real deficit = 42, offset = 42;
  ik_real bad[2] = {0, (ik_real)NAN};
  ik_error err;
  (void)state;
  ik_foot_params_init(&p);
  assert_int_equal(ik_foot_deficit(&p, NULL, v3(0, 0, 0), &deficit), IK_E_NULL);
  assert_int_equal(ik_foot_deficit(&p, ground.g, v3(0, NAN, 0), &deficit), IK_E_NOT_FINITE);
  assert_int_equal(ik_foot_deficit(&p, ground.g, v3(0, 0, 0), NULL), IK_E_NULL);
  p.ray_length = -1;
  assert_int_equal(ik_foot_deficit(&p, ground.g, v3(0, 0, 0), &deficit), IK_E_PARAMETER);
  assert_near(deficit, 42, 0);

  memset(&pelvis, 0, sizeof pelvis); /* padding too: compared byte for byte */
  ik_pelvis_init(&pelvis);
  assert_int_equal(ik_pelvis_update(&pelvis, bad, 1, (ik_real)0.1, &offset), IK_OK);
  memcpy(&before, &pelvis, sizeof pelvis);
  offset = 42;
  assert_int_equal(ik_pelvis_validate(&pelvis, bad, 2, (ik_real)0.1, &err), IK_E_NOT_FINITE);
  assert_string_equal(err.field, "foot_deficits");
  assert_int_equal(err.index, 1);
  assert_int_equal(ik_pelvis_update(&pelvis, bad, 2, (ik_real)0.1, &offset), IK_E_NOT_FINITE);
  assert_int_equal(ik_pelvis_validate(&pelvis, bad, -1, (ik_real)0.1, &err), IK_E_COUNT);
  assert_int_equal(ik_pelvis_validate(&pelvis, NULL, 1, (ik_real)0.1, &err), IK_E_NULL);
  assert_int_equal(ik_pelvis_validate(&pelvis, bad, 1, (ik_real)-0.1, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "dt");
  assert_int_equal(ik_pelvis_validate(NULL, bad, 1, (ik_real)0.1, &err), IK_E_NULL);
  pelvis.smooth_time = -1;
  assert_int_equal(ik_pelvis_update(&pelvis, bad, 1, (ik_real)0.1, &offset), IK_E_PARAMETER);
  pelvis.smooth_time = before.smooth_time;
  pelvis.velocity = (ik_real)NAN;
  assert_int_equal(ik_pelvis_update(&pelvis, bad, 1, (ik_real)0.1, &offset), IK_E_NOT_FINITE);
  pelvis.velocity = before.velocity;
  assert_memory_equal(&pelvis, &before, sizeof before);
  assert_near(offset, 42, 0);
  /* No feet at all is fine: nothing to drop for. */
  assert_int_equal(ik_pelvis_update(&pelvis, NULL, 0, (ik_real)0.1, &offset), IK_OK);
  release(&ground);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params_init_sets_the_documented_defaults),
      cmocka_unit_test(test_first_update_on_flat_ground_snaps_foot_offset_above_it),
      cmocka_unit_test(test_foot_exactly_at_foot_offset_is_grounded_and_unmoved),
      cmocka_unit_test(test_planted_foot_on_each_stair_tread_settles_foot_offset_above_it),
      cmocka_unit_test(test_planted_foot_on_20_degree_slope_stands_foot_offset_along_normal_and_aligned),
      cmocka_unit_test(test_swinging_foot_above_ground_is_left_alone),
      cmocka_unit_test(test_foot_lifting_off_eases_back_onto_its_animation),
      cmocka_unit_test(test_foot_with_no_ground_in_reach_is_left_alone),
      cmocka_unit_test(test_custom_up_axis_is_honoured),
      cmocka_unit_test(test_30_60_and_144_hz_agree_within_1e_3_after_one_second),
      cmocka_unit_test(test_steadily_rising_ground_is_followed_identically_at_any_rate),
      cmocka_unit_test(test_a_smoothed_foot_never_sinks_into_the_ground),
      cmocka_unit_test(test_spring_matches_closed_form_and_one_long_step_equals_many_short),
      cmocka_unit_test(test_extreme_steps_and_smooth_times_stay_finite_and_land_on_the_goal),
      cmocka_unit_test(test_dt_zero_returns_current_smoothed_value_and_changes_nothing),
      cmocka_unit_test(test_a_step_too_short_for_the_spring_to_measure_moves_nothing),
      cmocka_unit_test(test_zero_smooth_time_follows_the_goal_at_once),
      cmocka_unit_test(test_pelvis_offset_is_the_lowest_negative_deficit),
      cmocka_unit_test(test_pelvis_drops_by_the_lowest_foots_deficit_on_stairs),
      cmocka_unit_test(test_pelvis_spring_snaps_first_then_eases_the_same_at_any_rate),
      cmocka_unit_test(test_validate_reports_code_and_field_for_every_bad_input),
      cmocka_unit_test(test_refused_update_changes_no_state_and_no_output),
      cmocka_unit_test(test_deficit_and_pelvis_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
