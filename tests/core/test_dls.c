/* DLS: its guarantees on random chains, its convergence and accuracy, its pitfalls by
 * name, the planar property and the job protocol. */
#include <string.h>

#include "ik_dls_step.h"
#include "test_util.h"

#define MAXJ 128

typedef struct fixture {
  ik_vec3 p[MAXJ];
  ik_real len[MAXJ];
  ik_chain chain;
  ik_dls_job job;
} fixture;

/* A job over f's arrays as they are now. */
static void make_job(fixture *f, int count, ik_vec3 target) {
  ik_chain_init(&f->chain, f->p, count, f->len);
  ik_dls_job_init(&f->job, &f->chain, target);
}

/* A straight chain of unit bones along +X. */
static void straight(fixture *f, int count, ik_vec3 target) {
  t_straight_chain(f->p, count, 1);
  ik_measure_lengths(f->p, count, f->len);
  make_job(f, count, target);
}

static ik_status solve(fixture *f) { return ik_dls_run(&f->job); }

static void assert_lengths_and_root(const fixture *f, ik_vec3 root) {
  assert_near(t_max_length_error(f->p, f->len, f->job.chain.count), 0, T_LEN_REL);
  assert_memory_equal(&f->p[0], &root, sizeof root);
}

/* The result describes the chain as it is: distance measured, reached exactly when it is
 * within tolerance. */
static void assert_result_honest(const fixture *f) {
  ik_real tip_dist = ik_vec3_dist(f->p[f->job.chain.count - 1], f->job.target);
  assert_near(f->job.result.distance, tip_dist, 0);
  assert_int_equal(f->job.result.reached, tip_dist <= f->job.tolerance);
}

/* A random chain (bones 0.1 .. 2, bends up to 1 rad) and a target it can reach: 0.1 ..
 * 0.95 of its length from the root, and no nearer than folding its longest bone back
 * allows (2 * longest - total). Returns 0 when no such target exists. */
static int random_reachable(t_rng *r, fixture *f, int count) {
  double total, longest = 0, near_len;
  int i;
  t_random_chain(r, f->p, f->len, count, 0.1, 2, 1.0);
  total = (double)ik_measure_lengths(f->p, count, NULL);
  for (i = 0; i + 1 < count; i++)
    if ((double)f->len[i] > longest) longest = (double)f->len[i];
  near_len = 2 * longest - total + 0.01 * total;
  if (near_len < 0.1 * total) near_len = 0.1 * total;
  if (near_len > 0.95 * total) return 0;
  make_job(f, count, ik_vec3_scale(t_unit_vector(r), (ik_real)t_uniform(r, near_len, 0.95 * total)));
  return 1;
}

static void random_solves_keep_lengths_root_and_an_honest_result(void **state) {
  fixture f;
  t_rng r = t_rng_make(101);
  int k;
  (void)state;
  for (k = 0; k < 300; k++) {
    int count = t_int(&r, 2, 100);
    ik_real total;
    t_random_chain(&r, f.p, f.len, count, 0.1, 2, 1.0);
    total = ik_measure_lengths(f.p, count, NULL);
    make_job(&f, count, ik_vec3_scale(t_unit_vector(&r), total * (ik_real)t_uniform(&r, 0.1, 0.95)));
    f.job.max_iterations = t_int(&r, 1, 30); /* often not enough: reached must say so */
    assert_int_equal(solve(&f), IK_OK);
    assert_lengths_and_root(&f, ik_vec3_zero());
    assert_result_honest(&f);
    assert_true(f.job.result.iterations >= 0 && f.job.result.iterations <= f.job.max_iterations);
  }
}

/* Fraction reached and mean iterations over 200 (100 for 100 joints) reachable targets,
 * within the default 10 iterations and within 100. Measured here, double and float
 * alike: 3 joints 87.5% / 100% (mean 7.5 iterations), 10 joints 98% / 100% (6.5),
 * 100 joints 70% / 100% (10.7). Most iterations go to crossing the distance from a
 * random start (a step moves the tip at most a quarter of the chain's length). */
