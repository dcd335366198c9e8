/*
 * ikl_share.c: values between the host's state and a rig script's (ikl_sandbox.h).
 *
 * Into the script: plain data is copied; the host's skeletons, bones, nodes and grounds
 * become views of the same C objects; the host's functions become proxies, which copy
 * their arguments out and their results in. Out of the script: plain data is copied, and
 * what came from the host goes back as the host's own object. Nothing here runs a
 * metamethod of either state: tables are walked with lua_next and read raw.
 *
 * A copy into the child takes two passes: the first, in the host, gives every host
 * object the child will hold an id in the sandbox's keep table (host allocations, the
 * host's errors); the second, inside a protected call of the child, makes the copies
 * (child allocations, the child's errors) and only reads the host.
 */
#include <string.h>

#include "ikl_sandbox.h"

static const char VIEWS_KEY = 0, ORIGIN_KEY = 0;

#define MAX_RESULTS 16
#define MAX_STATE_STRING 65536           /* longer strings of a state copy are only described */
#define MAX_OUT_BYTES ((size_t)16 << 20) /* of strings in one copy out of a script */
#define MAX_KEPT 65536

/* ---- views, by address ---- */

int ikl_share_cached(lua_State *to, const void *key) {
  ikl_getreg(to, &VIEWS_KEY);
  if (lua_isnil(to, -1)) {
    lua_pop(to, 1);
    return 0;
  }
  lua_pushlightuserdata(to, (void *)(size_t)key);
  lua_rawget(to, -2);
  lua_remove(to, -2);
  if (lua_isnil(to, -1)) {
    lua_pop(to, 1);
    return 0;
  }
  return 1;
}

void ikl_share_cache(lua_State *to, const void *key) {
  ikl_getreg(to, &VIEWS_KEY);
  if (lua_isnil(to, -1)) {
    lua_pop(to, 1);
    lua_newtable(to);
    lua_pushvalue(to, -1);
    ikl_setreg(to, &VIEWS_KEY);
  }
  lua_pushlightuserdata(to, (void *)(size_t)key);
  lua_pushvalue(to, -3);
  lua_rawset(to, -3);
  lua_pop(to, 1);
}

/* ---- the walk ---- */

typedef struct share {
  lua_State *host, *child;
  ikl_sandbox *sb;
  int keep;      /* host: id <-> object, the sandbox's user value */
  int seen;      /* a scratch table (in the state allocated in) for the tables of a copy */
  int seen_slot; /* copy out: where the seen table goes when it is made */
  int persist;   /* the scene: its tables get ids too, so that they map back */
  int count;
  size_t bytes; /* of the strings copied out */
  const char *what;
} share;

static int is_value_type(lua_State *L, int idx) {
  return luaL_testudata(L, idx, IKL_VEC3) || luaL_testudata(L, idx, IKL_QUAT);
}

static int is_viewable(lua_State *L, int idx) {
  static const char *const types[] = {"ik.skeleton", "ik.bone", "ik.node", IKL_GROUND, NULL};
  int i;
  for (i = 0; types[i]; i++)
    if (luaL_testudata(L, idx, types[i])) return 1;
  return 0;
}

/* The id of the host value at idx, or 0. */
static int id_of(share *s, int idx) {
  int id;
  lua_pushvalue(s->host, idx);
  lua_rawget(s->host, s->keep);
  id = (int)lua_tointeger(s->host, -1);
  lua_pop(s->host, 1);
  return id;
}

