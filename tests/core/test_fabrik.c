/* FABRIK: the seed's behaviours, its pitfalls by name, and the job protocol, each in
 * both modes (the whole list runs twice); then what refined mode adds. Convergence
 * figures, plain against refined, are test_convergence.c's. */
#include <math.h>
#include <string.h>

#include "ik_two_bone.h"
#include "test_util.h"

#define MAXJ 128

typedef struct fixture {
  ik_vec3 p[MAXJ];
  ik_real len[MAXJ];
  ik_chain chain;
  ik_fabrik_job job;
} fixture;

/* A straight chain of `count` unit bones along +X, lengths given. */
static void straight(fixture *f, int count, ik_vec3 target) {
  t_straight_chain(f->p, count, 1);
  ik_measure_lengths(f->p, count, f->len);
  ik_chain_init(&f->chain, f->p, count, f->len);
  ik_fabrik_job_init(&f->job, &f->chain, target);
}

/* The mode the list runs in (set by its group's setup). */
static ik_fabrik_mode fabrik_mode = IK_FABRIK_PLAIN;

static ik_status solve(fixture *f) {
  f->job.mode = fabrik_mode;
  return ik_fabrik_run(&f->job);
}

static void assert_lengths_and_root(const fixture *f, ik_vec3 root) {
  assert_near(t_max_length_error(f->p, f->len, f->job.chain.count), 0, T_LEN_REL);
  assert_vec3_near(f->p[0], root, 0);
}

static void reaches_a_bent_target(void **state) {
  fixture f;
  (void)state;
  straight(&f, 5, ik_vec3_make(1, 2, 0.5));
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_true(f.job.result.iterations >= 1 && f.job.result.iterations <= 10);
  assert_near(f.job.result.distance, ik_vec3_dist(f.p[4], f.job.target), 0);
  assert_true(f.job.result.distance <= f.job.tolerance);
  assert_lengths_and_root(&f, ik_vec3_zero());
}

static void reached_is_exactly_distance_within_tolerance(void **state) {
  fixture f;
  t_rng r = t_rng_make(7);
  int k;
  (void)state;
  for (k = 0; k < 500; k++) {
    straight(&f, 6, ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0.1, 5.5)));
    f.job.max_iterations = t_int(&r, 1, 4); /* often not enough */
    assert_int_equal(solve(&f), IK_OK);
    assert_int_equal(f.job.result.reached, f.job.result.distance <= f.job.tolerance);
  }
}

static void already_there_takes_zero_iterations(void **state) {
  fixture f;
  (void)state;
  straight(&f, 4, ik_vec3_make(1, 1.5, 0));
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.iterations > 0);
  /* Second solve starts from the solution (warm start): nothing to do. */
  assert_int_equal(solve(&f), IK_OK);
  assert_int_equal(f.job.result.iterations, 0);
  assert_true(f.job.result.reached);
}

static void warm_start_needs_fewer_iterations_for_a_small_move(void **state) {
  fixture f;
  int cold;
  (void)state;
  straight(&f, 8, ik_vec3_make(2, 3, 1));
  f.job.tolerance = (ik_real)1e-4;
  f.job.max_iterations = 100;
  assert_int_equal(solve(&f), IK_OK);
  cold = f.job.result.iterations;
  f.job.target = ik_vec3_make((ik_real)2.01, 3, 1);
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_true(f.job.result.iterations < cold);
}

static void unreachable_target_lays_chain_straight(void **state) {
  fixture f;
  ik_vec3 dir = ik_vec3_normalize(ik_vec3_make(1, 2, -2));
  int i;
  (void)state;
  straight(&f, 4, ik_vec3_scale(dir, 10));
  assert_int_equal(solve(&f), IK_OK);
  assert_false(f.job.result.reached);
  assert_int_equal(f.job.result.iterations, 0);
  assert_near(f.job.result.distance, 7, T_EPS);
  for (i = 0; i < 4; i++) assert_vec3_near(f.p[i], ik_vec3_scale(dir, (ik_real)i), T_EPS);
}

