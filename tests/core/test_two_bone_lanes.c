/*
 * test_two_bone_lanes.c: ik__two_bone_run_lanes (ik_internal.h) against ik_two_bone_run,
 * byte for byte, for every instruction set built here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ik_internal.h" /* ik__two_bone_lanes */
#include "test_util.h"

#define LANES IK__TWO_BONE_LANES

/* What a lane's limb is made to test. */
typedef enum shape {
  S_INSIDE,      /* target within reach */
  S_OUTSIDE,     /* beyond reach */
  S_AT_START,    /* target on the start, or a rounding away */
  S_FULL_REACH,  /* target at exactly the bones' sum */
  S_FULL_FOLD,   /* at exactly their difference */
  S_POLE_ON_AIM, /* the pole on the start-target line */
  S_ZERO_BONE,   /* a bone of no length */
  S_BAD_VALUE,   /* NaN, infinity or a coordinate out of range somewhere */
  S_STRAIGHT,    /* mid on the start-end line, target near that line */
  S_MID_ON_AIM,  /* mid exactly on the start-target line, limb bent */
  S_EQUAL_BONES, /* equal bones, target near the start */
  S_ON_LINE,     /* straight or folded limb, target and pole on its line */
  S_COUNT
} shape;

static ik_real u(t_rng *r, double lo, double hi) { return (ik_real)t_uniform(r, lo, hi); }
static ik_vec3 scaled_unit(t_rng *r, ik_real s) { return ik_vec3_scale(t_unit_vector(r), s); }

static ik_real bad_value(t_rng *r) {
  switch (t_int(r, 0, 4)) {
    case 0:
      return (ik_real)NAN;
    case 1:
      return (ik_real)INFINITY;
    case 2:
      return -(ik_real)INFINITY;
    case 3:
      return IK_REAL_MAX_COORD * (ik_real)1.5;
    default:
      return IK_REAL_MAX_COORD * (ik_real)0.6; /* in range, but sums may not be */
  }
}

/* A random limb of the given shape: positions p, target t, pole q. */
static void random_limb(t_rng *r, shape s, ik_vec3 *p, ik_vec3 *t, ik_vec3 *q) {
  const ik_real l0 = u(r, 0.1, 2), l1 = s == S_EQUAL_BONES ? l0 : u(r, 0.1, 2);
  const ik_vec3 d0 = t_unit_vector(r);
  ik_vec3 aim;
  ik_real *coord;
  p[0] = ik_vec3_make(u(r, -50, 50), u(r, -50, 50), u(r, -50, 50));
  p[1] = ik_vec3_madd(p[0], d0, l0);
  p[2] = ik_vec3_madd(p[1], t_unit_vector(r), l1);
  aim = t_unit_vector(r);
  *t = ik_vec3_madd(p[0], aim, (l0 + l1) * u(r, 0.02, 0.99));
  *q = ik_vec3_add(p[0], scaled_unit(r, u(r, 0.1, 5)));
  switch (s) {
    case S_INSIDE:
      break;
    case S_OUTSIDE:
      *t = ik_vec3_madd(p[0], aim, (l0 + l1) * u(r, 1.0, 5));
      break;
    case S_AT_START:
      *t = t_int(r, 0, 1) ? p[0] : ik_vec3_add(p[0], scaled_unit(r, IK_REAL_EPSILON * u(r, 0.1, 4)));
      break;
    case S_FULL_REACH:
      *t = ik_vec3_madd(p[0], aim, l0 + l1);
      break;
    case S_FULL_FOLD:
      *t = ik_vec3_madd(p[0], aim, ik_fabs(l0 - l1));
      break;
    case S_POLE_ON_AIM:
      *q = ik_vec3_madd(p[0], ik_vec3_sub(*t, p[0]), u(r, -2, 3));
      break;
    case S_ZERO_BONE:
      if (t_int(r, 0, 1))
        p[1] = t_int(r, 0, 1) ? p[0] : ik_vec3_add(p[0], scaled_unit(r, IK_REAL_EPSILON * (ik_real)0.5));
      else
        p[2] = p[1];
      break;
    case S_BAD_VALUE:
      coord = t_int(r, 0, 2) == 0 ? &t->x : (t_int(r, 0, 1) ? &q->y : &p[t_int(r, 0, 2)].z);
      *coord = bad_value(r);
      break;
    case S_STRAIGHT:
      p[2] = ik_vec3_madd(p[1], d0, l1);
      *t = ik_vec3_madd(p[0],
                        ik_vec3_normalize(ik_vec3_add(d0, scaled_unit(r, (ik_real)pow(10, -t_int(r, 1, 8))))),
                        (l0 + l1) * u(r, 0.3, 1.5));
      *q = ik_vec3_madd(p[0], d0, u(r, 0.5, 2));
      break;
    case S_MID_ON_AIM:
      *t = ik_vec3_madd(p[0], d0, (l0 + l1) * u(r, 0.2, 1.5));
      break;
    case S_ON_LINE:
      p[2] = ik_vec3_madd(p[1], d0, t_int(r, 0, 1) ? l1 : -l1);
      *t = ik_vec3_madd(p[0], d0, (l0 + l1) * u(r, -1.5, 1.5));
      *q = ik_vec3_madd(p[0], d0, u(r, -2, 2));
      break;
    case S_EQUAL_BONES:
      *t = ik_vec3_add(p[0], scaled_unit(r, l0 * (ik_real)pow(10, -t_int(r, 0, 7))));
      break;
    default:
      break;
  }
}

