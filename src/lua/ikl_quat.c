/***
 * Rotations: `ik.quat`, a unit quaternion value type (read-only fields x, y, z, w; w is
 * the scalar part). `q * r` applies r first, then q; `q * v` rotates a vector; `q == r`
 * is true for q and -q, which are the same rotation. Angles are in radians.
 *
 * As for ik.vec3, every function returning a new quaternion (and `get_rotation` of bones
 * and nodes) takes an optional last argument `out`, an ik.quat written and returned
 * instead, so per-frame code allocates nothing; `out` may be an operand.
 * @classmod ik.quat
 */
#include "ikl.h"

static ik_quat *check(lua_State *L, int arg) { return (ik_quat *)luaL_checkudata(L, arg, IKL_QUAT); }

void ikl_pushquat(lua_State *L, ik_quat q) {
  ik_quat *u = (ik_quat *)ikl_newuserdata0(L, sizeof *u);
  *u = q;
  luaL_setmetatable(L, IKL_QUAT);
}

ik_quat *ikl_outquat(lua_State *L, int arg) {
  ik_quat *out;
  if (lua_isnoneornil(L, arg)) {
    ikl_pushquat(L, ik_quat_identity());
    return (ik_quat *)lua_touserdata(L, -1);
  }
  out = (ik_quat *)luaL_testudata(L, arg, IKL_QUAT);
  if (!out) ikl_typeerror(L, arg, "ik.quat");
  lua_pushvalue(L, arg);
  return out;
}

/* The result written where the caller asked (argument `arg`, or a new quaternion). */
static int result(lua_State *L, int arg, ik_quat q) {
  *ikl_outquat(L, arg) = q;
  return 1;
}

/***
 * Makes a quaternion from its components (normalised; all zero gives identity). With
 * no arguments, the identity; one quat-like argument is copied.
 * @function ik.quat
 * @tparam number x
 * @tparam number y
 * @tparam number z
 * @tparam number w
 * @treturn ik.quat
 * @usage local q = ik.quat(0, 0, 0, 1)
 * assert(q == ik.quat.identity())
 */
/* Normalised, but left as given when already unit to rounding: normalising a unit
 * quaternion again can move its last bits, and then ik.quat(q:unpack()) ~= q. */
static ik_quat unit(ik_quat q) {
  ik_real len2 = ik_quat_dot(q, q);
  return ik_fabs(len2 - 1) <= 4 * IK_REAL_EPSILON ? q : ik_quat_normalize(q);
}

static int quat_new(lua_State *L) {
  lua_remove(L, 1); /* the ik.quat table (called through __call) */
  if (lua_gettop(L) == 0) {
    ikl_pushquat(L, ik_quat_identity());
  } else if (lua_gettop(L) == 1) {
    ikl_pushquat(L, unit(ikl_checkquat(L, 1)));
  } else {
    ik_real x = ikl_checkreal(L, 1), y = ikl_checkreal(L, 2), z = ikl_checkreal(L, 3),
            w = ikl_checkreal(L, 4);
    ikl_pushquat(L, unit(ik_quat_make(x, y, z, w)));
  }
  return 1;
}

/***
 * Overwrites the quaternion: with four numbers (normalised as `ik.quat` does; all zero
 * gives identity), with a quat-like's components, or with none (identity). For scratch
 * rotations made once and reused every frame.
 * @function set
 * @tparam[opt] number|quat x or a quat-like to copy
 * @tparam[opt] number y
 * @tparam[opt] number z
 * @tparam[opt] number w
 * @treturn ik.quat the quaternion itself
 * @usage local q = ik.quat()
 * q:set(ik.quat.axis_angle({0, 1, 0}, 1))
 * assert(math.abs(q:angle_to(ik.quat()) - 1) < 1e-6)
 * assert(q:set() == ik.quat.identity())
 */
static int quat_set(lua_State *L) {
  ik_quat *q = check(L, 1), r;
  int n = lua_gettop(L);
  if (n == 1) {
    r = ik_quat_identity();
  } else if (n == 2) {
    r = unit(ikl_checkquat(L, 2));
  } else {
    ik_real x = ikl_checkreal(L, 2), y = ikl_checkreal(L, 3), z = ikl_checkreal(L, 4),
            w = ikl_checkreal(L, 5);
    r = unit(ik_quat_make(x, y, z, w));
  }
  *q = r;
  lua_settop(L, 1);
  return 1;
}

/*** The identity rotation.
 * @function ik.quat.identity
 * @treturn ik.quat */
static int quat_identity(lua_State *L) {
  ikl_pushquat(L, ik_quat_identity());
  return 1;
}

