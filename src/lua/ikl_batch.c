/***
 * Batches: `ik.batch`, a set of chains solved in one call, over threads.
 *
 * `b:solve()` reads every chain's target, pole and bones, then solves them all in C:
 * FABRIK chains and two-bone limbs through the core's batch (ik_batch.h: FABRIK chains
 * packed across SIMD lanes), the rest one by one, the whole set split over the
 * batch's threads; then turns the bones and measures the results. Each chain's result,
 * pose and bones are bit for bit what its own `chain:solve()` would give, whatever the
 * thread count: a chain is always solved by one thread, and the work is split by chain
 * index or skeleton, never by timing.
 *
 * Reading and turning need the Lua thread only for what Lua holds (host transforms):
 * a chain whose bones are ik.bones of one skeleton, with its target and pole kept in C
 * on that skeleton or on free ik.nodes, is read and turned by the batch's threads, the
 * chains of a skeleton together on one thread, in batch order; a point chain with a
 * vec3 target is read by them too, and one with an ik.bone or ik.node target with no
 * Lua call. When some bone chain needs the Lua thread, every bone chain of the batch is
 * read and turned there, in order.
 *
 * Chains in one batch are read before any is written: a chain that hangs from another
 * chain's bones (arms on a spine) starts from that chain's pose before this solve. Put
 * such chains in a second batch solved after the first. The threads read what they can
 * before any host transform's method runs; once one has (it may have changed any chain),
 * the chains after it are read again, so each is read as it stands at its turn. A chain
 * that such a method takes out of its skeleton's group is turned after the group's
 * others. A chain may be in several batches, and keeps working on its own.
 *
 * Each thread then takes its share of the chains through solving, turning and
 * measuring in blocks of 128, so that a chain's memory comes into cache once per solve,
 * not once per stage. A skeleton's chains are all solved by one thread: threads pay off
 * across characters, not within one.
 *
 * A chain may be given a foot (`b:add(leg, foot)`, an `ik.foot`): its target is then the
 * animated foot, and inside the parallel phase the foot's ray finds the ground and its
 * correction (`foot:update`) gives the target the leg is solved for. The ground must be
 * a plane, heightfield or mesh: a custom ground's Lua function cannot run off the Lua
 * thread.
 *
 * A steady-state `b:solve()` allocates nothing (host transforms' own methods aside).
 * @classmod ik.batch
 */
#include <stdint.h>
#include <string.h>

#include "ik_batch.h"
#include "ik_foot.h"
#include "ik_ground.h"
#include "ik_internal.h" /* ik__batch_run_on */
#include "ik_scene_internal.h" /* ik__foot_update_valid */
#include "ik_skeleton.h"
#include "ikl.h"

#define IKL_BATCH "ik.batch"

/* How many entries ahead a pass over many chains asks for their memory. */
#define PREFETCH_AHEAD 4

/* One entry of the batch: a chain and, optionally, its foot. */
typedef struct entry {
  ikl_chain *chain;
  ik_foot_params *foot_params; /* NULL: no foot */
  ik_foot_state *foot_state;
  const ik_ground *ground;   /* the foot's, read at each solve */
  const ikl_foot_link *link; /* the foot's flags and ground, to check with no Lua */
  int point;                 /* a point chain (never changes): in no group */
  int lane, slot;            /* this solve's lane and index in its block's job array */
  int grounded;              /* the foot's last update planted it */
  int foot_ok;               /* this solve: read_part found the foot ready for its target */
  /* This solve: the skeleton a bone chain alone reads and writes when it is gathered and
   * scattered off the Lua thread (NULL: on it, or a point chain), the next entry of
   * that skeleton's group, and what the native gather said (its lane; -1: redo it on
   * the Lua thread) and then the native scatter (0; -1: redo it on the Lua thread,
   * which raises). */
  const ik_skeleton *sk;
  int next, native;
  int path;    /* how this solve gathered it, so scatters it */
  int reached; /* this solve's, when scattered off the Lua thread */
} entry;

/* An entry's path through a solve: gathered and scattered on the Lua thread; in its
 * skeleton's group, off it; a point chain, read in C (off the Lua thread for a vec3
 * target, on it with no Lua call for a bone or node) and answered off it. */
