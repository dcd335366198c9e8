/* Skeletons with lazily cached forward kinematics, and nodes hanging from them. */
#include "ik_skeleton.h"

#include <string.h>

#include "ik_internal.h"

/* Two arrays follow the header, `count` entries each, so the block holds no pointer into
 * itself and can be copied: the bones' links, then their transforms (an ik__link's size
 * is a multiple of every alignment a float or double ik__bone needs). Marking a subtree
 * dirty and finding a dirty path walk the links alone: moving a character's hips reads
 * and writes a few cache lines, not every bone's transforms. */
typedef struct ik__bone {
  ik_vec3 position_ls;
  ik_quat rotation_ls;
  /* Cache, valid when its link is not dirty. Invariant: a dirty bone's descendants are
   * all dirty, so a clean bone's ancestors are all clean and a clean parent is always
   * safe to read. */
  ik_vec3 position_ws;
  ik_quat rotation_ws;
  ik_vec3 rest_position_ls;
  ik_quat rest_rotation_ls;
} ik__bone;

typedef struct ik__link {
  uint64_t world_version;
  int parent;
  int dirty;
  /* Scratch slot: the lazy update stacks the dirty path here, one entry per bone, so
   * reading needs neither recursion nor a caller buffer. */
  int path;
  /* One past the last bone of its subtree: its descendants all lie between it and this
   * (parents come first), so marking them dirty scans no further. */
  int subtree_end;
} ik__link;

struct ik_skeleton {
  int count;
  uint64_t version;
  uint64_t recomputes;
  ik__link links[]; /* `count` of them, then `count` ik__bone: sized by ik_skeleton_size */
};

/* The bones start aligned after any number of links (C99 has no static_assert). */
typedef char ik__links_keep_bones_aligned[sizeof(ik__link) % sizeof(uint64_t) == 0 ? 1 : -1];

/* The strictest alignment a member needs; C99 has no alignof, offsetof after a char
 * gives it. */
typedef struct ik__align_probe {
  char c;
  union {
    ik_real r;
    uint64_t u;
    void *p;
    int i;
  } x;
} ik__align_probe;
#define IK__ALIGN offsetof(ik__align_probe, x)

/* `sk` is logically const for readers; the cache inside is not. Every skeleton lives
 * in a caller's writable block (init takes void *), so casting the const away to
 * refresh it is defined. */
static ik_skeleton *mutable_skeleton(const ik_skeleton *sk) { return (ik_skeleton *)sk; }

static int bone_in_range(const ik_skeleton *sk, int bone) { return sk && bone >= 0 && bone < sk->count; }

/* The quaternion checks every input goes through: finite and within range per
 * component (so its squared length cannot overflow), and long enough to normalise. */
static ik_status check_quat(ik_quat q, ik_error *err, const char *field, int index) {
  const ik_status st = ik__check_quat(q, err, field, index);
  if (st != IK_OK) return st;
  if (!(ik_quat_dot(q, q) > IK_TINY_LEN2)) return ik__fail(err, IK_E_PARAMETER, field, index);
  return IK_OK;
}

void ik_bone_desc_init(ik_bone_desc *desc) {
  desc->name = NULL;
  desc->parent = -1;
  desc->position = ik_vec3_zero();
  desc->rotation = ik_quat_identity();
}

/* The bones' transforms, after the links. Mutable for readers too: see mutable_skeleton. */
static ik__bone *bones_of(const ik_skeleton *sk) {
  return (ik__bone *)(void *)((ik__link *)sk->links + sk->count);
}

size_t ik_skeleton_size(int bone_count) {
  const size_t head = offsetof(ik_skeleton, links);
  if (bone_count < 1) return 0;
  if ((size_t)bone_count > (SIZE_MAX - head) / (sizeof(ik__bone) + sizeof(ik__link))) return 0;
  return head + (size_t)bone_count * (sizeof(ik__bone) + sizeof(ik__link));
}