static void converges_on_random_reachable_targets(void **state) {
  static const int counts[] = {3, 10, 100};
  static const double min_reached_10[] = {0.80, 0.90, 0.60};
  fixture f;
  ik_vec3 start[MAXJ];
  int c;
  (void)state;
  for (c = 0; c < 3; c++) {
    t_rng r = t_rng_make(202);
    const size_t size = sizeof(ik_vec3) * (size_t)counts[c];
    int trials = counts[c] == 100 ? 100 : 200, done = 0, reached_10 = 0, reached_100 = 0, steps = 0;
    while (done < trials) {
      if (!random_reachable(&r, &f, counts[c])) continue;
      memcpy(start, f.p, size);
      f.job.max_iterations = 100;
      assert_int_equal(solve(&f), IK_OK);
      assert_result_honest(&f);
      reached_100 += f.job.result.reached;
      steps += f.job.result.iterations;
      memcpy(f.p, start, size); /* the same start, the default cap */
      f.job.max_iterations = 10;
      assert_int_equal(solve(&f), IK_OK);
      assert_result_honest(&f);
      reached_10 += f.job.result.reached;
      done++;
    }
    print_message("dls %3d joints: %.1f%% reached in 10 iterations, %.1f%% in 100, mean %.1f\n", counts[c],
                  100.0 * reached_10 / trials, 100.0 * reached_100 / trials, (double)steps / trials);
    assert_true((double)reached_10 / trials >= min_reached_10[c]);
    assert_true(reached_100 == trials);
  }
}

/* The accuracy reference: a generic reachable target to a tolerance near the scalar's
 * precision in few iterations (the damped steps converge linearly, fast). */
static void converges_to_a_tight_tolerance(void **state) {
  fixture f;
  t_rng r = t_rng_make(606);
  int k = 0;
  (void)state;
  while (k < 100) {
    int count = t_int(&r, 3, 40);
    ik_real total;
    if (!random_reachable(&r, &f, count)) continue;
    total = ik_measure_lengths(f.p, count, NULL);
    f.job.tolerance = total * (ik_real)(T_EPS / 10);
    f.job.max_iterations = 40;
    assert_int_equal(solve(&f), IK_OK);
    assert_true(f.job.result.reached);
    assert_lengths_and_root(&f, ik_vec3_zero());
    k++;
  }
}

static void reaches_a_bent_target_in_default_iterations(void **state) {
  fixture f;
  (void)state;
  straight(&f, 5, ik_vec3_make(1, 2, (ik_real)0.5));
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_true(f.job.result.iterations >= 1 && f.job.result.iterations <= 10);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_result_honest(&f);
}

static void unreachable_target_lays_chain_straight_towards_it(void **state) {
  fixture f;
  t_rng r = t_rng_make(303);
  ik_vec3 dir = ik_vec3_normalize(ik_vec3_make(1, 2, -2));
  ik_real total, along = 0;
  int i;
  (void)state;
  t_random_chain(&r, f.p, f.len, 6, 0.5, 1.5, 1.0); /* bent: the solver must straighten it */
  total = ik_measure_lengths(f.p, 6, NULL);
  make_job(&f, 6, ik_vec3_scale(dir, total + 2));
  assert_int_equal(solve(&f), IK_OK);
  assert_false(f.job.result.reached);
  assert_int_equal(f.job.result.iterations, 0);
  assert_near(f.job.result.distance, 2, T_EPS * 10);
  for (i = 0; i < 6; i++) {
    assert_vec3_near(f.p[i], ik_vec3_scale(dir, along), T_EPS * 10);
    if (i < 5) along += f.len[i];
  }
}