/*** Rotation by `radians` about `axis` (any length; a zero axis gives identity).
 * @function ik.quat.axis_angle
 * @tparam vec3 axis
 * @tparam number radians
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat
 * @usage local q = ik.quat.axis_angle({0, 1, 0}, math.pi / 2)
 * local v = q * ik.vec3(0, 0, 1)   -- +Z turned a quarter about +Y is +X
 * assert(math.abs(v.x - 1) < 1e-6)   -- float builds (ik.real == "float") round more */
static int quat_axis_angle(lua_State *L) {
  const ik_vec3 axis = ikl_checkvec3(L, 1); /* in order: C leaves the order of arguments open */
  return result(L, 3, ik_quat_axis_angle(axis, ikl_checkreal(L, 2)));
}

/*** The minimal rotation turning direction a into direction b (no twist added).
 * Opposite vectors give a half turn; a zero vector gives identity.
 * @function ik.quat.from_to
 * @tparam vec3 a
 * @tparam vec3 b
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int quat_from_to(lua_State *L) {
  const ik_vec3 a = ikl_checkvec3(L, 1);
  return result(L, 3, ik_quat_from_to(a, ikl_checkvec3(L, 2)));
}

/*** The rotation taking +Z to `forward` and +Y as near `up` as it can.
 * @function ik.quat.look_rotation
 * @tparam vec3 forward
 * @tparam[opt={0,1,0}] vec3 up
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int quat_look_rotation(lua_State *L) {
  const ik_vec3 forward = ikl_checkvec3(L, 1);
  const ik_vec3 up = lua_isnoneornil(L, 2) ? ik_vec3_make(0, 1, 0) : ikl_checkvec3(L, 2);
  return result(L, 3, ik_quat_look_rotation(forward, up));
}

/*** Rotation from Euler angles in radians, applied roll (z) first, then pitch (x), then
 * yaw (y): `q = qy * qx * qz`, the usual order for a +Y-up world.
 * @function ik.quat.euler
 * @tparam number x pitch
 * @tparam number y yaw
 * @tparam number z roll
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int quat_euler(lua_State *L) {
  ik_quat qx = ik_quat_axis_angle(ik_vec3_make(1, 0, 0), ikl_checkreal(L, 1));
  ik_quat qy = ik_quat_axis_angle(ik_vec3_make(0, 1, 0), ikl_checkreal(L, 2));
  ik_quat qz = ik_quat_axis_angle(ik_vec3_make(0, 0, 1), ikl_checkreal(L, 3));
  return result(L, 4, ik_quat_normalize(ik_quat_mul(qy, ik_quat_mul(qx, qz))));
}

/*** The inverse rotation.
 * @function inverse
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int quat_inverse(lua_State *L) { return result(L, 2, ik_quat_inverse(*check(L, 1))); }

/*** Unit length (identity for zero).
 * @function normalized
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int quat_normalized(lua_State *L) { return result(L, 2, ik_quat_normalize(*check(L, 1))); }

/*** Spherical interpolation along the shortest path.
 * @function slerp
 * @tparam quat r
 * @tparam number t
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int quat_slerp(lua_State *L) {
  const ik_quat q = *check(L, 1), r = ik_quat_normalize(ikl_checkquat(L, 2));
  return result(L, 4, ik_quat_slerp(q, r, ikl_checkreal(L, 3)));
}

/*** The composition `q * r` (r applied first).
 * @function mul
 * @tparam quat r
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat
 * @usage local q = ik.quat.axis_angle({0, 0, 1}, 0.5)
 * local turned = ik.quat()
 * q:mul(q, turned)   -- twice the turn, nothing allocated
 * assert(math.abs(turned:angle_to(ik.quat()) - 1) < 1e-6) */
static int quat_mul_method(lua_State *L) {
  const ik_quat q = *check(L, 1);
  const ik_quat *r = (const ik_quat *)luaL_testudata(L, 2, IKL_QUAT);
  /* an ik.quat is unit already: normalising it again could move its last bits, and
   * q:mul(r) must be q * r exactly */
  ik_quat rr = r ? *r : ik_quat_normalize(ikl_checkquat(L, 2));
  return result(L, 3, ik_quat_normalize(ik_quat_mul(q, rr)));
}

/*** The vector turned, as `q * v`.
 * @function rotate
 * @tparam vec3 v
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3
 * @usage local v = ik.vec3(0, 0, 1)
 * ik.quat.axis_angle({0, 1, 0}, math.pi / 2):rotate(v, v)   -- in place
 * assert(math.abs(v.x - 1) < 1e-6) */
static int quat_rotate(lua_State *L) {
  const ik_quat q = *check(L, 1);
  ik_vec3 v = ik_quat_rotate(q, ikl_checkvec3(L, 2));
  *ikl_outvec3(L, 3) = v;
  return 1;
}

/*** Angle in radians of the rotation from self to r, in [0, pi].
 * @function angle_to
 * @tparam quat r
 * @treturn number */
