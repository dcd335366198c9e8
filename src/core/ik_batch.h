/*
 * ik_batch.h: many solves in one call, over SIMD lanes and threads.
 *
 * A batch is arrays of ordinary jobs (ik_fabrik_job, ik_two_bone_job, ...), each filled
 * as for its own *_run. ik_batch_run solves them all: FABRIK chains without constraints
 * are packed across SIMD lanes (structure of arrays, one chain per lane), the rest run
 * one by one, and the whole set is split over the threads of an ik_pool.
 *
 * Determinism: every job ends bit for bit as its own *_run would leave it, whatever the
 * thread count and whatever else is in the batch (the lanes do each chain's operations
 * in the same order as the scalar code; work is split by job index, never by timing).
 *
 * SIMD: AVX2 where the processor has it (picked at run time), else the baseline of the
 * target (SSE2 on x86-64); GCC and clang vector extensions elsewhere; one chain at a
 * time in scalar code with other compilers. All give the same bits.
 *
 * Memory: ik_pool_new allocates (once): its threads and, for each, the lane buffers;
 * ik_batch_run allocates nothing, logs nothing and touches no global state. Without a
 * pool, the buffers (153 KB; 79 KB with float) are on the calling thread's stack. The
 * pool's threads sleep between runs.
 *
 * The jobs of a batch must not share memory that a solve writes: positions, and lengths
 * when derive_lengths is set (jobs run in no particular order, on several threads).
 * Sharing read-only lengths, constraints or rest positions is fine.
 */
#ifndef IK_BATCH_H
#define IK_BATCH_H

#include "ik_ccd.h"
#include "ik_dls.h"
#include "ik_fabrik.h"
#include "ik_two_bone.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most threads a pool runs (the calling thread counts as one). */
#define IK_POOL_MAX_THREADS 64

/* Longest FABRIK chain (joints) solved in SIMD lanes: 32 chains side by side up to 64
 * joints, 16 up to 128, 8 up to 256. Longer ones, and chains with constraints, run
 * ik_fabrik_run's scalar sweeps (with the same results). */
#define IK_BATCH_LANE_MAX_JOINTS 256

/* Worker threads that a run's work is split over. */
typedef struct ik_pool ik_pool;

/* A pool of `threads` (1 .. IK_POOL_MAX_THREADS) threads: the caller's, which takes
 * part in every run, and threads - 1 workers started now. NULL when threads is out of
 * range or the system refuses memory or a thread. */
ik_pool *ik_pool_new(int threads);
/* Stops and joins the workers, frees the pool. NULL is a no-op. Not while a run is on. */
void ik_pool_free(ik_pool *pool);
/* The pool's thread count (1 for NULL). */
int ik_pool_threads(const ik_pool *pool);

/* Calls fn(ctx, begin, end) over [0, count) split into contiguous ranges, one per
 * thread, and returns when all have returned: range t of T threads is
 * [count * t / T, count * (t + 1) / T), and an empty range is not called. The caller
 * runs range 0, and any range whose worker has not woken by the time it is done (a
 * busy machine then costs no waiting for a thread to be scheduled). The split depends
 * only on count and the thread count. count <= 0: no call. pool NULL: fn(ctx, 0, count)
 * on the calling thread. Runs on one pool take turns (a second caller waits); fn must
 * not call ik_pool_run on the same pool. */
typedef void (*ik_pool_fn)(void *ctx, int begin, int end);
void ik_pool_run(ik_pool *pool, int count, ik_pool_fn fn, void *ctx);

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
void ik_batch_init(ik_batch *batch);

/* Solves every job of the batch (pool NULL: on the calling thread only). A refused job
 * is left untouched and does not stop the others. Returns IK_E_NULL or IK_E_COUNT when
 * the batch itself is malformed (an array NULL with a positive count, a negative
 * count), and then solves nothing; else IK_OK, even when some jobs were refused (see
 * the *_status arrays, or each job's result). */
ik_status ik_batch_run(ik_batch *batch, ik_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* IK_BATCH_H */
