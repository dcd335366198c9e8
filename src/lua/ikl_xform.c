/*
 * ikl_xform.c: the transform contract of ik.chain (ikl_xform.h): what a transform is, how
 * its world pose is read and turned (an ik.bone or ik.node in C, anything else through
 * its methods), and which of a chain's bones a target or pole would move with.
 */
#include "ikl_xform.h"

#include <string.h>

/* The methods each use of a transform needs; the first, get_position, is what tells a
 * transform from a vec3-like table. */
const char *const ikl_bone_methods[] = {"get_position", "get_rotation", "set_rotation", NULL};
const char *const ikl_target_methods[] = {"get_position", "get_rotation", NULL};
const char *const ikl_pole_methods[] = {"get_position", NULL};

/* Whether the value at idx keeps the transform contract `methods`: an ik.bone or ik.node
 * always does (raising when closed); the module's other types never do; any other table
 * or userdata does when it has every method. IKL_PARTIAL_TRANSFORM: it has get_position but
 * lacks *missing, so it meant to be one. */
int ikl_transform_kind(lua_State *L, int idx, const char *const *methods, const char **missing) {
  ik_skeleton *sk;
  int bone, i, type = lua_type(L, idx);
  *missing = NULL;
  if (ikl_tobone(L, idx, &sk, &bone) || ikl_tonode(L, idx)) return IKL_IS_TRANSFORM;
  /* Indexing a userdata without __index would raise. */
  if (!ikl_indexable(L, idx)) return IKL_NOT_TRANSFORM;
  if (type == LUA_TUSERDATA && strncmp(ikl_typename(L, idx), "ik.", 3) == 0) return IKL_NOT_TRANSFORM;
  idx = lua_absindex(L, idx);
  for (i = 0; methods[i]; i++) {
    lua_getfield(L, idx, methods[i]);
    if (lua_isnil(L, -1)) *missing = methods[i];
    lua_pop(L, 1);
    if (*missing) return i == 0 ? IKL_NOT_TRANSFORM : IKL_PARTIAL_TRANSFORM;
  }
  return IKL_IS_TRANSFORM;
}

void ikl_xform_at(lua_State *L, int idx, ikl_xform *t) {
  t->idx = lua_absindex(L, idx);
  t->node = NULL;
  if (!ikl_tobone(L, t->idx, &t->sk, &t->bone)) {
    t->sk = NULL;
    t->node = ikl_tonode(L, t->idx);
  }
}

/* What a message says is being read: "bone 2", or `name` (the target, the pole). */
static const char *label(lua_State *L, const char *name, int bone) {
  return bone > 0 ? lua_pushfstring(L, "bone %d", bone) : name;
}

/* Raises a problem with what a transform gave or is: at construction or assignment as
 * "ik.chain: bad field '<field>' (<what>)", in solve (field NULL) as "ik.chain: <what>". */
int ikl_transform_error(lua_State *L, const char *field, const char *what) {
  if (field) return luaL_error(L, "ik.chain: bad field '%s' (%s)", field, what);
  return luaL_error(L, "ik.chain: %s", what);
}

/* Calls the object's method with no argument and leaves the one result on the stack. */
static void call_getter(lua_State *L, int idx, const char *method) {
  lua_getfield(L, idx, method);
  lua_pushvalue(L, idx);
  lua_call(L, 1, 1);
}

/* World position of the transform; raises (see ikl_transform_error) when a host object
 * returns something unusable. */
ik_vec3 ikl_xform_position(lua_State *L, const ikl_xform *t, const char *field, const char *name, int bone) {
  ik_vec3 p;
  if (t->sk) {
    ik_skeleton_get_world(t->sk, t->bone, &p, NULL);
    return p;
  }
  if (t->node) {
    ik_node_get_world(t->node, &p, NULL);
    return p;
  }
  call_getter(L, t->idx, "get_position");
  if (!ikl_tovec3(L, -1, &p)) {
    const char *got = ikl_typename(L, -1);
    ikl_transform_error(
        L, field,
        lua_pushfstring(L, "%s: get_position returned %s (vec3 expected)", label(L, name, bone), got));
  }
  if (!ikl_vec3_usable(p))
    ikl_transform_error(
        L, field,
        lua_pushfstring(L, "%s: get_position returned NaN, inf or a huge component", label(L, name, bone)));
  lua_pop(L, 1);
  return p;
}

