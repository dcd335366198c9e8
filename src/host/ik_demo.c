/*
 * ik_demo: the built-in demo of the C core, in a terminal. A four-bone arm (FABRIK, a
 * cone at the shoulder, a hinged elbow, a pole) and a two-bone leg follow targets that
 * move in a figure of eight; each frame is drawn as text, side view (X right, Y up).
 *
 *   ik_demo [--frames N] [--every K] [--quiet]
 *
 * Prints a summary line at the end: frames, reached %, worst tip error, time per solve.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ik.h"

#define W 64
#define H 24

typedef struct canvas {
  char cell[H][W + 1];
} canvas;

static void canvas_clear(canvas *c) {
  int y;
  for (y = 0; y < H; y++) {
    memset(c->cell[y], ' ', W);
    c->cell[y][W] = '\0';
  }
}

/* World x in [-4, 4], y in [-3, 3] onto the grid. */
static void plot(canvas *c, ik_vec3 p, char ch) {
  int x = (int)(((double)p.x + 4) / 8 * (W - 1) + 0.5), y = (int)((3 - (double)p.y) / 6 * (H - 1) + 0.5);
  if (x >= 0 && x < W && y >= 0 && y < H) c->cell[y][x] = ch;
}

static void plot_bone(canvas *c, ik_vec3 a, ik_vec3 b) {
  int k;
  for (k = 1; k < 12; k++) plot(c, ik_vec3_lerp(a, b, (ik_real)k / 12), '.');
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int frames = 240, every = 40, quiet = 0, f, i, reached = 0;
  double worst = 0, solve_s = 0;
  ik_vec3 arm[5], arm_rest[5], leg[3];
  ik_real arm_len[4];
  ik_constraint arm_cons[4];
  ik_chain chain;
  canvas c;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--frames") && i + 1 < argc)
      frames = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--every") && i + 1 < argc)
      every = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quiet"))
      quiet = 1;
    else {
      fprintf(stderr, "usage: %s [--frames N] [--every K] [--quiet]\n", argv[0]);
      return 2;
    }
  }
  if (frames < 1 || every < 1) {
    fprintf(stderr, "%s: --frames and --every must be at least 1\n", argv[0]);
    return 2;
  }
  for (i = 0; i < 5; i++) arm_rest[i] = arm[i] = ik_vec3_make((ik_real)(-3.2 + 0.9 * i), (ik_real)0.5, 0);
  ik_measure_lengths(arm, 5, arm_len);
  memset(arm_cons, 0, sizeof arm_cons);
  arm_cons[0].type = IK_CONSTRAINT_CONE; /* shoulder: within 80 degrees of "forward" */
  arm_cons[0].angle = (ik_real)1.4;
  arm_cons[2].type = IK_CONSTRAINT_HINGE; /* elbow: bends one way only */
  arm_cons[2].axis = ik_vec3_make(0, 0, 1);
  arm_cons[2].min = (ik_real)-2.6; /* clockwise: the elbow stays up, on the pole's side */
  arm_cons[2].max = 0;
  ik_chain_init(&chain, arm, 5, arm_len);
  chain.constraints = arm_cons;
  chain.rest_positions = arm_rest;
  chain.base_direction = ik_vec3_make(1, 0, 0);
  chain.has_pole = 1;
  chain.pole = ik_vec3_make(-1, 3, 0);
  leg[0] = ik_vec3_make(2, 0, 0);
  leg[1] = ik_vec3_make((ik_real)2.3, -1, 0);
  leg[2] = ik_vec3_make(2, -2, 0);

  for (f = 0; f < frames; f++) {
    double t = f / 60.0;
    ik_vec3 hand = ik_vec3_make((ik_real)(-1.2 + 1.3 * sin(t * 1.7)), (ik_real)(0.9 + 0.9 * sin(t * 3.4)), 0);
    ik_vec3 foot = ik_vec3_make((ik_real)(2 + 0.8 * cos(t * 2)), (ik_real)(-1.6 + 0.3 * sin(t * 2)), 0);
    ik_fabrik_job arm_job;
    ik_two_bone_job leg_job;
    double t0;
    ik_fabrik_job_init(&arm_job, &chain, hand);
    arm_job.max_iterations = 30;
    ik_two_bone_job_init(&leg_job, leg, foot);
    leg_job.has_pole = 1;
    leg_job.pole = ik_vec3_make(4, -1, 0);
    leg_job.softness = (ik_real)0.05;
    t0 = now_s();
    ik_fabrik_run(&arm_job);
    ik_two_bone_run(&leg_job);
    solve_s += now_s() - t0;
    reached += arm_job.result.reached;
    if ((double)arm_job.result.distance > worst) worst = (double)arm_job.result.distance;
    if (!quiet && f % every == 0) {
      canvas_clear(&c);
      for (i = 0; i < 4; i++) plot_bone(&c, arm[i], arm[i + 1]);
      for (i = 0; i < 2; i++) plot_bone(&c, leg[i], leg[i + 1]);
      for (i = 0; i < 5; i++) plot(&c, arm[i], 'o');
      for (i = 0; i < 3; i++) plot(&c, leg[i], 'o');
      plot(&c, hand, 'X');
      plot(&c, foot, 'X');
      plot(&c, chain.pole, 'P');
      printf("frame %d: arm %s (%.4f off, %d iterations), leg %s\n", f,
             arm_job.result.reached ? "reached" : "short", (double)arm_job.result.distance,
             arm_job.result.iterations, leg_job.result.reached ? "reached" : "short");
      for (i = 0; i < H; i++) printf("|%s|\n", c.cell[i]);
    }
  }
  printf("ik_demo: %d frames, arm reached %.1f%%, worst tip error %.4f, %.2f us per frame (arm + leg)\n",
         frames, 100.0 * reached / frames, worst, solve_s / frames * 1e6);
  return 0;
}
