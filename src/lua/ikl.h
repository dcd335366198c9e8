/*
 * ikl.h: what the binding files share. Not installed.
 *
 * The binding translates: Lua values in, checked, to the scene's and the core's C types,
 * their results and refusals out as Lua values and errors. Its files:
 *   ikl_module.c     luaopen_ik_core: the module table, each type's opener
 *   ikl_util.c       argument checkers, messages, metatables (declared below)
 *   ikl_compat.h     one source for Lua 5.4, 5.1 and LuaJIT
 *   ikl_vec3.c       ik.vec3              ikl_quat.c        ik.quat
 *   ikl_pole.c       ik.pole              ikl_constraint.c  ik.cone, ik.hinge
 *   ikl_chain.c      ik.chain             ikl_xform.c       the transform contract (ikl_xform.h)
 *   ikl_tree.c       ik.tree
 *   ikl_batch.c      ik.batch             ikl_skeleton.c    ik.skeleton, ik.bone
 *   ikl_node.c       ik.node              ikl_ground.c      ik.ground
 *   ikl_foot.c       ik.foot, ik.pelvis   ikl_watch.c       ik.watch
 *   ikl_crowd_template.c ik.crowd_template ikl_crowd.c     ik.crowd
 *   ikl_crowd_buffer.c   ik.crowd_buffer (a crowd's flat arrays)
 * Each type's file has an ikl_open_* that builds its metatable and puts its constructor
 * in the module table on top of the stack. No C globals: metatables live in the
 * registry under their type names, which are also their __name.
 */
#ifndef IKL_H
#define IKL_H

#include <math.h>

#include "ik.h"
#include "ik_bone_chain.h"
#include "ikl_compat.h"

#define IKL_VEC3 "ik.vec3"
#define IKL_QUAT "ik.quat"
#define IKL_CHAIN "ik.chain"
#define IKL_POLE "ik.pole"
#define IKL_CONE "ik.cone"
#define IKL_HINGE "ik.hinge"

/* A pole target: where the chain bends towards, and how much. Mutable; a chain that
 * holds one reads it at each solve (ik_bone_chain.h). */
typedef struct ik_chain_pole ikl_pole;

/* A joint constraint: immutable once made, so chains copy it. */
typedef struct ikl_constraint {
  ik_constraint c;
} ikl_constraint;

/* The most work one solve call may do: IKL_SOLVE_WORK joint moves, and never more than
 * IKL_MAX_ITERATIONS sweeps (ik.chain's and ik.tree's iteration caps). */
#define IKL_MAX_ITERATIONS 10000
#define IKL_SOLVE_WORK (1L << 20)
/* Charges `moves` joint moves a solve did to the instruction budget of the sandbox L runs
 * in, if any (one a move): a script's loop of solves is bounded by its budget as its own
 * instructions are, each solve by IKL_SOLVE_WORK (ikl_sandbox.c). */
void ikl_charge_solve(lua_State *L, double moves);

/* ---- type openers (each leaves the module table where it found it) ---- */
void ikl_open_vec3(lua_State *L);
void ikl_open_quat(lua_State *L);
void ikl_open_pole(lua_State *L);
void ikl_open_constraint(lua_State *L);
void ikl_open_chain(lua_State *L);
void ikl_open_tree(lua_State *L);  /* ik.tree (ikl_tree.c) */
void ikl_open_batch(lua_State *L); /* ik.batch (ikl_batch.c) */
void ikl_open_skeleton(lua_State *L);
void ikl_open_node(lua_State *L);
void ikl_open_ground(lua_State *L);         /* the table ik.ground */
void ikl_open_foot(lua_State *L);           /* ik.foot and ik.pelvis */
void ikl_open_watch(lua_State *L);          /* ik.watch: file change detection (ikl_watch.c) */
void ikl_open_pattern(lua_State *L);        /* ik.core._sandbox_patterns (ikl_pattern.c) */
void ikl_open_import(lua_State *L);         /* ik.import, ik.import_string (ikl_import.c); after skeleton */
void ikl_open_sandbox(lua_State *L);        /* ik.core.sandbox: a rig script's own state (ikl_sandbox.c) */
void ikl_open_crowd_template(lua_State *L); /* ik.crowd_template (ikl_crowd_template.c) */
void ikl_open_crowd(lua_State *L);          /* ik.crowd (ikl_crowd.c) */
void ikl_open_crowd_buffer(lua_State *L);   /* its buffers' metatable (ikl_crowd_buffer.c) */