static void put(ik_real (*at)[LANES], int e, ik_vec3 v) { at[0][e] = v.x, at[1][e] = v.y, at[2][e] = v.z; }

/* A lane set of n limbs, each of shape `s` (or any shape when s is S_COUNT); lanes past n
 * hold a byte pattern that must survive. */
static void random_lanes(ik__two_bone_lanes *l, t_rng *r, int n, int has_pole, shape s) {
  int e, j;
  memset(l, 0xA5, sizeof *l);
  l->n = n;
  l->has_pole = has_pole;
  l->tolerance = (ik_real)1e-3;
  for (e = 0; e < n; e++) {
    ik_vec3 p[3], t, q;
    random_limb(r, s == S_COUNT ? (shape)t_int(r, 0, S_COUNT - 1) : s, p, &t, &q);
    for (j = 0; j < 3; j++) put(l->p[j], e, p[j]);
    put(l->target, e, t);
    put(l->pole, e, q);
  }
}

/* What ik_two_bone_run gives each lane's job, written into the same layout. */
static void run_jobs(ik__two_bone_lanes *l) {
  int e, j;
  for (e = 0; e < l->n; e++) {
    ik_vec3 p[3];
    ik_two_bone_job job;
    for (j = 0; j < 3; j++) p[j] = ik_vec3_make(l->p[j][0][e], l->p[j][1][e], l->p[j][2][e]);
    ik_two_bone_job_init(&job, p, ik_vec3_make(l->target[0][e], l->target[1][e], l->target[2][e]));
    job.has_pole = l->has_pole;
    job.pole = l->has_pole ? ik_vec3_make(l->pole[0][e], l->pole[1][e], l->pole[2][e]) : ik_vec3_zero();
    job.tolerance = l->tolerance;
    l->status[e] = ik_two_bone_run(&job);
    for (j = 1; j < 3; j++) put(l->p[j], e, p[j]);
    l->distance[e] = job.result.distance;
  }
}

/* Runs `run` on a copy of l and the jobs on another, and compares every byte but the
 * redone mask: lanes past n untouched, the others as the jobs left them. Returns how
 * many lanes the kernel left to the scalar job. */
static int check_against_jobs(ik__two_bone_lanes_fn run, const ik__two_bone_lanes *l) {
  static ik__two_bone_lanes want, got;
  unsigned redone;
  int e, count = 0;
  memcpy(&want, l, sizeof want);
  memcpy(&got, l, sizeof got);
  run_jobs(&want);
  run(&got);
  redone = got.redone;
  got.redone = want.redone;
  assert_memory_equal(&want, &got, sizeof want);
  for (e = 0; e < l->n; e++) count += (int)(redone >> e & 1);
  assert_int_equal(redone >> l->n, 0);
  return count;
}

/* Every instruction set, every shape, every lane count, with and without a pole: the
 * jobs' bytes. */
static void lanes_give_the_jobs_bytes(void **state) {
  static ik__two_bone_lanes l;
  t_rng r = t_rng_make(2201);
  const int cases = t_cases(400);
  int isa, s, k, tested = 0, redone, lanes;
  (void)state;
  for (isa = 0; isa < 4; isa++) {
    const ik__two_bone_lanes_fn run = ik__two_bone_lanes_variant(isa);
    if (!run) continue;
    tested++;
    for (s = 0; s <= S_COUNT; s++) {
      redone = lanes = 0;
      for (k = 0; k < cases; k++) {
        random_lanes(&l, &r, 1 + k % LANES, (k / LANES) % 2, (shape)s);
        redone += check_against_jobs(run, &l);
        lanes += l.n;
      }
      if (isa == 0)
        printf("two-bone lanes, shape %d: %d of %d lanes redone by the scalar job\n", s, redone, lanes);
    }
  }
  assert_true(tested >= 2);
}