/* Host pass: ids for what the child will hold of the host's. */
static void enroll(share *s, int idx, int depth) {
  lua_State *H = s->host;
  int t = lua_type(H, idx), n;
  idx = lua_absindex(H, idx);
  if (t == LUA_TNIL || t == LUA_TBOOLEAN || t == LUA_TNUMBER || t == LUA_TSTRING) return;
  if (t == LUA_TUSERDATA && is_value_type(H, idx)) return;
  if (t != LUA_TTABLE && t != LUA_TFUNCTION && !(t == LUA_TUSERDATA && is_viewable(H, idx)))
    luaL_error(H, "%s: %s cannot be shared with rig scripts", s->what, ikl_typename(H, idx));
  if (t == LUA_TTABLE && !s->persist) {
    lua_pushvalue(H, idx);
    lua_rawget(H, s->seen);
    if (!lua_isnil(H, -1)) {
      lua_pop(H, 1);
      return;
    }
    lua_pop(H, 1);
    lua_pushvalue(H, idx);
    lua_pushboolean(H, 1);
    lua_rawset(H, s->seen);
  } else {
    if (id_of(s, idx)) return;
    lua_getfield(H, s->keep, "n");
    n = (int)lua_tointeger(H, -1) + 1;
    lua_pop(H, 1);
    if (n > MAX_KEPT)
      luaL_error(H, "%s: more than %d host objects shared with one script", s->what, MAX_KEPT);
    lua_pushinteger(H, n);
    lua_setfield(H, s->keep, "n");
    lua_pushvalue(H, idx);
    lua_rawseti(H, s->keep, n);
    lua_pushvalue(H, idx);
    lua_pushinteger(H, n);
    lua_rawset(H, s->keep);
  }
  if (++s->count > IKL_SHARE_VALUES)
    luaL_error(H, "%s: too large to share with rig scripts (more than %d tables and objects)", s->what,
               IKL_SHARE_VALUES);
  if (t != LUA_TTABLE) return;
  if (depth >= IKL_SHARE_DEPTH)
    luaL_error(H, "%s: nested too deep to share with rig scripts (more than %d tables)", s->what,
               IKL_SHARE_DEPTH);
  lua_pushnil(H);
  while (lua_next(H, idx)) {
    enroll(s, -2, depth + 1);
    enroll(s, -1, depth + 1);
    lua_pop(H, 1);
  }
  if (lua_getmetatable(H, idx)) {
    enroll(s, -1, depth + 1);
    lua_pop(H, 1);
  }
}

static void mark_origin(lua_State *C, int id) {
  ikl_getreg(C, &ORIGIN_KEY);
  if (lua_isnil(C, -1)) {
    lua_pop(C, 1);
    lua_newtable(C);
    lua_createtable(C, 0, 1);
    lua_pushliteral(C, "k");
    lua_setfield(C, -2, "__mode");
    lua_setmetatable(C, -2);
    lua_pushvalue(C, -1);
    ikl_setreg(C, &ORIGIN_KEY);
  }
  lua_pushvalue(C, -2);
  lua_pushinteger(C, id);
  lua_rawset(C, -3);
  lua_pop(C, 1);
}

static int proxy(lua_State *C);

static void copy_in(share *s, int idx, int depth);

static void copy_table_in(share *s, int idx, int depth) {
  lua_State *H = s->host, *C = s->child;
  const void *key = lua_topointer(H, idx);
  int id = s->persist ? id_of(s, idx) : 0, t;
  if (id) {
    if (ikl_share_cached(C, key)) return;
  } else {
    lua_pushlightuserdata(C, (void *)(size_t)key);
    lua_rawget(C, s->seen);
    if (!lua_isnil(C, -1)) return;
    lua_pop(C, 1);
  }
  if (depth >= IKL_SHARE_DEPTH) luaL_error(C, "%s: nested too deep to share with rig scripts", s->what);
  luaL_checkstack(C, 8, "nested too deep");
  lua_newtable(C);
  t = lua_gettop(C);
  if (id) {
    ikl_share_cache(C, key);
    mark_origin(C, id);
  } else {
    lua_pushlightuserdata(C, (void *)(size_t)key);
    lua_pushvalue(C, t);
    lua_rawset(C, s->seen);
  }
  lua_pushnil(H);
  while (lua_next(H, idx)) {
    if (depth == 0 && s->persist && lua_type(H, -2) == LUA_TSTRING) {
      const char *k = lua_tostring(H, -2);
      if (strcmp(k, "advance") == 0) { /* the host's frame step, not the scripts' */
        lua_pop(H, 1);
        continue;
      }
      if (strcmp(k, "report") == 0 && lua_type(H, -1) == LUA_TFUNCTION) { /* the sandbox's own */
        lua_pushliteral(C, "report");
        lua_pushcfunction(C, ikl_sandbox_report);
        lua_rawset(C, t);
        lua_pop(H, 1);
        continue;
      }
    }
    copy_in(s, -2, depth + 1);
    copy_in(s, -1, depth + 1);
    lua_rawset(C, t);
    lua_pop(H, 1);
  }
  if (lua_getmetatable(H, idx)) {
    copy_in(s, lua_gettop(H), depth + 1);
    lua_pushliteral(C, "__gc");
    lua_pushnil(C);
    lua_rawset(C, -3);
    lua_setmetatable(C, t);
    lua_pop(H, 1);
  }
}

