/* ik_math: every function by behaviour, known cases first, then seeded random
 * properties, then the degenerate inputs that must never give NaN. */
#include <float.h>
#include <string.h>

#include "test_util.h"

#define N_RANDOM 5000

/* Results computed in a handful of roundings of unit-sized values: a few epsilons. */
#ifdef IK_REAL_FLOAT
#define T_TIGHT 2e-6
#define T_DENORMAL 1e-40f
#define T_HUGE 1e30f /* its square overflows float */
#else
#define T_TIGHT 1e-13
#define T_DENORMAL 1e-310
#define T_HUGE 1e200 /* its square overflows double */
#endif

static const ik_vec3 AXES[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};

static ik_vec3 vx(void) { return ik_vec3_make(1, 0, 0); }
static ik_vec3 vy(void) { return ik_vec3_make(0, 1, 0); }
static ik_vec3 vz(void) { return ik_vec3_make(0, 0, 1); }

static ik_real r_real(t_rng *r, double lo, double hi) { return (ik_real)t_uniform(r, lo, hi); }

/* A random vector of random length (not unit). */
static ik_vec3 random_vector(t_rng *r) { return ik_vec3_scale(t_unit_vector(r), r_real(r, 0.01, 100)); }

static ik_vec3 quat_axis(ik_quat q) { return ik_vec3_make(q.x, q.y, q.z); }

static void assert_finite_quat(ik_quat q) { assert_true(ik_quat_is_finite(q)); }

static void assert_unit_quat(ik_quat q) {
  assert_finite_quat(q);
  assert_near(ik_quat_dot(q, q), 1, T_EPS);
}

/* Same rotation, checked on vectors: nothing in the comparison trusts quaternion maths. */
static void assert_same_rotation_on_vectors(ik_quat a, ik_quat b, double tol) {
  int i;
  for (i = 0; i < 6; i += 2) {
    assert_vec3_near(ik_quat_rotate(a, AXES[i]), ik_quat_rotate(b, AXES[i]), tol);
  }
}

/* Rodrigues' formula: rotation of v by `angle` about the unit n, without quaternions. */
static ik_vec3 rodrigues(ik_vec3 n, ik_real angle, ik_vec3 v) {
  const ik_real c = ik_cos(angle), s = ik_sin(angle);
  return ik_vec3_add(ik_vec3_add(ik_vec3_scale(v, c), ik_vec3_scale(ik_vec3_cross(n, v), s)),
                     ik_vec3_scale(n, ik_vec3_dot(n, v) * (1 - c)));
}

/* ---- scalars ---- */

static void real_is_finite_rejects_nan_and_inf(void **state) {
  (void)state;
  assert_true(ik_real_is_finite(0));
  assert_true(ik_real_is_finite(-1));
  assert_true(ik_real_is_finite((ik_real)T_DENORMAL));
  assert_true(ik_real_is_finite((ik_real)T_HUGE));
  assert_false(ik_real_is_finite((ik_real)NAN));
  assert_false(ik_real_is_finite((ik_real)INFINITY));
  assert_false(ik_real_is_finite(-(ik_real)INFINITY));
  assert_true(ik_vec3_is_finite(ik_vec3_make(1, 2, 3)));
  assert_false(ik_vec3_is_finite(ik_vec3_make(1, (ik_real)NAN, 3)));
  assert_false(ik_vec3_is_finite(ik_vec3_make(1, 2, (ik_real)INFINITY)));
  assert_true(ik_quat_is_finite(ik_quat_identity()));
  assert_false(ik_quat_is_finite(ik_quat_make(0, 0, 0, (ik_real)NAN)));
  assert_false(ik_quat_is_finite(ik_quat_make((ik_real)-INFINITY, 0, 0, 1)));
}

static void clamp_and_acos_safe(void **state) {
  (void)state;
  assert_true(ik_clamp(-2, -1, 1) == -1);
  assert_true(ik_clamp(2, -1, 1) == 1);
  assert_true(ik_clamp((ik_real)0.25, -1, 1) == (ik_real)0.25);
  assert_true(ik_clamp(1, -1, 1) == 1);
  assert_near(ik_acos_safe((ik_real)0.5), IK_PI / 3, T_TIGHT);
  /* Rounding just outside [-1, 1] must not give NaN. */
  assert_near(ik_acos_safe(1 + 4 * IK_REAL_EPSILON), 0, 0);
  assert_near(ik_acos_safe(-1 - 4 * IK_REAL_EPSILON), IK_PI, T_TIGHT);
}

/* ---- vec3 ---- */

static void vec3_arithmetic_on_known_values(void **state) {
  const ik_vec3 a = ik_vec3_make(1, 2, 3), b = ik_vec3_make(-4, (ik_real)0.5, 2);
  (void)state;
  assert_vec3_near(ik_vec3_zero(), ik_vec3_make(0, 0, 0), 0);
  assert_vec3_near(ik_vec3_add(a, b), ik_vec3_make(-3, (ik_real)2.5, 5), 0);
  assert_vec3_near(ik_vec3_sub(a, b), ik_vec3_make(5, (ik_real)1.5, 1), 0);
  assert_vec3_near(ik_vec3_scale(a, -2), ik_vec3_make(-2, -4, -6), 0);
  assert_vec3_near(ik_vec3_neg(a), ik_vec3_make(-1, -2, -3), 0);
  assert_vec3_near(ik_vec3_madd(a, b, 2), ik_vec3_make(-7, 3, 7), 0);
  assert_near(ik_vec3_dot(a, b), -4 + 1 + 6, 0);
  assert_near(ik_vec3_len2(ik_vec3_make(3, 4, 12)), 169, 0);
  assert_near(ik_vec3_len(ik_vec3_make(3, 4, 12)), 13, 0);
  assert_near(ik_vec3_dist2(ik_vec3_make(1, 1, 1), ik_vec3_make(4, 5, 13)), 169, 0);
  assert_near(ik_vec3_dist(ik_vec3_make(1, 1, 1), ik_vec3_make(4, 5, 13)), 13, 0);
  assert_vec3_near(ik_vec3_lerp(a, b, 0), a, 0);
  assert_vec3_near(ik_vec3_lerp(a, b, 1), b, 0);
  assert_vec3_near(ik_vec3_lerp(a, b, (ik_real)0.5), ik_vec3_make((ik_real)-1.5, (ik_real)1.25, (ik_real)2.5),
                   0);
  assert_vec3_near(ik_vec3_lerp(a, b, 2), ik_vec3_make(-9, -1, 1), T_TIGHT);
}

/* Right-handed: X x Y = Z and cyclically. */
static void cross_is_right_handed(void **state) {
  (void)state;
  assert_vec3_near(ik_vec3_cross(vx(), vy()), vz(), 0);
  assert_vec3_near(ik_vec3_cross(vy(), vz()), vx(), 0);
  assert_vec3_near(ik_vec3_cross(vz(), vx()), vy(), 0);
  assert_vec3_near(ik_vec3_cross(vy(), vx()), ik_vec3_neg(vz()), 0);
  assert_vec3_near(ik_vec3_cross(vx(), vx()), ik_vec3_zero(), 0);
}

