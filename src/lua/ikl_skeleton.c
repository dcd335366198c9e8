/***
 * Skeletons: `ik.skeleton`, a bone hierarchy with local rest transforms and lazily
 * computed world transforms, and `ik.bone`, a handle on one of its bones.
 *
 * Bones implement the transform contract (`get_position`, `get_rotation`,
 * `set_position`, `set_rotation`), so rig scripts drive them exactly as they drive a
 * host's own objects.
 * @classmod ik.skeleton
 */
#include <string.h>

#include "ik_skeleton.h"
#include "ikl.h"

#define IKL_SKELETON "ik.skeleton"
#define IKL_BONE "ik.bone"

/* The userdata: this header, then the index maps, then the C skeleton's block. */
/* A view of another state's skeleton (a rig script's of the host's) shares its maps and
 * block, and reads its closed flag through closed_at. */
typedef struct ikl_skeleton {
  int count;
  int closed;
  int view;
  const int *closed_at;
  int *to_internal; /* the user's order (as given) -> the skeleton's parents-first order */
  int *to_user;
  ik_skeleton *sk;
} ikl_skeleton;

typedef struct ikl_bone {
  ikl_skeleton *owner;
  int user;     /* 0-based, the order the bones were given in */
  int internal; /* the C skeleton's index */
} ikl_bone;

static size_t maps_offset(void) { return (sizeof(ikl_skeleton) + 15) & ~(size_t)15; }
static size_t block_offset(int n) { return (maps_offset() + 2 * sizeof(int) * (size_t)n + 15) & ~(size_t)15; }

static ikl_skeleton *check_skeleton(lua_State *L, int arg) {
  ikl_skeleton *s = (ikl_skeleton *)luaL_checkudata(L, arg, IKL_SKELETON);
  if (*s->closed_at) luaL_error(L, "attempt to use a closed ik.skeleton");
  return s;
}

static ikl_bone *check_bone(lua_State *L, int arg) {
  ikl_bone *b = (ikl_bone *)luaL_checkudata(L, arg, IKL_BONE);
  if (*b->owner->closed_at) luaL_error(L, "attempt to use a bone of a closed ik.skeleton");
  return b;
}

int ikl_tobone(lua_State *L, int idx, ik_skeleton **sk, int *bone) {
  ikl_bone *b = (ikl_bone *)luaL_testudata(L, idx, IKL_BONE);
  if (!b) return 0;
  if (*b->owner->closed_at) luaL_error(L, "attempt to use a bone of a closed ik.skeleton");
  *sk = b->owner->sk;
  *bone = b->internal;
  return 1;
}

int ikl_tobone_ref(lua_State *L, int idx, ik_skeleton **sk, int *bone, const int **closed) {
  ikl_bone *b = (ikl_bone *)luaL_testudata(L, idx, IKL_BONE);
  if (!b) return 0;
  if (*b->owner->closed_at) luaL_error(L, "attempt to use a bone of a closed ik.skeleton");
  *sk = b->owner->sk;
  *bone = b->internal;
  *closed = b->owner->closed_at;
  return 1;
}

/* ---- construction ---- */

/* Reads spec #i (1-based, at the top of the stack) into desc; its name and parent name
 * go into the uservalue's tables (at uv). */
