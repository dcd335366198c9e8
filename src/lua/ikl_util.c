/* Argument and field checking shared by the binding files, worded like Lua's own. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ikl.h"

const char *ikl_pushnumstr(lua_State *L, lua_Number n) {
  char buf[32];
  if (n != n) {
    lua_pushliteral(L, "nan"); /* never "-nan" */
  } else {
    snprintf(buf, sizeof buf, "%.14g", (double)n);
    lua_pushstring(L, buf);
  }
  return lua_tostring(L, -1);
}

const char *ikl_typename(lua_State *L, int idx) {
  const char *name = NULL;
  if (luaL_getmetafield(L, idx, "__name")) {
    /* 5.1 returns 1 and 5.4 the field's type: either way the field is on the stack. */
    if (lua_type(L, -1) == LUA_TSTRING) name = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  return name ? name : luaL_typename(L, idx);
}

int ikl_typeerror(lua_State *L, int arg, const char *expected) {
  const char *msg = lua_pushfstring(L, "%s expected, got %s", expected, ikl_typename(L, arg));
  return luaL_argerror(L, arg, msg);
}

const char *ikl_describe(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER) return ikl_pushnumstr(L, lua_tonumber(L, idx));
  lua_pushstring(L, ikl_typename(L, idx));
  return lua_tostring(L, -1);
}

int ikl_fielderror(lua_State *L, const char *owner, const char *field, const char *expected, int idx) {
  idx = lua_absindex(L, idx);
  return luaL_error(L, "%s: bad field '%s' (%s expected, got %s)", owner, field, expected,
                    ikl_describe(L, idx));
}

void ikl_check_keys(lua_State *L, int t, const char *owner, const char *const *names, const char *list) {
  t = lua_absindex(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    int i = 0;
    lua_pop(L, 1);
    if (key)
      for (i = 0; names[i] && strcmp(key, names[i]) != 0; i++) continue;
    if (!key || !names[i]) {
      if (!key && lua_type(L, -1) == LUA_TNUMBER) {
        lua_pushvalue(L, -1); /* converted on a copy: lua_next needs the key as it is */
        key = lua_tostring(L, -1);
      }
      luaL_error(L, "%s: no field '%s' (fields: %s)", owner, key ? key : luaL_typename(L, -1), list);
    }
  }
}

int ikl_indexable(lua_State *L, int idx) {
  int type = lua_type(L, idx);
  if (type == LUA_TTABLE) return 1;
  if (type != LUA_TUSERDATA || !luaL_getmetafield(L, idx, "__index")) return 0;
  lua_pop(L, 1);
  return 1;
}

/* Reads three numbers from the table or userdata at idx, by index or by name. */
static int read_components(lua_State *L, int idx, lua_Number *c, int n) {
  static const char *const names[4] = {"x", "y", "z", "w"};
  int i, ok = 1;
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_rawgeti(L, idx, 1);
    if (lua_type(L, -1) == LUA_TNUMBER) {
      lua_pop(L, 1);
      for (i = 0; i < n && ok; i++) {
        lua_rawgeti(L, idx, i + 1);
        ok = lua_type(L, -1) == LUA_TNUMBER;
        c[i] = lua_tonumber(L, -1);
        lua_pop(L, 1);
      }
      return ok;
    }
    lua_pop(L, 1);
  } else if (!ikl_indexable(L, idx)) {
    return 0; /* not a table, or a userdata that cannot be indexed (which would raise) */
  }
  for (i = 0; i < n && ok; i++) {
    lua_getfield(L, idx, names[i]); /* through __index: a host's vector type works */
    ok = lua_type(L, -1) == LUA_TNUMBER;
    c[i] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return ok;
}

/* Whether the value at idx is one of the module's own userdata ("ik.*" __name). */
static int is_ours(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TUSERDATA && strncmp(ikl_typename(L, idx), "ik.", 3) == 0;
}