static void target_exactly_at_full_reach_counts_as_reached(void **state) {
  fixture f;
  (void)state;
  straight(&f, 4, ik_vec3_make(0, 3, 0));
  f.p[2] = ik_vec3_make(1, 1, 0); /* bent, so there is something to do */
  f.p[3] = ik_vec3_make(2, 1, 0);
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_int_equal(f.job.result.iterations, 0);
  assert_vec3_near(f.p[3], ik_vec3_make(0, 3, 0), T_EPS);
  assert_lengths_and_root(&f, ik_vec3_zero());
}

static void tip_already_on_target_takes_zero_iterations_and_moves_nothing(void **state) {
  fixture f;
  ik_vec3 before[5];
  (void)state;
  straight(&f, 5, ik_vec3_make(1, 2, 1));
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_true(f.job.result.iterations > 0);
  memcpy(before, f.p, sizeof before);
  /* Second solve starts from the solution (warm start): nothing to do. */
  assert_int_equal(solve(&f), IK_OK);
  assert_int_equal(f.job.result.iterations, 0);
  assert_true(f.job.result.reached);
  assert_memory_equal(before, f.p, sizeof before);
}

static void iteration_cap_is_respected_and_reported(void **state) {
  fixture f;
  (void)state;
  straight(&f, 30, ik_vec3_make(3, 5, 2));
  f.job.tolerance = 0;
  f.job.max_iterations = 3;
  assert_int_equal(solve(&f), IK_OK);
  assert_int_equal(f.job.result.iterations, 3);
  assert_false(f.job.result.reached);
  assert_result_honest(&f);
}

static void derives_lengths_from_positions_when_asked(void **state) {
  fixture f;
  (void)state;
  t_straight_chain(f.p, 4, 2); /* bones of 2 */
  f.len[0] = f.len[1] = f.len[2] = 99;
  make_job(&f, 4, ik_vec3_make(3, 3, 0));
  f.job.chain.derive_lengths = 1;
  assert_int_equal(solve(&f), IK_OK);
  assert_near(f.len[0], 2, 0);
  assert_near(f.len[2], 2, 0);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_true(f.job.result.reached);
}

/* ---- constraints ---- */

static void constraints_hold_after_every_solve(void **state) {
  fixture f;
  ik_constraint cons[MAXJ];
  ik_vec3 rest[MAXJ];
  t_rng r = t_rng_make(404);
  const int n = 8;
  int k;
  (void)state;
  t_straight_chain(rest, n, 1);
  for (k = 0; k < 300; k++) {
    if (k % 10 == 0) memcpy(f.p, rest, sizeof(ik_vec3) * n); /* else warm start */
    ik_measure_lengths(rest, n, f.len);
    t_random_constraints(&r, cons, n - 1);
    make_job(&f, n, ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0.5, 9)));
    f.job.chain.constraints = cons;
    f.job.chain.rest_positions = rest;
    f.job.chain.base_direction = ik_vec3_make(1, 0, 0);
    f.job.max_iterations = t_int(&r, 1, 20);
    assert_int_equal(solve(&f), IK_OK);
    assert_lengths_and_root(&f, ik_vec3_zero());
    assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
    assert_result_honest(&f);
  }
}

static void constrained_chain_that_cannot_reach_says_so(void **state) {
  fixture f;
  ik_constraint cons[3];
  int i;
  (void)state;
  /* Every bone within 0.3 rad of its parent, bone 0 of +X: the tip can turn at most
   * 0.9 rad from +X, and the target is behind the root. */
  straight(&f, 4, ik_vec3_make(-1, (ik_real)0.5, 0));
  memset(cons, 0, sizeof cons);
  for (i = 0; i < 3; i++) {
    cons[i].type = IK_CONSTRAINT_CONE;
    cons[i].angle = (ik_real)0.3;
  }
  f.job.chain.constraints = cons;
  f.job.chain.base_direction = ik_vec3_make(1, 0, 0);
  f.job.max_iterations = 50;
  assert_int_equal(solve(&f), IK_OK);
  assert_false(f.job.result.reached);
  assert_true(f.job.result.distance > f.job.tolerance);
  assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_result_honest(&f);
}