enum { PATH_LUA, PATH_GROUP, PATH_POINT };

/* Entries that one thread takes through prepare, solve, finish and write together: a
 * chain is then still in cache from one stage to the next. Had each stage gone over the
 * whole batch, a crowd's chains (megabytes, scattered over the Lua heap) would come from
 * memory once per stage. */
#define BLOCK 128

/* One thread's jobs for its current block, in the uservalue's "scratch". */
typedef struct scratch {
  ik_fabrik_job fabrik[BLOCK];
  ik_two_bone_job two_bone[BLOCK];
  ik_status fabrik_status[BLOCK], two_bone_status[BLOCK];
} scratch;

typedef struct ikl_batch {
  ik_pool *pool;
  scratch *scratch; /* threads of them */
  entry *entries;   /* cap, in the uservalue's "buffer", with the arrays below */
  /* This solve's groups of entries by skeleton (see group()): each one's skeleton, first
   * and last entry; hash maps a skeleton to its group (open addressing, hash_cap slots,
   * a power of two at least twice cap). */
  const ik_skeleton **group_sk;
  int *group_first, *group_last, *hash;
  int groups, hash_cap;
  /* This solve's entries outside the groups, in order (loose_count of them). */
  int *loose;
  int loose_count;
  ik_real dt; /* this solve's, for the feet */
  int count, cap, threads, closed;
  /* Bumped by add, remove, close and each solve: a solve that calls Lua (a host
   * transform's methods) checks it after each call, since that Lua may have changed the
   * batch under it (moved its buffer, shifted its entries). A
   * counter rather than a busy flag: an error raised mid-solve would leave a flag set. */
  unsigned version;
} ikl_batch;

static ikl_batch *check(lua_State *L, int arg) { return (ikl_batch *)luaL_checkudata(L, arg, IKL_BATCH); }

static ikl_batch *check_open(lua_State *L, int arg) {
  ikl_batch *b = check(L, arg);
  if (b->closed) luaL_error(L, "attempt to use a closed ik.batch");
  return b;
}

/* Pushes the uservalue's field `name`: "chains" (the chains, in order), "feet" (the
 * feet by entry index, false for none), "index" (chain or foot -> entry index). */
static void push_list(lua_State *L, int bi, const char *name) {
  ikl_getuservalue(L, bi);
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
}

/* Room for at least n entries: a new buffer, the entries copied over (the other arrays
 * are filled at each solve). Allocates; solve never calls it. */
static void reserve(lua_State *L, ikl_batch *b, int bi, int n) {
  size_t size;
  char *at;
  int cap = b->cap ? b->cap : 4, hash_cap = 8;
  if (n <= b->cap) return;
  while (cap < n) cap = cap > (1 << 24) ? n : 2 * cap;
  while (hash_cap < 2 * cap) hash_cap *= 2;
  /* Largest alignment first: every size below is a multiple of what follows it. */
  size = (size_t)cap * (sizeof(entry) + sizeof(ik_skeleton *) + 3 * sizeof(int)) + (size_t)hash_cap * sizeof(int);
  at = (char *)ikl_newuserdata0(L, size);
  ikl_getuservalue(L, bi);
  lua_insert(L, -2);
  lua_setfield(L, -2, "buffer"); /* the old one goes with its last reference */
  lua_pop(L, 1);
  if (b->count) memcpy(at, b->entries, (size_t)b->count * sizeof *b->entries);
  b->entries = (entry *)(void *)at;
  b->group_sk = (const ik_skeleton **)(void *)(b->entries + cap);
  b->group_first = (int *)(void *)(b->group_sk + cap);
  b->group_last = b->group_first + cap;
  b->loose = b->group_last + cap;
  b->hash = b->loose + cap;
  b->hash_cap = hash_cap;
  b->cap = cap;
}

/* The entry index (1-based) of the chain (or foot) at ci in the batch at bi, or 0. */
static int find(lua_State *L, int bi, int ci) {
  int i;
  push_list(L, bi, "index");
  lua_pushvalue(L, ci);
  lua_rawget(L, -2);
  i = (int)lua_tointeger(L, -1);
  lua_pop(L, 2);
  return i;
}

