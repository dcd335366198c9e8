/***
 * Import: `ik.import` reads a glTF 2.0 (.gltf, .glb) or VRM (0.x, 1.0) file into
 * `ik.skeleton`s with their rest pose and names, and its humanoid bone map.
 *
 * A bad argument raises; a file that cannot be read or is not valid glTF returns
 * `nil, message, kind` (kind "io", "format", "limit" or "memory"), the message naming
 * the JSON path at fault. docs/import.md has the conventions.
 * @module ik.import
 */
#include <string.h>

#include "ik_gltf.h"
#include "ikl.h"

#define IKL_GLTF_BOX "ik_import.box" /* internal: never handed to Lua code */

/* Owns the C result while the Lua tables are built: freed by __gc if building raises. */
typedef struct gltf_box {
  ik_gltf *g;
} gltf_box;

static int box_gc(lua_State *L) {
  gltf_box *b = (gltf_box *)luaL_checkudata(L, 1, IKL_GLTF_BOX);
  ik_gltf_free(b->g);
  b->g = NULL;
  return 0;
}

static const char *status_kind(ik_gltf_status st) {
  switch (st) {
    case IK_GLTF_E_IO:
      return "io";
    case IK_GLTF_E_LIMIT:
      return "limit";
    case IK_GLTF_E_MEMORY:
      return "memory";
    default:
      return "format";
  }
}

/* A limit field: an integer in 1..2^31-1, or def when nil. */
static lua_Number opt_limit(lua_State *L, int t, const char *owner, const char *name, lua_Number def) {
  lua_Number n;
  lua_getfield(L, t, name);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return def;
  }
  n = lua_tonumber(L, -1);
  if (lua_type(L, -1) != LUA_TNUMBER || !(n >= 1 && n <= 2147483647.0) || n != (lua_Number)(long)n)
    ikl_fielderror(L, owner, name, "integer in 1..2^31-1", -1);
  lua_pop(L, 1);
  return n;
}

/* Reads the options table at arg (nil: defaults); base_dir only for strings. */
static void read_options(lua_State *L, int arg, const char *fname, int with_base, ik_gltf_options *opt,
                         const char **base_dir) {
  static const char *const keys[] = {"max_file_bytes", "max_json_bytes", "max_json_values",
                                     "max_nodes",      "base_dir",       NULL};
  static const char *const keys_file[] = {"max_file_bytes", "max_json_bytes", "max_json_values", "max_nodes",
                                          NULL};
  ik_gltf_options_init(opt);
  *base_dir = NULL;
  if (lua_isnoneornil(L, arg)) return;
  if (!lua_istable(L, arg)) ikl_typeerror(L, arg, "table");
  ikl_check_keys(L, arg, fname, with_base ? keys : keys_file,
                 with_base ? "max_file_bytes, max_json_bytes, max_json_values, max_nodes, base_dir"
                           : "max_file_bytes, max_json_bytes, max_json_values, max_nodes");
  opt->max_file_bytes = (size_t)opt_limit(L, arg, fname, "max_file_bytes", (lua_Number)opt->max_file_bytes);
  opt->max_json_bytes = (size_t)opt_limit(L, arg, fname, "max_json_bytes", (lua_Number)opt->max_json_bytes);
  opt->max_json_values =
      (size_t)opt_limit(L, arg, fname, "max_json_values", (lua_Number)opt->max_json_values);
  opt->max_nodes = (int)opt_limit(L, arg, fname, "max_nodes", (lua_Number)opt->max_nodes);
  if (with_base) {
    lua_getfield(L, arg, "base_dir");
    if (!lua_isnil(L, -1)) {
      if (lua_type(L, -1) != LUA_TSTRING) ikl_fielderror(L, fname, "base_dir", "string", -1);
      *base_dir = lua_tostring(L, -1);
    }
    lua_pop(L, 1); /* the string stays alive in the options table */
  }
}

/* Pushes an ik.skeleton of the bones of `skin` (ik_gltf_skeleton_descs), built through
 * the ik.skeleton constructor (upvalue 1), or nil when it has no bones. */