/* What a rig script's state allows of ik.batch (threads and their buffers are C memory,
 * which its heap's limit does not see): begin raises when a new batch of `threads`
 * threads is more than the sandbox lets a script have, and counts it; end uncounts it.
 * Nothing in a state that is no sandbox. */
void ikl_sandbox_batch_begin(lua_State *L, int threads);
void ikl_sandbox_batch_end(lua_State *L);

/* ---- views: another state's objects (a rig script's of the host's) ---- */

/* What a script is told when it tries to close, or re-parent, an object of the host's. */
#define IKL_HOST_OBJECT "the scene's objects are the host's: rig scripts cannot close them"
/* Each pushes onto `to` a view of the object at idx of `from` when it is of its type (a
 * bone's view comes with a view of its skeleton) and returns 1; 0 when it is not; -1 when
 * it is but cannot be shared. A view is the same C object: it sees every change, and
 * raises once the original is closed; it cannot be closed itself. `to` must not outlive
 * the objects. Allocates only in `to`. */
int ikl_skeleton_view(lua_State *from, int idx, lua_State *to); /* ik.skeleton and ik.bone */
int ikl_node_view(lua_State *from, int idx, lua_State *to);
int ikl_ground_view(lua_State *from, int idx, lua_State *to); /* -1 for a custom ground */
/* The views a state holds, by the address of what they show: cached pushes the view
 * (returns 1) or nothing (0); cache keeps the value on top (and leaves it there). */
int ikl_share_cached(lua_State *to, const void *key);
void ikl_share_cache(lua_State *to, const void *key);

/* ---- string patterns with a step limit (ikl_pattern.c), for a sandbox ---- */

/* A step budget the matcher charges its work to. charge(L, ud, steps) is called every so
 * many steps (at most 1024 between calls, and before any one piece of work dearer than
 * that); it returns normally to go on, or raises (lua_error / luaL_error, i.e. longjmp)
 * to stop the call. The matcher holds nothing that a raise would leak. */
typedef struct ikl_step_budget {
  void (*charge)(lua_State *L, void *ud, long steps);
  void *ud;
} ikl_step_budget;
/* Sets find, match, gmatch and gsub in the table on top of the stack: the string
 * library's semantics (Lua 5.4's, on every Lua this builds for), charging every matcher
 * step (each character tried, each backtrack) to *b, which must outlive the functions
 * (NULL: no limit). A step costs about what one character test costs string.find.
 *
 * From Lua, for tests and for a sandbox written in Lua, the module has one internal,
 * undocumented-to-users entry: require("ik.core")._sandbox_patterns(limit) returns a
 * table {find, match, gmatch, gsub, steps} whose four functions share a budget of their
 * own: once more than `limit` steps have been charged (nil: no limit) every charge
 * raises "pattern step budget exceeded" (with the caller's position, as luaL_error
 * gives); steps() says how many steps were charged so far. */
void ikl_pattern_setfuncs(lua_State *L, const ikl_step_budget *b);

/* The skeleton and bone index of an ik.bone at idx (0 when it is none; raises when its
 * skeleton is closed). */
struct ik_skeleton;
int ikl_tobone(lua_State *L, int idx, struct ik_skeleton **sk, int *bone);
/* The C node of an ik.node at idx, or NULL (raises when it is closed). */
struct ik_node;
const struct ik_node *ikl_tonode(lua_State *L, int idx);
/* ikl_tobone and ikl_tonode for a caller that keeps the C pointers between calls (a
 * chain keeps its bones'): also where the skeleton's, or node's, closed flag lives, to
 * check before each use. The pointers stay good while the ik.bone (ik.node) is alive. */