/* The foot at fi for a new entry: an open ik.foot (its ground is checked at solve). */
static void check_foot(lua_State *L, int fi, entry *e) {
  if (!ikl_tofoot(L, fi, &e->foot_params, &e->foot_state)) ikl_typeerror(L, fi, "ik.foot or nil");
  e->link = ikl_foot_link_of(L, fi);
}

/* Adds the chain at ci (and the foot at fi, or none when fi is 0) to the batch at bi. */
static void add(lua_State *L, ikl_batch *b, int bi, int ci, int fi, int arg) {
  entry e;
  int n;
  memset(&e, 0, sizeof e);
  e.chain = ikl_tochain(L, ci);
  if (!e.chain) ikl_typeerror(L, arg, IKL_CHAIN);
  e.point = !e.chain->bound;
  if (e.chain->closed) luaL_argerror(L, arg, "attempt to use a closed ik.chain");
  /* Solving one chain twice in one parallel phase would race with itself. */
  if (find(L, bi, ci)) luaL_argerror(L, arg, "the chain is in this batch already");
  if (fi && !lua_isnil(L, fi)) {
    check_foot(L, fi, &e);
    /* Its state is updated in the parallel phase: one foot for two legs would race. */
    if (find(L, bi, fi)) luaL_argerror(L, fi, "the foot is in this batch already");
  }
  reserve(L, b, bi, b->count + 1);
  n = b->count + 1;
  push_list(L, bi, "chains");
  lua_pushvalue(L, ci);
  lua_rawseti(L, -2, n);
  push_list(L, bi, "feet");
  if (e.foot_params)
    lua_pushvalue(L, fi);
  else
    lua_pushboolean(L, 0); /* no holes: the list stays a sequence */
  lua_rawseti(L, -2, n);
  push_list(L, bi, "index");
  lua_pushvalue(L, ci);
  lua_pushinteger(L, n);
  lua_rawset(L, -3);
  if (e.foot_params) {
    lua_pushvalue(L, fi);
    lua_pushinteger(L, n);
    lua_rawset(L, -3);
  }
  lua_pop(L, 3);
  b->entries[b->count++] = e;
  b->version++;
}

/***
 * Makes a batch.
 * @function ik.batch
 * @tparam[opt] table spec `chains` (a list of ik.chain, solved in that order), `threads`
 * (integer in 1..64, default 1: the threads a solve is split over, the calling one
 * included)
 * @treturn ik.batch
 * @usage local chains = {}
 * for i = 1, 100 do
 *   chains[i] = ik.chain{ positions = { {i, 0, 0}, {i, 1, 0}, {i, 2, 0}, {i, 3, 0} },
 *                         target = ik.node{ position = {i + 1, 1, 1} } }
 * end
 * local b = ik.batch{ chains = chains, threads = 2 }
 * assert(b:solve() == 100)                 -- how many reached
 * local reached, distance, iterations = b:result(1)
 * assert(reached and distance <= chains[1].tolerance and iterations >= 1)
 */