static void extreme_damping_never_breaks_the_chain(void **state) {
  static const double dampings[] = {1e-12, 1e-3, 10, 1e6};
  fixture f;
  t_rng r = t_rng_make(707);
  int d, k, i;
  (void)state;
  for (d = 0; d < 4; d++) {
    for (k = 0; k < 50; k++) {
      int count = t_int(&r, 2, 30);
      ik_real total;
      t_random_chain(&r, f.p, f.len, count, 0.1, 2, 1.0);
      total = ik_measure_lengths(f.p, count, NULL);
      make_job(&f, count, ik_vec3_scale(t_unit_vector(&r), total * (ik_real)t_uniform(&r, 0, 0.99)));
      f.job.damping = (ik_real)dampings[d];
      f.job.max_iterations = 20;
      assert_int_equal(solve(&f), IK_OK);
      for (i = 0; i < count; i++) assert_true(ik_vec3_is_finite(f.p[i]));
      assert_lengths_and_root(&f, ik_vec3_zero());
      assert_result_honest(&f);
    }
  }
}

static void heavier_damping_moves_the_tip_less_per_step(void **state) {
  fixture f;
  ik_real moved[2];
  int d;
  (void)state;
  for (d = 0; d < 2; d++) {
    straight(&f, 4, ik_vec3_make(1, 2, 0));
    f.job.damping = d == 0 ? (ik_real)0.05 : (ik_real)3;
    f.job.max_iterations = 1;
    assert_int_equal(solve(&f), IK_OK);
    moved[d] = ik_vec3_dist(f.p[3], ik_vec3_make(3, 0, 0));
  }
  assert_true(moved[1] > 0);
  assert_true(moved[1] < moved[0] / 2);
}

/* ---- job protocol ---- */

static void init_sets_defaults_and_copies_the_chain(void **state) {
  fixture f;
  (void)state;
  memset(&f.job, 0xAB, sizeof f.job);
  straight(&f, 4, ik_vec3_make(1, 1, 0));
  assert_near(f.job.tolerance, (ik_real)1e-3, 0);
  assert_int_equal(f.job.max_iterations, 10);
  assert_near(f.job.damping, (ik_real)0.05, 0);
  assert_int_equal(f.job.result.reached, 0);
  assert_int_equal(f.job.result.iterations, 0);
  assert_near(f.job.result.distance, 0, 0);
  f.chain.count = 99; /* the job holds its own copy */
  assert_int_equal(f.job.chain.count, 4);
  assert_int_equal(ik_dls_validate(&f.job, NULL), IK_OK);
}

enum {
  BAD_POSITIONS,
  BAD_COUNT,
  BAD_TARGET,
  BAD_TOLERANCE,
  BAD_ITERATIONS,
  BAD_DAMPING_ZERO,
  BAD_DAMPING_NEGATIVE,
  BAD_DAMPING_NAN,
  BAD_DAMPING_INFINITE,
  BAD_CASES
};

