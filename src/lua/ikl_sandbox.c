/***
 * A rig script's own Lua state, driven from the host's: what `ik.runtime` runs each
 * script in (`ik.runtime.sandbox` says what a script has there; SECURITY.md the promise).
 * Hosts use `ik.runtime`, not this.
 * @classmod ik.sandbox
 */

/*
 * ikl_sandbox.c: ik.sandbox, one rig script's own Lua state, driven from the host's.
 *
 * The host makes a sandbox (`core.sandbox{...}`), loads versions of the script into it
 * and calls its update; nothing else of the script ever runs. Every call into the child
 * runs under lua_pcall there with the count hook charging it to the budget, and nothing
 * the child holds is reachable from the host but through the copies of ikl_share.c.
 * Allocation discipline, since the two states have their own error handlers: the child
 * is only allocated in while one of its protected calls runs, and the host is only read
 * meanwhile (and the reverse), so that an error never jumps across a state.
 */
#include "ikl_sandbox.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lualib.h"

#if defined(LUA_JITLIBNAME)
#include "luajit.h"
#endif

#define STEP 1000 /* instructions between two runs of the count hook */
#define RESERVE ((size_t)1 << 20)
#define DEFAULT_REPORTS 1024
#define MAX_BATCHES 32 /* ik.batch alive at once in one script's state */

/* Registry keys of the child (light userdata: their addresses). */
static const char STATE_KEY = 0, ENV_KEY = 0, SCENE_KEY = 0, REPORTS_KEY = 0, DEPS_KEY = 0;

/* ---- the child's heap ---- */

static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  ikl_heap *h = (ikl_heap *)ud;
  size_t old = ptr ? osize : 0;
  void *p;
  if (nsize == 0) {
    free(ptr);
    h->used -= old;
    return NULL;
  }
  if (nsize > old) {
    size_t cap = h->limit + (h->trusted ? h->reserve : 0);
    if (h->used - old + nsize > cap) {
      h->refused = 1;
      return NULL;
    }
  }
  p = realloc(ptr, nsize);
  if (!p) {
    h->refused = 1;
    return NULL;
  }
  h->used = h->used - old + nsize;
  if (h->used > h->peak) h->peak = h->used;
  return p;
}

ikl_sandbox *ikl_sandbox_of(lua_State *L) {
  void *ud = NULL;
  lua_Alloc f = lua_getallocf(L, &ud);
  if (f != heap_alloc) return NULL;
  return (ikl_sandbox *)(void *)((char *)ud - offsetof(ikl_sandbox, heap));
}

/* ---- the budget ---- */

