/*
 * test_two_bone.c: the analytic two-bone job: exact reach, the bend plane rules, every
 * edge case the solver names, soft reach, weight, and every refusal.
 */
#include <math.h>
#include <string.h>

#include "test_util.h"

/* ---- helpers ---- */

static ik_real bone_len(const ik_vec3 *p, int bone) { return ik_vec3_dist(p[bone], p[bone + 1]); }

/* point minus its projection on the line through a and b: where it sits across the line. */
static ik_vec3 off_line(ik_vec3 point, ik_vec3 a, ik_vec3 b) {
  ik_vec3 axis = ik_vec3_normalize(ik_vec3_sub(b, a));
  return ik_vec3_project_on_plane(ik_vec3_sub(point, a), axis);
}

static void copy3(ik_vec3 *dst, const ik_vec3 *src) { memcpy(dst, src, 3 * sizeof *dst); }

static void assert_finite3(const ik_vec3 *p) {
  assert_true(ik_vec3_is_finite(p[0]) && ik_vec3_is_finite(p[1]) && ik_vec3_is_finite(p[2]));
}

/* A random limb at the origin (bones 0.5 to 2, any bend) and its bone lengths. */
static void random_limb(t_rng *r, ik_vec3 *p, ik_real *lengths) {
  t_random_chain(r, p, lengths, 3, 0.5, 2.0, 3.0);
}

/* A point at distance `dist` from the start in a random direction. */
static ik_vec3 random_target(t_rng *r, const ik_vec3 *p, double dist) {
  return ik_vec3_madd(p[0], t_unit_vector(r), (ik_real)dist);
}

static void run_ok(ik_two_bone_job *job) { assert_int_equal(ik_two_bone_run(job), IK_OK); }

/* A random job of any kind: target anywhere from the start to twice the reach, pole,
 * weight and softness each sometimes. */
static void random_job(t_rng *r, ik_vec3 *p, ik_real *lengths, ik_two_bone_job *job) {
  random_limb(r, p, lengths);
  ik_two_bone_job_init(job, p, random_target(r, p, t_uniform(r, 0, 2 * (double)(lengths[0] + lengths[1]))));
  if (t_int(r, 0, 1)) {
    job->has_pole = 1;
    job->pole = random_target(r, p, t_uniform(r, 0.1, 3));
  }
  if (t_int(r, 0, 2) == 0) job->weight = (ik_real)t_uniform(r, 0, 1);
  if (t_int(r, 0, 2) == 0) job->softness = (ik_real)t_uniform(r, 0, 0.9);
}

/* ---- defaults ---- */

static void test_init_sets_defaults(void **state) {
  ik_vec3 p[3];
  ik_two_bone_job job;
  (void)state;
  t_straight_chain(p, 3, 1);
  memset(&job, 0x5a, sizeof job);
  ik_two_bone_job_init(&job, p, ik_vec3_make(1, 1, 0));
  assert_ptr_equal(job.positions, p);
  assert_vec3_near(job.target, ik_vec3_make(1, 1, 0), 0);
  assert_int_equal(job.has_pole, 0);
  assert_near(job.weight, 1, 0);
  assert_near(job.softness, 0, 0);
  assert_near(job.tolerance, 1e-3, 1e-9);
  assert_int_equal(job.result.reached, 0);
  assert_int_equal(job.result.iterations, 0);
  assert_near(job.result.distance, 0, 0);
}

/* ---- exact solve on random limbs ---- */

static void test_reaches_every_reachable_target_exactly(void **state) {
  t_rng r = t_rng_make(1);
  int trial;
  (void)state;
  for (trial = 0; trial < 500; trial++) {
    ik_vec3 p[3];
    ik_real lengths[2];
    ik_two_bone_job job;
    random_limb(&r, p, lengths);
    ik_two_bone_job_init(&job, p,
                         random_target(&r, p,
                                       t_uniform(&r, fabs((double)(lengths[0] - lengths[1])),
                                                 (double)(lengths[0] + lengths[1]))));
    run_ok(&job);
    assert_vec3_near(p[2], job.target, T_EPS);
    assert_true(job.result.reached);
    assert_int_equal(job.result.iterations, 1);
    assert_near(job.result.distance, ik_vec3_dist(p[2], job.target), 0);
  }
}

