/***
 * Chains: `ik.chain`, a run of joints, root first, that a solver moves towards a target.
 * One userdata holds the whole chain (pose, bone lengths, rest pose, constraints), so
 * `chain:solve(target)` is one C call that allocates nothing: call it every frame.
 *
 * A chain is made either from joint positions (a point chain: it owns its pose, and
 * you read the solved joints back) or from bones (a bone chain: `bones` is a list of
 * transforms, and each solve reads their pose and turns them). A transform is anything
 * with `get_position()`, `get_rotation()` and `set_rotation(q)` in world space: an
 * `ik.bone`, an `ik.node` or a host's own object.
 *
 * Fields, read and write (a bad value raises and changes nothing):
 *
 * - `solver`: "fabrik", "ccd", "dls" or "two_bone" (exact, 3 joints only; it ignores
 *   constraints and base_direction). Default "fabrik"; a bone chain of 3 bones
 *   defaults to "two_bone".
 * - `iterations`: most sweeps an iterative solver runs, integer in 1..10000 (default 10):
 *   the chain's budget per solve, which a rig may lower at any time (for a distant
 *   character, say) and raise again. A solve's work is bounded: iterations times joints
 *   (times joints / 2 for CCD, whose sweep moves every joint after each it turns) stays
 *   within 2^20, so a long chain allows fewer (and a solver that cannot run one iteration
 *   is refused); a CCD solve also stops once its sweeps stall.
 * - `tolerance`: distance under which the tip counts as there, > 0 (default 1e-3).
 * - `weight`: in [0, 1] (default 1), how far a solve moves the chain from its pose
 *   towards the solution; 0 leaves it where it is.
 * - `pole`: an `ik.pole` inner joints bend towards, or nil. Assigning a vec3 makes one.
 *   A bone chain also takes a transform (its position, at full weight).
 * - `base_direction`: the direction bone 1's constraint is measured against, or nil
 *   (bone 1 free).
 * - `target`: where `solve()` sends the tip when given nothing (and where an `ik.batch`
 *   sends it): a transform (its position, and for a bone chain its rotation, read at
 *   each solve) or a vec3 (read back as a copy), or nil. A target that moves with a
 *   bone chain's own bones is refused, when set and again at each solve (a node hung
 *   from one of them since); so is such a pole.
 * - `deterministic`: true to start every solve from the same pose, whatever came
 *   before, false for warm start, each solve starting from the last solution (see
 *   `solve`). Default: true for a point chain (its pose is then a function of the
 *   target and pole: the same at any frame rate), false for a bone chain.
 * - `mode`: how FABRIK finishes its sweeps: "plain" (the sweeps alone) or "refined"
 *   (finished so that more targets are reached within the same budget; see
 *   ik_fabrik.h). Default: the C core's (`ik_fabrik_job_init`). The other solvers
 *   ignore it.
 *
 * Bone chains only:
 *
 * - `match_rotation`: true to give the tip bone the target's world rotation (blended
 *   by weight), default false.
 * @classmod ik.chain
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ik_bone_chain.h"
#include "ikl.h"
#include "ikl_xform.h"

/* Named in the order of the solvers' enum (ik_bone_chain.h). */
static const char *const solver_names[] = {"fabrik", "ccd", "two_bone", "dls", NULL};
#define SOLVER_LIST "'fabrik', 'ccd', 'two_bone' or 'dls'"

/* Point chains have the first POINT_FIELDS fields; bone chains all of them. */
enum {
  F_SOLVER,
  F_ITERATIONS,
  F_TOLERANCE,
  F_WEIGHT,
  F_POLE,
  F_BASE_DIRECTION,
  F_TARGET,
  F_DETERMINISTIC,
  F_MODE,
  F_MATCH_ROTATION
};
static const char *const field_names[] = {"solver", "iterations",     "tolerance", "weight",
                                          "pole",   "base_direction", "target",    "deterministic",
                                          "mode",   "match_rotation", NULL};
#define POINT_FIELDS 9
#define FIELD_LIST "solver, iterations, tolerance, weight, pole, base_direction, target, deterministic, mode"
#define BONE_FIELD_LIST FIELD_LIST ", match_rotation"
/* What a spec table may hold: the pose, then the fields. */
static const char *const point_spec_keys[] = {
    "positions",      "solver", "iterations",    "tolerance", "weight", "pole",
    "base_direction", "target", "deterministic", "mode",      NULL};
static const char *const bone_spec_keys[] = {"bones",         "solver", "iterations",     "tolerance",
                                             "weight",        "pole",   "base_direction", "target",
                                             "deterministic", "mode",   "match_rotation", NULL};

static const char *const mode_names[] = {"plain", "refined", NULL};

/* Keeps the size of the block well inside what every Lua can allocate. */
#define PER_JOINT (sizeof(ik_constraint) + sizeof(ik_real) + 4 * sizeof(ik_vec3))
#define MAX_JOINTS ((int)((INT_MAX - sizeof(ikl_chain)) / PER_JOINT))
#define MAX_BONES ((int)((INT_MAX - sizeof(ikl_chain)) / (PER_JOINT + sizeof(ik_quat) + sizeof(ik_ref))))

static ikl_chain *check(lua_State *L, int arg) { return (ikl_chain *)luaL_checkudata(L, arg, IKL_CHAIN); }

/* The userdata at arg when its metatable is the one at upvalue `up`, else NULL: what
 * the per-frame calls (c:solve, and the method lookup before it) check types with, a
 * pointer compare where luaL_checkudata looks the type's name up in the registry. */
static void *test_upvalue_meta(lua_State *L, int arg, int up) {
  void *p = lua_touserdata(L, arg);
  int same;
  if (!p || !lua_getmetatable(L, arg)) return NULL;
  same = lua_rawequal(L, -1, lua_upvalueindex(up));
  lua_pop(L, 1);
  return same ? p : NULL;
}

/* check_open through the metatable at upvalue `up` (the general check names a wrong
 * argument). */
static ikl_chain *check_open_up(lua_State *L, int arg, int up) {
  ikl_chain *c = (ikl_chain *)test_upvalue_meta(L, arg, up);
  if (!c) c = check(L, arg);
  if (c->closed) luaL_error(L, "attempt to use a closed ik.chain");
  return c;
}

static ikl_chain *check_open(lua_State *L, int arg) {
  ikl_chain *c = check(L, arg);
  if (c->closed) luaL_error(L, "attempt to use a closed ik.chain");
  return c;
}

/* 0-based index from the 1-based integer at arg, which must lie in 1..last. */
static int check_index(lua_State *L, int arg, int last) { return ikl_checkindex(L, arg, last); }

/* ---- poses ---- */

enum { POSE_OK, POSE_NOT_VEC3, POSE_NOT_FINITE, POSE_ZERO_BONE };

/* Reads the n vec3-likes of the list at t into out and checks them as a pose: finite,
 * and no two consecutive joints coinciding (a bone with no direction cannot be turned).
 * On failure *bad is the 1-based joint, or bone, at fault. */
static int read_pose(lua_State *L, int t, int n, ik_vec3 *out, int *bad) {
  int i, ok;
  for (i = 0; i < n; i++) {
    lua_rawgeti(L, t, i + 1);
    ok = ikl_tovec3(L, -1, &out[i]);
    lua_pop(L, 1);
    *bad = i + 1;
    if (!ok) return POSE_NOT_VEC3;
    if (!ikl_vec3_usable(out[i])) return POSE_NOT_FINITE;
    if (i > 0 && !(ik_vec3_dist2(out[i - 1], out[i]) > IK_TINY_LEN2)) {
      *bad = i;
      return POSE_ZERO_BONE;
    }
  }
  return POSE_OK;
}