static int quat_angle_to(lua_State *L) {
  const ik_quat q = *check(L, 1);
  lua_pushnumber(L, (lua_Number)ik_quat_angle_between(q, ik_quat_normalize(ikl_checkquat(L, 2))));
  return 1;
}

/*** The components.
 * @function unpack
 * @treturn number x
 * @treturn number y
 * @treturn number z
 * @treturn number w */
static int quat_unpack(lua_State *L) {
  ik_quat q = *check(L, 1);
  lua_pushnumber(L, (lua_Number)q.x);
  lua_pushnumber(L, (lua_Number)q.y);
  lua_pushnumber(L, (lua_Number)q.z);
  lua_pushnumber(L, (lua_Number)q.w);
  return 4;
}

/* q * r composes; q * v rotates. */
static int quat_mul(lua_State *L) {
  const ik_quat *q = (const ik_quat *)luaL_testudata(L, 1, IKL_QUAT);
  ik_quat r;
  /* Operands checked with ikl_op*: messages name the metamethod alike on every Lua. */
  if (!q)
    return ikl_operror(L, 1, "__mul", lua_pushfstring(L, "ik.quat expected, got %s", ikl_typename(L, 1)));
  if (luaL_testudata(L, 2, IKL_QUAT)) {
    r = *(ik_quat *)lua_touserdata(L, 2);
    ikl_pushquat(L, ik_quat_normalize(ik_quat_mul(*q, r)));
  } else {
    ik_vec3 v;
    if (!ikl_tovec3(L, 2, &v))
      return ikl_operror(L, 2, "__mul",
                         lua_pushfstring(L, "quat or vec3 expected, got %s", ikl_typename(L, 2)));
    ikl_pushvec3(L, ik_quat_rotate(*q, ikl_opvec3(L, 2, "__mul")));
  }
  return 1;
}

/* 5.4 calls __eq for any two userdata, so the other operand may be of another type:
 * then false, never an error. */
static int quat_eq(lua_State *L) {
  const ik_quat *pa = (const ik_quat *)luaL_testudata(L, 1, IKL_QUAT);
  const ik_quat *pb = (const ik_quat *)luaL_testudata(L, 2, IKL_QUAT);
  int same, negated;
  if (!pa || !pb) {
    lua_pushboolean(L, 0);
    return 1;
  }
  same = pa->x == pb->x && pa->y == pb->y && pa->z == pb->z && pa->w == pb->w;
  negated = pa->x == -pb->x && pa->y == -pb->y && pa->z == -pb->z && pa->w == -pb->w;
  lua_pushboolean(L, same || negated);
  return 1;
}

static int quat_tostring(lua_State *L) {
  ik_quat q = *check(L, 1);
  lua_pushfstring(L, "quat(%s, %s, %s, %s)", ikl_pushnumstr(L, (lua_Number)q.x),
                  ikl_pushnumstr(L, (lua_Number)q.y), ikl_pushnumstr(L, (lua_Number)q.z),
                  ikl_pushnumstr(L, (lua_Number)q.w));
  return 1;
}

static int quat_index(lua_State *L) {
  const ik_quat *q = check(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && key[0] && !key[1]) {
    switch (key[0]) {
      case 'x':
        lua_pushnumber(L, (lua_Number)q->x);
        return 1;
      case 'y':
        lua_pushnumber(L, (lua_Number)q->y);
        return 1;
      case 'z':
        lua_pushnumber(L, (lua_Number)q->z);
        return 1;
      case 'w':
        lua_pushnumber(L, (lua_Number)q->w);
        return 1;
      default:
        break;
    }
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int quat_newindex(lua_State *L) {
  check(L, 1);
  return ikl_readonly(L, IKL_QUAT, "a value: make a new one with ik.quat(x, y, z, w)");
}

static const luaL_Reg meth[] = {
    {"inverse", quat_inverse},   {"normalized", quat_normalized}, {"slerp", quat_slerp},
    {"angle_to", quat_angle_to}, {"unpack", quat_unpack},         {"set", quat_set},
    {"mul", quat_mul_method},    {"rotate", quat_rotate},         {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", quat_index},       {"__newindex", quat_newindex},
                                    {"__mul", quat_mul},           {"__eq", quat_eq},
                                    {"__tostring", quat_tostring}, {NULL, NULL}};

static const luaL_Reg ctors[] = {{"identity", quat_identity}, {"axis_angle", quat_axis_angle},
                                 {"from_to", quat_from_to},   {"look_rotation", quat_look_rotation},
                                 {"euler", quat_euler},       {NULL, NULL}};

void ikl_open_quat(lua_State *L) {
  ikl_createmeta(L, IKL_QUAT, meth, metameth);
  lua_pop(L, 1);
  luaL_newlib(L, ctors); /* ik.quat: callable, with the named constructors */
  lua_newtable(L);
  lua_pushcfunction(L, quat_new);
  lua_setfield(L, -2, "__call");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "quat");
}
