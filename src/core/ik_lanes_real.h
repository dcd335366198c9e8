/*
 * ik_lanes_real.h: the 16-byte vector of ik_real the lane code of the core and the scene
 * is written over (GCC vector extensions), its lane mask, and square roots of 16- and
 * 32-byte vectors, correctly rounded as the scalar ik_sqrt is, so that a lane gives the
 * scalar code's bits. Not API; only under __GNUC__.
 */
#ifndef IK_LANES_REAL_H
#define IK_LANES_REAL_H

#include "ik_math.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

typedef ik_real ik__rv16 __attribute__((vector_size(16)));
typedef __typeof__(((ik__rv16){0} < (ik__rv16){0})[0]) ik__rl_int;
typedef ik__rl_int ik__rm16 __attribute__((vector_size(16)));

static inline ik__rv16 ik__sqrt_v16(ik__rv16 v) {
#if defined(__SSE2__) && defined(IK_REAL_FLOAT)
  return (ik__rv16)_mm_sqrt_ps((__m128)v);
#elif defined(__SSE2__)
  return (ik__rv16)_mm_sqrt_pd((__m128d)v);
#else
  int e;
  for (e = 0; e < (int)(16 / sizeof(ik_real)); e++) v[e] = ik_sqrt(v[e]);
  return v;
#endif
}

/* A 32-byte vector's square root, type T, where AVX is enabled (a target("avx2") region). */
#ifdef IK_REAL_FLOAT
#define IK__SQRT_V32(T, v) ((T)_mm256_sqrt_ps((__m256)(v)))
#else
#define IK__SQRT_V32(T, v) ((T)_mm256_sqrt_pd((__m256d)(v)))
#endif

#if defined(__x86_64__) || defined(__i386__)
/* A region of functions compiled for AVX2, or AVX-512F (never FMA: a fused multiply-add
 * would round differently from the scalar code), and the vectors they run: 32 and 64
 * bytes of ik_real, their masks, a 64-byte square root of doubles. */
#if defined(__clang__)
#define IK__TARGET_AVX2_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx2\"))), apply_to = function)")
#define IK__TARGET_AVX512_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx512f\"))), apply_to = function)")
#define IK__TARGET_END _Pragma("clang attribute pop")
#else
#define IK__TARGET_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2\")")
#define IK__TARGET_AVX512_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f\")")
#define IK__TARGET_END _Pragma("GCC pop_options")
#endif
typedef ik_real ik__rv32 __attribute__((vector_size(32)));
typedef ik__rl_int ik__rm32 __attribute__((vector_size(32)));
typedef ik_real ik__rv64 __attribute__((vector_size(64)));
typedef ik__rl_int ik__rm64 __attribute__((vector_size(64)));
#define IK__SQRT_V64_PD(v) ((ik__rv64)_mm512_sqrt_pd((__m512d)(v)))
#endif

#endif