static void read_bone(lua_State *L, int i, int uv, ik_bone_desc *desc) {
  static const char *const bone_keys[] = {"name", "parent", "position", "rotation", NULL};
  const char *name;
  ik_bone_desc_init(desc);
  if (!lua_istable(L, -1))
    luaL_error(L, "ik.skeleton: bone #%d: table expected, got %s", i, ikl_typename(L, -1));
  lua_getfield(L, -1, "name");
  if (lua_type(L, -1) != LUA_TSTRING)
    luaL_error(L, "ik.skeleton: bone #%d: bad field 'name' (string expected, got %s)", i,
               ikl_typename(L, -1));
  name = lua_tostring(L, -1);
  lua_getfield(L, uv, "by_name");
  lua_getfield(L, -1, name);
  if (!lua_isnil(L, -1)) luaL_error(L, "ik.skeleton: duplicate bone name '%s'", name);
  lua_pop(L, 1);
  lua_pushinteger(L, i);
  lua_setfield(L, -2, name); /* by_name[name] = i */
  lua_pop(L, 1);
  lua_rawseti(L, uv, i); /* uv[i] = name */
  lua_pushfstring(L, "ik.skeleton: bone '%s'", name);
  ikl_check_keys(L, -2, lua_tostring(L, -1), bone_keys, "name, parent, position, rotation");
  if (!ikl_optfield_vec3(L, -2, lua_tostring(L, -1), "position", &desc->position))
    desc->position = ik_vec3_zero();
  lua_getfield(L, -2, "rotation");
  if (!lua_isnil(L, -1)) {
    if (!ikl_toquat(L, -1, &desc->rotation) || !ikl_rotation_usable(desc->rotation))
      luaL_error(L, "ik.skeleton: bone '%s': bad field 'rotation' (non-zero finite quat expected, got %s)",
                 name, ikl_typename(L, -1));
  }
  lua_pop(L, 2);
}

/* Resolves parent names to user indices in parent_user[] (-1 for roots). */
static void resolve_parents(lua_State *L, int spec, int uv, int n, int *parent_user) {
  int i;
  lua_getfield(L, uv, "by_name");
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, spec, i);
    lua_getfield(L, -1, "parent");
    if (lua_isnil(L, -1)) {
      parent_user[i - 1] = -1;
    } else {
      lua_rawgeti(L, uv, i);
      if (lua_type(L, -2) != LUA_TSTRING)
        luaL_error(L, "ik.skeleton: bone '%s': bad field 'parent' (bone name expected, got %s)",
                   lua_tostring(L, -1), ikl_typename(L, -2));
      lua_pushvalue(L, -2);
      lua_rawget(L, -5);
      if (lua_isnil(L, -1))
        luaL_error(L, "ik.skeleton: bone '%s' has unknown parent '%s'", lua_tostring(L, -2),
                   lua_tostring(L, -3));
      parent_user[i - 1] = (int)lua_tointeger(L, -1) - 1;
      lua_pop(L, 2);
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
}

/* Parents-first order, stable (the given order where it already is one), in O(n):
 * each bone not yet placed is placed after its unplaced ancestors. Those are stacked
 * in the free tail of to_user (there are at most n - placed of them) and marked -2
 * while on the stack: meeting a marked bone again means the walk went round a cycle,
 * and that bone is on it. */
static void sort_bones(lua_State *L, int uv, int n, const int *parent_user, int *to_internal, int *to_user) {
  int placed = 0, i;
  for (i = 0; i < n; i++) to_internal[i] = -1;
  for (i = 0; i < n; i++) {
    int depth = 0, b;
    for (b = i; b >= 0 && to_internal[b] < 0; b = parent_user[b]) {
      if (to_internal[b] == -2) {
        lua_rawgeti(L, uv, b + 1);
        luaL_error(L, "ik.skeleton: bone '%s' is its own ancestor (a parent cycle)", lua_tostring(L, -1));
      }
      to_internal[b] = -2;
      to_user[n - ++depth] = b;
    }
    while (depth > 0) { /* the topmost ancestor first; read before placed can reach it */
      b = to_user[n - depth--];
      to_internal[b] = placed;
      to_user[placed++] = b;
    }
  }
}