/* "file:line: " of the innermost Lua function of L, into buf. */
static void where(lua_State *L, char *buf, size_t size) {
  lua_Debug ar;
  int level;
  buf[0] = '\0';
  for (level = 0; level < 8 && lua_getstack(L, level, &ar); level++) {
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
      snprintf(buf, size, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  }
}

static void hook(lua_State *L, lua_Debug *ar);

/* Records that the call went over a limit and raises it; from then on every
 * instruction of L raises it again, and pcall, xpcall and resume pass it on. */
static void exceed(lua_State *L, ikl_sandbox *sb, const char *what) {
  char at[200];
  if (!sb->exceeded) {
    where(L, at, sizeof at);
    snprintf(sb->exceeded_msg, sizeof sb->exceeded_msg, "%s%s", at, what);
    sb->exceeded = 1;
  }
  lua_sethook(L, hook, LUA_MASKCOUNT, 1);
  ikl_sandbox_reraise(L, sb);
}

void ikl_sandbox_reraise(lua_State *L, ikl_sandbox *sb) {
  if (!sb->exceeded) return;
  lua_pushstring(L, sb->exceeded_msg);
  lua_error(L);
}

void ikl_charge_solve(lua_State *L, double moves) {
  ikl_sandbox *sb = ikl_sandbox_of(L);
  if (sb) ikl_sandbox_charge(L, sb, moves);
}

void ikl_sandbox_charge(lua_State *L, ikl_sandbox *sb, double n) {
  char what[96];
  if (!sb->active) return;
  if (sb->exceeded) ikl_sandbox_reraise(L, sb);
  if (sb->interrupt && *sb->interrupt) exceed(L, sb, "interrupted: the host is stopping");
  sb->used += n;
  if (sb->budget > 0 && sb->used >= sb->budget) {
    snprintf(what, sizeof what, "instruction budget exceeded (%.0f)", sb->budget);
    exceed(L, sb, what);
  }
}

static void hook(lua_State *L, lua_Debug *ar) {
  ikl_sandbox *sb = ikl_sandbox_of(L);
  (void)ar;
  if (sb) ikl_sandbox_charge(L, sb, sb->step);
}

static void charge_steps(lua_State *L, void *ud, long steps) {
  ikl_sandbox_charge(L, (ikl_sandbox *)ud, (double)steps);
}

/* ---- messages ---- */

const char *ikl_sandbox_message(lua_State *L, int idx, size_t *len) {
  int t = lua_type(L, idx);
  if (t == LUA_TSTRING || t == LUA_TNUMBER) {
    size_t n;
    const char *s;
    lua_pushvalue(L, idx);
    s = lua_tolstring(L, -1, &n); /* a copy: a number is converted in place */
    if (n > IKL_SANDBOX_MAX_MESSAGE) {
      lua_pushlstring(L, s, IKL_SANDBOX_MAX_MESSAGE);
      lua_pushliteral(L, "... (cut)");
      lua_concat(L, 2);
      lua_remove(L, -2);
    }
  } else {
    lua_pushfstring(L, "(error object is a %s value)", lua_typename(L, t));
  }
  return lua_tolstring(L, -1, len);
}

/* ---- the userdata ---- */

static ikl_sandbox *check_sandbox(lua_State *L) {
  ikl_sandbox *sb = (ikl_sandbox *)luaL_checkudata(L, 1, IKL_SANDBOX);
  if (!sb->L) luaL_error(L, "attempt to use a closed ik.sandbox");
  return sb;
}

/* Runs fn in the child under lua_pcall with light userdata ud as its argument, with the
 * budget on when budgeted. Leaves the child's results (nres, or its error message) on
 * its stack; returns the status. */
/* budgeted: the script's code runs (its budget on; its heap to its limit, or with
 * RESERVE_TOO the reserve on top, for a new version: a full state must be able to
 * reload); else the sandbox's own work (no budget, the reserve on top). */
enum { TRUSTED = 0, BUDGETED = 1, RESERVE_TOO = 2 };

static int child_call(lua_State *L, ikl_sandbox *sb, lua_CFunction fn, void *ud, int nres, int budgeted) {
  lua_State *C = sb->L;
  int st;
  if (sb->busy) return luaL_error(L, "ik.sandbox: the script is running (a call from inside it)");
  sb->busy = 1;
  sb->host = L;
  sb->host_ud = 1;
  lua_settop(C, 0);
  sb->used = 0;
  sb->exceeded = 0;
  sb->reports = 0;
  sb->heap.refused = 0;
  sb->heap.trusted = budgeted != BUDGETED;
  sb->active = budgeted != TRUSTED;
  lua_sethook(C, hook, LUA_MASKCOUNT, sb->step);
  lua_pushcfunction(C, fn);
  lua_pushlightuserdata(C, ud);
  st = lua_pcall(C, 1, nres, 0);
  sb->active = 0;
  sb->heap.trusted = 1;
  if (st != 0 && sb->exceeded) {
    lua_pop(C, 1);
    lua_pushstring(C, sb->exceeded_msg);
  } else if (st == LUA_ERRMEM || (st != 0 && sb->heap.refused)) {
    lua_pop(C, 1);
    lua_pushfstring(C, "memory limit exceeded (%d bytes)", (int)sb->heap.limit);
  }
  sb->exceeded = 0;
  if (st != 0) lua_gc(C, LUA_GCCOLLECT, 0); /* free what the failed call left */
  sb->heap.trusted = 0;
  sb->host = NULL;
  sb->busy = 0;
  return st;
}

/* Moves the child's error message (on its top) to the host, as false, message. */
static int push_failure(lua_State *L, ikl_sandbox *sb) {
  size_t len;
  const char *msg = ikl_sandbox_message(sb->L, -1, &len);
  lua_pushboolean(L, 0);
  lua_pushlstring(L, msg, len);
  lua_pop(sb->L, 2);
  return 2;
}

/* Reads a non-negative number option of the table at 1 (0 when nil or false). */
static double opt_number(lua_State *L, const char *name, double def, double max) {
  double v;
  lua_getfield(L, 1, name);
  if (lua_isnil(L, -1))
    v = def;
  else if (lua_isboolean(L, -1) && !lua_toboolean(L, -1))
    v = 0;
  else if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 0) || lua_tonumber(L, -1) > max)
    return luaL_error(L, "ik.sandbox: bad field '%s' (number in [0, %f] expected)", name, max), 0;
  else
    v = (double)lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

