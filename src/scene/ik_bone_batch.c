/*
 * ik_bone_batch.c: the bone-chain batch (ik_bone_batch.h): grouping by skeleton, blocks,
 * threads.
 */
#include "ik_bone_batch.h"

#include <stdint.h>
#include <string.h>

#include "ik_scene_internal.h"

/* How many entries ahead a pass over many chains asks for their memory. */
#define PREFETCH_AHEAD 4

size_t ik_bone_batch_scratch_size(int threads) { return (size_t)threads * sizeof(ik_bone_batch_scratch); }

void ik_bone_batch_init(ik_bone_batch *b) { memset(b, 0, sizeof *b); }

ik_status ik_bone_batch_start(ik_bone_batch *b, int threads, void *scratch) {
  if (threads < 1 || threads > IK_POOL_MAX_THREADS) return IK_E_PARAMETER;
  b->threads = threads;
  b->scratch = (ik_bone_batch_scratch *)scratch;
  b->pool = ik_pool_new(threads);
  return b->pool ? IK_OK : IK_E_NULL;
}

void ik_bone_batch_free(ik_bone_batch *b) {
  ik_pool_free(b->pool);
  b->pool = NULL;
}

/* The slots of a hash for cap entries. */
static int hash_cap_for(int cap) {
  int hash_cap = 8;
  while (hash_cap < 2 * cap) hash_cap *= 2;
  return hash_cap;
}

/* Largest alignment first: every size below is a multiple of what follows it. */
size_t ik_bone_batch_buffer_size(int cap) {
  return (size_t)cap * (sizeof(ik_bone_batch_entry) + sizeof(ik_skeleton *) + 3 * sizeof(int)) +
         (size_t)hash_cap_for(cap) * sizeof(int);
}

void ik_bone_batch_place(ik_bone_batch *b, void *buffer, int cap) {
  char *at = (char *)buffer;
  if (b->count) memcpy(at, b->entries, (size_t)b->count * sizeof *b->entries);
  b->entries = (ik_bone_batch_entry *)(void *)at;
  b->group_sk = (const ik_skeleton **)(void *)(b->entries + cap);
  b->group_first = (int *)(void *)(b->group_sk + cap);
  b->group_last = b->group_first + cap;
  b->loose = b->group_last + cap;
  b->hash = b->loose + cap;
  b->hash_cap = hash_cap_for(cap);
  b->cap = cap;
}

int ik_bone_batch_add(ik_bone_batch *b, ik_bone_chain *chain, ik_foot_params *params, ik_foot_state *state,
                      const ik_foot_link *link) {
  ik_bone_batch_entry *e;
  if (b->count >= b->cap) return -1;
  e = &b->entries[b->count];
  memset(e, 0, sizeof *e);
  e->chain = chain;
  e->point = !chain->bound;
  e->foot_params = params;
  e->foot_state = params ? state : NULL;
  e->link = params ? link : NULL;
  if (params && link) e->ground = link->ground;
  return b->count++;
}

void ik_bone_batch_remove(ik_bone_batch *b, int i) {
  memmove(&b->entries[i], &b->entries[i + 1], (size_t)(b->count - i - 1) * sizeof *b->entries);
  b->count--;
}

/* Part `part`'s share [*begin, *end) of count items: contiguous, by the counts and the
 * thread count only, as ik_pool_run splits. */
static void share(const ik_bone_batch *b, int count, int part, int *begin, int *end) {
  *begin = (int)((long long)count * part / b->threads);
  *end = (int)((long long)count * (part + 1) / b->threads);
}

/* Feet placed together by ik__foot_update_many: a run of feet with equal params, ground
 * and dt, at most FEET_RUN of them; a run's search ends once it has passed FEET_MISSES
 * more unlike feet than it took, so that a block of feet all unlike costs a few tests a
 * foot. */
#define FEET_RUN 32
#define FEET_MISSES 4

/* Whether entry e's foot shares params (bit for bit: the same update) and ground with f's. */
static int same_foot_kind(const ik_bone_batch_entry *e, const ik_bone_batch_entry *f) {
  const ik_foot_params *p = e->foot_params, *q = f->foot_params;
  return e->ground == f->ground &&
         (p == q || (p->smooth_time == q->smooth_time && p->foot_offset == q->foot_offset &&
                     memcmp(p, q, sizeof *p) == 0));
}

/* The feet of the entries at `block`: their rays and corrections, which give the targets
 * the legs are solved for, in runs of feet alike. Checked at gather (dt at the call): a
 * refusal here leaves the target alone. A foot reads and writes only its own chain's
 * target and its own state (on a ground that is not a custom one), so the feet may go in
 * any order, and all before any chain is prepared. */