static void target_exactly_at_full_reach_counts_as_reached(void **state) {
  fixture f;
  (void)state;
  straight(&f, 4, ik_vec3_make(0, 3, 0));
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_int_equal(f.job.result.iterations, 0);
  assert_vec3_near(f.p[3], ik_vec3_make(0, 3, 0), T_EPS);
}

static void straight_chain_with_target_straight_ahead(void **state) {
  fixture f;
  (void)state;
  straight(&f, 5, ik_vec3_make(2.5, 0, 0)); /* inside reach, on the chain's own line */
  assert_int_equal(solve(&f), IK_OK);
  assert_lengths_and_root(&f, ik_vec3_zero());
  /* On the line no pass could ever bend it: it must be bent off the line and reach. */
  assert_true(f.job.result.reached);
}

static void folded_chain_never_loses_a_bone(void **state) {
  fixture f;
  int i;
  (void)state;
  /* Bones doubled back on each other: joints 0 and 2 coincide, and 1 and 3. */
  for (i = 0; i < 5; i++) f.p[i] = ik_vec3_make((ik_real)(i % 2), 0, 0);
  for (i = 0; i < 4; i++) f.len[i] = 1;
  ik_chain_init(&f.chain, f.p, 5, f.len);
  ik_fabrik_job_init(&f.job, &f.chain, ik_vec3_make(0, 2.5, 0));
  assert_int_equal(solve(&f), IK_OK);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_true(f.job.result.reached);
}

static void all_joints_coincident_keep_their_lengths(void **state) {
  fixture f;
  int i;
  (void)state;
  for (i = 0; i < 6; i++) f.p[i] = ik_vec3_make(1, 1, 1);
  for (i = 0; i < 5; i++) f.len[i] = (ik_real)0.5 + (ik_real)i * (ik_real)0.1;
  ik_chain_init(&f.chain, f.p, 6, f.len);
  ik_fabrik_job_init(&f.job, &f.chain, ik_vec3_make(2, 2, 1));
  assert_int_equal(solve(&f), IK_OK);
  assert_lengths_and_root(&f, ik_vec3_make(1, 1, 1));
  assert_true(f.job.result.reached);
}

static void target_at_the_root(void **state) {
  fixture f;
  (void)state;
  straight(&f, 5, ik_vec3_zero());
  assert_int_equal(solve(&f), IK_OK);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_int_equal(f.job.result.reached, f.job.result.distance <= f.job.tolerance);
  assert_true(ik_vec3_is_finite(f.p[4]));
}

static void target_on_a_joint(void **state) {
  fixture f;
  (void)state;
  straight(&f, 5, ik_vec3_make(2, 0, 0)); /* joint 2 sits on the target */
  f.p[1] = ik_vec3_make(1, 0, 0);
  /* Bend it first so the target lands on a joint of a bent chain too. */
  f.p[3] = ik_vec3_make(2, 1, 0);
  f.p[4] = ik_vec3_make(2, 2, 0);
  assert_int_equal(solve(&f), IK_OK);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_true(f.job.result.reached);
}

static void derives_lengths_from_positions_when_asked(void **state) {
  fixture f;
  (void)state;
  t_straight_chain(f.p, 4, 2); /* bones of 2 */
  f.len[0] = f.len[1] = f.len[2] = 99;
  ik_chain_init(&f.chain, f.p, 4, f.len);
  f.chain.derive_lengths = 1;
  ik_fabrik_job_init(&f.job, &f.chain, ik_vec3_make(3, 3, 0));
  assert_int_equal(solve(&f), IK_OK);
  assert_near(f.len[0], 2, 0);
  assert_near(f.len[2], 2, 0);
  assert_lengths_and_root(&f, ik_vec3_zero());
}

