/*
 * ik_two_bone_lanes.c: the two-bone job over up to IK__TWO_BONE_LANES limbs at once in
 * structure-of-arrays form (ik_internal.h), one limb a vector lane.
 *
 * The body (ik_two_bone_lanes_body.h) is ik_two_bone.c's common path on vectors, the same
 * IEEE operations in the same order, none fused (built with -ffp-contract=off), so a lane
 * gives the scalar job's bits; a lane off that path is redone by ik_two_bone_run. On x86
 * it is compiled for the baseline (16-byte vectors) and for AVX2 (32-byte), picked at
 * run time; compilers without vector extensions run the limbs one by one.
 */
#include "ik_internal.h"
#include "ik_two_bone.h"

/* Lane e through ik_two_bone_run itself: its bits and its status, a refused lane's
 * positions left as they were. */
static void run_lane(ik__two_bone_lanes *l, int e) {
  ik_vec3 p[3];
  ik_two_bone_job job;
  ik_status status;
  int j;
  for (j = 0; j < 3; j++) p[j] = ik_vec3_make(l->p[j][0][e], l->p[j][1][e], l->p[j][2][e]);
  ik_two_bone_job_init(&job, p, ik_vec3_make(l->target[0][e], l->target[1][e], l->target[2][e]));
  if (l->has_pole) {
    job.has_pole = 1;
    job.pole = ik_vec3_make(l->pole[0][e], l->pole[1][e], l->pole[2][e]);
  }
  job.tolerance = l->tolerance;
  status = ik_two_bone_run(&job);
  if (status == IK_OK) {
    for (j = 1; j < 3; j++) l->p[j][0][e] = p[j].x, l->p[j][1][e] = p[j].y, l->p[j][2][e] = p[j].z;
  }
  l->distance[e] = job.result.distance;
  l->status[e] = status;
}

static int lanes_used(const ik__two_bone_lanes *l) {
  return l->n < 0 ? 0 : (l->n > IK__TWO_BONE_LANES ? IK__TWO_BONE_LANES : l->n);
}

static void run_scalar(ik__two_bone_lanes *l) {
  const int n = lanes_used(l);
  int e;
  for (e = 0; e < n; e++) run_lane(l, e);
  l->redone = (1u << n) - 1;
}

ik_status ik__two_bone_lane_result(const ik__two_bone_lanes *l, int e, ik_result *result) {
  if (l->status[e] == IK_OK) {
    result->distance = l->distance[e];
    result->reached = result->distance <= l->tolerance;
    result->iterations = 1;
  }
  return l->status[e];
}

#if defined(__GNUC__)

#include "ik_lanes_real.h"

#define TL_CAT2(a, b) a##_##b
#define TL_CAT(a, b) TL_CAT2(a, b)
#define TL_(x) TL_CAT(x, TL_SUFFIX)

/* A 16-byte mask's lanes as bits (one sign-bit extraction where SSE2 has it). */
static inline int bits_v16(ik__rm16 m) {
#if defined(__SSE2__) && defined(IK_REAL_FLOAT)
  return _mm_movemask_ps((__m128)m);
#elif defined(__SSE2__)
  return _mm_movemask_pd((__m128d)m);
#else
  int e, bits = 0;
  for (e = 0; e < (int)(16 / sizeof(ik_real)); e++) bits |= (m[e] != 0) << e;
  return bits;
#endif
}

#define TL_SUFFIX base
#define TL_NAME lanes_base
#define V ik__rv16
#define M ik__rm16
#define TL_W ((int)(16 / sizeof(ik_real)))
#define TL_SQRT(v) ik__sqrt_v16(v)
#define TL_BITS(m) bits_v16(m)
#include "ik_two_bone_lanes_body.h"
#undef TL_SUFFIX
#undef TL_NAME
#undef V
#undef M
#undef TL_W
#undef TL_SQRT
#undef TL_BITS