static const char *opt_string(lua_State *L, const char *name) {
  const char *s;
  lua_getfield(L, 1, name);
  if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "ik.sandbox: bad field '%s' (string expected)", name);
  s = lua_tostring(L, -1);
  lua_pop(L, 1); /* the options table keeps it alive */
  return s;
}

typedef struct open_args {
  const char *ik_path, *dir;
} open_args;

static int open_child(lua_State *C) {
  open_args *a = (open_args *)lua_touserdata(C, 1);
  ikl_sandbox_open_env(C, a->ik_path, a->dir);
  lua_newtable(C);
  ikl_setreg(C, &STATE_KEY);
  lua_newtable(C);
  ikl_setreg(C, &REPORTS_KEY);
  return 0;
}

typedef struct scene_args {
  lua_State *host;
  int scene, keep; /* on the host's stack */
  ikl_sandbox *sb;
} scene_args;

static int refuse_write(lua_State *C) {
  return luaL_error(C, "the scene is read-only to rig scripts (keep your own values in state)");
}

/* The scene as scripts see it: a copy behind a read-only table. */
static int copy_scene(lua_State *C) {
  scene_args *a = (scene_args *)lua_touserdata(C, 1);
  ikl_share_in(a->host, a->scene, C, a->sb, a->keep, "scene");
  lua_newtable(C);          /* the proxy */
  lua_createtable(C, 0, 4); /* its metatable */
  lua_pushvalue(C, -3);
  lua_setfield(C, -2, "__index");
  lua_pushcfunction(C, refuse_write);
  lua_setfield(C, -2, "__newindex");
  lua_pushboolean(C, 0);
  lua_setfield(C, -2, "__metatable");
  lua_setmetatable(C, -2);
  ikl_setreg(C, &SCENE_KEY);
  lua_pop(C, 1);
  return 0;
}

static void close_child(ikl_sandbox *sb) {
  if (!sb->L) return;
  sb->heap.trusted = 1;
  sb->active = 0;
  lua_sethook(sb->L, NULL, 0, 0);
  lua_close(sb->L);
  sb->L = NULL;
}

/***
 * Makes a sandbox: a new Lua state with the script's libraries and a copy of the scene.
 * @function ik.sandbox
 * @tparam table options `dir` (the script's folder), `ik_path` (templates for the ik
 * modules), `scene`, `budget`, `memory_limit`, `batch_threads`, `reports`, `shapes`,
 * `interrupt` (light userdata: a C host's `volatile sig_atomic_t`)
 * @treturn ik.sandbox
 */