static void vec3_random_properties(void **state) {
  t_rng r = t_rng_make(1);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 a = random_vector(&r), b = random_vector(&r);
    const ik_vec3 c = ik_vec3_cross(a, b);
    const ik_real scale = ik_vec3_len(a) * ik_vec3_len(b);
    const ik_real t = r_real(&r, -1, 2);
    /* Cross: perpendicular to both, anti-commutative, |a x b| = |a||b| sin. */
    assert_near(ik_vec3_dot(c, a) / (scale * ik_vec3_len(a)), 0, T_TIGHT);
    assert_near(ik_vec3_dot(c, b) / (scale * ik_vec3_len(b)), 0, T_TIGHT);
    assert_vec3_near(ik_vec3_add(c, ik_vec3_cross(b, a)), ik_vec3_zero(), 0);
    assert_near(ik_vec3_len(c) / scale, ik_sin(ik_vec3_angle(a, b)), T_TIGHT);
    /* dot is symmetric and |a|^2 = a.a. */
    assert_true(ik_vec3_dot(a, b) == ik_vec3_dot(b, a));
    assert_near(ik_vec3_len(a) * ik_vec3_len(a) / ik_vec3_len2(a), 1, T_TIGHT);
    assert_near(ik_vec3_dist(a, b), ik_vec3_len(ik_vec3_sub(b, a)), T_TIGHT * (double)scale);
    /* sub undoes add; lerp lies on the line through a and b at t. */
    assert_vec3_near(ik_vec3_sub(ik_vec3_add(a, b), b), a, T_TIGHT * 100);
    assert_vec3_near(ik_vec3_lerp(a, b, t), ik_vec3_add(a, ik_vec3_scale(ik_vec3_sub(b, a), t)),
                     T_TIGHT * 200);
    assert_near(ik_vec3_dist(a, ik_vec3_lerp(a, b, t)), ik_fabs(t) * ik_vec3_dist(a, b), T_TIGHT * 400);
  }
}

static void normalize_known_and_random(void **state) {
  t_rng r = t_rng_make(2);
  int k;
  (void)state;
  assert_vec3_near(ik_vec3_normalize(ik_vec3_make(3, 0, -4)), ik_vec3_make((ik_real)0.6, 0, (ik_real)-0.8),
                   T_TIGHT);
  assert_vec3_near(ik_vec3_normalize(ik_vec3_make(0, -7, 0)), ik_vec3_make(0, -1, 0), 0);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 a = ik_vec3_scale(random_vector(&r), r_real(&r, 1e-3, 1e3));
    const ik_vec3 n = ik_vec3_normalize(a);
    assert_near(ik_vec3_len(n), 1, T_TIGHT);
    assert_near(ik_vec3_angle(n, a), 0, T_TIGHT);
    assert_vec3_near(ik_vec3_normalize_or(a, vx()), n, 0);
  }
}

/* Zero, denormal, tiny, infinite and NaN vectors have no direction: zero or the
 * fallback, as given, never NaN. */
static void normalize_without_direction_never_gives_nan(void **state) {
  const ik_real inf = (ik_real)INFINITY, nan = (ik_real)NAN;
  const ik_vec3 fallback = ik_vec3_make(0, 2, 0); /* not unit: returned as given */
  const ik_vec3 bad[] = {
      {0, 0, 0},
      {(ik_real)-0.0, 0, (ik_real)-0.0},
      {(ik_real)T_DENORMAL, 0, 0},
      {(ik_real)T_DENORMAL, -(ik_real)T_DENORMAL, (ik_real)T_DENORMAL},
      {0, (ik_real)(IK_REAL_EPSILON / 2), 0}, /* below IK_TINY_LEN2 */
      {inf, 0, 0},
      {1, -inf, 1},
      {inf, inf, -inf},
      {nan, 0, 0},
      {1, 1, nan},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const ik_vec3 n = ik_vec3_normalize(bad[i]);
    const ik_vec3 f = ik_vec3_normalize_or(bad[i], fallback);
    assert_true(ik_vec3_is_finite(n));
    assert_true(n.x == 0 && n.y == 0 && n.z == 0);
    assert_memory_equal(&f, &fallback, sizeof f);
  }
  /* Large but squarable vectors still have a direction. */
  assert_vec3_near(ik_vec3_normalize(ik_vec3_make(0, 0, (ik_real)1e15)), vz(), 0);
}

static void project_on_plane_removes_the_normal_part(void **state) {
  t_rng r = t_rng_make(3);
  int k;
  (void)state;
  assert_vec3_near(ik_vec3_project_on_plane(ik_vec3_make(1, 2, 3), vy()), ik_vec3_make(1, 0, 3), 0);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 a = random_vector(&r), n = t_unit_vector(&r);
    const ik_vec3 p = ik_vec3_project_on_plane(a, n);
    assert_near(ik_vec3_dot(p, n) / ik_vec3_len(a), 0, T_TIGHT);
    /* What was removed is along n. */
    assert_near(ik_vec3_len(ik_vec3_cross(ik_vec3_sub(a, p), n)) / ik_vec3_len(a), 0, T_TIGHT);
  }
}

static void assert_perpendicular_unit(ik_vec3 a) {
  const ik_vec3 p = ik_vec3_any_perpendicular(a);
  assert_true(ik_vec3_is_finite(p));
  assert_near(ik_vec3_len(p), 1, T_TIGHT);
  assert_near(ik_vec3_dot(p, a), 0, T_TIGHT);
}

static void any_perpendicular_is_unit_and_perpendicular(void **state) {
  t_rng r = t_rng_make(4);
  const ik_real third = (ik_real)0.57735026918962576; /* 1 / sqrt(3): the switch points */
  int k;
  (void)state;
  for (k = 0; k < 6; k++) assert_perpendicular_unit(AXES[k]);
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(1, 1, 1)));
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(-1, 1, -1)));
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(third, third, third)));
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(third, third * (1 + (ik_real)1e-6), third)));
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(1, 1, 0)));
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(0, 1, 1)));
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(1, 0, 1)));
  assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_make(1, (ik_real)1e-30, 0)));
  for (k = 0; k < N_RANDOM; k++) assert_perpendicular_unit(t_unit_vector(&r));
  /* Near every axis too, where a fixed helper axis would fail. */
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 jitter = ik_vec3_scale(t_unit_vector(&r), r_real(&r, 0, 1e-3));
    assert_perpendicular_unit(ik_vec3_normalize(ik_vec3_add(AXES[k % 6], jitter)));
  }
}

