/***
 * Free transforms: `ik.node`, for targets, poles and props. A node may hang from a
 * skeleton bone or another node and then moves with it: parent targets and poles to
 * the character, so they turn with it. Nodes implement the transform contract.
 * @classmod ik.node
 */
#include <string.h>

#include "ik_skeleton.h"
#include "ikl.h"

#define IKL_NODE "ik.node"

/* A node, or a view of another state's node (a rig script's of the host's): at and
 * closed_at point into the node's own fields, or into the other's. */
typedef struct ikl_node {
  ik_node *at;
  const int *closed_at;
  int closed;
  int view;
  ik_node node;
} ikl_node;

static ikl_node *check_node(lua_State *L, int arg) {
  ikl_node *n = (ikl_node *)luaL_checkudata(L, arg, IKL_NODE);
  if (*n->closed_at) luaL_error(L, "attempt to use a closed ik.node");
  return n;
}

const ik_node *ikl_tonode(lua_State *L, int idx) {
  ikl_node *n = (ikl_node *)luaL_testudata(L, idx, IKL_NODE);
  if (!n) return NULL;
  if (*n->closed_at) luaL_error(L, "attempt to use a closed ik.node");
  return n->at;
}

ik_node *ikl_tonode_ref(lua_State *L, int idx, const int **closed) {
  ikl_node *n = (ikl_node *)luaL_testudata(L, idx, IKL_NODE);
  if (!n) return NULL;
  if (*n->closed_at) luaL_error(L, "attempt to use a closed ik.node");
  *closed = n->closed_at;
  return n->at;
}

/* Hangs node (at idx) from the bone, node or nil at p; the uservalue keeps the parent
 * alive. Raises with `arg` naming the caller's argument on a bad parent, changing
 * nothing. The reference is stored before the C parent pointer moves: storing it may
 * raise (out of memory), and the pointer must never name an object nothing keeps alive.
 * The old parent stays referenced, from the stack, until the pointer has left it. */
static void set_parent(lua_State *L, int idx, ikl_node *n, int p, int arg) {
  ik_skeleton *sk = NULL;
  ikl_node *parent = NULL;
  int bone = -1;
  ik_status st;
  idx = lua_absindex(L, idx);
  p = lua_absindex(L, p);
  if (!lua_isnil(L, p) && !ikl_tobone(L, p, &sk, &bone)) {
    if (!luaL_testudata(L, p, IKL_NODE)) ikl_typeerror(L, arg, "ik.bone, ik.node or nil");
    parent = check_node(L, p);
  }
  ikl_getuservalue(L, idx);
  lua_getfield(L, -1, "parent"); /* the old parent, kept on the stack */
  lua_pushvalue(L, p);
  lua_setfield(L, -3, "parent");
  st = sk ? ik_node_set_parent_bone(n->at, sk, bone)
          : ik_node_set_parent_node(n->at, parent ? parent->at : NULL);
  if (st != IK_OK) {
    /* Refused, the pointer unmoved: the old reference goes back (its key exists now, so
     * this allocates nothing). */
    lua_setfield(L, -2, "parent");
    lua_pop(L, 1);
    if (parent) luaL_argerror(L, arg, "a node cannot hang from itself or its own descendant");
    luaL_argerror(L, arg, ik_status_message(st));
  }
  lua_pop(L, 2);
}

/***
 * Makes a node.
 * @function ik.node
 * @tparam[opt] table spec `position` (vec3, default zero), `rotation` (quat, default
 * identity) and `parent` (an ik.bone or ik.node; position and rotation are then
 * relative to it)
 * @treturn ik.node
 * @usage local sk = ik.skeleton{ { name = "hips", position = {0, 1, 0} } }
 * local target = ik.node{ position = {0, 0, 0.5}, parent = sk:bone("hips") }
 * sk:bone("hips"):set_position({2, 1, 0})
 * assert(target:get_position() == ik.vec3(2, 1, 0.5))  -- it followed the hips
 */