int ikl_tobone_ref(lua_State *L, int idx, struct ik_skeleton **sk, int *bone, const int **closed);
struct ik_node *ikl_tonode_ref(lua_State *L, int idx, const int **closed);

/* ---- chains (ikl_chain.c), for ik.batch ---- */

/* An ik.chain's userdata is the scene's chain (ik_bone_chain.h): its solve phase and,
 * for chains kept in C, its gather and scatter run with no Lua. The binding adds the
 * phases that read and turn Lua's transforms. */
typedef struct ik_bone_chain ikl_chain;

/* chain:constraint_shapes() (the chain at 1): for a caller that must not look the method
 * up through a metatable a script can reach. */
int ikl_chain_constraint_shapes(lua_State *L);
/* The chain at idx (open or closed), or NULL when it is no ik.chain. */
ikl_chain *ikl_tochain(lua_State *L, int idx);
/* Gather, for the open chain c at stack index ci (absolute): the target is the value at
 * ti, or with ti 0 the chain's own `target`. Raises as chain:solve does; a missing
 * target as "ik.batch: chain <index> has no target" when index > 0. Returns the lane
 * (IK_LANE_*). Leaves the stack as it found it. */
int ikl_chain_gather(lua_State *L, ikl_chain *c, int ci, int ti, int index);
/* Scatter, for the chain at ci (absolute). Raises when the solver refused the chain.
 * Returns the chain's result, which stays readable until its next gather. */
const ik_result *ikl_chain_scatter(lua_State *L, ikl_chain *c, int ci);
/* Joint moves c's last solve made: its iterations times an iteration's moves. */
double ikl_chain_solve_moves(const ikl_chain *c);

/* ---- feet (ikl_foot.c), for ik.batch ---- */

struct ik_foot_params;
struct ik_foot_state;
/* Whether the value at idx is an ik.foot (raising when it is closed); its parameters and
 * state then. */
int ikl_tofoot(lua_State *L, int idx, struct ik_foot_params **params, struct ik_foot_state **state);
/* What a caller that keeps an ik.foot between calls (ik.batch) checks before each use,
 * with no Lua: the foot's closed flag, and its ground as last set with that ground's
 * closed flag. Good while the foot is alive (it keeps its ground alive). */
typedef struct ik_foot_link ikl_foot_link; /* ik_bone_batch.h */
const ikl_foot_link *ikl_foot_link_of(lua_State *L, int idx);

/* ---- ground (ikl_ground.c), for the types that query one ---- */

#define IKL_GROUND "ik.ground"
struct ik_ground;
/* The C ground of the open ik.ground at arg, or raises (wrong type, or "attempt to use a
 * closed ik.ground"). */
const struct ik_ground *ikl_checkground(lua_State *L, int arg);
/* The same, and where its closed flag lives, for a caller that keeps the pointer. */
const struct ik_ground *ikl_checkground_ref(lua_State *L, int arg, const int **closed);
/* Runs query(ground, ud) on the ik.ground at gidx and returns its status. Every query
 * of a ground goes through here: a custom ground's Lua function is called, in
 * protected mode, from inside query; if it raised, query sees a failed ray (and, per
 * the C contract, changes nothing) and its error is raised again once query is back. */
typedef ik_status (*ikl_ground_query)(const struct ik_ground *g, void *ud);
ik_status ikl_ground_run(lua_State *L, int gidx, ikl_ground_query query, void *ud);

/* The open pole at arg, or raises (wrong type, or "attempt to use a closed ik.pole"). */
ikl_pole *ikl_checkpole(lua_State *L, int arg);
/* Pushes a new ik.pole at position, weight 1. */
ikl_pole *ikl_pushpole(lua_State *L, ik_vec3 position);
/* The constraint (ik.cone or ik.hinge) at idx, or NULL. */
const ik_constraint *ikl_testconstraint(lua_State *L, int idx);

