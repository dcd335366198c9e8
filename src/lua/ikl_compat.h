/*
 * ikl_compat.h: one binding source for Lua 5.4, 5.1 and LuaJIT 2.1.
 *
 * Written against the 5.4 API; what 5.1 lacks is renamed here by macro. LuaJIT 2.1
 * already declares part of the 5.2 API (luaL_setfuncs, luaL_testudata,
 * luaL_setmetatable, luaL_newlib): those are supplied only for plain 5.1, detected by
 * luaL_newlib not being defined.
 */
#ifndef IKL_COMPAT_H
#define IKL_COMPAT_H

#include "lauxlib.h"
#include "lua.h"

#if LUA_VERSION_NUM == 501

#define lua_rawlen lua_objlen
#define lua_absindex(L, i) ((i) > 0 || (i) <= LUA_REGISTRYINDEX ? (i) : lua_gettop(L) + (i) + 1)
/* Userdata keep the objects they hold alive in their environment table. */
#define ikl_newuserdata(L, size) lua_newuserdata(L, size)
/* A userdata that holds no other object (a value, a scratch buffer): 5.1 has no way to
 * leave the environment out. */
#define ikl_newuserdata0(L, size) lua_newuserdata(L, size)
#define ikl_setuservalue(L, idx) lua_setfenv(L, idx)
#define ikl_getuservalue(L, idx) lua_getfenv(L, idx)

#ifndef luaL_newlib /* plain Lua 5.1, not LuaJIT */
#define luaL_setfuncs ikl_compat_setfuncs
#define luaL_testudata ikl_compat_testudata
#define luaL_setmetatable(L, tname) (luaL_getmetatable(L, tname), lua_setmetatable(L, -2))
#define luaL_newlib(L, l) (lua_newtable(L), luaL_setfuncs(L, l, 0))

static inline void ikl_compat_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  int i;
  luaL_checkstack(L, nup, "too many upvalues");
  for (; l->name != NULL; l++) {
    for (i = 0; i < nup; i++) lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}

static inline void *ikl_compat_testudata(lua_State *L, int ud, const char *tname) {
  void *p = lua_touserdata(L, ud);
  if (p != NULL && lua_getmetatable(L, ud)) {
    luaL_getmetatable(L, tname);
    if (!lua_rawequal(L, -1, -2)) p = NULL;
    lua_pop(L, 2);
    return p;
  }
  return NULL;
}
#endif

#else /* 5.4 */

#define ikl_newuserdata(L, size) lua_newuserdatauv(L, size, 1)
/* No user value: lua_newuserdata would give one, an extra slot to allocate and mark for
 * every ik.vec3 and ik.quat made. */
#define ikl_newuserdata0(L, size) lua_newuserdatauv(L, size, 0)
#define ikl_setuservalue(L, idx) lua_setiuservalue(L, idx, 1)
#define ikl_getuservalue(L, idx) lua_getiuservalue(L, idx, 1)

#endif

#endif /* IKL_COMPAT_H */
