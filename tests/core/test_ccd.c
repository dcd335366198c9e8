/* CCD: its guarantees on random chains, its convergence, its pitfalls by name and the
 * job protocol. */
#include <limits.h>
#include <string.h>

#include "test_util.h"

#define MAXJ 128

typedef struct fixture {
  ik_vec3 p[MAXJ];
  ik_real len[MAXJ];
  ik_chain chain;
  ik_ccd_job job;
} fixture;

/* A job over f's arrays as they are now. */
static void make_job(fixture *f, int count, ik_vec3 target) {
  ik_chain_init(&f->chain, f->p, count, f->len);
  ik_ccd_job_init(&f->job, &f->chain, target);
}

/* A straight chain of unit bones along +X. */
static void straight(fixture *f, int count, ik_vec3 target) {
  t_straight_chain(f->p, count, 1);
  ik_measure_lengths(f->p, count, f->len);
  make_job(f, count, target);
}

static ik_status solve(fixture *f) { return ik_ccd_run(&f->job); }

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
  for (k = 0; k < t_cases(300); k++) {
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

/* Fraction reached within 100 sweeps and mean sweeps, over 200 (100 for 100 joints)
 * reachable targets. Measured here, double and float alike: 3 joints 91% (mean 22
 * sweeps), 10 joints 89.5% (26), 100 joints 50% (66). CCD straightens a curled chain
 * slowly (about 1% of the distance per sweep when the target is far out) and closes on
 * a target near full reach slowly, hence these thresholds. */
static void converges_on_random_reachable_targets(void **state) {
  static const int counts[] = {3, 10, 100};
  static const double min_reached[] = {0.85, 0.85, 0.40};
  fixture f;
  t_rng r = t_rng_make(202);
  int c;
  (void)state;
  for (c = 0; c < 3; c++) {
    int trials = counts[c] == 100 ? 100 : 200, done = 0, reached = 0, sweeps = 0;
    while (done < trials) {
      if (!random_reachable(&r, &f, counts[c])) continue;
      f.job.max_iterations = 100;
      assert_int_equal(solve(&f), IK_OK);
      assert_result_honest(&f);
      reached += f.job.result.reached;
      sweeps += f.job.result.iterations;
      done++;
    }
    print_message("ccd %3d joints: %.1f%% reached in 100 sweeps, mean %.1f sweeps\n", counts[c],
                  100.0 * reached / trials, (double)sweeps / trials);
    assert_true((double)reached / trials >= min_reached[c]);
  }
}

static void reaches_a_bent_target_in_default_sweeps(void **state) {
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
  for (k = 0; k < t_cases(300); k++) {
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

/* A 4-joint chain whose every bone keeps within 0.3 rad of its parent, bone 0 of +X: the
 * tip can turn at most 0.9 rad from +X, and the target is behind the root. */
static void cone_held_chain(fixture *f, ik_constraint cons[3]) {
  int i;
  straight(f, 4, ik_vec3_make(-1, (ik_real)0.5, 0));
  memset(cons, 0, 3 * sizeof *cons);
  for (i = 0; i < 3; i++) {
    cons[i].type = IK_CONSTRAINT_CONE;
    cons[i].angle = (ik_real)0.3;
  }
  f->job.chain.constraints = cons;
  f->job.chain.base_direction = ik_vec3_make(1, 0, 0);
}

static void constrained_chain_that_cannot_reach_says_so(void **state) {
  fixture f;
  ik_constraint cons[3];
  (void)state;
  cone_held_chain(&f, cons);
  f.job.max_iterations = 50;
  assert_int_equal(solve(&f), IK_OK);
  assert_false(f.job.result.reached);
  assert_true(f.job.result.distance > f.job.tolerance);
  assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_result_honest(&f);
}

/* A solve held still by its limits, or by rounding under a tolerance of 0, stops once its
 * sweeps no longer change the tip's distance: a few sweeps, not the million allowed (which
 * took seconds a call; INT_MAX, minutes), and on its best pose. */
static void a_stalled_solve_stops_within_a_few_sweeps_on_its_best_pose(void **state) {
  fixture f;
  ik_constraint cons[3];
  ik_real held;
  (void)state;
  cone_held_chain(&f, cons);
  f.job.max_iterations = 1000000;
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.iterations < 100);
  assert_false(f.job.result.reached);
  assert_result_honest(&f);
  held = f.job.result.distance;
  /* Going on from there finds nothing nearer. */
  make_job(&f, 4, f.job.target);
  f.job.chain.constraints = cons;
  f.job.chain.base_direction = ik_vec3_make(1, 0, 0);
  f.job.max_iterations = 1000;
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.distance >= held * (1 - (ik_real)1e-6));

  straight(&f, 6, ik_vec3_make(2, 3, 1));
  f.job.tolerance = 0;
  f.job.max_iterations = INT_MAX;
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.iterations < 1000);
  assert_true(f.job.result.distance < 4096 * IK_REAL_EPSILON * 5); /* the stall floor: rounding */
  assert_result_honest(&f);
}

/* 4 unit bones along +X, bone 0 limited against +X and each other against its parent by
 * cons (4 of them, hinges about +Z when rest is given): target must be reached within
 * `iterations` sweeps, inside the limits. */
static void assert_reaches_within_limits(ik_vec3 target, const ik_constraint *cons, const ik_vec3 *rest,
                                         int iterations) {
  fixture f;
  straight(&f, 5, target);
  f.job.chain.constraints = cons;
  f.job.chain.rest_positions = rest;
  f.job.chain.base_direction = ik_vec3_make(1, 0, 0);
  f.job.max_iterations = iterations;
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
  assert_lengths_and_root(&f, ik_vec3_zero());
}

