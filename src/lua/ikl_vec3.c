/***
 * 3D vectors: `ik.vec3`, a value type (full userdata, read-only fields x, y, z).
 *
 * Wherever the module takes a vec3 it also takes `{x, y, z}`, `{x = , y = , z = }` and
 * any table or userdata with numeric fields x, y, z (a host's own vector type).
 *
 * Per-frame code need not make a vector per result: every method that returns a new
 * ik.vec3 (and `get_position` of bones and nodes, `ik.ground`'s `raycast`, `ik.foot`'s
 * `update`) takes an optional last argument `out`, an ik.vec3 it writes the result into
 * and returns instead. `out` may be one of the operands (`v:add(w, v)` adds in place),
 * and whoever else holds it sees the change: keep such scratch vectors to yourself.
 * @classmod ik.vec3
 */
#include <string.h>

#include "ikl.h"

static ik_vec3 *check(lua_State *L, int arg) { return (ik_vec3 *)luaL_checkudata(L, arg, IKL_VEC3); }

void ikl_pushvec3(lua_State *L, ik_vec3 v) {
  ik_vec3 *u = (ik_vec3 *)ikl_newuserdata0(L, sizeof *u);
  *u = v;
  luaL_setmetatable(L, IKL_VEC3);
}

ik_vec3 *ikl_outvec3(lua_State *L, int arg) {
  ik_vec3 *out;
  if (lua_isnoneornil(L, arg)) {
    ikl_pushvec3(L, ik_vec3_zero());
    return (ik_vec3 *)lua_touserdata(L, -1);
  }
  out = (ik_vec3 *)luaL_testudata(L, arg, IKL_VEC3);
  if (!out) ikl_typeerror(L, arg, "ik.vec3");
  lua_pushvalue(L, arg);
  return out;
}

/* The result written where the caller asked (argument `arg`, or a new vector). */
static int result(lua_State *L, int arg, ik_vec3 v) {
  *ikl_outvec3(L, arg) = v;
  return 1;
}

/***
 * Makes a vector. Missing components are 0; one vec3-like argument is copied.
 * @function ik.vec3
 * @tparam[opt=0] number x
 * @tparam[opt=0] number y
 * @tparam[opt=0] number z
 * @treturn ik.vec3
 * @usage local v = ik.vec3(1, 2, 3)
 * assert(v.x == 1 and v.z == 3)
 * assert(ik.vec3({4, 5, 6}) == ik.vec3(4, 5, 6))
 */
static int vec3_new(lua_State *L) {
  ik_vec3 v;
  lua_remove(L, 1); /* the ik.vec3 table itself (called through __call) */
  if (lua_gettop(L) == 1 && lua_type(L, 1) != LUA_TNUMBER) {
    ikl_pushvec3(L, ikl_checkvec3(L, 1));
    return 1;
  }
  v.x = lua_isnoneornil(L, 1) ? 0 : ikl_checkreal(L, 1);
  v.y = lua_isnoneornil(L, 2) ? 0 : ikl_checkreal(L, 2);
  v.z = lua_isnoneornil(L, 3) ? 0 : ikl_checkreal(L, 3);
  ikl_pushvec3(L, v);
  return 1;
}

/***
 * Overwrites the vector: with three numbers (missing ones 0), or with a vec3-like's
 * components. For scratch vectors made once and reused every frame.
 * @function set
 * @tparam number|vec3 x or a vec3-like to copy
 * @tparam[opt=0] number y
 * @tparam[opt=0] number z
 * @treturn ik.vec3 the vector itself
 * @usage local v = ik.vec3()
 * assert(v:set(1, 2, 3) == ik.vec3(1, 2, 3) and v.y == 2)
 * assert(v:set({4, 5, 6}) == v and v.x == 4)   -- the same object, changed
 */