static void test_keeps_bone_lengths_for_any_job(void **state) {
  t_rng r = t_rng_make(2);
  int trial;
  (void)state;
  for (trial = 0; trial < 500; trial++) {
    ik_vec3 p[3];
    ik_real lengths[2];
    ik_two_bone_job job;
    random_job(&r, p, lengths, &job);
    run_ok(&job);
    assert_finite3(p);
    assert_near(t_max_length_error(p, lengths, 3), 0, T_LEN_REL);
  }
}

static void test_never_moves_the_start_joint(void **state) {
  t_rng r = t_rng_make(3);
  int trial;
  (void)state;
  for (trial = 0; trial < 500; trial++) {
    ik_vec3 p[3], start;
    ik_real lengths[2];
    ik_two_bone_job job;
    random_job(&r, p, lengths, &job);
    /* Off the origin, where a moved start could not hide in zeros. */
    start = ik_vec3_make((ik_real)t_uniform(&r, -5, 5), (ik_real)t_uniform(&r, -5, 5), 1);
    p[0] = ik_vec3_add(p[0], start);
    p[1] = ik_vec3_add(p[1], start);
    p[2] = ik_vec3_add(p[2], start);
    job.target = ik_vec3_add(job.target, start);
    job.pole = ik_vec3_add(job.pole, start);
    run_ok(&job);
    assert_memory_equal(&p[0], &start, sizeof start);
  }
}

/* ---- bend plane ---- */

static void test_bends_mid_towards_the_pole(void **state) {
  t_rng r = t_rng_make(4);
  int trial, checked = 0;
  (void)state;
  for (trial = 0; trial < 500; trial++) {
    ik_vec3 p[3], normal;
    ik_real lengths[2];
    ik_two_bone_job job;
    double lo, hi;
    random_limb(&r, p, lengths);
    /* Strictly inside the range, so the mid is off the start-target line. */
    lo = fabs((double)(lengths[0] - lengths[1]));
    hi = (double)(lengths[0] + lengths[1]);
    ik_two_bone_job_init(&job, p,
                         random_target(&r, p, t_uniform(&r, lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo))));
    job.has_pole = 1;
    job.pole = random_target(&r, p, t_uniform(&r, 0.5, 3));
    if (ik_vec3_len(off_line(job.pole, p[0], job.target)) < (ik_real)0.05) continue;
    run_ok(&job);
    checked++;
    assert_vec3_near(p[2], job.target, T_EPS);
    assert_true(ik_vec3_dot(off_line(p[1], p[0], job.target), off_line(job.pole, p[0], job.target)) > 0);
    /* In the plane through start, target and pole. */
    normal = ik_vec3_normalize(ik_vec3_cross(ik_vec3_sub(job.target, p[0]), ik_vec3_sub(job.pole, p[0])));
    assert_near(ik_vec3_dot(ik_vec3_sub(p[1], p[0]), normal), 0, T_EPS);
  }
  assert_true(checked > 400);
}

static void test_without_pole_mid_stays_on_its_side_in_the_current_plane(void **state) {
  t_rng r = t_rng_make(5);
  int trial;
  (void)state;
  for (trial = 0; trial < 500; trial++) {
    ik_vec3 p[3], mid_before, side_before, normal;
    ik_real lengths[2];
    ik_two_bone_job job;
    double lo, hi;
    random_limb(&r, p, lengths);
    lo = fabs((double)(lengths[0] - lengths[1]));
    hi = (double)(lengths[0] + lengths[1]);
    ik_two_bone_job_init(&job, p,
                         random_target(&r, p, t_uniform(&r, lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo))));
    mid_before = p[1];
    side_before = off_line(mid_before, p[0], job.target);
    if (ik_vec3_len(side_before) < (ik_real)0.05) continue;
    run_ok(&job);
    assert_vec3_near(p[2], job.target, T_EPS);
    assert_true(ik_vec3_dot(off_line(p[1], p[0], job.target), side_before) > 0);
    normal = ik_vec3_normalize(ik_vec3_cross(ik_vec3_sub(job.target, p[0]), ik_vec3_sub(mid_before, p[0])));
    assert_near(ik_vec3_dot(ik_vec3_sub(p[1], p[0]), normal), 0, T_EPS);
  }
}