static int batch_new(lua_State *L) {
  static const char *const keys[] = {"chains", "threads", NULL};
  ikl_batch *b;
  lua_Number threads = 1;
  int i, n = 0;
  lua_settop(L, 1); /* what follows counts on its own slots: 2, 3 */
  if (!lua_isnil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    ikl_check_keys(L, 1, IKL_BATCH, keys, "chains, threads");
    threads = ikl_optfield_real(L, 1, IKL_BATCH, "threads", 1, 1, IK_POOL_MAX_THREADS, "integer in 1..64");
    if (threads != (int)threads) {
      lua_getfield(L, 1, "threads");
      ikl_fielderror(L, IKL_BATCH, "threads", "integer in 1..64", -1);
    }
    lua_getfield(L, 1, "chains");
    if (!lua_isnil(L, -1) && !lua_istable(L, -1))
      ikl_fielderror(L, IKL_BATCH, "chains", "list of ik.chain", -1);
    n = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : 0;
  } else {
    lua_pushnil(L);
  }
  /* 2: the chains (or nil) */
  b = (ikl_batch *)ikl_newuserdata(L, sizeof *b); /* 3 */
  memset(b, 0, sizeof *b);
  b->closed = 1; /* until made: __gc of a half-made batch has no pool to free */
  lua_createtable(L, 0, 4);
  lua_createtable(L, n, 0);
  lua_setfield(L, -2, "chains");
  lua_createtable(L, n, 0);
  lua_setfield(L, -2, "feet");
  lua_createtable(L, 0, n);
  lua_setfield(L, -2, "index");
  ikl_setuservalue(L, 3);
  luaL_setmetatable(L, IKL_BATCH);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    if (!ikl_tochain(L, -1))
      luaL_error(L, "ik.batch: bad field 'chains' (ik.chain expected at index %d, got %s)", i,
                 ikl_typename(L, -1));
    if (ikl_tochain(L, -1)->closed)
      luaL_error(L, "ik.batch: bad field 'chains' (chain %d is closed)", i);
    if (find(L, 3, lua_gettop(L)))
      luaL_error(L, "ik.batch: bad field 'chains' (chain %d is in the list twice)", i);
    add(L, b, 3, lua_gettop(L), 0, 1);
    lua_pop(L, 1);
  }
  b->threads = (int)threads;
  b->scratch = (scratch *)ikl_newuserdata0(L, (size_t)b->threads * sizeof(scratch));
  ikl_getuservalue(L, 3);
  lua_insert(L, -2);
  lua_setfield(L, -2, "scratch");
  lua_pop(L, 1);
  b->pool = ik_pool_new(b->threads);
  if (!b->pool) return luaL_error(L, "ik.batch: could not start %d threads", b->threads);
  b->closed = 0;
  return 1;
}

/***
 * Adds a chain, solved after those already in. A chain may be in several batches,
 * but only once in each.
 * @function add
 * @tparam ik.chain chain
 * @tparam[opt] ik.foot foot the chain's target is then the animated foot (see above)
 * @usage local leg = ik.chain{ positions = { {0, 1, 0}, {0, 0.5, 0.1}, {0, 0, 0} }, solver = "two_bone",
 *                       target = ik.node{ position = {0, -0.1, 0.2} } }
 * local b = ik.batch()
 * b:add(leg, ik.foot{ ground = ik.ground.plane(), smooth_time = 0 })
 * b:solve(1 / 60)
 * local reached, _, _, grounded = b:result(1)
 * assert(reached and grounded)                 -- the foot was raised onto the floor
 * assert(math.abs(leg:joint(3).y - 0.08) < 1e-6)
 */
static int batch_add(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  if (!ikl_tochain(L, 2)) ikl_typeerror(L, 2, IKL_CHAIN); /* before settop: "got no value" */
  lua_settop(L, 3);
  add(L, b, 1, 2, 3, 2);
  return 0;
}

/***
 * Takes a chain out (the others keep their order).
 * @function remove
 * @tparam ik.chain chain
 * @treturn boolean whether it was in the batch
 */
