/*
 * bench_solvers: solves per second of every C solver on the workload, against
 * the plain-C baseline FABRIK measured in the same run.
 *
 * Workload: unit bones laid straight along +X (3, 10 and 100 joints), 1,000 targets at
 * random directions and 0.1 to 0.95 of the chain's length from the root (fixed seed),
 * tolerance 1e-4 x length, at most 20 iterations, cold start (the straight pose is
 * restored before each solve, for every solver alike). Each figure is the median of 5
 * timed repetitions. `--quick` runs a small version (the test suite uses it so this file
 * cannot rot); `--reps N` and `--targets N` override the counts; `--joints N` (3, 10 or
 * 100) and `--solver NAME` run only that size or solver (and the baseline), for
 * instruction counts per solve (callgrind --toggle-collect=run_pass).
 *
 * FABRIK runs in both modes: "fabrik" is IK_FABRIK_PLAIN (the sweeps alone, as the
 * baseline), "fabrik_ref" IK_FABRIK_REFINED. Besides speed and convergence, "spread"
 * says how natural the poses are: the standard deviation of the bend angles at the
 * inner joints (radians), averaged over the targets; a solver that zig-zags has a
 * larger one.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline_fabrik.h"
#include "bench_util.h"
#include "ik.h"

#define MAX_JOINTS 100
#define MAX_TARGETS 1000
#define MAX_REPS 31

typedef struct workload {
  int joints, targets;
  ik_vec3 rest[MAX_JOINTS];
  ik_real lengths[MAX_JOINTS];
  ik_vec3 target[MAX_TARGETS];
  ik_real length, tolerance;
} workload;

typedef struct stats {
  double solves_per_s, mean_iterations, reached_fraction, mean_error, mean_spread;
} stats;

typedef enum solver { S_BASELINE, S_FABRIK, S_FABRIK_REFINED, S_CCD, S_DLS, S_TWO_BONE, S_COUNT } solver;
static const char *const solver_names[S_COUNT] = {"baseline", "fabrik", "fabrik_ref",
                                                  "ccd",      "dls",    "two_bone"};

static void make_workload(workload *w, int joints, int targets) {
  unsigned long long seed = 0x1b96a6b623bbcd8bull;
  int i;
  w->joints = joints;
  w->targets = targets;
  for (i = 0; i < joints; i++) w->rest[i] = ik_vec3_make((ik_real)i, 0, 0);
  w->length = ik_measure_lengths(w->rest, joints, w->lengths);
  w->tolerance = (ik_real)1e-4 * w->length;
  for (i = 0; i < targets; i++) {
    ik_vec3 d;
    do {
      d = ik_vec3_make((ik_real)(2 * bench_uniform(&seed) - 1), (ik_real)(2 * bench_uniform(&seed) - 1),
                       (ik_real)(2 * bench_uniform(&seed) - 1));
    } while (ik_vec3_len2(d) > 1 || ik_vec3_len2(d) < (ik_real)0.01);
    w->target[i] =
        ik_vec3_scale(ik_vec3_normalize(d), w->length * (ik_real)(0.1 + 0.85 * bench_uniform(&seed)));
  }
}

/* Standard deviation of the bend angles at the inner joints (0 with fewer than two). */
static double bend_spread(const ik_vec3 *p, int count) {
  double sum = 0, sum2 = 0, mean, var;
  int i;
  if (count < 4) return 0;
  for (i = 1; i + 1 < count; i++) {
    ik_vec3 a = ik_vec3_sub(p[i], p[i - 1]), b = ik_vec3_sub(p[i + 1], p[i]);
    double c = (double)ik_vec3_dot(a, b) / ((double)ik_vec3_len(a) * (double)ik_vec3_len(b));
    double bend = acos(c > 1 ? 1 : c < -1 ? -1 : c);
    sum += bend;
    sum2 += bend * bend;
  }
  mean = sum / (count - 2);
  var = sum2 / (count - 2) - mean * mean;
  return sqrt(var > 0 ? var : 0);
}

/* One pass over every target; returns the stats of that pass (time excluded). The pose
 * figures are measured only when `poses` is set: the timed passes leave them out. */