static void iteration_cap_is_respected_and_reported(void **state) {
  fixture f;
  (void)state;
  /* Near full reach a long chain converges slowly: 20 bones need far more than 2. */
  straight(&f, 21, ik_vec3_make(10, 16, 0));
  f.job.tolerance = (ik_real)1e-6;
  f.job.max_iterations = 2;
  assert_int_equal(solve(&f), IK_OK);
  assert_int_equal(f.job.result.iterations, 2);
  assert_false(f.job.result.reached);
  assert_true(f.job.result.distance > (ik_real)1e-3);
}

static void pole_bends_the_middle_joint_towards_it(void **state) {
  fixture f;
  ik_vec3 side;
  (void)state;
  t_straight_chain(f.p, 3, 1);
  f.p[1] = ik_vec3_make((ik_real)0.7, (ik_real)0.7, 0); /* bent towards +Y */
  f.p[2] = ik_vec3_make((ik_real)1.4, 0, 0);
  f.len[0] = f.len[1] = 1;
  ik_chain_init(&f.chain, f.p, 3, f.len);
  f.chain.has_pole = 1;
  f.chain.pole = ik_vec3_make((ik_real)0.7, 0, -5); /* wants the bend towards -Z */
  ik_fabrik_job_init(&f.job, &f.chain, ik_vec3_make((ik_real)1.2, 0, 0));
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_lengths_and_root(&f, ik_vec3_zero());
  side = ik_vec3_sub(f.p[1], ik_vec3_make(f.p[1].x, 0, 0));
  assert_true(side.z < (ik_real)-0.5);
  assert_near(side.y, 0, 2 * f.job.tolerance);
}

/* The README's first chain: the pole's turns broke the cone on bone 1, and the
 * constraint pass that restored it moved the tip 0.25 off after 2 of 10 iterations. */
static void pole_and_cone_reach_within_the_budget(void **state) {
  fixture f;
  ik_constraint cons[3];
  (void)state;
  straight(&f, 4, ik_vec3_make((ik_real)1.5, (ik_real)1.5, 0));
  t_readme_pole_and_cone(&f.job.chain, cons);
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_true(f.job.result.iterations <= f.job.max_iterations);
  assert_lengths_and_root(&f, ik_vec3_zero());
  assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
  assert_true(f.p[1].y > 0 && f.p[2].y > 0); /* bent towards the pole's side */
}

/* A chain that reaches without its pole reaches with it: a pole is a preference, its
 * limits are not. The pole's turns broke the cone on bone 0 (about the base direction),
 * and the constraint pass that restored it took the tip off the target: of 20,000
 * random such chains, 1,771 ended short with iterations left (refined mode). */
static void a_pole_never_costs_a_constrained_chain_its_reach(void **state) {
  t_rng r = t_rng_make(1818);
  int k, reached = 0;
  (void)state;
  for (k = 0; k < t_cases(2000); k++) {
    fixture f;
    ik_constraint cons[3];
    const double d = t_uniform(&r, 1, 2.6), a = t_uniform(&r, -1, 1), b = t_uniform(&r, -1, 1);
    const ik_vec3 target =
        ik_vec3_make((ik_real)(d * cos(a) * cos(b)), (ik_real)(d * sin(a)), (ik_real)(d * cos(a) * sin(b)));
    int with_pole;
    memset(cons, 0, sizeof cons);
    cons[0].type = cons[1].type = cons[2].type = IK_CONSTRAINT_CONE;
    cons[0].angle = (ik_real)t_uniform(&r, 0.3, 1.3);
    cons[1].angle = (ik_real)t_uniform(&r, 0.2, 1.2);
    cons[2].angle = (ik_real)t_uniform(&r, 0.2, 1.2);
    for (with_pole = 0; with_pole < 2; with_pole++) {
      straight(&f, 4, target);
      f.job.chain.constraints = cons;
      f.job.chain.base_direction = ik_vec3_make(1, 0, 0);
      f.job.chain.has_pole = with_pole;
      f.job.chain.pole = ik_vec3_make((ik_real)t_uniform(&r, -2, 2), (ik_real)t_uniform(&r, -2, 2),
                                      (ik_real)t_uniform(&r, -2, 2));
      f.job.chain.pole_weight = 1;
      assert_int_equal(solve(&f), IK_OK);
      assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
      if (!with_pole && !f.job.result.reached) break;
      if (with_pole) {
        /* float: the pole's fit of the limits rounds at the tolerance's scale */
        assert_true(f.job.result.reached ||
                    (sizeof(ik_real) == sizeof(float) && f.job.result.distance < 10 * f.job.tolerance));
        reached++;
      }
    }
  }
  assert_true(reached > t_cases(2000) / 50);
}

