/*
 * bench_crowd_path: the crowd frame of bench_crowd.lua from C (ik_crowd.h), with no Lua,
 * against a 10-joint plain C FABRIK solve (bench_solvers' baseline) measured in the same
 * run: microseconds per character and frame at 100, 1,000 and 10,000 characters on 1 and
 * 2 threads, that as a multiple of the baseline solve, and bytes per character.
 *
 * The character and rig are bench_crowd.lua's: 18 bones, a 5-joint FABRIK spine towards
 * a point hung from the hips, two two-bone legs with poles whose targets the host moves
 * (a stride cycle) with a foot each on a heightfield of hills, two two-bone arms
 * reaching for points hung from the hips. The host's step writes roots and ankles into
 * the views in place.
 *
 *   build/release/tests/bench/bench_crowd_path [--quick] [--frames N]
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline_fabrik.h"
#include "bench_util.h"
#include "crowd_character.h"
#include "ik_crowd.h"

#define CELL 0.5
#define SPACING 2.5

static double hill(double x, double z) {
  return 0.4 * sin(x * 0.21) * cos(z * 0.17) + 0.15 * sin(x * 0.53 + z * 0.41);
}

static ik_vec3 v3(double x, double y, double z) { return ik_vec3_make((ik_real)x, (ik_real)y, (ik_real)z); }

/* The rig: spine, legs (host targets, poles, feet), arms; chains in bench_crowd.lua's order. */
static void rig(ik_crowd_chain_desc *d) {
  static const int legs[2][3] = {{12, 13, 14}, {15, 16, 17}}, arms[2][3] = {{6, 7, 8}, {9, 10, 11}};
  int j, k;
  ik_crowd_chain_desc_init(&d[0]);
  d[0].count = 5;
  for (k = 0; k < 5; k++) d[0].bones[k] = 1 + k;
  d[0].target_bone = 0;
  d[0].target_offset = v3(0, 0.5, 0.12);
  for (j = 0; j < 2; j++) {
    const double side = j ? -1 : 1;
    ik_crowd_chain_desc *leg = &d[1 + j], *arm = &d[3 + j];
    ik_crowd_chain_desc_init(leg);
    ik_crowd_chain_desc_init(arm);
    for (k = 0; k < 3; k++) leg->bones[k] = legs[j][k], arm->bones[k] = arms[j][k];
    leg->pole_bone = 0;
    leg->pole_offset = v3(0.1 * side, -0.4, 1);
    leg->has_foot = 1;
    leg->foot.foot_offset = (ik_real)0.08;
    arm->target_bone = 0;
    arm->target_offset = v3(0.25 * side, 0.2, 0.2);
    arm->pole_bone = 0;
    arm->pole_offset = v3(0.5 * side, 0.4, -1);
  }
}

/* The host's step: hips forward over the hills, ankles in a stride cycle. */
static void animate(ik_crowd *c, int n, double t) {
  const ik_crowd_view roots = ik_crowd_get_view(c, IK_CROWD_ROOTS),
                      targets = ik_crowd_get_view(c, IK_CROWD_TARGETS);
  const int side = (int)ceil(sqrt((double)n));
  const double span = side * SPACING;
  int k, s;
  for (k = 0; k < n; k++) {
    ik_real *r = roots.data + (size_t)k * (size_t)roots.stride,
            *g = targets.data + (size_t)k * (size_t)targets.stride;
    const double x = 5 + (k % side) * SPACING, z = 5 + fmod((k / side) * SPACING + 1.4 * t, span);
    const double phase = fmod(fmod((k + 1) * 0.37, 1) + 0.9 * t, 1) * 2 * 3.14159265358979;
    r[0] = (ik_real)x, r[1] = (ik_real)(hill(x, z) + 0.88 + 0.03 * cos(2 * phase)), r[2] = (ik_real)z;
    for (s = 0; s < 2; s++) {
      const double a = phase + (s ? 3.14159265358979 : 0), lift = sin(a);
      const double px = x + (s ? -0.1 : 0.1), pz = z + 0.25 * cos(a);
      g[3 * s] = (ik_real)px, g[3 * s + 2] = (ik_real)pz;
      g[3 * s + 1] = (ik_real)(hill(px, pz) + 0.05 + (lift > 0 ? 0.12 * lift : 0));
    }
  }
}

/* Microseconds of one 10-joint plain FABRIK solve (straight unit bones, random targets
 * within 0.1 to 0.95 of the reach, tolerance 1e-4 of it, at most 20 sweeps, cold start):
 * the median of passes over 200 targets. */