static void push_skeleton(lua_State *L, const ik_gltf *g, int skin) {
  int n = ik_gltf_skeleton_bone_count(g, skin), i;
  ik_bone_desc *descs;
  ik_gltf_error err;
  if (n < 1) {
    lua_pushnil(L);
    return;
  }
  descs = (ik_bone_desc *)ikl_newuserdata0(L, sizeof(ik_bone_desc) * (size_t)n);
  if (ik_gltf_skeleton_descs(g, skin, descs, NULL, n, &err) != IK_GLTF_OK) {
    /* {message, kind}: caught by finish's pcall and returned as nil, message, kind */
    lua_createtable(L, 2, 0);
    lua_pushstring(L, err.message);
    lua_rawseti(L, -2, 1);
    lua_pushstring(L, status_kind(err.status));
    lua_rawseti(L, -2, 2);
    lua_error(L);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, descs[i].name);
    lua_setfield(L, -2, "name");
    if (descs[i].parent >= 0) {
      lua_pushstring(L, descs[descs[i].parent].name);
      lua_setfield(L, -2, "parent");
    }
    ikl_pushvec3(L, descs[i].position);
    lua_setfield(L, -2, "position");
    ikl_pushquat(L, descs[i].rotation);
    lua_setfield(L, -2, "rotation");
    lua_rawseti(L, -2, i + 1);
  }
  lua_call(L, 1, 1);
  lua_replace(L, -2); /* drop the scratch descs */
}

/* Builds the model table from the box at index 1 (a protected call: errors become
 * nil, message). */
static int build_model(lua_State *L) {
  const ik_gltf *g = ((gltf_box *)lua_touserdata(L, 1))->g;
  int s, r, m;
  ik_gltf_vrm vrm = ik_gltf_vrm_version(g);
  lua_createtable(L, 0, 6);
  m = lua_gettop(L);
  push_skeleton(L, g, IK_GLTF_ALL_JOINTS);
  lua_setfield(L, m, "skeleton");
  lua_createtable(L, ik_gltf_skin_count(g), 0);
  for (s = 0; s < ik_gltf_skin_count(g); s++) {
    int j;
    lua_createtable(L, 0, 3);
    if (ik_gltf_skin_name(g, s)) {
      lua_pushstring(L, ik_gltf_skin_name(g, s));
      lua_setfield(L, -2, "name");
    }
    push_skeleton(L, g, s);
    lua_setfield(L, -2, "skeleton");
    lua_createtable(L, ik_gltf_skin_joint_count(g, s), 0);
    for (j = 0; j < ik_gltf_skin_joint_count(g, s); j++) {
      lua_pushstring(L, ik_gltf_node_name(g, ik_gltf_skin_joint(g, s, j)));
      lua_rawseti(L, -2, j + 1);
    }
    lua_setfield(L, -2, "joints");
    lua_rawseti(L, -2, s + 1);
  }
  lua_setfield(L, m, "skins");
  lua_newtable(L); /* humanoid: role -> ik.bone */
  lua_newtable(L); /* humanoid_names: role -> name */
  lua_getfield(L, m, "skeleton");
  for (r = 0; r < IK_HUMANOID_BONE_COUNT; r++) {
    int node = ik_gltf_humanoid_node(g, r);
    if (node < 0) continue;
    lua_pushstring(L, ik_gltf_node_name(g, node));
    lua_setfield(L, -3, ik_humanoid_bone_name(r));
    lua_getfield(L, -1, "bone"); /* skeleton:bone(name): every humanoid node is in it */
    lua_pushvalue(L, -2);
    lua_pushstring(L, ik_gltf_node_name(g, node));
    lua_call(L, 2, 1);
    lua_setfield(L, -4, ik_humanoid_bone_name(r));
  }
  lua_pop(L, 1);
  lua_setfield(L, m, "humanoid_names");
  lua_setfield(L, m, "humanoid");
  lua_newtable(L); /* vertex_bounds: name -> {min, max, count} */
  for (r = 0; r < ik_gltf_node_count(g); r++) {
    double lo[3], hi[3];
    int n = ik_gltf_node_vertex_bounds(g, r, lo, hi);
    if (n == 0) continue;
    lua_createtable(L, 0, 3);
    ikl_pushvec3(L, ik_vec3_make((ik_real)lo[0], (ik_real)lo[1], (ik_real)lo[2]));
    lua_setfield(L, -2, "min");
    ikl_pushvec3(L, ik_vec3_make((ik_real)hi[0], (ik_real)hi[1], (ik_real)hi[2]));
    lua_setfield(L, -2, "max");
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "count");
    lua_setfield(L, -2, ik_gltf_node_name(g, r));
  }
  lua_setfield(L, m, "vertex_bounds");
  {
    double off[3];
    int node = ik_gltf_look_offset(g, off);
    if (node >= 0) { /* look_offset: {bone = name, offset = vec3}, the VRM's eye point */
      lua_createtable(L, 0, 2);
      lua_pushstring(L, ik_gltf_node_name(g, node));
      lua_setfield(L, -2, "bone");
      ikl_pushvec3(L, ik_vec3_make((ik_real)off[0], (ik_real)off[1], (ik_real)off[2]));
      lua_setfield(L, -2, "offset");
      lua_setfield(L, m, "look_offset");
    }
  }
  if (vrm != IK_GLTF_VRM_NONE) {
    lua_pushstring(L, vrm == IK_GLTF_VRM_0 ? "0.x" : "1.0");
    lua_setfield(L, m, "vrm");
  }
  ikl_pushvec3(L, ik_vec3_make(0, 0, vrm == IK_GLTF_VRM_0 ? -1 : 1));
  lua_setfield(L, m, "forward");
  return 1;
}

