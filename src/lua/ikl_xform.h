/*
 * ikl_xform.h: the transform contract ik.chain keeps with its bones, target and pole
 * (ikl_xform.c). A transform is anything with get_position(), get_rotation() and
 * set_rotation(q) in world space: an ik.bone or ik.node (read and written in C), or a
 * host's own object (through its methods). Not installed.
 */
#ifndef IKL_XFORM_H
#define IKL_XFORM_H

#include "ik_bone_chain.h"
#include "ikl.h"

/* The methods each use of a transform needs; the first, get_position, is what tells a
 * transform from a vec3-like table. */
extern const char *const ikl_bone_methods[];
extern const char *const ikl_target_methods[];
extern const char *const ikl_pole_methods[];

enum { IKL_NOT_TRANSFORM, IKL_IS_TRANSFORM, IKL_PARTIAL_TRANSFORM };

/* Whether the value at idx keeps the transform contract `methods`: an ik.bone or ik.node
 * always does (raising when closed); the module's other types never do; any other table
 * or userdata does when it has every method. IKL_PARTIAL_TRANSFORM: it has get_position
 * but lacks *missing, so it meant to be one. */
int ikl_transform_kind(lua_State *L, int idx, const char *const *methods, const char **missing);

/* A transform on the stack, sorted once: an ik.bone or ik.node is read and written in C
 * (the fast path: no allocation), anything else through its methods. */
typedef struct ikl_xform {
  int idx;
  ik_skeleton *sk; /* an ik.bone: its skeleton and C index */
  int bone;
  const ik_node *node; /* an ik.node */
} ikl_xform;

void ikl_xform_at(lua_State *L, int idx, ikl_xform *t);

/* Raises a problem with what a transform gave or is: at construction or assignment as
 * "ik.chain: bad field '<field>' (<what>)", in solve (field NULL) as "ik.chain: <what>". */
int ikl_transform_error(lua_State *L, const char *field, const char *what);

/* World position and rotation of the transform; raise (see ikl_transform_error) when a
 * host object returns something unusable, naming `name` or bone `bone` (1-based). */
ik_vec3 ikl_xform_position(lua_State *L, const ikl_xform *t, const char *field, const char *name, int bone);
ik_quat ikl_xform_rotation(lua_State *L, const ikl_xform *t, const char *field, const char *name, int bone);
/* Turns the transform to a world rotation; bone (1-based) names it in messages. */
void ikl_xform_set_rotation(lua_State *L, const ikl_xform *t, ik_quat q, int bone);
/* The world rotation of what the transform hangs from, as world * inverse(local); 0
 * when it cannot tell (a host object without get_local_rotation). */
int ikl_parent_rotation(lua_State *L, const ikl_xform *t, ik_quat world, ik_quat *out, const char *field);

/* Sorts the transform at idx into *r: IK_REF_BONE, IK_REF_NODE or IK_REF_NONE (returned). */
int ikl_ref_at(lua_State *L, int idx, ik_ref *r);
/* The ikl_xform of a kept ik.bone or ik.node, raising as ikl_tobone and ikl_tonode do
 * when it has been closed since. */
void ikl_ref_xform(lua_State *L, const ik_ref *r, ikl_xform *t);

/* Pushes the list of bones of the bone chain at ci. */
void ikl_push_bones(lua_State *L, int ci);
/* Bone i (0-based) of a bone chain (at ci): from its ref, or pushed from the list;
 * ikl_bone_done pops what it pushed. */
void ikl_bone_xform(lua_State *L, const ikl_chain *c, int ci, int i, ikl_xform *t);
void ikl_bone_done(lua_State *L, const ikl_chain *c);
/* Position of bone i (0-based) of a bone chain, read now. */
ik_vec3 ikl_bone_position(lua_State *L, const ikl_chain *c, int ci, int i);

/* Pushes why the value at idx cannot be the chain's `what` ("target", "pole"): it is, or
 * hangs from, one of the chain's bones and would move with every solve. NULL when it
 * can. The _ref form takes a kept ik.bone or ik.node of a chain whose bones are all
 * ones too. */
const char *ikl_dependency_problem(lua_State *L, const ikl_chain *c, int ci, int idx, const char *what);
const char *ikl_dependency_problem_ref(lua_State *L, const ikl_chain *c, const ik_ref *v, const char *what);

#endif /* IKL_XFORM_H */