/* Pushes what is wrong with the list at t, for the constructor and set_positions alike. */
static const char *pose_problem(lua_State *L, int t, int status, int bad) {
  if (status == POSE_NOT_VEC3) {
    lua_rawgeti(L, t, bad);
    return lua_pushfstring(L, "vec3 expected at index %d, got %s", bad, ikl_typename(L, -1));
  }
  if (status == POSE_NOT_FINITE)
    return lua_pushfstring(L, "finite vec3 expected at index %d, got NaN, inf or a huge component", bad);
  return lua_pushfstring(L, "bone %d has zero length: joints %d and %d coincide", bad, bad, bad + 1);
}

/* Pushes why the pose (c->count joints, each already usable and no bone of zero length)
 * is not one the core takes as a chain, or returns NULL when it is. What is left to
 * refuse is its reach (ik_chain.h): the root's largest coordinate plus the length,
 * within IK_REAL_MAX_REACH, so that no pose a solve gives can leave the range. Asked of
 * the core itself, with the pose and lengths the solve will see (`lengths` measured
 * from the pose; NULL to measure them here without storing them): every pose that
 * comes in (construction, set_positions, a bone chain's bones at each solve) is checked
 * here, and a solve never meets a refusal. */
static const char *reach_problem(lua_State *L, const ikl_chain *c, const ik_vec3 *pose, ik_real *lengths) {
  ik_chain chain;
  ik_error err;
  ik_chain_init(&chain, (ik_vec3 *)pose, c->count, lengths ? lengths : c->lengths); /* only read */
  chain.derive_lengths = lengths == NULL;
  if (ik_chain_validate(&chain, &err) == IK_OK) return NULL;
  if (err.status != IK_E_RANGE) return ik_status_message(err.status);
  return lua_pushfstring(L,
                         "the chain reaches too far: its root's largest coordinate plus its length must be "
                         "at most %s",
                         ikl_pushnumstr(L, (lua_Number)IK_REAL_MAX_REACH));
}

/* ---- targets ---- */

enum { TARGET_BAD, TARGET_VEC3, TARGET_TRANSFORM };

/* Sorts the value at idx as a target: a transform, or a vec3-like (in *v). TARGET_BAD
 * with *missing set when it is a transform lacking a method, NULL when it is neither. */
static int target_kind(lua_State *L, int idx, ik_vec3 *v, const char **missing) {
  int kind;
  if (luaL_testudata(L, idx, IKL_VEC3)) { /* the common case first: no method look-ups */
    *v = *(const ik_vec3 *)lua_touserdata(L, idx);
    *missing = NULL;
    return TARGET_VEC3;
  }
  kind = ikl_transform_kind(L, idx, ikl_target_methods, missing);
  if (kind == IKL_IS_TRANSFORM) return TARGET_TRANSFORM;
  if (kind == IKL_NOT_TRANSFORM && ikl_tovec3(L, idx, v)) return TARGET_VEC3;
  return TARGET_BAD;
}

/* Pushes why the value at idx is no target ("transform or vec3 expected, got ..."). */
static const char *target_problem(lua_State *L, int idx, const char *missing) {
  if (missing)
    return lua_pushfstring(L, "transform or vec3 expected, got %s without %s", ikl_typename(L, idx), missing);
  return lua_pushfstring(L, "transform or vec3 expected, got %s", ikl_typename(L, idx));
}

#define NOT_FINITE_VEC3 "finite vec3 expected, got NaN, inf or a huge component"

/* Checks the value at v as the chain's target and keeps it in the uservalue: the
 * transform itself, or a vec3-like copied into an ik.vec3 (so c.target reads back one
 * object, and changing the table given later changes nothing). */
static void set_target(lua_State *L, ikl_chain *c, int ci, int v) {
  ik_vec3 p;
  const char *missing, *problem;
  ik_ref ref;
  int kind;
  v = lua_absindex(L, v);
  memset(&ref, 0, sizeof ref);
  if (lua_isnil(L, v)) {
    lua_pushnil(L);
  } else {
    kind = target_kind(L, v, &p, &missing);
    if (kind == TARGET_BAD) ikl_transform_error(L, "target", target_problem(L, v, missing));
    if (kind == TARGET_VEC3) {
      if (!ikl_vec3_usable(p)) ikl_transform_error(L, "target", NOT_FINITE_VEC3);
      ikl_pushvec3(L, p);
      ref.kind = IK_REF_VEC3;
      ref.value = p;
    } else {
      if ((problem = ikl_dependency_problem(L, c, ci, v, "target")) != NULL)
        ikl_transform_error(L, "target", problem);
      ikl_ref_at(L, v, &ref);
      lua_pushvalue(L, v);
    }
  }
  ikl_getuservalue(L, ci);
  lua_insert(L, -2);
  lua_setfield(L, -2, "target");
  lua_pop(L, 1);
  c->target_ref = ref;
}

/* ---- fields ---- */

static int field_id(const char *key, int bound) {
  int i, n = bound ? (int)(sizeof field_names / sizeof *field_names) - 1 : POINT_FIELDS;
  for (i = 0; i < n; i++)
    if (strcmp(key, field_names[i]) == 0) return i;
  return -1;
}

static ik_vec3 check_field_vec3(lua_State *L, int v, const char *field, const char *expected) {
  ik_vec3 p;
  if (!ikl_tovec3(L, v, &p)) ikl_fielderror(L, IKL_CHAIN, field, expected, v);
  if (!ikl_vec3_usable(p))
    luaL_error(L, "ik.chain: bad field '%s' (finite vec3 expected, got NaN, inf or a huge component)", field);
  return p;
}

static lua_Number check_field_number(lua_State *L, int v, const char *field, const char *expected, int ok) {
  if (lua_type(L, v) != LUA_TNUMBER || !ok) ikl_fielderror(L, IKL_CHAIN, field, expected, v);
  return lua_tonumber(L, v);
}

/* Joint moves an iteration of c's solver makes (a CCD sweep moves every joint after each
 * joint it turns). */
static double moves_per_iteration(const ikl_chain *c, int solver) {
  return solver == IK_BONE_CHAIN_CCD ? 0.5 * c->count * (c->count - 1) : (double)c->count;
}

double ikl_chain_solve_moves(const ikl_chain *c) {
  return (double)c->now.result.iterations * moves_per_iteration(c, c->solver);
}

/* Most iterations a solve of c with `solver` may run: IKL_SOLVE_WORK joint moves in
 * all (a CCD sweep moves every joint after each joint it turns), and never more than
 * IKL_MAX_ITERATIONS; 0 when one iteration is already too dear. */
static int most_iterations(const ikl_chain *c, int solver) {
  const double most = (double)IKL_SOLVE_WORK / moves_per_iteration(c, solver);
  return most >= IKL_MAX_ITERATIONS ? IKL_MAX_ITERATIONS : (int)most;
}

static void check_iterations(lua_State *L, const ikl_chain *c, int solver, int v) {
  const lua_Number n = lua_tonumber(L, v);
  const int most = most_iterations(c, solver);
  if (lua_type(L, v) != LUA_TNUMBER || !(n >= 1 && n <= most && n == floor(n))) {
    char expected[48];
    snprintf(expected, sizeof expected, "integer in 1..%d", most);
    ikl_fielderror(L, IKL_CHAIN, "iterations", expected, v);
  }
}

