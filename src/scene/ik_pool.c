/*
 * ik_pool.c: ik_pool (ik_pool.h), threads that sleep on a condition variable
 * between runs. A run bumps the generation and wakes them; the caller runs range 0,
 * each worker that wakes claims the range of its index, and the caller then claims and
 * runs every range still unclaimed. So a worker that the system does not schedule in
 * time (a machine busy with other threads) delays nothing: the caller waits only for
 * ranges being run. Which thread runs a range changes nothing in what it computes. The
 * pool also owns each thread's lane buffers (ik_batch_lanes), allocated here once.
 */
#define _POSIX_C_SOURCE 200112L
#include "ik_pool.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct worker {
  ik_pool *pool;
  int index;
  pthread_t thread;
} worker;

struct ik_pool {
  int threads;
  int started;              /* workers running */
  pthread_mutex_t run_lock; /* one run at a time */
  pthread_mutex_t lock;     /* everything below */
  pthread_cond_t wake;      /* workers: a new generation, or stop */
  pthread_cond_t done;      /* the caller: busy fell to 0 */
  unsigned long generation;
  unsigned char claimed[IK_POOL_MAX_THREADS]; /* range t of this generation is taken */
  int busy;                                   /* ranges being run by workers */
  int stop;
  ik_pool_fn fn;
  void *ctx;
  int count;
  void *lane_memory;                          /* every thread's lane buffers */
  ik_batch_lanes *lanes[IK_POOL_MAX_THREADS]; /* thread t's, in lane_memory */
  worker workers[IK_POOL_MAX_THREADS];
};

/* Range `index` of `threads` over [0, count): contiguous, by index only. */
static void run_range(ik_pool_fn fn, void *ctx, int count, int index, int threads) {
  const int begin = (int)((long long)count * index / threads);
  const int end = (int)((long long)count * (index + 1) / threads);
  if (begin < end) fn(ctx, begin, end);
}

static void *worker_main(void *arg) {
  worker *w = (worker *)arg;
  ik_pool *pool = w->pool;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    ik_pool_fn fn;
    void *ctx;
    int count;
    while (pool->generation == seen && !pool->stop) pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->stop) break;
    seen = pool->generation;
    if (pool->claimed[w->index]) continue; /* the caller ran it */
    pool->claimed[w->index] = 1;
    pool->busy++;
    fn = pool->fn;
    ctx = pool->ctx;
    count = pool->count;
    pthread_mutex_unlock(&pool->lock);
    run_range(fn, ctx, count, w->index, pool->threads);
    pthread_mutex_lock(&pool->lock);
    if (--pool->busy == 0) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

static void stop_workers(ik_pool *pool) {
  int i;
  pthread_mutex_lock(&pool->lock);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (i = 1; i <= pool->started; i++) pthread_join(pool->workers[i].thread, NULL);
  pool->started = 0;
}

static void destroy(ik_pool *pool) {
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->lock);
  pthread_mutex_destroy(&pool->run_lock);
  free(pool->lane_memory);
  free(pool);
}

/* One thread's lane buffers, rounded up to keep the next one aligned. */
static size_t lanes_stride(void) {
  const size_t a = IK_BATCH_LANES_ALIGN;
  return (ik_batch_lanes_size() + a - 1) / a * a;
}

ik_pool *ik_pool_new(int threads) {
  ik_pool *pool;
  void *lane_memory;
  int i;
  if (threads < 1 || threads > IK_POOL_MAX_THREADS) return NULL;
  if (posix_memalign(&lane_memory, IK_BATCH_LANES_ALIGN, lanes_stride() * (size_t)threads) != 0) return NULL;
  pool = (ik_pool *)calloc(1, sizeof *pool);
  if (pool == NULL) {
    free(lane_memory);
    return NULL;
  }
  pool->threads = threads;
  pool->lane_memory = lane_memory;
  for (i = 0; i < threads; i++)
    pool->lanes[i] = ik_batch_lanes_init((char *)lane_memory + lanes_stride() * (size_t)i);
  if (pthread_mutex_init(&pool->run_lock, NULL) != 0) goto no_run_lock;
  if (pthread_mutex_init(&pool->lock, NULL) != 0) goto no_lock;
  if (pthread_cond_init(&pool->wake, NULL) != 0) goto no_wake;
  if (pthread_cond_init(&pool->done, NULL) != 0) goto no_done;
  for (i = 1; i < threads; i++) {
    worker *w = &pool->workers[i];
    w->pool = pool;
    w->index = i;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
      stop_workers(pool);
      destroy(pool);
      return NULL;
    }
    pool->started = i;
  }
  return pool;

no_done:
  pthread_cond_destroy(&pool->wake);
no_wake:
  pthread_mutex_destroy(&pool->lock);
no_lock:
  pthread_mutex_destroy(&pool->run_lock);
no_run_lock:
  free(lane_memory);
  free(pool);
  return NULL;
}

void ik_pool_free(ik_pool *pool) {
  if (pool == NULL) return;
  stop_workers(pool);
  destroy(pool);
}

int ik_pool_threads(const ik_pool *pool) { return pool ? pool->threads : 1; }

ik_batch_lanes *ik_pool_lanes(ik_pool *pool, int slice) { return pool->lanes[slice]; }

void ik_pool_run(ik_pool *pool, int count, ik_pool_fn fn, void *ctx) {
  int i;
  if (count <= 0) return;
  if (pool == NULL) {
    fn(ctx, 0, count);
    return;
  }
  /* Even with no worker to wake: the run owns the pool's lane buffers. */
  pthread_mutex_lock(&pool->run_lock);
  if (pool->threads == 1) {
    fn(ctx, 0, count);
    pthread_mutex_unlock(&pool->run_lock);
    return;
  }
  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->ctx = ctx;
  pool->count = count;
  pool->claimed[0] = 1;
  for (i = 1; i < pool->threads; i++) pool->claimed[i] = 0;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  run_range(fn, ctx, count, 0, pool->threads);
  for (i = 1; i < pool->threads; i++) {
    int take;
    pthread_mutex_lock(&pool->lock);
    take = !pool->claimed[i];
    pool->claimed[i] = 1;
    pthread_mutex_unlock(&pool->lock);
    if (take) run_range(fn, ctx, count, i, pool->threads);
  }
  pthread_mutex_lock(&pool->lock);
  while (pool->busy > 0) pthread_cond_wait(&pool->done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
  pthread_mutex_unlock(&pool->run_lock);
}

typedef struct batch_run {
  ik_batch *batch;
  ik_pool *pool;
} batch_run;

static void run_slices(void *ctx, int begin, int end) {
  const batch_run *run = (const batch_run *)ctx;
  int slice;
  for (slice = begin; slice < end; slice++)
    ik_batch_run_slice(run->batch, slice, run->pool->threads, run->pool->lanes[slice]);
}

ik_status ik_batch_run(ik_batch *batch, ik_pool *pool) {
  batch_run run;
  const ik_status st = ik_batch_check(batch);
  if (st != IK_OK) return st;
  if (pool == NULL) {
    ik_batch_run_slice(batch, 0, 1, NULL);
    return IK_OK;
  }
  run.batch = batch;
  run.pool = pool;
  ik_pool_run(pool, pool->threads, run_slices, &run);
  return IK_OK;
}
