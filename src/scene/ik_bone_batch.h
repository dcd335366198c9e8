/*
 * ik_bone_batch.h: many bone chains (ik_bone_chain.h) solved in one call, over threads.
 *
 * A solve reads every chain's target, pole and bones, solves them all (FABRIK chains and
 * two-bone limbs through the core's ik_batch, packed across SIMD lanes; the rest one by
 * one), turns the bones and measures the results. Each chain ends bit for bit as its own
 * ik_bone_chain_run would leave it, whatever the thread count: a chain is always solved
 * by one thread, and the work is split by chain index or skeleton, never by timing.
 *
 * Scheduling: bone chains are grouped by the one skeleton each reads and writes
 * (ik_bone_chain_skeleton); a group's chains are read, solved and turned by one thread,
 * in batch order, so threads pay off across characters, not within one. Point chains
 * are in no group. Each thread takes its share through solving, turning and measuring
 * in blocks of IK_BONE_BATCH_BLOCK, so that a chain's memory comes into cache once per
 * solve, not once per stage. Chains in one batch are read before any is written.
 *
 * A chain may have a foot (ik_foot.h): its target is then the animated foot, and the
 * foot's ray and correction give the target the chain is solved for, on the thread
 * that solves it (the ground must not be a custom one).
 *
 * Memory: the caller sizes and owns the buffers (ik_bone_batch_buffer_size,
 * ik_bone_batch_scratch_size); ik_bone_batch_start starts the pool (ik_pool.h), which
 * allocates once. A solve allocates nothing.
 *
 * A caller with chains the scene cannot read (the Lua binding's host transforms) runs
 * the phases itself: ik_bone_batch_group, ik_bone_batch_read, ik_bone_batch_take for each
 * entry (gathering those it refuses itself, then ik_bone_batch_taken), ik_bone_batch_run,
 * then scatters those it gathered.
 */
#ifndef IK_BONE_BATCH_H
#define IK_BONE_BATCH_H

#include "ik_api.h"
#include "ik_bone_chain.h"
#include "ik_foot.h"
#include "ik_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A foot's closed flag, and its ground with that ground's closed flag, as the owner keeps
 * them (any flag NULL: never closed). */
typedef struct ik_foot_link {
  const int *closed;
  const ik_ground *ground;
  const int *ground_closed;
} ik_foot_link;

/* How an entry goes through a solve: gathered and scattered by the caller; in its
 * skeleton's group, by the batch's threads; a point chain read in C. */
enum { IK_PATH_CALLER, IK_PATH_GROUP, IK_PATH_POINT };

/* One entry: a chain and, optionally, its foot. The scheduler's fields follow. */
typedef struct ik_bone_batch_entry {
  ik_bone_chain *chain;
  ik_foot_params *foot_params; /* NULL: no foot */
  ik_foot_state *foot_state;
  const ik_ground *ground;  /* the foot's, read at each solve */
  const ik_foot_link *link; /* the foot's flags and ground */
  int point;                /* a point chain (never changes): in no group */
  int lane, slot;           /* this solve's lane and index in its block's job array */
  int grounded;             /* the foot's last update planted it */
  int foot_ok;              /* this solve: the read found the foot ready for its target */
  /* This solve: the skeleton a bone chain alone reads and writes (NULL: the caller's,
   * or a point chain), the next entry of that skeleton's group, and what the batch's
   * gather said (its lane; -1: the caller's) and then its scatter (0; -1: the
   * caller's, which reports it). */
  const ik_skeleton *sk;
  int next, native;
  int path;    /* IK_PATH_*: how this solve gathered it, so scatters it */
  int reached; /* this solve's, when the batch scattered it */
} ik_bone_batch_entry;

/* Entries one thread takes through prepare, solve, finish and scatter together. */
#define IK_BONE_BATCH_BLOCK 128

/* One thread's jobs for its current block. */
typedef struct ik_bone_batch_scratch {
  ik_fabrik_job fabrik[IK_BONE_BATCH_BLOCK];
  ik_two_bone_job two_bone[IK_BONE_BATCH_BLOCK];
  ik_status fabrik_status[IK_BONE_BATCH_BLOCK], two_bone_status[IK_BONE_BATCH_BLOCK];
} ik_bone_batch_scratch;