static void set_solver(lua_State *L, ikl_chain *c, int v) {
  const char *name = lua_type(L, v) == LUA_TSTRING ? lua_tostring(L, v) : NULL;
  int i;
  if (!name) ikl_fielderror(L, IKL_CHAIN, "solver", SOLVER_LIST, v);
  for (i = 0; solver_names[i] && strcmp(name, solver_names[i]) != 0; i++) continue;
  if (!solver_names[i])
    luaL_error(L, "ik.chain: bad field 'solver' (" SOLVER_LIST " expected, got '%s')", name);
  /* Said now rather than at the first solve, where the mistake would be harder to find. */
  if (i == IK_BONE_CHAIN_TWO_BONE && c->count != 3)
    luaL_error(L, "ik.chain: solver 'two_bone' needs exactly 3 joints (this chain has %d)", c->count);
  if (most_iterations(c, i) < 1)
    luaL_error(L, "ik.chain: solver '%s' takes too many joint moves for %d joints", solver_names[i],
               c->count);
  if (c->iterations > most_iterations(c, i))
    luaL_error(L, "ik.chain: solver '%s' runs at most %d iterations on %d joints (iterations is %d)",
               solver_names[i], most_iterations(c, i), c->count, c->iterations);
  c->solver = i;
}

/* The pole is read through c->pole at each solve; the uservalue keeps it alive. A bone
 * chain also takes a transform, read at each solve (the uservalue's "pole" then). */
static void set_pole(lua_State *L, ikl_chain *c, int ci, int v) {
  ikl_pole *p = NULL;
  int is_transform = 0;
  const char *missing, *problem;
  v = lua_absindex(L, v);
  if (luaL_testudata(L, v, IKL_POLE)) {
    p = ikl_checkpole(L, v);
    lua_pushvalue(L, v);
  } else if (c->bound && ikl_transform_kind(L, v, ikl_pole_methods, &missing) == IKL_IS_TRANSFORM) {
    if ((problem = ikl_dependency_problem(L, c, ci, v, "pole")) != NULL)
      ikl_transform_error(L, "pole", problem);
    is_transform = 1;
    ikl_ref_at(L, v, &c->pole_ref);
    lua_pushvalue(L, v);
  } else if (!lua_isnil(L, v)) {
    p = ikl_pushpole(
        L, check_field_vec3(L, v, "pole", c->bound ? "transform, ik.pole or vec3" : "ik.pole or vec3"));
  } else {
    lua_pushnil(L);
  }
  ikl_getuservalue(L, ci);
  lua_insert(L, -2);
  lua_setfield(L, -2, "pole");
  lua_pop(L, 1);
  c->pole = p;
  c->pole_is_transform = is_transform;
}

static void set_mode(lua_State *L, ikl_chain *c, int v) {
  const char *name = lua_type(L, v) == LUA_TSTRING ? lua_tostring(L, v) : NULL;
  int i;
  if (!name) ikl_fielderror(L, IKL_CHAIN, "mode", "'plain' or 'refined'", v);
  for (i = 0; mode_names[i] && strcmp(name, mode_names[i]) != 0; i++) continue;
  if (!mode_names[i])
    luaL_error(L, "ik.chain: bad field 'mode' ('plain' or 'refined' expected, got '%s')", name);
  c->mode = i == 0 ? IK_FABRIK_PLAIN : IK_FABRIK_REFINED;
}

/* Checks the value at v for field `id` and stores it; the chain is at ci. Raises,
 * changing nothing, when the value is bad. */
static void set_field(lua_State *L, ikl_chain *c, int ci, int id, int v) {
  lua_Number n = lua_tonumber(L, v);
  switch (id) {
    case F_SOLVER:
      set_solver(L, c, v);
      break;
    case F_ITERATIONS:
      check_iterations(L, c, c->solver, v);
      c->iterations = (int)n;
      break;
    case F_TOLERANCE:
      c->tolerance =
          (ik_real)check_field_number(L, v, "tolerance", "positive number", n > 0 && ikl_is_usable(n));
      break;
    case F_WEIGHT:
      c->weight = (ik_real)check_field_number(L, v, "weight", "number in [0, 1]", n >= 0 && n <= 1);
      break;
    case F_POLE:
      set_pole(L, c, ci, v);
      break;
    case F_TARGET:
      set_target(L, c, ci, v);
      break;
    case F_MATCH_ROTATION:
      if (!lua_isboolean(L, v)) ikl_fielderror(L, IKL_CHAIN, "match_rotation", "boolean", v);
      c->match_rotation = lua_toboolean(L, v);
      break;
    case F_DETERMINISTIC:
      if (!lua_isboolean(L, v)) ikl_fielderror(L, IKL_CHAIN, "deterministic", "boolean", v);
      c->deterministic = lua_toboolean(L, v);
      break;
    case F_MODE:
      set_mode(L, c, v);
      break;
    default: /* F_BASE_DIRECTION */
      c->base_direction = lua_isnil(L, v) ? ik_vec3_zero() : check_field_vec3(L, v, "base_direction", "vec3");
      break;
  }
}

static int push_field(lua_State *L, const ikl_chain *c, int id) {
  switch (id) {
    case F_SOLVER:
      lua_pushstring(L, solver_names[c->solver]);
      break;
    case F_ITERATIONS:
      lua_pushinteger(L, c->iterations);
      break;
    case F_TOLERANCE:
      lua_pushnumber(L, (lua_Number)c->tolerance);
      break;
    case F_WEIGHT:
      lua_pushnumber(L, (lua_Number)c->weight);
      break;
    case F_MATCH_ROTATION:
      lua_pushboolean(L, c->match_rotation);
      break;
    case F_DETERMINISTIC:
      lua_pushboolean(L, c->deterministic);
      break;
    case F_MODE:
      lua_pushstring(L, mode_names[c->mode == IK_FABRIK_REFINED]);
      break;
    case F_TARGET:
      /* A vec3 target is stored as a value: hand out a copy, so that changing what was
       * read (vec3:set) cannot seem to move a target the solver does not see move. */
      if (c->target_ref.kind == IK_REF_VEC3) {
        ikl_pushvec3(L, c->target_ref.value);
        break;
      }
      ikl_getuservalue(L, 1);
      lua_getfield(L, -1, field_names[id]);
      break;
    case F_POLE:
      ikl_getuservalue(L, 1);
      lua_getfield(L, -1, field_names[id]);
      break;
    default: /* F_BASE_DIRECTION */
      if (ik_vec3_len2(c->base_direction) > 0)
        ikl_pushvec3(L, c->base_direction);
      else
        lua_pushnil(L);
      break;
  }
  return 1;
}

/* ---- construction ---- */

static ikl_chain *new_chain(lua_State *L, int n, int bound) {
  ikl_chain *c = ik_bone_chain_init(ikl_newuserdata(L, ik_bone_chain_size(n, bound)), n, bound);
  /* What the chain holds: "pole", constraint objects by bone; bone chains also "bones"
   * and "target". */
  lua_newtable(L);
  ikl_setuservalue(L, -2);
  return c;
}

/* Sets every field the spec at 1 gives, onto the chain at ci. */
static void set_fields(lua_State *L, ikl_chain *c, int ci) {
  const int default_iterations = c->iterations;
  int id, iterations_given = 0;
  /* The default solver, before a spec's solver is checked against the default count. */
  if (most_iterations(c, c->solver) < 1)
    luaL_error(L, "ik.chain: solver '%s' takes too many joint moves for %d joints", solver_names[c->solver],
               c->count);
  /* Until the spec's own, checked against the spec's solver (set before it). */
  c->iterations = 1;
  for (id = 0; field_names[id]; id++) {
    if (!c->bound && id >= POINT_FIELDS) break;
    lua_getfield(L, 1, field_names[id]);
    if (!lua_isnil(L, -1)) {
      set_field(L, c, ci, id, lua_gettop(L));
      iterations_given |= id == F_ITERATIONS;
    }
    lua_pop(L, 1);
  }
  if (!iterations_given) {
    const int most = most_iterations(c, c->solver);
    c->iterations = default_iterations < most ? default_iterations : most;
  }
}