/***
 * Makes a skeleton from bone specs, each `{name =, parent =, position =, rotation =}`:
 * position and rotation are the rest transform relative to the parent (world for a
 * root), defaults zero and identity. Parents may come in any order. Unknown parents,
 * duplicate names and cycles are refused.
 * @function ik.skeleton
 * @tparam table bones
 * @treturn ik.skeleton
 * @usage local sk = ik.skeleton{
 *   { name = "shoulder", position = {0, 1.5, 0} },
 *   { name = "elbow", parent = "shoulder", position = {0.3, 0, 0} },
 *   { name = "hand", parent = "elbow", position = {0.25, 0, 0} },
 * }
 * local hand = sk:bone("hand")
 * assert(math.abs(hand:get_position().x - 0.55) < 1e-6)
 */
static int skeleton_new(lua_State *L) {
  int n, i, *parent_user;
  ikl_skeleton *s;
  ik_bone_desc *descs;
  ik_error err;
  size_t size;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1); /* what follows counts on its own slots: 2 to 6 */
  n = (int)lua_rawlen(L, 1);
  if (n < 1) return luaL_error(L, "ik.skeleton: at least one bone expected, got none");
  if (n > 100000) return luaL_error(L, "ik.skeleton: too many bones (%d)", n);
  size = block_offset(n) + ik_skeleton_size(n);
  s = (ikl_skeleton *)ikl_newuserdata(L, size); /* 2 */
  memset(s, 0, sizeof *s);
  s->count = n;
  s->closed_at = &s->closed;
  s->closed = 1; /* until built: a failed build leaves an unusable object to the GC */
  s->to_internal = (int *)(void *)((char *)s + maps_offset());
  s->to_user = s->to_internal + n;
  luaL_setmetatable(L, IKL_SKELETON);
  /* 3: the uservalue: [i] = name, by_name, bones (the cached handles) and the skeleton
   * itself. Handles share it as their own uservalue, which keeps the skeleton alive: it
   * must be a table, as 5.1 and LuaJIT store environments. */
  lua_createtable(L, n, 3);
  lua_newtable(L);
  lua_setfield(L, 3, "by_name");
  lua_newtable(L);
  lua_setfield(L, 3, "bones");
  lua_pushvalue(L, 2);
  lua_setfield(L, 3, "skeleton");
  descs = (ik_bone_desc *)ikl_newuserdata0(L, sizeof(ik_bone_desc) * (size_t)n); /* 4: scratch */
  parent_user = (int *)ikl_newuserdata0(L, sizeof(int) * (size_t)n);             /* 5: scratch */
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    read_bone(L, i, 3, &descs[i - 1]);
    lua_pop(L, 1);
  }
  resolve_parents(L, 1, 3, n, parent_user);
  sort_bones(L, 3, n, parent_user, s->to_internal, s->to_user);
  {
    /* descs in the skeleton's order, parents as internal indices */
    ik_bone_desc *sorted = (ik_bone_desc *)ikl_newuserdata0(L, sizeof(ik_bone_desc) * (size_t)n); /* 6 */
    for (i = 0; i < n; i++) {
      int u = s->to_user[i];
      sorted[i] = descs[u];
      sorted[i].parent = parent_user[u] < 0 ? -1 : s->to_internal[parent_user[u]];
    }
    if (ik_skeleton_init((char *)s + block_offset(n), ik_skeleton_size(n), sorted, n, &s->sk, &err) !=
        IK_OK) {
      /* Not reached: read_bone checked what init checks. Named like its errors anyway. */
      if (err.index >= 0 && err.index < n)
        lua_rawgeti(L, 3, s->to_user[err.index] + 1);
      else
        lua_pushliteral(L, "?");
      return luaL_error(L, "ik.skeleton: bone '%s': bad field '%s' (%s)", lua_tostring(L, -1),
                        err.field ? err.field : "?", ik_status_message(err.status));
    }
  }
  lua_settop(L, 3);
  ikl_setuservalue(L, 2);
  s->closed = 0;
  return 1;
}

/* Pushes the (cached) handle of user bone u of skeleton s, whose uservalue table is at
 * uv. */
