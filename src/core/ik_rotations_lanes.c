/*
 * ik_rotations_lanes.c: the rotations job over many jobs at once (ik_internal.h), one job
 * a vector lane.
 *
 * The body (ik_rotations_lanes_body.h) is ik_rotations.c's steps on vectors: the same
 * IEEE operations in the same order, none fused (built with -ffp-contract=off), and no
 * trigonometry, so a lane gives the scalar job's bits. On x86 it is compiled for the
 * baseline (16-byte vectors) and for AVX2 (32-byte), picked at run time; compilers
 * without vector extensions run the jobs one by one.
 */
#include <string.h>

#include "ik_internal.h"
#include "ik_rotations.h"

int ik__rotations_lane_able(const ik_rotations_job *job) {
  return job->weight == 1 && job->twist_limits == NULL && job->twist_memory != NULL;
}

/* The structure-of-arrays form one lane at a time: each lane's job built and run. */
static void soa_run_scalar(const ik__rotations_soa *sets, int n) {
  ik_vec3 before[IK__SOA_JOINTS], solved[IK__SOA_JOINTS];
  ik_quat rot[IK__SOA_JOINTS], mem[IK__SOA_JOINTS];
  int e, i, g;
  for (g = 0; g < n; g++)
    for (e = 0; e < IK__SOA_LANES; e++) {
      const ik__rotations_soa *s = &sets[g];
      const int st = s->stride;
      ik_rotations_job job;
      if (!((s->mask >> e) & 1u)) continue;
      for (i = 0; i < s->count; i++) {
        before[i] = ik_vec3_make(s->before[i][e], s->before[i][st + e], s->before[i][2 * st + e]);
        solved[i] = ik_vec3_make(s->solved[i][e], s->solved[i][st + e], s->solved[i][2 * st + e]);
        rot[i] = ik_quat_make(s->rotations[i][e], s->rotations[i][st + e], s->rotations[i][2 * st + e],
                              s->rotations[i][3 * st + e]);
        mem[i] = i + 1 < s->count ? ik_quat_make(s->memory[i][e], s->memory[i][st + e],
                                                 s->memory[i][2 * st + e], s->memory[i][3 * st + e])
                                  : ik_quat_identity();
      }
      ik_rotations_job_init(&job, s->count, before, solved, rot);
      job.twist_memory = mem;
      ik__rotations_run_valid(&job);
      for (i = 0; i + 1 < s->count; i++) {
        s->rotations[i][e] = rot[i].x, s->rotations[i][st + e] = rot[i].y;
        s->rotations[i][2 * st + e] = rot[i].z, s->rotations[i][3 * st + e] = rot[i].w;
        s->memory[i][e] = mem[i].x, s->memory[i][st + e] = mem[i].y;
        s->memory[i][2 * st + e] = mem[i].z, s->memory[i][3 * st + e] = mem[i].w;
      }
    }
}

#if defined(__GNUC__)

#include "ik_lanes_real.h"

#define RL_CAT2(a, b) a##_##b
#define RL_CAT(a, b) RL_CAT2(a, b)
#define RL_(x) RL_CAT(x, RL_SUFFIX)

#define RL_SUFFIX base
#define RL_NAME lanes_base
#define RL_SOA_NAME soa_base
#define RL_TARGET
#define V ik__rv16
#define M ik__rm16
#define RL_W ((int)(16 / sizeof(ik_real)))
#define RL_SQRT(v) ik__sqrt_v16(v)
#include "ik_rotations_lanes_body.h"
#undef RL_SUFFIX
#undef RL_NAME
#undef RL_SOA_NAME
#undef RL_TARGET
#undef V
#undef M
#undef RL_W
#undef RL_SQRT

#if defined(__x86_64__) || defined(__i386__)
#define IK__ROT_AVX2 1
IK__TARGET_AVX2_BEGIN
#define RL_SUFFIX avx2
#define RL_NAME lanes_avx2
#define RL_SOA_NAME soa_avx2
#define RL_TARGET
#define V ik__rv32
#define M ik__rm32
#define RL_W ((int)(32 / sizeof(ik_real)))
#define RL_SQRT(v) IK__SQRT_V32(ik__rv32, v)
#include "ik_rotations_lanes_body.h"
IK__TARGET_END