static ik_status validate_init(const void *mem, size_t mem_size, const ik_bone_desc *bones, int bone_count,
                               ik_skeleton *const *out, ik_error *err) {
  size_t need;
  ik_status st;
  int i;
  if (!mem) return ik__fail(err, IK_E_NULL, "mem", -1);
  if (!bones) return ik__fail(err, IK_E_NULL, "bones", -1);
  if (!out) return ik__fail(err, IK_E_NULL, "out", -1);
  if (bone_count < 1) return ik__fail(err, IK_E_COUNT, "bone_count", -1);
  need = ik_skeleton_size(bone_count);
  if (need == 0 || mem_size < need) return ik__fail(err, IK_E_PARAMETER, "mem_size", -1);
  if ((uintptr_t)mem % IK__ALIGN != 0) return ik__fail(err, IK_E_PARAMETER, "mem", -1);
  for (i = 0; i < bone_count; i++) {
    if (bones[i].parent < -1 || bones[i].parent >= i) return ik__fail(err, IK_E_PARAMETER, "parent", i);
    if ((st = ik__check_vec3(bones[i].position, err, "position", i)) != IK_OK) return st;
    if ((st = check_quat(bones[i].rotation, err, "rotation", i)) != IK_OK) return st;
  }
  return IK_OK;
}

/* Dirties every bone under one new version (init, reset). */
static void mark_all_dirty(ik_skeleton *sk) {
  ik__link *l = sk->links;
  int i;
  sk->version++;
  for (i = 0; i < sk->count; i++) {
    l[i].dirty = 1;
    l[i].world_version = sk->version;
  }
}

ik_status ik_skeleton_init(void *mem, size_t mem_size, const ik_bone_desc *bones, int bone_count,
                           ik_skeleton **out, ik_error *err) {
  ik_skeleton *sk;
  ik__link *l;
  int i;
  const ik_status st = validate_init(mem, mem_size, bones, bone_count, out, err);
  if (st != IK_OK) return st;
  sk = (ik_skeleton *)mem;
  /* Zeroed first so padding is deterministic: two skeletons built alike compare equal
   * byte for byte, which keeps copies and test snapshots simple. */
  memset(sk, 0, ik_skeleton_size(bone_count));
  sk->count = bone_count;
  sk->version = 0; /* mark_all_dirty makes it 1 */
  sk->recomputes = 0;
  l = sk->links;
  for (i = 0; i < bone_count; i++) {
    ik__bone *b = &bones_of(sk)[i];
    l[i].parent = bones[i].parent;
    l[i].subtree_end = i + 1;
    b->rest_position_ls = bones[i].position;
    b->rest_rotation_ls = ik_quat_normalize(bones[i].rotation);
    b->position_ls = b->rest_position_ls;
    b->rotation_ls = b->rest_rotation_ls;
    b->position_ws = ik_vec3_zero();
    b->rotation_ws = ik_quat_identity();
  }
  /* Backwards, children before parents: each end is final before its parent reads it. */
  for (i = bone_count - 1; i > 0; i--) {
    ik__link *parent = l[i].parent >= 0 ? &l[l[i].parent] : NULL;
    if (parent && parent->subtree_end < l[i].subtree_end) parent->subtree_end = l[i].subtree_end;
  }
  mark_all_dirty(sk);
  *out = sk;
  return IK_OK;
}

int ik_skeleton_count(const ik_skeleton *sk) { return sk ? sk->count : 0; }

int ik_skeleton_parent(const ik_skeleton *sk, int bone) {
  return bone_in_range(sk, bone) ? sk->links[bone].parent : -1;
}

int ik_skeleton_in_subtree(const ik_skeleton *sk, int bone, int ancestor) {
  if (!bone_in_range(sk, bone) || !bone_in_range(sk, ancestor)) return 0;
  /* Parents have smaller indices: once below `ancestor` the walk can never meet it. */
  while (bone > ancestor) bone = sk->links[bone].parent;
  return bone == ancestor;
}

