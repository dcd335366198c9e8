/*
 * bench_two_bone_lanes: ns per limb of the two-bone kernel in SIMD lanes
 * (ik__two_bone_run_lanes, the crowd's) against a loop of ik_two_bone_run over the same
 * limbs, in one run.
 *
 * Workload: 8,000 limbs (fixed seed), bones of 0.3 to 1 with the start anywhere in a
 * 100-unit box and a random bend, targets at random directions and 0.1 to 1.3 of the
 * reach from the start (a sixth of them out of reach), tolerance 1e-3; without a pole and
 * with one (a random point 0.5 to 2 from the start). Every pass starts from the same
 * poses (restored outside the timing). Each figure is the median of 9 passes of
 *   (a) scalar: ik_two_bone_run on each limb's job, one after the other;
 *   (b) lanes:  ik__two_bone_run_lanes on the limbs 8 at a time, as the crowd lays them out;
 *   (c) base:   the same held to the baseline's 16-byte vectors (where (b) uses AVX2).
 * The answers of (b) and (c) are checked to be those of (a), byte for byte, and the share
 * of lanes the kernel handed back to ik_two_bone_run is printed. `--quick` runs a small
 * version (the test suite's smoke run); `--limbs N` and `--reps N` override the counts;
 * `--path scalar|lanes|base` runs only that path, for instruction counts per limb
 * (callgrind --toggle-collect=pass_scalar, pass_lanes or pass_base).
 */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ik.h"
#include "ik_internal.h" /* ik__two_bone_lanes (not API) */

#define LANES IK__TWO_BONE_LANES
#define MAX_LIMBS 80000
#define MAX_REPS 31

typedef struct workload {
  int limbs, groups, has_pole;
  ik__two_bone_lanes *rest;  /* groups: the poses every pass starts from */
  ik__two_bone_lanes *lanes; /* groups: solved in place */
  ik_vec3 *positions;        /* limbs x 3, for the jobs */
  ik_two_bone_job *jobs;
} workload;

static void *alloc_or_die(size_t n, size_t size) {
  void *p = calloc(n, size);
  if (p == NULL) {
    fprintf(stderr, "bench_two_bone_lanes: out of memory\n");
    exit(1);
  }
  return p;
}

static ik_vec3 random_unit(unsigned long long *s) {
  for (;;) {
    const ik_vec3 v = ik_vec3_make((ik_real)(2 * bench_uniform(s) - 1), (ik_real)(2 * bench_uniform(s) - 1),
                                   (ik_real)(2 * bench_uniform(s) - 1));
    const ik_real len2 = ik_vec3_len2(v);
    if (len2 > (ik_real)0.01 && len2 <= 1) return ik_vec3_normalize(v);
  }
}
static ik_real between(unsigned long long *s, double lo, double hi) {
  return (ik_real)(lo + (hi - lo) * bench_uniform(s));
}
static void put(ik_real (*at)[LANES], int e, ik_vec3 v) { at[0][e] = v.x, at[1][e] = v.y, at[2][e] = v.z; }
static ik_vec3 get(ik_real (*at)[LANES], int e) { return ik_vec3_make(at[0][e], at[1][e], at[2][e]); }

static void make_workload(workload *w, int limbs, int has_pole) {
  unsigned long long seed = 0x2b0e1a9e5ull + (unsigned long long)has_pole;
  int i, j;
  w->limbs = limbs, w->groups = (limbs + LANES - 1) / LANES, w->has_pole = has_pole;
  w->rest = alloc_or_die((size_t)w->groups, sizeof *w->rest);
  w->lanes = alloc_or_die((size_t)w->groups, sizeof *w->lanes);
  w->positions = alloc_or_die((size_t)limbs * 3, sizeof *w->positions);
  w->jobs = alloc_or_die((size_t)limbs, sizeof *w->jobs);
  for (i = 0; i < w->groups; i++) {
    w->rest[i].n = limbs - i * LANES < LANES ? limbs - i * LANES : LANES;
    w->rest[i].has_pole = has_pole;
    w->rest[i].tolerance = (ik_real)1e-3;
  }
  for (i = 0; i < limbs; i++) {
    ik__two_bone_lanes *g = &w->rest[i / LANES];
    const int e = i % LANES;
    const ik_real l0 = between(&seed, 0.3, 1), l1 = between(&seed, 0.3, 1);
    ik_vec3 p[3];
    p[0] = ik_vec3_make(between(&seed, -50, 50), between(&seed, -50, 50), between(&seed, -50, 50));
    p[1] = ik_vec3_madd(p[0], random_unit(&seed), l0);
    p[2] = ik_vec3_madd(p[1], random_unit(&seed), l1);
    for (j = 0; j < 3; j++) put(g->p[j], e, p[j]);
    put(g->target, e, ik_vec3_madd(p[0], random_unit(&seed), (l0 + l1) * between(&seed, 0.1, 1.3)));
    put(g->pole, e, ik_vec3_madd(p[0], random_unit(&seed), between(&seed, 0.5, 2)));
  }
}

/* The poses back to the start, in both layouts, and each limb's job. */
static void restore(workload *w) {
  int i, j;
  memcpy(w->lanes, w->rest, sizeof *w->lanes * (size_t)w->groups);
  for (i = 0; i < w->limbs; i++) {
    ik__two_bone_lanes *g = &w->rest[i / LANES];
    const int e = i % LANES;
    ik_two_bone_job *job = &w->jobs[i];
    for (j = 0; j < 3; j++) w->positions[3 * i + j] = get(g->p[j], e);
    ik_two_bone_job_init(job, &w->positions[3 * i], get(g->target, e));
    job->has_pole = w->has_pole;
    if (w->has_pole) job->pole = get(g->pole, e);
    job->tolerance = g->tolerance;
  }
}