static int vec3_set(lua_State *L) {
  ik_vec3 *v = check(L, 1), w;
  if (lua_gettop(L) == 2 && lua_type(L, 2) != LUA_TNUMBER) {
    w = ikl_checkvec3(L, 2);
  } else {
    w.x = lua_isnoneornil(L, 2) ? 0 : ikl_checkreal(L, 2);
    w.y = lua_isnoneornil(L, 3) ? 0 : ikl_checkreal(L, 3);
    w.z = lua_isnoneornil(L, 4) ? 0 : ikl_checkreal(L, 4);
  }
  *v = w;
  lua_settop(L, 1);
  return 1;
}

/*** Length.
 * @function length
 * @treturn number */
static int vec3_length(lua_State *L) {
  lua_pushnumber(L, (lua_Number)ik_vec3_len(*check(L, 1)));
  return 1;
}

/*** Unit vector in the same direction; the zero vector stays zero (never NaN).
 * @function normalized
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int vec3_normalized(lua_State *L) { return result(L, 2, ik_vec3_normalize(*check(L, 1))); }

/*** Dot product.
 * @function dot
 * @tparam vec3 w
 * @treturn number */
static int vec3_dot(lua_State *L) {
  const ik_vec3 v = *check(L, 1); /* self first: C leaves the order of arguments open */
  lua_pushnumber(L, (lua_Number)ik_vec3_dot(v, ikl_checkvec3(L, 2)));
  return 1;
}

/*** Cross product (right-handed).
 * @function cross
 * @tparam vec3 w
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int vec3_cross(lua_State *L) {
  const ik_vec3 v = *check(L, 1);
  return result(L, 3, ik_vec3_cross(v, ikl_checkvec3(L, 2)));
}

/*** Linear interpolation: t = 0 gives self, t = 1 gives w.
 * @function lerp
 * @tparam vec3 w
 * @tparam number t
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int vec3_lerp(lua_State *L) {
  const ik_vec3 v = *check(L, 1), w = ikl_checkvec3(L, 2);
  return result(L, 4, ik_vec3_lerp(v, w, ikl_checkreal(L, 3)));
}

/*** Sum, as `v + w`.
 * @function add
 * @tparam vec3 w
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3
 * @usage local sum = ik.vec3()
 * ik.vec3(1, 2, 3):add({1, 1, 1}, sum)
 * assert(sum == ik.vec3(2, 3, 4)) */
static int vec3_add_method(lua_State *L) {
  const ik_vec3 v = *check(L, 1);
  return result(L, 3, ik_vec3_add(v, ikl_checkvec3(L, 2)));
}

/*** Difference, as `v - w`.
 * @function sub
 * @tparam vec3 w
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int vec3_sub_method(lua_State *L) {
  const ik_vec3 v = *check(L, 1);
  return result(L, 3, ik_vec3_sub(v, ikl_checkvec3(L, 2)));
}

/*** Scaled, as `v * s`.
 * @function scale
 * @tparam number s
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3
 * @usage local v = ik.vec3(1, 2, 3)
 * v:scale(2, v)   -- in place
 * assert(v == ik.vec3(2, 4, 6)) */
static int vec3_scale(lua_State *L) {
  const ik_vec3 v = *check(L, 1);
  return result(L, 3, ik_vec3_scale(v, ikl_checkreal(L, 2)));
}

/*** Distance to another point.
 * @function distance
 * @tparam vec3 w
 * @treturn number */
static int vec3_distance(lua_State *L) {
  const ik_vec3 v = *check(L, 1);
  lua_pushnumber(L, (lua_Number)ik_vec3_dist(v, ikl_checkvec3(L, 2)));
  return 1;
}

/*** The components.
 * @function unpack
 * @treturn number x
 * @treturn number y
 * @treturn number z
 * @usage local x, y, z = ik.vec3(1, 2, 3):unpack() */
static int vec3_unpack(lua_State *L) {
  ik_vec3 v = *check(L, 1);
  lua_pushnumber(L, (lua_Number)v.x);
  lua_pushnumber(L, (lua_Number)v.y);
  lua_pushnumber(L, (lua_Number)v.z);
  return 3;
}

