/***
 * Crowd templates: `ik.crowd_template`, a character's rig compiled once for an `ik.crowd`.
 *
 * `ik.crowd_template{ skeleton = sk, chains = { ... } }` copies the skeleton as it stands
 * and the chains its rig solves; each chain is a table: `bones` (names or ik.bones of
 * the skeleton, root first), `solver` ("fabrik", "ccd", "two_bone", "dls"; default
 * two_bone for 3 bones, else fabrik), `iterations` (1..10000, default 10), `tolerance`
 * (default 1e-3), `target` (nil: the host gives it every frame, in the crowd's
 * `targets` buffer; or `{ bone = name, offset = vec3 }`, hung from that bone), `pole`
 * (nil, or `{ bone = name, offset = vec3 }`), `foot` (nil, true, or a table of ik.foot's
 * parameters: ray_height, ray_length, foot_offset, smooth_time, up). The crowd's
 * buffers index bones in the template's order: `t:bone(name)` gives a bone's index.
 * Host-only: rig scripts have no ik.crowd_template.
 * @classmod ik.crowd_template
 */
#include <math.h>
#include <string.h>

#include "ik_crowd.h"
#include "ikl.h"

#define OWNER IKL_CROWD_TEMPLATE

static const char *const spec_keys[] = {"skeleton", "chains", NULL};
static const char *const chain_keys[] = {"bones",  "solver", "iterations", "tolerance",
                                         "target", "pole",   "foot",       NULL};
static const char *const point_keys[] = {"bone", "offset", NULL};
static const char *const foot_keys[] = {"ray_height", "ray_length", "foot_offset", "smooth_time", "up", NULL};
static const char *const solver_names[] = {"fabrik", "ccd", "two_bone", "dls", NULL};

static ik_crowd_template *check(lua_State *L, int arg) {
  return (ik_crowd_template *)luaL_checkudata(L, arg, IKL_CROWD_TEMPLATE);
}

const ik_crowd_template *ikl_checkcrowdtemplate(lua_State *L, int arg) { return check(L, arg); }

/* The internal index of the bone at idx (a name or an ik.bone of the skeleton at sk_idx). */
static int bone_at(lua_State *L, int sk_idx, int idx, const ik_skeleton *sk, const char *what) {
  ik_skeleton *bsk;
  int bone;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING) {
    lua_getfield(L, sk_idx, "bone");
    lua_pushvalue(L, sk_idx);
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 2, 1, 0) != 0)
      return luaL_error(L, OWNER ": %s: no bone named '%s'", what, lua_tostring(L, idx));
    lua_replace(L, idx);
  }
  if (!ikl_tobone(L, idx, &bsk, &bone) || bsk != sk)
    return luaL_error(L, OWNER ": %s: a bone of the skeleton expected, got %s", what, ikl_describe(L, idx));
  return bone;
}

/* A point hung from a bone: { bone = ..., offset = vec3 }. */
static void read_point(lua_State *L, int sk_idx, const ik_skeleton *sk, int t, const char *what, int *bone,
                       ik_vec3 *offset) {
  t = lua_absindex(L, t);
  if (!lua_istable(L, t)) {
    ikl_fielderror(L, OWNER, what, "{bone = ..., offset = vec3} or nil", t);
    return;
  }
  ikl_check_keys(L, t, OWNER, point_keys, "bone, offset");
  lua_getfield(L, t, "bone");
  *bone = bone_at(L, sk_idx, -1, sk, what);
  lua_pop(L, 1);
  *offset = ik_vec3_zero();
  ikl_optfield_vec3(L, t, OWNER, "offset", offset);
}

static void read_foot(lua_State *L, int t, ik_crowd_chain_desc *d) {
  d->has_foot = 1;
  if (lua_toboolean(L, t) && !lua_istable(L, t)) return;
  ikl_check_keys(L, t, OWNER, foot_keys, "ray_height, ray_length, foot_offset, smooth_time, up");
  d->foot.ray_height = ikl_optfield_real(L, t, OWNER, "ray_height", d->foot.ray_height, 0, HUGE_VAL, ">= 0");
  d->foot.ray_length = ikl_optfield_real(L, t, OWNER, "ray_length", d->foot.ray_length, 0, HUGE_VAL, ">= 0");
  d->foot.foot_offset =
      ikl_optfield_real(L, t, OWNER, "foot_offset", d->foot.foot_offset, 0, HUGE_VAL, ">= 0");
  d->foot.smooth_time =
      ikl_optfield_real(L, t, OWNER, "smooth_time", d->foot.smooth_time, 0, HUGE_VAL, ">= 0");
  ikl_optfield_vec3(L, t, OWNER, "up", &d->foot.up);
}

