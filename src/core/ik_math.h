/*
 * ik_math.h: value-type vector and quaternion maths for ikrig.
 *
 * Conventions (everything in ikrig follows these):
 *   - Scalars are ik_real: double by default, float when built with IK_REAL_FLOAT.
 *   - Right-handed coordinates. The demo scene and the "up" defaults use +Y up;
 *     look_rotation maps local +Z to "forward" and local +Y towards "up".
 *   - Angles are in radians, always.
 *   - Quaternions are stored (x, y, z, w) with w the scalar part, Hamilton product.
 *     ik_quat_mul(a, b) applies b first, then a (like matrices: a * b * v).
 *     ik_quat_rotate(q, v) is q * v * q^-1.
 *   - q and -q are the same rotation: ik_quat_equal treats them as equal, and
 *     slerp always takes the shortest path.
 *   - Degenerate input never produces NaN: normalising a zero vector gives the zero
 *     vector (or the fallback you pass), a zero quaternion normalises to identity,
 *     a zero axis gives the identity rotation.
 *
 * Everything here is a pure function on values: no state, no allocation.
 */
#ifndef IK_MATH_H
#define IK_MATH_H

#include <math.h>

#include "ik_api.h"

#ifdef IK_REAL_FLOAT
typedef float ik_real;
#define IK_REAL_EPSILON 1.1920929e-7f
#define ik_sqrt sqrtf
#define ik_sin sinf
#define ik_cos cosf
#define ik_acos acosf
#define ik_atan2 atan2f
#define ik_fabs fabsf
#define ik_exp expf
#else
typedef double ik_real;
#define IK_REAL_EPSILON 2.220446049250313e-16
#define ik_sqrt sqrt
#define ik_sin sin
#define ik_cos cos
#define ik_acos acos
#define ik_atan2 atan2
#define ik_fabs fabs
#define ik_exp exp
#endif

#define IK_PI ((ik_real)3.14159265358979323846)

/* Squared length under which a vector has no usable direction. Far below any bone a
 * rig has, far above the rounding noise of subtracting two equal positions. */
#define IK_TINY_LEN2 ((ik_real)(IK_REAL_EPSILON * IK_REAL_EPSILON))

typedef struct ik_vec3 {
  ik_real x, y, z;
} ik_vec3;

typedef struct ik_quat {
  ik_real x, y, z, w;
} ik_quat;

/* ---- scalars ---- */

static inline int ik_real_is_finite(ik_real a) { return (a - a) == (a - a); }

static inline ik_real ik_clamp(ik_real a, ik_real lo, ik_real hi) { return a < lo ? lo : (a > hi ? hi : a); }

/* acos that tolerates rounding just outside [-1, 1]. */
static inline ik_real ik_acos_safe(ik_real c) { return ik_acos(ik_clamp(c, -1, 1)); }

/* ---- vec3 ---- */