static int sandbox_new(lua_State *L) {
  ikl_sandbox *sb, opts;
  open_args oa;
  scene_args sa;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  memset(&opts, 0, sizeof opts);
  oa.dir = opt_string(L, "dir");
  oa.ik_path = opt_string(L, "ik_path");
  opts.budget = opt_number(L, "budget", 1e7, 1e15);
  opts.heap.limit = (size_t)opt_number(L, "memory_limit", 64.0 * 1024 * 1024, 1e15);
  opts.max_reports = (int)opt_number(L, "reports", DEFAULT_REPORTS, 1e6);
  opts.batch_threads = (int)opt_number(L, "batch_threads", 1, 64);
  lua_getfield(L, 1, "shapes");
  opts.shapes = lua_isnil(L, -1) || lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, 1, "interrupt");
  if (lua_type(L, -1) == LUA_TLIGHTUSERDATA)
    opts.interrupt = (const volatile sig_atomic_t *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  sb = (ikl_sandbox *)ikl_newuserdata(L, sizeof *sb); /* 2, then 1 */
  *sb = opts;
  sb->step = sb->budget > 0 && sb->budget < STEP ? (int)sb->budget : STEP;
  if (sb->step < 1) sb->step = 1;
  if (sb->heap.limit == 0) sb->heap.limit = (size_t)-1 / 4;
  sb->heap.reserve = RESERVE;
  sb->heap.trusted = 1;
  sb->steps.charge = charge_steps;
  sb->steps.ud = sb;
  luaL_setmetatable(L, IKL_SANDBOX);
  lua_newtable(L); /* the host objects the child holds, by id (ikl_share.c) */
  ikl_setuservalue(L, 2);
  lua_insert(L, 1); /* the sandbox at 1, as in its methods; the options at 2 */
  sb->L = lua_newstate(heap_alloc, &sb->heap);
  if (!sb->L) return luaL_error(L, "ik.sandbox: not enough memory for a new Lua state");
#if defined(LUA_JITLIBNAME)
  luaJIT_setmode(sb->L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF); /* compiled code runs no hooks */
#endif
  if (child_call(L, sb, open_child, &oa, 0, 0) != 0) {
    lua_pushstring(L, lua_tostring(sb->L, -1));
    close_child(sb);
    return lua_error(L);
  }
  lua_getfield(L, 2, "scene");
  sa.host = L;
  sa.scene = lua_gettop(L);
  ikl_getuservalue(L, 1);
  sa.keep = lua_gettop(L);
  sa.sb = sb;
  luaL_checkstack(L, 3 * IKL_SHARE_DEPTH + 20, "scene too deep");
  ikl_share_in(L, sa.scene, NULL, sb, sa.keep, "scene"); /* the host's pass: ids for what is shared */
  if (child_call(L, sb, copy_scene, &sa, 0, 0) != 0) {
    lua_pushstring(L, lua_tostring(sb->L, -1));
    close_child(sb);
    return lua_error(L);
  }
  lua_settop(L, 1);
  return 1;
}

/* A full collection of the child when its heap holds more than (parts - 1)/parts of its
 * limit: Lua 5.1 and LuaJIT do not collect before they refuse an allocation, so a script
 * near its limit would fail for garbage it no longer holds. */
static void collect_if_full(ikl_sandbox *sb, int parts) {
  if (sb->heap.used <= sb->heap.limit / (size_t)parts * (size_t)(parts - 1)) return;
  if (sb->heap.used < sb->heap.after_gc + sb->heap.limit / 16) return; /* not again for what it keeps */
  sb->heap.trusted = 1;
  lua_gc(sb->L, LUA_GCCOLLECT, 0);
  sb->heap.trusted = 0;
  sb->heap.after_gc = sb->heap.used;
}

/* ---- loading a version ---- */

typedef struct load_args {
  const char *text;
  size_t len;
  const char *chunkname;
  int reloading;
} load_args;

static int fail_at(lua_State *C, const char *chunkname, const char *what) {
  const char *path = chunkname[0] == '@' ? chunkname + 1 : chunkname;
  return luaL_error(C, "%s: %s", path, what);
}

/* Compiles and runs a version with new globals; its update must be a function, and a
 * reload runs its on_reload(state). Commits the version only then. */
