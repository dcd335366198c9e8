/*
 * FABRIK's convergence, plain against refined (ik_fabrik.h's mode), on the issue's
 * workload: unit bones laid straight along +X, targets at random directions and 0.1 to
 * 0.95 of the chain's length from the root, tolerance 1e-4 x length, at most 20
 * iterations, cold start. The figures hold in float builds too, with the same samples
 * and tolerance: 1e-4 x length is some 800 float epsilons of the length, and the polish
 * converges about quadratically, so rounding never decides whether a target is reached.
 *
 * Plain mode is pinned bit for bit by digests of its poses computed before refined mode
 * existed: refined mode lives in the stages around the sweeps, and must not leak.
 */
#include <math.h>
#include <string.h>

#include "ik_fabrik_stages.h"
#include "test_util.h"

#define MAXJ 128
#define BUDGET 20
#define TOLERANCE_FRACTION 1e-4

typedef struct pose_stats {
  int reached, iterations;
  double distance;
  double bend_spread; /* standard deviation of the bend angles at the inner joints */
  double bend_max;    /* the largest of them */
  double bend_mean;
  double bend_root; /* the bend at joint 1, next to the root */
  double roughness; /* mean change of bend from a joint to the next: a zig-zag's mark */
} pose_stats;

/* Bend angle at inner joint i: between bone i - 1 and bone i. */
static double bend_at(const ik_vec3 *p, int i) {
  ik_vec3 a = ik_vec3_sub(p[i], p[i - 1]), b = ik_vec3_sub(p[i + 1], p[i]);
  double c = (double)ik_vec3_dot(a, b) / ((double)ik_vec3_len(a) * (double)ik_vec3_len(b));
  return acos(c > 1 ? 1 : c < -1 ? -1 : c);
}

static void measure_bends(const ik_vec3 *p, int count, pose_stats *st) {
  double sum = 0, sum2 = 0, change = 0, prev = 0, var;
  int i, inner = count - 2;
  st->bend_max = st->bend_spread = st->bend_mean = st->bend_root = st->roughness = 0;
  if (inner < 1) return;
  for (i = 1; i + 1 < count; i++) {
    double b = bend_at(p, i);
    sum += b;
    sum2 += b * b;
    if (i > 1) change += fabs(b - prev);
    prev = b;
    if (b > st->bend_max) st->bend_max = b;
  }
  st->bend_mean = sum / inner;
  var = sum2 / inner - st->bend_mean * st->bend_mean;
  st->bend_spread = sqrt(var > 0 ? var : 0);
  st->bend_root = bend_at(p, 1);
  if (inner > 1) st->roughness = change / (inner - 1);
}

/* A target of the issue's workload for a chain of `joints` unit bones. */
static ik_vec3 issue_target(t_rng *r, int joints) {
  ik_real length = (ik_real)(joints - 1);
  return ik_vec3_scale(t_unit_vector(r), length * (ik_real)t_uniform(r, 0.1, 0.95));
}

/* Solves from the straight pose, in p; checks what every solve must keep. */
static pose_stats solve_issue(ik_vec3 *p, int joints, ik_vec3 target, ik_fabrik_mode mode, int budget) {
  ik_real len[MAXJ];
  ik_chain chain;
  ik_fabrik_job job;
  pose_stats st;
  t_straight_chain(p, joints, 1);
  ik_measure_lengths(p, joints, len);
  ik_chain_init(&chain, p, joints, len);
  ik_fabrik_job_init(&job, &chain, target);
  job.mode = mode;
  job.tolerance = (ik_real)TOLERANCE_FRACTION * (ik_real)(joints - 1);
  job.max_iterations = budget;
  assert_int_equal(ik_fabrik_run(&job), IK_OK);
  assert_near(t_max_length_error(p, len, joints), 0, T_LEN_REL);
  assert_true(p[0].x == 0 && p[0].y == 0 && p[0].z == 0);
  assert_true(job.result.iterations >= 1 && job.result.iterations <= budget);
  /* The budget is shared: a solve that stops short of it has reached the target. */
  if (!job.result.reached) assert_int_equal(job.result.iterations, budget);
  st.reached = job.result.reached;
  st.iterations = job.result.iterations;
  st.distance = (double)job.result.distance;
  measure_bends(p, joints, &st);
  return st;
}