static void angle_is_unsigned_and_precise(void **state) {
  t_rng r = t_rng_make(5);
  int k;
  (void)state;
  assert_near(ik_vec3_angle(vx(), vy()), IK_PI / 2, T_TIGHT);
  assert_near(ik_vec3_angle(vx(), ik_vec3_make(-3, 0, 0)), IK_PI, T_TIGHT);
  assert_near(ik_vec3_angle(vx(), ik_vec3_make(5, 0, 0)), 0, 0);
  assert_near(ik_vec3_angle(vx(), ik_vec3_make(1, 1, 0)), IK_PI / 4, T_TIGHT);
  assert_near(ik_vec3_angle(ik_vec3_zero(), vx()), 0, 0);
  assert_near(ik_vec3_angle(ik_vec3_zero(), ik_vec3_zero()), 0, 0);
  /* Nearly parallel: acos of a dot product would give 0 here. */
  assert_near(ik_vec3_angle(vx(), ik_vec3_make(ik_cos((ik_real)1e-6), ik_sin((ik_real)1e-6), 0)), 1e-6,
              1e-6 * T_TIGHT);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 a = random_vector(&r), n = ik_vec3_normalize(ik_vec3_cross(a, t_unit_vector(&r)));
    const ik_real angle = r_real(&r, 0, 3.14159);
    const ik_vec3 b = ik_vec3_scale(rodrigues(n, angle, a), r_real(&r, 0.1, 10));
    assert_near(ik_vec3_angle(a, b), angle, T_TIGHT * 10);
    assert_near(ik_vec3_angle(b, a), angle, T_TIGHT * 10);
  }
}

/* Right-hand rule about n: X to Y is +90 degrees about +Z, -90 about -Z. */
static void signed_angle_follows_the_right_hand_rule(void **state) {
  t_rng r = t_rng_make(6);
  int k;
  (void)state;
  assert_near(ik_vec3_signed_angle(vx(), vy(), vz()), IK_PI / 2, T_TIGHT);
  assert_near(ik_vec3_signed_angle(vx(), vy(), ik_vec3_neg(vz())), -IK_PI / 2, T_TIGHT);
  assert_near(ik_vec3_signed_angle(vy(), vx(), vz()), -IK_PI / 2, T_TIGHT);
  assert_near(ik_vec3_signed_angle(vy(), vz(), vx()), IK_PI / 2, T_TIGHT);
  /* A half turn is +pi, the closed end of (-pi, pi]. */
  assert_near(ik_vec3_signed_angle(vx(), ik_vec3_neg(vx()), vz()), IK_PI, 0);
  /* Components along n do not count. */
  assert_near(ik_vec3_signed_angle(ik_vec3_make(1, 0, 5), ik_vec3_make(1, 1, -3), vz()), IK_PI / 4, T_TIGHT);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 n = t_unit_vector(&r);
    const ik_vec3 a = ik_vec3_add(ik_vec3_any_perpendicular(n), ik_vec3_scale(n, r_real(&r, -2, 2)));
    const ik_real angle = r_real(&r, -3.14, 3.14);
    const ik_vec3 b = rodrigues(n, angle, a);
    assert_near(ik_vec3_signed_angle(a, b, n), angle, T_TIGHT * 10);
    assert_near(ik_vec3_signed_angle(b, a, n), -angle, T_TIGHT * 10);
    assert_near(ik_vec3_signed_angle(a, b, ik_vec3_neg(n)), -angle, T_TIGHT * 10);
  }
}

/* ---- quaternion basics ---- */

static void identity_dot_and_make(void **state) {
  const ik_quat q = ik_quat_make(1, 2, 3, 4);
  (void)state;
  assert_true(q.x == 1 && q.y == 2 && q.z == 3 && q.w == 4);
  assert_true(ik_quat_identity().w == 1 && ik_quat_identity().x == 0);
  assert_near(ik_quat_dot(q, ik_quat_make(-1, 0, 1, (ik_real)0.5)), 4, 0);
  assert_vec3_near(ik_quat_rotate(ik_quat_identity(), ik_vec3_make(1, 2, 3)), ik_vec3_make(1, 2, 3), 0);
}

/* 90 degrees about +Y takes +Z to +X in a right-handed system; and cyclically. */
static void rotate_on_known_cases(void **state) {
  const ik_real h = IK_PI / 2;
  (void)state;
  assert_vec3_near(ik_quat_rotate(ik_quat_axis_angle(vy(), h), vz()), vx(), T_TIGHT);
  assert_vec3_near(ik_quat_rotate(ik_quat_axis_angle(vz(), h), vx()), vy(), T_TIGHT);
  assert_vec3_near(ik_quat_rotate(ik_quat_axis_angle(vx(), h), vy()), vz(), T_TIGHT);
  assert_vec3_near(ik_quat_rotate(ik_quat_axis_angle(vy(), -h), vx()), vz(), T_TIGHT);
  assert_vec3_near(ik_quat_rotate(ik_quat_axis_angle(vz(), IK_PI), vx()), ik_vec3_neg(vx()), T_TIGHT);
  /* The axis itself stays. */
  assert_vec3_near(ik_quat_rotate(ik_quat_axis_angle(vy(), (ik_real)1.234), ik_vec3_make(0, 3, 0)),
                   ik_vec3_make(0, 3, 0), T_TIGHT);
  /* Known components: 90 degrees about Z is (0, 0, sin 45, cos 45). */
  assert_quat_near(ik_quat_axis_angle(vz(), h),
                   ik_quat_make(0, 0, (ik_real)0.70710678118654752, (ik_real)0.70710678118654752), T_TIGHT);
}

static void rotate_matches_rodrigues(void **state) {
  t_rng r = t_rng_make(7);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 n = t_unit_vector(&r), v = random_vector(&r);
    const ik_real angle = r_real(&r, -7, 7);
    /* The axis need not be unit. */
    const ik_quat q = ik_quat_axis_angle(ik_vec3_scale(n, r_real(&r, 0.01, 50)), angle);
    const ik_vec3 rv = ik_quat_rotate(q, v);
    assert_unit_quat(q);
    assert_vec3_near(rv, rodrigues(n, angle, v), T_TIGHT * 10 * (double)ik_vec3_len(v));
    assert_near(ik_vec3_len(rv), ik_vec3_len(v), T_TIGHT * 10 * (double)ik_vec3_len(v));
    /* A rotation by angle a has quaternion angle |a| folded into [0, pi]. */
    {
      ik_real folded = ik_fabs(angle);
      while (folded > IK_PI) folded = ik_fabs(folded - 2 * IK_PI);
      assert_near(ik_quat_angle(q), folded, T_TIGHT * 10);
    }
  }
}

static void axis_angle_with_no_axis_is_identity(void **state) {
  const ik_real nan = (ik_real)NAN;
  (void)state;
  {
    const ik_quat q0 = ik_quat_axis_angle(ik_vec3_zero(), 1);
    const ik_quat q1 = ik_quat_axis_angle(ik_vec3_make((ik_real)T_DENORMAL, 0, 0), 2);
    const ik_quat q2 = ik_quat_axis_angle(ik_vec3_make(nan, 0, 0), 2);
    const ik_quat q3 = ik_quat_axis_angle(ik_vec3_make((ik_real)INFINITY, 0, 0), 2);
    const ik_quat id = ik_quat_identity();
    assert_memory_equal(&q0, &id, sizeof id);
    assert_memory_equal(&q1, &id, sizeof id);
    assert_memory_equal(&q2, &id, sizeof id);
    assert_memory_equal(&q3, &id, sizeof id);
  }
  /* Angle zero about any axis is identity too. */
  assert_quat_near(ik_quat_axis_angle(vx(), 0), ik_quat_identity(), 0);
}