typedef struct ik_bone_batch {
  ik_pool *pool;
  ik_bone_batch_scratch *scratch; /* threads of them */
  ik_bone_batch_entry *entries;   /* cap, in the buffer, with the arrays below */
  /* This solve's groups of entries by skeleton: each one's skeleton, first and last
   * entry; hash maps a skeleton to its group (open addressing, hash_cap slots, a power
   * of two at least twice cap). */
  const ik_skeleton **group_sk;
  int *group_first, *group_last, *hash;
  int groups, hash_cap;
  /* This solve's entries outside the groups, in order (loose_count of them). */
  int *loose;
  int loose_count;
  ik_real dt; /* this solve's, for the feet */
  int count, cap, threads;
} ik_bone_batch;

/* An empty batch, with no buffer and no threads yet. */
IK_API void ik_bone_batch_init(ik_bone_batch *b);
/* Starts the batch's `threads` (1 .. IK_POOL_MAX_THREADS), scratch holding
 * ik_bone_batch_scratch_size(threads) bytes (aligned as malloc's): IK_E_PARAMETER for a
 * thread count out of range, IK_E_NULL when the pool could not start. */
IK_API size_t ik_bone_batch_scratch_size(int threads);
IK_API ik_status ik_bone_batch_start(ik_bone_batch *b, int threads, void *scratch);
/* Stops the pool. The buffers are the caller's to free. */
IK_API void ik_bone_batch_free(ik_bone_batch *b);
/* Room for cap entries: bytes of a buffer, and the batch moved into one (its entries
 * copied over; cap at least count). */
IK_API size_t ik_bone_batch_buffer_size(int cap);
IK_API void ik_bone_batch_place(ik_bone_batch *b, void *buffer, int cap);
/* Adds a chain (and its foot, or params NULL) after the others: its index, or -1 when
 * the buffer is full. A chain or foot must be in a batch once. */
IK_API int ik_bone_batch_add(ik_bone_batch *b, ik_bone_chain *chain, ik_foot_params *params,
                             ik_foot_state *state, const ik_foot_link *link);
/* Takes entry i out, the others keeping their order. */
IK_API void ik_bone_batch_remove(ik_bone_batch *b, int i);

/* The phases of a solve. group: the bone chains by skeleton, 0 (every bone chain then
 * the caller's) when some bone chain cannot be read by the batch. read: every group's
 * chains and the point chains with a point target, read over the threads, and their
 * feet checked. take: entry i's lane and path from what read read (read again, on this
 * thread, when again: the caller's code ran since and may have changed any chain); 0
 * when the caller must gather it, then say taken. run: every entry solved and, but for
 * the caller's, scattered, over the threads. */
IK_API int ik_bone_batch_group(ik_bone_batch *b);
IK_API void ik_bone_batch_read(ik_bone_batch *b);
IK_API int ik_bone_batch_take(ik_bone_batch *b, int i, int grouped, int again);
IK_API void ik_bone_batch_taken(ik_bone_batch *b, int i, int lane);
IK_API void ik_bone_batch_run(ik_bone_batch *b);

/* Whether entry e's foot and ground are open and the ground one the threads may query
 * (then e->ground is set); whether the foot takes the target its chain gathered (err,
 * when not NULL: why not). */
IK_API int ik_bone_batch_foot_ready(ik_bone_batch_entry *e);
IK_API int ik_bone_batch_foot_valid(const ik_bone_batch_entry *e, ik_error *err);

/* A whole solve, dt seconds (>= 0) after the last, for a batch whose every chain the
 * scene reads (native bone chains, point chains with kept targets) and whose feet stand
 * on grounds it queries: how many reached in *reached. IK_E_PARAMETER, with the index of
 * the entry at fault in err->index, when one cannot be read or turned (no chain turned
 * when it could not be read). */
IK_API ik_status ik_bone_batch_solve(ik_bone_batch *b, ik_real dt, int *reached, ik_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IK_BONE_BATCH_H */
