/*
 * bench_tree: ik_tree_job_run on three trees against solving the same tree's chains one
 * after another with ik_fabrik_run (the trunk towards the centroid of the branch
 * targets, then each branch from the trunk's tip), in the same run: microseconds per
 * solve (median of repetitions), their ratio, and how many effectors each reached.
 * Targets are the tips of random poses of the tree itself, so every set is reachable.
 *
 *   bench_tree [--quick]
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "ik.h"

#define MAX_BRANCHES 10
#define MAX_JOINTS 8
#define REPS 5

typedef struct shape {
  const char *name;
  int trunk_joints, branches, branch_joints;
  ik_real trunk_bone, branch_bone;
} shape;

typedef struct tree {
  ik_tree_branch br[MAX_BRANCHES];
  ik_vec3 p[MAX_BRANCHES][MAX_JOINTS], start[MAX_BRANCHES][MAX_JOINTS];
  ik_real len[MAX_BRANCHES][MAX_JOINTS];
  int count;
  ik_tree_job job;
} tree;

/* The trunk up +Y, the branches fanned out round its tip. */
static void build(tree *t, const shape *s) {
  int b, i;
  memset(t, 0, sizeof *t);
  t->count = 1 + s->branches;
  for (b = 0; b < t->count; b++) {
    const int n = b == 0 ? s->trunk_joints : s->branch_joints;
    const ik_real bone = b == 0 ? s->trunk_bone : s->branch_bone;
    const double a = 6.283185307179586 * (double)(b - 1) / (double)s->branches;
    const ik_vec3 dir =
        b == 0 ? ik_vec3_make(0, 1, 0) : ik_vec3_normalize(ik_vec3_make((ik_real)cos(a), 1, (ik_real)sin(a)));
    ik_chain c;
    const ik_vec3 from = b == 0 ? ik_vec3_zero() : t->p[0][s->trunk_joints - 1];
    for (i = 0; i < n; i++) t->p[b][i] = t->start[b][i] = ik_vec3_madd(from, dir, bone * (ik_real)i);
    for (i = 0; i + 1 < n; i++) t->len[b][i] = bone;
    ik_chain_init(&c, t->p[b], n, t->len[b]);
    ik_tree_branch_init(&t->br[b], &c, b == 0 ? -1 : 0, ik_vec3_zero());
  }
  ik_tree_job_init(&t->job, t->br, t->count);
}

static ik_vec3 random_unit(unsigned long long *rng) {
  for (;;) {
    const ik_vec3 v =
        ik_vec3_make((ik_real)(2 * bench_uniform(rng) - 1), (ik_real)(2 * bench_uniform(rng) - 1),
                     (ik_real)(2 * bench_uniform(rng) - 1));
    const ik_real l2 = ik_vec3_len2(v);
    if (l2 > (ik_real)0.01 && l2 <= 1) return ik_vec3_scale(v, 1 / ik_sqrt(l2));
  }
}

/* Targets of set k: the tips of a random pose (each bone within ~1 rad of its rest). */
static void sample_targets(const tree *t, unsigned long long *rng, ik_vec3 *out) {
  ik_vec3 tip0 = ik_vec3_zero();
  int b, i;
  for (b = 0; b < t->count; b++) {
    const int n = t->br[b].chain.count;
    ik_vec3 at = b == 0 ? ik_vec3_zero() : tip0;
    for (i = 0; i + 1 < n; i++) {
      const ik_vec3 rest = ik_vec3_normalize(ik_vec3_sub(t->start[b][i + 1], t->start[b][i]));
      const ik_vec3 dir = ik_vec3_normalize(ik_vec3_madd(rest, random_unit(rng), (ik_real)0.8));
      at = ik_vec3_madd(at, dir, t->len[b][i]);
    }
    if (b == 0) tip0 = at;
    out[b] = at;
  }
}

static void reset(tree *t) { memcpy(t->p, t->start, sizeof t->p); }

static int run_tree(tree *t, const ik_vec3 *targets) {
  int b, reached = 0;
  reset(t);
  for (b = 1; b < t->count; b++) t->br[b].target = targets[b];
  ik_tree_job_run(&t->job);
  for (b = 1; b < t->count; b++) reached += t->br[b].result.reached;
  return reached;
}

/* The trunk towards the branch targets' centroid, then each branch from its tip. */
static int run_chains(tree *t, const ik_vec3 *targets) {
  ik_vec3 centroid = ik_vec3_zero();
  ik_fabrik_job job;
  int b, reached = 0;
  reset(t);
  for (b = 1; b < t->count; b++) centroid = ik_vec3_add(centroid, targets[b]);
  centroid = ik_vec3_scale(centroid, (ik_real)1 / (ik_real)(t->count - 1));
  ik_fabrik_job_init(&job, &t->br[0].chain, centroid);
  job.max_iterations = t->job.max_iterations;
  job.tolerance = t->job.tolerance;
  ik_fabrik_run(&job);
  for (b = 1; b < t->count; b++) {
    t->p[b][0] = t->p[0][t->br[0].chain.count - 1];
    ik_fabrik_job_init(&job, &t->br[b].chain, targets[b]);
    job.max_iterations = t->job.max_iterations;
    job.tolerance = t->job.tolerance;
    ik_fabrik_run(&job);
    reached += job.result.reached;
  }
  return reached;
}

static void bench(const shape *s, int sets, int iterations) {
  static ik_vec3 targets[4096][MAX_BRANCHES];
  static tree t;
  double tree_us[REPS], chain_us[REPS];
  unsigned long long rng = 0x9E3779B97F4A7C15ull;
  int k, r, tree_reached = 0, chain_reached = 0;
  build(&t, s);
  t.job.max_iterations = iterations;
  for (k = 0; k < sets; k++) sample_targets(&t, &rng, targets[k]);
  for (r = 0; r < REPS; r++) {
    double t0 = bench_now_s();
    tree_reached = chain_reached = 0;
    for (k = 0; k < sets; k++) tree_reached += run_tree(&t, targets[k]);
    tree_us[r] = (bench_now_s() - t0) * 1e6 / sets;
    t0 = bench_now_s();
    for (k = 0; k < sets; k++) chain_reached += run_chains(&t, targets[k]);
    chain_us[r] = (bench_now_s() - t0) * 1e6 / sets;
  }
  {
    const double tm = bench_median(tree_us, REPS), cm = bench_median(chain_us, REPS);
    const int effectors = sets * s->branches;
    printf(
        "%-24s %4d its  tree %8.2f us  chains %8.2f us  ratio %5.2f  reached tree %5.1f%%  chains %5.1f%%\n",
        s->name, iterations, tm, cm, tm / cm, 100.0 * tree_reached / effectors,
        100.0 * chain_reached / effectors);
  }
}

int main(int argc, char **argv) {
  static const shape shapes[] = {
      {"hand (5 fingers)", 3, 5, 4, (ik_real)0.04, (ik_real)0.03},
      {"spine with two arms", 4, 2, 4, (ik_real)0.15, (ik_real)0.28},
      {"8-arm tentacle gripper", 3, 8, 7, (ik_real)0.2, (ik_real)0.12},
  };
  const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const int sets = quick ? 16 : 4096;
  size_t i;
  printf(
      "median of %d runs over %d reachable target sets; tree: ik_tree_job_run, chains: the trunk then each\n"
      "branch with ik_fabrik_run (refined), the same iteration cap and tolerance 1e-3\n",
      REPS, sets);
  for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    bench(&shapes[i], sets, 10);
    bench(&shapes[i], sets, 50);
  }
  return 0;
}