int ikl_tovec3(lua_State *L, int idx, ik_vec3 *out) {
  const ik_vec3 *v = (const ik_vec3 *)luaL_testudata(L, idx, IKL_VEC3);
  lua_Number c[3];
  if (v) {
    *out = *v;
    return 1;
  }
  idx = lua_absindex(L, idx);
  if (is_ours(L, idx)) return 0; /* an ik.quat has x, y, z, but is no vector */
  if (!read_components(L, idx, c, 3)) return 0;
  *out = ik_vec3_make((ik_real)c[0], (ik_real)c[1], (ik_real)c[2]);
  return 1;
}

int ikl_toquat(lua_State *L, int idx, ik_quat *out) {
  const ik_quat *q = (const ik_quat *)luaL_testudata(L, idx, IKL_QUAT);
  lua_Number c[4];
  if (q) {
    *out = *q;
    return 1;
  }
  idx = lua_absindex(L, idx);
  if (is_ours(L, idx)) return 0;
  if (!read_components(L, idx, c, 4)) return 0;
  *out = ik_quat_make((ik_real)c[0], (ik_real)c[1], (ik_real)c[2], (ik_real)c[3]);
  return 1;
}

int ikl_vec3_usable(ik_vec3 v) {
  return ikl_is_usable((lua_Number)v.x) && ikl_is_usable((lua_Number)v.y) && ikl_is_usable((lua_Number)v.z);
}

int ikl_quat_usable(ik_quat q) {
  return ikl_vec3_usable(ik_vec3_make(q.x, q.y, q.z)) && ikl_is_usable((lua_Number)q.w);
}

int ikl_rotation_usable(ik_quat q) { return ikl_quat_usable(q) && ik_quat_dot(q, q) > IK_TINY_LEN2; }

/* What is wrong with the vec3 argument at arg (pushed), or NULL with it in *v. */
static const char *vec3_problem(lua_State *L, int arg, ik_vec3 *v) {
  if (!ikl_tovec3(L, arg, v)) return lua_pushfstring(L, "vec3 expected, got %s", ikl_typename(L, arg));
  if (!ikl_vec3_usable(*v)) return "finite vec3 expected, got NaN, inf or a huge component";
  return NULL;
}

/* What is wrong with the number argument at arg (pushed), or NULL. */
static const char *real_problem(lua_State *L, int arg) {
  if (lua_type(L, arg) != LUA_TNUMBER)
    return lua_pushfstring(L, "number expected, got %s", ikl_typename(L, arg));
  if (!ikl_is_usable(lua_tonumber(L, arg)))
    return lua_pushfstring(L, "finite number expected, got %s", ikl_describe(L, arg));
  return NULL;
}

ik_vec3 ikl_checkvec3(lua_State *L, int arg) {
  ik_vec3 v;
  const char *problem = vec3_problem(L, arg, &v);
  if (problem) luaL_argerror(L, arg, problem);
  return v;
}

ik_quat ikl_checkquat(lua_State *L, int arg) {
  ik_quat q;
  if (!ikl_toquat(L, arg, &q)) ikl_typeerror(L, arg, "quat");
  /* Huge components as for vectors: squaring them overflows, and normalising would
   * silently give identity where ik.quat(x, y, z, w) raises. */
  if (!ikl_quat_usable(q)) luaL_argerror(L, arg, "finite quat expected, got NaN, inf or a huge component");
  return q;
}

ik_quat ikl_checkrotation(lua_State *L, int arg) {
  ik_quat q = ikl_checkquat(L, arg);
  luaL_argcheck(L, ik_quat_dot(q, q) > IK_TINY_LEN2, arg, "non-zero quat expected");
  return q;
}

int ikl_checkstatus(lua_State *L, ik_status st, int arg) {
  if (st != IK_OK) luaL_argerror(L, arg, ik_status_message(st));
  return 0;
}

ik_real ikl_checkreal(lua_State *L, int arg) {
  const char *problem = real_problem(L, arg);
  if (problem) luaL_argerror(L, arg, problem);
  return (ik_real)lua_tonumber(L, arg);
}

int ikl_operror(lua_State *L, int arg, const char *op, const char *msg) {
  return luaL_error(L, "bad argument #%d to '%s' (%s)", arg, op, msg);
}