#if defined(__x86_64__) || defined(__i386__)
#define IK__TWO_BONE_AVX2 1
IK__TARGET_AVX2_BEGIN
#define TL_SUFFIX avx2
#define TL_NAME lanes_avx2
#define V ik__rv32
#define M ik__rm32
#define TL_W ((int)(32 / sizeof(ik_real)))
#define TL_SQRT(v) IK__SQRT_V32(ik__rv32, v)
#ifdef IK_REAL_FLOAT
#define TL_BITS(m) _mm256_movemask_ps((__m256)(m))
#else
#define TL_BITS(m) _mm256_movemask_pd((__m256d)(m))
#endif
#include "ik_two_bone_lanes_body.h"
#undef TL_SUFFIX
#undef TL_NAME
#undef V
#undef M
#undef TL_W
#undef TL_SQRT
#undef TL_BITS
IK__TARGET_END

#ifndef IK_REAL_FLOAT
/* AVX-512F for doubles: 8 limbs in one vector. (16 floats are more than the 8 lanes.) */
#define IK__TWO_BONE_AVX512 1
IK__TARGET_AVX512_BEGIN
#define TL_SUFFIX avx512
#define TL_NAME lanes_avx512
#define V ik__rv64
#define M ik__rm64
#define TL_W 8
#define TL_SQRT(v) IK__SQRT_V64_PD(v)
#define TL_BITS(m) ((int)_mm512_test_epi64_mask((__m512i)(m), (__m512i)(m)))
#include "ik_two_bone_lanes_body.h"
IK__TARGET_END
#endif
#endif

/* The settings every lane shares in their range (quick_valid's part of them), else every
 * lane through the scalar job, which names the fault. */
static int settings_ok(const ik__two_bone_lanes *l) {
  return l->tolerance >= 0 && ik_real_is_finite(l->tolerance);
}

/* The lanes in groups of w (a vector's) through `group`, then those it left, one by one. */
static void run_groups(ik__two_bone_lanes *l, int w, int (*group)(ik__two_bone_lanes *, int)) {
  const int n = lanes_used(l);
  int k, e, left;
  if (!settings_ok(l)) {
    run_scalar(l);
    return;
  }
  l->redone = 0;
  for (k = 0; k < n; k += w) {
    left = group(l, k);
    l->redone |= (unsigned)left << k;
    for (e = 0; left; left >>= 1, e++)
      if (left & 1) run_lane(l, k + e);
  }
}

static void run_base(ik__two_bone_lanes *l) { run_groups(l, (int)(16 / sizeof(ik_real)), lanes_base); }
#ifdef IK__TWO_BONE_AVX2
static void run_avx2(ik__two_bone_lanes *l) { run_groups(l, (int)(32 / sizeof(ik_real)), lanes_avx2); }
#endif
#ifdef IK__TWO_BONE_AVX512
static void run_avx512(ik__two_bone_lanes *l) { run_groups(l, 8, lanes_avx512); }
#endif

ik__two_bone_lanes_fn ik__two_bone_lanes_variant(int isa) {
  if (isa == 0) return run_base;
  if (isa == 2) return run_scalar;
#ifdef IK__TWO_BONE_AVX2
  if (isa == 1 && __builtin_cpu_supports("avx2")) return run_avx2;
#endif
#ifdef IK__TWO_BONE_AVX512
  if (isa == 3 && __builtin_cpu_supports("avx512f")) return run_avx512;
#endif
  return NULL;
}

void ik__two_bone_run_lanes(ik__two_bone_lanes *l) {
#ifdef IK__TWO_BONE_AVX512
  if (__builtin_cpu_supports("avx512f")) {
    run_avx512(l);
    return;
  }
#endif
#ifdef IK__TWO_BONE_AVX2
  if (__builtin_cpu_supports("avx2")) {
    run_avx2(l);
    return;
  }
#endif
  run_base(l);
}

#else /* no vector extensions: one by one */

ik__two_bone_lanes_fn ik__two_bone_lanes_variant(int isa) { return isa == 0 || isa == 2 ? run_scalar : NULL; }

void ik__two_bone_run_lanes(ik__two_bone_lanes *l) { run_scalar(l); }

#endif