/* ---- the lazy cache ---- */

/* World = parent world * local, for a bone whose parent is clean. The product is
 * renormalised: a 200-bone chain would otherwise drift off unit length. */
static void compute_world(ik_skeleton *sk, ik__link *l, int bone) {
  ik__bone *b = &bones_of(sk)[bone];
  if (l[bone].parent < 0) {
    b->position_ws = b->position_ls;
    b->rotation_ws = b->rotation_ls;
  } else {
    const ik__bone *p = &bones_of(sk)[l[bone].parent];
    b->position_ws = ik_vec3_add(p->position_ws, ik_quat_rotate(p->rotation_ws, b->position_ls));
    b->rotation_ws = ik_quat_normalize(ik_quat_mul(p->rotation_ws, b->rotation_ls));
  }
  l[bone].dirty = 0;
  sk->recomputes++;
}

/* Makes `bone` clean: stacks it and its dirty ancestors (up to the first clean one,
 * whose ancestors are clean too), then computes them top down. */
static void update_bone(ik_skeleton *sk, int bone) {
  ik__link *l = sk->links;
  int depth = 0, b = bone;
  if (!l[bone].dirty) return;
  while (b >= 0 && l[b].dirty) {
    l[depth++].path = b;
    b = l[b].parent;
  }
  while (depth > 0) compute_world(sk, l, l[--depth].path);
}

/* Records a change to `bone`'s local transform: a new version, and the bone and its
 * descendants dirty. */
static void mark_dirty(ik_skeleton *sk, int bone) {
  ik__link *l = sk->links, *b = &l[bone];
  int i;
  sk->version++;
  b->world_version = sk->version;
  /* Already dirty: by the invariant so is its whole subtree, and their versions are
   * already newer than anything a reader saw. The common case when a solver writes a
   * chain root first. */
  if (b->dirty) return;
  b->dirty = 1;
  /* Descendants are not contiguous in a parents-first order, but they all come later,
   * before subtree_end, and their parents before them: one forward pass finds them. A bone that was clean
   * with a dirty parent can only be in this subtree (the invariant). */
  for (i = bone + 1; i < b->subtree_end; i++) {
    ik__link *c = &l[i];
    if (!c->dirty && c->parent >= 0 && l[c->parent].dirty) { /* roots have none */
      c->dirty = 1;
      c->world_version = sk->version;
    }
  }
}

/* World transform of bone's parent (identity for a root), made clean. */
static void parent_world(ik_skeleton *sk, int bone, ik_vec3 *position_ws, ik_quat *rotation_ws) {
  const int parent = sk->links[bone].parent;
  if (parent < 0) {
    *position_ws = ik_vec3_zero();
    *rotation_ws = ik_quat_identity();
    return;
  }
  update_bone(sk, parent);
  *position_ws = bones_of(sk)[parent].position_ws;
  *rotation_ws = bones_of(sk)[parent].rotation_ws;
}