static void update_feet(const ik_bone_batch *b, const int *block, int n) {
  unsigned char done[IK_BONE_BATCH_BLOCK];
  ik_bone_batch_entry *run[FEET_RUN];
  ik_foot_state *states[FEET_RUN];
  ik_vec3 positions[FEET_RUN];
  ik_quat rotations[FEET_RUN];
  ik_foot_result out[FEET_RUN];
  ik_status status[FEET_RUN];
  int first, j, k, count, misses;
  memset(done, 0, (size_t)n);
  for (first = 0; first < n; first++) {
    const ik_bone_batch_entry *lead = &b->entries[block[first]];
    if (done[first] || !lead->foot_params) continue;
    count = misses = 0;
    for (j = first; j < n && count < FEET_RUN && misses <= count + FEET_MISSES; j++) {
      ik_bone_batch_entry *e = &b->entries[block[j]];
      if (done[j] || !e->foot_params) continue;
      if (j > first && !same_foot_kind(e, lead)) {
        misses++;
        continue;
      }
      done[j] = 1;
      run[count] = e;
      states[count] = e->foot_state;
      positions[count] = e->chain->now.target;
      rotations[count] = e->chain->now.target_rotation;
      count++;
    }
    ik__foot_update_many(lead->foot_params, lead->ground, b->dt, count, states, positions, rotations, out,
                         status);
    for (k = 0; k < count; k++) {
      ik_bone_batch_entry *e = run[k];
      e->grounded = 0;
      if (status[k] != IK_OK) continue;
      e->chain->now.target = out[k].position;
      e->chain->now.target_rotation = out[k].rotation;
      e->grounded = out[k].grounded;
    }
  }
}

/* The entries at `block` (n of them, in order) from gathered to scattered, on thread
 * `part`'s scratch and lane buffers. A group's entries write their skeleton here (every
 * read of every group was done before: read_parts), a point chain is answered here;
 * those the caller gathered it scatters. */
static void run_block(ik_bone_batch *b, int part, const int *block, int n) {
  ik_bone_batch_scratch *s = &b->scratch[part];
  ik_batch jobs;
  int i;
  ik_batch_init(&jobs);
  update_feet(b, block, n);
  for (i = 0; i < n && i < PREFETCH_AHEAD; i++)
    ik_bone_chain_prefetch(b->entries[block[i]].chain, IK_BONE_CHAIN_PREFETCH_HEADER);
  for (i = 0; i < n; i++) {
    ik_bone_batch_entry *e = &b->entries[block[i]];
    if (i + PREFETCH_AHEAD < n)
      ik_bone_chain_prefetch(b->entries[block[i + PREFETCH_AHEAD]].chain, IK_BONE_CHAIN_PREFETCH_HEADER);
    if (i + PREFETCH_AHEAD / 2 < n)
      ik_bone_chain_prefetch(b->entries[block[i + PREFETCH_AHEAD / 2]].chain, IK_BONE_CHAIN_PREFETCH_SOLVE);
    if (e->lane == IK_LANE_FABRIK) {
      e->slot = jobs.fabrik_count++;
      ik_bone_chain_prepare(e->chain, e->lane, &s->fabrik[e->slot]);
    } else if (e->lane == IK_LANE_TWO_BONE) {
      e->slot = jobs.two_bone_count++;
      ik_bone_chain_prepare(e->chain, e->lane, &s->two_bone[e->slot]);
    } else {
      ik_bone_chain_solve(e->chain);
    }
  }
  jobs.fabrik = s->fabrik;
  jobs.fabrik_status = s->fabrik_status;
  jobs.two_bone = s->two_bone;
  jobs.two_bone_status = s->two_bone_status;
  ik_batch_run_slice(&jobs, 0, 1, ik_pool_lanes(b->pool, part)); /* well formed by construction */
  for (i = 0; i < n; i++) {
    ik_bone_batch_entry *e = &b->entries[block[i]];
    if (e->lane == IK_LANE_FABRIK)
      ik_bone_chain_finish(e->chain, &s->fabrik[e->slot].result, s->fabrik_status[e->slot]);
    else if (e->lane == IK_LANE_TWO_BONE)
      ik_bone_chain_finish(e->chain, &s->two_bone[e->slot].result, s->two_bone_status[e->slot]);
    if (e->path == IK_PATH_CALLER) continue;
    e->native = ik_bone_chain_scatter(e->chain);
    e->reached = (&e->chain->now.result)->reached != 0;
  }
}

/* Part `part` of a solve (one per thread): its share of the groups, each one's entries
 * in batch order, then its share of the other entries; in blocks. The split depends on
 * the counts and the thread count only. */