/* The chain made from the list of transforms at 2: their positions now are its rest
 * pose. The list is copied, so changing the table later changes nothing. */
static int bone_chain_new(lua_State *L) {
  ikl_chain *c;
  const char *missing, *problem;
  ik_quat root_rotation;
  ikl_xform t;
  size_t len;
  int n, i, ci, kind;
  if (!lua_istable(L, 2)) return ikl_fielderror(L, IKL_CHAIN, "bones", "at least 2 transforms", 2);
  len = lua_rawlen(L, 2);
  if (len < 2)
    return luaL_error(L, "ik.chain: bad field 'bones' (at least 2 transforms expected, got %d)", (int)len);
  if (len > (size_t)MAX_BONES) return luaL_error(L, "ik.chain: bad field 'bones' (too many bones)");
  n = (int)len;
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    kind = ikl_transform_kind(L, -1, ikl_bone_methods, &missing);
    if (kind == IKL_PARTIAL_TRANSFORM)
      return luaL_error(L, "ik.chain: bad field 'bones' (transform expected at index %d, got %s without %s)",
                        i, ikl_typename(L, -1), missing);
    if (kind == IKL_NOT_TRANSFORM)
      return luaL_error(L, "ik.chain: bad field 'bones' (transform expected at index %d, got %s)", i,
                        ikl_typename(L, -1));
    lua_pop(L, 1);
  }
  c = new_chain(L, n, 1); /* 3 */
  ci = lua_gettop(L);
  ikl_getuservalue(L, ci);
  lua_createtable(L, n, 0);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    ikl_xform_at(L, -1, &t);
    ikl_ref_at(L, -1, &c->refs[i - 1]);
    c->rest[i - 1] = ikl_xform_position(L, &t, "bones", NULL, i);
    if (i == 1) {
      root_rotation = ikl_xform_rotation(L, &t, "bones", NULL, 1);
      c->has_base_rest = ikl_parent_rotation(L, &t, root_rotation, &c->base_rest, "bones");
    }
    if (i > 1 && !(ik_vec3_dist2(c->rest[i - 2], c->rest[i - 1]) > IK_TINY_LEN2))
      return luaL_error(L,
                        "ik.chain: bad field 'bones' (bones %d and %d are at the same place: a bone of "
                        "zero length cannot be turned)",
                        i - 1, i);
    lua_rawseti(L, -2, i);
  }
  lua_setfield(L, -2, "bones");
  lua_pop(L, 1);
  if ((problem = reach_problem(L, c, c->rest, NULL)) != NULL)
    return luaL_error(L, "ik.chain: bad field 'bones' (%s)", problem);
  ik_bone_chain_set_rest(c);
  set_fields(L, c, ci);
  luaL_setmetatable(L, IKL_CHAIN); /* last: a chain that failed half-made is never seen */
  return 1;
}

/***
 * Makes a chain, from its joints' positions (which are also its rest pose, the pose
 * hinge axes are given in) or from bones.
 *
 * A bone chain follows its bones: joint i is `bones[i]:get_position()`, the last bone
 * is the tip. Each solve reads every bone's world position and rotation (so IK works
 * on top of animation, and bone lengths are measured again), solves, and turns the
 * bones with `set_rotation`, root to tip, by the least rotation that puts each one
 * where the solver did: the animation's twist about a bone is kept, positions are never
 * written and bones never stretch. The rest pose of its constraints is the bones' pose
 * when the chain is made. Each bone must hang, directly or not, from the one before it.
 * @function ik.chain
 * @tparam table spec either `positions` (list of at least 2 vec3, root first, no two
 * consecutive ones equal) or `bones` (list of at least 2 transforms, root first), and
 * any of the fields above. The chain's reach, its root's largest coordinate plus its
 * length, must be within half the largest coordinate the module takes (5e139 for
 * double, 5e14 for float), so that no solve can take a joint out of range: a pose that
 * reaches further raises here, in `set_positions`, or (a bone chain's bones, read at
 * each solve) in `solve`.
 * @treturn ik.chain
 * @usage local arm = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0}, {0, 2, 0} },
 *                         solver = "two_bone", pole = {0, 1, 1} }
 * local reached = arm:solve({1, 1, 0})
 * assert(reached and #arm == 3)
 * @usage local sk = ik.skeleton{
 *   { name = "shoulder", position = {0, 1.5, 0} },
 *   { name = "elbow", parent = "shoulder", position = {0.3, 0, 0} },
 *   { name = "hand", parent = "elbow", position = {0.25, 0, 0} },
 * }
 * local target = ik.node{ position = {0.3, 1.2, 0.1} }
 * local arm = ik.chain{ bones = { sk:bone("shoulder"), sk:bone("elbow"), sk:bone("hand") },
 *                       target = target, pole = {0.2, 1.5, -1} }
 * assert(arm.solver == "two_bone")   -- the default for 3 bones
 * local reached = arm:solve()        -- turns the bones: the hand goes to the target
 * local hand = sk:bone("hand"):get_position()
 * assert(reached and (hand - target:get_position()):length() <= arm.tolerance)
 */
static int chain_new(lua_State *L) {
  ikl_chain *c;
  const char *problem;
  size_t len;
  int n, status, bad, ci, bound;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_getfield(L, 1, "bones");
  lua_getfield(L, 1, "positions");
  if (!lua_isnil(L, 2) && !lua_isnil(L, 3))
    return luaL_error(L,
                      "ik.chain: bad field 'bones' (a chain is made from positions or from bones, not both)");
  lua_getfield(L, 1, "target");
  lua_getfield(L, 1, "match_rotation");
  /* Neither list, but a field bone chains are made with: the bones are what is missing. */
  bound = !lua_isnil(L, 2) || (lua_isnil(L, 3) && (!lua_isnil(L, 4) || !lua_isnil(L, 5)));
  lua_settop(L, 1);
  ikl_check_keys(L, 1, IKL_CHAIN, bound ? bone_spec_keys : point_spec_keys,
                 bound ? "bones, " BONE_FIELD_LIST : "positions, " FIELD_LIST);
  if (bound) {
    lua_getfield(L, 1, "bones"); /* 2 */
    return bone_chain_new(L);
  }
  lua_getfield(L, 1, "positions"); /* 2 */
  if (!lua_istable(L, 2)) return ikl_fielderror(L, IKL_CHAIN, "positions", "at least 2 vec3", 2);
  len = lua_rawlen(L, 2);
  if (len < 2)
    return luaL_error(L, "ik.chain: bad field 'positions' (at least 2 vec3 expected, got %d)", (int)len);
  if (len > (size_t)MAX_JOINTS) return luaL_error(L, "ik.chain: bad field 'positions' (too many joints)");
  n = (int)len;
  c = new_chain(L, n, 0); /* 3 */
  ci = lua_gettop(L);
  status = read_pose(L, 2, n, c->rest, &bad);
  if (status != POSE_OK)
    return luaL_error(L, "ik.chain: bad field 'positions' (%s)", pose_problem(L, 2, status, bad));
  if ((problem = reach_problem(L, c, c->rest, NULL)) != NULL)
    return luaL_error(L, "ik.chain: bad field 'positions' (%s)", problem);
  ik_bone_chain_set_rest(c);
  set_fields(L, c, ci);
  luaL_setmetatable(L, IKL_CHAIN); /* last: a chain that failed half-made is never seen */
  return 1;
}

/* ---- solving ---- */

static int push_result(lua_State *L, const ik_result *r) {
  lua_pushboolean(L, r->reached);
  lua_pushnumber(L, (lua_Number)r->distance);
  lua_pushinteger(L, r->iterations);
  return 3;
}

/* ---- solving: gather (Lua thread) ---- */

