/*
 * ik_batch_sweep.c: FABRIK sweeps over lane groups (ik_batch_lanes.h), in vectors.
 *
 * Also refined FABRIK's polish steps over lane groups (ik_batch_polish_body.h).
 *
 * Vectors are GCC/clang vector extensions. On x86 the sweep is compiled three times, for
 * the baseline (SSE2), AVX2 and AVX-512F, and a batch's lane workspace picks the widest
 * the processor has once, when it is laid out (ik__best_isa); elsewhere GCC and
 * clang lower the same vectors to what the target has. Other compilers sweep each lane
 * in scalar code. Every version gives the same bits: the same IEEE operations in the
 * same order, lane by lane, and none fused (this file is built with -ffp-contract=off).
 */
#include <stddef.h>

#include "ik_batch_lanes.h"
#include "ik_internal.h"

static ik_vec3 lane_point(const ik__lane_rows *rows, int joint, int lane) {
  const int cell = joint * rows->lanes + lane;
  return ik_vec3_make(rows->x[cell], rows->y[cell], rows->z[cell]);
}

static void set_lane_point(ik__lane_rows *rows, int joint, int lane, ik_vec3 p) {
  const int cell = joint * rows->lanes + lane;
  rows->x[cell] = p.x;
  rows->y[cell] = p.y;
  rows->z[cell] = p.z;
}

/* ik_fabrik.c's forward_fallback: along the bone just placed, or back towards the root
 * for the bone at the tip. */
void ik__sweep_lane_forward_step(ik__lane_rows *rows, int count, int lane, int i) {
  const ik_vec3 next_ws = lane_point(rows, i + 1, lane);
  const ik_vec3 back_dir = ik_vec3_neg(rows->root_dir[lane]);
  const ik_vec3 dir =
      i + 2 < count ? ik_vec3_normalize_or(ik_vec3_sub(next_ws, lane_point(rows, i + 2, lane)), back_dir)
                    : back_dir;
  set_lane_point(rows, i, lane, ik_vec3_madd(next_ws, dir, rows->len[i * rows->lanes + lane]));
}

/* ik_fabrik.c's backward_pass fallback: along the bone before, or the root's direction. */
void ik__sweep_lane_backward_step(ik__lane_rows *rows, int lane, int i) {
  const ik_vec3 prev_ws = lane_point(rows, i, lane);
  const ik_vec3 root_dir = rows->root_dir[lane];
  const ik_vec3 dir =
      i == 0 ? root_dir : ik_vec3_normalize_or(ik_vec3_sub(prev_ws, lane_point(rows, i - 1, lane)), root_dir);
  set_lane_point(rows, i + 1, lane, ik_vec3_madd(prev_ws, dir, rows->len[i * rows->lanes + lane]));
}

/* Each lane in scalar code, one after the other: what compilers without vector
 * extensions run (and, as variant 2, a third version the tests hold to the others). */

static void sweep_lane(ik__lane_rows *rows, int count, int lane) {
  const ik_real *len_of = &rows->len[lane];
  ik_vec3 next_ws = ik_vec3_make(rows->target_x[lane], rows->target_y[lane], rows->target_z[lane]);
  ik_vec3 prev_ws = ik_vec3_make(rows->root_x[lane], rows->root_y[lane], rows->root_z[lane]);
  int i;
  set_lane_point(rows, count - 1, lane, next_ws);
  for (i = count - 2; i >= 0; i--) {
    const ik_vec3 bone = ik_vec3_sub(lane_point(rows, i, lane), next_ws);
    const ik_real bone_len2 = ik_vec3_len2(bone);
    if (bone_len2 > IK_TINY_LEN2)
      set_lane_point(rows, i, lane,
                     ik_vec3_madd(next_ws, bone, len_of[i * rows->lanes] / ik_sqrt(bone_len2)));
    else
      ik__sweep_lane_forward_step(rows, count, lane, i);
    next_ws = lane_point(rows, i, lane);
  }
  set_lane_point(rows, 0, lane, prev_ws);
  for (i = 0; i + 1 < count; i++) {
    const ik_vec3 bone = ik_vec3_sub(lane_point(rows, i + 1, lane), prev_ws);
    const ik_real bone_len2 = ik_vec3_len2(bone);
    if (bone_len2 > IK_TINY_LEN2)
      set_lane_point(rows, i + 1, lane,
                     ik_vec3_madd(prev_ws, bone, len_of[i * rows->lanes] / ik_sqrt(bone_len2)));
    else
      ik__sweep_lane_backward_step(rows, lane, i);
    prev_ws = lane_point(rows, i + 1, lane);
  }
}

