/* The pole pass: bend towards the pole without touching lengths, root or tip. */
#include <string.h>

#include "test_util.h"

static void bends_the_elbow_to_the_pole_side(void **state) {
  ik_vec3 q[3] = {{0, 0, 0}, {1, 1, 0}, {2, 0, 0}};
  ik_vec3 before[3];
  ik_pole_job job;
  (void)state;
  memcpy(before, q, sizeof q);
  ik_pole_job_init(&job, q, 3, ik_vec3_make(1, 0, 3));
  assert_int_equal(ik_pole_run(&job), IK_OK);
  assert_int_equal(job.turned, 1);
  assert_vec3_near(q[1], ik_vec3_make(1, 0, 1), T_EPS);
  assert_memory_equal(&q[0], &before[0], sizeof q[0]);
  assert_memory_equal(&q[2], &before[2], sizeof q[2]);
}

static void keeps_lengths_root_and_tip_on_random_chains(void **state) {
  ik_vec3 q[40], before[40];
  ik_real l[40];
  t_rng r = t_rng_make(5);
  int k;
  (void)state;
  for (k = 0; k < 200; k++) {
    int n = k < 100 ? 3 : t_int(&r, 4, 40);
    ik_pole_job job;
    ik_vec3 pole = ik_vec3_scale(t_unit_vector(&r), 10);
    t_random_chain(&r, q, l, n, 0.1, 2, 1.0);
    memcpy(before, q, sizeof(ik_vec3) * (size_t)n);
    ik_pole_job_init(&job, q, n, pole);
    assert_int_equal(ik_pole_run(&job), IK_OK);
    assert_near(t_max_length_error(q, l, n), 0, T_LEN_REL * 10);
    assert_memory_equal(&q[0], &before[0], sizeof q[0]);
    assert_vec3_near(q[n - 1], before[n - 1], T_EPS * 100);
    /* With one inner joint the result is exact: the elbow lies in the plane of its
     * neighbours and the pole, on the pole's side (longer chains:
     * every_inner_joint_ends_on_the_pole_side). */
    if (n == 3 && job.turned == 1) {
      ik_vec3 axis = ik_vec3_normalize(ik_vec3_sub(q[2], q[0]));
      ik_vec3 elbow_flat = ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_sub(q[1], q[0]), axis));
      ik_vec3 pole_flat = ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_sub(pole, q[0]), axis));
      assert_vec3_near(elbow_flat, pole_flat, 1e-4);
    }
  }
}

/* How far inner joint i lies on the far side of the root-to-tip line from the pole, in
 * units of bone i - 1, when some turn about the line from joint i - 1 to the tip (the
 * turn that keeps the joints before it and the tip, and every bone's length) would have
 * put it on the pole's side; else 0. */
static double far_side(const ik_vec3 *q, int n, int i, ik_vec3 pole) {
  const ik_vec3 line = ik_vec3_normalize(ik_vec3_sub(q[n - 1], q[0]));
  const ik_vec3 side = ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_sub(pole, q[0]), line));
  const ik_vec3 axis = ik_vec3_normalize(ik_vec3_sub(q[n - 1], q[i - 1]));
  const ik_vec3 joint_rel = ik_vec3_sub(q[i], q[i - 1]);
  const ik_vec3 centre = ik_vec3_madd(q[i - 1], axis, ik_vec3_dot(joint_rel, axis));
  const double radius = (double)ik_vec3_len(ik_vec3_project_on_plane(joint_rel, axis));
  const double highest = (double)ik_vec3_dot(ik_vec3_sub(centre, q[0]), side) +
                         radius * (double)ik_vec3_len(ik_vec3_project_on_plane(side, axis));
  const double height = (double)ik_vec3_dot(ik_vec3_sub(q[i], q[0]), side);
  return height < 0 && highest > 0 ? -height / (double)ik_vec3_len(joint_rel) : 0;
}

/* Solved with a pole, every inner joint of a 4- to 6-joint chain ends on the pole's side
 * of the root-to-target line, wherever it can. One pass, root to tip, turned each joint
 * about an axis the next turn then moved: 14% of random 4-joint chains zig-zagged (35%
 * and 41% at 5 and 6 joints), a joint up to 2.7 of its bone on the far side. */