/* ---- values ---- */

/* Pushes a new ik.vec3 / ik.quat. */
void ikl_pushvec3(lua_State *L, ik_vec3 v);
void ikl_pushquat(lua_State *L, ik_quat q);
/* Where a function returning a new vec3 / quat writes it instead, so that per-frame code
 * allocates nothing: the ik.vec3 / ik.quat given as argument `arg` (anything else but
 * nil raises "bad argument #arg (ik.vec3 expected, got ...)"), or a new one. Either way
 * it is pushed, ready to return; fill it after reading the operands, which it may be. */
ik_vec3 *ikl_outvec3(lua_State *L, int arg);
ik_quat *ikl_outquat(lua_State *L, int arg);

/* Reads a vec3-like value at idx: an ik.vec3, an array {x, y, z}, or any table or
 * userdata with fields x, y, z (a host's own vector type). Returns 0, *out untouched,
 * when the value is none of those, or one of the module's other types (an ik.quat has
 * x, y, z too; a closed ik.pole raises when indexed), or a userdata with no __index
 * (indexing it would raise). Does not check finiteness. */
int ikl_tovec3(lua_State *L, int idx, ik_vec3 *out);
int ikl_toquat(lua_State *L, int idx, ik_quat *out);

/* Argument checkers with Lua's wording: "bad argument #n to 'f' (vec3 expected, got
 * string)", and for NaN/Inf/huge components "(finite vec3 expected, got NaN, inf or a
 * huge component)" (quat likewise). */
ik_vec3 ikl_checkvec3(lua_State *L, int arg);
ik_quat ikl_checkquat(lua_State *L, int arg);
/* A finite number argument. */
ik_real ikl_checkreal(lua_State *L, int arg);
/* A rotation argument: ikl_checkquat's, and not zero ("non-zero quat expected"). */
ik_quat ikl_checkrotation(lua_State *L, int arg);
/* For the operands of metamethods (v + w, q * v): the checks above, raising "bad
 * argument #arg to '<op>' (...)" with op the metamethod's own name ("__add"). Through
 * luaL_argerror the name would be the interpreter's: 'add' in 5.4, '__add' in LuaJIT,
 * '?' in 5.1. */
int ikl_operror(lua_State *L, int arg, const char *op, const char *msg);
ik_vec3 ikl_opvec3(lua_State *L, int arg, const char *op);
ik_real ikl_opreal(lua_State *L, int arg, const char *op);
/* A string (or number, converted in place) operand: the keys of __newindex. */
const char *ikl_opstring(lua_State *L, int arg, const char *op);
/* A 1-based index argument in 1..last, returned 0-based. Checked and worded as 5.4's
 * luaL_checkinteger on every Lua ("number has no integer representation"): 5.1's would
 * truncate 1.5, and turn NaN or 1e300 into whatever the conversion gives. */
int ikl_checkindex(lua_State *L, int arg, int last);
/* Raises "bad argument #arg (<status message>)" unless st is IK_OK; returns 0, for a
 * setter's return. */
int ikl_checkstatus(lua_State *L, ik_status st, int arg);

/* Pushes n as "%.14g" writes it ("nan", "inf" and "-inf" for those) and returns the
 * string: numbers in messages and tostring read the same on every Lua (5.4's own
 * formatting would add ".0" to integral floats, 5.1's would not). */
const char *ikl_pushnumstr(lua_State *L, lua_Number n);

/* The name of the value at idx for messages: __name for our types, else the type. */
const char *ikl_typename(lua_State *L, int idx);

/* Raises "bad argument #arg to 'f' (<expected> expected, got <what idx holds>)". */
int ikl_typeerror(lua_State *L, int arg, const char *expected);

/* Pushes how a bad value (at idx) reads in a message, and returns it: the number itself
 * for a number (ikl_pushnumstr), else its type name (ikl_typename). */