static int vec3_identical(ik_vec3 a, ik_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

/* The two writes every setter ends with; a bit-identical value is no change. */
static void store_rotation(ik_skeleton *sk, int bone, ik_quat rotation_ls) {
  if (ik__quat_identical(bones_of(sk)[bone].rotation_ls, rotation_ls)) return;
  bones_of(sk)[bone].rotation_ls = rotation_ls;
  mark_dirty(sk, bone);
}
static void store_position(ik_skeleton *sk, int bone, ik_vec3 position_ls) {
  if (vec3_identical(bones_of(sk)[bone].position_ls, position_ls)) return;
  bones_of(sk)[bone].position_ls = position_ls;
  mark_dirty(sk, bone);
}

ik_status ik_skeleton_get_world(const ik_skeleton *sk, int bone, ik_vec3 *position_ws, ik_quat *rotation_ws) {
  ik_skeleton *m;
  if (!sk) return IK_E_NULL;
  if (!bone_in_range(sk, bone)) return IK_E_PARAMETER;
  m = mutable_skeleton(sk);
  update_bone(m, bone);
  if (position_ws) *position_ws = bones_of(m)[bone].position_ws;
  if (rotation_ws) *rotation_ws = bones_of(m)[bone].rotation_ws;
  return IK_OK;
}

ik_status ik_skeleton_get_local(const ik_skeleton *sk, int bone, ik_vec3 *position_ls, ik_quat *rotation_ls) {
  if (!sk) return IK_E_NULL;
  if (!bone_in_range(sk, bone)) return IK_E_PARAMETER;
  if (position_ls) *position_ls = bones_of(sk)[bone].position_ls;
  if (rotation_ls) *rotation_ls = bones_of(sk)[bone].rotation_ls;
  return IK_OK;
}

ik_status ik_skeleton_set_local_rotation(ik_skeleton *sk, int bone, ik_quat rotation_ls) {
  ik_status st;
  if (!sk) return IK_E_NULL;
  if (!bone_in_range(sk, bone)) return IK_E_PARAMETER;
  if ((st = check_quat(rotation_ls, NULL, NULL, -1)) != IK_OK) return st;
  store_rotation(sk, bone, ik_quat_normalize(rotation_ls));
  return IK_OK;
}

ik_status ik_skeleton_set_local_position(ik_skeleton *sk, int bone, ik_vec3 position_ls) {
  ik_status st;
  if (!sk) return IK_E_NULL;
  if (!bone_in_range(sk, bone)) return IK_E_PARAMETER;
  if ((st = ik__check_vec3(position_ls, NULL, NULL, -1)) != IK_OK) return st;
  store_position(sk, bone, position_ls);
  return IK_OK;
}

ik_status ik_skeleton_set_world_rotation(ik_skeleton *sk, int bone, ik_quat rotation_ws) {
  ik_vec3 parent_pos_ws;
  ik_quat parent_rot_ws;
  ik_status st;
  if (!sk) return IK_E_NULL;
  if (!bone_in_range(sk, bone)) return IK_E_PARAMETER;
  if ((st = check_quat(rotation_ws, NULL, NULL, -1)) != IK_OK) return st;
  parent_world(sk, bone, &parent_pos_ws, &parent_rot_ws);
  store_rotation(
      sk, bone,
      ik_quat_normalize(ik_quat_mul(ik_quat_conjugate(parent_rot_ws), ik_quat_normalize(rotation_ws))));
  return IK_OK;
}

ik_status ik_skeleton_set_world_position(ik_skeleton *sk, int bone, ik_vec3 position_ws) {
  ik_vec3 parent_pos_ws, position_ls;
  ik_quat parent_rot_ws;
  ik_status st;
  if (!sk) return IK_E_NULL;
  if (!bone_in_range(sk, bone)) return IK_E_PARAMETER;
  if ((st = ik__check_vec3(position_ws, NULL, NULL, -1)) != IK_OK) return st;
  parent_world(sk, bone, &parent_pos_ws, &parent_rot_ws);
  position_ls = ik_quat_rotate(ik_quat_conjugate(parent_rot_ws), ik_vec3_sub(position_ws, parent_pos_ws));
  /* Both inputs may be in range while their difference is not. */
  if ((st = ik__check_vec3(position_ls, NULL, NULL, -1)) != IK_OK) return st;
  store_position(sk, bone, position_ls);
  return IK_OK;
}

void ik_skeleton_reset(ik_skeleton *sk) {
  int i;
  if (!sk) return;
  for (i = 0; i < sk->count; i++) {
    bones_of(sk)[i].position_ls = bones_of(sk)[i].rest_position_ls;
    bones_of(sk)[i].rotation_ls = bones_of(sk)[i].rest_rotation_ls;
  }
  mark_all_dirty(sk);
}

uint64_t ik_skeleton_version(const ik_skeleton *sk) { return sk ? sk->version : 0; }

uint64_t ik_skeleton_bone_version(const ik_skeleton *sk, int bone) {
  return bone_in_range(sk, bone) ? sk->links[bone].world_version : 0;
}

uint64_t ik_skeleton_recompute_count(const ik_skeleton *sk) { return sk ? sk->recomputes : 0; }

/* ---- nodes ---- */

/* Same reasoning as mutable_skeleton: nodes live in their owners' writable memory. */
static ik_node *mutable_node(const ik_node *node) { return (ik_node *)node; }

ik_status ik_node_init(ik_node *node, ik_vec3 position, ik_quat rotation) {
  ik_status st;
  if (!node) return IK_E_NULL;
  if ((st = ik__check_vec3(position, NULL, NULL, -1)) != IK_OK) return st;
  if ((st = check_quat(rotation, NULL, NULL, -1)) != IK_OK) return st;
  node->position_ls = position;
  node->rotation_ls = ik_quat_normalize(rotation);
  node->parent_skeleton = NULL;
  node->parent_bone = -1;
  node->parent_node = NULL;
  node->position_ws = ik_vec3_zero();
  node->rotation_ws = ik_quat_identity();
  node->parent_version = 0;
  node->world_version = 0;
  node->cache_valid = 0;
  return IK_OK;
}

ik_status ik_node_set_parent_bone(ik_node *node, const ik_skeleton *sk, int bone) {
  if (!node || !sk) return IK_E_NULL;
  if (!bone_in_range(sk, bone)) return IK_E_PARAMETER;
  node->parent_skeleton = sk;
  node->parent_bone = bone;
  node->parent_node = NULL;
  node->cache_valid = 0;
  return IK_OK;
}

ik_status ik_node_set_parent_node(ik_node *node, ik_node *parent) {
  const ik_node *n;
  if (!node) return IK_E_NULL;
  /* The node would be its own ancestor when it is on the new parent's chain. Chains
   * are acyclic (every link went through this check), so the walk ends. */
  for (n = parent; n; n = n->parent_node)
    if (n == node) return IK_E_PARAMETER;
  node->parent_skeleton = NULL;
  node->parent_bone = -1;
  node->parent_node = parent;
  node->cache_valid = 0;
  return IK_OK;
}

/* Refreshes one node whose parent node, if any, is already fresh. The parent's version
 * is read first: when it is the one the cache was built at, no maths at all. */
static void node_refresh_one(ik_node *node) {
  uint64_t version = 0;
  ik_vec3 parent_pos_ws = ik_vec3_zero();
  ik_quat parent_rot_ws = ik_quat_identity();
  if (node->parent_skeleton) {
    version = ik_skeleton_bone_version(node->parent_skeleton, node->parent_bone);
  } else if (node->parent_node) {
    version = node->parent_node->world_version;
  }
  if (node->cache_valid && version == node->parent_version) return;
  if (node->parent_skeleton) {
    ik_skeleton_get_world(node->parent_skeleton, node->parent_bone, &parent_pos_ws, &parent_rot_ws);
  } else if (node->parent_node) {
    parent_pos_ws = node->parent_node->position_ws;
    parent_rot_ws = node->parent_node->rotation_ws;
  }
  node->position_ws = ik_vec3_add(parent_pos_ws, ik_quat_rotate(parent_rot_ws, node->position_ls));
  node->rotation_ws = ik_quat_normalize(ik_quat_mul(parent_rot_ws, node->rotation_ls));
  node->parent_version = version;
  node->world_version++;
  node->cache_valid = 1;
}

/* Refreshes the node's parent nodes top down, then the node. Each step walks from the
 * node to the ancestor it refreshes: quadratic in the depth, but node chains are a
 * handful long and this needs neither recursion nor scratch memory. */
static void node_refresh(ik_node *node) {
  int depth = 0, k, i;
  const ik_node *n;
  for (n = node->parent_node; n; n = n->parent_node) depth++;
  for (k = depth; k >= 0; k--) {
    ik_node *a = node;
    for (i = 0; i < k; i++) a = a->parent_node;
    node_refresh_one(a);
  }
}

/* The parent's world transform (identity without a parent), made fresh. */
static void node_parent_world(ik_node *node, ik_vec3 *position_ws, ik_quat *rotation_ws) {
  *position_ws = ik_vec3_zero();
  *rotation_ws = ik_quat_identity();
  if (node->parent_skeleton) {
    ik_skeleton_get_world(node->parent_skeleton, node->parent_bone, position_ws, rotation_ws);
  } else if (node->parent_node) {
    node_refresh(node->parent_node);
    *position_ws = node->parent_node->position_ws;
    *rotation_ws = node->parent_node->rotation_ws;
  }
}

void ik_node_get_world(const ik_node *node, ik_vec3 *position_ws, ik_quat *rotation_ws) {
  ik_node *m = mutable_node(node);
  node_refresh(m);
  if (position_ws) *position_ws = m->position_ws;
  if (rotation_ws) *rotation_ws = m->rotation_ws;
}

void ik_node_get_local(const ik_node *node, ik_vec3 *position_ls, ik_quat *rotation_ls) {
  if (position_ls) *position_ls = node->position_ls;
  if (rotation_ls) *rotation_ls = node->rotation_ls;
}

ik_status ik_node_set_local_position(ik_node *node, ik_vec3 position_ls) {
  ik_status st;
  if (!node) return IK_E_NULL;
  if ((st = ik__check_vec3(position_ls, NULL, NULL, -1)) != IK_OK) return st;
  node->position_ls = position_ls;
  node->cache_valid = 0;
  return IK_OK;
}

ik_status ik_node_set_local_rotation(ik_node *node, ik_quat rotation_ls) {
  ik_status st;
  if (!node) return IK_E_NULL;
  if ((st = check_quat(rotation_ls, NULL, NULL, -1)) != IK_OK) return st;
  node->rotation_ls = ik_quat_normalize(rotation_ls);
  node->cache_valid = 0;
  return IK_OK;
}

ik_status ik_node_set_world_position(ik_node *node, ik_vec3 position_ws) {
  ik_vec3 parent_pos_ws, position_ls;
  ik_quat parent_rot_ws;
  ik_status st;
  if (!node) return IK_E_NULL;
  if ((st = ik__check_vec3(position_ws, NULL, NULL, -1)) != IK_OK) return st;
  node_parent_world(node, &parent_pos_ws, &parent_rot_ws);
  position_ls = ik_quat_rotate(ik_quat_conjugate(parent_rot_ws), ik_vec3_sub(position_ws, parent_pos_ws));
  if ((st = ik__check_vec3(position_ls, NULL, NULL, -1)) != IK_OK) return st;
  node->position_ls = position_ls;
  node->cache_valid = 0;
  return IK_OK;
}

ik_status ik_node_set_world_rotation(ik_node *node, ik_quat rotation_ws) {
  ik_vec3 parent_pos_ws;
  ik_quat parent_rot_ws;
  ik_status st;
  if (!node) return IK_E_NULL;
  if ((st = check_quat(rotation_ws, NULL, NULL, -1)) != IK_OK) return st;
  node_parent_world(node, &parent_pos_ws, &parent_rot_ws);
  node->rotation_ls =
      ik_quat_normalize(ik_quat_mul(ik_quat_conjugate(parent_rot_ws), ik_quat_normalize(rotation_ws)));
  node->cache_valid = 0;
  return IK_OK;
}

int ik_node_depends_on_bone(const ik_node *node, const ik_skeleton *sk, int bone) {
  const ik_node *n = node;
  if (!node || !bone_in_range(sk, bone)) return 0;
  /* A node hangs from a bone or a node, never both: follow the nodes to the first bone
   * (or to a node with no parent, which depends on no bone). */
  while (n->parent_node) n = n->parent_node;
  return n->parent_skeleton == sk && ik_skeleton_in_subtree(sk, n->parent_bone, bone);
}
