/*
 * bench_call: ns per FABRIK job whose tip is already on the target (0 iterations), on the
 * chains of bench_solvers.c (unit bones laid straight along +X, 3, 10 and 100 joints,
 * tolerance 1e-4 x length, at most 20 iterations). That is the fixed price of a solve:
 * job setup, validation (O(n)), the reach and "already there" checks, the result.
 * bench_lua.lua's "0-it" columns time `c:solve` on the same, so the difference between
 * the two is what the Lua call itself costs. Median of 5 repetitions; `--quick` runs a
 * small version (the test suite's smoke run).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "ik.h"

#define MAX_JOINTS 100
#define REPS 5

int main(int argc, char **argv) {
  const int sizes[] = {3, 10, 100};
  long calls_small = 3000000, calls_large = 300000;
  int reps = REPS, s;
  if (argc == 2 && !strcmp(argv[1], "--quick")) {
    calls_small = calls_large = 1000;
    reps = 1;
  } else if (argc != 1) {
    fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
    return 2;
  }
  printf("ik_real = %s; FABRIK job on a target the tip is already on (0 iterations); median of %d\n\n",
         sizeof(ik_real) == sizeof(double) ? "double" : "float", reps);
  printf("%-7s %14s\n", "joints", "ns per job");
  for (s = 0; s < 3; s++) {
    ik_vec3 p[MAX_JOINTS];
    ik_real len[MAX_JOINTS];
    ik_chain chain;
    double ns[REPS];
    long calls = sizes[s] >= 100 ? calls_large : calls_small, k, iterations = 0;
    int i, n = sizes[s], r;
    ik_real length;
    for (i = 0; i < n; i++) p[i] = ik_vec3_make((ik_real)i, 0, 0);
    length = ik_measure_lengths(p, n, len);
    ik_chain_init(&chain, p, n, len);
    for (r = 0; r < reps; r++) {
      double t0 = bench_now_s();
      for (k = 0; k < calls; k++) {
        ik_fabrik_job job;
        ik_fabrik_job_init(&job, &chain, p[n - 1]);
        job.tolerance = (ik_real)1e-4 * length;
        job.max_iterations = 20;
        ik_fabrik_run(&job);
        iterations += job.result.iterations;
      }
      ns[r] = (bench_now_s() - t0) / (double)calls * 1e9;
    }
    if (iterations != 0) {
      fprintf(stderr, "%s: the tip was not already on the target\n", argv[0]);
      return 1;
    }
    printf("%-7d %12.1fns\n", n, bench_median(ns, reps));
  }
  return 0;
}