static void push_bone(lua_State *L, int uv, ikl_skeleton *s, int u) {
  uv = lua_absindex(L, uv);
  lua_getfield(L, uv, "bones");
  lua_rawgeti(L, -1, u + 1);
  if (lua_isnil(L, -1)) {
    ikl_bone *b;
    lua_pop(L, 1);
    b = (ikl_bone *)ikl_newuserdata(L, sizeof *b);
    b->owner = s;
    b->user = u;
    b->internal = s->to_internal[u];
    luaL_setmetatable(L, IKL_BONE);
    lua_pushvalue(L, uv); /* the handle keeps its skeleton alive (uv.skeleton) */
    ikl_setuservalue(L, -2);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, u + 1);
  }
  lua_replace(L, -2);
}

/***
 * A bone by name or by index (1-based, in the order the bones were given).
 * @function bone
 * @tparam string|int name_or_index
 * @treturn ik.bone
 */
static int skeleton_bone(lua_State *L) {
  ikl_skeleton *s = check_skeleton(L, 1);
  int u;
  if (lua_type(L, 2) == LUA_TNUMBER) {
    lua_Number i = lua_tonumber(L, 2);
    luaL_argcheck(L, i >= 1 && i <= s->count && i == (lua_Number)(int)i, 2,
                  lua_pushfstring(L, "index out of range: 1..%d", s->count));
    u = (int)i - 1;
  } else {
    if (lua_type(L, 2) != LUA_TSTRING) return ikl_typeerror(L, 2, "bone name or index");
    ikl_getuservalue(L, 1);
    lua_getfield(L, -1, "by_name");
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    if (lua_isnil(L, -1))
      return luaL_argerror(L, 2, lua_pushfstring(L, "no bone named '%s'", lua_tostring(L, 2)));
    u = (int)lua_tointeger(L, -1) - 1;
    lua_pop(L, 3);
  }
  ikl_getuservalue(L, 1);
  push_bone(L, -1, s, u);
  return 1;
}

/*** Every bone, in the order given.
 * @function bones
 * @treturn {ik.bone,...} */
static int skeleton_bones(lua_State *L) {
  ikl_skeleton *s = check_skeleton(L, 1);
  int u;
  ikl_getuservalue(L, 1);
  lua_createtable(L, s->count, 0);
  for (u = 0; u < s->count; u++) {
    push_bone(L, -2, s, u);
    lua_rawseti(L, -2, u + 1);
  }
  return 1;
}

/*** Back to the rest pose.
 * @function reset */
static int skeleton_reset(lua_State *L) {
  ik_skeleton_reset(check_skeleton(L, 1)->sk);
  return 0;
}

/*** Closes the skeleton: its bones and itself raise on any later use.
 * @function close */
static int skeleton_close(lua_State *L) {
  ikl_skeleton *s = (ikl_skeleton *)luaL_checkudata(L, 1, IKL_SKELETON);
  if (s->view) return luaL_error(L, IKL_HOST_OBJECT);
  s->closed = 1;
  return 0;
}

static int skeleton_gc(lua_State *L) {
  ((ikl_skeleton *)luaL_checkudata(L, 1, IKL_SKELETON))->closed = 1;
  return 0;
}

/* Methods (the upvalue), once the skeleton is known to be open: after close, even
 * looking one up raises, as for the module's other closable types. */