static void copy_userdata_in(share *s, int idx) {
  lua_State *H = s->host, *C = s->child;
  const void *key = lua_topointer(H, idx);
  int id, made;
  ik_vec3 *v;
  ik_quat *q;
  if ((v = (ik_vec3 *)luaL_testudata(H, idx, IKL_VEC3)) != NULL) {
    ikl_pushvec3(C, *v);
    return;
  }
  if ((q = (ik_quat *)luaL_testudata(H, idx, IKL_QUAT)) != NULL) {
    ikl_pushquat(C, *q);
    return;
  }
  if (ikl_share_cached(C, key)) return;
  made = ikl_skeleton_view(H, idx, C);
  if (!made) made = ikl_node_view(H, idx, C);
  if (!made) made = ikl_ground_view(H, idx, C);
  if (made < 0)
    luaL_error(C, "%s: a custom ik.ground cannot be shared with rig scripts (its function is the host's)",
               s->what);
  if (!made) luaL_error(C, "%s: %s cannot be shared with rig scripts", s->what, ikl_typename(H, idx));
  ikl_share_cache(C, key);
  if ((id = id_of(s, idx)) != 0) mark_origin(C, id);
}

/* Child pass: the copy of the host value at idx, pushed onto the child. */
static void copy_in(share *s, int idx, int depth) {
  lua_State *H = s->host, *C = s->child;
  idx = lua_absindex(H, idx);
  switch (lua_type(H, idx)) {
    case LUA_TNIL:
      lua_pushnil(C);
      break;
    case LUA_TBOOLEAN:
      lua_pushboolean(C, lua_toboolean(H, idx));
      break;
    case LUA_TNUMBER:
#if LUA_VERSION_NUM >= 503
      if (lua_isinteger(H, idx)) {
        lua_pushinteger(C, lua_tointeger(H, idx));
        break;
      }
#endif
      lua_pushnumber(C, lua_tonumber(H, idx));
      break;
    case LUA_TSTRING: {
      size_t len;
      const char *str = lua_tolstring(H, idx, &len);
      lua_pushlstring(C, str, len);
      break;
    }
    case LUA_TTABLE:
      copy_table_in(s, idx, depth);
      break;
    case LUA_TFUNCTION: {
      const void *key = lua_topointer(H, idx);
      int id = id_of(s, idx);
      if (ikl_share_cached(C, key)) break;
      lua_pushinteger(C, id);
      lua_pushcclosure(C, proxy, 1);
      ikl_share_cache(C, key);
      mark_origin(C, id);
      break;
    }
    case LUA_TUSERDATA:
      copy_userdata_in(s, idx);
      break;
    default:
      luaL_error(C, "%s: %s cannot be shared with rig scripts", s->what, ikl_typename(H, idx));
  }
}

void ikl_share_in(lua_State *from, int idx, lua_State *to, ikl_sandbox *sb, int keep, const char *what) {
  share s;
  int top = lua_gettop(from);
  memset(&s, 0, sizeof s);
  s.host = from;
  s.child = to;
  s.sb = sb;
  s.what = what;
  s.persist = strcmp(what, "scene") == 0;
  s.keep = lua_absindex(from, keep);
  idx = lua_absindex(from, idx);
  if (!to) {
    lua_newtable(from);
    s.seen = lua_gettop(from);
    enroll(&s, idx, 0);
    lua_settop(from, top);
    return;
  }
  lua_newtable(to);
  s.seen = lua_gettop(to);
  copy_in(&s, idx, 0);
  lua_remove(to, s.seen);
  lua_settop(from, top);
}