static void every_inner_joint_ends_on_the_pole_side(void **state) {
  ik_vec3 q[6], rest[6];
  ik_real l[6];
  t_rng r = t_rng_make(18);
  int k, i, solved = 0;
  double worst = 0;
  (void)state;
  for (k = 0; k < t_cases(3000); k++) {
    const int n = 4 + k % 3;
    ik_chain chain;
    ik_fabrik_job job;
    ik_vec3 target;
    t_random_chain(&r, rest, l, n, 0.5, 1.5, 1.0);
    memcpy(q, rest, sizeof(ik_vec3) * (size_t)n);
    target = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0.3, 0.9) * (l[0] + l[1] + l[2]));
    ik_chain_init(&chain, q, n, l);
    chain.has_pole = 1;
    chain.pole = ik_vec3_scale(t_unit_vector(&r), 5);
    chain.pole_weight = 1;
    ik_fabrik_job_init(&job, &chain, target);
    assert_int_equal(ik_fabrik_run(&job), IK_OK);
    if (!job.result.reached) continue;
    assert_near(t_max_length_error(q, l, n), 0, T_LEN_REL * 10);
    for (i = 1; i + 1 < n; i++) {
      const double far = far_side(q, n, i, chain.pole);
      if (far > worst) worst = far;
    }
    solved++;
  }
  assert_true(solved > t_cases(3000) / 2);
  assert_near(worst, 0, 1e-6);
}

static void half_weight_turns_half_way(void **state) {
  ik_vec3 q[3] = {{0, 0, 0}, {1, 1, 0}, {2, 0, 0}};
  ik_pole_job job;
  (void)state;
  ik_pole_job_init(&job, q, 3, ik_vec3_make(1, 0, 3));
  job.weight = (ik_real)0.5;
  assert_int_equal(ik_pole_run(&job), IK_OK);
  assert_vec3_near(q[1], ik_vec3_make(1, ik_sqrt(0.5), ik_sqrt(0.5)), T_EPS);
  job.weight = 0;
  q[1] = ik_vec3_make(1, 1, 0);
  assert_int_equal(ik_pole_run(&job), IK_OK);
  assert_int_equal(job.turned, 0);
  assert_vec3_near(q[1], ik_vec3_make(1, 1, 0), 0);
}

/* A chain and its pole in one plane, a joint on the far side: at full weight it swings
 * through (a half turn, in the plane), at part weight it leaves the plane, and must
 * keep its bones either way (the plane lock used to project it back, shortening them). */
static void partial_weight_on_a_planar_chain_keeps_lengths(void **state) {
  ik_vec3 q[3] = {{0, 0, 0}, {1, 1, 0}, {2, 0, 0}};
  ik_vec3 zig[6];
  ik_real l[5];
  ik_pole_job job;
  int i, k;
  (void)state;
  ik_pole_job_init(&job, q, 3, ik_vec3_make(1, -5, 0));
  job.weight = (ik_real)0.5;
  assert_int_equal(ik_pole_run(&job), IK_OK);
  assert_int_equal(job.turned, 1);
  assert_near(ik_vec3_dist(q[0], q[1]), ik_sqrt(2), T_EPS);
  assert_near(ik_vec3_dist(q[1], q[2]), ik_sqrt(2), T_EPS);
  /* Half of a half turn: a quarter turn about the neighbours' axis, out of the plane. */
  assert_vec3_near(q[1], ik_vec3_make(1, 0, 1), T_EPS);
  /* Longer zig-zags in the XY plane, a pole in it, any weight: lengths kept. */
  for (k = 0; k <= 10; k++) {
    for (i = 0; i < 6; i++) zig[i] = ik_vec3_make((ik_real)i, (ik_real)(i % 2), 0);
    ik_measure_lengths(zig, 6, l);
    ik_pole_job_init(&job, zig, 6, ik_vec3_make((ik_real)2.5, -4, 0));
    job.weight = (ik_real)k / 10;
    assert_int_equal(ik_pole_run(&job), IK_OK);
    assert_near(t_max_length_error(zig, l, 6), 0, T_LEN_REL * 10);
    if (k == 10) /* full weight: every joint swung through the plane, and stays in it */
      for (i = 0; i < 6; i++) assert_near(zig[i].z, 0, T_EPS);
  }
}

/* The same through a solver's pole pass: the target is already reached, so only the
 * pole moves the chain. */
static void solver_pole_pass_at_part_weight_keeps_lengths(void **state) {
  ik_vec3 q[3] = {{0, 0, 0}, {1, 1, 0}, {2, 0, 0}};
  ik_real l[2];
  ik_chain chain;
  ik_fabrik_job job;
  (void)state;
  ik_chain_init(&chain, q, 3, l);
  chain.derive_lengths = 1;
  chain.has_pole = 1;
  chain.pole = ik_vec3_make(1, -5, 0);
  chain.pole_weight = (ik_real)0.5;
  ik_fabrik_job_init(&job, &chain, ik_vec3_make(2, 0, 0));
  assert_int_equal(ik_fabrik_run(&job), IK_OK);
  assert_near(ik_vec3_dist(q[0], q[1]), ik_sqrt(2), T_EPS);
  assert_near(ik_vec3_dist(q[1], q[2]), ik_sqrt(2), T_EPS);
  assert_vec3_near(q[2], ik_vec3_make(2, 0, 0), T_EPS);
}