static int skeleton_index(lua_State *L) {
  check_skeleton(L, 1);
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int skeleton_len(lua_State *L) {
  lua_pushinteger(L, check_skeleton(L, 1)->count);
  return 1;
}

static int skeleton_tostring(lua_State *L) {
  ikl_skeleton *s = (ikl_skeleton *)luaL_checkudata(L, 1, IKL_SKELETON);
  if (*s->closed_at)
    lua_pushliteral(L, "ik.skeleton (closed)");
  else
    lua_pushfstring(L, "ik.skeleton(%d bone%s)", s->count, s->count == 1 ? "" : "s");
  return 1;
}

/* ---- bones: the transform contract ---- */

/*** World position.
 * @function get_position
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int bone_get_position(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ik_vec3 p;
  ik_skeleton_get_world(b->owner->sk, b->internal, &p, NULL);
  *ikl_outvec3(L, 2) = p;
  return 1;
}

/*** World rotation.
 * @function get_rotation
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int bone_get_rotation(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ik_quat q;
  ik_skeleton_get_world(b->owner->sk, b->internal, NULL, &q);
  *ikl_outquat(L, 2) = q;
  return 1;
}

/*** Moves the bone to a world position; its children follow.
 * @function set_position
 * @tparam vec3 p */
static int bone_set_position(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ikl_checkstatus(L, ik_skeleton_set_world_position(b->owner->sk, b->internal, ikl_checkvec3(L, 2)), 2);
  return 0;
}

/*** Turns the bone to a world rotation; its children follow.
 * @function set_rotation
 * @tparam quat q */
static int bone_set_rotation(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ikl_checkstatus(L, ik_skeleton_set_world_rotation(b->owner->sk, b->internal, ikl_checkrotation(L, 2)), 2);
  return 0;
}

/*** Position relative to the parent.
 * @function get_local_position
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int bone_get_local_position(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ik_vec3 p;
  ik_skeleton_get_local(b->owner->sk, b->internal, &p, NULL);
  *ikl_outvec3(L, 2) = p;
  return 1;
}

/*** Rotation relative to the parent.
 * @function get_local_rotation
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int bone_get_local_rotation(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ik_quat q;
  ik_skeleton_get_local(b->owner->sk, b->internal, NULL, &q);
  *ikl_outquat(L, 2) = q;
  return 1;
}

/*** Sets the rotation relative to the parent.
 * @function set_local_rotation
 * @tparam quat q */
static int bone_set_local_rotation(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ikl_checkstatus(L, ik_skeleton_set_local_rotation(b->owner->sk, b->internal, ikl_checkrotation(L, 2)), 2);
  return 0;
}

/*** Sets the position relative to the parent.
 * @function set_local_position
 * @tparam vec3 p */
static int bone_set_local_position(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  ikl_checkstatus(L, ik_skeleton_set_local_position(b->owner->sk, b->internal, ikl_checkvec3(L, 2)), 2);
  return 0;
}

/* Fields: name, parent (a bone or nil), index; then methods. */
static int bone_index(lua_State *L) {
  ikl_bone *b = check_bone(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "name") == 0) {
    ikl_getuservalue(L, 1); /* the skeleton's */
    lua_rawgeti(L, -1, b->user + 1);
  } else if (key && strcmp(key, "parent") == 0) {
    int parent = ik_skeleton_parent(b->owner->sk, b->internal);
    if (parent < 0) {
      lua_pushnil(L);
    } else {
      ikl_getuservalue(L, 1);
      push_bone(L, -1, b->owner, b->owner->to_user[parent]);
    }
  } else if (key && strcmp(key, "index") == 0) {
    lua_pushinteger(L, b->user + 1);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int bone_newindex(lua_State *L) {
  check_bone(L, 1);
  return ikl_readonly(L, IKL_BONE, "use set_position, set_rotation, ...");
}

static int bone_tostring(lua_State *L) {
  ikl_bone *b = (ikl_bone *)luaL_checkudata(L, 1, IKL_BONE);
  ikl_getuservalue(L, 1);
  lua_rawgeti(L, -1, b->user + 1);
  lua_pushfstring(L, "ik.bone('%s')", lua_tostring(L, -1));
  return 1;
}

static const luaL_Reg skeleton_meth[] = {{"bone", skeleton_bone},
                                         {"bones", skeleton_bones},
                                         {"reset", skeleton_reset},
                                         {"close", skeleton_close},
                                         {NULL, NULL}};
static const luaL_Reg skeleton_metameth[] = {{"__index", skeleton_index},       {"__len", skeleton_len},
                                             {"__tostring", skeleton_tostring}, {"__gc", skeleton_gc},
                                             {"__close", skeleton_close},       {NULL, NULL}};
static const luaL_Reg bone_meth[] = {{"get_position", bone_get_position},
                                     {"get_rotation", bone_get_rotation},
                                     {"set_position", bone_set_position},
                                     {"set_rotation", bone_set_rotation},
                                     {"get_local_position", bone_get_local_position},
                                     {"get_local_rotation", bone_get_local_rotation},
                                     {"set_local_rotation", bone_set_local_rotation},
                                     {"set_local_position", bone_set_local_position},
                                     {NULL, NULL}};
static const luaL_Reg bone_metameth[] = {
    {"__index", bone_index}, {"__newindex", bone_newindex}, {"__tostring", bone_tostring}, {NULL, NULL}};

/* A view in `to` of the skeleton at idx of `from`: the same maps and block, its names
 * copied. Cached in to's registry by the skeleton's address. */
static int push_skeleton_view(lua_State *from, int idx, lua_State *to) {
  ikl_skeleton *h = (ikl_skeleton *)luaL_testudata(from, idx, IKL_SKELETON), *s;
  int uv, i;
  if (!h) return 0;
  if (ikl_share_cached(to, h)) return 1;
  s = (ikl_skeleton *)ikl_newuserdata(to, sizeof *s);
  *s = *h;
  s->view = 1;
  s->closed = 0;
  s->closed_at = h->closed_at;
  luaL_setmetatable(to, IKL_SKELETON);
  lua_createtable(to, h->count, 3);
  uv = lua_gettop(to);
  ikl_getuservalue(from, idx);
  for (i = 1; i <= h->count; i++) {
    size_t len;
    const char *name;
    lua_rawgeti(from, -1, i);
    name = lua_tolstring(from, -1, &len);
    lua_pushlstring(to, name ? name : "", name ? len : 0);
    lua_pushvalue(to, -1);
    lua_rawseti(to, uv, i);
    lua_pop(from, 1);
    lua_getfield(to, uv, "by_name");
    if (lua_isnil(to, -1)) {
      lua_pop(to, 1);
      lua_newtable(to);
      lua_pushvalue(to, -1);
      lua_setfield(to, uv, "by_name");
    }
    lua_insert(to, -2);
    lua_pushinteger(to, i);
    lua_rawset(to, -3);
    lua_pop(to, 1);
  }
  lua_pop(from, 1);
  if (h->count == 0) {
    lua_newtable(to);
    lua_setfield(to, uv, "by_name");
  }
  lua_newtable(to);
  lua_setfield(to, uv, "bones");
  lua_pushvalue(to, -2);
  lua_setfield(to, uv, "skeleton");
  ikl_setuservalue(to, -2);
  ikl_share_cache(to, h);
  return 1;
}

int ikl_skeleton_view(lua_State *from, int idx, lua_State *to) {
  ikl_bone *b;
  int uv;
  if (push_skeleton_view(from, idx, to)) return 1;
  b = (ikl_bone *)luaL_testudata(from, idx, IKL_BONE);
  if (!b) return 0;
  ikl_getuservalue(from, idx);
  lua_getfield(from, -1, "skeleton");
  push_skeleton_view(from, lua_gettop(from), to);
  lua_pop(from, 2);
  ikl_getuservalue(to, -1);
  uv = lua_gettop(to);
  push_bone(to, uv, (ikl_skeleton *)lua_touserdata(to, uv - 1), b->user);
  lua_replace(to, uv - 1);
  lua_settop(to, uv - 1);
  return 1;
}

void ikl_open_skeleton(lua_State *L) {
  ikl_createmeta(L, IKL_SKELETON, skeleton_meth, skeleton_metameth);
  ikl_createmeta(L, IKL_BONE, bone_meth, bone_metameth);
  lua_pop(L, 2);
  lua_pushcfunction(L, skeleton_new);
  lua_setfield(L, -2, "skeleton");
}