/* The chain's own target when it is kept in C (a vec3, an ik.bone or ik.node, and a
 * bone chain's bones are all ik.bone or ik.node): read with no Lua call. 0 when it is
 * not, for the general path. */
static int gather_kept_target(lua_State *L, ikl_chain *c) {
  ik_bone_chain_now *s = &c->now;
  const ik_ref *r = &c->target_ref;
  const char *problem;
  ikl_xform t;
  if (r->kind == IK_REF_VEC3) {
    if (c->match_rotation)
      luaL_error(L, "ik.chain: match_rotation needs a target with a rotation (a transform), got a vec3");
    s->target = r->value;
    return 1;
  }
  if (r->kind == IK_REF_NONE || (c->bound && !c->native)) return 0;
  ikl_ref_xform(L, r, &t);
  if (c->bound && (problem = ikl_dependency_problem_ref(L, c, r, "target")) != NULL)
    ikl_transform_error(L, "target", problem);
  s->target = ikl_xform_position(L, &t, NULL, "target", 0);
  if (c->match_rotation) s->target_rotation = ikl_xform_rotation(L, &t, NULL, "target", 0);
  return 1;
}

/* Reads the target into c->now: the value at ti, or with ti 0 (or nil there) the
 * chain's own (the chain at ci); its rotation too when match_rotation wants it. A
 * missing target is named as entry `index` of a batch when index > 0. */
static void gather_target(lua_State *L, ikl_chain *c, int ci, int ti, int index) {
  ik_bone_chain_now *s = &c->now;
  const char *missing, *problem;
  ikl_xform t;
  int kind, top = lua_gettop(L), stored = ti == 0 || lua_isnoneornil(L, ti);
  if (stored && gather_kept_target(L, c)) return;
  if (stored) {
    ikl_getuservalue(L, ci);
    lua_getfield(L, -1, "target");
    if (lua_isnil(L, -1)) {
      if (ti) luaL_argerror(L, ti, "transform or vec3 expected, got no value: the chain has no target");
      if (index > 0) luaL_error(L, "ik.batch: chain %d has no target", index);
      luaL_error(L, "ik.chain: no target (set the chain's target)");
    }
    ti = lua_gettop(L);
    kind = target_kind(L, ti, &s->target, &missing); /* its kind and values were checked when it was set */
  } else {
    kind = target_kind(L, ti, &s->target, &missing);
    if (kind == TARGET_BAD) luaL_argerror(L, ti, target_problem(L, ti, missing));
    if (kind == TARGET_VEC3 && !ikl_vec3_usable(s->target)) luaL_argerror(L, ti, NOT_FINITE_VEC3);
  }
  /* Whether a transform moves with the chain is checked at each solve, the chain's own
   * target as well as one given here: a node may have been hung from one of the chain's
   * bones since it was set, and the target would run away. A loop over the bones, in C
   * for ik.bone and ik.node. */
  if (kind == TARGET_TRANSFORM && (problem = ikl_dependency_problem(L, c, ci, ti, "target")) != NULL) {
    if (stored) ikl_transform_error(L, "target", problem);
    luaL_argerror(L, ti, problem);
  }
  if (kind == TARGET_VEC3) {
    if (c->match_rotation)
      luaL_error(L, "ik.chain: match_rotation needs a target with a rotation (a transform), got a vec3");
  } else {
    ikl_xform_at(L, ti, &t);
    s->target = ikl_xform_position(L, &t, NULL, "target", 0);
    if (c->match_rotation) s->target_rotation = ikl_xform_rotation(L, &t, NULL, "target", 0);
  }
  lua_settop(L, top);
}

/* The pole as this solve sees it: an ik.pole, or a transform's position now (checked,
 * as the target is, for having come to move with the chain since it was set). */
static void gather_pole(lua_State *L, ikl_chain *c, int ci) {
  ik_bone_chain_pole_now *pole = &c->now.pole;
  pole->has = 0;
  if (c->pole) {
    pole->has = 1;
    pole->position = c->pole->position;
    pole->weight = c->pole->weight;
  } else if (c->pole_is_transform && c->native && c->pole_ref.kind != IK_REF_NONE) {
    const char *problem;
    ikl_xform t;
    ikl_ref_xform(L, &c->pole_ref, &t);
    if ((problem = ikl_dependency_problem_ref(L, c, &c->pole_ref, "pole")) != NULL)
      ikl_transform_error(L, "pole", problem);
    pole->has = 1;
    pole->position = ikl_xform_position(L, &t, NULL, "pole", 0);
    pole->weight = 1;
  } else if (c->pole_is_transform) {
    const char *problem;
    ikl_xform t;
    ikl_getuservalue(L, ci);
    lua_getfield(L, -1, "pole");
    if ((problem = ikl_dependency_problem(L, c, ci, -1, "pole")) != NULL)
      ikl_transform_error(L, "pole", problem);
    ikl_xform_at(L, -1, &t);
    pole->has = 1;
    pole->position = ikl_xform_position(L, &t, NULL, "pole", 0);
    pole->weight = 1;
    lua_pop(L, 2);
  }
}

/* Reads every bone's world pose into c->before and c->rotations (chain at ci); into
 * *base_turn what bone 1 hangs from has turned since the chain was made, and into
 * *frame its world rotation now (identity for both when the bone cannot tell). */
static void read_bones(lua_State *L, ikl_chain *c, int ci, ik_quat *base_turn, ik_quat *frame) {
  ikl_xform t;
  ik_quat parent;
  int i;
  *base_turn = ik_quat_identity();
  *frame = ik_quat_identity();
  for (i = 0; i < c->count; i++) {
    ikl_bone_xform(L, c, ci, i, &t);
    c->before[i] = ikl_xform_position(L, &t, NULL, NULL, i + 1);
    c->rotations[i] = ikl_xform_rotation(L, &t, NULL, NULL, i + 1);
    if (i > 0 && !(ik_vec3_dist2(c->before[i - 1], c->before[i]) > IK_TINY_LEN2))
      luaL_error(L, "ik.chain: bones %d and %d are at the same place: a bone of zero length cannot be turned",
                 i, i + 1);
    /* What the root hangs from turns bone 1's base direction and, carried down the
     * chain, every hinge axis: needed as soon as there is any constraint. It is also
     * the frame a warm start keeps its pose in. */
    if (i == 0) {
      const int turn = c->has_base_rest && c->constrained;
      if ((turn || !c->deterministic) && ikl_parent_rotation(L, &t, c->rotations[0], &parent, NULL)) {
        if (turn) *base_turn = ik_quat_mul(parent, ik_quat_inverse(c->base_rest));
        *frame = parent;
      }
    }
    ikl_bone_done(L, c);
  }
}

/* A point chain's solve(vec3): ikl_chain_gather with the target read (and checked). */
static void point_gather_given(lua_State *L, ikl_chain *c, int ci, ik_vec3 target) {
  if (c->pole && c->pole->closed) luaL_error(L, "attempt to use a closed ik.pole");
  ik_bone_chain_begin(c);
  c->now.target = target;
  c->now.target_rotation = ik_quat_identity();
  gather_pole(L, c, ci);
}

static void point_gather(lua_State *L, ikl_chain *c, int ci, int ti, int index) {
  int stored = 0;
  if (ti && lua_isnoneornil(L, ti)) { /* solve(): the chain's own target, if it has one */
    ikl_getuservalue(L, ci);
    lua_getfield(L, -1, "target");
    stored = !lua_isnil(L, -1);
    lua_pop(L, 2);
  }
  if (ti && !stored)
    c->now.target = ikl_checkvec3(L, ti);
  else
    gather_target(L, c, ci, 0, index);
  c->now.target_rotation = ik_quat_identity();
  gather_pole(L, c, ci);
}