/* q * r applies r first: checked on vectors. */
static void mul_composes_right_to_left(void **state) {
  t_rng r = t_rng_make(8);
  const ik_quat rz = ik_quat_axis_angle(vz(), IK_PI / 2), rx = ik_quat_axis_angle(vx(), IK_PI / 2);
  int k;
  (void)state;
  /* Rz90 * Rx90 takes +Y to Rz90(+Z) = +Z; the other order takes it to Rx90(-X) = -X. */
  assert_vec3_near(ik_quat_rotate(ik_quat_mul(rz, rx), vy()), vz(), T_TIGHT);
  assert_vec3_near(ik_quat_rotate(ik_quat_mul(rx, rz), vy()), ik_vec3_neg(vx()), T_TIGHT);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat a = t_unit_quat(&r), b = t_unit_quat(&r), c = t_unit_quat(&r);
    const ik_vec3 v = random_vector(&r);
    const double tol = T_TIGHT * 10 * (double)ik_vec3_len(v);
    assert_vec3_near(ik_quat_rotate(ik_quat_mul(a, b), v), ik_quat_rotate(a, ik_quat_rotate(b, v)), tol);
    assert_quat_near(ik_quat_mul(ik_quat_mul(a, b), c), ik_quat_mul(a, ik_quat_mul(b, c)), T_TIGHT * 10);
    assert_quat_near(ik_quat_mul(a, ik_quat_identity()), a, T_TIGHT);
    assert_quat_near(ik_quat_mul(ik_quat_identity(), a), a, T_TIGHT);
    assert_unit_quat(ik_quat_mul(a, b));
  }
}

static void conjugate_and_inverse_undo(void **state) {
  t_rng r = t_rng_make(9);
  int k;
  (void)state;
  {
    const ik_quat c = ik_quat_conjugate(ik_quat_make(1, -2, 3, 4));
    assert_true(c.x == -1 && c.y == 2 && c.z == -3 && c.w == 4);
  }
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat q = t_unit_quat(&r);
    const ik_vec3 v = random_vector(&r);
    const ik_real s = r_real(&r, 0.01, 100);
    const ik_quat big = ik_quat_make(q.x * s, q.y * s, q.z * s, q.w * s);
    const ik_quat inv = ik_quat_inverse(big);
    ik_quat one;
    assert_vec3_near(ik_quat_rotate(ik_quat_conjugate(q), ik_quat_rotate(q, v)), v,
                     T_TIGHT * 10 * (double)ik_vec3_len(v));
    assert_quat_near(ik_quat_mul(q, ik_quat_conjugate(q)), ik_quat_identity(), T_TIGHT * 10);
    /* Unit: the inverse is the conjugate. */
    assert_quat_near(ik_quat_inverse(q), ik_quat_conjugate(q), T_TIGHT * 10);
    assert_near(ik_quat_dot(ik_quat_inverse(q), ik_quat_conjugate(q)), 1, T_TIGHT * 10);
    /* Non-unit: q * q^-1 is the identity quaternion itself, not just a rotation. */
    one = ik_quat_mul(big, inv);
    assert_near(one.x, 0, T_TIGHT * 10);
    assert_near(one.y, 0, T_TIGHT * 10);
    assert_near(one.z, 0, T_TIGHT * 10);
    assert_near(one.w, 1, T_TIGHT * 10);
    one = ik_quat_mul(inv, big);
    assert_near(one.w, 1, T_TIGHT * 10);
    assert_near(ik_vec3_len(quat_axis(one)), 0, T_TIGHT * 10);
  }
  {
    const ik_quat id = ik_quat_identity();
    const ik_quat i0 = ik_quat_inverse(ik_quat_make(0, 0, 0, 0));
    const ik_quat i1 = ik_quat_inverse(ik_quat_make((ik_real)NAN, 0, 0, 1));
    const ik_quat i2 = ik_quat_inverse(ik_quat_make(0, (ik_real)INFINITY, 0, 1));
    const ik_quat i3 = ik_quat_inverse(ik_quat_make(0, 0, (ik_real)T_DENORMAL, 0));
    assert_memory_equal(&i0, &id, sizeof id);
    assert_memory_equal(&i1, &id, sizeof id);
    assert_memory_equal(&i2, &id, sizeof id);
    assert_memory_equal(&i3, &id, sizeof id);
  }
}

static void quat_normalize_gives_unit_or_identity(void **state) {
  t_rng r = t_rng_make(10);
  const ik_quat id = ik_quat_identity();
  const ik_quat bad[] = {
      {0, 0, 0, 0},
      {(ik_real)T_DENORMAL, 0, 0, (ik_real)T_DENORMAL},
      {(ik_real)NAN, 0, 0, 1},
      {0, 0, (ik_real)INFINITY, 1},
      {(ik_real)T_HUGE, (ik_real)T_HUGE, 0, 0},
  };
  size_t i;
  int k;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const ik_quat n = ik_quat_normalize(bad[i]);
    assert_memory_equal(&n, &id, sizeof id);
  }
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat q = t_unit_quat(&r);
    const ik_real s = r_real(&r, -100, 100);
    const ik_quat n = ik_quat_normalize(ik_quat_make(q.x * s, q.y * s, q.z * s, q.w * s));
    if (ik_fabs(s) < (ik_real)1e-3) continue;
    assert_unit_quat(n);
    assert_quat_near(n, q, T_TIGHT * 10);
  }
}

static void quat_angle_and_angle_between(void **state) {
  t_rng r = t_rng_make(11);
  int k;
  (void)state;
  assert_near(ik_quat_angle(ik_quat_identity()), 0, 0);
  assert_near(ik_quat_angle(ik_quat_make(0, 0, 0, -1)), 0, 0);
  assert_near(ik_quat_angle(ik_quat_make(1, 0, 0, 0)), IK_PI, T_TIGHT);
  assert_near(ik_quat_angle(ik_quat_axis_angle(vy(), (ik_real)1.5 * IK_PI)), IK_PI / 2, T_TIGHT);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat a = t_unit_quat(&r), b = t_unit_quat(&r);
    const ik_quat neg_b = ik_quat_make(-b.x, -b.y, -b.z, -b.w);
    const ik_real between = ik_quat_angle_between(a, b);
    assert_true(between >= 0 && between <= IK_PI);
    assert_near(ik_quat_angle_between(b, a), between, T_TIGHT * 10);
    assert_near(ik_quat_angle_between(a, neg_b), between, T_TIGHT * 10);
    /* It is the angle of the rotation that takes a to b. */
    assert_near(ik_quat_angle(ik_quat_mul(b, ik_quat_conjugate(a))), between, T_TIGHT * 10);
  }
}

static void quat_equal_treats_q_and_minus_q_as_equal(void **state) {
  t_rng r = t_rng_make(12);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat q = t_unit_quat(&r);
    const ik_quat neg = ik_quat_make(-q.x, -q.y, -q.z, -q.w);
    const ik_quat scaled = ik_quat_make(q.x * 3, q.y * 3, q.z * 3, q.w * 3);
    const ik_quat turned = ik_quat_mul(q, ik_quat_axis_angle(t_unit_vector(&r), (ik_real)0.01));
    assert_true(ik_quat_equal(q, q, (ik_real)T_EPS));
    assert_true(ik_quat_equal(q, neg, (ik_real)T_EPS));
    assert_true(ik_quat_equal(neg, q, (ik_real)T_EPS));
    assert_true(ik_quat_equal(q, scaled, (ik_real)T_EPS));
    assert_false(ik_quat_equal(q, turned, (ik_real)1e-3));
    assert_true(ik_quat_equal(q, turned, (ik_real)0.011));
    assert_false(ik_quat_equal(q, ik_quat_mul(q, ik_quat_axis_angle(vx(), IK_PI)), 1));
  }
}