static int node_new(lua_State *L) {
  ik_vec3 position = ik_vec3_zero();
  ik_quat rotation = ik_quat_identity();
  ikl_node *n;
  if (!lua_isnoneornil(L, 1)) {
    static const char *const keys[] = {"position", "rotation", "parent", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    ikl_check_keys(L, 1, "ik.node", keys, "position, rotation, parent");
    ikl_optfield_vec3(L, 1, "ik.node", "position", &position);
    lua_getfield(L, 1, "rotation");
    /* Usable as ikl_checkquat has it: a huge component would fail ik_node_init. */
    if (!lua_isnil(L, -1) && (!ikl_toquat(L, -1, &rotation) || !ikl_rotation_usable(rotation)))
      return ikl_fielderror(L, "ik.node", "rotation", "non-zero finite quat", -1);
    lua_pop(L, 1);
  } else {
    lua_settop(L, 0);
    lua_newtable(L);
  }
  n = (ikl_node *)ikl_newuserdata(L, sizeof *n);
  memset(n, 0, sizeof *n);
  n->at = &n->node;
  n->closed_at = &n->closed;
  if (ik_node_init(n->at, position, rotation) != IK_OK) /* not reached: both checked above */
    return luaL_error(L, "ik.node: bad position or rotation");
  luaL_setmetatable(L, IKL_NODE);
  lua_newtable(L);
  ikl_setuservalue(L, -2);
  lua_getfield(L, 1, "parent");
  if (!lua_isnil(L, -1)) {
    ik_skeleton *sk;
    int bone;
    if (!ikl_tobone(L, -1, &sk, &bone) && !luaL_testudata(L, -1, IKL_NODE))
      return ikl_fielderror(L, "ik.node", "parent", "ik.bone or ik.node", -1);
    set_parent(L, -2, n, -1, 1);
  }
  lua_pop(L, 1);
  return 1;
}

/*** World position.
 * @function get_position
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int node_get_position(lua_State *L) {
  ik_vec3 p;
  ik_node_get_world(check_node(L, 1)->at, &p, NULL);
  *ikl_outvec3(L, 2) = p;
  return 1;
}

/*** World rotation.
 * @function get_rotation
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int node_get_rotation(lua_State *L) {
  ik_quat q;
  ik_node_get_world(check_node(L, 1)->at, NULL, &q);
  *ikl_outquat(L, 2) = q;
  return 1;
}

/*** Moves the node to a world position (kept relative to its parent from then on).
 * @function set_position
 * @tparam vec3 p */
static int node_set_position(lua_State *L) {
  ikl_node *n = check_node(L, 1);
  return ikl_checkstatus(L, ik_node_set_world_position(n->at, ikl_checkvec3(L, 2)), 2);
}

/*** Turns the node to a world rotation.
 * @function set_rotation
 * @tparam quat q */
static int node_set_rotation(lua_State *L) {
  ikl_node *n = check_node(L, 1);
  return ikl_checkstatus(L, ik_node_set_world_rotation(n->at, ikl_checkrotation(L, 2)), 2);
}

/*** Position relative to the parent.
 * @function get_local_position
 * @tparam[opt] ik.vec3 out written and returned instead of a new vector
 * @treturn ik.vec3 */
static int node_get_local_position(lua_State *L) {
  ik_vec3 p;
  ik_node_get_local(check_node(L, 1)->at, &p, NULL);
  *ikl_outvec3(L, 2) = p;
  return 1;
}

/*** Rotation relative to the parent.
 * @function get_local_rotation
 * @tparam[opt] ik.quat out written and returned instead of a new quaternion
 * @treturn ik.quat */
static int node_get_local_rotation(lua_State *L) {
  ik_quat q;
  ik_node_get_local(check_node(L, 1)->at, NULL, &q);
  *ikl_outquat(L, 2) = q;
  return 1;
}

/*** Sets the position relative to the parent.
 * @function set_local_position
 * @tparam vec3 p */
static int node_set_local_position(lua_State *L) {
  ikl_node *n = check_node(L, 1);
  return ikl_checkstatus(L, ik_node_set_local_position(n->at, ikl_checkvec3(L, 2)), 2);
}

/*** Sets the rotation relative to the parent.
 * @function set_local_rotation
 * @tparam quat q */
static int node_set_local_rotation(lua_State *L) {
  ikl_node *n = check_node(L, 1);
  return ikl_checkstatus(L, ik_node_set_local_rotation(n->at, ikl_checkrotation(L, 2)), 2);
}

/*** Hangs the node from a bone, another node, or nothing (nil). Its local transform
 * is kept, so it moves to the same offset from the new parent.
 * @function set_parent
 * @tparam ?ik.bone|ik.node parent */
static int node_set_parent(lua_State *L) {
  ikl_node *n = check_node(L, 1);
  if (n->view)
    return luaL_error(L, "the scene's objects are the host's: rig scripts cannot change their parents");
  lua_settop(L, 2);
  set_parent(L, 1, n, 2, 2);
  return 0;
}

/*** Closes the node: later use raises.
 * @function close */
static int node_close(lua_State *L) {
  ikl_node *n = (ikl_node *)luaL_checkudata(L, 1, IKL_NODE);
  if (n->view) return luaL_error(L, IKL_HOST_OBJECT);
  n->closed = 1;
  return 0;
}

static int node_gc(lua_State *L) {
  ((ikl_node *)luaL_checkudata(L, 1, IKL_NODE))->closed = 1;
  return 0;
}

static int node_index(lua_State *L) {
  const char *key = lua_tostring(L, 2);
  check_node(L, 1);
  if (key && strcmp(key, "parent") == 0) {
    ikl_getuservalue(L, 1);
    lua_getfield(L, -1, "parent");
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int node_newindex(lua_State *L) {
  check_node(L, 1);
  return ikl_readonly(L, IKL_NODE, "use set_parent, set_position, set_rotation, ...");
}

static int node_tostring(lua_State *L) {
  ikl_node *n = (ikl_node *)luaL_checkudata(L, 1, IKL_NODE);
  ik_vec3 p;
  if (*n->closed_at) {
    lua_pushliteral(L, "ik.node (closed)");
    return 1;
  }
  ik_node_get_world(n->at, &p, NULL);
  lua_pushstring(L, "ik.node(");
  ikl_pushnumstr(L, (lua_Number)p.x);
  lua_pushstring(L, ", ");
  ikl_pushnumstr(L, (lua_Number)p.y);
  lua_pushstring(L, ", ");
  ikl_pushnumstr(L, (lua_Number)p.z);
  lua_pushstring(L, ")");
  lua_concat(L, 7);
  return 1;
}

static const luaL_Reg meth[] = {{"get_position", node_get_position},
                                {"get_rotation", node_get_rotation},
                                {"set_position", node_set_position},
                                {"set_rotation", node_set_rotation},
                                {"get_local_position", node_get_local_position},
                                {"get_local_rotation", node_get_local_rotation},
                                {"set_local_position", node_set_local_position},
                                {"set_local_rotation", node_set_local_rotation},
                                {"set_parent", node_set_parent},
                                {"close", node_close},
                                {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", node_index},       {"__newindex", node_newindex},
                                    {"__tostring", node_tostring}, {"__gc", node_gc},
                                    {"__close", node_close},       {NULL, NULL}};

int ikl_node_view(lua_State *from, int idx, lua_State *to) {
  ikl_node *h = (ikl_node *)luaL_testudata(from, idx, IKL_NODE), *n;
  if (!h) return 0;
  n = (ikl_node *)ikl_newuserdata(to, sizeof *n);
  memset(n, 0, sizeof *n);
  n->at = h->at;
  n->closed_at = h->closed_at;
  n->view = 1;
  luaL_setmetatable(to, IKL_NODE);
  lua_newtable(to);
  ikl_setuservalue(to, -2);
  return 1;
}

void ikl_open_node(lua_State *L) {
  ikl_createmeta(L, IKL_NODE, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, node_new);
  lua_setfield(L, -2, "node");
}
