/***
 * Trees: `ik.tree`, joints with several end effectors solved together (FABRIK's
 * multiple-effector scheme, ik_tree.h): a hand, a spine with two arms, a gripper. One
 * userdata holds the whole tree, and `tree:solve()` is one C call that allocates nothing.
 *
 * The tree is its joints, root first, and each joint's parent (an earlier joint). The
 * joints with no children are the end effectors, numbered 1, 2, ... in joint order
 * (`tree:effector_joint(e)` names the joint). A branch runs from the root, or from a
 * joint with several children, to the next effector or joint with several children; a
 * branch is named by its last joint (`set_pole`, `set_branch_iterations`).
 *
 * Fields, read and write (a bad value raises and changes nothing):
 *
 * - `iterations`: most tree sweeps a solve runs, integer in 1..10000 (default 10). A
 *   solve's work is bounded: iterations times (joints + branches) stays within 2^20,
 *   so a big tree allows fewer.
 * - `tolerance`: distance under which an effector counts as there, >= 0 (default 1e-3).
 * - `deterministic`: true (a point tree's default) to start every solve from the pose
 *   given, false (a bone tree's default) to start from the last solution (warm start);
 *   a bone tree that is not also turns its bones on from their last result, so none
 *   spins about its length (ik_bone_tree.h).
 *
 * Read only: `count` (joints, also `#tree`), `effectors`.
 * @classmod ik.tree
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ik_bone_tree.h"
#include "ikl.h"

#define IKL_TREE "ik.tree"

static const char *const spec_keys[] = {"positions", "parents",       "bones", "iterations",
                                        "tolerance", "deterministic", NULL};
#define SPEC_LIST "positions, parents, bones, iterations, tolerance, deterministic"
#define FIELD_LIST "iterations, tolerance, deterministic"

/* Uservalue keys: constraint of the bone ending at joint j at j; pole of the branch
 * ending at joint j at -j. */

static ik_bone_tree *check_open(lua_State *L, int arg) {
  ik_bone_tree *t = (ik_bone_tree *)luaL_checkudata(L, arg, IKL_TREE);
  if (t->closed) luaL_error(L, "attempt to use a closed ik.tree");
  return t;
}

/* Most sweeps a solve of t may run: IKL_SOLVE_WORK joint moves (a sweep moves each
 * branch's joints twice, a sub-base once more), at most IKL_MAX_ITERATIONS. */
static int most_iterations(int joints, int branches) {
  const double most = (double)IKL_SOLVE_WORK / (double)(joints + branches);
  return most >= IKL_MAX_ITERATIONS ? IKL_MAX_ITERATIONS : (int)most;
}

static int check_count(lua_State *L, int v, const char *field, int lo, int most) {
  const lua_Number n = lua_tonumber(L, v);
  if (lua_type(L, v) != LUA_TNUMBER || !(n >= lo && n <= most && n == floor(n))) {
    char expected[48];
    snprintf(expected, sizeof expected, "integer in %d..%d", lo, most);
    ikl_fielderror(L, IKL_TREE, field, expected, v);
  }
  return (int)n;
}

/* Sets field `key` from the value at v (absolute), or raises. */
static void set_field(lua_State *L, ik_bone_tree *t, const char *key, int v) {
  if (strcmp(key, "iterations") == 0) {
    t->iterations = check_count(L, v, "iterations", 1, most_iterations(t->joints, t->branches));
  } else if (strcmp(key, "tolerance") == 0) {
    const lua_Number n = lua_tonumber(L, v);
    if (lua_type(L, v) != LUA_TNUMBER || !(n >= 0) || !ikl_is_usable(n))
      ikl_fielderror(L, IKL_TREE, "tolerance", "non-negative number", v);
    t->tolerance = (ik_real)n;
  } else if (strcmp(key, "deterministic") == 0) {
    if (!lua_isboolean(L, v)) ikl_fielderror(L, IKL_TREE, "deterministic", "boolean", v);
    t->deterministic = lua_toboolean(L, v);
  } else {
    luaL_error(L, IKL_TREE ": no field '%s' (fields: " FIELD_LIST ")", key);
  }
}