static void test_pole_on_the_start_target_line_is_ignored(void **state) {
  t_rng r = t_rng_make(6);
  const double along[] = {-1.5, 0, 0.5, 3};
  int trial, k;
  (void)state;
  for (trial = 0; trial < 100; trial++) {
    ik_vec3 input[3], p_free[3], p_pole[3], aim;
    ik_real lengths[2];
    ik_two_bone_job free_job;
    random_limb(&r, input, lengths);
    copy3(p_free, input);
    ik_two_bone_job_init(&free_job, p_free, random_target(&r, input, t_uniform(&r, 0.2, 3)));
    run_ok(&free_job);
    aim = ik_vec3_normalize(ik_vec3_sub(free_job.target, input[0]));
    for (k = 0; k < 4; k++) {
      ik_two_bone_job job;
      copy3(p_pole, input);
      ik_two_bone_job_init(&job, p_pole, free_job.target);
      job.has_pole = 1;
      job.pole = ik_vec3_madd(input[0], aim, (ik_real)(along[k] * (double)(lengths[0] + lengths[1])));
      run_ok(&job);
      assert_vec3_near(p_pole[1], p_free[1], T_EPS);
      assert_vec3_near(p_pole[2], p_free[2], T_EPS);
    }
  }
}

/* A pole within rounding of the start-target line, with the target near a start far from
 * the origin (so the aim direction carries the cancellation of target - start): the bend
 * direction taken from it must still be perpendicular to the aim, or the upper bone
 * stretches (found by fuzz_core: 1.6e-4 of its length). */
static void test_pole_within_rounding_of_the_target_line_keeps_lengths(void **state) {
  t_rng r = t_rng_make(61);
  int trial;
  (void)state;
  for (trial = 0; trial < 2000; trial++) {
    const ik_vec3 start = ik_vec3_make(3.01171875, 3.01171875, 3.01171875);
    const ik_vec3 dir = t_unit_vector(&r);
    ik_vec3 p[3];
    ik_two_bone_job job;
    p[0] = start;
    p[1] = ik_vec3_add(start, ik_vec3_make(0.1884765625, 0, 0));
    p[2] = ik_vec3_add(start, ik_vec3_make(0.376953125, 0, 0));
    ik_two_bone_job_init(&job, p, ik_vec3_madd(start, dir, (ik_real)t_uniform(&r, 0.002, 0.02)));
    job.has_pole = 1;
    job.pole = ik_vec3_madd(start, dir, (ik_real)-t_uniform(&r, 1, 4));
    run_ok(&job);
    assert_near(bone_len(p, 0), 0.1884765625, T_EPS);
    assert_near(bone_len(p, 1), 0.1884765625, T_EPS);
  }
}

/* ---- named edge cases ---- */

static void test_unreachable_target_lays_limb_straight_towards_it(void **state) {
  t_rng r = t_rng_make(7);
  int trial;
  (void)state;
  for (trial = 0; trial < 200; trial++) {
    ik_vec3 p[3], aim;
    ik_real lengths[2];
    ik_two_bone_job job;
    double reach, dist;
    random_limb(&r, p, lengths);
    reach = (double)(lengths[0] + lengths[1]);
    dist = reach * t_uniform(&r, 1.01, 3);
    ik_two_bone_job_init(&job, p, random_target(&r, p, dist));
    aim = ik_vec3_normalize(ik_vec3_sub(job.target, p[0]));
    run_ok(&job);
    assert_vec3_near(p[1], ik_vec3_madd(p[0], aim, lengths[0]), T_EPS);
    assert_vec3_near(p[2], ik_vec3_madd(p[0], aim, lengths[0] + lengths[1]), T_EPS);
    assert_false(job.result.reached);
    assert_near(job.result.distance, dist - reach, T_EPS * dist);
  }
}