static ik__lane_mask sweep_scalar(ik__lane_rows *rows, int count, ik__lane_mask live) {
  ik__lane_mask checks = 0;
  int lane;
  for (lane = 0; lane < rows->lanes; lane++) {
    ik_real err2;
    if (!(live >> lane & 1)) continue;
    sweep_lane(rows, count, lane);
    err2 = ik_vec3_dist2(lane_point(rows, count - 1, lane),
                         ik_vec3_make(rows->target_x[lane], rows->target_y[lane], rows->target_z[lane]));
    const ik_real before2 = rows->tip_err2[lane];
    rows->prev_err2[lane] = before2;
    rows->tip_err2[lane] = err2;
    if (err2 <= rows->tol2[lane] || (err2 < rows->near2[lane] && err2 > rows->slow2[lane] * before2))
      checks |= (ik__lane_mask)1 << lane;
  }
  return checks;
}

/* The polish in scalar code: every lane is handed back to ik__dls_step. */
static ik__lane_mask plan_scalar(ik__lane_rows *rows, int count, ik__lane_mask live) {
  (void)rows;
  (void)count;
  return live;
}

static void apply_scalar(ik__lane_rows *rows, int count, ik__lane_mask live) {
  (void)rows;
  (void)count;
  (void)live;
}

/* ik__plane_normal itself, lane by lane. */
static void plane_scalar(ik__lane_rows *rows, int count, ik__lane_mask live) {
  ik_vec3 p[IK_BATCH_LANE_MAX_JOINTS];
  int lane, i;
  for (lane = 0; lane < rows->lanes; lane++) {
    ik_vec3 n;
    if (!(live >> lane & 1)) continue;
    for (i = 0; i < count; i++) p[i] = lane_point(rows, i, lane);
    n = ik__plane_normal(p, count,
                         ik_vec3_make(rows->target_x[lane], rows->target_y[lane], rows->target_z[lane]),
                         rows->total[lane]);
    rows->plane_x[lane] = n.x;
    rows->plane_y[lane] = n.y;
    rows->plane_z[lane] = n.z;
  }
}

#if defined(__GNUC__)

/* After a row of a vector sweep, each lane of `live` whose bone had no length there
 * (len2[lane], its bone_len2, <= IK_TINY_LEN2) redoes its step of joint i in scalar code:
 * the forward pass's, or the backward's. */