static void bone_gather(lua_State *L, ikl_chain *c, int ci, int ti, int index) {
  ik_bone_chain_now *s = &c->now;
  const char *problem;
  int top = lua_gettop(L);
  s->target_rotation = ik_quat_identity();
  gather_target(L, c, ci, ti, index);
  if (s->off) return; /* IK off: the pose is the animation's, bit for bit */
  read_bones(L, c, ci, &s->base_turn, &s->frame);
  lua_settop(L, top);
  ik_measure_lengths(c->before, c->count, c->lengths); /* animation may scale bones */
  if ((problem = reach_problem(L, c, c->before, c->lengths)) != NULL)
    luaL_error(L, "ik.chain: the bones are out of range (%s)", problem);
  gather_pole(L, c, ci);
}

int ikl_chain_gather(lua_State *L, ikl_chain *c, int ci, int ti, int index) {
  if (c->pole && c->pole->closed) luaL_error(L, "attempt to use a closed ik.pole");
  ik_bone_chain_begin(c);
  if (c->bound)
    bone_gather(L, c, ci, ti, index);
  else
    point_gather(L, c, ci, ti, index);
  return ik_bone_chain_lane(c);
}

/* ---- solving: scatter (Lua thread) ---- */

/* Turns the bones (at idx) to c->rotations, root first, so each one's parent is already
 * where it goes. The tip is written only when it takes the target's rotation: otherwise
 * it just follows its parent, which the hierarchy does already (rewriting it would only
 * add rounding to its local rotation). */
static void write_bones(lua_State *L, const ikl_chain *c, int ci) {
  ikl_xform t;
  int i, n = c->match_rotation ? c->count : c->count - 1;
  for (i = 0; i < n; i++) {
    ikl_bone_xform(L, c, ci, i, &t);
    ikl_xform_set_rotation(L, &t, c->rotations[i], i + 1);
    ikl_bone_done(L, c);
  }
}

const ik_result *ikl_chain_scatter(lua_State *L, ikl_chain *c, int ci) {
  ik_bone_chain_now *s = &c->now;
  if (s->status != IK_OK) /* every input was checked as it was read: a refusal is a bug here */
    luaL_error(L, "ik.chain: the solver refused the chain (%s)", ik_status_message(s->status));
  if (c->bound) {
    if (!s->off) write_bones(L, c, ci);
    /* Where the tip really is now, after the hierarchy turned it. */
    s->result.distance = ik_vec3_dist(ikl_bone_position(L, c, ci, c->count - 1), s->target);
    s->result.reached = !s->off && s->result.distance <= c->tolerance;
  }
  return &s->result;
}

ikl_chain *ikl_tochain(lua_State *L, int idx) { return (ikl_chain *)luaL_testudata(L, idx, IKL_CHAIN); }

/***
 * Moves the chain towards `target`, the root staying and every bone keeping its length.
 * With `weight` below 1 the chain then turns back towards the pose it had, bone by
 * bone. Not reaching the target is no error: see the results.
 *
 * Where the solver starts: with `deterministic = true` (a point chain's default) from
 * the same pose every time, whatever came before: a point chain from the pose given at
 * creation or by `set_positions`, a bone chain from its bones' pose now. An
 * unconstrained point chain solved by FABRIK, CCD or DLS starts, for a target nearer its
 * root than 0.8 of its length, from that pose folded part way towards a loop (all the
 * way at the root), and its pole's weight eases in from 0 at the root to full at 0.3 of
 * its length: so its pose does not turn over as a target passes its root
 * (docs/motion.md). With warm
 * start (`deterministic = false`, a bone chain's default) from the last solution: a
 * point chain from its current pose; a bone chain from its last solution carried to
 * where its root and what the root hangs from are now, while the bones are turned from
 * their animated pose (so the animation's twist is kept). A chain following a moving
 * target thus needs fewer sweeps a frame, but a chain of three or more bones then ends
 * where its past led it (docs/motion.md).
 *
 * A bone chain solves from its bones' pose now and turns them (see `ik.chain`); the
 * target may then be a transform too. Without an argument, a chain solves for its
 * `target`. A bone chain's results describe where the tip bone is after the bones were
 * turned. At weight 0 it touches no bone and returns false, the tip's distance and 0.
 * @function solve
 * @tparam[opt] vec3 target a vec3 (bone chains: or a transform); default the chain's
 * `target`
 * @treturn boolean whether the tip is within `tolerance` of the target
 * @treturn number the tip's distance to the target
 * @treturn integer the solver's sweeps (0 when already there or out of reach; two_bone
 * says 1)
 * @usage local leg = ik.chain{ positions = { {0, 2, 0}, {0, 1, 0.1}, {0, 0, 0} } }
 * local target = ik.vec3(0.5, 0.5, 0)   -- make targets once: solve allocates nothing
 * local reached, distance = leg:solve(target)
 * assert(reached and distance <= leg.tolerance)
 * @usage local sk = ik.skeleton{
 *   { name = "hip", position = {0, 1, 0} },
 *   { name = "knee", parent = "hip", position = {0, -0.5, 0.05} },
 *   { name = "ankle", parent = "knee", position = {0, -0.5, -0.05} },
 *   { name = "toe", parent = "ankle", position = {0, -0.1, 0.15} },
 * }
 * local leg = ik.chain{ bones = { sk:bone("hip"), sk:bone("knee"), sk:bone("ankle") },
 *                       pole = {0, 0.5, 2} }
 * local step = ik.node{ position = {0.1, 0.2, 0.3}, rotation = ik.quat.euler(0.3, 0, 0) }
 * leg.match_rotation = true            -- the foot takes the step's rotation
 * assert(leg:solve(step))
 * assert(sk:bone("ankle"):get_rotation():angle_to(step:get_rotation()) < 1e-3)
 * leg.weight = 0                        -- IK off: the animated pose is left alone
 * local _, _, sweeps = leg:solve(step)
 * assert(sweeps == 0)
 */
/* Upvalues: the chain's metatable, ik.vec3's (ikl_open_chain). */
static int chain_solve(lua_State *L) {
  ikl_chain *c = check_open_up(L, 1, 1);
  const ik_vec3 *v = c->bound ? NULL : (const ik_vec3 *)test_upvalue_meta(L, 2, 2);
  const ik_result *r;
  if (v && ikl_vec3_usable(*v))
    point_gather_given(L, c, 1, *v);
  else
    ikl_chain_gather(L, c, 1, 2, 0);
  ik_bone_chain_solve(c);
  r = ikl_chain_scatter(L, c, 1);
  ikl_charge_solve(L, ikl_chain_solve_moves(c));
  return push_result(L, r);
}

/* ---- ik.core._chain_ffi: chain:solve(vec3) without the Lua C API (LuaJIT) ---- */

/* chain_solve for an open point chain, a vec3 target and an ik.pole (or none), the
 * common case it takes without L: *out gets the distance and sweeps and it returns
 * whether the tip reached; -1 (nothing touched) for every other case, which the caller
 * hands to chain_solve so that refusals keep their messages. `chain` comes from
 * _chain_ffi and `target` is an ik.vec3's block, both checked by lua/ik/fast.lua. */
static int chain_solve_ffi(void *chain, const void *target, double *out) {
  ikl_chain *c = (ikl_chain *)chain;
  ik_vec3 v;
  memcpy(&v, target, sizeof v);
  if (c->closed || c->bound || c->pole_is_transform || (c->pole && c->pole->closed) || !ikl_vec3_usable(v))
    return -1;
  ik_bone_chain_begin(c);
  c->now.target = v;
  c->now.target_rotation = ik_quat_identity();
  c->now.pole.has = c->pole != NULL;
  if (c->pole) {
    c->now.pole.position = c->pole->position;
    c->now.pole.weight = c->pole->weight;
  }
  ik_bone_chain_solve(c);
  if (c->now.status != IK_OK) return -1; /* a bug (see ikl_chain_scatter): said by chain_solve */
  out[0] = (lua_Number)c->now.result.distance;
  out[1] = (lua_Number)c->now.result.iterations;
  return c->now.result.reached != 0;
}