ik_vec3 ikl_opvec3(lua_State *L, int arg, const char *op) {
  ik_vec3 v;
  const char *problem = vec3_problem(L, arg, &v);
  if (problem) ikl_operror(L, arg, op, problem);
  return v;
}

ik_real ikl_opreal(lua_State *L, int arg, const char *op) {
  const char *problem = real_problem(L, arg);
  if (problem) ikl_operror(L, arg, op, problem);
  return (ik_real)lua_tonumber(L, arg);
}

const char *ikl_opstring(lua_State *L, int arg, const char *op) {
  const char *s = lua_tostring(L, arg);
  if (!s) ikl_operror(L, arg, op, lua_pushfstring(L, "string expected, got %s", ikl_typename(L, arg)));
  return s;
}

int ikl_checkindex(lua_State *L, int arg, int last) {
  lua_Number n = lua_tonumber(L, arg);
  if (n == 0 && !lua_isnumber(L, arg)) ikl_typeerror(L, arg, "number");
  if (!(n >= -0x1p63 && n < 0x1p63) || n != floor(n))
    luaL_argerror(L, arg, "number has no integer representation");
  if (n < 1 || n > last) luaL_argerror(L, arg, lua_pushfstring(L, "index out of range: 1..%d", last));
  return (int)n - 1;
}

ik_real ikl_optfield_real(lua_State *L, int t, const char *owner, const char *name, ik_real def, ik_real lo,
                          ik_real hi, const char *expected) {
  lua_Number n;
  lua_getfield(L, t, name);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return def;
  }
  n = lua_tonumber(L, -1);
  if (lua_type(L, -1) != LUA_TNUMBER || !ikl_is_usable(n) || n < (lua_Number)lo || n > (lua_Number)hi)
    ikl_fielderror(L, owner, name, expected, -1);
  lua_pop(L, 1);
  return (ik_real)n;
}

int ikl_optfield_vec3(lua_State *L, int t, const char *owner, const char *name, ik_vec3 *out) {
  ik_vec3 v;
  lua_getfield(L, t, name);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return 0;
  }
  if (!ikl_tovec3(L, -1, &v)) ikl_fielderror(L, owner, name, "vec3", -1);
  if (!ikl_vec3_usable(v))
    luaL_error(L, "%s: bad field '%s' (finite vec3 expected, got NaN, inf or a huge component)", owner, name);
  lua_pop(L, 1);
  *out = v;
  return 1;
}

int ikl_readonly(lua_State *L, const char *tname, const char *hint) {
  return luaL_error(L, "%s: fields are read-only (%s)", tname, hint);
}

/* The __newindex of a type that defines none (the upvalue: its name). */
static int readonly_newindex(lua_State *L) {
  return ikl_readonly(L, lua_tostring(L, lua_upvalueindex(1)), "use its methods");
}

void ikl_createmeta(lua_State *L, const char *tname, const luaL_Reg *meth, const luaL_Reg *metameth) {
  const luaL_Reg *r;
  int has_index = 0, has_newindex = 0;
  luaL_newmetatable(L, tname);
  lua_pushstring(L, tname);
  lua_setfield(L, -2, "__name"); /* 5.4 sets it too; 5.1 does not */
  lua_newtable(L);               /* methods */
  luaL_setfuncs(L, meth, 0);
  for (r = metameth; r->name; r++) {
    if (strcmp(r->name, "__index") == 0) {
      lua_pushvalue(L, -1); /* methods as the upvalue */
      lua_pushcclosure(L, r->func, 1);
      has_index = 1;
    } else {
      lua_pushcfunction(L, r->func);
    }
    has_newindex |= strcmp(r->name, "__newindex") == 0;
    lua_setfield(L, -3, r->name);
  }
  if (!has_newindex) {
    lua_pushstring(L, tname);
    lua_pushcclosure(L, readonly_newindex, 1);
    lua_setfield(L, -3, "__newindex");
  }
  if (!has_index) {
    lua_setfield(L, -2, "__index");
  } else {
    lua_pop(L, 1);
  }
}