typedef struct comparison {
  int samples, reached[2];
  long iterations[2];
  double spread[2], max_bend[2], mean_bend[2], root_bend[2], roughness[2], distance[2];
  int farther;     /* samples where refined ends farther than plain, unreached */
  double farthest; /* by how much, at worst */
} comparison;

static comparison compare_modes(int joints, int samples, int budget, uint64_t seed) {
  comparison c;
  t_rng r = t_rng_make(seed);
  ik_vec3 p[MAXJ];
  int k, m;
  memset(&c, 0, sizeof c);
  c.samples = samples;
  for (k = 0; k < samples; k++) {
    ik_vec3 target = issue_target(&r, joints);
    pose_stats st[2];
    for (m = 0; m < 2; m++) {
      st[m] = solve_issue(p, joints, target, m ? IK_FABRIK_REFINED : IK_FABRIK_PLAIN, budget);
      c.reached[m] += st[m].reached;
      c.iterations[m] += st[m].iterations;
      c.spread[m] += st[m].bend_spread / samples;
      c.max_bend[m] += st[m].bend_max / samples;
      c.mean_bend[m] += st[m].bend_mean / samples;
      c.root_bend[m] += st[m].bend_root / samples;
      c.roughness[m] += st[m].roughness / samples;
      c.distance[m] += st[m].distance / samples;
    }
    /* Both within tolerance is a tie, wherever in it each tip stopped. */
    if (!st[1].reached && st[1].distance > st[0].distance + 64 * (double)IK_REAL_EPSILON * joints) {
      c.farther++;
      if (st[1].distance - st[0].distance > c.farthest) c.farthest = st[1].distance - st[0].distance;
    }
  }
  return c;
}

static void assert_fraction_at_least(int count, int samples, double fraction) {
  if (!((double)count >= fraction * samples)) {
    print_error("%d of %d reached, expected at least %.1f%%\n", count, samples, 100 * fraction);
    fail();
  }
}

/* The issue's bar: >= 99% at 10 joints, >= 90% at 100, within 20 iterations; plain
 * misses it on the same samples (so the workload is the hard one it names), and
 * refined gets there in fewer iterations on average, not by spending more. */
static void refined_meets_the_bar_plain_does_not(void **state) {
  comparison c10 = compare_modes(10, 1000, BUDGET, 10), c100 = compare_modes(100, 300, BUDGET, 100);
  comparison c3 = compare_modes(3, 1000, BUDGET, 3);
  (void)state;
  assert_fraction_at_least(c10.reached[1], c10.samples, 0.99);
  assert_fraction_at_least(c100.reached[1], c100.samples, 0.90);
  assert_fraction_at_least(c3.reached[1], c3.samples, 0.99);
  assert_true(c10.reached[0] < 0.99 * c10.samples);
  assert_true(c100.reached[0] < 0.90 * c100.samples);
  assert_true(c3.reached[0] < 0.99 * c3.samples);
  assert_true(c10.distance[1] < c10.distance[0] && c100.distance[1] < c100.distance[0]);
  assert_true(c3.iterations[1] < c3.iterations[0] && c10.iterations[1] < c10.iterations[0] &&
              c100.iterations[1] < c100.iterations[0]);
}

/* Refined never ends farther than plain unless within tolerance, with budgets that
 * leave the polish room. With 2 or 3 iterations it cannot be promised sample by sample:
 * one polish step replaces a sweep, and on some targets (a 3-joint chain near its fold
 * above all) that sweep would have got closer than the step does. There refined is
 * closer on average, and reaches more targets. (Unreachable targets: see below.) */