/* ---- out of the child ---- */

static void copy_out(share *s, int idx, int depth, int strict);

/* Pushes onto the host the host object the child's value at idx came from; 0 if none. */
static int origin_of(share *s, int idx) {
  lua_State *C = s->child;
  int id;
  ikl_getreg(C, &ORIGIN_KEY);
  if (lua_isnil(C, -1)) {
    lua_pop(C, 1);
    return 0;
  }
  lua_pushvalue(C, idx);
  lua_rawget(C, -2);
  id = (int)lua_tointeger(C, -1);
  lua_pop(C, 2);
  if (!id) return 0;
  lua_rawgeti(s->host, s->keep, id);
  return 1;
}

static void copy_table_out(share *s, int idx, int depth, int strict) {
  lua_State *H = s->host, *C = s->child;
  int t;
  if (!s->seen) { /* made at the first table: a copy of plain values allocates nothing */
    lua_newtable(H);
    lua_replace(H, s->seen_slot);
    s->seen = s->seen_slot;
  }
  lua_pushlightuserdata(H, (void *)(size_t)lua_topointer(C, idx));
  lua_rawget(H, s->seen);
  if (!lua_isnil(H, -1)) return;
  lua_pop(H, 1);
  if (depth >= IKL_SHARE_DEPTH)
    luaL_error(H, "%s: nested too deep (more than %d tables)", s->what, IKL_SHARE_DEPTH);
  if (++s->count > IKL_SHARE_VALUES)
    luaL_error(H, "%s: too large (more than %d tables)", s->what, IKL_SHARE_VALUES);
  luaL_checkstack(H, 8, "nested too deep");
  lua_newtable(H);
  t = lua_gettop(H);
  lua_pushlightuserdata(H, (void *)(size_t)lua_topointer(C, idx));
  lua_pushvalue(H, t);
  lua_rawset(H, s->seen);
  lua_pushnil(C);
  while (lua_next(C, idx)) {
    copy_out(s, lua_gettop(C) - 1, depth + 1, strict);
    copy_out(s, lua_gettop(C), depth + 1, strict);
    if (lua_isnil(H, -2))
      lua_pop(H, 2); /* not a key: dropped */
    else
      lua_rawset(H, t);
    lua_pop(C, 1);
  }
}

static void copy_out(share *s, int idx, int depth, int strict) {
  lua_State *H = s->host, *C = s->child;
  ik_vec3 *v;
  ik_quat *q;
  idx = lua_absindex(C, idx);
  switch (lua_type(C, idx)) {
    case LUA_TNIL:
      lua_pushnil(H);
      return;
    case LUA_TBOOLEAN:
      lua_pushboolean(H, lua_toboolean(C, idx));
      return;
    case LUA_TNUMBER:
#if LUA_VERSION_NUM >= 503
      if (lua_isinteger(C, idx)) {
        lua_pushinteger(H, lua_tointeger(C, idx));
        return;
      }
#endif
      lua_pushnumber(H, lua_tonumber(C, idx));
      return;
    case LUA_TSTRING: {
      size_t len;
      const char *str = lua_tolstring(C, idx, &len);
      if (!strict && len > MAX_STATE_STRING) {
        lua_pushfstring(H, "(a string of %d bytes)", (int)len);
        return;
      }
      if ((s->bytes += len) > MAX_OUT_BYTES)
        luaL_error(H, "%s: too large (more than %d bytes of strings)", s->what, (int)MAX_OUT_BYTES);
      lua_pushlstring(H, str, len);
      return;
    }
    case LUA_TTABLE:
      if (!origin_of(s, idx)) copy_table_out(s, idx, depth, strict);
      return;
    case LUA_TUSERDATA:
      if (origin_of(s, idx)) return;
      if ((v = (ik_vec3 *)luaL_testudata(C, idx, IKL_VEC3)) != NULL) {
        ikl_pushvec3(H, *v);
        return;
      }
      if ((q = (ik_quat *)luaL_testudata(C, idx, IKL_QUAT)) != NULL) {
        ikl_pushquat(H, *q);
        return;
      }
      break;
    case LUA_TFUNCTION:
      if (origin_of(s, idx)) return;
      break;
    default:
      break;
  }
  if (strict)
    luaL_error(H, "%s: %s of the script's cannot be handed to the host", s->what, ikl_typename(C, idx));
  lua_pushstring(H, ikl_typename(C, idx));
}