static void run_pass(const workload *w, solver s, int poses, stats *st) {
  ik_vec3 p[MAX_JOINTS];
  ik_real len[MAX_JOINTS];
  ik_chain chain;
  long iterations = 0, reached = 0;
  double error = 0, spread = 0;
  int t;
  memcpy(len, w->lengths, sizeof len);
  ik_chain_init(&chain, p, w->joints, len);
  for (t = 0; t < w->targets; t++) {
    ik_result r = {0, 0, 0};
    memcpy(p, w->rest, sizeof(ik_vec3) * (size_t)w->joints);
    switch (s) {
      case S_BASELINE: {
        int it;
        r.reached = baseline_fabrik(p, len, w->joints, w->target[t], 20, w->tolerance, &it);
        r.iterations = it;
        r.distance = ik_vec3_dist(p[w->joints - 1], w->target[t]);
        break;
      }
      case S_FABRIK:
      case S_FABRIK_REFINED: {
        ik_fabrik_job job;
        ik_fabrik_job_init(&job, &chain, w->target[t]);
        job.mode = s == S_FABRIK ? IK_FABRIK_PLAIN : IK_FABRIK_REFINED;
        job.tolerance = w->tolerance;
        job.max_iterations = 20;
        ik_fabrik_run(&job);
        r = job.result;
        break;
      }
      case S_CCD: {
        ik_ccd_job job;
        ik_ccd_job_init(&job, &chain, w->target[t]);
        job.tolerance = w->tolerance;
        job.max_iterations = 20;
        ik_ccd_run(&job);
        r = job.result;
        break;
      }
      case S_DLS: {
        ik_dls_job job;
        ik_dls_job_init(&job, &chain, w->target[t]);
        job.tolerance = w->tolerance;
        job.max_iterations = 20;
        ik_dls_run(&job);
        r = job.result;
        break;
      }
      case S_TWO_BONE: {
        ik_two_bone_job job;
        /* The straight rest pose has no bend plane: start slightly bent, as limbs are. */
        p[1].y = (ik_real)0.05;
        ik_two_bone_job_init(&job, p, w->target[t]);
        job.tolerance = w->tolerance;
        ik_two_bone_run(&job);
        r = job.result;
        break;
      }
      case S_COUNT:
        break;
    }
    iterations += r.iterations;
    reached += r.reached;
    error += (double)r.distance;
    if (poses) spread += bend_spread(p, w->joints);
  }
  st->mean_iterations = (double)iterations / w->targets;
  st->reached_fraction = (double)reached / w->targets;
  st->mean_error = error / w->targets;
  st->mean_spread = spread / w->targets;
}

static stats measure(const workload *w, solver s, int reps) {
  double rate[MAX_REPS];
  stats st;
  int k;
  run_pass(w, s, 1, &st); /* warm-up, and the (deterministic) quality figures */
  for (k = 0; k < reps; k++) {
    stats ignored;
    double t0 = bench_now_s();
    run_pass(w, s, 0, &ignored);
    rate[k] = w->targets / (bench_now_s() - t0);
  }
  st.solves_per_s = bench_median(rate, reps);
  return st;
}

int main(int argc, char **argv) {
  static workload w;
  const int sizes[] = {3, 10, 100};
  int reps = 5, targets = MAX_TARGETS, only_joints = 0, i, k;
  const char *only_solver = NULL;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      reps = 1;
      targets = 50;
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--targets") && i + 1 < argc) {
      targets = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--joints") && i + 1 < argc) {
      only_joints = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--solver") && i + 1 < argc) {
      only_solver = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--quick] [--reps N] [--targets N] [--joints N] [--solver NAME]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS || targets < 1 || targets > MAX_TARGETS) {
    fprintf(stderr, "%s: reps must be 1..%d and targets 1..%d\n", argv[0], MAX_REPS, MAX_TARGETS);
    return 2;
  }
  printf(
      "ik_real = %s; %d targets, tolerance 1e-4 x length, <= 20 iterations, cold start; "
      "median of %d\n\n",
      sizeof(ik_real) == sizeof(double) ? "double" : "float", targets, reps);
  printf("%-7s %-10s %14s %10s %9s %11s %12s %8s\n", "joints", "solver", "solves/s", "vs base", "mean it",
         "reached", "mean error", "spread");
  for (i = 0; i < 3; i++) {
    stats base;
    if (only_joints && sizes[i] != only_joints) continue;
    make_workload(&w, sizes[i], targets);
    base = measure(&w, S_BASELINE, reps);
    for (k = 0; k < S_COUNT; k++) {
      stats st;
      if (k == S_TWO_BONE && sizes[i] != 3) continue;
      if (only_solver && k != S_BASELINE && strcmp(only_solver, solver_names[k])) continue;
      st = k == S_BASELINE ? base : measure(&w, (solver)k, reps);
      printf("%-7d %-10s %14.0f %9.2fx %9.2f %10.1f%% %12.3g %8.4f\n", sizes[i], solver_names[k],
             st.solves_per_s, st.solves_per_s / base.solves_per_s, st.mean_iterations,
             100 * st.reached_fraction, st.mean_error, st.mean_spread);
    }
    printf("\n");
  }
  return 0;
}