/* ---- from_to ---- */

static void check_from_to(ik_vec3 a, ik_vec3 b, double tol) {
  const ik_quat q = ik_quat_from_to(a, b);
  const ik_vec3 na = ik_vec3_normalize(a), nb = ik_vec3_normalize(b);
  const ik_vec3 axis_ab = ik_vec3_cross(na, nb);
  assert_unit_quat(q);
  /* Rotating a gives b. */
  assert_vec3_near(ik_quat_rotate(q, na), nb, tol);
  /* Minimal: by exactly the angle between them, about an axis perpendicular to both,
   * so a x b (that axis) stays put: no twist. */
  assert_near(ik_quat_angle(q), ik_vec3_angle(na, nb), tol);
  assert_near(ik_vec3_dot(quat_axis(q), na), 0, tol);
  assert_near(ik_vec3_dot(quat_axis(q), nb), 0, tol);
  assert_vec3_near(ik_quat_rotate(q, axis_ab), axis_ab, tol);
}

static void from_to_on_known_cases(void **state) {
  (void)state;
  assert_quat_near(ik_quat_from_to(vx(), vy()), ik_quat_axis_angle(vz(), IK_PI / 2), T_TIGHT);
  assert_quat_near(ik_quat_from_to(vz(), ik_vec3_make(3, 0, 0)), ik_quat_axis_angle(vy(), IK_PI / 2),
                   T_TIGHT);
  assert_quat_near(ik_quat_from_to(vx(), ik_vec3_make(1, 1, 0)), ik_quat_axis_angle(vz(), IK_PI / 4),
                   T_TIGHT);
  /* Parallel, whatever the lengths: identity. */
  assert_quat_near(ik_quat_from_to(vx(), ik_vec3_make(7, 0, 0)), ik_quat_identity(), 0);
  check_from_to(vx(), vy(), T_TIGHT);
  check_from_to(ik_vec3_make(1, 2, 3), ik_vec3_make(-2, (ik_real)0.5, 1), T_TIGHT);
}

static void from_to_random_is_minimal(void **state) {
  t_rng r = t_rng_make(13);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 a = random_vector(&r), b = random_vector(&r);
    check_from_to(a, b, T_TIGHT * 10);
    /* Nearly parallel: still exact. */
    check_from_to(a, ik_vec3_add(a, ik_vec3_scale(t_unit_vector(&r), ik_vec3_len(a) * r_real(&r, 0, 1e-4))),
                  T_TIGHT * 10);
    /* Unit or not, the same rotation. */
    assert_quat_near(ik_quat_from_to(a, b), ik_quat_from_to(ik_vec3_normalize(a), ik_vec3_normalize(b)),
                     T_TIGHT * 10);
  }
}

static void check_half_turn(ik_vec3 a, ik_vec3 b) {
  const ik_quat q = ik_quat_from_to(a, b);
  const ik_vec3 na = ik_vec3_normalize(a);
  assert_unit_quat(q);
  assert_near(ik_quat_angle(q), IK_PI, T_TIGHT);
  assert_near(q.w, 0, T_TIGHT);
  assert_vec3_near(ik_quat_rotate(q, na), ik_vec3_neg(na), T_TIGHT * 10);
  assert_near(ik_vec3_dot(quat_axis(q), na), 0, T_TIGHT);
}

/* Opposite vectors: an exact half turn about an axis perpendicular to a. */
static void from_to_opposite_is_an_exact_half_turn(void **state) {
  t_rng r = t_rng_make(14);
  int k;
  (void)state;
  for (k = 0; k < 6; k++) {
    check_half_turn(AXES[k], ik_vec3_neg(AXES[k]));
    check_half_turn(ik_vec3_scale(AXES[k], 3), ik_vec3_scale(AXES[k], (ik_real)-0.25));
  }
  check_half_turn(ik_vec3_make(1, 1, 1), ik_vec3_make(-1, -1, -1));
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 a = random_vector(&r);
    check_half_turn(a, ik_vec3_neg(a));
    check_half_turn(a, ik_vec3_scale(a, -r_real(&r, 0.01, 100)));
  }
}

/* Nearly opposite vectors (within a few milliradians of a half turn) must still turn a
 * exactly onto b. This is where 1 + a.b cancels: see the report on ik_quat_from_to. */
static void from_to_nearly_opposite_still_reaches_b(void **state) {
  t_rng r = t_rng_make(15);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 a = t_unit_vector(&r);
    const ik_vec3 across =
        ik_quat_rotate(ik_quat_axis_angle(a, r_real(&r, -3.14, 3.14)), ik_vec3_any_perpendicular(a));
    const ik_real miss = (ik_real)pow(10, t_uniform(&r, -9, -2));
    const ik_vec3 b = rodrigues(across, IK_PI - miss, a);
    const ik_quat q = ik_quat_from_to(a, b);
    assert_unit_quat(q);
    assert_vec3_near(ik_quat_rotate(q, a), ik_vec3_normalize(b), T_TIGHT * 10);
    assert_near(ik_quat_angle(q), ik_vec3_angle(a, b), T_TIGHT * 10);
  }
}

static void from_to_zero_input_is_identity(void **state) {
  const ik_quat id = ik_quat_identity();
  const ik_vec3 none[] = {
      {0, 0, 0}, {(ik_real)T_DENORMAL, 0, 0}, {(ik_real)NAN, 0, 0}, {0, (ik_real)INFINITY, 0}};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof none / sizeof none[0]; i++) {
    const ik_quat q1 = ik_quat_from_to(none[i], vx());
    const ik_quat q2 = ik_quat_from_to(vy(), none[i]);
    const ik_quat q3 = ik_quat_from_to(none[i], none[i]);
    assert_memory_equal(&q1, &id, sizeof id);
    assert_memory_equal(&q2, &id, sizeof id);
    assert_memory_equal(&q3, &id, sizeof id);
  }
}

/* ---- slerp ---- */

