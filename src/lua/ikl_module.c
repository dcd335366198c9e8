/***
 * The native half of the `ik` module, loaded as `ik.core` (use `require("ik")`, which
 * re-exports it). Sets no globals and keeps no C state: every type's metatable lives in
 * the registry under its name.
 * @module ik.core
 */
#include "ikl.h"

#if defined(__GNUC__)
#define IKL_EXPORT __attribute__((visibility("default")))
#else
#define IKL_EXPORT
#endif

IKL_EXPORT int luaopen_ik_core(lua_State *L);

int luaopen_ik_core(lua_State *L) {
  lua_newtable(L);
  ikl_open_vec3(L);
  ikl_open_quat(L);
  ikl_open_pole(L);
  ikl_open_constraint(L);
  ikl_open_chain(L);
  ikl_open_skeleton(L);
  ikl_open_node(L);
  ikl_open_ground(L);
  ikl_open_foot(L);
  ikl_open_watch(L);
  lua_pushliteral(L, IK_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_pushstring(L, sizeof(ik_real) == sizeof(double) ? "double" : "float");
  lua_setfield(L, -2, "real");
  return 1;
}
