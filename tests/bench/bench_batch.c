/*
 * bench_batch: ns per chain of ik_batch_run against one *_run call per job, on a crowd.
 *
 * Workload: bench_solvers.c's, scaled up: 10,000 chains of 3 and of 10 joints (unit bones
 * laid straight along +X), 1,000 of 100 joints, and 10,000 two-bone limbs (the same, mid
 * joint lifted 0.05 so the limb has a bend plane), each with its own random target at
 * 0.1 to 0.95 of the length from the root (fixed seed), tolerance 1e-4 x length, at most
 * 20 iterations, cold start: every pose is restored before each timed pass, outside the
 * timing. Each figure is the median of 7 passes of
 *   (a) scalar:   ik_fabrik_run / ik_two_bone_run, one job after the other;
 *   (b) batch 1T: ik_batch_run on a pool of 1 thread (SIMD lanes, no threads);
 *   (c) batch 2T: ik_batch_run on a pool of 2 threads;
 *   (d) batch 1T with AVX2's 4-lane vectors forced (ik_batch_run_slice in a lane
 *       workspace whose sweep and polish are AVX2's), when the processor has wider
 *       ones, which (b) then uses: `wide` is (d) / (b), the median ratio of passes taken
 *       in turns.
 * FABRIK runs in each mode at 3, 10 and 100 joints. The answers of (b) and (c) are checked
 * to be those of (a), byte for byte. `--quick` runs a small version (the test suite's
 * smoke run); `--reps N` and `--chains N` override the counts; `--workload N` runs only
 * the Nth row (1 to 7), for instruction counts of one workload (perf stat, callgrind).
 */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "ik.h"
#include "ik_batch_lanes.h" /* a workspace held to AVX2 (not API) */
#include "ik_pool.h"        /* ik_batch_run over threads */

#define MAX_JOINTS 100
#define MAX_CHAINS 100000
#define MAX_REPS 31
#define WORKLOADS 7

typedef enum kind { K_FABRIK, K_TWO_BONE } kind;
typedef enum path { P_SCALAR, P_BATCH1, P_BATCH2, P_AVX2, P_COUNT } path;

typedef struct crowd {
  kind kind;
  int joints, chains;
  ik_fabrik_mode mode;
  ik_vec3 *rest;      /* chains x joints: the pose every pass starts from */
  ik_vec3 *positions; /* chains x joints: solved in place */
  ik_real lengths[MAX_JOINTS];
  ik_fabrik_job *fabrik;
  ik_two_bone_job *two_bone;
} crowd;

static void *alloc_or_die(size_t n, size_t size) {
  void *p = calloc(n, size);
  if (p == NULL) {
    fprintf(stderr, "bench_batch: out of memory\n");
    exit(1);
  }
  return p;
}

/* bench_solvers.c's targets: random directions, 0.1 to 0.95 of the length. */
static ik_vec3 random_target(unsigned long long *seed, ik_real length) {
  ik_vec3 d;
  do {
    d = ik_vec3_make((ik_real)(2 * bench_uniform(seed) - 1), (ik_real)(2 * bench_uniform(seed) - 1),
                     (ik_real)(2 * bench_uniform(seed) - 1));
  } while (ik_vec3_len2(d) > 1 || ik_vec3_len2(d) < (ik_real)0.01);
  return ik_vec3_scale(ik_vec3_normalize(d), length * (ik_real)(0.1 + 0.85 * bench_uniform(seed)));
}