static void slerp_endpoints_and_constant_speed(void **state) {
  t_rng r = t_rng_make(16);
  int k;
  (void)state;
  assert_quat_near(ik_quat_slerp(ik_quat_identity(), ik_quat_axis_angle(vz(), IK_PI / 2), (ik_real)0.5),
                   ik_quat_axis_angle(vz(), IK_PI / 4), T_TIGHT);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat a = t_unit_quat(&r), b = t_unit_quat(&r);
    const ik_real t = r_real(&r, 0, 1);
    const ik_real full = ik_quat_angle_between(a, b);
    const ik_quat s = ik_quat_slerp(a, b, t);
    const ik_quat mid = ik_quat_slerp(a, b, (ik_real)0.5);
    assert_quat_near(ik_quat_slerp(a, b, 0), a, T_TIGHT * 10);
    assert_quat_near(ik_quat_slerp(a, b, 1), b, T_TIGHT * 10);
    assert_unit_quat(s);
    /* Along the shortest arc at constant angular speed: t of the way from a, 1 - t
     * from b (so never more than a quarter turn each way from the half-way point). */
    assert_near(ik_quat_angle_between(a, s), t * full, T_TIGHT * 10);
    assert_near(ik_quat_angle_between(s, b), (1 - t) * full, T_TIGHT * 10);
    assert_near(ik_quat_angle_between(a, mid), full / 2, T_TIGHT * 10);
    assert_near(ik_quat_angle_between(mid, b), full / 2, T_TIGHT * 10);
    /* The path is about one fixed axis: the relative rotation's axis. */
    {
      const ik_quat rel = ik_quat_mul(b, ik_quat_conjugate(a));
      const ik_quat step = ik_quat_mul(s, ik_quat_conjugate(a));
      if (full > (ik_real)1e-3 && t > (ik_real)1e-2) {
        const ik_vec3 n_rel = ik_vec3_normalize(quat_axis(rel));
        const ik_vec3 n_step = ik_vec3_normalize(quat_axis(step));
        assert_near(ik_vec3_len(ik_vec3_cross(n_rel, n_step)), 0, T_TIGHT * 1e3);
      }
    }
  }
}

/* q and -q are one rotation: slerp(q, -r, t) == slerp(q, r, t), shortest path. */
static void slerp_takes_the_shortest_path(void **state) {
  t_rng r = t_rng_make(17);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat a = t_unit_quat(&r), b = t_unit_quat(&r);
    const ik_quat neg_b = ik_quat_make(-b.x, -b.y, -b.z, -b.w);
    const ik_real t = r_real(&r, 0, 1);
    assert_quat_near(ik_quat_slerp(a, neg_b, t), ik_quat_slerp(a, b, t), T_TIGHT * 10);
    assert_same_rotation_on_vectors(ik_quat_slerp(a, neg_b, t), ik_quat_slerp(a, b, t), T_TIGHT * 10);
    /* Never more than the shortest arc: the angle travelled is t times at most pi. */
    assert_true(ik_quat_angle_between(a, ik_quat_slerp(a, neg_b, t)) <= t * IK_PI + (ik_real)T_TIGHT * 10);
  }
  /* A known case where the naive path is long: 350 degrees about Z is -10. */
  {
    const ik_quat a = ik_quat_identity();
    const ik_quat b = ik_quat_axis_angle(vz(), IK_PI * 35 / 18);
    assert_quat_near(ik_quat_slerp(a, b, (ik_real)0.5), ik_quat_axis_angle(vz(), -IK_PI / 36), T_TIGHT * 10);
  }
}

static void slerp_of_nearly_equal_inputs_is_finite(void **state) {
  t_rng r = t_rng_make(18);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat a = t_unit_quat(&r);
    const ik_real tiny = (ik_real)pow(10, t_uniform(&r, -12, -3));
    const ik_quat b = ik_quat_mul(a, ik_quat_axis_angle(t_unit_vector(&r), tiny));
    const ik_quat neg_a = ik_quat_make(-a.x, -a.y, -a.z, -a.w);
    const ik_real t = r_real(&r, 0, 1);
    const ik_quat s1 = ik_quat_slerp(a, b, t);
    const ik_quat s2 = ik_quat_slerp(a, a, t);
    const ik_quat s3 = ik_quat_slerp(a, neg_a, t);
    assert_unit_quat(s1);
    assert_unit_quat(s2);
    assert_unit_quat(s3);
    assert_quat_near(s1, a, tiny + (ik_real)T_TIGHT * 10);
    assert_quat_near(s2, a, T_TIGHT * 10);
    assert_quat_near(s3, a, T_TIGHT * 10);
  }
}

/* ---- look_rotation ---- */

static void check_look(ik_vec3 forward, ik_vec3 up) {
  const ik_quat q = ik_quat_look_rotation(forward, up);
  const ik_vec3 f = ik_vec3_normalize(forward);
  const ik_vec3 y_ws = ik_quat_rotate(q, vy());
  const ik_vec3 up_across = ik_vec3_normalize(ik_vec3_project_on_plane(up, f));
  assert_unit_quat(q);
  assert_vec3_near(ik_quat_rotate(q, vz()), f, T_TIGHT * 10);
  /* +Y goes to up, as far as up is across forward; always across forward. */
  assert_near(ik_vec3_dot(y_ws, f), 0, T_TIGHT * 10);
  if (ik_vec3_len2(ik_vec3_cross(ik_vec3_normalize(up), f)) > (ik_real)1e-6)
    assert_vec3_near(y_ws, up_across, T_TIGHT * 1e3);
}

static void look_rotation_on_known_cases(void **state) {
  (void)state;
  assert_quat_near(ik_quat_look_rotation(vz(), vy()), ik_quat_identity(), T_TIGHT);
  assert_quat_near(ik_quat_look_rotation(vx(), vy()), ik_quat_axis_angle(vy(), IK_PI / 2), T_TIGHT);
  assert_quat_near(ik_quat_look_rotation(ik_vec3_neg(vx()), vy()), ik_quat_axis_angle(vy(), -IK_PI / 2),
                   T_TIGHT);
  assert_quat_near(ik_quat_look_rotation(vy(), ik_vec3_neg(vz())), ik_quat_axis_angle(vx(), -IK_PI / 2),
                   T_TIGHT);
  assert_quat_near(ik_quat_look_rotation(ik_vec3_neg(vy()), vz()), ik_quat_axis_angle(vx(), IK_PI / 2),
                   T_TIGHT);
  /* Up need not be unit nor perpendicular to forward. */
  assert_quat_near(ik_quat_look_rotation(ik_vec3_make(5, 0, 0), ik_vec3_make(3, 7, 0)),
                   ik_quat_axis_angle(vy(), IK_PI / 2), T_TIGHT);
}

/* The rotation matrix to quaternion conversion has four branches: the trace, and the
 * largest of the three diagonal terms. Half turns about X, Y and Z each take one. */
static void look_rotation_takes_every_matrix_branch(void **state) {
  (void)state;
  /* trace > 0 */
  assert_quat_near(ik_quat_look_rotation(vz(), vy()), ik_quat_identity(), T_TIGHT);
  /* m00 largest: half turn about X (forward -Z, up -Y) */
  assert_quat_near(ik_quat_look_rotation(ik_vec3_neg(vz()), ik_vec3_neg(vy())),
                   ik_quat_axis_angle(vx(), IK_PI), T_TIGHT);
  /* m11 largest: half turn about Y (forward -Z, up +Y) */
  assert_quat_near(ik_quat_look_rotation(ik_vec3_neg(vz()), vy()), ik_quat_axis_angle(vy(), IK_PI), T_TIGHT);
  /* m22 largest: half turn about Z (forward +Z, up -Y) */
  assert_quat_near(ik_quat_look_rotation(vz(), ik_vec3_neg(vy())), ik_quat_axis_angle(vz(), IK_PI), T_TIGHT);
}

