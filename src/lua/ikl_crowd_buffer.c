/***
 * Crowd buffers: `ik.crowd_buffer`, one of a crowd's flat arrays of numbers.
 *
 * `c:buffer(name)` gives the crowd's "roots" (7 numbers an instance: position x, y, z,
 * rotation x, y, z, w), "targets" (3 for each host-given target, in chain order),
 * "rotations" (4 a bone: local rotations) or "positions" (3 a bone: world positions),
 * instance after instance (`stride` numbers each). `b:set(t [, first])` moves a whole
 * table of numbers in, `b:get([t [, first [, count]]])` out, one call each; from LuaJIT,
 * `b:address()` and `b.type` let the FFI reach the numbers with no call at all (see
 * `require("ik.crowd")`). The buffer keeps its crowd alive; once the crowd is closed,
 * every call raises.
 * @classmod ik.crowd_buffer
 */
#include <stdint.h>
#include <string.h>

#include "ik_crowd.h"
#include "ikl.h"

#define OWNER IKL_CROWD_BUFFER
/* Values set leaves on the stack between pops: within what luaL_checkstack grows. */
#define STAGE_POP 32

typedef struct ikl_crowd_buffer {
  int view;
  const char *name; /* static */
} ikl_crowd_buffer;

static ikl_crowd_buffer *check(lua_State *L, int arg) {
  return (ikl_crowd_buffer *)luaL_checkudata(L, arg, IKL_CROWD_BUFFER);
}

/* The buffer at arg and its crowd's view, raising when the crowd is closed. */
static ik_crowd_view check_view(lua_State *L, int arg, ikl_crowd_buffer **out, ikl_crowd **crowd) {
  ikl_crowd_buffer *b = check(L, arg);
  ikl_crowd *c;
  ikl_getuservalue(L, arg);
  lua_rawgeti(L, -1, 1);
  c = (ikl_crowd *)lua_touserdata(L, -1);
  lua_pop(L, 2);
  if (c->closed) luaL_error(L, "attempt to use a buffer of a closed ik.crowd");
  if (out) *out = b;
  if (crowd) *crowd = c;
  return ik_crowd_get_view(c->c, b->view);
}

static int writable(int view) { return view == IK_CROWD_ROOTS || view == IK_CROWD_TARGETS; }

void ikl_push_crowd_buffer(lua_State *L, int crowd_idx, int view, const char *name) {
  ikl_crowd_buffer *b;
  crowd_idx = lua_absindex(L, crowd_idx);
  b = (ikl_crowd_buffer *)ikl_newuserdata(L, sizeof *b);
  b->view = view;
  b->name = name;
  luaL_setmetatable(L, IKL_CROWD_BUFFER);
  lua_createtable(L, 1, 0); /* a table: 5.1's environments must be */
  lua_pushvalue(L, crowd_idx);
  lua_rawseti(L, -2, 1);
  ikl_setuservalue(L, -2);
}

/* Whether the table at t has no metatable: lua_geti and lua_seti are then raw. */
static int plain_table(lua_State *L, int t) {
  if (!lua_getmetatable(L, t)) return 1;
  lua_pop(L, 1);
  return 0;
}

/* The first instance argument (1-based, default 1) as a slot. */
static int first_slot(lua_State *L, int arg, const ik_crowd_view *v) {
  return lua_isnoneornil(L, arg) ? 0 : ikl_checkindex(L, arg, v->capacity);
}

/*** Moves a table of numbers into the buffer: instance `first`'s values first, then the
 * next instance's. Its length must be a whole number of instances (`stride` numbers
 * each) that fit from `first`; every value a finite number. Only "roots" and "targets"
 * are the host's to write.
 * @function set
 * @tparam {number,...} t
 * @tparam[opt=1] integer first */
static int buffer_set(lua_State *L) {
  ikl_crowd_buffer *b;
  ikl_crowd *c;
  const ik_crowd_view v = check_view(L, 1, &b, &c);
  int slot, n, i, plain;
  if (!writable(b->view))
    return luaL_error(L, OWNER ": '%s' is the solve's output: only roots and targets are written", b->name);
  luaL_checktype(L, 2, LUA_TTABLE);
  slot = first_slot(L, 3, &v);
  n = (int)lua_rawlen(L, 2);
  if (n % v.stride != 0 || n / v.stride > v.capacity - slot)
    return luaL_argerror(
        L, 2,
        lua_pushfstring(L, "a multiple of %d numbers, at most %d from instance %d, expected, got %d",
                        v.stride, (v.capacity - slot) * v.stride, slot + 1, n));
  lua_settop(L, 2);
  plain = plain_table(L, 2);
  luaL_checkstack(L, STAGE_POP + LUA_MINSTACK, NULL); /* a batch, and an error's message after it */
  /* Staged whole before any is written: a refused table changes nothing. The values
   * stay on the stack until STAGE_POP of them are there: one pop a batch. */
  for (i = 0; i < n; lua_settop(L, 2)) {
    const int end = n - i < STAGE_POP ? n : i + STAGE_POP;
    for (; i < end; i++) {
      const int type = plain ? ikl_plain_geti(L, 2, i + 1) : ikl_rawgeti(L, 2, i + 1);
      const lua_Number x = lua_tonumber(L, -1);
      if (type != LUA_TNUMBER || !ikl_is_usable(x)) {
        const char *what = ikl_describe(L, -1);
        return luaL_argerror(L, 2, lua_pushfstring(L, "finite number expected at [%d], got %s", i + 1, what));
      }
      c->staged[i] = (ik_real)x;
    }
  }
  memcpy(v.data + (size_t)slot * (size_t)v.stride, c->staged, (size_t)n * sizeof(ik_real));
  return 0;
}

