/***
 * Pole targets: `ik.pole`. A chain with a pole bends its inner joints towards it (for
 * a leg, put the pole in front of the knee; for an arm, behind and below the elbow).
 * Parent poles to the character, not the world, so they turn with it.
 * @classmod ik.pole
 */
#include <string.h>

#include "ikl.h"

static ikl_pole *check_open(lua_State *L, int arg) {
  ikl_pole *p = (ikl_pole *)luaL_checkudata(L, arg, IKL_POLE);
  if (p->closed) luaL_error(L, "attempt to use a closed ik.pole");
  return p;
}

ikl_pole *ikl_checkpole(lua_State *L, int arg) { return check_open(L, arg); }

ikl_pole *ikl_pushpole(lua_State *L, ik_vec3 position) {
  ikl_pole *p = (ikl_pole *)ikl_newuserdata0(L, sizeof *p);
  p->position = position;
  p->weight = 1;
  p->closed = 0;
  luaL_setmetatable(L, IKL_POLE);
  return p;
}

/***
 * Makes a pole.
 * @function ik.pole
 * @tparam table spec `position` (vec3, required) and `weight` (number in [0, 1], default 1)
 * @treturn ik.pole
 * @usage local pole = ik.pole{ position = {0, 1, 2}, weight = 0.5 }
 * pole.position = ik.vec3(0, 1, 3)   -- move it every frame
 * assert(pole.weight == 0.5)
 */
static int pole_new(lua_State *L) {
  ik_vec3 position;
  ik_real weight;
  static const char *const keys[] = {"position", "weight", NULL};
  luaL_checktype(L, 1, LUA_TTABLE);
  ikl_check_keys(L, 1, "ik.pole", keys, "position, weight");
  if (!ikl_optfield_vec3(L, 1, "ik.pole", "position", &position))
    return luaL_error(L, "ik.pole: bad field 'position' (vec3 expected, got nil)");
  weight = ikl_optfield_real(L, 1, "ik.pole", "weight", 1, 0, 1, "number in [0, 1]");
  ikl_pushpole(L, position)->weight = weight;
  return 1;
}

/*** Closes the pole: any later use raises. Chains holding it raise at their next solve.
 * @function close */
static int pole_close(lua_State *L) {
  ikl_pole *p = (ikl_pole *)luaL_checkudata(L, 1, IKL_POLE);
  p->closed = 1;
  return 0;
}

static int pole_index(lua_State *L) {
  ikl_pole *p = check_open(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "position") == 0) {
    ikl_pushvec3(L, p->position);
  } else if (key && strcmp(key, "weight") == 0) {
    lua_pushnumber(L, (lua_Number)p->weight);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int pole_newindex(lua_State *L) {
  ikl_pole *p = check_open(L, 1);
  const char *key = ikl_opstring(L, 2, "__newindex");
  if (strcmp(key, "position") == 0) {
    ik_vec3 v;
    if (!ikl_tovec3(L, 3, &v)) return ikl_fielderror(L, "ik.pole", "position", "vec3", 3);
    if (!ikl_vec3_usable(v))
      return luaL_error(
          L, "ik.pole: bad field 'position' (finite vec3 expected, got NaN, inf or a huge component)");
    p->position = v;
  } else if (strcmp(key, "weight") == 0) {
    lua_Number w = lua_tonumber(L, 3);
    if (lua_type(L, 3) != LUA_TNUMBER || !(w >= 0 && w <= 1))
      return ikl_fielderror(L, "ik.pole", "weight", "number in [0, 1]", 3);
    p->weight = (ik_real)w;
  } else {
    return luaL_error(L, "ik.pole: no field '%s' (fields: position, weight)", key);
  }
  return 0;
}

static int pole_tostring(lua_State *L) {
  ikl_pole *p = (ikl_pole *)luaL_checkudata(L, 1, IKL_POLE);
  if (p->closed) {
    lua_pushliteral(L, "ik.pole (closed)");
  } else {
    lua_pushfstring(L, "ik.pole(position = vec3(%s, %s, %s), weight = %s)",
                    ikl_pushnumstr(L, (lua_Number)p->position.x),
                    ikl_pushnumstr(L, (lua_Number)p->position.y),
                    ikl_pushnumstr(L, (lua_Number)p->position.z), ikl_pushnumstr(L, (lua_Number)p->weight));
  }
  return 1;
}

static const luaL_Reg meth[] = {{"close", pole_close}, {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", pole_index},       {"__newindex", pole_newindex},
                                    {"__tostring", pole_tostring}, {"__gc", pole_close},
                                    {"__close", pole_close},       {NULL, NULL}};

void ikl_open_pole(lua_State *L) {
  ikl_createmeta(L, IKL_POLE, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, pole_new);
  lua_setfield(L, -2, "pole");
}
