/*
 * ik_lanes_math_body.h: ik_math's vector and quaternion steps on vectors of lanes, one
 * value a lane, in ik_math's operation order (a select is exact, nothing is fused), for
 * the lane bodies that include it once per instruction set, with:
 *   LM_(x)   the names' suffix
 *   V, M     the real vector and the integer vector a comparison of two V gives
 *   LM_W     lanes in a V
 *   LM_SQRT  square root of each lane of a V
 * It defines VV and QV (a vector and a quaternion of lanes); the includer undefines them.
 * Not API.
 */

#define VV LM_(v3)
#define QV LM_(q)
typedef struct {
  V x, y, z;
} VV;
typedef struct {
  V x, y, z, w;
} QV;

static inline V LM_(sel)(M m, V a, V b) { return (V)(((M)a & m) | ((M)b & ~m)); }
static inline VV LM_(v3_sel)(M m, VV a, VV b) {
  VV r = {LM_(sel)(m, a.x, b.x), LM_(sel)(m, a.y, b.y), LM_(sel)(m, a.z, b.z)};
  return r;
}
static inline QV LM_(q_sel)(M m, QV a, QV b) {
  QV r = {LM_(sel)(m, a.x, b.x), LM_(sel)(m, a.y, b.y), LM_(sel)(m, a.z, b.z), LM_(sel)(m, a.w, b.w)};
  return r;
}
static inline V LM_(splat)(ik_real s) {
  V v;
  int e;
  for (e = 0; e < LM_W; e++) v[e] = s;
  return v;
}
static inline QV LM_(q_identity)(void) {
  QV r = {LM_(splat)(0), LM_(splat)(0), LM_(splat)(0), LM_(splat)(1)};
  return r;
}
static inline M LM_(finite)(V a) { return (a - a) == (a - a); }
static inline VV LM_(v3_sub)(VV a, VV b) {
  VV r = {a.x - b.x, a.y - b.y, a.z - b.z};
  return r;
}
static inline VV LM_(v3_add)(VV a, VV b) {
  VV r = {a.x + b.x, a.y + b.y, a.z + b.z};
  return r;
}
static inline V LM_(v3_dot)(VV a, VV b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline VV LM_(v3_cross)(VV a, VV b) {
  VV r = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
  return r;
}
static inline VV LM_(v3_scale)(VV a, V s) {
  VV r = {a.x * s, a.y * s, a.z * s};
  return r;
}
static inline VV LM_(v3_madd)(VV a, VV b, V s) {
  VV r = {a.x + b.x * s, a.y + b.y * s, a.z + b.z * s};
  return r;
}
static inline VV LM_(v3_normalize)(VV a) {
  const V len2 = LM_(v3_dot)(a, a);
  const M ok = (len2 > IK_TINY_LEN2) & LM_(finite)(len2);
  const VV zero = {LM_(splat)(0), LM_(splat)(0), LM_(splat)(0)};
  return LM_(v3_sel)(ok, LM_(v3_scale)(a, 1 / LM_SQRT(len2)), zero);
}
static inline V LM_(q_dot)(QV a, QV b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static inline QV LM_(q_mul)(QV a, QV b) {
  QV r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
  return r;
}
static inline QV LM_(q_conjugate)(QV a) {
  QV r = {-a.x, -a.y, -a.z, a.w};
  return r;
}
static inline QV LM_(q_normalize)(QV a) {
  const V len2 = LM_(q_dot)(a, a);
  const M ok = (len2 > IK_TINY_LEN2) & LM_(finite)(len2);
  const V inv = 1 / LM_SQRT(len2);
  QV r = {a.x * inv, a.y * inv, a.z * inv, a.w * inv};
  return LM_(q_sel)(ok, r, LM_(q_identity)());
}
static inline QV LM_(q_inverse)(QV a) {
  const V len2 = LM_(q_dot)(a, a);
  const M ok = (len2 > IK_TINY_LEN2) & LM_(finite)(len2);
  const V inv = 1 / len2;
  QV r = {-a.x * inv, -a.y * inv, -a.z * inv, a.w * inv};
  return LM_(q_sel)(ok, r, LM_(q_identity)());
}
static inline VV LM_(q_rotate)(QV q, VV v) {
  const VV u = {q.x, q.y, q.z};
  const VV t = LM_(v3_scale)(LM_(v3_cross)(u, v), LM_(splat)(2));
  return LM_(v3_add)(LM_(v3_madd)(v, t, q.w), LM_(v3_cross)(u, t));
}
/* ik_fabs: the sign bit cleared (so -0 gives +0, as the scalar code). */
static inline V LM_(abs)(V a) { return (V)((M)a & ~(M)LM_(splat)(-(ik_real)0)); }

/* ik_vec3_any_perpendicular. */
static inline VV LM_(any_perpendicular)(VV a) {
  const M first = LM_(abs)(a.x) < (ik_real)0.57735, second = ~first & (LM_(abs)(a.y) < (ik_real)0.57735);
  const V one = LM_(splat)(1), zero = LM_(splat)(0);
  const VV other = {LM_(sel)(first, one, zero), LM_(sel)(second, one, zero),
                    LM_(sel)(first | second, zero, one)};
  return LM_(v3_normalize)(LM_(v3_cross)(a, other));
}

/* ik_quat_from_to. */
static inline QV LM_(from_to)(VV a, VV b) {
  const VV na = LM_(v3_normalize)(a), nb = LM_(v3_normalize)(b);
  const M none = (LM_(v3_dot)(na, na) == 0) | (LM_(v3_dot)(nb, nb) == 0);
  const VV sum = LM_(v3_add)(na, nb), diff = LM_(v3_sub)(na, nb);
  const V cos_half = LM_SQRT(LM_(v3_dot)(sum, sum)) / 2, sin_half = LM_SQRT(LM_(v3_dot)(diff, diff)) / 2;
  const VV axis = LM_(v3_normalize)(LM_(v3_cross)(na, sum));
  const M flat = LM_(v3_dot)(axis, axis) == 0;
  const VV perp = LM_(any_perpendicular)(na);
  const QV half = {perp.x, perp.y, perp.z, LM_(splat)(0)};
  QV r = {axis.x * sin_half, axis.y * sin_half, axis.z * sin_half, cos_half};
  r = LM_(q_sel)(flat, LM_(q_sel)(cos_half >= sin_half, LM_(q_identity)(), half), LM_(q_normalize)(r));
  return LM_(q_sel)(none, LM_(q_identity)(), r);
}

static inline V LM_(ld)(const ik_real *a) {
  V v;
  memcpy(&v, a, sizeof v);
  return v;
}
static inline VV LM_(ld_v)(const ik_real *a, int stride) {
  VV r = {LM_(ld)(a), LM_(ld)(a + stride), LM_(ld)(a + 2 * stride)};
  return r;
}
static inline QV LM_(ld_q)(const ik_real *a, int stride) {
  QV r = {LM_(ld)(a), LM_(ld)(a + stride), LM_(ld)(a + 2 * stride), LM_(ld)(a + 3 * stride)};
  return r;
}
static inline void LM_(st)(ik_real *a, V v) { memcpy(a, &v, sizeof v); }
static inline void LM_(put_v)(ik_real *a, int stride, VV v) {
  LM_(st)(a, v.x);
  LM_(st)(a + stride, v.y);
  LM_(st)(a + 2 * stride, v.z);
}
static inline void LM_(put_q)(ik_real *a, int stride, QV q) {
  LM_(st)(a, q.x);
  LM_(st)(a + stride, q.y);
  LM_(st)(a + 2 * stride, q.z);
  LM_(st)(a + 3 * stride, q.w);
}
/* Stores q (v) where `m`, keeping the lanes it clears. */
static inline void LM_(st_q)(ik_real *a, int stride, QV q, M m) {
  LM_(put_q)(a, stride, LM_(q_sel)(m, q, LM_(ld_q)(a, stride)));
}
static inline void LM_(st_v)(ik_real *a, int stride, VV v, M m) {
  LM_(put_v)(a, stride, LM_(v3_sel)(m, v, LM_(ld_v)(a, stride)));
}
/* ik_vec3_dist2's sum of squares, ik_vec3_dist's square root of it. */
static inline V LM_(v3_dist2)(VV a, VV b) {
  const VV d = LM_(v3_sub)(a, b);
  return LM_(v3_dot)(d, d);
}
