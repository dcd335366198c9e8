/***
 * Joint constraints: `ik.cone` and `ik.hinge`, immutable values a chain copies when
 * given one with `chain:set_constraint(i, con)`. Constraint i limits bone i (joint i to
 * i + 1) relative to bone i - 1; bone 1 is measured against the chain's
 * `base_direction`, or left free without one.
 * @classmod ik.constraint
 */
#include <string.h>

#include "ikl.h"

const ik_constraint *ikl_testconstraint(lua_State *L, int idx) {
  ikl_constraint *c = (ikl_constraint *)luaL_testudata(L, idx, IKL_CONE);
  if (!c) c = (ikl_constraint *)luaL_testudata(L, idx, IKL_HINGE);
  return c ? &c->c : NULL;
}

static const ik_constraint *check(lua_State *L, int arg) {
  const ik_constraint *c = ikl_testconstraint(L, arg);
  if (!c) ikl_typeerror(L, arg, "ik.cone or ik.hinge");
  return c;
}

static void push_constraint(lua_State *L, const ik_constraint *c) {
  ikl_constraint *u = (ikl_constraint *)ikl_newuserdata0(L, sizeof *u);
  u->c = *c;
  luaL_setmetatable(L, c->type == IK_CONSTRAINT_CONE ? IKL_CONE : IKL_HINGE);
}

/***
 * A cone: the bone stays within `angle` radians of its parent bone.
 * @function ik.cone
 * @tparam table spec `angle` (radians in [0, pi], required)
 * @treturn ik.cone
 * @usage local shoulder = ik.cone{ angle = math.rad(80) }
 * assert(shoulder.kind == "cone")
 */
static int cone_new(lua_State *L) {
  static const char *const keys[] = {"angle", NULL};
  ik_constraint c;
  memset(&c, 0, sizeof c);
  luaL_checktype(L, 1, LUA_TTABLE);
  ikl_check_keys(L, 1, "ik.cone", keys, "angle");
  lua_getfield(L, 1, "angle");
  if (lua_isnil(L, -1))
    return luaL_error(L, "ik.cone: bad field 'angle' (number in [0, pi] expected, got nil)");
  lua_pop(L, 1);
  c.type = IK_CONSTRAINT_CONE;
  c.angle = ikl_optfield_real(L, 1, "ik.cone", "angle", 0, 0, IK_PI, "number in [0, pi]");
  push_constraint(L, &c);
  return 1;
}

/***
 * A hinge: the bone turns only about `axis`, between `min` and `max` radians from
 * straight on (right-hand rule about the axis). The axis is given in the chain's rest
 * pose (its positions when made) and turns along with the parent bone.
 * @function ik.hinge
 * @tparam table spec `axis` (vec3, non-zero, required), `min` and `max` (radians,
 * -pi <= min <= max <= pi, defaults -pi and pi)
 * @treturn ik.hinge
 * @usage local knee = ik.hinge{ axis = {1, 0, 0}, min = 0, max = math.rad(150) }
 * assert(knee.kind == "hinge" and knee.max > knee.min)
 */
static int hinge_new(lua_State *L) {
  static const char *const keys[] = {"axis", "min", "max", NULL};
  ik_constraint c;
  memset(&c, 0, sizeof c);
  luaL_checktype(L, 1, LUA_TTABLE);
  ikl_check_keys(L, 1, "ik.hinge", keys, "axis, min, max");
  c.type = IK_CONSTRAINT_HINGE;
  if (!ikl_optfield_vec3(L, 1, "ik.hinge", "axis", &c.axis))
    return luaL_error(L, "ik.hinge: bad field 'axis' (vec3 expected, got nil)");
  if (ik_vec3_len2(ik_vec3_normalize(c.axis)) == 0)
    return luaL_error(L, "ik.hinge: bad field 'axis' (non-zero vec3 expected, got the zero vector)");
  c.min = ikl_optfield_real(L, 1, "ik.hinge", "min", -IK_PI, -IK_PI, IK_PI, "number in [-pi, pi]");
  c.max = ikl_optfield_real(L, 1, "ik.hinge", "max", IK_PI, -IK_PI, IK_PI, "number in [-pi, pi]");
  if (c.min > c.max)
    return luaL_error(L, "ik.hinge: bad field 'min' (at most max expected, got %s > %s)",
                      ikl_pushnumstr(L, (lua_Number)c.min), ikl_pushnumstr(L, (lua_Number)c.max));
  c.axis = ik_vec3_normalize(c.axis);
  push_constraint(L, &c);
  return 1;
}