static int batch_remove(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  int i, k;
  if (!ikl_tochain(L, 2)) return ikl_typeerror(L, 2, IKL_CHAIN);
  lua_settop(L, 2);
  i = find(L, 1, 2);
  if (!i) {
    lua_pushboolean(L, 0);
    return 1;
  }
  push_list(L, 1, "chains"); /* 3 */
  push_list(L, 1, "feet");   /* 4 */
  push_list(L, 1, "index");  /* 5 */
  lua_pushvalue(L, 2);
  lua_pushnil(L);
  lua_rawset(L, 5);
  lua_rawgeti(L, 4, i); /* its foot, or false */
  lua_pushnil(L);
  lua_rawset(L, 5);
  for (k = i; k < b->count; k++) {
    lua_rawgeti(L, 3, k + 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 3, k);
    lua_pushinteger(L, k);
    lua_rawset(L, 5);
    lua_rawgeti(L, 4, k + 1);
    if (lua_toboolean(L, -1)) {
      lua_pushvalue(L, -1);
      lua_pushinteger(L, k);
      lua_rawset(L, 5);
    }
    lua_rawseti(L, 4, k);
  }
  lua_pushnil(L);
  lua_rawseti(L, 3, b->count);
  lua_pushnil(L);
  lua_rawseti(L, 4, b->count);
  memmove(&b->entries[i - 1], &b->entries[i], (size_t)(b->count - i) * sizeof *b->entries);
  b->count--;
  b->version++;
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- solve ---- */

/* The C phases: nothing here touches Lua. */

/* Part `part`'s share [*begin, *end) of count items: contiguous, by the counts and the
 * thread count only, as ik_pool_run splits. */
static void share(const ikl_batch *b, int count, int part, int *begin, int *end) {
  *begin = (int)((long long)count * part / b->threads);
  *end = (int)((long long)count * (part + 1) / b->threads);
}

/* Entry e's foot: its ray and correction, which give the target the leg is solved for.
 * Checked on the Lua thread at gather (dt at the call): a refusal here leaves the target
 * alone. */
static void update_foot(const ikl_batch *b, entry *e) {
  ik_foot_result out;
  e->grounded = 0;
  if (ik__foot_update_valid(e->foot_params, e->foot_state, e->ground, e->chain->now.target,
                            e->chain->now.target_rotation, b->dt, &out) == IK_OK) {
    e->chain->now.target = out.position;
    e->chain->now.target_rotation = out.rotation;
    e->grounded = out.grounded;
  }
}

/* The entries at `block` (n of them, in order) from gathered to scattered, on thread
 * `part`'s scratch and lane buffers. A group's entries write their skeleton here (every
 * read of every group was done before: read_parts), a point chain is answered here;
 * those gathered on the Lua thread are scattered there. */
static void run_block(ikl_batch *b, int part, const int *block, int n) {
  scratch *s = &b->scratch[part];
  ik_batch jobs;
  int i;
  ik_batch_init(&jobs);
  for (i = 0; i < n && i < PREFETCH_AHEAD; i++) ik_bone_chain_prefetch(b->entries[block[i]].chain, IK_BONE_CHAIN_PREFETCH_HEADER);
  for (i = 0; i < n; i++) {
    entry *e = &b->entries[block[i]];
    if (i + PREFETCH_AHEAD < n) ik_bone_chain_prefetch(b->entries[block[i + PREFETCH_AHEAD]].chain, IK_BONE_CHAIN_PREFETCH_HEADER);
    if (i + PREFETCH_AHEAD / 2 < n)
      ik_bone_chain_prefetch(b->entries[block[i + PREFETCH_AHEAD / 2]].chain, IK_BONE_CHAIN_PREFETCH_SOLVE);
    if (e->foot_params) update_foot(b, e);
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
  ik__batch_run_on(&jobs, b->pool, part); /* well formed by construction */
  for (i = 0; i < n; i++) {
    entry *e = &b->entries[block[i]];
    if (e->lane == IK_LANE_FABRIK)
      ik_bone_chain_finish(e->chain, &s->fabrik[e->slot].result, s->fabrik_status[e->slot]);
    else if (e->lane == IK_LANE_TWO_BONE)
      ik_bone_chain_finish(e->chain, &s->two_bone[e->slot].result, s->two_bone_status[e->slot]);
    if (e->path == PATH_LUA) continue;
    e->native = ik_bone_chain_scatter(e->chain);
    e->reached = (&e->chain->now.result)->reached != 0;
  }
}

/* Part `part` of a solve (one per thread): its share of the groups, each one's entries
 * in batch order, then its share of the other entries; in blocks. The split depends on
 * the counts and the thread count only. */
static void solve_part(ikl_batch *b, int part) {
  int block[BLOCK], n = 0, g, g_end, j, j_end, i;
  share(b, b->groups, part, &g, &g_end);
  share(b, b->loose_count, part, &j, &j_end);
  for (; g < g_end; g++)
    for (i = b->group_first[g]; i >= 0; i = b->entries[i].next) {
      if (b->entries[i].path != PATH_GROUP) continue; /* read on the Lua thread after all: loose */
      block[n++] = i;
      if (n == BLOCK) run_block(b, part, block, n), n = 0;
    }
  for (; j < j_end; j++) {
    block[n++] = b->loose[j];
    if (n == BLOCK) run_block(b, part, block, n), n = 0;
  }
  if (n) run_block(b, part, block, n);
}

static void solve_parts(void *ctx, int begin, int end) {
  int part;
  for (part = begin; part < end; part++) solve_part((ikl_batch *)ctx, part);
}

/* Whether entry e's foot takes the target its chain gathered (err, when not NULL: why
 * not). */
static int foot_valid(const entry *e, ik_error *err) {
  ik_foot_result out; /* only its address is read */
  memset(&out, 0, sizeof out);
  return ik_foot_validate(e->foot_params, e->foot_state, e->ground, e->chain->now.target,
                          e->chain->now.target_rotation, 0, &out, err) == IK_OK;
}

/* Raises unless entry e's (i's) foot takes the target its chain gathered. */
static void check_foot_target(lua_State *L, entry *e, int i) {
  ik_error err;
  if (!foot_valid(e, &err))
    luaL_error(L, "ik.batch: chain %d's foot refused its target (%s)", i, ik_status_message(err.status));
}

/* Reads entry i's foot (at the top of the stack) for this solve: its ground, checked. */
static void gather_foot(lua_State *L, entry *e, int i) {
  int fi = lua_gettop(L);
  if (!ikl_tofoot(L, fi, &e->foot_params, &e->foot_state)) /* raises when closed */
    luaL_error(L, "ik.batch: chain %d's foot is not an ik.foot", i);
  lua_getfield(L, fi, "ground");
  e->ground = ikl_checkground(L, -1);
  lua_pop(L, 1);
  if (ik_ground_get_kind(e->ground) == IK_GROUND_CUSTOM)
    luaL_error(L,
               "ik.batch: chain %d's foot stands on a custom ground (its function cannot run off the Lua "
               "thread: update that foot yourself)",
               i);
  check_foot_target(L, e, i);
}

/* Whether entry e's foot and ground are open, the ground one the parallel phase may
 * query: then e->ground is set, with no Lua. Else gather_foot raises. */
static int foot_ready(entry *e) {
  const ikl_foot_link *k = e->link;
  if (*k->closed || !k->ground || *k->ground_closed || ik_ground_get_kind(k->ground) == IK_GROUND_CUSTOM)
    return 0;
  e->ground = k->ground;
  return 1;
}

/* read_part's check of entry e's foot, once its chain is read: foot_ok when gather may
 * take it as it is. */
static void read_foot(entry *e) {
  e->foot_ok = e->foot_params && e->native >= 0 && foot_ready(e) && foot_valid(e, NULL);
}

/* Groups the bone chains by the skeleton each one alone touches (ik_bone_chain_skeleton),
 * so that a group's gathers and scatters can run on one thread while other groups run
 * on others. Point chains are in no group (they touch no skeleton).
 * Returns 0, every entry then on the Lua thread, when some bone chain has to be there:
 * it may read or write any skeleton. */
static int group(ikl_batch *b) {
  const unsigned mask = (unsigned)b->hash_cap - 1;
  int i, cleared = 0;
  b->groups = 0;
  for (i = 0; i < b->count; i++) {
    entry *e = &b->entries[i];
    unsigned h;
    e->sk = NULL;
    e->next = -1;
    if (e->point) continue; /* read_parts takes it */
    if (!cleared) { /* a batch of point chains never needs the map */
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

/* Raises when the batch changed since `version` was read (see ikl_batch.version). */
static void check_unchanged(lua_State *L, const ikl_batch *b, unsigned version) {
  if (b->version != version)
    luaL_error(L, "ik.batch: changed during its own solve (add, remove, solve or close called from a "
                  "transform's method)");
}

/* Part `part` of the reading (one per thread), all in C: its share of the groups, each
 * group's chains one after the other in batch order (run_block scatters them: a
 * skeleton is only ever touched by its group's thread), and its share of the point
 * chains with a vec3 target (gather then takes the others); and the feet of those,
 * checked for their targets (gather checks them again if Lua ran since). */
static void read_part(ikl_batch *b, int part) {
  int g, g_end, i, i_end;
  share(b, b->groups, part, &g, &g_end);
  share(b, b->count, part, &i, &i_end);
  for (; g < g_end; g++) {
    int j;
    for (j = b->group_first[g]; j >= 0; j = b->entries[j].next) {
      entry *e = &b->entries[j];
      e->native = ik_bone_chain_gather(e->chain);
      read_foot(e);
    }
  }
  for (; i < i_end; i++) {
    entry *e = &b->entries[i];
    if (i + PREFETCH_AHEAD < i_end && b->entries[i + PREFETCH_AHEAD].point)
      ik_bone_chain_prefetch(b->entries[i + PREFETCH_AHEAD].chain, IK_BONE_CHAIN_PREFETCH_HEADER);
    if (!e->point) continue;
    e->native = ik_bone_chain_gather_point(e->chain, 0);
    read_foot(e);
  }
}

static void read_parts(void *ctx, int begin, int end) {
  int part;
  for (part = begin; part < end; part++) read_part((ikl_batch *)ctx, part);
}

/* Gathers every chain (chains at li, feet at fi), in order, sorting them into lanes:
 * those read_part read already (groups' chains, when grouped, and point chains with a
 * vec3 target) unless a host's Lua ran since, the rest here. A chain that could not be
 * read in C is read again here, to raise as chain:solve would. */
static void gather(lua_State *L, ikl_batch *b, int li, int fi, int grouped) {
  const unsigned version = b->version;
  int i, lane, lua_ran = 0;
  b->loose_count = 0;
  for (i = 0; i < b->count; i++) {
    entry *e = &b->entries[i];
    /* What read_part read stands unless a host's Lua ran since: that may have changed
     * any chain. Then a group's chain is read again here (in C: no thread runs now). */
    if (grouped && e->sk && e->native >= 0 && lua_ran)
      e->native = ik_bone_chain_skeleton(e->chain) == e->sk ? ik_bone_chain_gather(e->chain) : -1;
    if (grouped && e->sk && e->native >= 0) {
      lane = e->native;
      e->path = PATH_GROUP;
    } else if (e->point && e->native >= 0 && !lua_ran) {
      lane = e->native;
      e->path = PATH_POINT;
    } else if ((lane = ik_bone_chain_gather_point(e->chain, 1)) >= 0) {
      e->path = PATH_POINT;
    } else {
      e->path = PATH_LUA;
      lua_ran = 1;
      lua_rawgeti(L, li, i + 1);
      if (e->chain->closed) luaL_error(L, "ik.batch: chain %d is closed", i + 1);
      lane = ikl_chain_gather(L, e->chain, lua_gettop(L), 0, i + 1);
      lua_pop(L, 1);
      check_unchanged(L, b, version);
      e = &b->entries[i];
    }
    e->lane = lane;
    if (e->path != PATH_GROUP) b->loose[b->loose_count++] = i;
  }
  /* The feet after every chain: no Lua of the host's runs from here to the parallel
   * phase, so no ground taken here can be swapped out and collected before it is used.
   * Those read_part took are good unless Lua ran since (a host transform's method may
   * have changed a foot). */
  for (i = 0; i < b->count; i++) {
    entry *e = &b->entries[i];
    if (e->foot_params && e->foot_ok && !lua_ran) continue;
    if (e->foot_params && foot_ready(e)) {
      check_foot_target(L, e, i + 1);
    } else if (e->foot_params) {
      lua_rawgeti(L, fi, i + 1);
      gather_foot(L, e, i + 1);
      lua_pop(L, 1);
    }
  }
}

/***
 * Solves every chain: as `chain:solve()` on each, in order, would (see above).
 * @function solve
 * @tparam[opt] number dt seconds since the last solve, >= 0 (default 0): for the feet
 * @treturn integer how many chains reached their target
 */
static int batch_solve(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  unsigned version;
  int i, grouped, reached = 0;
  lua_Number dt = 0;
  /* checked and worded as foot:update's dt; the sign before rounding to ik_real */
  if (!lua_isnoneornil(L, 2)) {
    ikl_checkreal(L, 2);
    dt = lua_tonumber(L, 2);
  }
  if (!(dt >= 0))
    luaL_argerror(L, 2, lua_pushfstring(L, "non-negative number expected, got %s", ikl_describe(L, 2)));
  b->dt = (ik_real)dt;
  version = ++b->version;
  lua_settop(L, 1);
  push_list(L, 1, "chains"); /* 2 */
  push_list(L, 1, "feet");   /* 3 */
  grouped = group(b);
  ik_pool_run(b->pool, b->threads, read_parts, b);
  gather(L, b, 2, 3, grouped);
  ik_pool_run(b->pool, b->threads, solve_parts, b);
  for (i = 0; i < b->count; i++) {
    entry *e = &b->entries[i];
    if (e->path != PATH_LUA && e->native == 0) {
      reached += e->reached;
      continue;
    }
    lua_rawgeti(L, 2, i + 1);
    reached += ikl_chain_scatter(L, e->chain, lua_gettop(L))->reached != 0;
    lua_pop(L, 1);
    check_unchanged(L, b, version);
  }
  lua_pushinteger(L, reached);
  return 1;
}

static int push_result(lua_State *L, const entry *e) {
  const ik_result *r = (&e->chain->now.result);
  lua_pushboolean(L, r->reached);
  lua_pushnumber(L, (lua_Number)r->distance);
  lua_pushinteger(L, r->iterations);
  if (!e->foot_params) return 3;
  lua_pushboolean(L, e->grounded);
  return 4;
}

/***
 * The last solve's result for chain i (allocates nothing).
 * @function result
 * @tparam integer i 1 .. #batch
 * @treturn boolean reached
 * @treturn number the tip's distance to the target
 * @treturn integer the solver's sweeps
 * @treturn[opt] boolean for a chain with a foot: whether the foot was planted
 */
static int batch_result(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  return push_result(L, &b->entries[ikl_checkindex(L, 2, b->count)]);
}

/***
 * The last solve's result for a chain of the batch, as `result`.
 * @function results
 * @tparam ik.chain chain
 * @treturn boolean reached
 * @treturn number the tip's distance to the target
 * @treturn integer the solver's sweeps
 * @treturn[opt] boolean for a chain with a foot: whether the foot was planted
 */
static int batch_results(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  int i;
  if (!ikl_tochain(L, 2)) return ikl_typeerror(L, 2, IKL_CHAIN);
  i = find(L, 1, 2);
  if (!i) return luaL_argerror(L, 2, "the chain is not in this batch");
  return push_result(L, &b->entries[i - 1]);
}

/***
 * The chains, in order, in a new table.
 * @function chains
 * @treturn {ik.chain,...}
 */
static int batch_chains(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  int i;
  push_list(L, 1, "chains");
  lua_createtable(L, b->count, 0);
  for (i = 1; i <= b->count; i++) {
    lua_rawgeti(L, -2, i);
    lua_rawseti(L, -2, i);
  }
  return 1;
}

/***
 * Closes the batch and stops its threads: any later use raises. Its chains are left as
 * they are. Also done when it is collected, and in Lua 5.4 when a `<close>` variable
 * holding it goes out of scope.
 * @function close
 */
static int batch_close(lua_State *L) {
  ikl_batch *b = check(L, 1);
  if (!b->closed) ik_pool_free(b->pool);
  b->pool = NULL;
  b->closed = 1;
  b->version++;
  return 0;
}

static int batch_len(lua_State *L) {
  lua_pushinteger(L, check_open(L, 1)->count);
  return 1;
}

static int batch_tostring(lua_State *L) {
  ikl_batch *b = check(L, 1);
  if (b->closed)
    lua_pushliteral(L, "ik.batch (closed)");
  else
    lua_pushfstring(L, "ik.batch(%d chains, %d threads)", b->count, b->threads);
  return 1;
}

/* `threads` (read-only), then methods (the upvalue). */
static int batch_index(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "threads") == 0) {
    lua_pushinteger(L, b->threads);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int batch_newindex(lua_State *L) {
  check_open(L, 1);
  return luaL_error(L, "ik.batch: fields are read-only (make a new batch for another thread count)");
}

static const luaL_Reg meth[] = {
    {"add", batch_add},         {"remove", batch_remove}, {"solve", batch_solve}, {"result", batch_result},
    {"results", batch_results}, {"chains", batch_chains}, {"close", batch_close}, {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", batch_index},
                                    {"__newindex", batch_newindex},
                                    {"__len", batch_len},
                                    {"__tostring", batch_tostring},
                                    {"__gc", batch_close},
                                    {"__close", batch_close},
                                    {NULL, NULL}};

void ikl_open_batch(lua_State *L) {
  ikl_createmeta(L, IKL_BATCH, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, batch_new);
  lua_setfield(L, -2, "batch");
}