static void refined_never_ends_farther_than_plain(void **state) {
  const int sizes[3] = {3, 10, 100}, budgets[3] = {5, 10, 20};
  int i, b;
  (void)state;
  for (i = 0; i < 3; i++) {
    for (b = 0; b < 3; b++) {
      comparison c = compare_modes(sizes[i], sizes[i] == 100 ? 100 : 300, budgets[b], 40 + (uint64_t)i);
      if (c.farther) {
        print_error("%d joints, %d iterations: refined farther on %d samples, by up to %g\n", sizes[i],
                    budgets[b], c.farther, c.farthest);
        fail();
      }
    }
    for (b = 2; b <= 3; b++) {
      comparison c = compare_modes(sizes[i], 300, b, 50 + (uint64_t)i);
      assert_true(c.distance[1] < c.distance[0]);
      assert_true(c.reached[1] >= c.reached[0]);
    }
  }
}

/* A target nearer the root than the chain can fold (its longest bone folded back over
 * the others) cannot be reached; refined mode leaves it to the sweeps: bit for bit
 * plain's pose, from random starts. */
static void targets_inside_the_fold_are_left_to_the_sweeps(void **state) {
  ik_real len[4] = {3, 1, (ik_real)0.6, (ik_real)0.4}; /* folds to within 1 of the root */
  t_rng r = t_rng_make(90);
  int k, m, i;
  (void)state;
  for (k = 0; k < 200; k++) {
    ik_vec3 start[5], p[2][5];
    ik_result result[2];
    ik_vec3 target = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0, 0.99));
    start[0] = ik_vec3_zero();
    for (i = 1; i < 5; i++) start[i] = ik_vec3_madd(start[i - 1], t_unit_vector(&r), len[i - 1]);
    for (m = 0; m < 2; m++) {
      ik_chain chain;
      ik_fabrik_job job;
      memcpy(p[m], start, sizeof start);
      ik_chain_init(&chain, p[m], 5, len);
      ik_fabrik_job_init(&job, &chain, target);
      job.mode = m ? IK_FABRIK_REFINED : IK_FABRIK_PLAIN;
      job.tolerance = (ik_real)1e-4;
      job.max_iterations = BUDGET;
      assert_int_equal(ik_fabrik_run(&job), IK_OK);
      result[m] = job.result;
    }
    assert_false(result[1].reached);
    assert_int_equal(result[1].iterations, result[0].iterations);
    assert_memory_equal(p[1], p[0], sizeof p[0]);
  }
}

/* Naturalness: the polish is a damped minimal-norm correction of a pose FABRIK made,
 * so the bends stay FABRIK's. On average over the samples: the spread of bend angles
 * along the chain, the largest bend, and the change of bend from one joint to the next
 * (large where a chain zig-zags) within 3% of plain's (measured: within 1%). Next to
 * the root, where FABRIK leaves a long chain almost straight, the polish turns every
 * joint a little (at 100 joints it bends joint 1 by 0.006 rad on average where plain
 * bends it by 0.001, the chain's mean bend being 0.026): the bend it adds there stays
 * under a quarter of the chain's mean bend. */
static void refined_poses_bend_like_plain(void **state) {
  const int sizes[2] = {10, 100};
  int i;
  (void)state;
  for (i = 0; i < 2; i++) {
    comparison c = compare_modes(sizes[i], 300, BUDGET, 60 + (uint64_t)i);
    assert_near(c.spread[1], c.spread[0], 0.03 * c.spread[0]);
    assert_near(c.max_bend[1], c.max_bend[0], 0.03 * c.max_bend[0]);
    assert_near(c.roughness[1], c.roughness[0], 0.03 * c.roughness[0]);
    assert_true(c.root_bend[1] < c.root_bend[0] + 0.25 * c.mean_bend[0]);
  }
}

