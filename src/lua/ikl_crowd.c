/***
 * Crowds: `ik.crowd`, many characters of one `ik.crowd_template` solved in one call.
 *
 * `ik.crowd{ template = t, count = 1000, capacity = 1200, threads = 2, ground = g }`
 * holds `capacity` slots (default `count`), the first `count` used, every character at
 * the template's pose. Each frame the host writes roots and targets into the crowd's
 * buffers (`c:buffer("roots")`, `"targets"`: ik.crowd_buffer, one call per buffer, or
 * LuaJIT's FFI through `require("ik.crowd")`), calls `c:solve(dt)` and reads the
 * `"rotations"` and `"positions"` buffers. Every character ends bit for bit where
 * skeletons, chains, nodes and feet solved in ik.batch calls would leave it
 * (docs/crowd.md). Host-only: rig scripts have no ik.crowd.
 * @classmod ik.crowd
 */
#include <stdint.h>
#include <string.h>

#include "ik_crowd.h"
#include "ikl.h"

#define OWNER IKL_CROWD

static const char *const spec_keys[] = {"template", "count", "capacity", "threads", "ground", NULL};
static const char *const view_names[] = {"roots", "targets", "rotations", "positions", NULL};

static ikl_crowd *check(lua_State *L, int arg) { return (ikl_crowd *)luaL_checkudata(L, arg, IKL_CROWD); }

ikl_crowd *ikl_checkcrowd(lua_State *L, int arg) {
  ikl_crowd *c = check(L, arg);
  if (c->closed) luaL_error(L, "attempt to use a closed ik.crowd");
  return c;
}

/* The slot of instance argument `arg` (1-based), used or not. */
static int check_slot(lua_State *L, ikl_crowd *c, int arg) {
  return ikl_checkindex(L, arg, ik_crowd_capacity(c->c));
}

static int check_used(lua_State *L, ikl_crowd *c, int arg) {
  const int slot = check_slot(L, c, arg);
  if (!ik_crowd_used(c->c, slot))
    luaL_argerror(L, arg, lua_pushfstring(L, "instance %d is not in the crowd", slot + 1));
  return slot;
}

/* An integer field of the spec at 1 in [lo, hi], or def when nil. */
static int int_field(lua_State *L, const char *name, int def, int lo, int hi, const char *expected) {
  const ik_real v = ikl_optfield_real(L, 1, OWNER, name, (ik_real)def, (ik_real)lo, (ik_real)hi, expected);
  if (v != (ik_real)(int)v) {
    lua_getfield(L, 1, name);
    ikl_fielderror(L, OWNER, name, expected, -1);
  }
  return (int)v;
}

/*** A crowd.
 * @function ik.crowd
 * @tparam table spec `template`, `count` (0..capacity), `capacity` (default count, or
 * 1 for none; 1..2^20), `threads` (1..64, default 1), `ground` (an ik.ground: plane,
 * heightfield or mesh; needed when the template has feet)
 * @treturn ik.crowd */