/* _chain_ffi(): chain_solve_ffi as a light userdata; _chain_ffi(c): the block of c
 * when c is an open ik.chain, else nil. Only lua/ik/fast.lua holds it (lua/ik/init.lua
 * takes it out of ik.core; a rig script's ik.core lacks it). */
static int chain_ffi(lua_State *L) {
  ikl_chain *c;
  if (lua_isnone(L, 1)) {
    int (*fn)(void *, const void *, double *) = chain_solve_ffi;
    void *p;
    memcpy(&p, &fn, sizeof p);
    lua_pushlightuserdata(L, p);
    return 1;
  }
  c = (ikl_chain *)luaL_testudata(L, 1, IKL_CHAIN);
  if (c && !c->closed)
    lua_pushlightuserdata(L, c);
  else
    lua_pushnil(L);
  return 1;
}

/* ---- pose access ---- */

/* Joint i (0-based): a point chain's own, or a bone chain's bone read now. */
static ik_vec3 joint_at(lua_State *L, const ikl_chain *c, int i) {
  return c->bound ? ikl_bone_position(L, c, 1, i) : c->positions[i];
}

/***
 * One joint's position (a bone chain reads its bone's now).
 * @function joint
 * @tparam integer i 1 (root) .. #chain (tip)
 * @treturn ik.vec3
 * @usage local chain = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0} } }
 * assert(chain:joint(#chain) == ik.vec3(0, 1, 0))   -- the tip
 */
static int chain_joint(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  ikl_pushvec3(L, joint_at(L, c, check_index(L, 2, c->count)));
  return 1;
}

/***
 * One joint's position as three numbers: allocates nothing, for per-frame code.
 * @function joint_xyz
 * @tparam integer i 1 (root) .. #chain (tip)
 * @treturn number x
 * @treturn number y
 * @treturn number z
 * @usage local chain = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0}, {0, 2, 0} } }
 * chain:solve({1, 1, 0})
 * for i = 1, #chain do
 *   local x, y, z = chain:joint_xyz(i)   -- hand them to the host's bones
 *   assert(ik.vec3(x, y, z) == chain:joint(i))
 * end
 */
static int chain_joint_xyz(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  ik_vec3 p = joint_at(L, c, check_index(L, 2, c->count));
  lua_pushnumber(L, (lua_Number)p.x);
  lua_pushnumber(L, (lua_Number)p.y);
  lua_pushnumber(L, (lua_Number)p.z);
  return 3;
}

/***
 * All joint positions, root first, in a new table.
 * @function positions
 * @treturn {ik.vec3,...}
 * @usage local chain = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0} } }
 * local pose = chain:positions()
 * assert(#pose == #chain and pose[2] == ik.vec3(0, 1, 0))
 */