/* The operators check their operands with ikl_op*: messages name the metamethod alike
 * on every Lua. */
static int vec3_add(lua_State *L) {
  const ik_vec3 a = ikl_opvec3(L, 1, "__add");
  ikl_pushvec3(L, ik_vec3_add(a, ikl_opvec3(L, 2, "__add")));
  return 1;
}

static int vec3_sub(lua_State *L) {
  const ik_vec3 a = ikl_opvec3(L, 1, "__sub");
  ikl_pushvec3(L, ik_vec3_sub(a, ikl_opvec3(L, 2, "__sub")));
  return 1;
}

/* v * s and s * v. */
static int vec3_mul(lua_State *L) {
  const int v = lua_type(L, 1) == LUA_TNUMBER ? 2 : 1;
  const ik_vec3 a = ikl_opvec3(L, v, "__mul");
  ikl_pushvec3(L, ik_vec3_scale(a, ikl_opreal(L, 3 - v, "__mul")));
  return 1;
}

static int vec3_div(lua_State *L) {
  const ik_real s = ikl_opreal(L, 2, "__div");
  if (s == 0) ikl_operror(L, 2, "__div", "division by zero");
  ikl_pushvec3(L, ik_vec3_scale(ikl_opvec3(L, 1, "__div"), 1 / s));
  return 1;
}

static int vec3_unm(lua_State *L) {
  ikl_pushvec3(L, ik_vec3_neg(*check(L, 1)));
  return 1;
}

static int vec3_eq(lua_State *L) {
  ik_vec3 a, b;
  lua_pushboolean(L, ikl_tovec3(L, 1, &a) && ikl_tovec3(L, 2, &b) && a.x == b.x && a.y == b.y && a.z == b.z);
  return 1;
}

static int vec3_tostring(lua_State *L) {
  ik_vec3 v = *check(L, 1);
  lua_pushfstring(L, "vec3(%s, %s, %s)", ikl_pushnumstr(L, (lua_Number)v.x),
                  ikl_pushnumstr(L, (lua_Number)v.y), ikl_pushnumstr(L, (lua_Number)v.z));
  return 1;
}

/* Fields first (hot: v.x), then methods (the upvalue). */
static int vec3_index(lua_State *L) {
  const ik_vec3 *v = check(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && key[0] && !key[1]) {
    switch (key[0]) {
      case 'x':
        lua_pushnumber(L, (lua_Number)v->x);
        return 1;
      case 'y':
        lua_pushnumber(L, (lua_Number)v->y);
        return 1;
      case 'z':
        lua_pushnumber(L, (lua_Number)v->z);
        return 1;
      default:
        break;
    }
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int vec3_newindex(lua_State *L) {
  check(L, 1);
  return ikl_readonly(L, IKL_VEC3, "a value: make a new one with ik.vec3(x, y, z)");
}

static const luaL_Reg meth[] = {
    {"length", vec3_length},  {"normalized", vec3_normalized}, {"dot", vec3_dot},       {"cross", vec3_cross},
    {"lerp", vec3_lerp},      {"distance", vec3_distance},     {"unpack", vec3_unpack}, {"set", vec3_set},
    {"add", vec3_add_method}, {"sub", vec3_sub_method},        {"scale", vec3_scale},   {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", vec3_index},       {"__newindex", vec3_newindex},
                                    {"__add", vec3_add},           {"__sub", vec3_sub},
                                    {"__mul", vec3_mul},           {"__div", vec3_div},
                                    {"__unm", vec3_unm},           {"__eq", vec3_eq},
                                    {"__tostring", vec3_tostring}, {NULL, NULL}};

void ikl_open_vec3(lua_State *L) {
  ikl_createmeta(L, IKL_VEC3, meth, metameth);
  lua_pop(L, 1);
  lua_newtable(L); /* ik.vec3: callable, room for helpers */
  lua_newtable(L);
  lua_pushcfunction(L, vec3_new);
  lua_setfield(L, -2, "__call");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "vec3");
}