/* Any rotation q is look_rotation(q Z, q Y): near half turns about random axes reach
 * every branch with every sign. */
static void look_rotation_inverts_random_rotations(void **state) {
  t_rng r = t_rng_make(19);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_real angle = (k & 1) ? r_real(&r, -3.14159, 3.14159) : r_real(&r, 2.9, 3.14159);
    const ik_quat q = ik_quat_axis_angle(t_unit_vector(&r), angle);
    const ik_vec3 f = ik_quat_rotate(q, vz()), u = ik_quat_rotate(q, vy());
    assert_quat_near(ik_quat_look_rotation(f, u), q, T_TIGHT * 10);
    /* Scaled and tilted up (still in the Y-Z half-plane) changes nothing. */
    assert_quat_near(
        ik_quat_look_rotation(ik_vec3_scale(f, 3),
                              ik_vec3_add(ik_vec3_scale(u, 2), ik_vec3_scale(f, r_real(&r, -5, 5)))),
        q, T_TIGHT * 100);
  }
  for (k = 0; k < 6; k++) {
    int j;
    for (j = 0; j < 6; j++) check_look(AXES[k], AXES[j]);
  }
  for (k = 0; k < N_RANDOM; k++) check_look(random_vector(&r), random_vector(&r));
}

/* Up parallel to forward (any length, either way, rounding noise included) or zero: Z
 * still goes to forward and the result is a proper rotation. */
static void look_rotation_with_useless_up(void **state) {
  t_rng r = t_rng_make(20);
  int k;
  (void)state;
  for (k = 0; k < 6; k++) {
    check_look(AXES[k], AXES[k]);
    check_look(AXES[k], ik_vec3_neg(AXES[k]));
    check_look(AXES[k], ik_vec3_zero());
  }
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 f = random_vector(&r);
    check_look(f, ik_vec3_zero());
    check_look(f, f);
    check_look(f, ik_vec3_scale(f, r_real(&r, -3, 3)));
    check_look(f, ik_vec3_scale(f, r_real(&r, 1e3, 1e8)));
    check_look(f, ik_vec3_make((ik_real)T_DENORMAL, 0, 0));
  }
}

static void look_rotation_zero_forward_is_identity(void **state) {
  const ik_quat id = ik_quat_identity();
  const ik_quat q1 = ik_quat_look_rotation(ik_vec3_zero(), vy());
  const ik_quat q2 = ik_quat_look_rotation(ik_vec3_make(0, 0, (ik_real)T_DENORMAL), vy());
  const ik_quat q3 = ik_quat_look_rotation(ik_vec3_make((ik_real)NAN, 0, 1), vy());
  const ik_quat q4 = ik_quat_look_rotation(ik_vec3_zero(), ik_vec3_zero());
  (void)state;
  assert_memory_equal(&q1, &id, sizeof id);
  assert_memory_equal(&q2, &id, sizeof id);
  assert_memory_equal(&q3, &id, sizeof id);
  assert_memory_equal(&q4, &id, sizeof id);
}

/* ---- swing / twist ---- */

static void check_swing_twist(ik_quat q, ik_vec3 axis) {
  const ik_vec3 n = ik_vec3_normalize(axis);
  ik_quat swing, twist;
  ik_quat_swing_twist(q, axis, &swing, &twist);
  assert_unit_quat(swing);
  assert_unit_quat(twist);
  /* q = swing * twist, as quaternions (not only as rotations). */
  {
    const ik_quat back = ik_quat_mul(swing, twist);
    assert_near(ik_quat_dot(back, q), 1, T_TIGHT * 10);
  }
  /* The twist is about the axis, the swing about an axis across it. */
  assert_near(ik_vec3_len(ik_vec3_cross(quat_axis(twist), n)), 0, T_TIGHT * 10);
  assert_near(ik_vec3_dot(quat_axis(swing), n), 0, T_TIGHT * 10);
}

static void swing_twist_recomposes(void **state) {
  t_rng r = t_rng_make(21);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 axis = random_vector(&r);
    check_swing_twist(t_unit_quat(&r), axis);
  }
}

/* Built from a known swing and twist, the decomposition gives them back. */
static void swing_twist_recovers_known_parts(void **state) {
  t_rng r = t_rng_make(22);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_vec3 n = t_unit_vector(&r);
    const ik_vec3 across =
        ik_quat_rotate(ik_quat_axis_angle(n, r_real(&r, -3.14, 3.14)), ik_vec3_any_perpendicular(n));
    const ik_quat swing_in = ik_quat_axis_angle(across, r_real(&r, -3.0, 3.0));
    const ik_real twist_angle = r_real(&r, -3.14, 3.14);
    const ik_quat twist_in = ik_quat_axis_angle(n, twist_angle);
    const ik_quat q = ik_quat_mul(swing_in, twist_in);
    ik_quat swing, twist;
    ik_quat_swing_twist(q, ik_vec3_scale(n, r_real(&r, 0.1, 10)), &swing, &twist);
    assert_quat_near(swing, swing_in, T_TIGHT * 100);
    assert_quat_near(twist, twist_in, T_TIGHT * 100);
    assert_near(ik_quat_twist_angle(q, n), twist_angle, T_TIGHT * 100);
    /* Either output may be NULL. */
    ik_quat_swing_twist(q, n, NULL, &twist);
    assert_quat_near(twist, twist_in, T_TIGHT * 100);
    ik_quat_swing_twist(q, n, &swing, NULL);
    assert_quat_near(swing, swing_in, T_TIGHT * 100);
    ik_quat_swing_twist(q, n, NULL, NULL);
  }
}