void ikl_share_out(lua_State *child, int idx, lua_State *host, int keep, int strict) {
  share s;
  int top = lua_gettop(host);
  memset(&s, 0, sizeof s);
  s.host = host;
  s.child = child;
  s.what = strict ? "scene function" : "state";
  s.keep = lua_absindex(host, keep);
  idx = lua_absindex(child, idx);
  lua_pushnil(host); /* the slot of the seen table */
  s.seen_slot = top + 1;
  copy_out(&s, idx, 0, strict);
  lua_replace(host, top + 1);
  lua_settop(host, top + 1);
}

/* ---- proxies: the host's functions, called by the script ---- */

typedef struct call {
  lua_State *child;
  ikl_sandbox *sb;
  int id, nargs;
} call;

/* In the host, protected (the call at 1, the keep table at 2): the host's function with
 * the arguments copied out; its results enrolled for the copy in. */
static int host_call(lua_State *H) {
  call *c = (call *)lua_touserdata(H, 1);
  int i, base = 2, n;
  luaL_checkstack(H, 3 * IKL_SHARE_DEPTH + c->nargs + MAX_RESULTS + 20, "too many arguments");
  lua_rawgeti(H, 2, c->id);
  for (i = 1; i <= c->nargs; i++) ikl_share_out(c->child, i, H, 2, 1);
  lua_call(H, c->nargs, LUA_MULTRET);
  n = lua_gettop(H) - base;
  if (n > MAX_RESULTS) lua_settop(H, base + (n = MAX_RESULTS));
  for (i = 1; i <= n; i++) ikl_share_in(H, base + i, NULL, c->sb, 2, "scene function");
  return n;
}

static int proxy(lua_State *C) {
  ikl_sandbox *sb = ikl_sandbox_of(C);
  lua_State *H = sb ? sb->host : NULL;
  call c;
  int base, st, i, n, keep;
  if (!H) return luaL_error(C, "the host's function cannot be called now");
  luaL_checkstack(C, 3 * IKL_SHARE_DEPTH + MAX_RESULTS + 20, "too many results");
  c.child = C;
  c.sb = sb;
  c.id = (int)lua_tointeger(C, lua_upvalueindex(1));
  c.nargs = lua_gettop(C);
  base = lua_gettop(H);
  lua_pushcfunction(H, host_call);
  lua_pushlightuserdata(H, &c);
  ikl_getuservalue(H, sb->host_ud);
  st = lua_pcall(H, 2, LUA_MULTRET, 0);
  if (st != 0) {
    size_t len;
    const char *msg = lua_type(H, -1) == LUA_TSTRING ? lua_tolstring(H, -1, &len) : "(not a string)";
    if (lua_type(H, -1) != LUA_TSTRING) len = strlen(msg);
    if (len > IKL_SANDBOX_MAX_MESSAGE) len = IKL_SANDBOX_MAX_MESSAGE;
    lua_pushlstring(C, msg, len);
    lua_settop(H, base);
    return lua_error(C);
  }
  n = lua_gettop(H) - base;
  ikl_getuservalue(H, sb->host_ud);
  keep = lua_gettop(H);
  for (i = 1; i <= n; i++) ikl_share_in(H, base + i, C, sb, keep, "scene function");
  lua_settop(H, base);
  return n;
}