static void straight_chain_is_skipped(void **state) {
  ik_vec3 q[4];
  ik_pole_job job;
  (void)state;
  t_straight_chain(q, 4, 1);
  ik_pole_job_init(&job, q, 4, ik_vec3_make(1, 5, 0));
  assert_int_equal(ik_pole_run(&job), IK_OK);
  assert_int_equal(job.turned, 0);
  assert_vec3_near(q[1], ik_vec3_make(1, 0, 0), 0);
}

static void pole_on_the_axis_is_skipped(void **state) {
  ik_vec3 q[3] = {{0, 0, 0}, {1, 1, 0}, {2, 0, 0}};
  ik_pole_job job;
  (void)state;
  ik_pole_job_init(&job, q, 3, ik_vec3_make(7, 0, 0));
  assert_int_equal(ik_pole_run(&job), IK_OK);
  assert_int_equal(job.turned, 0);
  assert_vec3_near(q[1], ik_vec3_make(1, 1, 0), 0);
}

static void coincident_neighbours_are_skipped(void **state) {
  ik_vec3 q[3] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 0}};
  ik_pole_job job;
  (void)state;
  ik_pole_job_init(&job, q, 3, ik_vec3_make(0, 4, 0));
  assert_int_equal(ik_pole_run(&job), IK_OK);
  assert_int_equal(job.turned, 0);
  assert_true(ik_vec3_is_finite(q[1]));
}

/* A chain folded back on itself, so that joint i's neighbours coincide only to rounding:
 * the axis through them is rounding noise, not in the chain's plane, and the turn about
 * it leaves the plane. Putting the joint back on the plane then shortened its bones (by
 * 5% in the case fuzz_core found); it must keep them. */
static void folded_neighbours_apart_by_rounding_keep_lengths(void **state) {
  t_rng r = t_rng_make(17);
  int k;
  (void)state;
  for (k = 0; k < 2000; k++) {
    const ik_vec3 dir = t_unit_vector(&r);
    const ik_real len = (ik_real)t_uniform(&r, 0.5, 2);
    ik_vec3 q[4];
    ik_pole_job job;
    int i;
    /* Away from the origin: rounding there is larger than IK_REAL_EPSILON, the length
     * under which two joints count as one. */
    q[0] = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 2, 6));
    q[1] = ik_vec3_madd(q[0], dir, len);
    q[2] = ik_vec3_madd(q[1], dir, len);
    q[3] = ik_vec3_madd(q[2], dir, -len); /* back onto q[1], to rounding */
    ik_pole_job_init(&job, q, 4, ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 1, 5)));
    assert_int_equal(ik_pole_run(&job), IK_OK);
    for (i = 0; i < 3; i++) assert_near(ik_vec3_dist(q[i], q[i + 1]), len, T_EPS);
  }
}

static void refuses_bad_input_and_changes_nothing(void **state) {
  ik_vec3 q[3] = {{0, 0, 0}, {1, 1, 0}, {2, 0, 0}};
  ik_vec3 before[3];
  ik_pole_job job;
  ik_error err;
  (void)state;
  memcpy(before, q, sizeof q);
  ik_pole_job_init(&job, q, 3, ik_vec3_make(0, (ik_real)NAN, 0));
  assert_int_equal(ik_pole_validate(&job, &err), IK_E_NOT_FINITE);
  assert_string_equal(err.field, "pole");
  assert_int_equal(ik_pole_run(&job), IK_E_NOT_FINITE);
  assert_memory_equal(q, before, sizeof q);
  job.pole = ik_vec3_make(0, 0, 1);
  job.weight = -1;
  assert_int_equal(ik_pole_run(&job), IK_E_WEIGHT);
  job.weight = 1;
  job.count = 1;
  assert_int_equal(ik_pole_run(&job), IK_E_COUNT);
  job.count = 3;
  job.positions = NULL;
  assert_int_equal(ik_pole_run(&job), IK_E_NULL);
  assert_memory_equal(q, before, sizeof q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bends_the_elbow_to_the_pole_side),
      cmocka_unit_test(keeps_lengths_root_and_tip_on_random_chains),
      cmocka_unit_test(every_inner_joint_ends_on_the_pole_side),
      cmocka_unit_test(half_weight_turns_half_way),
      cmocka_unit_test(partial_weight_on_a_planar_chain_keeps_lengths),
      cmocka_unit_test(solver_pole_pass_at_part_weight_keeps_lengths),
      cmocka_unit_test(straight_chain_is_skipped),
      cmocka_unit_test(pole_on_the_axis_is_skipped),
      cmocka_unit_test(coincident_neighbours_are_skipped),
      cmocka_unit_test(folded_neighbours_apart_by_rounding_keep_lengths),
      cmocka_unit_test(refuses_bad_input_and_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