static void test_target_exactly_at_full_reach_is_reached_straight(void **state) {
  /* Bones 1 and 2, target at exactly 3: every number here is exact. */
  ik_vec3 p[3] = {{0, 0, 0}, {0, 1, 0}, {2, 1, 0}};
  ik_two_bone_job job;
  t_rng r = t_rng_make(8);
  int trial;
  (void)state;
  ik_two_bone_job_init(&job, p, ik_vec3_make(0, 0, 3));
  job.tolerance = 0; /* reached means distance <= tolerance */
  run_ok(&job);
  assert_vec3_near(p[1], ik_vec3_make(0, 0, 1), T_EPS);
  assert_vec3_near(p[2], ik_vec3_make(0, 0, 3), T_EPS);
  assert_true(job.result.reached);
  for (trial = 0; trial < 200; trial++) {
    ik_real lengths[2];
    random_limb(&r, p, lengths);
    ik_two_bone_job_init(&job, p, random_target(&r, p, (double)(lengths[0] + lengths[1])));
    run_ok(&job);
    assert_vec3_near(p[2], job.target, T_EPS);
    assert_true(job.result.reached);
    /* Not checked straight: rounding puts such a target an ulp inside full reach, where
     * the knee rightly bends by about the square root of an ulp. */
  }
}

static void test_target_nearer_than_bone_difference_folds_limb(void **state) {
  /* Long upper bone: mid points at the target, end folds back towards the start. */
  ik_vec3 a[3] = {{0, 0, 0}, {2, 0, 0}, {2, 0.5, 0}};
  /* Long lower bone: mid points away, end reaches past the start towards the target. */
  ik_vec3 b[3] = {{0, 0, 0}, {0.5, 0, 0}, {0.5, 2, 0}};
  ik_two_bone_job job;
  (void)state;
  ik_two_bone_job_init(&job, a, ik_vec3_make(0, 1, 0));
  run_ok(&job);
  assert_vec3_near(a[1], ik_vec3_make(0, 2, 0), T_EPS);
  assert_vec3_near(a[2], ik_vec3_make(0, 1.5, 0), T_EPS);
  assert_false(job.result.reached);
  assert_near(job.result.distance, 0.5, T_EPS);

  ik_two_bone_job_init(&job, b, ik_vec3_make(0, 0, 1));
  run_ok(&job);
  assert_vec3_near(b[1], ik_vec3_make(0, 0, -0.5), T_EPS);
  assert_vec3_near(b[2], ik_vec3_make(0, 0, 1.5), T_EPS);
  assert_false(job.result.reached);
  assert_near(job.result.distance, 0.5, T_EPS);
}

static void test_target_at_start_folds_limb_without_nan(void **state) {
  /* Equal bones: the end can sit on the start. */
  ik_vec3 equal[3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}};
  /* Unequal bones: folded as far as it goes, along the way the limb pointed. */
  ik_vec3 unequal[3] = {{0, 0, 0}, {1, 0, 0}, {1, 2, 0}};
  const ik_vec3 limb_dir = ik_vec3_normalize(ik_vec3_make(1, 2, 0));
  ik_two_bone_job job;
  (void)state;
  ik_two_bone_job_init(&job, equal, equal[0]);
  run_ok(&job);
  assert_finite3(equal);
  assert_near(bone_len(equal, 0), 1, T_LEN_REL);
  assert_near(bone_len(equal, 1), 1, T_LEN_REL);
  assert_vec3_near(equal[2], equal[0], T_EPS);
  assert_true(job.result.reached);

  ik_two_bone_job_init(&job, unequal, unequal[0]);
  run_ok(&job);
  assert_finite3(unequal);
  assert_vec3_near(unequal[1], ik_vec3_neg(limb_dir), T_EPS);
  assert_vec3_near(unequal[2], limb_dir, T_EPS);
  assert_near(job.result.distance, 1, T_EPS);
  assert_false(job.result.reached);
}

