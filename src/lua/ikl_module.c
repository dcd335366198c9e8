/***
 * The native half of the `ik` module, loaded as `ik.core` (use `require("ik")`, which
 * re-exports it). Sets no globals and keeps no C state: every type's metatable lives in
 * the registry under its name.
 * @module ik.core
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */
#endif
#include <time.h>

#include "ikl.h"

#if defined(__GNUC__)
#define IKL_EXPORT __attribute__((visibility("default")))
#else
#define IKL_EXPORT
#endif

IKL_EXPORT int luaopen_ik_core(lua_State *L);

/***
 * Seconds on a monotonic wall clock, from an arbitrary origin: for timing frames.
 * `os.clock` counts processor time, which adds up every thread of an `ik.batch`.
 * @function clock
 * @treturn number
 * @usage local t0 = ik.clock()
 * local elapsed = ik.clock() - t0
 * assert(elapsed >= 0)
 */
static int ik_clock(lua_State *L) {
#if defined(CLOCK_MONOTONIC)
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
#else
  lua_pushnumber(L, (lua_Number)clock() / (lua_Number)CLOCKS_PER_SEC);
#endif
  return 1;
}

int luaopen_ik_core(lua_State *L) {
  lua_newtable(L);
  ikl_open_vec3(L);
  ikl_open_quat(L);
  ikl_open_pole(L);
  ikl_open_constraint(L);
  ikl_open_chain(L);
  ikl_open_tree(L);
  ikl_open_batch(L);
  ikl_open_crowd_template(L);
  ikl_open_crowd(L);
  ikl_open_crowd_buffer(L);
  ikl_open_skeleton(L);
  ikl_open_node(L);
  ikl_open_ground(L);
  ikl_open_foot(L);
  ikl_open_watch(L);
  ikl_open_sandbox(L);
  ikl_open_pattern(L);
  ikl_open_import(L);
  lua_pushcfunction(L, ik_clock);
  lua_setfield(L, -2, "clock");
  lua_pushliteral(L, IK_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_pushstring(L, sizeof(ik_real) == sizeof(double) ? "double" : "float");
  lua_setfield(L, -2, "real");
  return 1;
}