static void redo_degenerate(ik__lane_rows *rows, int count, ik__lane_mask live, const ik_real *len2,
                            int forward, int i) {
  ik__lane_mask m;
  for (m = live; m; m &= m - 1) {
    const int lane = __builtin_ctzl(m);
    if (len2[lane] > IK_TINY_LEN2) continue;
    if (forward)
      ik__sweep_lane_forward_step(rows, count, lane, i);
    else
      ik__sweep_lane_backward_step(rows, lane, i);
  }
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Baseline: 16-byte vectors. */
typedef ik_real ik__v16 __attribute__((vector_size(16), may_alias));
#define SWEEP_NAME sweep_base
#define SWEEP_TARGET
#define SWEEP_V ik__v16
#define SWEEP_W ((int)(16 / sizeof(ik_real)))
#if defined(__SSE2__) && defined(IK_REAL_FLOAT)
#define SWEEP_SQRT(v) ((ik__v16)_mm_sqrt_ps((__m128)(v)))
#define SWEEP_BITS(c) _mm_movemask_ps((__m128)(c))
#elif defined(__SSE2__)
#define SWEEP_SQRT(v) ((ik__v16)_mm_sqrt_pd((__m128d)(v)))
#define SWEEP_BITS(c) _mm_movemask_pd((__m128d)(c))
#else
static inline ik__v16 sqrt_v16(ik__v16 v) {
  int e;
  for (e = 0; e < SWEEP_W; e++) v[e] = ik_sqrt(v[e]);
  return v;
}
#define SWEEP_SQRT(v) sqrt_v16(v)
#define SWEEP_BITS(c) bits_v16(c)
#endif
/* The integer vector a comparison gives (its element type is long or long long for
 * doubles, depending on the target). */
typedef __typeof__(((ik__v16){0} < (ik__v16){0})[0]) ik__lane_int;
typedef ik__lane_int ik__m16 __attribute__((vector_size(16)));
#if !defined(__SSE2__)
static inline int bits_v16(ik__m16 c) {
  int e, bits = 0;
  for (e = 0; e < SWEEP_W; e++) bits |= (c[e] != 0) << e;
  return bits;
}
#endif
#define SWEEP_M ik__m16
#define PLAN_NAME plan_base
#define PLANE_NAME plane_base
#define APPLY_NAME apply_base
#include "ik_batch_polish_body.h"
#include "ik_batch_sweep_body.h"
#undef SWEEP_NAME
#undef SWEEP_TARGET
#undef SWEEP_V
#undef SWEEP_W
#undef SWEEP_SQRT
#undef SWEEP_BITS
#undef SWEEP_M
#undef PLAN_NAME
#undef PLANE_NAME
#undef APPLY_NAME

/* AVX2: 32-byte vectors, picked at run time. (Not FMA: a fused multiply-add would round
 * differently from the scalar code.) */
#if defined(__x86_64__) || defined(__i386__)
#define IK__SWEEP_AVX2 1
typedef ik_real ik__v32 __attribute__((vector_size(32), may_alias));
typedef ik__lane_int ik__m32 __attribute__((vector_size(32)));
#define SWEEP_NAME sweep_avx2
#define SWEEP_M ik__m32
#define PLAN_NAME plan_avx2
#define PLANE_NAME plane_avx2
#define APPLY_NAME apply_avx2
#define SWEEP_TARGET __attribute__((target("avx2")))
#define SWEEP_V ik__v32
#define SWEEP_W ((int)(32 / sizeof(ik_real)))
#ifdef IK_REAL_FLOAT
#define SWEEP_SQRT(v) ((ik__v32)_mm256_sqrt_ps((__m256)(v)))
#define SWEEP_BITS(c) _mm256_movemask_ps((__m256)(c))
#else
#define SWEEP_SQRT(v) ((ik__v32)_mm256_sqrt_pd((__m256d)(v)))
#define SWEEP_BITS(c) _mm256_movemask_pd((__m256d)(c))
#endif
#include "ik_batch_polish_body.h"
#include "ik_batch_sweep_body.h"
#endif

#undef SWEEP_NAME
#undef SWEEP_TARGET
#undef SWEEP_V
#undef SWEEP_W
#undef SWEEP_SQRT
#undef SWEEP_BITS
#undef SWEEP_M
#undef PLAN_NAME
#undef PLANE_NAME
#undef APPLY_NAME

#if defined(__x86_64__) || defined(__i386__)
/* AVX-512F: 64-byte vectors, 8 doubles or 16 floats, picked at run time. Its square
 * root and divide take about what AVX2's do per instruction, for twice the lanes. Rows
 * start on 32-byte boundaries only, so the vectors are declared 32-byte aligned (the
 * loads are unaligned ones). A joint step is a chain of dependent operations: a group
 * with fewer than four of these vectors (chains of over 64 joints with doubles, every
 * group with floats) leaves the divider waiting, and takes AVX2's sweep and polish,
 * which keep twice as many in flight (docs/benchmarks.md). */
#define IK__SWEEP_AVX512 1
typedef ik_real ik__v64 __attribute__((vector_size(64), aligned(32), may_alias));
typedef ik__lane_int ik__m64 __attribute__((vector_size(64), aligned(32)));
#define SWEEP_NAME sweep_avx512_wide
#define SWEEP_M ik__m64
#define PLAN_NAME plan_avx512_wide
#define PLANE_NAME plane_avx512_wide
#define APPLY_NAME apply_avx512_wide
#define SWEEP_TARGET __attribute__((target("avx512f")))
#define SWEEP_V ik__v64
#define SWEEP_W ((int)(64 / sizeof(ik_real)))
#ifdef IK_REAL_FLOAT
#define SWEEP_SQRT(v) ((ik__v64)_mm512_sqrt_ps((__m512)(v)))
#define SWEEP_BITS(c) ((int)_mm512_test_epi32_mask((__m512i)(c), (__m512i)(c)))
#else
#define SWEEP_SQRT(v) ((ik__v64)_mm512_sqrt_pd((__m512d)(v)))
#define SWEEP_BITS(c) ((int)_mm512_test_epi64_mask((__m512i)(c), (__m512i)(c)))
#endif
#include "ik_batch_polish_body.h"
#include "ik_batch_sweep_body.h"

static ik__lane_mask sweep_avx512(ik__lane_rows *rows, int count, ik__lane_mask live) {
  return rows->lanes < 4 * SWEEP_W ? sweep_avx2(rows, count, live) : sweep_avx512_wide(rows, count, live);
}
static ik__lane_mask plan_avx512(ik__lane_rows *rows, int count, ik__lane_mask live) {
  return rows->lanes < 4 * SWEEP_W ? plan_avx2(rows, count, live) : plan_avx512_wide(rows, count, live);
}
static void plane_avx512(ik__lane_rows *rows, int count, ik__lane_mask live) {
  if (rows->lanes < 4 * SWEEP_W)
    plane_avx2(rows, count, live);
  else
    plane_avx512_wide(rows, count, live);
}
static void apply_avx512(ik__lane_rows *rows, int count, ik__lane_mask live) {
  if (rows->lanes < 4 * SWEEP_W)
    apply_avx2(rows, count, live);
  else
    apply_avx512_wide(rows, count, live);
}
#endif

/* Whether the processor runs instruction set isa (ik__sweep_variant's numbers). */
static int isa_present(int isa) {
#ifdef IK__SWEEP_AVX2
  if (isa == 1) return __builtin_cpu_supports("avx2");
  if (isa == 3) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f");
#endif
  return isa == 0 || isa == 2;
}

ik__sweep_fn ik__sweep_variant(int isa) {
  if (!isa_present(isa)) return NULL;
  if (isa == 0) return sweep_base;
  if (isa == 2) return sweep_scalar;
#ifdef IK__SWEEP_AVX2
  if (isa == 1) return sweep_avx2;
  if (isa == 3) return sweep_avx512;
#endif
  return NULL;
}

ik__polish_fns ik__polish_variant(int isa) {
  ik__polish_fns fns = {NULL, NULL, NULL};
  if (!isa_present(isa)) return fns;
  if (isa == 0) {
    fns.plan = plan_base;
    fns.apply = apply_base;
    fns.plane = plane_base;
  }
  if (isa == 2) {
    fns.plan = plan_scalar;
    fns.apply = apply_scalar;
    fns.plane = plane_scalar;
  }
#ifdef IK__SWEEP_AVX2
  if (isa == 1) {
    fns.plan = plan_avx2;
    fns.apply = apply_avx2;
    fns.plane = plane_avx2;
  }
  if (isa == 3) {
    fns.plan = plan_avx512;
    fns.apply = apply_avx512;
    fns.plane = plane_avx512;
  }
#endif
  return fns;
}

int ik__best_isa(void) {
  if (isa_present(3)) return 3;
  if (isa_present(1)) return 1;
  return 0;
}

#else /* no vector extensions: each lane in scalar code */

ik__sweep_fn ik__sweep_variant(int isa) { return isa == 0 || isa == 2 ? sweep_scalar : NULL; }

ik__polish_fns ik__polish_variant(int isa) {
  ik__polish_fns fns = {NULL, NULL, NULL};
  if (isa == 0 || isa == 2) {
    fns.plan = plan_scalar;
    fns.apply = apply_scalar;
    fns.plane = plane_scalar;
  }
  return fns;
}

int ik__best_isa(void) { return 0; }

#endif