static void make_crowd(crowd *c, kind k, int joints, int chains, ik_fabrik_mode mode) {
  unsigned long long seed = 0x1b96a6b623bbcd8bull;
  ik_vec3 straight[MAX_JOINTS];
  ik_real length;
  int i, j;
  c->kind = k;
  c->joints = joints;
  c->chains = chains;
  c->mode = mode;
  c->rest = (ik_vec3 *)alloc_or_die((size_t)chains * (size_t)c->joints, sizeof(ik_vec3));
  c->positions = (ik_vec3 *)alloc_or_die((size_t)chains * (size_t)c->joints, sizeof(ik_vec3));
  c->fabrik = NULL;
  c->two_bone = NULL;
  for (j = 0; j < c->joints; j++) straight[j] = ik_vec3_make((ik_real)j, 0, 0);
  length = ik_measure_lengths(straight, c->joints, c->lengths);
  if (k == K_TWO_BONE) straight[1].y = (ik_real)0.05;
  for (i = 0; i < chains; i++) memcpy(&c->rest[i * c->joints], straight, sizeof(ik_vec3) * (size_t)c->joints);
  memcpy(c->positions, c->rest, sizeof(ik_vec3) * (size_t)chains * (size_t)c->joints);
  if (k == K_FABRIK) {
    c->fabrik = (ik_fabrik_job *)alloc_or_die((size_t)chains, sizeof(ik_fabrik_job));
    for (i = 0; i < chains; i++) {
      ik_chain chain;
      ik_chain_init(&chain, &c->positions[i * c->joints], c->joints, c->lengths);
      ik_fabrik_job_init(&c->fabrik[i], &chain, random_target(&seed, length));
      c->fabrik[i].tolerance = (ik_real)1e-4 * length;
      c->fabrik[i].max_iterations = 20;
      c->fabrik[i].mode = mode;
    }
  } else {
    c->two_bone = (ik_two_bone_job *)alloc_or_die((size_t)chains, sizeof(ik_two_bone_job));
    for (i = 0; i < chains; i++) {
      ik_two_bone_job_init(&c->two_bone[i], &c->positions[i * c->joints], random_target(&seed, length));
      c->two_bone[i].tolerance = (ik_real)1e-4 * length;
    }
  }
}

static void free_crowd(crowd *c) {
  free(c->rest);
  free(c->positions);
  free(c->fabrik);
  free(c->two_bone);
}

/* One timed pass of `p` over the crowd, from the rest pose; seconds. P_AVX2 runs in
 * `avx2`, a lane workspace. */
static double run_pass(crowd *c, path p, ik_pool *pool, ik_batch_lanes *avx2) {
  double t0;
  int i;
  memcpy(c->positions, c->rest, sizeof(ik_vec3) * (size_t)c->chains * (size_t)c->joints);
  t0 = bench_now_s();
  if (p == P_SCALAR) {
    if (c->kind == K_FABRIK)
      for (i = 0; i < c->chains; i++) ik_fabrik_run(&c->fabrik[i]);
    else
      for (i = 0; i < c->chains; i++) ik_two_bone_run(&c->two_bone[i]);
  } else {
    ik_batch batch;
    ik_batch_init(&batch);
    if (c->kind == K_FABRIK) {
      batch.fabrik = c->fabrik;
      batch.fabrik_count = c->chains;
    } else {
      batch.two_bone = c->two_bone;
      batch.two_bone_count = c->chains;
    }
    if (p == P_AVX2)
      ik_batch_run_slice(&batch, 0, 1, avx2);
    else
      ik_batch_run(&batch, pool);
  }
  return bench_now_s() - t0;
}

/* The solved poses and results of the last pass, to compare paths with. */
typedef struct answers {
  ik_vec3 *positions;
  ik_result *results;
} answers;

static void keep_answers(const crowd *c, answers *a) {
  int i;
  memcpy(a->positions, c->positions, sizeof(ik_vec3) * (size_t)c->chains * (size_t)c->joints);
  for (i = 0; i < c->chains; i++)
    a->results[i] = c->kind == K_FABRIK ? c->fabrik[i].result : c->two_bone[i].result;
}

static int same_answers(const crowd *c, const answers *a, const answers *b) {
  return !memcmp(a->positions, b->positions, sizeof(ik_vec3) * (size_t)c->chains * (size_t)c->joints) &&
         !memcmp(a->results, b->results, sizeof(ik_result) * (size_t)c->chains);
}