static double baseline_us(int passes) {
  enum { JOINTS = 10, TARGETS = 200 };
  ik_vec3 p[JOINTS], targets[TARGETS];
  ik_real len[JOINTS - 1];
  double times[64];
  unsigned long long seed = 42;
  int i, t, pass, it;
  for (i = 0; i < JOINTS - 1; i++) len[i] = 1;
  for (t = 0; t < TARGETS; t++) {
    const double u = 2 * bench_uniform(&seed) - 1, a = 2 * 3.14159265358979 * bench_uniform(&seed);
    const double r = (JOINTS - 1) * (0.1 + 0.85 * bench_uniform(&seed)), q = sqrt(1 - u * u);
    targets[t] = v3(r * q * cos(a), r * q * sin(a), r * u);
  }
  for (pass = 0; pass < passes; pass++) {
    const double t0 = bench_now_s();
    for (t = 0; t < TARGETS; t++) {
      for (i = 0; i < JOINTS; i++) p[i] = v3(i, 0, 0);
      baseline_fabrik(p, len, JOINTS, targets[t], 20, (ik_real)(1e-4 * (JOINTS - 1)), &it);
    }
    times[pass] = (bench_now_s() - t0) * 1e6 / TARGETS;
  }
  return bench_median(times, passes);
}

int main(int argc, char **argv) {
  static const int sizes[3] = {100, 1000, 10000};
  int quick = 0, frames = 60, i, si, threads;
  ik_bone_desc d[BONES];
  ik_crowd_chain_desc chains[5];
  ik_skeleton *sk;
  ik_crowd_template *tpl;
  ik_ground *ground;
  ik_real *heights;
  void *sk_mem, *tpl_mem, *ground_mem;
  int columns;
  double base;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
      frames = 3;
    } else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 2) {
      frames = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_crowd_path [--quick] [--frames N]\n");
      return 2;
    }
  }
  for (i = 0; i < BONES; i++) {
    ik_bone_desc_init(&d[i]);
    d[i].parent = crowd_parents[i];
    d[i].position = v3(crowd_offsets[i][0], crowd_offsets[i][1], crowd_offsets[i][2]);
  }
  sk_mem = malloc(ik_skeleton_size(BONES));
  tpl_mem = malloc(ik_crowd_template_size(BONES));
  rig(chains);
  if (ik_skeleton_init(sk_mem, ik_skeleton_size(BONES), d, BONES, &sk, NULL) != IK_OK ||
      ik_crowd_template_init(tpl_mem, ik_crowd_template_size(BONES), sk, chains, 5, &tpl, NULL) != IK_OK)
    return 1;
  columns = (int)((100 * SPACING + 20) / CELL) + 1; /* room for 10,000 */
  heights = (ik_real *)malloc(sizeof(ik_real) * (size_t)columns * (size_t)columns);
  for (i = 0; i < columns * columns; i++)
    heights[i] = (ik_real)hill((i % columns) * CELL, (i / columns) * CELL);
  ground_mem = malloc(ik_ground_heightfield_size(columns, columns));
  if (ik_ground_heightfield_init(ground_mem, ik_ground_heightfield_size(columns, columns), v3(0, 0, 0),
                                 (ik_real)CELL, columns, columns, heights, &ground, NULL) != IK_OK)
    return 1;
  base = baseline_us(quick ? 3 : 31);
  printf("ik_real = %s; %d frames a size (median); one 10-joint plain FABRIK solve (baseline): %.3f us\n\n",
         sizeof(ik_real) == sizeof(double) ? "double" : "float", frames, base);
  printf("%-11s %-8s %10s %14s %12s %12s %10s\n", "characters", "threads", "frame ms", "us/character",
         "x baseline", "bytes/char", "reached");
  for (si = 0; si < (quick ? 1 : 3); si++) {
    const int n = sizes[si];
    const size_t size = ik_crowd_size(tpl, n);
    for (threads = 1; threads <= 2; threads++) {
      void *mem = malloc(size);
      ik_crowd *c;
      double *ms = (double *)malloc(sizeof(double) * (size_t)frames), frame;
      int f, reached = 0;
      if (ik_crowd_init(mem, size, tpl, n, ground, &c, NULL) != IK_OK || ik_crowd_start(c, threads) != IK_OK)
        return 1;
      for (i = 0; i < n; i++) ik_crowd_add(c);
      for (f = 0; f < frames; f++) {
        const double t0 = bench_now_s();
        animate(c, n, f / 60.0);
        if (ik_crowd_solve(c, (ik_real)(1.0 / 60), &reached, NULL) != IK_OK) return 1;
        ms[f] = (bench_now_s() - t0) * 1e3;
      }
      frame = bench_median(ms, frames);
      printf("%-11d %-8d %10.3f %14.3f %12.1f %12zu %9.1f%%\n", n, threads, frame, frame * 1e3 / n,
             frame * 1e3 / n / base, size / (size_t)n, 100.0 * reached / (5.0 * n));
      ik_crowd_stop(c);
      free(ms);
      free(mem);
    }
  }
  printf(
      "\nframe ms: the host's step (roots and ankles into the views) and one ik_crowd_solve;\n"
      "x baseline: a character's share of the frame over one baseline solve (the target is 0.5)\n");
  free(ground_mem);
  free(heights);
  free(tpl_mem);
  free(sk_mem);
  return 0;
}
