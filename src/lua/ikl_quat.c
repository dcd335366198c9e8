/***
 * Rotations: `ik.quat`, a unit quaternion value type (read-only fields x, y, z, w; w is
 * the scalar part). `q * r` applies r first, then q; `q * v` rotates a vector; `q == r`
 * is true for q and -q, which are the same rotation. Angles are in radians.
 * @classmod ik.quat
 */
#include "ikl.h"

static ik_quat *check(lua_State *L, int arg) { return (ik_quat *)luaL_checkudata(L, arg, IKL_QUAT); }

void ikl_pushquat(lua_State *L, ik_quat q) {
  ik_quat *u = (ik_quat *)ikl_newuserdata0(L, sizeof *u);
  *u = q;
  luaL_setmetatable(L, IKL_QUAT);
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
    ik_real x = ikl_checkreal(L, 1), y = ikl_checkreal(L, 2), z = ikl_checkreal(L, 3), w = ikl_checkreal(L, 4);
    ikl_pushquat(L, unit(ik_quat_make(x, y, z, w)));
  }
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
 * @treturn ik.quat
 * @usage local q = ik.quat.axis_angle({0, 1, 0}, math.pi / 2)
 * local v = q * ik.vec3(0, 0, 1)   -- +Z turned a quarter about +Y is +X
 * assert(math.abs(v.x - 1) < 1e-6)   -- float builds (ik.real == "float") round more */
static int quat_axis_angle(lua_State *L) {
  ikl_pushquat(L, ik_quat_axis_angle(ikl_checkvec3(L, 1), ikl_checkreal(L, 2)));
  return 1;
}

/*** The minimal rotation turning direction a into direction b (no twist added).
 * Opposite vectors give a half turn; a zero vector gives identity.
 * @function ik.quat.from_to
 * @tparam vec3 a
 * @tparam vec3 b
 * @treturn ik.quat */
static int quat_from_to(lua_State *L) {
  ikl_pushquat(L, ik_quat_from_to(ikl_checkvec3(L, 1), ikl_checkvec3(L, 2)));
  return 1;
}

/*** The rotation taking +Z to `forward` and +Y as near `up` as it can.
 * @function ik.quat.look_rotation
 * @tparam vec3 forward
 * @tparam[opt={0,1,0}] vec3 up
 * @treturn ik.quat */
static int quat_look_rotation(lua_State *L) {
  ik_vec3 up = lua_isnoneornil(L, 2) ? ik_vec3_make(0, 1, 0) : ikl_checkvec3(L, 2);
  ikl_pushquat(L, ik_quat_look_rotation(ikl_checkvec3(L, 1), up));
  return 1;
}

/*** Rotation from Euler angles in radians, applied roll (z) first, then pitch (x), then
 * yaw (y): `q = qy * qx * qz`, the usual order for a +Y-up world.
 * @function ik.quat.euler
 * @tparam number x pitch
 * @tparam number y yaw
 * @tparam number z roll
 * @treturn ik.quat */
static int quat_euler(lua_State *L) {
  ik_quat qx = ik_quat_axis_angle(ik_vec3_make(1, 0, 0), ikl_checkreal(L, 1));
  ik_quat qy = ik_quat_axis_angle(ik_vec3_make(0, 1, 0), ikl_checkreal(L, 2));
  ik_quat qz = ik_quat_axis_angle(ik_vec3_make(0, 0, 1), ikl_checkreal(L, 3));
  ikl_pushquat(L, ik_quat_normalize(ik_quat_mul(qy, ik_quat_mul(qx, qz))));
  return 1;
}

/*** The inverse rotation.
 * @function inverse
 * @treturn ik.quat */
static int quat_inverse(lua_State *L) {
  ikl_pushquat(L, ik_quat_inverse(*check(L, 1)));
  return 1;
}

/*** Unit length (identity for zero).
 * @function normalized
 * @treturn ik.quat */
static int quat_normalized(lua_State *L) {
  ikl_pushquat(L, ik_quat_normalize(*check(L, 1)));
  return 1;
}

/*** Spherical interpolation along the shortest path.
 * @function slerp
 * @tparam quat r
 * @tparam number t
 * @treturn ik.quat */
static int quat_slerp(lua_State *L) {
  ikl_pushquat(L, ik_quat_slerp(*check(L, 1), ik_quat_normalize(ikl_checkquat(L, 2)), ikl_checkreal(L, 3)));
  return 1;
}

/*** Angle in radians of the rotation from self to r, in [0, pi].
 * @function angle_to
 * @tparam quat r
 * @treturn number */
static int quat_angle_to(lua_State *L) {
  lua_pushnumber(L, (lua_Number)ik_quat_angle_between(*check(L, 1), ik_quat_normalize(ikl_checkquat(L, 2))));
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
  ik_quat q = *check(L, 1);
  ik_quat r;
  if (luaL_testudata(L, 2, IKL_QUAT)) {
    r = *(ik_quat *)lua_touserdata(L, 2);
    ikl_pushquat(L, ik_quat_normalize(ik_quat_mul(q, r)));
  } else {
    ik_vec3 v;
    if (!ikl_tovec3(L, 2, &v)) return ikl_typeerror(L, 2, "quat or vec3");
    ikl_pushvec3(L, ik_quat_rotate(q, ikl_checkvec3(L, 2)));
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
      case 'x': lua_pushnumber(L, (lua_Number)q->x); return 1;
      case 'y': lua_pushnumber(L, (lua_Number)q->y); return 1;
      case 'z': lua_pushnumber(L, (lua_Number)q->z); return 1;
      case 'w': lua_pushnumber(L, (lua_Number)q->w); return 1;
      default: break;
    }
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int quat_newindex(lua_State *L) {
  check(L, 1);
  return luaL_error(L, "ik.quat is a value: its fields are read-only (make a new one with ik.quat(x, y, z, w))");
}

static const luaL_Reg meth[] = {{"inverse", quat_inverse}, {"normalized", quat_normalized},
                                {"slerp", quat_slerp},     {"angle_to", quat_angle_to},
                                {"unpack", quat_unpack},   {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", quat_index}, {"__newindex", quat_newindex},
                                    {"__mul", quat_mul},     {"__eq", quat_eq},
                                    {"__tostring", quat_tostring}, {NULL, NULL}};

static const luaL_Reg ctors[] = {{"identity", quat_identity},
                                 {"axis_angle", quat_axis_angle},
                                 {"from_to", quat_from_to},
                                 {"look_rotation", quat_look_rotation},
                                 {"euler", quat_euler},
                                 {NULL, NULL}};

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