static void solve_part(ik_bone_batch *b, int part) {
  int block[IK_BONE_BATCH_BLOCK], n = 0, g, g_end, j, j_end, i;
  share(b, b->groups, part, &g, &g_end);
  share(b, b->loose_count, part, &j, &j_end);
  for (; g < g_end; g++)
    for (i = b->group_first[g]; i >= 0; i = b->entries[i].next) {
      if (b->entries[i].path != IK_PATH_GROUP) continue; /* read on the Lua thread after all: loose */
      block[n++] = i;
      if (n == IK_BONE_BATCH_BLOCK) run_block(b, part, block, n), n = 0;
    }
  for (; j < j_end; j++) {
    block[n++] = b->loose[j];
    if (n == IK_BONE_BATCH_BLOCK) run_block(b, part, block, n), n = 0;
  }
  if (n) run_block(b, part, block, n);
}

static void solve_parts(void *ctx, int begin, int end) {
  int part;
  for (part = begin; part < end; part++) solve_part((ik_bone_batch *)ctx, part);
}

/* Whether entry e's foot takes the target its chain gathered (err, when not NULL: why
 * not). */
static int foot_valid(const ik_bone_batch_entry *e, ik_error *err) {
  ik_foot_result out; /* only its address is read */
  memset(&out, 0, sizeof out);
  return ik_foot_validate(e->foot_params, e->foot_state, e->ground, e->chain->now.target,
                          e->chain->now.target_rotation, 0, &out, err) == IK_OK;
}

int ik_bone_batch_foot_valid(const ik_bone_batch_entry *e, ik_error *err) { return foot_valid(e, err); }

/* Whether entry e's foot and ground are open, the ground one the parallel phase may
 * query: then e->ground is set. */
static int foot_ready(ik_bone_batch_entry *e) {
  const ik_foot_link *k = e->link;
  if (!k) return e->ground && ik_ground_get_kind(e->ground) != IK_GROUND_CUSTOM;
  if (ik__is_closed(k->closed) || !k->ground || ik__is_closed(k->ground_closed) ||
      ik_ground_get_kind(k->ground) == IK_GROUND_CUSTOM)
    return 0;
  e->ground = k->ground;
  return 1;
}

int ik_bone_batch_foot_ready(ik_bone_batch_entry *e) { return foot_ready(e); }

/* read_part's check of entry e's foot, once its chain is read: foot_ok when gather may
 * take it as it is. */
static void read_foot(ik_bone_batch_entry *e) {
  e->foot_ok = e->foot_params && e->native >= 0 && foot_ready(e) && foot_valid(e, NULL);
}

/* Groups the bone chains by the skeleton each one alone touches (ik_bone_chain_skeleton),
 * so that a group's gathers and scatters can run on one thread while other groups run
 * on others. Point chains are in no group (they touch no skeleton).
 * Returns 0, every bone chain then the caller's, when some bone chain has to be: it
 * may read or write any skeleton. */
int ik_bone_batch_group(ik_bone_batch *b) {
  const unsigned mask = (unsigned)b->hash_cap - 1;
  int i, cleared = 0;
  b->groups = 0;
  for (i = 0; i < b->count; i++) {
    ik_bone_batch_entry *e = &b->entries[i];
    unsigned h;
    e->sk = NULL;
    e->next = -1;
    if (e->point) continue; /* read_parts takes it */
    if (!cleared) {         /* a batch of point chains never needs the map */
      memset(b->hash, 0xff, (size_t)b->hash_cap * sizeof *b->hash); /* -1: free */
      cleared = 1;
    }
    if (i + 2 * PREFETCH_AHEAD < b->count && !b->entries[i + 2 * PREFETCH_AHEAD].point)
      ik_bone_chain_prefetch(b->entries[i + 2 * PREFETCH_AHEAD].chain, IK_BONE_CHAIN_PREFETCH_HEADER);
    if (i + PREFETCH_AHEAD < b->count && !b->entries[i + PREFETCH_AHEAD].point)
      ik_bone_chain_prefetch(b->entries[i + PREFETCH_AHEAD].chain, IK_BONE_CHAIN_PREFETCH_REFS);
    e->sk = ik_bone_chain_skeleton(e->chain);
    if (!e->sk) {
      if (e->chain->closed || e->chain->bound) return b->groups = 0;
      continue;
    }
    h = (unsigned)(((uintptr_t)e->sk >> 4) * 2654435761u) & mask;
    while (b->hash[h] >= 0 && b->group_sk[b->hash[h]] != e->sk) h = (h + 1) & mask;
    if (b->hash[h] < 0) {
      b->hash[h] = b->groups;
      b->group_sk[b->groups] = e->sk;
      b->group_first[b->groups++] = i;
    } else {
      b->entries[b->group_last[b->hash[h]]].next = i;
    }
    b->group_last[b->hash[h]] = i;
  }
  return b->groups > 0;
}