static void test_straight_limb_aimed_at_target_bends_in_a_stable_plane(void **state) {
  /* A long limb, so that an absolute "no direction" threshold would take the rounding
   * noise on the mid joint for a bend. */
  const ik_real s = 1000;
  const ik_vec3 aim = ik_vec3_make(1, 0, 0);
  const ik_vec3 expected_mid = ik_vec3_madd(ik_vec3_scale(aim, (ik_real)0.75 * s),
                                            ik_vec3_any_perpendicular(aim), ik_sqrt((ik_real)0.4375) * s);
  const ik_real noise[] = {0, IK_REAL_EPSILON * s / 2, -IK_REAL_EPSILON * s / 2};
  int k;
  (void)state;
  for (k = 0; k < 3; k++) {
    ik_vec3 p[3];
    ik_two_bone_job job;
    p[0] = ik_vec3_zero();
    p[1] = ik_vec3_make(s, noise[k], 0);
    p[2] = ik_vec3_make(2 * s, 0, 0);
    ik_two_bone_job_init(&job, p, ik_vec3_make((ik_real)1.5 * s, 0, 0));
    run_ok(&job);
    assert_vec3_near(p[1], expected_mid, T_EPS * (double)s);
    assert_vec3_near(p[2], job.target, T_EPS * (double)s);
  }
}

static void test_folded_limb_unfolds_to_reach_target(void **state) {
  /* The lower bone lies back along the upper one. */
  const ik_vec3 folded[3] = {{0, 0, 0}, {1, 0, 0}, {0.4, 0, 0}};
  const ik_vec3 targets[] = {{0.5, 0.8, 0.2}, {1.2, 0, 0}, {-1, 0, 0}, {0.7, 0, 0}};
  int k;
  (void)state;
  for (k = 0; k < 4; k++) {
    ik_vec3 p[3];
    ik_two_bone_job job;
    copy3(p, folded);
    ik_two_bone_job_init(&job, p, targets[k]);
    run_ok(&job);
    assert_finite3(p);
    assert_near(bone_len(p, 0), bone_len(folded, 0), T_LEN_REL);
    assert_near(bone_len(p, 1), bone_len(folded, 1), T_LEN_REL);
    assert_vec3_near(p[2], targets[k], T_EPS);
  }
}

static void test_mid_on_target_line_keeps_the_limb_bending_the_same_way(void **state) {
  /* Mid lies on the start-target line, but the limb bends (anticlockwise about +Z). */
  ik_vec3 p[3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}};
  ik_two_bone_job job;
  (void)state;
  ik_two_bone_job_init(&job, p, ik_vec3_make(1.5, 0, 0));
  run_ok(&job);
  assert_vec3_near(p[2], job.target, T_EPS);
  assert_near(p[1].z, 0, T_EPS);
  assert_true(ik_vec3_cross(ik_vec3_sub(p[1], p[0]), ik_vec3_sub(p[2], p[1])).z > (ik_real)0.5);
}

/* ---- soft reach ---- */

/* Limb of bones 1 and 1 (reach 2), bent, solved towards +X at `dist` with softness 0.2;
 * returns the end joint. */
static ik_vec3 soft_solve(double dist, ik_two_bone_job *job, ik_vec3 *p) {
  p[0] = ik_vec3_zero();
  p[1] = ik_vec3_make(0.6, 0.8, 0);
  p[2] = ik_vec3_make(1.2, 0, 0);
  ik_two_bone_job_init(job, p, ik_vec3_make((ik_real)dist, 0, 0));
  job->softness = (ik_real)0.2;
  run_ok(job);
  return p[2];
}