/* Loads (path, or data with base_dir), then builds; returns the model or nil, message,
 * kind. */
static int finish(lua_State *L, ik_gltf_status st, ik_gltf *g, const ik_gltf_error *err) {
  gltf_box *box;
  int rc;
  if (st != IK_GLTF_OK) {
    lua_pushnil(L);
    lua_pushstring(L, err->message);
    lua_pushstring(L, status_kind(st));
    return 3;
  }
  box = (gltf_box *)ikl_newuserdata(L, sizeof *box);
  box->g = g;
  luaL_setmetatable(L, IKL_GLTF_BOX);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushcclosure(L, build_model, 1);
  lua_pushvalue(L, -2);
  rc = lua_pcall(L, 1, 1, 0);
  ik_gltf_free(box->g);
  box->g = NULL;
  if (rc == 0) return 1;
  lua_pushnil(L);
  if (lua_istable(L, -2)) {
    lua_rawgeti(L, -2, 1);
    lua_rawgeti(L, -3, 2);
  } else { /* out of memory, or (not reached) ik.skeleton refusing what the importer made */
    lua_pushvalue(L, -2);
    lua_pushstring(L, rc == LUA_ERRMEM ? "memory" : "format");
  }
  return 3;
}

/***
 * Reads a glTF 2.0 or VRM file.
 *
 * Returns a model table:
 *
 * - `skeleton`: an `ik.skeleton` of every skin's joints and every humanoid bone (every
 *   node when the file has neither), names as in the file (made unique);
 * - `skins`: one `{name =, skeleton =, joints = {names}}` per skin;
 * - `humanoid`: role (`hips`, `spine`, `chest`, `upperChest`, `neck`, `head`, `leftEye`,
 *   `rightEye`, `leftShoulder`, `leftUpperArm`, `leftLowerArm`, `leftHand`, the same for
 *   `right`, `leftUpperLeg`, `leftLowerLeg`, `leftFoot`, `leftToes`, and `right`) ->
 *   `ik.bone` of `skeleton`; empty without a VRM map;
 * - `humanoid_names`: role -> bone name;
 * - `vertex_bounds`: bone name -> `{min = ik.vec3, max = ik.vec3, count = n}`, the
 *   world-space box at rest of the skinned vertices that follow that bone most (bones no
 *   vertex follows are absent): a foot's lowest point is its sole;
 * - `look_offset`: `{bone = name, offset = ik.vec3}`, the VRM's eye point in that bone's
 *   space (VRM 1.0 `lookAt.offsetFromHeadBone`, VRM 0.x `firstPerson.firstPersonBoneOffset`),
 *   or nil;
 * - `vrm`: `"0.x"`, `"1.0"` or nil;
 * - `forward`: the way the model faces, `ik.vec3(0, 0, 1)` (glTF, VRM 1.0) or
 *   `(0, 0, -1)` (VRM 0.x).
 * @function ik.import
 * @tparam string path a .gltf, .glb or .vrm file; external buffers are found next to it
 * @tparam[opt] table opts limits: `max_file_bytes`, `max_json_bytes`, `max_json_values`,
 *   `max_nodes`
 * @return the model, or nil, message, kind
 * @usage local model = assert(ik.import("tests/data/characters/vrm1_tpose.vrm"))
 * local hand = model.humanoid.leftHand -- an ik.bone of model.skeleton
 * assert(hand.name == "LeftHand" and model.vrm == "1.0")
 * assert(math.abs(hand:get_position().x - 0.70) < 1e-6)
 * local foot = model.vertex_bounds[model.humanoid_names.leftFoot]
 * assert(foot.min.y < model.humanoid.leftFoot:get_position().y + 1e-6)
 * local none, err, kind = ik.import("no/such.glb")
 * assert(none == nil and kind == "io" and err:find("cannot open", 1, true))
 */