static int crowd_new(lua_State *L) {
  const ik_crowd_template *t;
  const ik_ground *ground = NULL;
  ikl_crowd *c;
  ik_error err;
  ik_status st;
  int count, capacity, threads, i;
  size_t size, staged;
  luaL_checktype(L, 1, LUA_TTABLE);
  ikl_check_keys(L, 1, OWNER, spec_keys, "template, count, capacity, threads, ground");
  lua_getfield(L, 1, "template");
  if (!luaL_testudata(L, -1, IKL_CROWD_TEMPLATE))
    ikl_fielderror(L, OWNER, "template", IKL_CROWD_TEMPLATE, -1);
  t = ikl_checkcrowdtemplate(L, -1);
  count = int_field(L, "count", 0, 0, IK_CROWD_MAX_CAPACITY, "integer in 0..1048576");
  capacity =
      int_field(L, "capacity", count > 0 ? count : 1, 1, IK_CROWD_MAX_CAPACITY, "integer in 1..1048576");
  threads = int_field(L, "threads", 1, 1, IK_POOL_MAX_THREADS, "integer in 1..64");
  if (count > capacity) luaL_error(L, OWNER ": count %d is more than the capacity %d", count, capacity);
  lua_getfield(L, 1, "ground");
  if (!lua_isnil(L, -1))
    ground = ikl_checkground(L, lua_gettop(L));
  else if (ik_crowd_template_feet(t))
    luaL_error(L, OWNER ": bad field 'ground' (ik.ground expected: the template has feet, got nil)");
  size = ik_crowd_size(t, capacity);
  staged = (size_t)capacity *
           (size_t)(3 * ik_crowd_template_targets(t) > 7 ? 3 * ik_crowd_template_targets(t) : 7);
  c = (ikl_crowd *)ikl_newuserdata(L, sizeof(ikl_crowd) + 16 + size + staged * sizeof(ik_real));
  memset(c, 0, sizeof *c);
  c->closed = 1; /* until started */
  luaL_setmetatable(L, IKL_CROWD);
  /* The uservalue keeps the template and the ground alive while the crowd is. */
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, 3);
  lua_setfield(L, -2, "ground");
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "template");
  ikl_setuservalue(L, -2);
  st = ik_crowd_init((void *)(((uintptr_t)(c + 1) + 15) & ~(uintptr_t)15), size, t, capacity, ground, &c->c,
                     &err);
  c->staged = (ik_real *)(void *)((((uintptr_t)(c + 1) + 15) & ~(uintptr_t)15) + size);
  if (st != IK_OK) return luaL_error(L, OWNER ": bad field '%s' (%s)", err.field, ik_status_message(st));
  if (ik_crowd_start(c->c, threads) != IK_OK)
    return luaL_error(L, OWNER ": could not start %d threads", threads);
  c->closed = 0;
  for (i = 0; i < count; i++) ik_crowd_add(c->c);
  return 1;
}

/*** One frame: every character solved.
 * @function solve
 * @tparam[opt=0] number dt seconds since the last frame (>= 0): the feet's springs
 * @treturn integer how many chains reached */
static int crowd_solve(lua_State *L) {
  ikl_crowd *c = ikl_checkcrowd(L, 1);
  lua_Number dt = 0;
  ik_error err;
  ik_status st;
  int reached;
  /* checked and worded as ik.batch's dt */
  if (!lua_isnoneornil(L, 2)) {
    ikl_checkreal(L, 2);
    dt = lua_tonumber(L, 2);
  }
  if (!(dt >= 0))
    luaL_argerror(L, 2, lua_pushfstring(L, "non-negative number expected, got %s", ikl_describe(L, 2)));
  st = ik_crowd_solve(c->c, (ik_real)dt, &reached, &err);
  if (st != IK_OK)
    return luaL_error(L, OWNER ": %s of instance %d: %s", err.field, err.index + 1,
                      strcmp(err.field, "chains") == 0 ? "a chain could not be read or turned"
                      : st == IK_E_PARAMETER           ? "a zero rotation"
                                                       : ik_status_message(st));
  lua_pushinteger(L, reached);
  return 1;
}

/*** A new character in the first free slot, at the template's pose.
 * @function add
 * @treturn ?integer its instance index, or nil when the crowd is full */
static int crowd_add(lua_State *L) {
  const int slot = ik_crowd_add(ikl_checkcrowd(L, 1)->c);
  if (slot < 0) return 0;
  lua_pushinteger(L, slot + 1);
  return 1;
}

/*** Takes a character out: its slot is free for a later add.
 * @function remove
 * @tparam integer i */
static int crowd_remove(lua_State *L) {
  ikl_crowd *c = ikl_checkcrowd(L, 1);
  ik_crowd_remove(c->c, check_used(L, c, 2));
  return 0;
}

/*** Whether slot i holds a character.
 * @function used
 * @tparam integer i
 * @treturn boolean */
static int crowd_used(lua_State *L) {
  ikl_crowd *c = ikl_checkcrowd(L, 1);
  lua_pushboolean(L, ik_crowd_used(c->c, check_slot(L, c, 2)));
  return 1;
}