/* Reads spec.parents (1-based, 0 for the root) into the 0-based ints at out. */
static void read_parents(lua_State *L, int n, int *out) {
  int j;
  lua_getfield(L, 1, "parents");
  if (!lua_istable(L, -1)) ikl_fielderror(L, IKL_TREE, "parents", "list of joint indices", lua_gettop(L));
  if (lua_rawlen(L, -1) != (size_t)n)
    luaL_error(L, IKL_TREE ": bad field 'parents' (%d entries expected, one per joint, got %d)", n,
               (int)lua_rawlen(L, -1));
  for (j = 0; j < n; j++) {
    lua_Number p;
    lua_rawgeti(L, -1, j + 1);
    p = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || p != floor(p) || !(j == 0 ? p == 0 : (p >= 1 && p <= j)))
      luaL_error(L, IKL_TREE ": bad field 'parents' (entry %d: %s expected, got %s)", j + 1,
                 j == 0 ? "0 (joint 1 is the root)" : lua_pushfstring(L, "a joint in 1..%d", j),
                 ikl_describe(L, -1));
    out[j] = (int)p - 1;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Reads spec.positions (n vec3-likes) into out. */
static void read_positions(lua_State *L, int n, ik_vec3 *out) {
  int j;
  lua_getfield(L, 1, "positions");
  for (j = 0; j < n; j++) {
    lua_rawgeti(L, -1, j + 1);
    if (!ikl_tovec3(L, -1, &out[j]))
      luaL_error(L, IKL_TREE ": bad field 'positions' (entry %d: vec3 expected, got %s)", j + 1,
                 ikl_describe(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The bound tree's bones, read from spec.bones (n entries) into bones; all of one
 * skeleton, returned in *sk with its closed flag in *closed. */
static void read_bones(lua_State *L, int n, int *bones, ik_skeleton **sk, const int **closed) {
  int j;
  lua_getfield(L, 1, "bones");
  for (j = 0; j < n; j++) {
    ik_skeleton *s;
    const int *c;
    lua_rawgeti(L, -1, j + 1);
    if (!ikl_tobone_ref(L, -1, &s, &bones[j], &c))
      luaL_error(L, IKL_TREE ": bad field 'bones' (entry %d: ik.bone expected, got %s)", j + 1,
                 ikl_describe(L, -1));
    if (j == 0) {
      *sk = s;
      *closed = c;
    } else if (s != *sk) {
      luaL_error(L, IKL_TREE ": bad field 'bones' (entry %d: a bone of another skeleton than entry 1's)",
                 j + 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The parents of the bones, as the skeleton has them, or raises. */
static void bone_parents(lua_State *L, ik_skeleton *sk, int n, const int *bones, int *parents) {
  int *scratch = (int *)lua_newuserdata(L, (size_t)ik_skeleton_count(sk) * sizeof(int));
  int bad = 0, why = 0, other = 0;
  static const char *const problems[] = {
      "",
      "",
      "the same bone as entry %d",
      "it hangs from entry %d: the root must come first",
      "it hangs from no bone of the list: every bone but the first must hang from an earlier one",
      "it hangs from entry %d, which must come before it"};
  if (ik_bone_tree_parents_of(sk, bones, n, parents, scratch, &bad, &why, &other) != IK_OK)
    luaL_error(L, IKL_TREE ": bad field 'bones' (entry %d: %s)", bad + 1,
               lua_pushfstring(L, problems[why], other + 1));
  lua_pop(L, 1);
}

/***
 * Makes a tree from joint positions and parent indices, or from bones.
 * @function ik.tree
 * @tparam table spec either `positions` (list of vec3, root first, at least 2) and
 *   `parents` (one per joint: 0 for the root, else an earlier joint's index), or `bones`
 *   (a list of ik.bone of one skeleton, the root first, each after the bone it hangs
 *   from: the parents are the skeleton's), and the fields above. A bone tree reads its
 *   bones at each solve and turns them (ik_bone_tree.h), from the bones as read or, not
 *   deterministic, from its last solution laid on them.
 * @treturn ik.tree
 * @usage -- a Y: a trunk of two bones, two arms of two bones
 * local y = ik.tree{
 *   positions = { {0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {0.5, 2.5, 0}, {1, 3, 0},
 *                 {-0.5, 2.5, 0}, {-1, 3, 0} },
 *   parents = { 0, 1, 2, 3, 4, 3, 6 },
 *   iterations = 50,
 * }
 * assert(y.effectors == 2 and y:effector_joint(2) == 7)
 * local reached, d1, d2 = y:solve({1, 2.5, 0.5}, {-1, 2.2, -0.3})
 * assert(reached and d1 <= 1e-3 and d2 <= 1e-3)
 * @usage -- a body on bones: hips, spine, chest, and arms from rigid shoulders
 * local sk = ik.skeleton{
 *   { name = "hips" }, { name = "spine", parent = "hips", position = {0, 1, 0} },
 *   { name = "chest", parent = "spine", position = {0, 1, 0} },
 *   { name = "l_shoulder", parent = "chest", position = {0.3, 0.2, 0} },
 *   { name = "l_elbow", parent = "l_shoulder", position = {0.5, 0, 0} },
 *   { name = "l_hand", parent = "l_elbow", position = {0.5, 0, 0} },
 *   { name = "r_shoulder", parent = "chest", position = {-0.3, 0.2, 0} },
 *   { name = "r_elbow", parent = "r_shoulder", position = {-0.5, 0, 0} },
 *   { name = "r_hand", parent = "r_elbow", position = {-0.5, 0, 0} },
 * }
 * local body = ik.tree{ bones = sk:bones(), iterations = 100 }
 * local target = ik.vec3(0.9, 2.4, 0.5)
 * local reached = body:solve(target, {-0.8, 2.0, 0.4})
 * assert(reached and sk:bone("l_hand"):get_position():distance(target) <= 1e-3)
 */
static int tree_new(lua_State *L) {
  ik_bone_tree *t;
  int n, bad = 0, bound, *parents, *bones = NULL;
  ik_skeleton *sk = NULL;
  const int *closed = NULL;
  ik_vec3 *pose;
  ik_status st;
  size_t len;
  const char *list;
  luaL_checktype(L, 1, LUA_TTABLE);
  ikl_check_keys(L, 1, IKL_TREE, spec_keys, SPEC_LIST);
  lua_getfield(L, 1, "bones");
  bound = !lua_isnil(L, -1);
  lua_pop(L, 1);
  list = bound ? "bones" : "positions";
  if (bound) {
    lua_getfield(L, 1, "positions");
    lua_getfield(L, 1, "parents");
    if (!lua_isnil(L, -1) || !lua_isnil(L, -2))
      return luaL_error(L, IKL_TREE ": give either 'bones' or 'positions' and 'parents', not both");
    lua_pop(L, 2);
  }
  lua_getfield(L, 1, list);
  if (!lua_istable(L, -1))
    return ikl_fielderror(L, IKL_TREE, list, bound ? "list of ik.bone" : "list of vec3", lua_gettop(L));
  len = lua_rawlen(L, -1);
  lua_pop(L, 1);
  if (len < 2)
    return luaL_error(L, IKL_TREE ": bad field '%s' (at least 2 joints expected, got %d)", list, (int)len);
  if (len > (size_t)IKL_SOLVE_WORK / 2)
    return luaL_error(L, IKL_TREE ": bad field '%s' (at most %d joints)", list, (int)(IKL_SOLVE_WORK / 2));
  n = (int)len;
  /* Scratch for the spec, in userdata the collector takes back: an error below leaks
   * nothing. */
  parents = (int *)lua_newuserdata(L, (size_t)n * sizeof(int));
  pose = (ik_vec3 *)lua_newuserdata(L, (size_t)n * sizeof(ik_vec3));
  if (bound) {
    bones = (int *)lua_newuserdata(L, (size_t)n * sizeof(int));
    read_bones(L, n, bones, &sk, &closed);
    bone_parents(L, sk, n, bones, parents);
  } else {
    read_parents(L, n, parents);
    read_positions(L, n, pose);
  }
  t = ik_bone_tree_init(ikl_newuserdata(L, ik_bone_tree_size(n, bound)), n, parents, bound);
  st = bound ? ik_bone_tree_set_bones(t, sk, bones, closed, &bad) : ik_bone_tree_set_points(t, pose, &bad);
  if (st == IK_E_BONE_LENGTH)
    return luaL_error(L, IKL_TREE ": bad field '%s' (joint %d is on its parent, joint %d)", list, bad + 1,
                      parents[bad] + 1);
  if (st == IK_E_NOT_FINITE || st == IK_E_RANGE)
    return luaL_error(
        L, IKL_TREE ": bad field '%s' (%s)", list,
        bad >= 0
            ? lua_pushfstring(L, "entry %d: finite vec3 expected, got NaN, inf or a huge component", bad + 1)
            : "the tree reaches too far");
  luaL_setmetatable(L, IKL_TREE);
  lua_newtable(L);
  if (bound) { /* the bones, kept alive (and their skeleton) while the tree is */
    int j;
    lua_createtable(L, n, 0);
    lua_getfield(L, 1, "bones");
    for (j = 1; j <= n; j++) {
      lua_rawgeti(L, -1, j);
      lua_rawseti(L, -3, j);
    }
    lua_pop(L, 1);
    lua_setfield(L, -2, "bones");
  }
  ikl_setuservalue(L, -2);
  {
    const int ti = lua_gettop(L);
    static const char *const fields[] = {"iterations", "tolerance", "deterministic", NULL};
    int i;
    /* The default may be more than a big tree is allowed. */
    if (t->iterations > most_iterations(t->joints, t->branches))
      t->iterations = most_iterations(t->joints, t->branches);
    for (i = 0; fields[i]; i++) {
      lua_getfield(L, 1, fields[i]);
      if (!lua_isnil(L, -1)) set_field(L, t, fields[i], lua_gettop(L));
      lua_pop(L, 1);
    }
    lua_settop(L, ti);
  }
  return 1;
}

static int check_effector(lua_State *L, const ik_bone_tree *t, int arg) {
  return ikl_checkindex(L, arg, t->effectors);
}

/***
 * Sets effector e's target.
 * @function set_target
 * @tparam integer e effector, 1 .. tree.effectors
 * @tparam vec3 target
 * @usage local t = ik.tree{ positions = { {0, 0, 0}, {0, 1, 0}, {1, 1, 0} }, parents = { 0, 1, 2 } }
 * t:set_target(1, {1, 0.5, 0})
 * assert(t:target(1) == ik.vec3(1, 0.5, 0))
 */
static int tree_set_target(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int e = check_effector(L, t, 2);
  ik_bone_tree_set_target(t, e, ikl_checkvec3(L, 3));
  return 0;
}

/***
 * Effector e's target.
 * @function target
 * @tparam integer e effector
 * @tparam[opt] ik.vec3 out written and returned instead of a new vec3
 * @treturn ik.vec3
 */
static int tree_target(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int e = check_effector(L, t, 2);
  *ikl_outvec3(L, 3) = t->branch[t->effector_branch[e]].target;
  return 1;
}

/***
 * Sets effector e's weight: how much it counts against the others when they cannot all
 * be reached (a heavier one ends nearer its target); 0 ignores it.
 * @function set_weight
 * @tparam integer e effector
 * @tparam number w in [0, 1] (default 1)
 */
static int tree_set_weight(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int e = check_effector(L, t, 2);
  const ik_real w = ikl_checkreal(L, 3);
  luaL_argcheck(L, w >= 0 && w <= 1, 3, "weight in [0, 1] expected");
  ik_bone_tree_set_weight(t, e, w);
  return 0;
}

/*** Effector e's weight.
 * @function weight
 * @tparam integer e effector
 * @treturn number */
static int tree_weight(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int e = check_effector(L, t, 2);
  lua_pushnumber(L, (lua_Number)t->branch[t->effector_branch[e]].weight);
  return 1;
}

/***
 * Solves the tree towards its targets. Targets given here (one per effector, in order;
 * nil keeps one; any after the last effector's are ignored) are set first. Not reaching is no error: see the
 * returns.
 * @function solve
 * @tparam[opt] vec3 ... targets of effectors 1, 2, ...
 * @treturn boolean every effector of non-zero weight within `tolerance` of its target
 * @treturn number ... each effector's distance to its target, in effector order
 * @usage local hand = ik.tree{   -- a palm and two fingers
 *   positions = { {0, 0, 0}, {0, 1, 0}, {0.2, 1.5, 0}, {0.2, 2, 0}, {-0.2, 1.5, 0}, {-0.2, 2, 0} },
 *   parents = { 0, 1, 2, 3, 2, 5 },
 * }
 * hand:set_weight(2, 0.2)   -- the first finger matters more
 * local reached, d1, d2 = hand:solve({3, 1, 0}, {-3, 1, 0})   -- out of reach
 * assert(not reached and d1 < d2)
 */
static int tree_solve(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  /* Arguments after the last effector's are ignored, as Lua's own functions ignore them. */
  const int given = lua_gettop(L) - 1 < t->effectors ? lua_gettop(L) - 1 : t->effectors;
  ik_status st;
  int e;
  /* Every target checked before any is set: a bad one changes nothing. */
  for (e = 0; e < given; e++)
    if (!lua_isnil(L, e + 2)) ikl_checkvec3(L, e + 2);
  for (e = 0; e < given; e++)
    if (!lua_isnil(L, e + 2)) ik_bone_tree_set_target(t, e, ikl_checkvec3(L, e + 2));
  lua_settop(L, 1);
  if (t->bound && t->sk_closed && *t->sk_closed)
    return luaL_error(L, "attempt to use a bone of a closed ik.skeleton");
  st = ik_bone_tree_solve(t);
  if (st == IK_E_NULL) return luaL_error(L, IKL_TREE ": attempt to solve with a closed ik.pole");
  if (st == IK_E_PARAMETER) return luaL_error(L, IKL_TREE ": a bone refused its rotation");
  if (st != IK_OK) return luaL_error(L, IKL_TREE ": the solver refused the tree (%s)", ik_status_message(st));
  ikl_charge_solve(L, (double)t->job.iterations * (t->joints + t->branches));
  luaL_checkstack(L, t->effectors + 1, "too many effectors to return");
  lua_pushboolean(L, t->job.reached);
  for (e = 0; e < t->effectors; e++) lua_pushnumber(L, (lua_Number)ik_bone_tree_result(t, e)->distance);
  return t->effectors + 1;
}

/***
 * Effector e's result after the last solve.
 * @function result
 * @tparam integer e effector
 * @treturn boolean within `tolerance` of its target
 * @treturn number its distance to the target
 * @treturn integer the sweeps it took part in
 */
static int tree_result(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const ik_result *r = ik_bone_tree_result(t, check_effector(L, t, 2));
  lua_pushboolean(L, r->reached);
  lua_pushnumber(L, (lua_Number)r->distance);
  lua_pushinteger(L, r->iterations);
  return 3;
}

/*** The joint index of effector e.
 * @function effector_joint
 * @tparam integer e effector
 * @treturn integer */
static int tree_effector_joint(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  lua_pushinteger(L, t->effector_joint[check_effector(L, t, 2)] + 1);
  return 1;
}

/***
 * Joint j's position.
 * @function joint
 * @tparam integer j 1 (root) .. #tree
 * @tparam[opt] ik.vec3 out written and returned instead of a new vec3
 * @treturn ik.vec3
 */
static int tree_joint(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int j = ikl_checkindex(L, 2, t->joints);
  *ikl_outvec3(L, 3) = t->positions[j];
  return 1;
}

/***
 * All joint positions, root first, in a new table.
 * @function positions
 * @treturn {ik.vec3,...}
 */
static int tree_positions(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  int j;
  lua_createtable(L, t->joints, 0);
  for (j = 0; j < t->joints; j++) {
    ikl_pushvec3(L, t->positions[j]);
    lua_rawseti(L, -2, j + 1);
  }
  return 1;
}

/***
 * Bone lengths, measured from the pose given: entry j is the bone from joint j's parent
 * to joint j (entry 1, the root's, is 0).
 * @function lengths
 * @treturn {number,...}
 * @usage local t = ik.tree{ positions = { {0, 0, 0}, {0, 2, 0}, {1, 2, 0} }, parents = { 0, 1, 2 } }
 * local l = t:lengths()
 * assert(l[1] == 0 and l[2] == 2 and l[3] == 1)
 */
static int tree_lengths(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  int j;
  lua_createtable(L, t->joints, 0);
  for (j = 0; j < t->joints; j++) {
    lua_pushnumber(L, (lua_Number)t->lengths[j]);
    lua_rawseti(L, -2, j + 1);
  }
  return 1;
}

/***
 * Limits the bone ending at joint j relative to the bone before it (a branch's first
 * bone: its parent branch's last; the root's first bones are free). Copied; nil
 * removes it.
 * @function set_constraint
 * @tparam integer j joint, 2 .. #tree
 * @tparam ?ik.cone|ik.hinge|nil con
 * @usage local t = ik.tree{ positions = { {0, 0, 0}, {0, 1, 0}, {0, 2, 0} }, parents = { 0, 1, 2 } }
 * local cone = ik.cone{ angle = 0.5 }
 * t:set_constraint(3, cone)
 * assert(rawequal(t:constraint(3), cone))
 */
static int tree_set_constraint(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int j = ikl_checkindex(L, 2, t->joints);
  const ik_constraint *con = ikl_testconstraint(L, 3);
  luaL_argcheck(L, j > 0, 2, "joint 1 is the root: it ends no bone");
  if (!con && !lua_isnoneornil(L, 3)) return ikl_typeerror(L, 3, "ik.cone, ik.hinge or nil");
  lua_settop(L, 3);
  ikl_getuservalue(L, 1);
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, j + 1);
  ik_bone_tree_set_constraint(t, j, con);
  return 0;
}

/*** The constraint set on the bone ending at joint j (the object given), or nil.
 * @function constraint
 * @tparam integer j joint
 * @treturn ?ik.cone|ik.hinge */
static int tree_constraint(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int j = ikl_checkindex(L, 2, t->joints);
  ikl_getuservalue(L, 1);
  lua_rawgeti(L, -1, j + 1);
  return 1;
}

static int check_branch_end(lua_State *L, const ik_bone_tree *t, int arg) {
  const int j = ikl_checkindex(L, arg, t->joints);
  const int b = ik_bone_tree_branch_at(t, j);
  if (b < 0)
    luaL_argerror(
        L, arg,
        lua_pushfstring(
            L, "joint %d ends no branch (a branch ends at an effector or a joint with several children)",
            j + 1));
  return b;
}

/***
 * Gives the branch ending at joint j a pole its inner joints bend towards (an ik.pole,
 * read at each solve, or a vec3, which makes one); nil removes it.
 * @function set_pole
 * @tparam integer j the branch's last joint
 * @tparam ?ik.pole|vec3|nil pole
 * @usage local arm = ik.tree{ positions = { {0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {-1, 1, 0} },
 *                             parents = { 0, 1, 2, 3, 2 } }
 * arm:set_pole(4, {1, 1, 3})
 * arm:solve({1.5, 0.5, 0}, {-1, 0.5, 0})
 * assert(arm:joint(3).z > 0)
 */
static int tree_set_pole(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int b = check_branch_end(L, t, 2);
  const int j = (int)lua_tointeger(L, 2);
  ik_chain_pole *p = NULL;
  ik_vec3 v;
  lua_settop(L, 3);
  if (luaL_testudata(L, 3, IKL_POLE)) {
    p = ikl_checkpole(L, 3);
  } else if (ikl_tovec3(L, 3, &v)) {
    if (!ikl_vec3_usable(v))
      return luaL_argerror(L, 3, "finite vec3 expected, got NaN, inf or a huge component");
    p = ikl_pushpole(L, v);
    lua_replace(L, 3);
  } else if (!lua_isnil(L, 3)) {
    return ikl_typeerror(L, 3, "ik.pole, vec3 or nil");
  }
  ikl_getuservalue(L, 1);
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, -j);
  t->poles[b] = p;
  return 0;
}

/*** The pole of the branch ending at joint j, or nil.
 * @function pole
 * @tparam integer j the branch's last joint
 * @treturn ?ik.pole */
static int tree_pole(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  check_branch_end(L, t, 2);
  ikl_getuservalue(L, 1);
  lua_rawgeti(L, -1, -(int)lua_tointeger(L, 2));
  return 1;
}

/***
 * How many of a solve's sweeps the branch ending at joint j pulls in: after that many,
 * its targets stop pulling and it follows its parent. 0 (default): every sweep.
 * @function set_branch_iterations
 * @tparam integer j the branch's last joint
 * @tparam integer n 0 .. 10000
 * @usage local hand = ik.tree{ positions = { {0, 0, 0}, {0, 1, 0}, {0.2, 1.5, 0}, {-0.2, 1.5, 0} },
 *                              parents = { 0, 1, 2, 2 } }
 * hand:set_branch_iterations(4, 2)
 * hand:solve({0.5, 1.2, 0}, {-0.5, 1.2, 0})
 * local _, _, sweeps = hand:result(2)
 * assert(sweeps <= 2)
 */
static int tree_set_branch_iterations(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const int b = check_branch_end(L, t, 2);
  const lua_Number n = (lua_Number)ikl_checkreal(L, 3);
  luaL_argcheck(L, n >= 0 && n <= IKL_MAX_ITERATIONS && n == floor(n), 3, "integer in 0..10000 expected");
  t->branch[b].max_iterations = (int)n;
  return 0;
}

/*** Closes the tree: any later use raises.
 * @function close */
static int tree_close(lua_State *L) {
  ik_bone_tree *t = (ik_bone_tree *)luaL_checkudata(L, 1, IKL_TREE);
  t->closed = 1;
  return 0;
}

static int tree_index(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "iterations") == 0) {
    lua_pushinteger(L, t->iterations);
  } else if (key && strcmp(key, "tolerance") == 0) {
    lua_pushnumber(L, (lua_Number)t->tolerance);
  } else if (key && strcmp(key, "deterministic") == 0) {
    lua_pushboolean(L, t->deterministic);
  } else if (key && strcmp(key, "count") == 0) {
    lua_pushinteger(L, t->joints);
  } else if (key && strcmp(key, "effectors") == 0) {
    lua_pushinteger(L, t->effectors);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int tree_newindex(lua_State *L) {
  ik_bone_tree *t = check_open(L, 1);
  set_field(L, t, ikl_opstring(L, 2, "__newindex"), 3);
  return 0;
}

static int tree_len(lua_State *L) {
  lua_pushinteger(L, check_open(L, 1)->joints);
  return 1;
}

static int tree_tostring(lua_State *L) {
  ik_bone_tree *t = (ik_bone_tree *)luaL_checkudata(L, 1, IKL_TREE);
  if (t->closed)
    lua_pushliteral(L, "ik.tree (closed)");
  else
    lua_pushfstring(L, "ik.tree(%d joints, %d branches, %d effectors)", t->joints, t->branches, t->effectors);
  return 1;
}

static const luaL_Reg meth[] = {{"set_target", tree_set_target},
                                {"target", tree_target},
                                {"set_weight", tree_set_weight},
                                {"weight", tree_weight},
                                {"solve", tree_solve},
                                {"result", tree_result},
                                {"effector_joint", tree_effector_joint},
                                {"joint", tree_joint},
                                {"positions", tree_positions},
                                {"lengths", tree_lengths},
                                {"set_constraint", tree_set_constraint},
                                {"constraint", tree_constraint},
                                {"set_pole", tree_set_pole},
                                {"pole", tree_pole},
                                {"set_branch_iterations", tree_set_branch_iterations},
                                {"close", tree_close},
                                {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", tree_index},
                                    {"__newindex", tree_newindex},
                                    {"__len", tree_len},
                                    {"__tostring", tree_tostring},
                                    {"__gc", tree_close},
                                    {"__close", tree_close},
                                    {NULL, NULL}};

void ikl_open_tree(lua_State *L) {
  ikl_createmeta(L, IKL_TREE, meth, metameth);
  lua_pop(L, 1);
  lua_pushcfunction(L, tree_new);
  lua_setfield(L, -2, "tree");
}
