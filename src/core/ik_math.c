#include "ik_math.h"

ik_quat ik_quat_from_to(ik_vec3 a, ik_vec3 b) {
  const ik_vec3 na = ik_vec3_normalize(a), nb = ik_vec3_normalize(b);
  ik_vec3 sum, axis;
  ik_real cos_half, sin_half;
  if (ik_vec3_len2(na) == 0 || ik_vec3_len2(nb) == 0) return ik_quat_identity();
  /* |a+b|/2 and |a-b|/2 are cos and sin of half the angle: the sum is exact for nearly
   * opposite vectors, the difference for nearly equal ones, where 1 + a.b would lose
   * half its digits. */
  sum = ik_vec3_add(na, nb);
  cos_half = ik_vec3_len(sum) / 2;
  sin_half = ik_vec3_dist(na, nb) / 2;
  /* a x (a+b) = a x b, but from the exact sum: perpendicular to a to the last digit. */
  axis = ik_vec3_normalize(ik_vec3_cross(na, sum));
  if (ik_vec3_len2(axis) == 0) {
    if (cos_half >= sin_half) return ik_quat_identity();
    axis = ik_vec3_any_perpendicular(na); /* exactly opposite: any half turn is minimal */
    return ik_quat_make(axis.x, axis.y, axis.z, 0);
  }
  return ik_quat_normalize(ik_quat_make(axis.x * sin_half, axis.y * sin_half, axis.z * sin_half, cos_half));
}

ik_quat ik_quat_slerp(ik_quat a, ik_quat b, ik_real t) {
  ik_real d = ik_quat_dot(a, b);
  ik_real wa, wb;
  if (d < 0) { /* the shortest path goes to -b */
    b = ik_quat_make(-b.x, -b.y, -b.z, -b.w);
    d = -d;
  }
  if (d > (ik_real)1 - 64 * IK_REAL_EPSILON) {
    /* sin(theta) ~ 0: the arc is a straight line to working precision. */
    wa = 1 - t;
    wb = t;
  } else {
    ik_real theta = ik_acos_safe(d);
    ik_real inv_sin = 1 / ik_sin(theta);
    wa = ik_sin((1 - t) * theta) * inv_sin;
    wb = ik_sin(t * theta) * inv_sin;
  }
  return ik_quat_normalize(
      ik_quat_make(a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb, a.w * wa + b.w * wb));
}

ik_quat ik_quat_look_rotation(ik_vec3 forward, ik_vec3 up) {
  ik_vec3 f = ik_vec3_normalize(forward);
  ik_vec3 r, u;
  ik_real m00, m11, m22, tr;
  if (ik_vec3_len2(f) == 0) return ik_quat_identity();
  /* Projected twice: for up (nearly) parallel to forward the cross product is rounding
   * noise pointing anywhere, along f included, and one projection cancels too. */
  r = ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_project_on_plane(ik_vec3_cross(up, f), f), f));
  if (ik_vec3_len2(r) == 0) {
    /* up is zero or parallel to forward: pick any up perpendicular to forward. */
    r = ik_vec3_normalize(ik_vec3_cross(ik_vec3_any_perpendicular(f), f));
  }
  u = ik_vec3_cross(f, r);
  /* Columns of the rotation matrix are the images of +X, +Y, +Z: r, u, f. */
  m00 = r.x;
  m11 = u.y;
  m22 = f.z;
  tr = m00 + m11 + m22;
  if (tr > 0) {
    ik_real s = ik_sqrt(tr + 1) * 2;
    return ik_quat_normalize(ik_quat_make((u.z - f.y) / s, (f.x - r.z) / s, (r.y - u.x) / s, s / 4));
  }
  if (m00 > m11 && m00 > m22) {
    ik_real s = ik_sqrt(1 + m00 - m11 - m22) * 2;
    return ik_quat_normalize(ik_quat_make(s / 4, (u.x + r.y) / s, (f.x + r.z) / s, (u.z - f.y) / s));
  }
  if (m11 > m22) {
    ik_real s = ik_sqrt(1 + m11 - m00 - m22) * 2;
    return ik_quat_normalize(ik_quat_make((u.x + r.y) / s, s / 4, (f.y + u.z) / s, (f.x - r.z) / s));
  }
  {
    ik_real s = ik_sqrt(1 + m22 - m00 - m11) * 2;
    return ik_quat_normalize(ik_quat_make((f.x + r.z) / s, (f.y + u.z) / s, s / 4, (r.y - u.x) / s));
  }
}

void ik_quat_swing_twist(ik_quat q, ik_vec3 axis, ik_quat *swing, ik_quat *twist) {
  ik_vec3 n = ik_vec3_normalize(axis);
  ik_real p = q.x * n.x + q.y * n.y + q.z * n.z;
  ik_quat tw;
  if (ik_vec3_len2(n) == 0) {
    tw = ik_quat_identity();
  } else {
    tw = ik_quat_make(n.x * p, n.y * p, n.z * p, q.w);
    /* A half-turn swing leaves no twist component (p = w = 0): any twist works, and
     * identity is the one that changes least. */
    tw = ik_quat_normalize(tw);
  }
  if (twist) *twist = tw;
  if (swing) *swing = ik_quat_mul(q, ik_quat_conjugate(tw));
}

ik_real ik_quat_twist_angle(ik_quat q, ik_vec3 axis_unit) {
  ik_real p = q.x * axis_unit.x + q.y * axis_unit.y + q.z * axis_unit.z;
  ik_real a;
  /* A half-turn swing leaves only rounding noise here: no twist, as in swing_twist. */
  if (p * p + q.w * q.w <= IK_TINY_LEN2) return 0;
  a = 2 * ik_atan2(p, q.w); /* in (-2pi, 2pi]: fold so q and -q agree */
  if (a > IK_PI) a -= 2 * IK_PI;
  if (a <= -IK_PI) a += 2 * IK_PI;
  return a;
}