static void test_soft_reach_follows_the_soft_curve(void **state) {
  /* Hard up to 1.6, then 1.6 + 0.4 (1 - exp(-(d - 1.6) / 0.4)). */
  const double dists[] = {1.0, 1.6, 1.8, 2.0, 3.0};
  int k;
  (void)state;
  for (k = 0; k < 5; k++) {
    ik_vec3 p[3];
    ik_two_bone_job job;
    const double d = dists[k];
    const double eased = d <= 1.6 ? d : 1.6 + 0.4 * (1 - exp(-(d - 1.6) / 0.4));
    const ik_vec3 end = soft_solve(d, &job, p);
    assert_vec3_near(end, ik_vec3_make((ik_real)eased, 0, 0), T_EPS);
    assert_true((double)end.x < 2);
    assert_near(t_max_length_error(p, (const ik_real[]){1, 1}, 3), 0, T_LEN_REL);
    /* Exact below the soft zone, short of the target in it. */
    assert_int_equal(job.result.reached, d <= 1.6);
  }
}

static void test_soft_reach_is_continuous_and_smooth_where_it_starts(void **state) {
  const double h = 1e-3;
  ik_vec3 p[3];
  ik_two_bone_job job;
  ik_vec3 before, at, after;
  (void)state;
  before = soft_solve(1.6 - h, &job, p);
  at = soft_solve(1.6, &job, p);
  after = soft_solve(1.6 + h, &job, p);
  /* Same value and the same slope (1) on both sides: no snap, no kink. */
  assert_near(ik_vec3_dist(before, at), h, 1e-3 * h);
  assert_near(ik_vec3_dist(at, after), h, 2e-3 * h);
}

/* ---- weight ---- */

static void test_weight_zero_leaves_positions_untouched(void **state) {
  t_rng r = t_rng_make(9);
  int trial;
  (void)state;
  for (trial = 0; trial < 100; trial++) {
    ik_vec3 p[3], before[3];
    ik_real lengths[2];
    ik_two_bone_job job;
    random_limb(&r, p, lengths);
    copy3(before, p);
    ik_two_bone_job_init(&job, p, random_target(&r, p, t_uniform(&r, 0, 4)));
    job.weight = 0;
    run_ok(&job);
    assert_memory_equal(p, before, sizeof before);
    assert_near(job.result.distance, ik_vec3_dist(before[2], job.target), 0);
  }
}

static void test_weight_half_turns_each_bone_halfway(void **state) {
  t_rng r = t_rng_make(10);
  int trial, bone, checked = 0;
  (void)state;
  for (trial = 0; trial < 200; trial++) {
    ik_vec3 input[3], full[3], half[3];
    ik_real lengths[2];
    ik_two_bone_job job;
    ik_vec3 target;
    random_limb(&r, input, lengths);
    target = random_target(&r, input, t_uniform(&r, 0.2, 3));
    copy3(full, input);
    ik_two_bone_job_init(&job, full, target);
    run_ok(&job);
    copy3(half, input);
    ik_two_bone_job_init(&job, half, target);
    job.weight = (ik_real)0.5;
    run_ok(&job);
    for (bone = 0; bone < 2; bone++) {
      const ik_vec3 in_dir = ik_vec3_sub(input[bone + 1], input[bone]);
      const ik_vec3 full_dir = ik_vec3_sub(full[bone + 1], full[bone]);
      const ik_vec3 half_dir = ik_vec3_sub(half[bone + 1], half[bone]);
      const double full_angle = (double)ik_vec3_angle(in_dir, full_dir);
      /* Nearly opposite directions have no well-defined halfway. */
      if (full_angle > 3.0) continue;
      checked++;
      assert_near(ik_vec3_angle(in_dir, half_dir), full_angle / 2, T_EPS);
      assert_near(ik_vec3_angle(half_dir, full_dir), full_angle / 2, T_EPS);
      assert_near(bone_len(half, bone), lengths[bone], T_LEN_REL * (double)lengths[bone]);
    }
    assert_memory_equal(&half[0], &input[0], sizeof input[0]);
  }
  assert_true(checked > 350);
}

/* ---- validation ---- */

static ik_error expect(ik_status status, const char *field, int index) {
  ik_error e;
  e.status = status;
  e.field = field;
  e.index = index;
  return e;
}

#define SPOIL_COUNT 26