static void constraints_hold_after_every_solve(void **state) {
  fixture f;
  ik_constraint cons[MAXJ];
  ik_vec3 rest[MAXJ];
  t_rng r = t_rng_make(11);
  int k, n = 8;
  (void)state;
  for (k = 0; k < 300; k++) {
    t_straight_chain(rest, n, 1);
    memcpy(f.p, rest, sizeof rest);
    ik_measure_lengths(f.p, n, f.len);
    t_random_constraints(&r, cons, n - 1);
    ik_chain_init(&f.chain, f.p, n, f.len);
    f.chain.constraints = cons;
    f.chain.rest_positions = rest;
    f.chain.base_direction = ik_vec3_make(1, 0, 0);
    ik_fabrik_job_init(&f.job, &f.chain, ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0.5, 9)));
    assert_int_equal(solve(&f), IK_OK);
    assert_lengths_and_root(&f, ik_vec3_zero());
    assert_near(ik_chain_constraint_violation(&f.chain, NULL), 0, T_CONSTRAINT_RAD);
    assert_int_equal(f.job.result.reached, f.job.result.distance <= f.job.tolerance);
  }
}

/* A knee hinged to bend one way, started bent that way but lying on the far side of the
 * line from the root to the target: the sweeps used to swing it over the line, where
 * the hinge held it straight, and it stopped 0.98 short after any budget (CCD and DLS
 * reach it). The pose after: on the target, the hinge kept. */
static void hinge_started_across_the_target_line_reaches(void **state) {
  fixture f;
  ik_constraint cons[2];
  ik_vec3 rest[3];
  (void)state;
  f.p[0] = rest[0] = ik_vec3_make(0, 2, 0);
  f.p[1] = rest[1] = ik_vec3_make(0, 1, (ik_real)0.1);
  f.p[2] = rest[2] = ik_vec3_zero();
  ik_measure_lengths(f.p, 3, f.len);
  memset(cons, 0, sizeof cons);
  cons[1].type = IK_CONSTRAINT_HINGE;
  cons[1].axis = ik_vec3_make(1, 0, 0);
  cons[1].min = 0;
  cons[1].max = (ik_real)(150 * IK_PI / 180);
  ik_chain_init(&f.chain, f.p, 3, f.len);
  f.chain.constraints = cons;
  f.chain.rest_positions = rest;
  ik_fabrik_job_init(&f.job, &f.chain, ik_vec3_make(0, (ik_real)0.5, (ik_real)0.5));
  f.job.max_iterations = 20;
  assert_int_equal(solve(&f), IK_OK);
  assert_true(f.job.result.reached);
  assert_lengths_and_root(&f, ik_vec3_make(0, 2, 0));
  assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
  assert_true(f.p[1].z > (ik_real)0.5); /* the knee on the side the hinge bends to */
}