/* A quaternion a host object returned (at the top of the stack, popped): any finite
 * non-zero one, as ik.bone and ik.node take them. */
static ik_quat returned_quat(lua_State *L, const char *method, const char *field, const char *name,
                             int bone) {
  ik_quat q;
  if (!ikl_toquat(L, -1, &q)) {
    const char *got = ikl_typename(L, -1);
    ikl_transform_error(
        L, field,
        lua_pushfstring(L, "%s: %s returned %s (quat expected)", label(L, name, bone), method, got));
  }
  if (!ikl_rotation_usable(q))
    ikl_transform_error(
        L, field,
        lua_pushfstring(L, "%s: %s returned a zero, NaN, inf or huge quat", label(L, name, bone), method));
  lua_pop(L, 1);
  return q;
}

/* World rotation of the transform. */
ik_quat ikl_xform_rotation(lua_State *L, const ikl_xform *t, const char *field, const char *name, int bone) {
  ik_quat q;
  if (t->sk) {
    ik_skeleton_get_world(t->sk, t->bone, NULL, &q);
    return q;
  }
  if (t->node) {
    ik_node_get_world(t->node, NULL, &q);
    return q;
  }
  call_getter(L, t->idx, "get_rotation");
  return returned_quat(L, "get_rotation", field, name, bone);
}

/* Turns the transform to a world rotation; bone (1-based) names it in messages. */
void ikl_xform_set_rotation(lua_State *L, const ikl_xform *t, ik_quat q, int bone) {
  ik_status st = IK_OK;
  if (t->sk) {
    st = ik_skeleton_set_world_rotation(t->sk, t->bone, q);
  } else if (t->node) {
    /* ikl_tonode hands nodes out const for readers; this one is a live ik.node the
     * chain was given to turn, as its own set_rotation would. */
    st = ik_node_set_world_rotation((ik_node *)t->node, q);
  } else {
    lua_getfield(L, t->idx, "set_rotation");
    lua_pushvalue(L, t->idx);
    ikl_pushquat(L, q);
    lua_call(L, 2, 0);
  }
  if (st != IK_OK)
    luaL_error(L, "ik.chain: bone %d refused its new rotation (%s)", bone, ik_status_message(st));
}

/* The world rotation of what the transform hangs from, as world * inverse(local): from
 * the transform alone, whatever the host's hierarchy. 0 when it cannot tell (a host
 * object without get_local_rotation: its chain's bone 1 constraint then stays in world
 * space). */
int ikl_parent_rotation(lua_State *L, const ikl_xform *t, ik_quat world, ik_quat *out, const char *field) {
  ik_quat local;
  if (t->sk) {
    ik_skeleton_get_local(t->sk, t->bone, NULL, &local);
  } else if (t->node) {
    ik_node_get_local(t->node, NULL, &local);
  } else {
    lua_getfield(L, t->idx, "get_local_rotation");
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return 0;
    }
    lua_pushvalue(L, t->idx);
    lua_call(L, 1, 1);
    local = returned_quat(L, "get_local_rotation", field, NULL, 1);
  }
  *out = ik_quat_normalize(ik_quat_mul(ik_quat_normalize(world), ik_quat_inverse(local)));
  return 1;
}

/* Pushes the chain's list of bones (the chain is at ci). */
void ikl_push_bones(lua_State *L, int ci) {
  ikl_getuservalue(L, ci);
  lua_getfield(L, -1, "bones");
  lua_remove(L, -2);
}

/* Sorts the transform at idx into *r: IK_REF_BONE, IK_REF_NODE or IK_REF_NONE (returned). */
int ikl_ref_at(lua_State *L, int idx, ik_ref *r) {
  memset(r, 0, sizeof *r);
  if (ikl_tobone_ref(L, idx, &r->sk, &r->bone, &r->closed))
    r->kind = IK_REF_BONE;
  else if ((r->node = ikl_tonode_ref(L, idx, &r->closed)) != NULL)
    r->kind = IK_REF_NODE;
  return r->kind;
}

/* The ikl_xform of a kept ik.bone or ik.node, raising as ikl_tobone and ikl_tonode do when
 * it has been closed since. */