/* Breaks one input of a valid job (bones 1 and 1, target at (1, 1, 1)); returns what
 * validate must say about it. The last cases are valid edges of each range. */
static ik_error spoil(ik_two_bone_job *j, int which, const char **what) {
  const ik_real nan = (ik_real)NAN, inf = (ik_real)INFINITY;
  const ik_real huge = 2 * IK_REAL_MAX_COORD;
  ik_vec3 *p = j->positions;
  /* One case a line reads as a table. */
  /* clang-format off */
  switch (which) {
  case 0: *what = "positions NULL"; j->positions = NULL; return expect(IK_E_NULL, "positions", -1);
  case 1: *what = "start NaN"; p[0].x = nan; return expect(IK_E_NOT_FINITE, "positions", 0);
  case 2: *what = "mid infinite"; p[1].y = -inf; return expect(IK_E_NOT_FINITE, "positions", 1);
  case 3: *what = "end NaN"; p[2].z = nan; return expect(IK_E_NOT_FINITE, "positions", 2);
  case 4: *what = "end huge"; p[2].x = huge; return expect(IK_E_RANGE, "positions", 2);
  case 5: *what = "target NaN"; j->target.y = nan; return expect(IK_E_NOT_FINITE, "target", -1);
  case 6: *what = "target huge"; j->target.z = -huge; return expect(IK_E_RANGE, "target", -1);
  case 7: *what = "pole NaN"; j->has_pole = 1; j->pole.x = nan; return expect(IK_E_NOT_FINITE, "pole", -1);
  case 8: *what = "pole huge"; j->has_pole = 1; j->pole.y = huge; return expect(IK_E_RANGE, "pole", -1);
  case 9: *what = "weight NaN"; j->weight = nan; return expect(IK_E_NOT_FINITE, "weight", -1);
  case 10: *what = "softness infinite"; j->softness = inf; return expect(IK_E_NOT_FINITE, "softness", -1);
  case 11: *what = "tolerance NaN"; j->tolerance = nan; return expect(IK_E_NOT_FINITE, "tolerance", -1);
  case 12: *what = "mid on start"; p[1] = p[0]; return expect(IK_E_BONE_LENGTH, "positions", 0);
  case 13: *what = "end on mid"; p[2] = p[1]; return expect(IK_E_BONE_LENGTH, "positions", 1);
  case 14: *what = "tolerance negative"; j->tolerance = -1e-6; return expect(IK_E_TOLERANCE, "tolerance", -1);
  case 15: *what = "weight negative"; j->weight = -0.01; return expect(IK_E_WEIGHT, "weight", -1);
  case 16: *what = "weight above 1"; j->weight = 1.01; return expect(IK_E_WEIGHT, "weight", -1);
  case 17: *what = "softness negative"; j->softness = -0.01; return expect(IK_E_PARAMETER, "softness", -1);
  case 18: *what = "softness 1"; j->softness = 1; return expect(IK_E_PARAMETER, "softness", -1);
  case 19: *what = "reach too far"; p[0] = ik_vec3_make(IK_REAL_MAX_REACH * (ik_real)0.75, 0, 0);
    p[1] = ik_vec3_add(p[0], ik_vec3_make(IK_REAL_MAX_REACH * (ik_real)0.2, 0, 0));
    p[2] = ik_vec3_add(p[1], ik_vec3_make(0, IK_REAL_MAX_REACH * (ik_real)0.2, 0));
    return expect(IK_E_RANGE, "positions", -1);
  case 20: *what = "unused pole NaN"; j->has_pole = 0; j->pole.z = nan; return expect(IK_OK, NULL, -1);
  case 21: *what = "tolerance 0"; j->tolerance = 0; return expect(IK_OK, NULL, -1);
  case 22: *what = "weight 0"; j->weight = 0; return expect(IK_OK, NULL, -1);
  case 23: *what = "weight 1"; j->weight = 1; return expect(IK_OK, NULL, -1);
  case 24: *what = "softness 0.99"; j->softness = 0.99; return expect(IK_OK, NULL, -1);
  default: *what = "untouched"; return expect(IK_OK, NULL, -1);
  }
  /* clang-format on */
}