static int load_version(lua_State *C) {
  load_args *a = (load_args *)lua_touserdata(C, 1);
  int env;
  const char *text = a->text;
  size_t len = a->len;
  ikl_sandbox_new_env(C);
  env = lua_gettop(C);
  if (len > 0 && text[0] == '#') { /* a "#!" line: skipped, its newline kept */
    while (len > 0 && *text != '\n') text++, len--;
  }
  if (len > 0 && text[0] == LUA_SIGNATURE[0])
    return fail_at(C, a->chunkname, "attempt to load a binary chunk (mode is 't')");
  ikl_sandbox_charge(C, ikl_sandbox_of(C), (double)len / 16);
  if (luaL_loadbuffer(C, text, len, a->chunkname) != 0) return lua_error(C);
  lua_pushvalue(C, env);
#if LUA_VERSION_NUM == 501
  lua_setfenv(C, -2);
#else
  lua_setupvalue(C, -2, 1);
#endif
  lua_call(C, 0, 0);
  lua_getfield(C, env, "update");
  if (lua_type(C, -1) != LUA_TFUNCTION)
    return fail_at(C, a->chunkname, "the script defines no function update(dt)");
  lua_pop(C, 1);
  if (a->reloading) {
    lua_pushliteral(C, "on_reload");
    lua_rawget(C, env);
    if (!lua_isnil(C, -1)) {
      if (lua_type(C, -1) != LUA_TFUNCTION) return fail_at(C, a->chunkname, "on_reload is not a function");
      ikl_getreg(C, &STATE_KEY);
      lua_call(C, 1, 0);
    } else {
      lua_pop(C, 1);
    }
  }
  lua_pushvalue(C, env);
  ikl_setreg(C, &ENV_KEY);
  return 0;
}

/***
 * Loads a version of the script: true, or false and the error (the last good version
 * stays).
 * @function load
 */
static int sandbox_load(lua_State *L) {
  ikl_sandbox *sb = check_sandbox(L);
  load_args a;
  a.text = luaL_checklstring(L, 2, &a.len);
  a.chunkname = luaL_checkstring(L, 3);
  a.reloading = lua_toboolean(L, 4);
  collect_if_full(sb, 2);
  if (child_call(L, sb, load_version, &a, 0, BUDGETED | RESERVE_TOO) != 0) return push_failure(L, sb);
  sb->heap.after_gc = 0; /* what the last version kept may be garbage now */
  lua_pushboolean(L, 1);
  return 1;
}

static int run_update(lua_State *C) {
  double dt = *(double *)lua_touserdata(C, 1);
  ikl_getreg(C, &ENV_KEY);
  if (lua_isnil(C, -1)) return luaL_error(C, "no version of the script is loaded");
  lua_pushliteral(C, "update");
  lua_rawget(C, -2);
  if (lua_type(C, -1) != LUA_TFUNCTION) return luaL_error(C, "update is no longer a function");
  lua_pushnumber(C, dt);
  lua_call(C, 1, 0);
  return 0;
}

/***
 * Runs the loaded version's update(dt): true, or false and the error.
 * @function update
 */
