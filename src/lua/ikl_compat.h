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
/* t[i] pushed, its type returned; the plain forms are for a table with no metatable,
 * where 5.4's lua_geti and lua_seti are the raw ones. 5.1 has only the raw ones. */
static inline int ikl_compat_rawgeti(lua_State *L, int t, int i) {
  lua_rawgeti(L, t, i);
  return lua_type(L, -1);
}
#define ikl_rawgeti ikl_compat_rawgeti
#define ikl_plain_geti ikl_compat_rawgeti
#define ikl_plain_seti lua_rawseti

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

/* 5.1's checkers call every userdata "userdata" in their messages, where 5.4 gives its
 * __name ("ik.vec3 expected, got ik.quat"): the ones that can meet one of the module's
 * objects are replaced by ones that say what 5.4 says. */
static inline int ikl_compat_typeerror(lua_State *L, int arg, const char *expected) {
  const char *got;
  if (luaL_getmetafield(L, arg, "__name") && lua_type(L, -1) == LUA_TSTRING)
    got = lua_tostring(L, -1);
  else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA)
    got = "light userdata";
  else
    got = luaL_typename(L, arg);
  return luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", expected, got));
}

static inline void *ikl_compat_checkudata(lua_State *L, int arg, const char *tname) {
  void *p = luaL_testudata(L, arg, tname);
  if (p == NULL) ikl_compat_typeerror(L, arg, tname);
  return p;
}

static inline void ikl_compat_checktype(lua_State *L, int arg, int t) {
  if (lua_type(L, arg) != t) ikl_compat_typeerror(L, arg, lua_typename(L, t));
}

static inline const char *ikl_compat_checklstring(lua_State *L, int arg, size_t *len) {
  const char *s = lua_tolstring(L, arg, len);
  if (s == NULL) ikl_compat_typeerror(L, arg, "string");
  return s;
}

#define luaL_checkudata ikl_compat_checkudata
#define luaL_checktype ikl_compat_checktype
#define luaL_checklstring ikl_compat_checklstring

#else /* 5.4 */

#define ikl_newuserdata(L, size) lua_newuserdatauv(L, size, 1)
/* No user value: lua_newuserdata would give one, an extra slot to allocate and mark for
 * every ik.vec3 and ik.quat made. */
#define ikl_newuserdata0(L, size) lua_newuserdatauv(L, size, 0)
#define ikl_setuservalue(L, idx) lua_setiuservalue(L, idx, 1)
#define ikl_getuservalue(L, idx) lua_getiuservalue(L, idx, 1)
/* lua_geti and lua_seti find an array slot inline, where the raw ones call into the
 * table code for every value. */
#define ikl_rawgeti lua_rawgeti
#define ikl_plain_geti lua_geti
#define ikl_plain_seti lua_seti

#endif

#endif /* IKL_COMPAT_H */