/* Settings every lane shares, out of range: each lane refused as its job is. */
static void bad_tolerance_is_each_jobs_refusal(void **state) {
  static ik__two_bone_lanes l;
  const ik_real bad[] = {-1, (ik_real)NAN, (ik_real)INFINITY};
  t_rng r = t_rng_make(2202);
  int isa, i;
  (void)state;
  for (isa = 0; isa < 4; isa++) {
    const ik__two_bone_lanes_fn run = ik__two_bone_lanes_variant(isa);
    if (!run) continue;
    for (i = 0; i < 3; i++) {
      random_lanes(&l, &r, LANES, i % 2, S_INSIDE);
      l.tolerance = bad[i];
      check_against_jobs(run, &l);
      run(&l);
      assert_int_equal(l.status[0], i == 0 ? IK_E_TOLERANCE : IK_E_NOT_FINITE);
    }
  }
}

/* No lane used, or more asked than there are: nothing past the lanes is read or written. */
static void lane_count_is_held_to_the_lanes(void **state) {
  static ik__two_bone_lanes l, before;
  t_rng r = t_rng_make(2204);
  int isa;
  (void)state;
  for (isa = 0; isa < 4; isa++) {
    const ik__two_bone_lanes_fn run = ik__two_bone_lanes_variant(isa);
    if (!run) continue;
    random_lanes(&l, &r, LANES, 1, S_INSIDE);
    l.n = 0;
    memcpy(&before, &l, sizeof l);
    run(&l);
    l.redone = before.redone;
    assert_memory_equal(&before, &l, sizeof l);
    l.n = LANES + 5;
    run(&l);
    assert_int_equal(l.redone >> LANES, 0);
    assert_int_equal(l.status[LANES - 1], IK_OK);
  }
}

/* The common case stays in the vectors: random limbs reaching and walking (the previous
 * solve's pose, the target moved a little), with and without a pole, go to the scalar
 * job rarely; the rare shapes go to it as designed. */
static void common_limbs_stay_in_the_lanes(void **state) {
  static ik__two_bone_lanes l;
  t_rng r = t_rng_make(2203);
  const ik__two_bone_lanes_fn run = ik__two_bone_lanes_variant(0);
  const int cases = t_cases(2000);
  int has_pole, k, e, j, redone, lanes;
  (void)state;
  if (run == ik__two_bone_lanes_variant(2)) skip(); /* built without vector code: all scalar */
  for (has_pole = 0; has_pole < 2; has_pole++) {
    redone = lanes = 0;
    for (k = 0; k < cases; k++) {
      random_lanes(&l, &r, LANES, has_pole, k % 2 ? S_INSIDE : S_OUTSIDE);
      redone += check_against_jobs(run, &l);
      lanes += LANES;
    }
    printf("two-bone lanes, %s pole: %d of %d random reaching limbs redone by the scalar job\n",
           has_pole ? "with a" : "no", redone, lanes);
    assert_true(redone * 100 <= lanes);
    redone = lanes = 0;
    for (k = 0; k < cases; k++) { /* solved, then solved again for the same target: held */
      random_lanes(&l, &r, LANES, has_pole, k % 2 ? S_INSIDE : S_OUTSIDE);
      run(&l);
      redone += check_against_jobs(run, &l);
      lanes += LANES;
    }
    printf("two-bone lanes, %s pole: %d of %d limbs holding their targets redone by the scalar job\n",
           has_pole ? "with a" : "no", redone, lanes);
    assert_true(redone * 100 <= lanes);
    redone = lanes = 0;
    random_lanes(&l, &r, LANES, has_pole, S_INSIDE);
    for (k = 0; k < cases; k++) {
      run(&l);
      for (e = 0; e < LANES; e++) { /* each target walks on from where the limb now is */
        const ik_vec3 step = scaled_unit(&r, u(&r, 0, 0.3));
        for (j = 0; j < 3; j++) l.target[j][e] += j == 0 ? step.x : (j == 1 ? step.y : step.z);
      }
      redone += check_against_jobs(run, &l);
      lanes += LANES;
    }
    printf("two-bone lanes, %s pole: %d of %d walking limbs redone by the scalar job\n",
           has_pole ? "with a" : "no", redone, lanes);
    assert_true(redone * 100 <= lanes);
  }
  for (k = 0; k < 50; k++) {
    random_lanes(&l, &r, LANES, 1, S_INSIDE);
    memcpy(l.target, l.p[0], sizeof l.target);
    run(&l);
    assert_int_equal(l.redone, (1u << LANES) - 1);
    random_lanes(&l, &r, LANES, k % 2, S_ZERO_BONE);
    run(&l);
    assert_int_equal(l.redone, (1u << LANES) - 1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lanes_give_the_jobs_bytes),
      cmocka_unit_test(bad_tolerance_is_each_jobs_refusal),
      cmocka_unit_test(lane_count_is_held_to_the_lanes),
      cmocka_unit_test(common_limbs_stay_in_the_lanes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