static int sandbox_update(lua_State *L) {
  ikl_sandbox *sb = check_sandbox(L);
  double dt;
  ikl_checkreal(L, 2);
  dt = (double)lua_tonumber(L, 2); /* as given: a float build's ik_real would round it */
  if (!(dt >= 0))
    luaL_argerror(L, 2, lua_pushfstring(L, "non-negative number expected, got %s", ikl_describe(L, 2)));
  collect_if_full(sb, 4);
  if (child_call(L, sb, run_update, &dt, 0, BUDGETED) != 0) return push_failure(L, sb);
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- what the host reads back ---- */

static int reserve_child(lua_State *C) {
  luaL_checkstack(C, 3 * IKL_SHARE_DEPTH + 20, "too deep");
  return 0;
}

/* Pushes onto the host a copy of the child's registry value at key (or nil). */
static void read_back(lua_State *L, ikl_sandbox *sb, const void *key, int strict) {
  lua_State *C = sb->L;
  if (child_call(L, sb, reserve_child, NULL, 0, 0) != 0) {
    lua_pop(C, 1);
    lua_pushnil(L);
    return;
  }
  ikl_getreg(C, key);
  luaL_checkstack(L, 3 * IKL_SHARE_DEPTH + 20, "too deep");
  ikl_getuservalue(L, 1);
  ikl_share_out(C, lua_gettop(C), L, lua_gettop(L), strict);
  lua_remove(L, -2);
  lua_pop(C, 1);
}

/***
 * A copy of the script's state table (plain data; its ik objects by type name).
 * @function state
 */
static int sandbox_state(lua_State *L) {
  read_back(L, check_sandbox(L), &STATE_KEY, 0);
  return 1;
}

/***
 * Hands the reports scene.report took since the last call to fn, one call each:
 * `fn(name, reached, distance, iterations, shapes, extra)` (shapes: the chain's
 * constraint shapes, or nil). Returns how many.
 * @function reports
 */
static int sandbox_reports(lua_State *L) {
  ikl_sandbox *sb = check_sandbox(L);
  lua_State *C = sb->L;
  int n = sb->n_reports, i, k;
  static const char *const fields[] = {"name", "reached", "distance", "iterations", "shapes"};
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 3);
  sb->n_reports = 0;
  if (n == 0 || child_call(L, sb, reserve_child, NULL, 0, 0) != 0) {
    lua_pushinteger(L, 0);
    return 1;
  }
  luaL_checkstack(L, 3 * IKL_SHARE_DEPTH + 20, "too deep");
  ikl_getuservalue(L, 1); /* 4: the keep table */
  for (i = 1; i <= n; i++) {
    ikl_getreg(C, &REPORTS_KEY);
    lua_rawgeti(C, -1, i);
    lua_pushvalue(L, 2);
    for (k = 0; k < 5; k++) {
      lua_pushstring(C, fields[k]); /* interned already: allocates nothing */
      lua_rawget(C, -2);
      ikl_share_out(C, lua_gettop(C), L, 4, 0);
      lua_pop(C, 1);
    }
    lua_settop(C, 0);
    lua_pushvalue(L, 3);
    lua_call(L, 6, 0);
  }
  lua_pushinteger(L, n);
  return 1;
}

static int take_deps(lua_State *C) {
  ikl_sandbox_take_deps(C);
  ikl_setreg(C, &DEPS_KEY);
  return 0;
}

/***
 * The files the script loaded (required, dofile'd) since the last call: a list of paths.
 * @function deps
 */
static int sandbox_deps(lua_State *L) {
  ikl_sandbox *sb = check_sandbox(L);
  if (sb->n_deps == 0) return 0;
  if (child_call(L, sb, take_deps, NULL, 0, 0) != 0) {
    lua_pop(sb->L, 1);
    lua_newtable(L);
    return 1;
  }
  read_back(L, sb, &DEPS_KEY, 0);
  return 1;
}

/***
 * The bytes the script's heap holds, the most it held, and its limit.
 * @function memory
 */
static int sandbox_memory(lua_State *L) {
  ikl_sandbox *sb = check_sandbox(L);
  lua_pushnumber(L, (lua_Number)sb->heap.used);
  lua_pushnumber(L, (lua_Number)sb->heap.peak);
  lua_pushnumber(L, (lua_Number)sb->heap.limit);
  return 3;
}

static int sandbox_close(lua_State *L) {
  close_child((ikl_sandbox *)luaL_checkudata(L, 1, IKL_SANDBOX));
  return 0;
}

static int sandbox_tostring(lua_State *L) {
  ikl_sandbox *sb = (ikl_sandbox *)luaL_checkudata(L, 1, IKL_SANDBOX);
  if (!sb->L)
    lua_pushliteral(L, "ik.sandbox (closed)");
  else
    lua_pushfstring(L, "ik.sandbox(%d bytes)", (int)sb->heap.used);
  return 1;
}

/* ---- what the child calls: scene.report ---- */

/* scene.report(name, reached, distance, iterations, chain), kept as a record for the
 * host (the chain's constraint shapes read by the chain's own C). */
/* Raises "<script>:<line>: scene.report: <what>, got <the value at idx>". */
static int report_error(lua_State *C, const char *what, int idx) {
  const char *got = lua_type(C, idx) == LUA_TSTRING ? lua_pushfstring(C, "%d bytes", (int)lua_rawlen(C, idx))
                                                    : ikl_typename(C, idx);
  luaL_where(C, 1); /* the script's line */
  lua_pushfstring(C, "scene.report: %s, got %s", what, got);
  lua_concat(C, 2);
  return lua_error(C);
}