/*** What the last solve said of a chain of a character.
 * @function result
 * @tparam integer i the instance
 * @tparam integer chain the template's chain (1-based)
 * @treturn boolean reached
 * @treturn number distance from the tip to the target
 * @treturn boolean whether the chain's foot was planted */
static int crowd_result(lua_State *L) {
  ikl_crowd *c = ikl_checkcrowd(L, 1);
  const int slot = check_used(L, c, 2);
  const int chain = ikl_checkindex(L, 3, ik_crowd_template_chains(ik_crowd_template_of(c->c)));
  ik_result r;
  int grounded;
  ik_crowd_result(c->c, slot, chain, &r, &grounded);
  lua_pushboolean(L, r.reached);
  lua_pushnumber(L, (lua_Number)r.distance);
  lua_pushboolean(L, grounded);
  return 3;
}

/*** A buffer of the crowd: "roots", "targets", "rotations" or "positions".
 * @function buffer
 * @tparam string name
 * @treturn ik.crowd_buffer */
static int crowd_buffer(lua_State *L) {
  ikl_crowd *c = ikl_checkcrowd(L, 1);
  int v;
  if (lua_type(L, 2) != LUA_TSTRING) return ikl_typeerror(L, 2, "string"); /* worded alike on every Lua */
  v = luaL_checkoption(L, 2, NULL, view_names);
  if (!ik_crowd_get_view(c->c, v).data)
    return luaL_argerror(L, 2, "the template has no host targets: no 'targets' buffer");
  ikl_push_crowd_buffer(L, 1, v, view_names[v]);
  return 1;
}

/***
 * Closes the crowd and stops its threads: any later use, of it or its buffers, raises.
 * Its memory stays until the crowd and every buffer of it are collected, so an FFI
 * pointer taken from a buffer never points at freed memory while that buffer lives.
 * @function close
 */
static int crowd_close(lua_State *L) {
  ikl_crowd *c = check(L, 1);
  if (!c->closed && c->c) ik_crowd_stop(c->c);
  c->closed = 1;
  return 0;
}

static int crowd_gc(lua_State *L) {
  ikl_crowd *c = check(L, 1);
  if (c->c && ik_crowd_threads(c->c)) ik_crowd_stop(c->c); /* also when init failed after start */
  c->closed = 1;
  return 0;
}

static int crowd_len(lua_State *L) {
  lua_pushinteger(L, ik_crowd_count(ikl_checkcrowd(L, 1)->c));
  return 1;
}

static int crowd_tostring(lua_State *L) {
  ikl_crowd *c = check(L, 1);
  if (c->closed)
    lua_pushliteral(L, "ik.crowd (closed)");
  else
    lua_pushfstring(L, "ik.crowd(%d of %d, %d threads)", ik_crowd_count(c->c), ik_crowd_capacity(c->c),
                    ik_crowd_threads(c->c));
  return 1;
}

/* `capacity`, `threads`, `template` (read-only), then methods (the upvalue). */
static int crowd_index(lua_State *L) {
  ikl_crowd *c = ikl_checkcrowd(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "capacity") == 0) {
    lua_pushinteger(L, ik_crowd_capacity(c->c));
    return 1;
  }
  if (key && strcmp(key, "threads") == 0) {
    lua_pushinteger(L, ik_crowd_threads(c->c));
    return 1;
  }
  if (key && strcmp(key, "template") == 0) {
    ikl_getuservalue(L, 1);
    lua_getfield(L, -1, "template");
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static const luaL_Reg meth[] = {
    {"solve", crowd_solve},   {"add", crowd_add},       {"remove", crowd_remove}, {"used", crowd_used},
    {"result", crowd_result}, {"buffer", crowd_buffer}, {"close", crowd_close},   {NULL, NULL}};
static const luaL_Reg metameth[] = {{"__index", crowd_index},       {"__len", crowd_len},
                                    {"__tostring", crowd_tostring}, {"__gc", crowd_gc},
                                    {"__close", crowd_close},       {NULL, NULL}};

void ikl_open_crowd(lua_State *L) {
  ikl_createmeta(L, IKL_CROWD, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, crowd_new);
  lua_setfield(L, -2, "crowd");
}