static void refused_job_reports_the_field_and_changes_nothing(void **state) {
  static const ik_status expected[BAD_CASES] = {IK_E_NULL,      IK_E_COUNT,      IK_E_NOT_FINITE,
                                                IK_E_TOLERANCE, IK_E_ITERATIONS, IK_E_PARAMETER,
                                                IK_E_PARAMETER, IK_E_NOT_FINITE, IK_E_NOT_FINITE};
  static const char *const fields[BAD_CASES] = {"positions", "count",          "target",
                                                "tolerance", "max_iterations", "damping",
                                                "damping",   "damping",        "damping"};
  int which;
  (void)state;
  for (which = 0; which < BAD_CASES; which++) {
    fixture f;
    ik_vec3 before[5];
    ik_result result_before;
    ik_error err;
    straight(&f, 5, ik_vec3_make(1, 1, 0));
    f.p[2].y = (ik_real)0.5; /* not straight, so that a solve would move something */
    switch (which) {
      case BAD_POSITIONS:
        f.job.chain.positions = NULL;
        break;
      case BAD_COUNT:
        f.job.chain.count = 1;
        break;
      case BAD_TARGET:
        f.job.target.y = (ik_real)NAN;
        break;
      case BAD_TOLERANCE:
        f.job.tolerance = -1;
        break;
      case BAD_ITERATIONS:
        f.job.max_iterations = 0;
        break;
      case BAD_DAMPING_ZERO:
        f.job.damping = 0;
        break;
      case BAD_DAMPING_NEGATIVE:
        f.job.damping = (ik_real)-0.05;
        break;
      case BAD_DAMPING_NAN:
        f.job.damping = (ik_real)NAN;
        break;
      default:
        f.job.damping = (ik_real)INFINITY;
        break;
    }
    memcpy(before, f.p, sizeof before);
    f.job.result.reached = 7;
    f.job.result.iterations = 7;
    f.job.result.distance = 7;
    result_before = f.job.result;
    assert_int_equal(ik_dls_validate(&f.job, &err), expected[which]);
    assert_int_equal(err.status, expected[which]);
    assert_string_equal(err.field, fields[which]);
    assert_int_equal(solve(&f), expected[which]);
    assert_memory_equal(before, f.p, sizeof before);
    assert_memory_equal(&result_before, &f.job.result, sizeof result_before);
  }
}

/* A step's turn of a joint: a bone of length 1 along +X, turned about +Z by theta
 * (dtheta = r x y with y = (0, theta, 0)). Up to 1 rad the series stands in for sine
 * and cosine, within 0.21% of the angle; beyond, the turn is exact. */
static void a_step_turns_a_joint_by_its_angle(void **state) {
  static const double thetas[] = {0.01, 0.3, 1.0, 1.01, 2.0, 3.0};
  int k;
  (void)state;
  for (k = 0; k < (int)(sizeof thetas / sizeof thetas[0]); k++) {
    const ik_real theta = (ik_real)thetas[k];
    ik_vec3 p[2] = {{0, 0, 0}, {1, 0, 0}};
    ik_real len[1] = {1};
    ik_chain chain;
    ik_real turned;
    ik_chain_init(&chain, p, 2, len);
    ik__dls_apply_step(&chain, ik_vec3_make(0, theta, 0), ik_vec3_make(1, 0, 0), ik_vec3_zero());
    turned = ik_atan2(p[1].y, p[1].x);
    assert_near(ik_vec3_len(p[1]), 1, T_LEN_REL);
    if (theta <= 1)
      assert_near(turned, theta, 0.0021 * thetas[k]);
    else
      assert_near(turned, theta, 64 * IK_REAL_EPSILON);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_solves_keep_lengths_root_and_an_honest_result),
      cmocka_unit_test(a_step_turns_a_joint_by_its_angle),
      cmocka_unit_test(converges_on_random_reachable_targets),
      cmocka_unit_test(converges_to_a_tight_tolerance),
      cmocka_unit_test(reaches_a_bent_target_in_default_iterations),
      cmocka_unit_test(unreachable_target_lays_chain_straight_towards_it),
      cmocka_unit_test(target_exactly_at_full_reach_counts_as_reached),
      cmocka_unit_test(tip_already_on_target_takes_zero_iterations_and_moves_nothing),
      cmocka_unit_test(iteration_cap_is_respected_and_reported),
      cmocka_unit_test(derives_lengths_from_positions_when_asked),
      cmocka_unit_test(constraints_hold_after_every_solve),
      cmocka_unit_test(constrained_chain_that_cannot_reach_says_so),
      cmocka_unit_test(extreme_damping_never_breaks_the_chain),
      cmocka_unit_test(heavier_damping_moves_the_tip_less_per_step),
      cmocka_unit_test(init_sets_defaults_and_copies_the_chain),
      cmocka_unit_test(refused_job_reports_the_field_and_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
