/*
 * bench_constrained: how FABRIK, CCD and DLS do on constrained chains: share of targets
 * reached, mean final distance, worst constraint break and time per solve.
 *
 * Two families of 3,000 chains each (fixed seed), 3 to 10 joints, bone lengths 0.2 to
 * 1.5, started from their rest pose, 30 iterations at most, tolerance 1e-4 x length:
 *   planar: bent at random in the XY plane (up to 1 rad a joint), every bone hinged
 *           about +Z to +-1.5 rad, bone 0 free; targets in the plane, 0.02 to 1 of the
 *           length from the root. Many are out of reach under the limits;
 *   3d:     random 3D bends, cones (0.1 to 2 rad) with a hinge every third bone (axis
 *           across its parent, range within +-2 rad), bone 0 against its rest
 *           direction; targets in any direction, up to the length.
 * FABRIK in its default (refined) mode. The time is the median of 5 passes over the
 * family (the poses restored between passes, outside the timing). `--quick` runs 100
 * chains once (the test suite's smoke run); `--chains N` and `--reps N` override.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ik.h"

#define MAX_JOINTS 10
#define MAX_CHAINS 3000
#define MAX_REPS 31
#define ITERATIONS 30

typedef enum solver { S_FABRIK, S_CCD, S_DLS, S_COUNT } solver;
static const char *const solver_names[S_COUNT] = {"fabrik", "ccd", "dls"};

typedef struct chain_case {
  int count;
  ik_vec3 rest[MAX_JOINTS], positions[MAX_JOINTS];
  ik_real lengths[MAX_JOINTS - 1];
  ik_constraint cons[MAX_JOINTS - 1];
  ik_vec3 base_direction, target;
  ik_real total;
} chain_case;

static double uniform(unsigned long long *seed, double lo, double hi) {
  return lo + (hi - lo) * bench_uniform(seed);
}

static ik_vec3 unit_vector(unsigned long long *seed) {
  ik_vec3 d;
  do {
    d = ik_vec3_make((ik_real)uniform(seed, -1, 1), (ik_real)uniform(seed, -1, 1),
                     (ik_real)uniform(seed, -1, 1));
  } while (ik_vec3_len2(d) > 1 || ik_vec3_len2(d) < (ik_real)0.01);
  return ik_vec3_normalize(d);
}

static void make_planar(chain_case *c, unsigned long long *seed) {
  double angle = uniform(seed, -3, 3);
  int i;
  c->count = 3 + (int)(bench_uniform(seed) * (MAX_JOINTS - 2));
  c->rest[0] = ik_vec3_zero();
  for (i = 1; i < c->count; i++) {
    const double len = uniform(seed, 0.2, 1.5);
    angle += uniform(seed, -1, 1);
    c->rest[i] = ik_vec3_add(c->rest[i - 1],
                             ik_vec3_make((ik_real)(len * cos(angle)), (ik_real)(len * sin(angle)), 0));
  }
  memset(c->cons, 0, sizeof c->cons);
  for (i = 0; i + 1 < c->count; i++) {
    c->cons[i].type = IK_CONSTRAINT_HINGE;
    c->cons[i].axis = ik_vec3_make(0, 0, 1);
    c->cons[i].min = (ik_real)-1.5;
    c->cons[i].max = (ik_real)1.5;
  }
  c->base_direction = ik_vec3_zero();
  c->total = ik_measure_lengths(c->rest, c->count, c->lengths);
  angle = uniform(seed, -3, 3);
  c->target = ik_vec3_scale(ik_vec3_make((ik_real)cos(angle), (ik_real)sin(angle), 0),
                            c->total * (ik_real)uniform(seed, 0.02, 1));
}

static void make_3d(chain_case *c, unsigned long long *seed) {
  ik_vec3 dir = unit_vector(seed);
  int i;
  c->count = 3 + (int)(bench_uniform(seed) * (MAX_JOINTS - 2));
  c->rest[0] = ik_vec3_zero();
  for (i = 1; i < c->count; i++) {
    /* Each bone within about 1 rad of the last. */
    dir = ik_vec3_normalize(ik_vec3_madd(dir, unit_vector(seed), (ik_real)0.8));
    c->rest[i] = ik_vec3_madd(c->rest[i - 1], dir, (ik_real)uniform(seed, 0.2, 1.5));
  }
  memset(c->cons, 0, sizeof c->cons);
  for (i = 0; i + 1 < c->count; i++) {
    const ik_vec3 parent = ik_vec3_sub(c->rest[i == 0 ? 1 : i], c->rest[i == 0 ? 0 : i - 1]);
    if (i % 3 == 2) {
      c->cons[i].type = IK_CONSTRAINT_HINGE;
      c->cons[i].axis = ik_vec3_cross(parent, unit_vector(seed)); /* across the parent, as a knee's */
      c->cons[i].min = (ik_real)uniform(seed, -2, 0);
      c->cons[i].max = (ik_real)uniform(seed, 0, 2);
    } else {
      c->cons[i].type = IK_CONSTRAINT_CONE;
      c->cons[i].angle = (ik_real)uniform(seed, 0.1, 2);
    }
  }
  c->base_direction = ik_vec3_sub(c->rest[1], c->rest[0]);
  c->total = ik_measure_lengths(c->rest, c->count, c->lengths);
  c->target = ik_vec3_scale(unit_vector(seed), c->total * (ik_real)bench_uniform(seed));
}