/*** Moves the buffer's numbers into a table: `count` instances (default: all from
 * `first`) from instance `first`.
 * @function get
 * @tparam[opt] table t filled from t[1] (default: a new table)
 * @tparam[opt=1] integer first
 * @tparam[opt] integer count
 * @treturn table t */
static int buffer_get(lua_State *L) {
  const ik_crowd_view v = check_view(L, 1, NULL, NULL);
  const int slot = first_slot(L, 3, &v);
  int count = v.capacity - slot, i, n, plain = 0;
  const ik_real *at = v.data + (size_t)slot * (size_t)v.stride;
  if (!lua_isnoneornil(L, 4)) count = ikl_checkindex(L, 4, v.capacity - slot) + 1;
  n = count * v.stride;
  if (lua_isnoneornil(L, 2)) {
    lua_settop(L, 1);
    lua_createtable(L, n, 0); /* its slots are empty: lua_seti would take its slow path */
  } else {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    plain = plain_table(L, 2);
  }
  if (plain) {
    for (i = 0; i < n; i++) {
      lua_pushnumber(L, (lua_Number)at[i]);
      ikl_plain_seti(L, 2, i + 1);
    }
  } else {
    for (i = 0; i < n; i++) {
      lua_pushnumber(L, (lua_Number)at[i]);
      lua_rawseti(L, 2, i + 1);
    }
  }
  return 1;
}

/*** The address of the buffer's first number, for LuaJIT's FFI: `ffi.cast(b.type .. " *",
 * b:address())`. Good while the buffer lives (it keeps the crowd's memory), read and
 * written between solves only.
 * @function address
 * @treturn number the address as an integer (exact: addresses are below 2^53) */
static int buffer_address(lua_State *L) {
  const ik_crowd_view v = check_view(L, 1, NULL, NULL);
  lua_pushnumber(L, (lua_Number)(uintptr_t)v.data);
  return 1;
}

/* `name`, `stride`, `width`, `capacity`, `length` (numbers in all), `type` ("double" or
 * "float"), then methods (the upvalue). */
static int buffer_index(lua_State *L) {
  ikl_crowd_buffer *b;
  const ik_crowd_view v = check_view(L, 1, &b, NULL);
  const char *key = lua_tostring(L, 2);
  int n = -1;
  if (key && strcmp(key, "name") == 0) {
    lua_pushstring(L, b->name);
    return 1;
  }
  if (key && strcmp(key, "type") == 0) {
    lua_pushstring(L, sizeof(ik_real) == sizeof(double) ? "double" : "float");
    return 1;
  }
  if (key && strcmp(key, "stride") == 0) n = v.stride;
  if (key && strcmp(key, "width") == 0) n = v.width;
  if (key && strcmp(key, "capacity") == 0) n = v.capacity;
  if (key && strcmp(key, "length") == 0) n = v.capacity * v.stride;
  if (n >= 0) {
    lua_pushinteger(L, n);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int buffer_len(lua_State *L) {
  const ik_crowd_view v = check_view(L, 1, NULL, NULL);
  lua_pushinteger(L, v.capacity * v.stride);
  return 1;
}

static int buffer_tostring(lua_State *L) {
  ikl_crowd_buffer *b = check(L, 1);
  lua_pushfstring(L, OWNER "('%s')", b->name);
  return 1;
}

static const luaL_Reg meth[] = {
    {"set", buffer_set}, {"get", buffer_get}, {"address", buffer_address}, {NULL, NULL}};
static const luaL_Reg metameth[] = {
    {"__index", buffer_index}, {"__len", buffer_len}, {"__tostring", buffer_tostring}, {NULL, NULL}};

void ikl_open_crowd_buffer(lua_State *L) {
  ikl_createmeta(L, IKL_CROWD_BUFFER, meth, metameth);
  lua_pop(L, 1);
}
