/*
 * ik_pool.h: worker threads, and the core's batch (ik_batch.h) solved over them.
 *
 * Memory: ik_pool_new allocates (once): its threads and, for each, the core's lane
 * buffers (ik_batch_lanes); ik_pool_run and ik_batch_run allocate nothing, log nothing
 * and touch no global state. Without a pool, a batch's buffers (153 KB; 79 KB with
 * float) are on the calling thread's stack. The pool's threads sleep between runs.
 */
#ifndef IK_POOL_H
#define IK_POOL_H

#include "ik_api.h"
#include "ik_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most threads a pool runs (the calling thread counts as one). */
#define IK_POOL_MAX_THREADS 64

/* Worker threads that a run's work is split over. */
typedef struct ik_pool ik_pool;

/* A pool of `threads` (1 .. IK_POOL_MAX_THREADS) threads: the caller's, which takes
 * part in every run, and threads - 1 workers started now. NULL when threads is out of
 * range or the system refuses memory or a thread. */
IK_API ik_pool *ik_pool_new(int threads);
/* Stops and joins the workers, frees the pool. NULL is a no-op. Not while a run is on. */
IK_API void ik_pool_free(ik_pool *pool);
/* The pool's thread count (1 for NULL). */
IK_API int ik_pool_threads(const ik_pool *pool);

/* Calls fn(ctx, begin, end) over [0, count) split into contiguous ranges, one per
 * thread, and returns when all have returned: range t of T threads is
 * [count * t / T, count * (t + 1) / T), and an empty range is not called. The caller
 * runs range 0, and any range whose worker has not woken by the time it is done (a
 * busy machine then costs no waiting for a thread to be scheduled). The split depends
 * only on count and the thread count. count <= 0: no call. pool NULL: fn(ctx, 0, count)
 * on the calling thread. Runs on one pool take turns (a second caller waits); fn must
 * not call ik_pool_run on the same pool. */
typedef void (*ik_pool_fn)(void *ctx, int begin, int end);
IK_API void ik_pool_run(ik_pool *pool, int count, ik_pool_fn fn, void *ctx);

/* The lane buffers of the pool's thread `slice` (0 .. threads - 1), for a caller that
 * runs slices of a batch inside its own ik_pool_run: within one run, each slice's
 * buffers serve one call at a time. */
IK_API ik_batch_lanes *ik_pool_lanes(ik_pool *pool, int slice);

/* Solves every job of the batch over the pool's threads (pool NULL: on the calling
 * thread only), one slice a thread (ik_batch_run_slice). A refused job is left untouched
 * and does not stop the others. Returns IK_E_NULL or IK_E_COUNT when the batch itself is
 * malformed (ik_batch_check), and then solves nothing; else IK_OK, even when some jobs
 * were refused (see the *_status arrays, or each job's result). */
IK_API ik_status ik_batch_run(ik_batch *batch, ik_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* IK_POOL_H */
