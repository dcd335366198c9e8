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

#include "ik_bone_batch.h"
#include "ik_ground.h"
#include "ikl.h"
#include "ikl_sandbox.h"

#define IKL_BATCH "ik.batch"

typedef ik_bone_batch_entry entry;

typedef struct ikl_batch {
  ik_bone_batch core;
  int closed;
  /* Bumped by add, remove, close and each solve: a solve that calls Lua (a host
   * transform's methods) checks it after each call, since that Lua may have changed the
   * batch under it (moved its buffer, shifted its entries). A counter rather than a
   * busy flag: an error raised mid-solve would leave a flag set. */
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
  void *buffer;
  int cap = b->core.cap ? b->core.cap : 4;
  if (n <= b->core.cap) return;
  while (cap < n) cap = cap > (1 << 24) ? n : 2 * cap;
  buffer = ikl_newuserdata0(L, ik_bone_batch_buffer_size(cap));
  ikl_getuservalue(L, bi);
  lua_insert(L, -2);
  lua_setfield(L, -2, "buffer"); /* the old one goes with its last reference */
  lua_pop(L, 1);
  ik_bone_batch_place(&b->core, buffer, cap);
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
  if (e.chain->closed) luaL_argerror(L, arg, "attempt to use a closed ik.chain");
  /* Solving one chain twice in one parallel phase would race with itself. */
  if (find(L, bi, ci)) luaL_argerror(L, arg, "the chain is in this batch already");
  if (fi && !lua_isnil(L, fi)) {
    check_foot(L, fi, &e);
    /* Its state is updated in the parallel phase: one foot for two legs would race. */
    if (find(L, bi, fi)) luaL_argerror(L, fi, "the foot is in this batch already");
  }
  reserve(L, b, bi, b->core.count + 1);
  n = b->core.count + 1;
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
  ik_bone_batch_add(&b->core, e.chain, e.foot_params, e.foot_state, e.link);
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
  void *scratch;
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
  ik_bone_batch_init(&b->core);
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
    if (ikl_tochain(L, -1)->closed) luaL_error(L, "ik.batch: bad field 'chains' (chain %d is closed)", i);
    if (find(L, 3, lua_gettop(L)))
      luaL_error(L, "ik.batch: bad field 'chains' (chain %d is in the list twice)", i);
    add(L, b, 3, lua_gettop(L), 0, 1);
    lua_pop(L, 1);
  }
  scratch = ikl_newuserdata0(L, ik_bone_batch_scratch_size((int)threads));
  ikl_getuservalue(L, 3);
  lua_insert(L, -2);
  lua_setfield(L, -2, "scratch");
  lua_pop(L, 1);
  ikl_sandbox_batch_begin(L, (int)threads);
  if (ik_bone_batch_start(&b->core, (int)threads, scratch) != IK_OK) {
    ikl_sandbox_batch_end(L);
    return luaL_error(L, "ik.batch: could not start %d threads", (int)threads);
  }
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
  for (k = i; k < b->core.count; k++) {
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
  lua_rawseti(L, 3, b->core.count);
  lua_pushnil(L);
  lua_rawseti(L, 4, b->core.count);
  ik_bone_batch_remove(&b->core, i - 1);
  b->version++;
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- solve ---- */

/* The C phases: nothing here touches Lua. */

/* Raises unless entry e's (i's) foot takes the target its chain gathered. */
static void check_foot_target(lua_State *L, entry *e, int i) {
  ik_error err;
  if (!ik_bone_batch_foot_valid(e, &err))
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

/* Raises when the batch changed since `version` was read (see ikl_batch.version). */
static void check_unchanged(lua_State *L, const ikl_batch *b, unsigned version) {
  if (b->version != version)
    luaL_error(L,
               "ik.batch: changed during its own solve (add, remove, solve or close called from a "
               "transform's method)");
}

/* Gathers every chain (chains at li, feet at fi), in order, sorting them into lanes:
 * those read_part read already (groups' chains, when grouped, and point chains with a
 * vec3 target) unless a host's Lua ran since, the rest here. A chain that could not be
 * read in C is read again here, to raise as chain:solve would. */
static void gather(lua_State *L, ikl_batch *b, int li, int fi, int grouped) {
  const unsigned version = b->version;
  int i, lane, lua_ran = 0;
  b->core.loose_count = 0;
  for (i = 0; i < b->core.count; i++) {
    if (ik_bone_batch_take(&b->core, i, grouped, lua_ran)) continue;
    lua_ran = 1;
    lua_rawgeti(L, li, i + 1);
    if (b->core.entries[i].chain->closed) luaL_error(L, "ik.batch: chain %d is closed", i + 1);
    lane = ikl_chain_gather(L, b->core.entries[i].chain, lua_gettop(L), 0, i + 1);
    lua_pop(L, 1);
    check_unchanged(L, b, version);
    ik_bone_batch_taken(&b->core, i, lane);
  }
  /* The feet after every chain: no Lua of the host's runs from here to the parallel
   * phase, so no ground taken here can be swapped out and collected before it is used.
   * Those read_part took are good unless Lua ran since (a host transform's method may
   * have changed a foot). */
  for (i = 0; i < b->core.count; i++) {
    entry *e = &b->core.entries[i];
    if (e->foot_params && e->foot_ok && !lua_ran) continue;
    if (e->foot_params && ik_bone_batch_foot_ready(e)) {
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
  b->core.dt = (ik_real)dt;
  version = ++b->version;
  lua_settop(L, 1);
  push_list(L, 1, "chains"); /* 2 */
  push_list(L, 1, "feet");   /* 3 */
  grouped = ik_bone_batch_group(&b->core);
  ik_bone_batch_read(&b->core);
  gather(L, b, 2, 3, grouped);
  ik_bone_batch_run(&b->core);
  for (i = 0; i < b->core.count; i++) {
    entry *e = &b->core.entries[i];
    if (e->path != IK_PATH_CALLER && e->native == 0) {
      reached += e->reached;
      continue;
    }
    lua_rawgeti(L, 2, i + 1);
    reached += ikl_chain_scatter(L, e->chain, lua_gettop(L))->reached != 0;
    lua_pop(L, 1);
    check_unchanged(L, b, version);
  }
  if (ikl_sandbox_of(L)) { /* a script's batch: its solves charged as its chains' are */
    double moves = 0;
    for (i = 0; i < b->core.count; i++) moves += ikl_chain_solve_moves(b->core.entries[i].chain);
    ikl_charge_solve(L, moves);
  }
  lua_pushinteger(L, reached);
  return 1;
}

static int push_result(lua_State *L, const entry *e) {
  const ik_result *r = &e->chain->now.result;
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
  return push_result(L, &b->core.entries[ikl_checkindex(L, 2, b->core.count)]);
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
  return push_result(L, &b->core.entries[i - 1]);
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
  lua_createtable(L, b->core.count, 0);
  for (i = 1; i <= b->core.count; i++) {
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
  if (!b->closed) {
    ik_bone_batch_free(&b->core);
    ikl_sandbox_batch_end(L);
  }
  b->closed = 1;
  b->version++;
  return 0;
}

static int batch_len(lua_State *L) {
  lua_pushinteger(L, check_open(L, 1)->core.count);
  return 1;
}

static int batch_tostring(lua_State *L) {
  ikl_batch *b = check(L, 1);
  if (b->closed)
    lua_pushliteral(L, "ik.batch (closed)");
  else
    lua_pushfstring(L, "ik.batch(%d chains, %d threads)", b->core.count, b->core.threads);
  return 1;
}

/* `threads` (read-only), then methods (the upvalue). */
static int batch_index(lua_State *L) {
  ikl_batch *b = check_open(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "threads") == 0) {
    lua_pushinteger(L, b->core.threads);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int batch_newindex(lua_State *L) {
  check_open(L, 1);
  return ikl_readonly(L, IKL_BATCH, "make a new batch for another thread count");
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