/* FNV-1a over bytes. */
static uint64_t digest_bytes(uint64_t h, const void *data, size_t size) {
  const unsigned char *b = (const unsigned char *)data;
  size_t i;
  for (i = 0; i < size; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static ik_real sum_lengths(const ik_real *len, int joints) {
  ik_real total = 0;
  int i;
  for (i = 0; i + 1 < joints; i++) total += len[i];
  return total;
}

/* Plain FABRIK over `samples` seeded cases of `joints` joints: the digest of every
 * final position and result. Straight and random bent starts, targets inside and out
 * of reach, budgets of 1 to 25. No constraints and no pole: their passes are shared
 * with the other solvers and change with them; this pins FABRIK's own stages. */
static uint64_t plain_digest(int joints, int samples, uint64_t seed) {
  ik_vec3 p[MAXJ];
  ik_real len[MAXJ];
  t_rng r = t_rng_make(seed);
  uint64_t h = 0xcbf29ce484222325ull;
  int k;
  for (k = 0; k < samples; k++) {
    ik_chain chain;
    ik_fabrik_job job;
    ik_real total;
    if (k % 2 == 0) {
      t_straight_chain(p, joints, 1);
      total = ik_measure_lengths(p, joints, len);
    } else {
      t_random_chain(&r, p, len, joints, 0.5, 1.5, 0.6);
      total = sum_lengths(len, joints);
    }
    ik_chain_init(&chain, p, joints, len);
    ik_fabrik_job_init(&job, &chain,
                       ik_vec3_scale(t_unit_vector(&r), total * (ik_real)t_uniform(&r, 0.05, 1.1)));
    job.mode = IK_FABRIK_PLAIN;
    job.tolerance = (ik_real)1e-4 * total;
    job.max_iterations = t_int(&r, 1, 25);
    assert_int_equal(ik_fabrik_run(&job), IK_OK);
    h = digest_bytes(h, p, sizeof(ik_vec3) * (size_t)joints);
    h = digest_bytes(h, &job.result.iterations, sizeof job.result.iterations);
    h = digest_bytes(h, &job.result.reached, sizeof job.result.reached);
  }
  return h;
}

/* Computed with the algorithm as it was before refined mode (x86-64, SSE2, no FMA
 * contraction: C99 mode; -O0 and -O2 agree). */
static void plain_mode_is_bit_identical_to_before(void **state) {
#ifdef IK_REAL_FLOAT
  const uint64_t golden[4] = {0x2725b2f714773f6bull, 0x2e08f2865196f43dull, 0xde780293c26466f0ull,
                              0xade11426e1ce4e3full};
#else
  const uint64_t golden[4] = {0x1918a8450d4fe8f7ull, 0x7e0161f1e3ddb4cbull, 0xbf90140abded3aedull,
                              0x51e0b2ef4a1aa5b0ull};
#endif
  (void)state;
  assert_int_equal(plain_digest(3, 200, 1), golden[0]);
  assert_int_equal(plain_digest(10, 200, 2), golden[1]);
  assert_int_equal(plain_digest(100, 50, 3), golden[2]);
  assert_int_equal(plain_digest(30, 200, 4), golden[3]);
}

/* The stages the batch shares: the reported count is every sweep plus every polish
 * step, and a polish ran after sweeps that stopped short (the 100-joint chain's slow
 * sweeps hand over early). */
static void iterations_count_sweeps_and_polish_steps(void **state) {
  ik_vec3 p[MAXJ];
  ik_real len[MAXJ];
  ik_chain chain;
  ik_fabrik_job job;
  ik__fabrik_state s;
  t_rng r = t_rng_make(70);
  int k, polished = 0;
  (void)state;
  for (k = 0; k < 50; k++) {
    int sweeps = 0;
    t_straight_chain(p, 100, 1);
    ik_measure_lengths(p, 100, len);
    ik_chain_init(&chain, p, 100, len);
    ik_fabrik_job_init(&job, &chain, issue_target(&r, 100));
    assert_int_equal(job.mode, IK_FABRIK_REFINED);
    job.tolerance = (ik_real)(TOLERANCE_FRACTION * 99);
    job.max_iterations = BUDGET;
    assert_int_equal(ik_fabrik_validate(&job, NULL), IK_OK);
    assert_int_equal(ik__fabrik_begin(&job, &s), 1);
    do {
      ik__fabrik_sweep(&job, &s);
      sweeps++;
    } while (ik__fabrik_next(&job, &s, p[99]));
    assert_int_equal(s.iterations, sweeps);
    ik__fabrik_end(&job, &s, NULL);
    assert_true(job.result.iterations >= sweeps && job.result.iterations <= BUDGET);
    if (job.result.iterations > sweeps) polished++;
    /* A polish only follows sweeps that stopped short of the target. */
    if (job.result.iterations == sweeps)
      assert_true(sweeps == BUDGET || ik_vec3_dist(p[99], job.target) <= job.tolerance);
  }
  assert_true(polished > 25);
}

/* Constraints hold after the polish (the constraint pass follows each step), and
 * refined reaches every target plain reaches, and more. Where neither reaches (the
 * constraints put the target out of reach), "never farther than plain" is not
 * promised: the polish may settle on another nearest pose than the sweeps do (measured
 * on 1,000 random 5-joint chains, bones 0.1 to 2 long, a cone on every other bone:
 * farther on 1, by 0.017; nearer on average, 0.34 against 0.40). */
static void constraints_hold_in_refined_mode(void **state) {
  ik_vec3 p[MAXJ], rest[MAXJ], start[MAXJ];
  ik_real len[MAXJ];
  ik_constraint cons[MAXJ];
  t_rng r = t_rng_make(80);
  int k, n = 10, reached[2] = {0, 0};
  (void)state;
  for (k = 0; k < 300; k++) {
    ik_vec3 target = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0.5, 9));
    int m, got[2];
    t_straight_chain(rest, n, 1);
    ik_measure_lengths(rest, n, len);
    memset(cons, 0, sizeof cons);
    t_random_constraints(&r, cons, n - 1);
    memcpy(start, rest, sizeof start);
    for (m = 0; m < 2; m++) {
      ik_chain chain;
      ik_fabrik_job job;
      memcpy(p, start, sizeof p);
      ik_chain_init(&chain, p, n, len);
      chain.constraints = cons;
      chain.rest_positions = rest;
      chain.base_direction = ik_vec3_make(1, 0, 0);
      ik_fabrik_job_init(&job, &chain, target);
      job.mode = m ? IK_FABRIK_REFINED : IK_FABRIK_PLAIN;
      job.tolerance = (ik_real)1e-3;
      job.max_iterations = BUDGET;
      assert_int_equal(ik_fabrik_run(&job), IK_OK);
      assert_near(t_max_length_error(p, len, n), 0, T_LEN_REL);
      assert_true(p[0].x == 0 && p[0].y == 0 && p[0].z == 0);
      assert_near(ik_chain_constraint_violation(&chain, NULL), 0, T_CONSTRAINT_RAD);
      assert_int_equal(job.result.reached, job.result.distance <= job.tolerance);
      got[m] = job.result.reached;
      reached[m] += got[m];
    }
    if (got[0]) assert_true(got[1]);
  }
  assert_true(reached[1] > reached[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(refined_meets_the_bar_plain_does_not),
      cmocka_unit_test(refined_never_ends_farther_than_plain),
      cmocka_unit_test(targets_inside_the_fold_are_left_to_the_sweeps),
      cmocka_unit_test(refined_poses_bend_like_plain),
      cmocka_unit_test(plain_mode_is_bit_identical_to_before),
      cmocka_unit_test(iterations_count_sweeps_and_polish_steps),
      cmocka_unit_test(constraints_hold_in_refined_mode),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