/* Part `part` of the reading (one per thread), all in C: its share of the groups, each
 * group's chains one after the other in batch order (run_block scatters them: a
 * skeleton is only ever touched by its group's thread), and its share of the point
 * chains with a vec3 target (the caller takes the others); and the feet of those,
 * checked for their targets (checked again when the caller's code ran since). */
static void read_part(ik_bone_batch *b, int part) {
  int g, g_end, i, i_end;
  share(b, b->groups, part, &g, &g_end);
  share(b, b->count, part, &i, &i_end);
  for (; g < g_end; g++) {
    int j;
    for (j = b->group_first[g]; j >= 0; j = b->entries[j].next) {
      ik_bone_batch_entry *e = &b->entries[j];
      e->native = ik_bone_chain_gather(e->chain);
      read_foot(e);
    }
  }
  for (; i < i_end; i++) {
    ik_bone_batch_entry *e = &b->entries[i];
    if (i + PREFETCH_AHEAD < i_end && b->entries[i + PREFETCH_AHEAD].point)
      ik_bone_chain_prefetch(b->entries[i + PREFETCH_AHEAD].chain, IK_BONE_CHAIN_PREFETCH_HEADER);
    if (!e->point) continue;
    e->native = ik_bone_chain_gather_point(e->chain, 0);
    read_foot(e);
  }
}

static void read_parts(void *ctx, int begin, int end) {
  int part;
  for (part = begin; part < end; part++) read_part((ik_bone_batch *)ctx, part);
}

void ik_bone_batch_read(ik_bone_batch *b) { ik_pool_run(b->pool, b->threads, read_parts, b); }

void ik_bone_batch_run(ik_bone_batch *b) { ik_pool_run(b->pool, b->threads, solve_parts, b); }

int ik_bone_batch_take(ik_bone_batch *b, int i, int grouped, int again) {
  ik_bone_batch_entry *e = &b->entries[i];
  int lane;
  /* What the read read stands unless the caller's code ran since: that may have changed
   * any chain. Then a group's chain is read again here (no thread runs now). */
  if (grouped && e->sk && e->native >= 0 && again)
    e->native = ik_bone_chain_skeleton(e->chain) == e->sk ? ik_bone_chain_gather(e->chain) : -1;
  if (grouped && e->sk && e->native >= 0) {
    lane = e->native;
    e->path = IK_PATH_GROUP;
  } else if (e->point && e->native >= 0 && !again) {
    lane = e->native;
    e->path = IK_PATH_POINT;
  } else if ((lane = ik_bone_chain_gather_point(e->chain, 1)) >= 0) {
    e->path = IK_PATH_POINT;
  } else {
    return 0;
  }
  e->lane = lane;
  if (e->path != IK_PATH_GROUP) b->loose[b->loose_count++] = i;
  return 1;
}

void ik_bone_batch_taken(ik_bone_batch *b, int i, int lane) {
  ik_bone_batch_entry *e = &b->entries[i];
  e->path = IK_PATH_CALLER;
  e->lane = lane;
  b->loose[b->loose_count++] = i;
}

/* Fills err with IK_E_PARAMETER for entry i. */
static ik_status entry_fails(ik_error *err, int i) {
  if (err) {
    err->status = IK_E_PARAMETER;
    err->field = "entries";
    err->index = i;
  }
  return IK_E_PARAMETER;
}

ik_status ik_bone_batch_solve(ik_bone_batch *b, ik_real dt, int *reached, ik_error *err) {
  int i, grouped;
  *reached = 0;
  if (!(dt >= 0)) return IK_E_PARAMETER;
  b->dt = dt;
  b->loose_count = 0;
  grouped = ik_bone_batch_group(b);
  ik_bone_batch_read(b);
  for (i = 0; i < b->count; i++) {
    ik_bone_batch_entry *e = &b->entries[i];
    if (e->chain->closed || !ik_bone_batch_take(b, i, grouped, 0)) return entry_fails(err, i);
    if (e->foot_params && !e->foot_ok && !(ik_bone_batch_foot_ready(e) && ik_bone_batch_foot_valid(e, NULL)))
      return entry_fails(err, i);
  }
  ik_bone_batch_run(b);
  for (i = 0; i < b->count; i++) {
    if (b->entries[i].native != 0) return entry_fails(err, i);
    *reached += b->entries[i].reached;
  }
  return IK_OK;
}
