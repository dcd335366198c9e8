/*
 * fuzz_input.h: reads a fuzzer's input bytes as the values a job or a call needs.
 *
 * Every reader takes what it needs from the front and gives zeros once the input runs
 * out, so any byte string decodes to something and a short input to a small case.
 * Numbers are drawn mostly from ordinary ranges, so that most decoded jobs are valid
 * and reach the solvers' inner loops, and otherwise from the values that break
 * arithmetic: signed zeros, NaN, infinities, denormals, huge values, the limits of
 * validation and raw bit patterns.
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ik_chain.h"

typedef struct fz_input {
  const uint8_t *p;
  size_t n;
} fz_input;

static inline void fz_init(fz_input *in, const uint8_t *data, size_t size) {
  in->p = data;
  in->n = size;
}

static inline int fz_empty(const fz_input *in) { return in->n == 0; }

static inline unsigned fz_u8(fz_input *in) {
  unsigned b;
  if (in->n == 0) return 0;
  b = in->p[0];
  in->p++;
  in->n--;
  return b;
}

static inline unsigned fz_u16(fz_input *in) {
  unsigned lo = fz_u8(in);
  return lo | (fz_u8(in) << 8);
}

static inline void fz_bytes(fz_input *in, void *out, size_t size) {
  size_t k = size < in->n ? size : in->n;
  memset(out, 0, size);
  memcpy(out, in->p, k);
  in->p += k;
  in->n -= k;
}

/* An integer in [lo, hi] (lo <= hi, the range at most 65536 wide). */
static inline int fz_int(fz_input *in, int lo, int hi) {
  unsigned span = (unsigned)(hi - lo) + 1u;
  unsigned v = span <= 256u ? fz_u8(in) : fz_u16(in);
  return lo + (int)(v % span);
}

static inline int fz_bool(fz_input *in) { return (int)(fz_u8(in) & 1u); }

/* Values that break arithmetic, for ik_real and for Lua numbers alike. */
static inline double fz_special(unsigned k) {
  static const double table[] = {0.0,
                                 -0.0,
                                 1.0,
                                 -1.0,
                                 0.5,
                                 2.0,
                                 1e-300,
                                 -1e-300,
                                 4.9406564584124654e-324 /* denormal */,
                                 2.2250738585072014e-308,
                                 1e-30,
                                 1e30,
                                 1e140,
                                 5e139,
                                 1.0000001e140,
                                 1e15,
                                 5e14,
                                 1e300,
                                 -1e300,
                                 DBL_MAX,
                                 -DBL_MAX,
                                 3.4028234663852886e38,
                                 1.401298464324817e-45,
                                 1e-7,
                                 1e-12,
                                 3.14159265358979323846,
                                 -3.14159265358979323846,
                                 6.283185307179586,
                                 1.5707963267948966,
                                 9007199254740993.0,
                                 -2147483648.0,
                                 2147483647.0,
                                 4294967296.0};
  const unsigned n = (unsigned)(sizeof table / sizeof table[0]);
  if (k % 40u < 3u) {
    /* NaN and the infinities, built at run time: no constant folding to worry about. */
    volatile double zero = 0.0;
    if (k % 40u == 0u) return zero / zero;
    return (k % 40u == 1u ? 1.0 : -1.0) / zero;
  }
  return table[k % n];
}

/* A number: mostly small and ordinary, sometimes special, sometimes raw bits. */
static inline double fz_double(fz_input *in) {
  unsigned sel = fz_u8(in);
  if (sel < 140u) return ((double)(int16_t)fz_u16(in)) / 256.0; /* [-128, 128), steps of 1/256 */
  if (sel < 200u) return (double)fz_u8(in) / 64.0 - 2.0;        /* [-2, 2) */
  if (sel < 240u) return fz_special(fz_u8(in));
  {
    double d;
    fz_bytes(in, &d, sizeof d);
    return d;
  }
}

static inline ik_real fz_real(fz_input *in) {
#ifdef IK_REAL_FLOAT
  /* Raw float bits too: a double's raw bits nearly always land on 0 or inf as float. */
  if (in->n > 0 && in->p[0] >= 250u) {
    float f;
    fz_u8(in);
    fz_bytes(in, &f, sizeof f);
    return f;
  }
#endif
  return (ik_real)fz_double(in);
}

/* A length: mostly positive and ordinary. */
static inline ik_real fz_len(fz_input *in) {
  unsigned sel = fz_u8(in);
  if (sel < 200u) return (ik_real)(1 + fz_u16(in)) / (ik_real)4096; /* (0, 16] */
  return fz_real(in);
}

static inline ik_vec3 fz_vec3(fz_input *in) {
  ik_vec3 v;
  v.x = fz_real(in);
  v.y = fz_real(in);
  v.z = fz_real(in);
  return v;
}

static inline ik_quat fz_quat(fz_input *in) {
  ik_quat q;
  q.x = fz_real(in);
  q.y = fz_real(in);
  q.z = fz_real(in);
  q.w = fz_real(in);
  return q;
}

/* A weight or a fraction: mostly in [0, 1], sometimes anything. */
static inline ik_real fz_unit(fz_input *in) {
  unsigned sel = fz_u8(in);
  if (sel < 220u) return (ik_real)(sel % 101u) / (ik_real)100;
  return fz_real(in);
}

#endif /* FUZZ_INPUT_H */