static void constrained_chain_that_cannot_reach_says_so(void **state) {
  fixture f;
  ik_constraint cons[3];
  (void)state;
  /* Behind the root, and out of reach of every pose the cone allows: bone 0 ends within
   * 0.3 rad of +X, at least 2.46 from the target, and two bones reach 2. (At (-1, 0.5)
   * it is 1.97 from the farthest such end: reachable, and refined mode reaches it.) */
  straight(&f, 4, ik_vec3_make(-1.5, 0.5, 0));
  memset(cons, 0, sizeof cons);
  cons[0].type = IK_CONSTRAINT_CONE;
  cons[0].angle = (ik_real)0.3;
  f.job.chain.constraints = cons;
  f.job.chain.base_direction = ik_vec3_make(1, 0, 0);
  assert_int_equal(solve(&f), IK_OK);
  assert_false(f.job.result.reached);
  assert_true(f.job.result.distance > f.job.tolerance);
  assert_near(ik_chain_constraint_violation(&f.job.chain, NULL), 0, T_CONSTRAINT_RAD);
}

static void refused_job_changes_nothing(void **state) {
  fixture f;
  ik_vec3 before[5];
  ik_error err;
  (void)state;
  straight(&f, 5, ik_vec3_make(1, 1, 0));
  memcpy(before, f.p, sizeof before);
  f.job.tolerance = -1;
  assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_TOLERANCE);
  assert_string_equal(err.field, "tolerance");
  assert_int_equal(solve(&f), IK_E_TOLERANCE);
  assert_memory_equal(before, f.p, sizeof before);
  f.job.tolerance = (ik_real)1e-3;
  f.job.target.y = (ik_real)NAN;
  assert_int_equal(solve(&f), IK_E_NOT_FINITE);
  assert_memory_equal(before, f.p, sizeof before);
}

static void validation_names_the_field_and_index(void **state) {
  fixture f;
  ik_error err;
  (void)state;
  straight(&f, 5, ik_vec3_make(1, 1, 0));
  f.job.chain.count = 1;
  assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_COUNT);
  f.job.chain.count = 5;
  f.job.max_iterations = 0;
  assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_ITERATIONS);
  assert_string_equal(err.field, "max_iterations");
  f.job.max_iterations = 10;
  f.len[2] = 0;
  assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_BONE_LENGTH);
  assert_string_equal(err.field, "lengths");
  assert_int_equal(err.index, 2);
  f.len[2] = 1;
  f.p[3].z = (ik_real)INFINITY;
  assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_NOT_FINITE);
  assert_string_equal(err.field, "positions");
  assert_int_equal(err.index, 3);
  f.p[3].z = (ik_real)1e30 * (ik_real)1e30 * (ik_real)1e30 * (ik_real)1e30 * (ik_real)1e30;
  if (ik_real_is_finite(f.p[3].z)) assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_RANGE);
  f.p[3].z = 0;
  f.job.chain.positions = NULL;
  assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_NULL);
  assert_string_equal(err.field, "positions");
  f.job.chain.positions = f.p;
  assert_int_equal(ik_fabrik_validate(&f.job, NULL), IK_OK);
}