/* A finger: each bone hinged about +Z to curl one way only, 0 to 1.2 rad from its
 * parent. Each joint's turn is limited as the sweep makes it: when the sweep turned
 * joints freely and the constraint pass clamped them after, the clamps undid most of
 * each sweep, and none of these targets was reached in 30 sweeps (the nearest ended
 * 0.18 away). */
static void a_hinged_finger_curls_onto_targets_within_its_limits(void **state) {
  const ik_vec3 targets[3] = {{1.5, 2, 0}, {2, 2, 0}, {0, 1.5, 0}};
  ik_constraint cons[4];
  ik_vec3 rest[5];
  int t, i;
  (void)state;
  t_straight_chain(rest, 5, 1);
  memset(cons, 0, sizeof cons);
  for (i = 0; i < 4; i++) {
    cons[i].type = IK_CONSTRAINT_HINGE;
    cons[i].axis = ik_vec3_make(0, 0, 1);
    cons[i].max = (ik_real)1.2;
  }
  for (t = 0; t < 3; t++) assert_reaches_within_limits(targets[t], cons, rest, 10);
}

/* The same with cones of 0.7 rad: a turn that would leave its cone is turned on to the
 * cone's edge. Sliding along the edges is slow (62 and 92 sweeps here; DLS takes 5 and
 * 6), but the targets are reached, where the pass after each sweep left the tip 0.55
 * and 0.81 away for good. */
static void a_chain_of_cones_reaches_targets_within_its_limits(void **state) {
  const ik_vec3 targets[2] = {{2.5, 1.5, 1}, {3, 1, (ik_real)0.3}};
  ik_constraint cons[4];
  int t, i;
  (void)state;
  memset(cons, 0, sizeof cons);
  for (i = 0; i < 4; i++) {
    cons[i].type = IK_CONSTRAINT_CONE;
    cons[i].angle = (ik_real)0.7;
  }
  for (t = 0; t < 2; t++) assert_reaches_within_limits(targets[t], cons, NULL, 150);
}

/* ---- job protocol ---- */

static void init_sets_defaults_and_copies_the_chain(void **state) {
  fixture f;
  (void)state;
  memset(&f.job, 0xAB, sizeof f.job);
  straight(&f, 4, ik_vec3_make(1, 1, 0));
  assert_near(f.job.tolerance, (ik_real)1e-3, 0);
  assert_int_equal(f.job.max_iterations, 10);
  assert_int_equal(f.job.result.reached, 0);
  assert_int_equal(f.job.result.iterations, 0);
  assert_near(f.job.result.distance, 0, 0);
  f.chain.count = 99; /* the job holds its own copy */
  assert_int_equal(f.job.chain.count, 4);
  assert_int_equal(ik_ccd_validate(&f.job, NULL), IK_OK);
}

enum { BAD_POSITIONS, BAD_COUNT, BAD_TARGET, BAD_TOLERANCE, BAD_ITERATIONS, BAD_CASES };

static void refused_job_reports_the_field_and_changes_nothing(void **state) {
  static const ik_status expected[BAD_CASES] = {IK_E_NULL, IK_E_COUNT, IK_E_NOT_FINITE, IK_E_TOLERANCE,
                                                IK_E_ITERATIONS};
  static const char *const fields[BAD_CASES] = {"positions", "count", "target", "tolerance",
                                                "max_iterations"};
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
      default:
        f.job.max_iterations = 0;
        break;
    }
    memcpy(before, f.p, sizeof before);
    f.job.result.reached = 7;
    f.job.result.iterations = 7;
    f.job.result.distance = 7;
    result_before = f.job.result;
    assert_int_equal(ik_ccd_validate(&f.job, &err), expected[which]);
    assert_int_equal(err.status, expected[which]);
    assert_string_equal(err.field, fields[which]);
    assert_int_equal(solve(&f), expected[which]);
    assert_memory_equal(before, f.p, sizeof before);
    assert_memory_equal(&result_before, &f.job.result, sizeof result_before);
  }
}

/* test_fabrik's README chain under CCD, in its default 10 iterations: the pole's turns
 * broke the cone, and the constraint pass that restored it left the tip 0.44 off,
 * whatever the budget. */
static void pole_and_cone_reach_the_readme_target(void **state) {
  fixture f;
  ik_constraint cons[3];
  (void)state;
  straight(&f, 4, ik_vec3_make((ik_real)1.5, (ik_real)1.5, 0));
  t_readme_pole_and_cone(&f.job.chain, cons);
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_result_honest(&f);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_solves_keep_lengths_root_and_an_honest_result),
      cmocka_unit_test(pole_and_cone_reach_the_readme_target),
      cmocka_unit_test(converges_on_random_reachable_targets),
      cmocka_unit_test(reaches_a_bent_target_in_default_sweeps),
      cmocka_unit_test(unreachable_target_lays_chain_straight_towards_it),
      cmocka_unit_test(target_exactly_at_full_reach_counts_as_reached),
      cmocka_unit_test(tip_already_on_target_takes_zero_iterations_and_moves_nothing),
      cmocka_unit_test(iteration_cap_is_respected_and_reported),
      cmocka_unit_test(derives_lengths_from_positions_when_asked),
      cmocka_unit_test(constraints_hold_after_every_solve),
      cmocka_unit_test(constrained_chain_that_cannot_reach_says_so),
      cmocka_unit_test(a_stalled_solve_stops_within_a_few_sweeps_on_its_best_pose),
      cmocka_unit_test(a_hinged_finger_curls_onto_targets_within_its_limits),
      cmocka_unit_test(a_chain_of_cones_reaches_targets_within_its_limits),
      cmocka_unit_test(init_sets_defaults_and_copies_the_chain),
      cmocka_unit_test(refused_job_reports_the_field_and_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