int main(int argc, char **argv) {
  ik_pool *pools[P_COUNT];
  ik_batch_lanes *avx2 = NULL;
  void *avx2_memory = NULL;
  int chains = 10000, reps = 7, only = 0, i, w, ok = 1;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      reps = 1;
      chains = 300;
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--chains") && i + 1 < argc) {
      chains = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--workload") && i + 1 < argc) {
      only = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--reps N] [--chains N] [--workload N]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS || chains < 1 || chains > MAX_CHAINS || only < 0 || only > WORKLOADS) {
    fprintf(stderr, "%s: reps must be 1..%d, chains 1..%d and workload 1..7\n", argv[0], MAX_REPS,
            MAX_CHAINS);
    return 2;
  }
  pools[P_SCALAR] = NULL;
  pools[P_BATCH1] = ik_pool_new(1);
  pools[P_BATCH2] = ik_pool_new(2);
  pools[P_AVX2] = NULL;
  if (ik__best_isa() == 3 && posix_memalign(&avx2_memory, IK_BATCH_LANES_ALIGN, ik_batch_lanes_size()) == 0) {
    avx2 = ik_batch_lanes_init(avx2_memory);
    avx2->sweep = ik__sweep_variant(1);
    avx2->polish_fns = ik__polish_variant(1);
  }
  if (!pools[P_BATCH1] || !pools[P_BATCH2]) {
    fprintf(stderr, "%s: could not start a pool\n", argv[0]);
    return 1;
  }
  printf(
      "ik_real = %s; random targets at 0.1-0.95 of the length, tolerance 1e-4 x length, <= 20 iterations,\n"
      "cold start; ns per chain, median of %d; speedup = scalar / batch; same: batch answers == scalar's\n\n",
      sizeof(ik_real) == sizeof(double) ? "double" : "float", reps);
  printf("%-18s %6s %9s %11s %11s %11s %10s %10s %8s %5s %7s\n", "workload", "chains", "mean it", "scalar",
         "batch 1T", "batch 2T", "speedup 1T", "speedup 2T", "reached", "same", "wide");
  for (w = 0; w < WORKLOADS; w++) {
    static const char *const names[WORKLOADS] = {
        "fabrik 3 plain",   "fabrik 3 refined",   "fabrik 10 plain", "fabrik 10 refined",
        "fabrik 100 plain", "fabrik 100 refined", "two_bone"};
    const int joints[WORKLOADS] = {3, 3, 10, 10, 100, 100, 3},
              n = joints[w] == 100 ? (chains + 9) / 10 : chains;
    crowd c;
    answers ans[P_COUNT];
    double ns[P_COUNT];
    long iterations = 0, reached = 0;
    int p, same = 1;
    if (only && w != only - 1) continue;
    make_crowd(&c, w == WORKLOADS - 1 ? K_TWO_BONE : K_FABRIK, joints[w], n,
               w % 2 ? IK_FABRIK_REFINED : IK_FABRIK_PLAIN);
    for (p = 0; p < P_COUNT; p++) {
      double t[MAX_REPS];
      int k;
      if (p == P_AVX2 && !avx2) break;
      run_pass(&c, (path)p, pools[p], avx2); /* warm-up */
      for (k = 0; k < reps; k++) t[k] = run_pass(&c, (path)p, pools[p], avx2);
      ns[p] = bench_median(t, reps) / n * 1e9;
      ans[p].positions = (ik_vec3 *)alloc_or_die((size_t)n * (size_t)c.joints, sizeof(ik_vec3));
      ans[p].results = (ik_result *)alloc_or_die((size_t)n, sizeof(ik_result));
      keep_answers(&c, &ans[p]);
      if (p > 0) same &= same_answers(&c, &ans[0], &ans[p]);
    }
    for (i = 0; i < n; i++) {
      iterations += ans[0].results[i].iterations;
      reached += ans[0].results[i].reached;
    }
    printf("%-18s %6d %9.2f %9.0fns %9.0fns %9.0fns %9.2fx %9.2fx %7.1f%% %5s", names[w], n,
           (double)iterations / n, ns[P_SCALAR], ns[P_BATCH1], ns[P_BATCH2], ns[P_SCALAR] / ns[P_BATCH1],
           ns[P_SCALAR] / ns[P_BATCH2], 100.0 * (double)reached / n, same ? "yes" : "NO");
    if (avx2) { /* passes taken in turns, the median of their ratios: drift cancels */
      double ratio[MAX_REPS];
      int k;
      for (k = 0; k < reps; k++) {
        const double wide = run_pass(&c, P_BATCH1, pools[P_BATCH1], avx2);
        ratio[k] = run_pass(&c, P_AVX2, NULL, avx2) / wide;
      }
      printf(" %6.2fx\n", bench_median(ratio, reps));
    } else
      printf(" %7s\n", "-");
    ok &= same;
    for (p = 0; p < P_COUNT; p++) {
      if (p == P_AVX2 && !avx2) break;
      free(ans[p].positions);
      free(ans[p].results);
    }
    free_crowd(&c);
  }
  ik_pool_free(pools[P_BATCH1]);
  ik_pool_free(pools[P_BATCH2]);
  free(avx2_memory);
  if (!ok) fprintf(stderr, "%s: a batch did not give the scalar path's answers\n", argv[0]);
  return ok ? 0 : 1;
}