static void mode_is_validated(void **state) {
  fixture f;
  ik_vec3 before[5];
  ik_error err;
  (void)state;
  straight(&f, 5, ik_vec3_make(1, 1, 0));
  memcpy(before, f.p, sizeof before);
  assert_int_equal(f.job.mode, IK_FABRIK_REFINED); /* the default */
  f.job.mode = (ik_fabrik_mode)(IK_FABRIK_REFINED + 1);
  assert_int_equal(ik_fabrik_validate(&f.job, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "mode");
  assert_int_equal(err.index, -1);
  assert_int_equal(ik_fabrik_run(&f.job), IK_E_PARAMETER);
  assert_memory_equal(before, f.p, sizeof before);
  f.job.mode = (ik_fabrik_mode)-1;
  assert_int_equal(ik_fabrik_validate(&f.job, NULL), IK_E_PARAMETER);
  f.job.mode = IK_FABRIK_PLAIN;
  assert_int_equal(ik_fabrik_validate(&f.job, NULL), IK_OK);
}

/* Solves the same job in both modes; positions out in plain_p and refined_p. */
static void solve_both(int count, ik_vec3 target, int max_iterations, ik_vec3 *plain_p, ik_vec3 *refined_p,
                       ik_result *plain_r, ik_result *refined_r) {
  fixture f;
  straight(&f, count, target);
  f.job.max_iterations = max_iterations;
  f.job.tolerance = (ik_real)1e-4 * (ik_real)(count - 1);
  f.job.mode = IK_FABRIK_PLAIN;
  assert_int_equal(ik_fabrik_run(&f.job), IK_OK);
  memcpy(plain_p, f.p, sizeof(ik_vec3) * (size_t)count);
  *plain_r = f.job.result;
  straight(&f, count, target);
  f.job.max_iterations = max_iterations;
  f.job.tolerance = (ik_real)1e-4 * (ik_real)(count - 1);
  f.job.mode = IK_FABRIK_REFINED;
  assert_int_equal(ik_fabrik_run(&f.job), IK_OK);
  memcpy(refined_p, f.p, sizeof(ik_vec3) * (size_t)count);
  *refined_r = f.job.result;
}

/* Root at the origin, every bone 1 long (what straight() builds). */
static void assert_unit_bones(const ik_vec3 *p, int count) {
  ik_real ones[MAXJ];
  int i;
  for (i = 0; i + 1 < count; i++) ones[i] = 1;
  assert_near(t_max_length_error(p, ones, count), 0, T_LEN_REL);
  assert_vec3_near(p[0], ik_vec3_zero(), 0);
}

/* Half of a budget of 1 is no room for a polish step: refined is the plain sweep. */
static void refined_with_one_iteration_is_one_plain_sweep(void **state) {
  ik_vec3 plain_p[10], refined_p[10];
  ik_result plain_r, refined_r;
  (void)state;
  solve_both(10, ik_vec3_make(3, 4, 2), 1, plain_p, refined_p, &plain_r, &refined_r);
  assert_memory_equal(plain_p, refined_p, sizeof plain_p);
  assert_int_equal(refined_r.iterations, 1);
  assert_false(refined_r.reached);
}

/* A budget of 2 is one sweep and one polish step, and the step gets closer than a
 * second sweep does; both count. */
static void refined_with_two_iterations_sweeps_then_polishes(void **state) {
  ik_vec3 plain_p[10], refined_p[10];
  ik_result plain_r, refined_r;
  (void)state;
  solve_both(10, ik_vec3_make(3, 4, 2), 2, plain_p, refined_p, &plain_r, &refined_r);
  assert_int_equal(plain_r.iterations, 2);
  assert_int_equal(refined_r.iterations, 2);
  assert_true(refined_r.distance < (ik_real)0.5 * plain_r.distance);
  assert_unit_bones(refined_p, 10);
}

/* With room for it, the polish finishes what the sweeps leave: a 30-joint chain near
 * full reach, where plain sweeps crawl. */
static void refined_reaches_where_plain_crawls(void **state) {
  ik_vec3 plain_p[30], refined_p[30];
  ik_result plain_r, refined_r;
  (void)state;
  solve_both(30, ik_vec3_make(-10, 24, 5), 20, plain_p, refined_p, &plain_r, &refined_r);
  assert_false(plain_r.reached);
  assert_true(refined_r.reached);
  assert_true(refined_r.iterations < 20);
  assert_unit_bones(refined_p, 30);
}

/* A 3-joint chain's polish is one step to where its steps converge (the sweeps leave the
 * chain and target in one plane, the steps turn it in that plane): the tip lands on the
 * target to rounding, the bones keep their lengths, and the two-bone job, which puts
 * the mid joint by the law of cosines on its side of the root-target line, finds
 * nothing to move. Damped steps stop within the tolerance, short of that. */
static void three_joint_polish_lands_where_its_steps_converge(void **state) {
  t_rng r = t_rng_make(0x3a1f);
  const int cases = t_cases(400);
  int c, polished = 0;
  (void)state;
  for (c = 0; c < cases; c++) {
    ik_vec3 p[3], solved[3];
    ik_real len[2];
    ik_chain chain;
    ik_fabrik_job job;
    ik_two_bone_job check;
    ik_real total, fold, dist;
    t_random_chain(&r, p, len, 3, 0.3, 1.5, t_uniform(&r, 0.2, 2.5));
    total = len[0] + len[1];
    fold = ik_fabs(len[0] - len[1]);
    dist = (ik_real)t_uniform(&r, (double)fold + 0.05 * (double)total, 0.95 * (double)total);
    ik_chain_init(&chain, p, 3, len);
    ik_fabrik_job_init(&job, &chain, ik_vec3_scale(t_unit_vector(&r), dist));
    job.tolerance = (ik_real)1e-6 * total;
    job.max_iterations = 10;
    assert_int_equal(ik_fabrik_run(&job), IK_OK);
    assert_near(t_max_length_error(p, len, 3), 0, T_LEN_REL);
    if (!(job.result.distance <= 64 * IK_REAL_EPSILON * total)) continue;
    polished++;
    memcpy(solved, p, sizeof solved);
    ik_two_bone_job_init(&check, p, job.target);
    assert_int_equal(ik_two_bone_run(&check), IK_OK);
    assert_true(ik_vec3_dist(p[1], solved[1]) <= 64 * IK_REAL_EPSILON * total);
  }
  /* Over half of these polish (the others' sweeps get within the tolerance alone); damped
   * steps land none. */
  assert_true(polished * 3 >= cases);
}

static int in_plain_mode(void **state) {
  (void)state;
  fabrik_mode = IK_FABRIK_PLAIN;
  return 0;
}

static int in_refined_mode(void **state) {
  (void)state;
  fabrik_mode = IK_FABRIK_REFINED;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reaches_a_bent_target),
      cmocka_unit_test(reached_is_exactly_distance_within_tolerance),
      cmocka_unit_test(already_there_takes_zero_iterations),
      cmocka_unit_test(warm_start_needs_fewer_iterations_for_a_small_move),
      cmocka_unit_test(unreachable_target_lays_chain_straight),
      cmocka_unit_test(target_exactly_at_full_reach_counts_as_reached),
      cmocka_unit_test(straight_chain_with_target_straight_ahead),
      cmocka_unit_test(folded_chain_never_loses_a_bone),
      cmocka_unit_test(all_joints_coincident_keep_their_lengths),
      cmocka_unit_test(target_at_the_root),
      cmocka_unit_test(target_on_a_joint),
      cmocka_unit_test(derives_lengths_from_positions_when_asked),
      cmocka_unit_test(iteration_cap_is_respected_and_reported),
      cmocka_unit_test(pole_bends_the_middle_joint_towards_it),
      cmocka_unit_test(pole_and_cone_reach_within_the_budget),
      cmocka_unit_test(a_pole_never_costs_a_constrained_chain_its_reach),
      cmocka_unit_test(constraints_hold_after_every_solve),
      cmocka_unit_test(hinge_started_across_the_target_line_reaches),
      cmocka_unit_test(constrained_chain_that_cannot_reach_says_so),
      cmocka_unit_test(refused_job_changes_nothing),
      cmocka_unit_test(validation_names_the_field_and_index),
  };
  const struct CMUnitTest refined_tests[] = {
      cmocka_unit_test(mode_is_validated),
      cmocka_unit_test(refined_with_one_iteration_is_one_plain_sweep),
      cmocka_unit_test(refined_with_two_iterations_sweeps_then_polishes),
      cmocka_unit_test(refined_reaches_where_plain_crawls),
      cmocka_unit_test(three_joint_polish_lands_where_its_steps_converge),
  };
  int failed = cmocka_run_group_tests_name("plain", tests, in_plain_mode, NULL);
  failed += cmocka_run_group_tests_name("refined", tests, in_refined_mode, NULL);
  return failed + cmocka_run_group_tests_name("refined mode", refined_tests, NULL, NULL);
}