const char *ikl_describe(lua_State *L, int idx);

/* Raises "<owner>: bad field '<field>' (<expected> expected, got <value>)", where value
 * is ikl_describe's. idx holds the value. */
int ikl_fielderror(lua_State *L, const char *owner, const char *field, const char *expected, int idx);

/* Raises "<owner>: no field 'k' (fields: <list>)" for the first key of the table at t
 * that is not one of `names` (NULL-terminated): a misspelt field in a spec table would
 * otherwise be ignored in silence, its default used. */
void ikl_check_keys(lua_State *L, int t, const char *owner, const char *const *names, const char *list);

/* Every type's assignments fail alike: a field it does not have raises "<tname>: no
 * field 'k' (fields: ...)" (ikl_check_keys' wording), and a type whose fields are all
 * read-only raises this, "<tname>: fields are read-only (<hint>)". */
int ikl_readonly(lua_State *L, const char *tname, const char *hint);

/* Whether the value at idx can be indexed without raising for want of a way to: a table,
 * or a userdata whose metatable has __index. */
int ikl_indexable(lua_State *L, int idx);

/* Reads field `name` of the table at `t` (which must be a table) as a finite number in
 * [lo, hi] (either bound may be -HUGE_VAL/HUGE_VAL), or def when the field is nil. */
ik_real ikl_optfield_real(lua_State *L, int t, const char *owner, const char *name, ik_real def, ik_real lo,
                          ik_real hi, const char *expected);
/* Same for a vec3-like field; returns 0 when nil (out untouched). */
int ikl_optfield_vec3(lua_State *L, int t, const char *owner, const char *name, ik_vec3 *out);

/* Makes a metatable for tname with __name and `metameth` set, and methods in a table
 * that becomes __index unless metameth defines __index itself (then the methods table
 * is that function's first upvalue). A type with no __newindex of its own gets one that
 * raises as ikl_readonly. Leaves the metatable on the stack. */
void ikl_createmeta(lua_State *L, const char *tname, const luaL_Reg *meth, const luaL_Reg *metameth);

/* Whether a number (a vector, a quaternion) is usable as an input: finite and within
 * IK_REAL_MAX_COORD, component by component. */
static inline int ikl_is_usable(lua_Number n) { return fabs(n) <= (lua_Number)IK_REAL_MAX_COORD; }
int ikl_vec3_usable(ik_vec3 v);
int ikl_quat_usable(ik_quat q);
/* ikl_quat_usable, and long enough to normalise: what every rotation input must be. */
int ikl_rotation_usable(ik_quat q);

/* ---- crowds (ikl_crowd*.c): the host's only; a sandbox removes them ---- */

#define IKL_CROWD_TEMPLATE "ik.crowd_template"
#define IKL_CROWD "ik.crowd"
#define IKL_CROWD_BUFFER "ik.crowd_buffer"
struct ik_crowd_template;
struct ik_crowd;
/* The ik.crowd_template at arg, or raises. */
const struct ik_crowd_template *ikl_checkcrowdtemplate(lua_State *L, int arg);
/* An ik.crowd's userdata: the crowd's block follows it. Closed: threads stopped. */
typedef struct ikl_crowd {
  struct ik_crowd *c;
  int closed;
  /* Where a buffer's set stages a table of the host's inputs until all of it is checked
   * (capacity times the widest input's stride), so each value is read from the table
   * once: one for the crowd, as one set runs at a time. */
  ik_real *staged;
} ikl_crowd;
/* The open ik.crowd at arg, or raises "attempt to use a closed ik.crowd". */
ikl_crowd *ikl_checkcrowd(lua_State *L, int arg);
/* Pushes a new buffer on view `view` (IK_CROWD_*, named `name`, a static string) of the
 * crowd at crowd_idx, which it keeps alive. */
void ikl_push_crowd_buffer(lua_State *L, int crowd_idx, int view, const char *name);

#endif /* IKL_H */