/* Non-static and not inlined: callgrind's --toggle-collect names them. */
__attribute__((noinline)) void pass_scalar(workload *w);
__attribute__((noinline)) void pass_lanes(workload *w, ik__two_bone_lanes_fn run);
__attribute__((noinline)) void pass_base(workload *w, ik__two_bone_lanes_fn run);

void pass_scalar(workload *w) {
  int i;
  for (i = 0; i < w->limbs; i++) ik_two_bone_run(&w->jobs[i]);
}
void pass_lanes(workload *w, ik__two_bone_lanes_fn run) {
  int g;
  for (g = 0; g < w->groups; g++) run(&w->lanes[g]);
}
void pass_base(workload *w, ik__two_bone_lanes_fn run) { pass_lanes(w, run); }

/* Whether every lane holds its job's bytes; counts the lanes redone by the scalar job. */
static int same_as_jobs(const workload *w, int *redone) {
  int i, j;
  for (i = 0; i < w->limbs; i++) {
    ik__two_bone_lanes *g = &w->lanes[i / LANES];
    const int e = i % LANES;
    ik_real d = w->jobs[i].result.distance;
    *redone += (int)(g->redone >> e & 1);
    for (j = 1; j < 3; j++) {
      const ik_vec3 got = get(g->p[j], e);
      if (memcmp(&got, &w->positions[3 * i + j], sizeof got) != 0) return 0;
    }
    if (memcmp(&d, &g->distance[e], sizeof d) != 0 || g->status[e] != IK_OK) return 0;
  }
  return 1;
}

typedef enum path { P_SCALAR, P_LANES, P_BASE, P_COUNT } path;
static const char *const path_names[P_COUNT] = {"scalar", "lanes", "base"};

/* Median ns per limb of each path wanted, passes taken in turns. */
static void measure(workload *w, int reps, int only, double *ns) {
  static double t[P_COUNT][MAX_REPS];
  const ik__two_bone_lanes_fn lanes = ik__two_bone_run_lanes, base = ik__two_bone_lanes_variant(0);
  int r, p;
  for (r = 0; r < reps; r++) {
    for (p = 0; p < P_COUNT; p++) {
      double t0;
      if (only >= 0 && p != only) continue;
      restore(w);
      t0 = bench_now_s();
      if (p == P_SCALAR) pass_scalar(w);
      if (p == P_LANES) pass_lanes(w, lanes);
      if (p == P_BASE) pass_base(w, base);
      t[p][r] = (bench_now_s() - t0) * 1e9 / w->limbs;
    }
  }
  for (p = 0; p < P_COUNT; p++) ns[p] = only >= 0 && p != only ? 0 : bench_median(t[p], reps);
}

/* The lanes' answers against the jobs', and the share redone. */
static int check(workload *w, const char *label) {
  int redone = 0, redone_base = 0, ok;
  restore(w);
  pass_scalar(w);
  pass_lanes(w, ik__two_bone_run_lanes);
  ok = same_as_jobs(w, &redone);
  memcpy(w->lanes, w->rest, sizeof *w->lanes * (size_t)w->groups);
  pass_base(w, ik__two_bone_lanes_variant(0));
  ok = ok && same_as_jobs(w, &redone_base);
  printf("%-8s answers %s; lanes redone by ik_two_bone_run: %d of %d (%.2f%%)\n", label,
         ok ? "identical" : "DIFFER", redone, w->limbs, 100.0 * redone / w->limbs);
  return ok;
}

int main(int argc, char **argv) {
  int limbs = 8000, reps = 9, only = -1, i, has_pole, failed = 0;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      limbs = 200, reps = 3;
    else if (strcmp(argv[i], "--limbs") == 0 && i + 1 < argc)
      limbs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--path") == 0 && i + 1 < argc) {
      const char *name = argv[++i];
      for (only = P_COUNT - 1; only >= 0 && strcmp(name, path_names[only]) != 0; only--) continue;
      if (only < 0) {
        fprintf(stderr, "bench_two_bone_lanes: unknown path '%s'\n", name);
        return 2;
      }
    } else {
      fprintf(stderr,
              "usage: bench_two_bone_lanes [--quick] [--limbs N] [--reps N] [--path scalar|lanes|base]\n");
      return 2;
    }
  }
  if (limbs < 1 || limbs > MAX_LIMBS || reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "bench_two_bone_lanes: --limbs 1..%d, --reps 1..%d\n", MAX_LIMBS, MAX_REPS);
    return 2;
  }
  printf("two-bone limbs: %d, %d passes, ns per limb (median)\n", limbs, reps);
  for (has_pole = 0; has_pole < 2; has_pole++) {
    workload w;
    double ns[P_COUNT];
    const char *label = has_pole ? "pole" : "no pole";
    make_workload(&w, limbs, has_pole);
    if (only < 0 && !check(&w, label)) failed = 1;
    measure(&w, reps, only, ns);
    if (only >= 0)
      printf("%-8s %-7s %7.1f\n", label, path_names[only], ns[only]);
    else
      printf("%-8s scalar %7.1f  lanes %7.1f (%.2fx)  base %7.1f (%.2fx)\n", label, ns[P_SCALAR], ns[P_LANES],
             ns[P_SCALAR] / ns[P_LANES], ns[P_BASE], ns[P_SCALAR] / ns[P_BASE]);
    free(w.rest), free(w.lanes), free(w.positions), free(w.jobs);
  }
  return failed;
}