static int import_file(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  ik_gltf_options opt;
  const char *base_dir;
  ik_gltf *g = NULL;
  ik_gltf_error err;
  ik_gltf_status st;
  if (len == 0 || strlen(path) != len)
    return luaL_argerror(L, 1, "file path expected, got an empty string or one with a zero byte");
  read_options(L, 2, "ik.import: opts", 0, &opt, &base_dir);
  st = ik_gltf_load_file(path, &opt, &g, &err);
  return finish(L, st, g, &err);
}

/***
 * Reads a glTF 2.0 or VRM file's contents (the bytes of a .glb, or the JSON text of a
 * .gltf), as `ik.import` does.
 * @function ik.import_string
 * @tparam string data
 * @tparam[opt] table opts as `ik.import`'s, and `base_dir`, where external buffers are
 *   found (without it only data: URIs and a GLB's own binary chunk are read)
 * @return the model, or nil, message, kind
 * @usage local model, err = ik.import_string('{"asset":{"version":"2.0"},"nodes":[{"rotation":[0,0,1]}]}')
 * assert(model == nil and err == "nodes[0].rotation: expected 4 numbers")
 */
static int import_string(lua_State *L) {
  size_t size;
  const char *data = luaL_checklstring(L, 1, &size);
  ik_gltf_options opt;
  const char *base_dir;
  ik_gltf *g = NULL;
  ik_gltf_error err;
  ik_gltf_status st;
  read_options(L, 2, "ik.import_string: opts", 1, &opt, &base_dir);
  st = ik_gltf_load_memory(data, size, base_dir, &opt, &g, &err);
  return finish(L, st, g, &err);
}

/***
 * The humanoid roles `ik.import` maps, in order: `hips`, `spine`, `chest`, `upperChest`,
 * `neck`, `head`, `leftEye`, `rightEye`, `leftShoulder`, `leftUpperArm`, `leftLowerArm`,
 * `leftHand`, the same four for `right`, `leftUpperLeg`, `leftLowerLeg`, `leftFoot`,
 * `leftToes`, the same four for `right` (VRM's names).
 * @table ik.humanoid_bones
 */
static void push_roles(lua_State *L) {
  int r;
  lua_createtable(L, IK_HUMANOID_BONE_COUNT, 0);
  for (r = 0; r < IK_HUMANOID_BONE_COUNT; r++) {
    lua_pushstring(L, ik_humanoid_bone_name(r));
    lua_rawseti(L, -2, r + 1);
  }
}

void ikl_open_import(lua_State *L) {
  luaL_newmetatable(L, IKL_GLTF_BOX);
  lua_pushcfunction(L, box_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_getfield(L, -1, "skeleton"); /* ikl_open_skeleton ran first */
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, import_file, 1);
  lua_setfield(L, -3, "import");
  lua_pushcclosure(L, import_string, 1);
  lua_setfield(L, -2, "import_string");
  push_roles(L);
  lua_setfield(L, -2, "humanoid_bones");
}
