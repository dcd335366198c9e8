/*
 * ik_batch.h: many solves in one call, over SIMD lanes.
 *
 * A batch is arrays of ordinary jobs (ik_fabrik_job, ik_two_bone_job, ...), each filled
 * as for its own *_run. ik_batch_run_slice solves a slice of them: FABRIK chains without
 * constraints, and two-bone jobs of weight 1 and softness 0, are packed across SIMD
 * lanes (structure of arrays, one chain per lane), the rest run one by one. The scene
 * layer's ik_batch_run (ik_pool.h) splits a whole batch over the threads of a pool, each
 * slice in that thread's lane buffers.
 *
 * Determinism: every job ends bit for bit as its own *_run would leave it, whatever the
 * slicing and whatever else is in the batch (the lanes do each chain's operations in the
 * same order as the scalar code; work is split by job index, never by timing).
 *
 * SIMD: AVX2 where the processor has it (picked at run time), else the baseline of the
 * target (SSE2 on x86-64); GCC and clang vector extensions elsewhere; one chain at a
 * time in scalar code with other compilers. All give the same bits.
 *
 * Memory: nothing here allocates, logs or touches global state. A slice runs in lane
 * buffers its caller keeps (ik_batch_lanes_size bytes), or, without them, on the
 * calling thread's stack.
 *
 * The jobs of a batch must not share memory that a solve writes: positions, and lengths
 * when derive_lengths is set (jobs run in no particular order, on several threads).
 * Sharing read-only lengths, constraints or rest positions is fine.
 */
#ifndef IK_BATCH_H
#define IK_BATCH_H

#include <stddef.h>

#include "ik_api.h"
#include "ik_ccd.h"
#include "ik_dls.h"
#include "ik_fabrik.h"
#include "ik_two_bone.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest FABRIK chain (joints) solved in SIMD lanes: 32 chains side by side up to 64
 * joints, 16 up to 128, 8 up to 256. Longer ones, and chains with constraints, run
 * ik_fabrik_run's scalar sweeps (with the same results). */
#define IK_BATCH_LANE_MAX_JOINTS 256

/* The jobs of one batch. Any array may be NULL with its count 0. */
typedef struct ik_batch {
  ik_fabrik_job *fabrik;
  int fabrik_count;
  ik_two_bone_job *two_bone;
  int two_bone_count;
  ik_ccd_job *ccd;
  int ccd_count;
  ik_dls_job *dls;
  int dls_count;
  /* Optional outputs, one per job of the array of the same name: what that job's
   * validate said (IK_OK, or why it was refused and left untouched). */
  ik_status *fabrik_status;
  ik_status *two_bone_status;
  ik_status *ccd_status;
  ik_status *dls_status;
} ik_batch;

/* An empty batch. */
IK_API void ik_batch_init(ik_batch *batch);

/* IK_E_NULL or IK_E_COUNT when the batch itself is malformed (an array NULL with a
 * positive count, a negative count), else IK_OK. */
IK_API ik_status ik_batch_check(const ik_batch *batch);

/* The buffers one thread solves lanes in: ik_batch_lanes_size bytes, aligned to
 * IK_BATCH_LANES_ALIGN, laid out by ik_batch_lanes_init. */
typedef struct ik_batch_lanes ik_batch_lanes;
#define IK_BATCH_LANES_ALIGN 32
IK_API size_t ik_batch_lanes_size(void);
IK_API ik_batch_lanes *ik_batch_lanes_init(void *mem);

/* Solves slice `slice` (0 .. slices - 1) of every job array of a batch ik_batch_check
 * passed: jobs [count * slice / slices, count * (slice + 1) / slices) of each, in `lanes`
 * (NULL: in buffers on the calling thread's stack). A refused job is left untouched
 * (see the *_status arrays, or each job's result). One ik_batch_lanes serves one call
 * at a time. */
IK_API void ik_batch_run_slice(ik_batch *batch, int slice, int slices, ik_batch_lanes *lanes);

#ifdef __cplusplus
}
#endif

#endif /* IK_BATCH_H */