static inline ik_vec3 ik_vec3_make(ik_real x, ik_real y, ik_real z) {
  ik_vec3 r;
  r.x = x;
  r.y = y;
  r.z = z;
  return r;
}
static inline ik_vec3 ik_vec3_zero(void) { return ik_vec3_make(0, 0, 0); }
static inline ik_vec3 ik_vec3_add(ik_vec3 a, ik_vec3 b) {
  return ik_vec3_make(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline ik_vec3 ik_vec3_sub(ik_vec3 a, ik_vec3 b) {
  return ik_vec3_make(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline ik_vec3 ik_vec3_scale(ik_vec3 a, ik_real s) { return ik_vec3_make(a.x * s, a.y * s, a.z * s); }
static inline ik_vec3 ik_vec3_neg(ik_vec3 a) { return ik_vec3_make(-a.x, -a.y, -a.z); }
/* a + b * s, the step every solver takes. */
static inline ik_vec3 ik_vec3_madd(ik_vec3 a, ik_vec3 b, ik_real s) {
  return ik_vec3_make(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
}
static inline ik_real ik_vec3_dot(ik_vec3 a, ik_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline ik_vec3 ik_vec3_cross(ik_vec3 a, ik_vec3 b) {
  return ik_vec3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline ik_real ik_vec3_len2(ik_vec3 a) { return ik_vec3_dot(a, a); }
static inline ik_real ik_vec3_len(ik_vec3 a) { return ik_sqrt(ik_vec3_dot(a, a)); }
static inline ik_real ik_vec3_dist2(ik_vec3 a, ik_vec3 b) { return ik_vec3_len2(ik_vec3_sub(a, b)); }
static inline ik_real ik_vec3_dist(ik_vec3 a, ik_vec3 b) { return ik_vec3_len(ik_vec3_sub(a, b)); }
static inline ik_vec3 ik_vec3_lerp(ik_vec3 a, ik_vec3 b, ik_real t) {
  return ik_vec3_make(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t);
}
static inline int ik_vec3_is_finite(ik_vec3 a) {
  return ik_real_is_finite(a.x) && ik_real_is_finite(a.y) && ik_real_is_finite(a.z);
}

/* Unit vector along a, or `fallback` (returned as given) when a has no direction
 * (zero, denormal or not finite). The solvers pass a meaningful fallback so that
 * coincident joints never lose a bone's length. */
static inline ik_vec3 ik_vec3_normalize_or(ik_vec3 a, ik_vec3 fallback) {
  ik_real len2 = ik_vec3_len2(a);
  if (!(len2 > IK_TINY_LEN2) || !ik_real_is_finite(len2)) return fallback;
  return ik_vec3_scale(a, 1 / ik_sqrt(len2));
}
/* Unit vector along a; the zero vector for a zero vector (never NaN). */
static inline ik_vec3 ik_vec3_normalize(ik_vec3 a) { return ik_vec3_normalize_or(a, ik_vec3_zero()); }
/* a with its component along the unit vector n removed. */
static inline ik_vec3 ik_vec3_project_on_plane(ik_vec3 a, ik_vec3 n_unit) {
  return ik_vec3_madd(a, n_unit, -ik_vec3_dot(a, n_unit));
}
/* Some unit vector perpendicular to the unit vector a (stable for every a). */
static inline ik_vec3 ik_vec3_any_perpendicular(ik_vec3 a) {
  ik_vec3 other = ik_fabs(a.x) < (ik_real)0.57735   ? ik_vec3_make(1, 0, 0)
                  : ik_fabs(a.y) < (ik_real)0.57735 ? ik_vec3_make(0, 1, 0)
                                                    : ik_vec3_make(0, 0, 1);
  return ik_vec3_normalize(ik_vec3_cross(a, other));
}
/* Unsigned angle between a and b in [0, pi]; 0 when either is zero. atan2 keeps
 * precision for nearly parallel vectors, where acos of a dot product does not. */
static inline ik_real ik_vec3_angle(ik_vec3 a, ik_vec3 b) {
  return ik_atan2(ik_vec3_len(ik_vec3_cross(a, b)), ik_vec3_dot(a, b));
}
/* Angle from a to b about the unit axis n (right-hand rule), in (-pi, pi], measured
 * between the projections of a and b on the plane normal to n. */
static inline ik_real ik_vec3_signed_angle(ik_vec3 a, ik_vec3 b, ik_vec3 n_unit) {
  ik_vec3 pa = ik_vec3_project_on_plane(a, n_unit);
  ik_vec3 pb = ik_vec3_project_on_plane(b, n_unit);
  return ik_atan2(ik_vec3_dot(ik_vec3_cross(pa, pb), n_unit), ik_vec3_dot(pa, pb));
}

/* ---- quaternions ---- */

static inline ik_quat ik_quat_make(ik_real x, ik_real y, ik_real z, ik_real w) {
  ik_quat r;
  r.x = x;
  r.y = y;
  r.z = z;
  r.w = w;
  return r;
}
static inline ik_quat ik_quat_identity(void) { return ik_quat_make(0, 0, 0, 1); }
static inline ik_real ik_quat_dot(ik_quat a, ik_quat b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
static inline int ik_quat_is_finite(ik_quat q) {
  return ik_real_is_finite(q.x) && ik_real_is_finite(q.y) && ik_real_is_finite(q.z) && ik_real_is_finite(q.w);
}
/* a * b: rotation b, then rotation a. */
static inline ik_quat ik_quat_mul(ik_quat a, ik_quat b) {
  return ik_quat_make(
      a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
static inline ik_quat ik_quat_conjugate(ik_quat q) { return ik_quat_make(-q.x, -q.y, -q.z, q.w); }
/* Unit length, identity for a zero (or non-finite) quaternion. */
static inline ik_quat ik_quat_normalize(ik_quat q) {
  ik_real len2 = ik_quat_dot(q, q);
  ik_real inv;
  if (!(len2 > IK_TINY_LEN2) || !ik_real_is_finite(len2)) return ik_quat_identity();
  inv = 1 / ik_sqrt(len2);
  return ik_quat_make(q.x * inv, q.y * inv, q.z * inv, q.w * inv);
}
/* Inverse of any non-zero quaternion (the conjugate when q is unit); identity for zero. */
static inline ik_quat ik_quat_inverse(ik_quat q) {
  ik_real len2 = ik_quat_dot(q, q);
  ik_real inv;
  if (!(len2 > IK_TINY_LEN2) || !ik_real_is_finite(len2)) return ik_quat_identity();
  inv = 1 / len2;
  return ik_quat_make(-q.x * inv, -q.y * inv, -q.z * inv, q.w * inv);
}
/* q v q^-1 for a unit q, in the cheap form v + 2w(u x v) + 2u x (u x v). */
static inline ik_vec3 ik_quat_rotate(ik_quat q, ik_vec3 v) {
  ik_vec3 u = ik_vec3_make(q.x, q.y, q.z);
  ik_vec3 t = ik_vec3_scale(ik_vec3_cross(u, v), 2);
  return ik_vec3_add(ik_vec3_madd(v, t, q.w), ik_vec3_cross(u, t));
}
/* Rotation by `angle` about `axis` (need not be unit); identity for a zero axis. */
static inline ik_quat ik_quat_axis_angle(ik_vec3 axis, ik_real angle) {
  ik_vec3 n = ik_vec3_normalize(axis);
  ik_real s = ik_sin(angle * (ik_real)0.5);
  if (ik_vec3_len2(n) == 0) return ik_quat_identity();
  return ik_quat_make(n.x * s, n.y * s, n.z * s, ik_cos(angle * (ik_real)0.5));
}
/* Rotation angle of a unit quaternion, in [0, pi] (q and -q give the same). */
static inline ik_real ik_quat_angle(ik_quat q) {
  ik_real s = ik_sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
  return 2 * ik_atan2(s, ik_fabs(q.w));
}
/* Angle of the rotation taking a to b, in [0, pi]. */
static inline ik_real ik_quat_angle_between(ik_quat a, ik_quat b) {
  return ik_quat_angle(ik_quat_mul(ik_quat_conjugate(a), b));
}
/* Same rotation within `eps` radians; q and -q are equal. */
static inline int ik_quat_equal(ik_quat a, ik_quat b, ik_real eps) {
  return ik_quat_angle_between(ik_quat_normalize(a), ik_quat_normalize(b)) <= eps;
}

#ifdef __cplusplus
extern "C" {
#endif

/* Non-inline: each is a few dozen flops and used outside the innermost loops. */

/* Minimal rotation turning the direction of a into the direction of b (no twist about
 * either). Opposite vectors: a half turn about an axis perpendicular to a. Zero a or b:
 * identity. */
IK_API ik_quat ik_quat_from_to(ik_vec3 a, ik_vec3 b);

/* Spherical interpolation along the shortest path; t = 0 gives a, t = 1 gives b (or
 * -b, the same rotation). Inputs should be unit; the result is unit. */
IK_API ik_quat ik_quat_slerp(ik_quat a, ik_quat b, ik_real t);

/* Rotation taking local +Z to `forward` and local +Y as close to `up` as possible.
 * Zero forward: identity. Up parallel to forward (or zero): another up is chosen. */
IK_API ik_quat ik_quat_look_rotation(ik_vec3 forward, ik_vec3 up);

/* Splits q into q = swing * twist, twist a rotation about `axis` (need not be unit) and
 * swing a rotation about an axis perpendicular to it. A zero axis gives swing = q and
 * twist = identity. Either output pointer may be NULL. */
IK_API void ik_quat_swing_twist(ik_quat q, ik_vec3 axis, ik_quat *swing, ik_quat *twist);

/* Signed twist angle of q about the unit `axis`, in (-pi, pi]. */
IK_API ik_real ik_quat_twist_angle(ik_quat q, ik_vec3 axis_unit);

#ifdef __cplusplus
}
#endif

#endif /* IK_MATH_H */