int ikl_sandbox_report(lua_State *C) {
  ikl_sandbox *sb = ikl_sandbox_of(C);
  int a = lua_type(C, 1) == LUA_TTABLE ? 2 : 1; /* scene:report(...) too */
  lua_settop(C, a + 4);
  if (lua_type(C, a) != LUA_TSTRING) return report_error(C, "chain name (string) expected", a);
  if (lua_rawlen(C, a) > 256) return report_error(C, "chain name of at most 256 bytes expected", a);
  if (!lua_isnil(C, a + 2) && lua_type(C, a + 2) != LUA_TNUMBER)
    return report_error(C, "distance (number) expected", a + 2);
  if (!lua_isnil(C, a + 3) && lua_type(C, a + 3) != LUA_TNUMBER)
    return report_error(C, "iterations (number) expected", a + 3);
  if (!lua_isnil(C, a + 4) && !ikl_tochain(C, a + 4))
    return report_error(C, "chain (ik.chain) expected", a + 4);
  if (!sb) return 0;
  if (++sb->reports > sb->max_reports)
    return luaL_error(C, "scene.report: more than %d reports in one call", sb->max_reports);
  sb->n_reports++;
  ikl_getreg(C, &REPORTS_KEY);
  lua_rawgeti(C, -1, sb->n_reports); /* a record kept from an earlier frame: refilled */
  if (lua_isnil(C, -1)) {
    lua_pop(C, 1);
    lua_createtable(C, 0, 5);
    lua_pushvalue(C, -1);
    lua_rawseti(C, -3, sb->n_reports);
  }
  lua_pushvalue(C, a);
  lua_setfield(C, -2, "name");
  lua_pushboolean(C, lua_toboolean(C, a + 1));
  lua_setfield(C, -2, "reached");
  lua_pushvalue(C, a + 2);
  lua_setfield(C, -2, "distance");
  lua_pushvalue(C, a + 3);
  lua_setfield(C, -2, "iterations");
  if (!lua_isnil(C, a + 4) && sb->shapes) {
    lua_pushcfunction(C, ikl_chain_constraint_shapes);
    lua_pushvalue(C, a + 4);
    lua_call(C, 1, 1);
  } else {
    lua_pushnil(C);
  }
  lua_setfield(C, -2, "shapes");
  return 0;
}

void ikl_sandbox_batch_begin(lua_State *L, int threads) {
  ikl_sandbox *sb = ikl_sandbox_of(L);
  if (!sb) return;
  if (threads > sb->batch_threads)
    luaL_error(L, "ik.batch: threads %d is more than this runtime lets scripts use (%d)", threads,
               sb->batch_threads);
  if (sb->batches >= MAX_BATCHES) {
    lua_gc(L, LUA_GCCOLLECT, 0); /* the unreachable ones go, and their threads with them */
    if (sb->batches >= MAX_BATCHES)
      luaL_error(L, "ik.batch: the script holds %d batches already, the most a runtime allows", sb->batches);
  }
  sb->batches++;
}

void ikl_sandbox_batch_end(lua_State *L) {
  ikl_sandbox *sb = ikl_sandbox_of(L);
  if (sb && sb->batches > 0) sb->batches--;
}

/* The child's scene.report, put in place of the host's by ikl_share_in. */
void ikl_sandbox_push_scene(lua_State *C) { ikl_getreg(C, &SCENE_KEY); }
void ikl_sandbox_push_state(lua_State *C) { ikl_getreg(C, &STATE_KEY); }

static const luaL_Reg meth[] = {{"load", sandbox_load},   {"update", sandbox_update},
                                {"state", sandbox_state}, {"reports", sandbox_reports},
                                {"deps", sandbox_deps},   {"memory", sandbox_memory},
                                {"close", sandbox_close}, {NULL, NULL}};
static const luaL_Reg metameth[] = {
    {"__gc", sandbox_close}, {"__close", sandbox_close}, {"__tostring", sandbox_tostring}, {NULL, NULL}};

void ikl_open_sandbox(lua_State *L) {
  ikl_createmeta(L, IKL_SANDBOX, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, sandbox_new);
  lua_setfield(L, -2, "sandbox");
}