static void swing_twist_degenerate_cases(void **state) {
  t_rng r = t_rng_make(23);
  int k;
  (void)state;
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat q = t_unit_quat(&r);
    const ik_vec3 n = t_unit_vector(&r);
    ik_quat swing, twist;
    /* Zero axis: all swing. */
    ik_quat_swing_twist(q, ik_vec3_zero(), &swing, &twist);
    assert_quat_near(swing, q, T_TIGHT);
    assert_quat_near(twist, ik_quat_identity(), 0);
    /* A half-turn swing has no twist component at all (x.n = w = 0): the twist is
     * identity and its angle 0, not NaN. Axis-aligned, so x.n is exactly 0. */
    {
      const ik_vec3 n_exact = AXES[k % 6];
      const ik_real phi = r_real(&r, -3.14, 3.14);
      const ik_vec3 across =
          ik_quat_rotate(ik_quat_axis_angle(n_exact, phi), ik_vec3_any_perpendicular(n_exact));
      const ik_quat half = ik_quat_make(n_exact.x == 0 ? across.x : 0, n_exact.y == 0 ? across.y : 0,
                                        n_exact.z == 0 ? across.z : 0, 0);
      ik_quat_swing_twist(half, n_exact, &swing, &twist);
      assert_unit_quat(swing);
      assert_unit_quat(twist);
      assert_quat_near(twist, ik_quat_identity(), 0);
      assert_quat_near(swing, half, T_TIGHT);
      assert_near(ik_quat_twist_angle(half, n_exact), 0, 0);
    }
    /* Rounding leaves a half-turn swing with a twist component of noise size, below
     * IK_TINY_LEN2: both functions read it as no twist (not as a random +-pi). */
    {
      const ik_vec3 n_exact = AXES[k % 6];
      const ik_vec3 across = ik_vec3_any_perpendicular(n_exact);
      const ik_real noise = (ik_real)(IK_REAL_EPSILON / 8);
      const ik_quat half = ik_quat_make(across.x + n_exact.x * noise, across.y + n_exact.y * noise,
                                        across.z + n_exact.z * noise, (k & 1) ? noise : -noise);
      ik_quat_swing_twist(half, n_exact, &swing, &twist);
      assert_quat_near(twist, ik_quat_identity(), 0);
      assert_near(ik_quat_twist_angle(half, n_exact), 0, 0);
    }
    /* Off the axes: finite, and still q = swing * twist. */
    {
      const ik_vec3 across =
          ik_quat_rotate(ik_quat_axis_angle(n, r_real(&r, -3.14, 3.14)), ik_vec3_any_perpendicular(n));
      const ik_quat half = ik_quat_make(across.x, across.y, across.z, 0);
      const ik_real a = ik_quat_twist_angle(half, n);
      ik_quat_swing_twist(half, n, &swing, &twist);
      assert_unit_quat(swing);
      assert_unit_quat(twist);
      assert_near(ik_quat_dot(ik_quat_mul(swing, twist), half), 1, T_TIGHT);
      assert_true(a > -IK_PI && a <= IK_PI);
    }
    /* A pure twist: no swing. */
    {
      const ik_quat pure = ik_quat_axis_angle(n, r_real(&r, -3.14, 3.14));
      ik_quat_swing_twist(pure, n, &swing, &twist);
      assert_quat_near(swing, ik_quat_identity(), T_TIGHT * 10);
      assert_quat_near(twist, pure, T_TIGHT * 10);
    }
    check_swing_twist(q, n);
  }
}

/* ---- twist_angle ---- */

static void twist_angle_sign_and_range(void **state) {
  t_rng r = t_rng_make(24);
  int k;
  (void)state;
  assert_near(ik_quat_twist_angle(ik_quat_axis_angle(vz(), (ik_real)0.5), vz()), 0.5, T_TIGHT);
  assert_near(ik_quat_twist_angle(ik_quat_axis_angle(vz(), (ik_real)-0.5), vz()), -0.5, T_TIGHT);
  /* About the opposite axis the sign flips (right-hand rule). */
  assert_near(ik_quat_twist_angle(ik_quat_axis_angle(vz(), (ik_real)0.5), ik_vec3_neg(vz())), -0.5, T_TIGHT);
  /* Folded into (-pi, pi]: 270 degrees is -90. */
  assert_near(ik_quat_twist_angle(ik_quat_axis_angle(vz(), (ik_real)1.5 * IK_PI), vz()), -IK_PI / 2, T_TIGHT);
  /* Exactly a half turn is +pi, for q and for -q. */
  assert_near(ik_quat_twist_angle(ik_quat_make(0, 0, 1, 0), vz()), IK_PI, 0);
  assert_near(ik_quat_twist_angle(ik_quat_make(0, 0, -1, 0), vz()), IK_PI, 0);
  /* No twist at all: a swing, a zero quaternion. */
  assert_near(ik_quat_twist_angle(ik_quat_axis_angle(vx(), 1), vz()), 0, 0);
  assert_near(ik_quat_twist_angle(ik_quat_make(0, 0, 0, 0), vz()), 0, 0);
  for (k = 0; k < N_RANDOM; k++) {
    const ik_quat q = t_unit_quat(&r);
    const ik_quat neg = ik_quat_make(-q.x, -q.y, -q.z, -q.w);
    const ik_vec3 n = t_unit_vector(&r);
    const ik_real a = ik_quat_twist_angle(q, n);
    assert_true(a > -IK_PI && a <= IK_PI);
    /* q and -q are the same rotation: the same twist (except at the +-pi seam). */
    if (ik_fabs(a) < (ik_real)3.14) assert_near(ik_quat_twist_angle(neg, n), a, T_TIGHT);
    if (ik_fabs(a) < (ik_real)3.14) assert_near(ik_quat_twist_angle(q, ik_vec3_neg(n)), -a, T_TIGHT);
    /* It is the angle of the twist part, signed. */
    {
      ik_quat twist;
      ik_quat_swing_twist(q, n, NULL, &twist);
      assert_near(ik_fabs(a), ik_quat_angle(twist), T_TIGHT * 10);
      if (ik_fabs(a) > (ik_real)1e-3 && ik_fabs(a) < (ik_real)3.14)
        assert_true((ik_vec3_dot(quat_axis(twist), n) * twist.w > 0) == (a > 0));
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(real_is_finite_rejects_nan_and_inf),
      cmocka_unit_test(clamp_and_acos_safe),
      cmocka_unit_test(vec3_arithmetic_on_known_values),
      cmocka_unit_test(cross_is_right_handed),
      cmocka_unit_test(vec3_random_properties),
      cmocka_unit_test(normalize_known_and_random),
      cmocka_unit_test(normalize_without_direction_never_gives_nan),
      cmocka_unit_test(project_on_plane_removes_the_normal_part),
      cmocka_unit_test(any_perpendicular_is_unit_and_perpendicular),
      cmocka_unit_test(angle_is_unsigned_and_precise),
      cmocka_unit_test(signed_angle_follows_the_right_hand_rule),
      cmocka_unit_test(identity_dot_and_make),
      cmocka_unit_test(rotate_on_known_cases),
      cmocka_unit_test(rotate_matches_rodrigues),
      cmocka_unit_test(axis_angle_with_no_axis_is_identity),
      cmocka_unit_test(mul_composes_right_to_left),
      cmocka_unit_test(conjugate_and_inverse_undo),
      cmocka_unit_test(quat_normalize_gives_unit_or_identity),
      cmocka_unit_test(quat_angle_and_angle_between),
      cmocka_unit_test(quat_equal_treats_q_and_minus_q_as_equal),
      cmocka_unit_test(from_to_on_known_cases),
      cmocka_unit_test(from_to_random_is_minimal),
      cmocka_unit_test(from_to_opposite_is_an_exact_half_turn),
      cmocka_unit_test(from_to_nearly_opposite_still_reaches_b),
      cmocka_unit_test(from_to_zero_input_is_identity),
      cmocka_unit_test(slerp_endpoints_and_constant_speed),
      cmocka_unit_test(slerp_takes_the_shortest_path),
      cmocka_unit_test(slerp_of_nearly_equal_inputs_is_finite),
      cmocka_unit_test(look_rotation_on_known_cases),
      cmocka_unit_test(look_rotation_takes_every_matrix_branch),
      cmocka_unit_test(look_rotation_inverts_random_rotations),
      cmocka_unit_test(look_rotation_with_useless_up),
      cmocka_unit_test(look_rotation_zero_forward_is_identity),
      cmocka_unit_test(swing_twist_recomposes),
      cmocka_unit_test(swing_twist_recovers_known_parts),
      cmocka_unit_test(swing_twist_degenerate_cases),
      cmocka_unit_test(twist_angle_sign_and_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