static int constraint_index(lua_State *L) {
  const ik_constraint *c = check(L, 1);
  const char *key = lua_tostring(L, 2);
  if (!key) return 0;
  if (strcmp(key, "kind") == 0) {
    lua_pushstring(L, c->type == IK_CONSTRAINT_CONE ? "cone" : "hinge");
  } else if (c->type == IK_CONSTRAINT_CONE && strcmp(key, "angle") == 0) {
    lua_pushnumber(L, (lua_Number)c->angle);
  } else if (c->type == IK_CONSTRAINT_HINGE && strcmp(key, "axis") == 0) {
    ikl_pushvec3(L, c->axis);
  } else if (c->type == IK_CONSTRAINT_HINGE && strcmp(key, "min") == 0) {
    lua_pushnumber(L, (lua_Number)c->min);
  } else if (c->type == IK_CONSTRAINT_HINGE && strcmp(key, "max") == 0) {
    lua_pushnumber(L, (lua_Number)c->max);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int constraint_newindex(lua_State *L) {
  const ik_constraint *c = check(L, 1);
  return ikl_readonly(L, c->type == IK_CONSTRAINT_CONE ? IKL_CONE : IKL_HINGE,
                      "immutable: make a new one and set it on the chain again");
}

static int constraint_tostring(lua_State *L) {
  const ik_constraint *c = check(L, 1);
  if (c->type == IK_CONSTRAINT_CONE)
    lua_pushfstring(L, "ik.cone(angle = %s)", ikl_pushnumstr(L, (lua_Number)c->angle));
  else
    lua_pushfstring(L, "ik.hinge(axis = vec3(%s, %s, %s), min = %s, max = %s)",
                    ikl_pushnumstr(L, (lua_Number)c->axis.x), ikl_pushnumstr(L, (lua_Number)c->axis.y),
                    ikl_pushnumstr(L, (lua_Number)c->axis.z), ikl_pushnumstr(L, (lua_Number)c->min),
                    ikl_pushnumstr(L, (lua_Number)c->max));
  return 1;
}

/* Field by field: memcmp would see the padding after `type` (not copied by struct
 * assignment) and tell 0 from -0. The other operand may be of another type (5.4 calls
 * __eq for any two userdata): then false, never an error. */
static int constraint_eq(lua_State *L) {
  const ik_constraint *a = ikl_testconstraint(L, 1), *b = ikl_testconstraint(L, 2);
  int eq = a && b && a->type == b->type;
  if (eq && a->type == IK_CONSTRAINT_CONE) eq = a->angle == b->angle;
  if (eq && a->type == IK_CONSTRAINT_HINGE)
    eq = a->axis.x == b->axis.x && a->axis.y == b->axis.y && a->axis.z == b->axis.z && a->min == b->min &&
         a->max == b->max;
  lua_pushboolean(L, eq);
  return 1;
}

static const luaL_Reg meth[] = {{NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", constraint_index},
                                    {"__newindex", constraint_newindex},
                                    {"__tostring", constraint_tostring},
                                    {"__eq", constraint_eq},
                                    {NULL, NULL}};

void ikl_open_constraint(lua_State *L) {
  ikl_createmeta(L, IKL_CONE, meth, metameth);
  ikl_createmeta(L, IKL_HINGE, meth, metameth);
  lua_pop(L, 2);
  lua_pushcfunction(L, cone_new);
  lua_setfield(L, -2, "cone");
  lua_pushcfunction(L, hinge_new);
  lua_setfield(L, -2, "hinge");
}