#ifndef IK_REAL_FLOAT
/* AVX-512F for the structure-of-arrays form of doubles: its 8 lanes in one vector, half
 * AVX2's instructions, and each joint's chain of square roots and divisions once for all
 * 8. (16 floats are more lanes than a group has: floats keep AVX2's 8.) */
#define IK__ROT_AVX512 1
IK__TARGET_AVX512_BEGIN
#undef RL_SUFFIX
#undef RL_NAME
#undef RL_SOA_NAME
#undef V
#undef M
#undef RL_W
#undef RL_SQRT
#define RL_SUFFIX avx512
#define RL_SOA_NAME soa_avx512
#define RL_NO_JOBS 1
#define V ik__rv64
#define M ik__rm64
#define RL_W 8
#define RL_SQRT(v) IK__SQRT_V64_PD(v)
#include "ik_rotations_lanes_body.h"
#undef RL_NO_JOBS
IK__TARGET_END
#endif
#endif

/* Jobs in groups of a vector's lanes. */
static void run_base(ik_rotations_job *const *jobs, int n) {
  const int w = (int)(16 / sizeof(ik_real));
  int k;
  for (k = 0; k < n; k += w) lanes_base(jobs + k, n - k < w ? n - k : w);
}

#ifdef IK__ROT_AVX2
static void run_avx2(ik_rotations_job *const *jobs, int n) {
  const int w = (int)(32 / sizeof(ik_real));
  int k;
  for (k = 0; k < n; k += w) lanes_avx2(jobs + k, n - k < w ? n - k : w);
}
#endif

static void run_scalar(ik_rotations_job *const *jobs, int n) {
  int k;
  for (k = 0; k < n; k++) ik__rotations_run_valid(jobs[k]);
}

static void soa_run_base(const ik__rotations_soa *sets, int n) { soa_base(sets, n); }

#ifdef IK__ROT_AVX2
static void soa_run_avx2(const ik__rotations_soa *sets, int n) { soa_avx2(sets, n); }
#endif
#ifdef IK__ROT_AVX512
static void soa_run_avx512(const ik__rotations_soa *sets, int n) { soa_avx512(sets, n); }
#endif

ik__rotations_soa_fn ik__rotations_soa_variant(int isa) {
  if (isa == 0) return soa_run_base;
  if (isa == 2) return soa_run_scalar;
#ifdef IK__ROT_AVX2
  if (isa == 1 && __builtin_cpu_supports("avx2")) return soa_run_avx2;
#endif
#ifdef IK__ROT_AVX512
  if (isa == 3 && __builtin_cpu_supports("avx512f")) return soa_run_avx512;
#endif
  return NULL;
}

void ik__rotations_run_soa(const ik__rotations_soa *sets, int n) {
#ifdef IK__ROT_AVX512
  if (__builtin_cpu_supports("avx512f")) {
    soa_run_avx512(sets, n);
    return;
  }
#endif
#ifdef IK__ROT_AVX2
  if (__builtin_cpu_supports("avx2")) {
    soa_run_avx2(sets, n);
    return;
  }
#endif
  soa_run_base(sets, n);
}

ik__rotations_lanes_fn ik__rotations_lanes_variant(int isa) {
  if (isa == 0) return run_base;
  if (isa == 2) return run_scalar;
#ifdef IK__ROT_AVX2
  if (isa == 1 && __builtin_cpu_supports("avx2")) return run_avx2;
#endif
  return NULL;
}

void ik__rotations_run_lanes(ik_rotations_job *const *jobs, int n) {
#ifdef IK__ROT_AVX2
  if (__builtin_cpu_supports("avx2")) {
    run_avx2(jobs, n);
    return;
  }
#endif
  run_base(jobs, n);
}

#else /* no vector extensions: one by one */

static void run_scalar(ik_rotations_job *const *jobs, int n) {
  int k;
  for (k = 0; k < n; k++) ik__rotations_run_valid(jobs[k]);
}

ik__rotations_lanes_fn ik__rotations_lanes_variant(int isa) {
  return isa == 0 || isa == 2 ? run_scalar : NULL;
}

ik__rotations_soa_fn ik__rotations_soa_variant(int isa) {
  return isa == 0 || isa == 2 ? soa_run_scalar : NULL;
}

void ik__rotations_run_soa(const ik__rotations_soa *sets, int n) { soa_run_scalar(sets, n); }

void ik__rotations_run_lanes(ik_rotations_job *const *jobs, int n) { run_scalar(jobs, n); }

#endif