/* The case's chain over its positions, with its limits. */
static ik_chain chain_of(chain_case *c) {
  ik_chain chain;
  ik_chain_init(&chain, c->positions, c->count, c->lengths);
  chain.constraints = c->cons;
  chain.rest_positions = c->rest;
  chain.base_direction = c->base_direction;
  return chain;
}

/* A refused job would count as a miss: the benchmark stops instead. */
static void check(ik_status st) {
  if (st != IK_OK) {
    fprintf(stderr, "bench_constrained: a job was refused: %s\n", ik_status_message(st));
    exit(1);
  }
}

static ik_result solve(solver s, chain_case *c) {
  const ik_chain chain = chain_of(c);
  if (s == S_FABRIK) {
    ik_fabrik_job job;
    ik_fabrik_job_init(&job, &chain, c->target);
    job.tolerance = c->total * (ik_real)1e-4;
    job.max_iterations = ITERATIONS;
    check(ik_fabrik_run(&job));
    return job.result;
  }
  if (s == S_CCD) {
    ik_ccd_job job;
    ik_ccd_job_init(&job, &chain, c->target);
    job.tolerance = c->total * (ik_real)1e-4;
    job.max_iterations = ITERATIONS;
    check(ik_ccd_run(&job));
    return job.result;
  } else {
    ik_dls_job job;
    ik_dls_job_init(&job, &chain, c->target);
    job.tolerance = c->total * (ik_real)1e-4;
    job.max_iterations = ITERATIONS;
    check(ik_dls_run(&job));
    return job.result;
  }
}

static void restore(chain_case *cases, int n) {
  int k;
  for (k = 0; k < n; k++) memcpy(cases[k].positions, cases[k].rest, sizeof(ik_vec3) * (size_t)cases[k].count);
}

/* One row: the family under one solver; a pass to measure the answers, then `reps`
 * timed ones. */
static void run_row(const char *family, solver s, chain_case *cases, int n, int reps) {
  double times[MAX_REPS], error = 0, iterations = 0, worst = 0;
  int r, k, reached = 0;
  restore(cases, n);
  for (k = 0; k < n; k++) {
    const ik_result res = solve(s, &cases[k]);
    const ik_chain chain = chain_of(&cases[k]);
    worst = fmax(worst, (double)ik_chain_constraint_violation(&chain, NULL));
    reached += res.reached;
    error += (double)(res.distance / cases[k].total);
    iterations += res.iterations;
  }
  for (r = 0; r < reps; r++) {
    double t0;
    restore(cases, n);
    t0 = bench_now_s();
    for (k = 0; k < n; k++) solve(s, &cases[k]);
    times[r] = bench_now_s() - t0;
  }
  printf("%-8s %-7s %8.1f%% %10.4f %9.2f %10.2g %10.2f\n", family, solver_names[s], 100.0 * reached / n,
         error / n, iterations / n, worst, 1e6 * bench_median(times, reps) / n);
}

int main(int argc, char **argv) {
  static chain_case planar[MAX_CHAINS], space[MAX_CHAINS];
  /* One seed a family, so that --chains N draws the first N of each. */
  unsigned long long planar_seed = 0x1b96a6b623bbcd8bull, space_seed = 0x9e3779b97f4a7c15ull;
  int chains = MAX_CHAINS, reps = 5, i, s;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      chains = 100;
      reps = 1;
    } else if (!strcmp(argv[i], "--chains") && i + 1 < argc) {
      chains = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--chains N] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (chains < 1 || chains > MAX_CHAINS || reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "%s: chains must be 1..%d and reps 1..%d\n", argv[0], MAX_CHAINS, MAX_REPS);
    return 2;
  }
  for (i = 0; i < chains; i++) make_planar(&planar[i], &planar_seed);
  for (i = 0; i < chains; i++) make_3d(&space[i], &space_seed);
  printf(
      "ik_real = %s; %d chains a family, 3 to %d joints, from rest, <= %d iterations, tolerance 1e-4 x "
      "length;\nerror: mean final distance (of the length); broken: worst constraint break (rad); "
      "us: per solve, median of %d\n\n",
      sizeof(ik_real) == sizeof(double) ? "double" : "float", chains, MAX_JOINTS, ITERATIONS, reps);
  printf("%-8s %-7s %9s %10s %9s %10s %10s\n", "family", "solver", "reached", "error", "mean it", "broken",
         "us");
  for (s = 0; s < S_COUNT; s++) run_row("planar", (solver)s, planar, chains, reps);
  for (s = 0; s < S_COUNT; s++) run_row("3d", (solver)s, space, chains, reps);
  return 0;
}