void ikl_ref_xform(lua_State *L, const ik_ref *r, ikl_xform *t) {
  if (r->closed && *r->closed)
    luaL_error(L, r->kind == IK_REF_BONE ? "attempt to use a bone of a closed ik.skeleton"
                                         : "attempt to use a closed ik.node");
  t->idx = 0;
  t->sk = r->kind == IK_REF_BONE ? r->sk : NULL;
  t->bone = r->bone;
  t->node = r->kind == IK_REF_NODE ? r->node : NULL;
}

/* Bone i (0-based) of a bone chain (at ci): from its ref, or pushed from the list. */
void ikl_bone_xform(lua_State *L, const ikl_chain *c, int ci, int i, ikl_xform *t) {
  if (c->native) {
    ikl_ref_xform(L, &c->refs[i], t);
    return;
  }
  ikl_push_bones(L, ci);
  lua_rawgeti(L, -1, i + 1);
  lua_remove(L, -2);
  ikl_xform_at(L, -1, t);
}

/* Pops what ikl_bone_xform pushed. */
void ikl_bone_done(lua_State *L, const ikl_chain *c) {
  if (!c->native) lua_pop(L, 1);
}

/* Position of bone i (0-based) of a bone chain, read now. */
ik_vec3 ikl_bone_position(lua_State *L, const ikl_chain *c, int ci, int i) {
  ikl_xform t;
  ik_vec3 p;
  ikl_bone_xform(L, c, ci, i, &t);
  p = ikl_xform_position(L, &t, NULL, NULL, i + 1);
  ikl_bone_done(L, c);
  return p;
}

/* The 1-based index of the bone of this chain that the value at idx would move with: it
 * is that bone (*is_bone set), or an ik.node or ik.bone hanging from it or from below
 * it. The bone nearest the tip is named: a target on the hand depends on the shoulder
 * too, but the hand is where it was put. 0 when it moves with none that the chain can
 * see (host objects' hierarchies are not visible, nor the parents of ik.node bones). */
static int moves_with(lua_State *L, const ikl_chain *c, int ci, int idx, int *is_bone) {
  const ik_node *node;
  ik_skeleton *sk, *value_sk = NULL;
  int i, bone, value_bone = -1, found = 0;
  if (!c->bound) return 0; /* a point chain's joints are its own: nothing can hang from them */
  idx = lua_absindex(L, idx);
  if (c->native) {
    ik_ref v;
    *is_bone = 0;
    return ikl_ref_at(L, idx, &v) ? ik_bone_chain_moves_with(c, &v, is_bone) : 0;
  }
  node = ikl_tonode(L, idx);
  if (!node && !ikl_tobone(L, idx, &value_sk, &value_bone)) value_sk = NULL;
  ikl_push_bones(L, ci);
  for (i = c->count; i >= 1 && !found; i--) {
    lua_rawgeti(L, -1, i);
    *is_bone = lua_rawequal(L, -1, idx);
    if (*is_bone) {
      found = i;
    } else if ((node || value_sk) && ikl_tobone(L, -1, &sk, &bone)) {
      if (node ? ik_node_depends_on_bone(node, sk, bone)
               : sk == value_sk && ik_skeleton_in_subtree(sk, value_bone, bone))
        found = i;
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return found;
}

/* Pushes why `what` cannot be moving with bone `bone` (0: it is not, and NULL). */
static const char *moving_problem(lua_State *L, const char *what, int bone, int is_bone) {
  if (!bone) return NULL;
  return lua_pushfstring(L, "the %s %s bone %d of this chain: it would move with every solve", what,
                         is_bone ? "is" : "hangs from", bone);
}

const char *ikl_dependency_problem(lua_State *L, const ikl_chain *c, int ci, int idx, const char *what) {
  int is_bone = 0, bone = moves_with(L, c, ci, idx, &is_bone);
  return moving_problem(L, what, bone, is_bone);
}

/* ikl_dependency_problem for a kept ik.bone or ik.node (every bone one too). */
const char *ikl_dependency_problem_ref(lua_State *L, const ikl_chain *c, const ik_ref *v, const char *what) {
  int is_bone = 0, bone = ik_bone_chain_moves_with(c, v, &is_bone);
  return moving_problem(L, what, bone, is_bone);
}