static int chain_positions(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  int i;
  lua_createtable(L, c->count, 0);
  for (i = 0; i < c->count; i++) {
    ikl_pushvec3(L, joint_at(L, c, i));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/***
 * Sets a new pose, from animation say, and measures the bone lengths again from it
 * (animation may scale bones). The rest pose stays the one given at creation. A bad
 * list raises and changes nothing. Point chains only: a bone chain reads its bones.
 * @function set_positions
 * @tparam {vec3,...} positions exactly #chain of them, no two consecutive ones equal
 * @usage local chain = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0}, {0, 2, 0} } }
 * chain:set_positions{ {0, 0, 0}, {0, 2, 0}, {0, 4, 0} }   -- animated, bones scaled
 * assert(chain:length() == 4)
 */
static int chain_set_positions(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  const char *problem;
  int status, bad;
  size_t len;
  if (c->bound)
    return luaL_error(L,
                      "ik.chain: set_positions is for chains made from positions (this one reads its bones)");
  luaL_checktype(L, 2, LUA_TTABLE);
  len = lua_rawlen(L, 2);
  if (len != (size_t)c->count)
    return luaL_argerror(L, 2, lua_pushfstring(L, "%d positions expected, got %d", c->count, (int)len));
  /* Read into the scratch array, so a bad list leaves the pose as it was. */
  status = read_pose(L, 2, c->count, c->before, &bad);
  if (status != POSE_OK) return luaL_argerror(L, 2, pose_problem(L, 2, status, bad));
  if ((problem = reach_problem(L, c, c->before, NULL)) != NULL) return luaL_argerror(L, 2, problem);
  ik_bone_chain_set_start(c, c->before);
  return 0;
}

/***
 * The chain's full reach: the sum of its bone lengths (a bone chain measures its bones
 * now).
 * @function length
 * @treturn number
 * @usage local chain = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0}, {0, 3, 0} } }
 * assert(chain:length() == 3)
 * local reached = chain:solve({0, 5, 0})   -- out of reach: laid straight towards it
 * assert(not reached and chain:joint(3) == ik.vec3(0, 3, 0))
 */
static int chain_length(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  ik_real total = 0;
  int i;
  if (c->bound) {
    for (i = 0; i < c->count; i++) c->before[i] = ikl_bone_position(L, c, 1, i);
    total = ik_measure_lengths(c->before, c->count, NULL);
  } else {
    for (i = 0; i < c->count - 1; i++) total += c->lengths[i];
  }
  lua_pushnumber(L, (lua_Number)total);
  return 1;
}

/***
 * A bone chain's bones, root first, in a new table (nil for a point chain).
 * @function bones
 * @treturn ?{transform,...}
 * @usage local sk = ik.skeleton{ { name = "a" }, { name = "b", parent = "a", position = {0, 1, 0} } }
 * local chain = ik.chain{ bones = sk:bones() }
 * assert(#chain:bones() == 2 and rawequal(chain:bones()[2], sk:bone("b")))
 */
static int chain_bones(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  int i;
  if (!c->bound) return 0;
  ikl_push_bones(L, 1);
  lua_createtable(L, c->count, 0);
  for (i = 1; i <= c->count; i++) {
    lua_rawgeti(L, -2, i);
    lua_rawseti(L, -2, i);
  }
  return 1;
}

/* ---- constraints ---- */

/***
 * Limits bone i (joint i to i + 1) relative to bone i - 1, or bone 1 relative to
 * `base_direction` (free without one). The constraint is copied: constraints are
 * immutable, so set a new one to change it. nil removes it. The two_bone solver ignores
 * constraints. In a bone chain, base_direction turns with what bone 1 hangs from (when
 * the bone has get_local_rotation, as ik.bone and ik.node do).
 * @function set_constraint
 * @tparam integer i bone, 1 .. #chain - 1
 * @tparam ?ik.cone|ik.hinge|nil con
 * @usage local leg = ik.chain{ positions = { {0, 2, 0}, {0, 1, 0.1}, {0, 0, 0} } }
 * leg:set_constraint(2, ik.hinge{ axis = {1, 0, 0}, min = 0, max = math.rad(150) })
 * leg:solve({0, 0.5, 0.5})
 * leg:set_constraint(2, nil)   -- free again
 */
static int chain_set_constraint(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  int i = check_index(L, 2, c->count - 1);
  const ik_constraint *con = ikl_testconstraint(L, 3);
  if (!con && !lua_isnoneornil(L, 3)) return ikl_typeerror(L, 3, "ik.cone, ik.hinge or nil");
  lua_settop(L, 3);
  ikl_getuservalue(L, 1); /* keeps the object for constraint(i) to give back */
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, i + 1);
  ik_bone_chain_set_constraint(c, i, con);
  return 0;
}

/***
 * The constraint set on bone i (the very object given), or nil.
 * @function constraint
 * @tparam integer i bone, 1 .. #chain - 1
 * @treturn ?ik.cone|ik.hinge
 * @usage local chain = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0} } }
 * local cone = ik.cone{ angle = 1 }
 * chain:set_constraint(1, cone)
 * assert(rawequal(chain:constraint(1), cone))
 */
static int chain_constraint(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  int i = check_index(L, 2, c->count - 1);
  ikl_getuservalue(L, 1);
  lua_rawgeti(L, -1, i + 1);
  return 1;
}

/***
 * The chain's constraints as shapes to draw, in its pose now (a bone chain reads its
 * bones): one table per bone whose constraint applies (bone 1 needs `base_direction`),
 * root first. Each has `bone` (its index), `kind` ("cone" or "hinge"), `apex` (the
 * bone's first joint), `direction` (unit: the parent bone's direction, or for bone 1 the
 * base direction as the chain turns it) and `length` (the bone's length); a cone has
 * `angle` (its half-angle about `direction`), a hinge `axis` (unit, carried from the
 * rest pose exactly as the solvers carry it), `min` and `max` (the range about `axis`
 * from `direction`). A pose the solver produced has every bone inside its shape.
 * @function constraint_shapes
 * @treturn {table,...} the shapes (empty when nothing is constrained)
 * @usage local arm = ik.chain{ positions = { {0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0} },
 *                         base_direction = {1, 0, 0} }
 * arm:set_constraint(2, ik.hinge{ axis = {0, 0, 1}, min = 0, max = math.rad(120) })
 * arm:set_constraint(3, ik.cone{ angle = math.rad(30) })
 * arm:solve({1.5, 1.5, 0})
 * local shapes = arm:constraint_shapes()
 * assert(#shapes == 2 and shapes[1].bone == 2 and shapes[1].kind == "hinge")
 * assert(shapes[2].kind == "cone" and math.abs(shapes[2].angle - math.rad(30)) < 1e-6)
 * assert((shapes[2].apex - arm:joint(3)):length() < 1e-6)
 */
int ikl_chain_constraint_shapes(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  ik_constraint_frame *f;
  ik_quat base_turn = ik_quat_identity();
  const ik_vec3 *pose = c->positions;
  ik_chain chain;
  int n, i;
  lua_settop(L, 1);
  f = (ik_constraint_frame *)lua_newuserdata(L, (size_t)(c->count - 1) * sizeof *f); /* 2: scratch */
  if (c->bound) {
    ik_quat frame;
    read_bones(L, c, 1, &base_turn, &frame);
    pose = c->before;
  }
  ik_chain_init(&chain, (ik_vec3 *)pose, c->count, c->lengths);
  if (c->constrained) chain.constraints = c->constraints;
  chain.rest_positions = c->rest;
  chain.base_direction = c->base_direction;
  chain.base_rotation = base_turn;
  n = ik_chain_constraint_frames(&chain, f);
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    const int cone = f[i].type == IK_CONSTRAINT_CONE;
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, f[i].bone + 1);
    lua_setfield(L, -2, "bone");
    lua_pushstring(L, cone ? "cone" : "hinge");
    lua_setfield(L, -2, "kind");
    ikl_pushvec3(L, f[i].apex);
    lua_setfield(L, -2, "apex");
    ikl_pushvec3(L, f[i].direction);
    lua_setfield(L, -2, "direction");
    lua_pushnumber(L, (lua_Number)f[i].length);
    lua_setfield(L, -2, "length");
    if (cone) {
      lua_pushnumber(L, (lua_Number)f[i].angle);
      lua_setfield(L, -2, "angle");
    } else {
      ikl_pushvec3(L, f[i].axis);
      lua_setfield(L, -2, "axis");
      lua_pushnumber(L, (lua_Number)f[i].min);
      lua_setfield(L, -2, "min");
      lua_pushnumber(L, (lua_Number)f[i].max);
      lua_setfield(L, -2, "max");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ---- lifetime and metamethods ---- */

/***
 * Closes the chain: any later use raises, printing it excepted. Also done when it is
 * collected, and in Lua 5.4 when a `<close>` variable holding it goes out of scope.
 * Its bones, target and pole are left as they are.
 * @function close
 * @usage local chain = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0} } }
 * chain:close()
 * assert(tostring(chain) == "ik.chain (closed)")
 * assert(not pcall(function() chain:solve({1, 0, 0}) end))
 */
static int chain_close(lua_State *L) {
  check(L, 1)->closed = 1;
  return 0;
}

static int chain_len(lua_State *L) {
  lua_pushinteger(L, check_open(L, 1)->count);
  return 1;
}

static int chain_tostring(lua_State *L) {
  ikl_chain *c = check(L, 1);
  if (c->closed)
    lua_pushliteral(L, "ik.chain (closed)");
  else
    lua_pushfstring(L, "ik.chain(%s, %d %s)", solver_names[c->solver], c->count,
                    c->bound ? "bones" : "joints");
  return 1;
}

/* Methods (upvalue 1) first, a raw lookup that spares c:solve the field names'
 * comparisons (no method is named as a field), then fields. Upvalue 2: the chain's
 * metatable. */
static int chain_index(lua_State *L) {
  ikl_chain *c = check_open_up(L, 1, 2);
  const char *key;
  int id;
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  key = lua_tostring(L, 2);
  id = key ? field_id(key, c->bound) : -1;
  if (id >= 0) return push_field(L, c, id);
  lua_pushnil(L);
  return 1;
}

static int chain_newindex(lua_State *L) {
  ikl_chain *c = check_open(L, 1);
  const char *key = ikl_opstring(L, 2, "__newindex");
  int id = field_id(key, c->bound);
  if (id < 0)
    return luaL_error(L, "ik.chain: no field '%s' (fields: %s)", key,
                      c->bound ? BONE_FIELD_LIST : FIELD_LIST);
  set_field(L, c, 1, id, 3);
  return 0;
}

static const luaL_Reg meth[] = {{"solve", chain_solve},
                                {"joint", chain_joint},
                                {"joint_xyz", chain_joint_xyz},
                                {"positions", chain_positions},
                                {"set_positions", chain_set_positions},
                                {"length", chain_length},
                                {"bones", chain_bones},
                                {"set_constraint", chain_set_constraint},
                                {"constraint", chain_constraint},
                                {"constraint_shapes", ikl_chain_constraint_shapes},
                                {"close", chain_close},
                                {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", chain_index},
                                    {"__newindex", chain_newindex},
                                    {"__len", chain_len},
                                    {"__tostring", chain_tostring},
                                    {"__gc", chain_close},
                                    {"__close", chain_close},
                                    {NULL, NULL}};

void ikl_open_chain(lua_State *L) {
  ikl_createmeta(L, IKL_CHAIN, meth, metameth);
  /* The per-frame calls check types against metatables they hold (check_open_up):
   * __index gets the chain's as a second upvalue, solve the chain's and ik.vec3's. */
  lua_getfield(L, -1, "__index");
  lua_getupvalue(L, -1, 1); /* the methods */
  lua_pushvalue(L, -1);
  lua_pushvalue(L, -4);
  lua_pushcclosure(L, chain_index, 2);
  lua_setfield(L, -4, "__index");
  lua_pushvalue(L, -3);
  luaL_getmetatable(L, IKL_VEC3);
  lua_pushcclosure(L, chain_solve, 2);
  lua_setfield(L, -2, "solve");
  lua_pop(L, 3);
  lua_pushcfunction(L, chain_new);
  lua_setfield(L, -2, "chain");
  lua_pushcfunction(L, chain_ffi);
  lua_setfield(L, -2, "_chain_ffi");
}
