/* bench_util.h: what the C benchmarks share: a monotonic clock, a seeded generator
 * (the same workload on every machine) and the median of repetitions. */
#ifndef IK_BENCH_UTIL_H
#define IK_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift64*: uniform in [0, 1). */
static inline double bench_uniform(unsigned long long *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (double)((*s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

static inline int bench_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v and returns its median. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