/* Chain `n` (1-based) of the spec, the table at t. */
static void read_chain(lua_State *L, int sk_idx, const ik_skeleton *sk, int t, int n,
                       ik_crowd_chain_desc *d) {
  int i, count;
  t = lua_absindex(L, t);
  ik_crowd_chain_desc_init(d);
  if (!lua_istable(L, t)) luaL_error(L, OWNER ": chain %d: table expected, got %s", n, ikl_typename(L, t));
  ikl_check_keys(L, t, OWNER, chain_keys, "bones, solver, iterations, tolerance, target, pole, foot");
  lua_getfield(L, t, "bones");
  if (!lua_istable(L, -1)) luaL_error(L, OWNER ": chain %d: bad field 'bones' (list of bones expected)", n);
  count = (int)lua_rawlen(L, -1);
  if (count < 2 || count > IK_CROWD_MAX_JOINTS)
    luaL_error(L, OWNER ": chain %d: bad field 'bones' (2..%d bones expected, got %d)", n,
               IK_CROWD_MAX_JOINTS, count);
  d->count = count;
  for (i = 0; i < count; i++) {
    lua_rawgeti(L, -1, i + 1);
    d->bones[i] = bone_at(L, sk_idx, -1, sk, "bones");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_getfield(L, t, "solver");
  if (!lua_isnil(L, -1)) {
    const char *name = lua_tostring(L, -1);
    for (i = 0; name && solver_names[i] && strcmp(name, solver_names[i]) != 0; i++) continue;
    if (!name || !solver_names[i]) ikl_fielderror(L, OWNER, "solver", "fabrik, ccd, two_bone or dls", -1);
    d->solver = i;
  }
  lua_pop(L, 1);
  d->iterations = (int)ikl_optfield_real(L, t, OWNER, "iterations", 10, 1, 10000, "integer in 1..10000");
  d->tolerance = ikl_optfield_real(L, t, OWNER, "tolerance", d->tolerance, 0, HUGE_VAL, "positive number");
  lua_getfield(L, t, "target");
  if (!lua_isnil(L, -1)) read_point(L, sk_idx, sk, -1, "target", &d->target_bone, &d->target_offset);
  lua_pop(L, 1);
  lua_getfield(L, t, "pole");
  if (!lua_isnil(L, -1)) read_point(L, sk_idx, sk, -1, "pole", &d->pole_bone, &d->pole_offset);
  lua_pop(L, 1);
  lua_getfield(L, t, "foot");
  if (lua_toboolean(L, -1)) read_foot(L, lua_gettop(L), d);
  lua_pop(L, 1);
}

/* The uservalue: `names` (view index -> name) and `index` (name -> view index). */
static void name_bones(lua_State *L, int sk_idx, const ik_skeleton *sk, int n) {
  int u;
  lua_createtable(L, 0, 2);
  lua_createtable(L, n, 0);
  lua_createtable(L, 0, n);
  for (u = 1; u <= n; u++) {
    ik_skeleton *bsk;
    int bone;
    lua_getfield(L, sk_idx, "bone");
    lua_pushvalue(L, sk_idx);
    lua_pushinteger(L, u);
    lua_call(L, 2, 1);
    ikl_tobone(L, -1, &bsk, &bone);
    lua_getfield(L, -1, "name");
    lua_pushvalue(L, -1);
    lua_rawseti(L, -5, bone + 1);
    lua_pushinteger(L, bone + 1);
    lua_rawset(L, -4);
    lua_pop(L, 1);
  }
  lua_setfield(L, -3, "index");
  lua_setfield(L, -2, "names");
  (void)sk;
}

/*** A template.
 * @function ik.crowd_template
 * @tparam table spec `skeleton` (an ik.skeleton) and `chains` (a list of chain tables)
 * @treturn ik.crowd_template */
static int template_new(lua_State *L) {
  ik_crowd_chain_desc chains[IK_CROWD_MAX_CHAINS];
  ik_skeleton *sk;
  ik_crowd_template *t;
  ik_error err;
  ik_status st;
  int bone, n, j, sk_idx;
  size_t size;
  void *mem;
  luaL_checktype(L, 1, LUA_TTABLE);
  ikl_check_keys(L, 1, OWNER, spec_keys, "skeleton, chains");
  lua_getfield(L, 1, "skeleton");
  sk_idx = lua_gettop(L);
  lua_getfield(L, sk_idx, "bone");
  if (!lua_isfunction(L, -1)) ikl_fielderror(L, OWNER, "skeleton", "ik.skeleton", sk_idx);
  lua_pushvalue(L, sk_idx);
  lua_pushinteger(L, 1);
  lua_call(L, 2, 1);
  if (!ikl_tobone(L, -1, &sk, &bone)) ikl_fielderror(L, OWNER, "skeleton", "ik.skeleton", sk_idx);
  lua_pop(L, 1);
  lua_getfield(L, 1, "chains");
  if (!lua_istable(L, -1)) ikl_fielderror(L, OWNER, "chains", "list of chains", -1);
  n = (int)lua_rawlen(L, -1);
  if (n < 1 || n > IK_CROWD_MAX_CHAINS)
    luaL_error(L, OWNER ": bad field 'chains' (1..%d chains expected, got %d)", IK_CROWD_MAX_CHAINS, n);
  for (j = 0; j < n; j++) {
    lua_rawgeti(L, -1, j + 1);
    read_chain(L, sk_idx, sk, -1, j + 1, &chains[j]);
    lua_pop(L, 1);
  }
  size = ik_crowd_template_size(ik_skeleton_count(sk));
  mem = ikl_newuserdata(L, size);
  if ((st = ik_crowd_template_init(mem, size, sk, chains, n, &t, &err)) != IK_OK)
    return luaL_error(
        L, OWNER ": chain %d: bad field '%s' (%s)", err.index + 1, err.field,
        st == IK_E_PARAMETER && (strcmp(err.field, "target") == 0 || strcmp(err.field, "pole") == 0)
            ? "it would move with the chain's bones"
            : ik_status_message(st));
  luaL_setmetatable(L, IKL_CROWD_TEMPLATE);
  name_bones(L, sk_idx, sk, ik_skeleton_count(sk));
  ikl_setuservalue(L, -2);
  return 1;
}

/*** The index (1-based) of a bone in the crowd's rotations and positions buffers.
 * @function bone
 * @tparam string name
 * @treturn integer */
static int template_bone(lua_State *L) {
  check(L, 1);
  if (lua_type(L, 2) != LUA_TSTRING) return ikl_typeerror(L, 2, "string");
  ikl_getuservalue(L, 1);
  lua_getfield(L, -1, "index");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  if (lua_isnil(L, -1))
    return luaL_argerror(L, 2, lua_pushfstring(L, "no bone named '%s'", lua_tostring(L, 2)));
  return 1;
}

/*** The names of the bones, in the buffers' order.
 * @function bone_names
 * @treturn {string,...} a new table */
static int template_bone_names(lua_State *L) {
  const ik_crowd_template *t = check(L, 1);
  int i;
  ikl_getuservalue(L, 1);
  lua_getfield(L, -1, "names");
  lua_createtable(L, ik_crowd_template_bones(t), 0);
  for (i = 1; i <= ik_crowd_template_bones(t); i++) {
    lua_rawgeti(L, -2, i);
    lua_rawseti(L, -2, i);
  }
  return 1;
}

/* `bones`, `chains`, `targets`, `passes` (read-only), then methods (the upvalue). */
static int template_index(lua_State *L) {
  const ik_crowd_template *t = check(L, 1);
  const char *key = lua_tostring(L, 2);
  int v = -1;
  if (key && strcmp(key, "bones") == 0) v = ik_crowd_template_bones(t);
  if (key && strcmp(key, "chains") == 0) v = ik_crowd_template_chains(t);
  if (key && strcmp(key, "targets") == 0) v = ik_crowd_template_targets(t);
  if (key && strcmp(key, "passes") == 0) v = ik_crowd_template_passes(t);
  if (v >= 0) {
    lua_pushinteger(L, v);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int template_tostring(lua_State *L) {
  const ik_crowd_template *t = check(L, 1);
  lua_pushfstring(L, OWNER "(%d bones, %d chains)", ik_crowd_template_bones(t), ik_crowd_template_chains(t));
  return 1;
}

static const luaL_Reg meth[] = {{"bone", template_bone}, {"bone_names", template_bone_names}, {NULL, NULL}};
static const luaL_Reg metameth[] = {
    {"__index", template_index}, {"__tostring", template_tostring}, {NULL, NULL}};

void ikl_open_crowd_template(lua_State *L) {
  ikl_createmeta(L, IKL_CROWD_TEMPLATE, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, template_new);
  lua_setfield(L, -2, "crowd_template");
}