static void make_valid_job(ik_two_bone_job *job, ik_vec3 *p) {
  t_straight_chain(p, 3, 1);
  p[2] = ik_vec3_make(1, 1, 0);
  ik_two_bone_job_init(job, p, ik_vec3_make(1, 1, 1));
}

static void test_validate_reports_code_field_and_index(void **state) {
  int which;
  (void)state;
  for (which = 0; which < SPOIL_COUNT; which++) {
    ik_vec3 p[3];
    ik_two_bone_job job;
    ik_error err = expect(IK_STATUS_COUNT, "unset", 99), want;
    const char *what;
    ik_status status;
    make_valid_job(&job, p);
    want = spoil(&job, which, &what);
    status = ik_two_bone_validate(&job, &err);
    if (status != want.status || err.status != want.status ||
        (want.status != IK_OK && (strcmp(err.field, want.field) != 0 || err.index != want.index))) {
      print_error("%s: got status %d field %s index %d, want %d %s %d\n", what, (int)status,
                  err.field ? err.field : "(null)", err.index, (int)want.status,
                  want.field ? want.field : "(null)", want.index);
      fail();
    }
    /* err is optional. */
    assert_int_equal(ik_two_bone_validate(&job, NULL), want.status);
  }
  assert_int_equal(ik_two_bone_validate(NULL, NULL), IK_E_NULL);
}

static void test_refused_run_leaves_positions_and_result_bit_identical(void **state) {
  int which, refused = 0;
  (void)state;
  for (which = 0; which < SPOIL_COUNT; which++) {
    ik_vec3 p[3], before[3];
    ik_two_bone_job job;
    ik_result result_before;
    const char *what;
    ik_error want;
    make_valid_job(&job, p);
    want = spoil(&job, which, &what);
    if (want.status == IK_OK) continue;
    refused++;
    copy3(before, p);
    job.result.reached = 7;
    job.result.iterations = 42;
    job.result.distance = -3;
    result_before = job.result;
    assert_int_equal(ik_two_bone_run(&job), want.status);
    assert_memory_equal(p, before, sizeof before);
    assert_memory_equal(&job.result, &result_before, sizeof result_before);
  }
  assert_int_equal(refused, 20);
  assert_int_equal(ik_two_bone_run(NULL), IK_E_NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_sets_defaults),
      cmocka_unit_test(test_reaches_every_reachable_target_exactly),
      cmocka_unit_test(test_keeps_bone_lengths_for_any_job),
      cmocka_unit_test(test_never_moves_the_start_joint),
      cmocka_unit_test(test_bends_mid_towards_the_pole),
      cmocka_unit_test(test_without_pole_mid_stays_on_its_side_in_the_current_plane),
      cmocka_unit_test(test_pole_on_the_start_target_line_is_ignored),
      cmocka_unit_test(test_pole_within_rounding_of_the_target_line_keeps_lengths),
      cmocka_unit_test(test_unreachable_target_lays_limb_straight_towards_it),
      cmocka_unit_test(test_target_exactly_at_full_reach_is_reached_straight),
      cmocka_unit_test(test_target_nearer_than_bone_difference_folds_limb),
      cmocka_unit_test(test_target_at_start_folds_limb_without_nan),
      cmocka_unit_test(test_straight_limb_aimed_at_target_bends_in_a_stable_plane),
      cmocka_unit_test(test_folded_limb_unfolds_to_reach_target),
      cmocka_unit_test(test_mid_on_target_line_keeps_the_limb_bending_the_same_way),
      cmocka_unit_test(test_soft_reach_follows_the_soft_curve),
      cmocka_unit_test(test_soft_reach_is_continuous_and_smooth_where_it_starts),
      cmocka_unit_test(test_weight_zero_leaves_positions_untouched),
      cmocka_unit_test(test_weight_half_turns_each_bone_halfway),
      cmocka_unit_test(test_validate_reports_code_field_and_index),
      cmocka_unit_test(test_refused_run_leaves_positions_and_result_bit_identical),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
