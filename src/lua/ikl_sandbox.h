/*
 * ikl_sandbox.h: what the sandbox files (ikl_sandbox.c, ikl_sandbox_env.c, ikl_share.c)
 * share. Not installed.
 *
 * A sandbox is one rig script's own lua_State (the child), made and driven from the
 * host's state through an `ik.sandbox` userdata. The child has its own heap with a cap
 * over its lifetime, its own globals and string metatable, and a count hook that charges
 * every call into it to an instruction budget. The host's objects reach it as views
 * (skeletons, bones, nodes, grounds: the same C objects) and as copies (plain data);
 * the host's functions as proxies that copy their arguments and results.
 */
#ifndef IKL_SANDBOX_H
#define IKL_SANDBOX_H

#include <signal.h>
#include <stddef.h>

#include "ikl.h"

#define IKL_SANDBOX "ik.sandbox"

/* The child's heap: what its allocator has handed out, and the caps. */
typedef struct ikl_heap {
  size_t used;
  size_t peak;
  size_t limit;   /* the script's share, over its lifetime */
  size_t reserve; /* on top of limit while the sandbox's own code runs (trusted) */
  int trusted;
  int refused;     /* an allocation was refused since the last call began */
  size_t after_gc; /* used after the last full collection the sandbox made */
} ikl_heap;

typedef struct ikl_sandbox {
  lua_State *L; /* the child; NULL once closed */
  ikl_heap heap;
  /* the call in progress */
  double budget; /* instructions a call (0: no budget) */
  double used;
  int step; /* the hook's count */
  int active;
  int exceeded;
  char exceeded_msg[320];
  const volatile sig_atomic_t *interrupt; /* the host's stop flag, or NULL */
  ikl_step_budget steps;                  /* what the pattern functions charge */
  /* limits on what a script hands the host */
  int reports; /* reports in this call */
  int max_reports;
  int n_deps;        /* files loaded since the last load began */
  int n_reports;     /* records filled since the host last took them (kept for reuse) */
  lua_State *host;   /* during a call: the host's state, for the proxies */
  int host_ud;       /* and where this userdata is on its stack */
  int busy;          /* a call into the child is under way */
  int batch_threads; /* the most threads one of its ik.batch may use */
  int batches;       /* its ik.batch alive (not closed) */
  int shapes;        /* reports read their chain's constraint shapes */
} ikl_sandbox;

/* The registry value under a light userdata key: get pushes it, set pops it. */
static inline void ikl_getreg(lua_State *L, const void *key) {
  lua_pushlightuserdata(L, (void *)(size_t)key);
  lua_rawget(L, LUA_REGISTRYINDEX);
}
static inline void ikl_setreg(lua_State *L, const void *key) {
  lua_pushlightuserdata(L, (void *)(size_t)key);
  lua_insert(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

/* The sandbox a child state (or one of its threads) belongs to. */
ikl_sandbox *ikl_sandbox_of(lua_State *L);

/* Charges n steps of C work to the call running in L; raises in L when that spends the
 * budget, the host asked to stop, or the call had gone over a limit already. */
void ikl_sandbox_charge(lua_State *L, ikl_sandbox *sb, double n);
/* Raises the error of a call that went over a limit again (pcall and resume call it). */
void ikl_sandbox_reraise(lua_State *L, ikl_sandbox *sb);
/* The message of an error value at idx in L, pushed in L: strings and numbers as they
 * are (cut to IKL_SANDBOX_MAX_MESSAGE bytes), anything else by its type, so that no
 * script code (a __tostring) runs. */
#define IKL_SANDBOX_MAX_MESSAGE 4096
const char *ikl_sandbox_message(lua_State *L, int idx, size_t *len);

/* ---- the child's environment (ikl_sandbox_env.c) ---- */

/* Opens the libraries a rig script may use in the new child C, with the sandbox's own
 * pcall, xpcall, coroutine.resume, string.rep, table.move, table.sort, getmetatable,
 * setmetatable, load, loadfile, dofile, require, print and the budgeted pattern
 * functions; keeps them in C's registry as the template every version's globals are
 * copied from. ik_path: the ';'-separated templates ('?' for the module's path) where
 * the ik Lua modules are; dir: the script's folder. Raises in C. */
void ikl_sandbox_open_env(lua_State *C, const char *ik_path, const char *dir);
/* Pushes a new table of globals for one version of the script (in C). */
void ikl_sandbox_new_env(lua_State *C);
/* Pushes the list of files the child loaded since the last call to it (in C), and
 * starts a new list. */
void ikl_sandbox_take_deps(lua_State *C);

/* The child's scene (the read-only table scripts see) and state table, pushed. */
void ikl_sandbox_push_scene(lua_State *C);
void ikl_sandbox_push_state(lua_State *C);
/* The child's scene.report (in place of the host's): keeps a checked record. */
int ikl_sandbox_report(lua_State *C);

/* ---- values between the states (ikl_share.c) ---- */

/* Copies the value at idx of `from` (the host) onto `to` (the child): plain data as
 * copies, the ik objects as views, functions as proxies. Tables are copied whole (to
 * IKL_SHARE_DEPTH deep, IKL_SHARE_VALUES values a copy), sharing what they share.
 * Raises in `from` ("<what>: ...") for what cannot be shared. keep: where the sandbox's
 * user value (the host objects the child holds, by id) is on the host's stack. */
#define IKL_SHARE_DEPTH 16
#define IKL_SHARE_VALUES 100000
void ikl_share_in(lua_State *from, int idx, lua_State *to, ikl_sandbox *sb, int keep, const char *what);
/* Copies the value at idx of the child onto the host: plain data, and what came from the
 * host (views, the scene's tables) as the host's own objects. With strict, a value that
 * only the child has (a function, a chain the script made) raises in the child; without,
 * it becomes its type name. */
void ikl_share_out(lua_State *child, int idx, lua_State *host, int keep, int strict);

#endif /* IKL_SANDBOX_H */
