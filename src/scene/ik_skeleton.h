/*
 * ik_skeleton.h: a bone hierarchy with lazily cached world transforms, and free
 * transforms ("nodes": targets, poles, props) that can hang from a bone or another node.
 *
 * A skeleton is bones in parents-first order: a bone's parent always has a smaller
 * index, so a single forward pass computes every world transform and a cycle cannot
 * be described at all. Each bone has a local transform (position and rotation relative
 * to its parent, "_ls"); its world transform ("_ws") is parent world * local:
 *
 *   position_ws = parent_position_ws + rotate(parent_rotation_ws, position_ls)
 *   rotation_ws = parent_rotation_ws * rotation_ls
 *
 * and for a root (parent -1) world = local. There is no scale. Conventions are those of
 * ik_math.h (right-handed, +Y up, radians, quaternions (x, y, z, w)).
 *
 * World transforms are computed on demand. A change to a bone marks it and its
 * descendants dirty; reading a dirty bone recomputes it and its dirty ancestors only,
 * so siblings' subtrees are never touched and reading a clean bone costs a copy.
 * Marking costs one pass over the bones after the changed one (descendants need not be
 * contiguous) the first time, and nothing more while its subtree stays dirty: a solver
 * writing a chain root first pays the pass once.
 *
 * The skeleton allocates nothing: the caller sizes a block with ik_skeleton_size, hands
 * it to ik_skeleton_init and frees it when done (there is no deinit). The block holds
 * no pointer into itself, so it may be moved or memcpy'd into a new block to make an
 * independent copy; do not copy one over a skeleton that nodes hang from (its versions
 * would go back and the nodes' caches could miss the change).
 *
 * Every function takes a skeleton made by ik_skeleton_init; those returning a status
 * say IK_E_NULL for a NULL one, the others return 0 (-1 for ik_skeleton_parent).
 *
 * Thread safety: getters take a const skeleton but refresh its cache, so even reads of
 * one skeleton must not run concurrently unless every bone read is clean (reading
 * every bone once from one thread, after the last change, leaves them all clean).
 */
#ifndef IK_SKELETON_H
#define IK_SKELETON_H

#include <stddef.h>
#include <stdint.h>

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One bone as ik_skeleton_init reads it; the skeleton copies what it needs. */
typedef struct ik_bone_desc {
  /* Not read and not kept: the skeleton knows bones by index only. Bindings keep names
   * (and resolve parents by name) themselves; the field is here so that one array can
   * describe a rig for both. Default NULL. */
  const char *name;
  /* Index of the parent bone, or -1 for a root. Precondition: -1 <= parent < the bone's
   * own index (parents first). Default -1. */
  int parent;
  /* Rest position relative to the parent (the parent's frame; world for a root), in
   * the caller's length unit, each coordinate within IK_REAL_MAX_COORD. Default zero. */
  ik_vec3 position;
  /* Rest rotation relative to the parent. Any finite non-zero length (normalised on the
   * way in). Default identity. */
  ik_quat rotation;
} ik_bone_desc;

/* Opaque: lives in the caller's block. */
typedef struct ik_skeleton ik_skeleton;

/* Sets the documented defaults: no name, a root at the origin with identity rotation. */
IK_API void ik_bone_desc_init(ik_bone_desc *desc);

/* Bytes a skeleton of bone_count bones needs; 0 when bone_count < 1 or the size would
 * not fit a size_t. The block must be aligned as malloc aligns (Lua userdata are). */
IK_API size_t ik_skeleton_size(int bone_count);

/* Builds a skeleton in `mem` (mem_size >= ik_skeleton_size(bone_count)) from bone_count
 * bone descriptions, every bone at rest, and points *out at it. Validates everything
 * first: when refused, nothing is written (neither mem nor *out) and err, when
 * non-NULL, names the field and the bone. Codes:
 *   IK_E_NULL       mem, bones or out is NULL
 *   IK_E_COUNT      bone_count < 1
 *   IK_E_PARAMETER  mem_size too small or mem misaligned ("mem_size", "mem"); a parent
 *                   not in [-1, own index) ("parent"); a zero rotation ("rotation")
 *   IK_E_NOT_FINITE / IK_E_RANGE  a position or rotation component NaN, infinite or
 *                   beyond IK_REAL_MAX_COORD */
IK_API ik_status ik_skeleton_init(void *mem, size_t mem_size, const ik_bone_desc *bones, int bone_count,
                                  ik_skeleton **out, ik_error *err);

/* Number of bones. */
IK_API int ik_skeleton_count(const ik_skeleton *sk);

/* Parent of `bone`: -1 for a root, and also -1 when bone is out of range (check the
 * range with ik_skeleton_count when the difference matters). */
IK_API int ik_skeleton_parent(const ik_skeleton *sk, int bone);

/* Whether `bone` is `ancestor` or one of its descendants; 0 when either is out of
 * range. O(depth). */
IK_API int ik_skeleton_in_subtree(const ik_skeleton *sk, int bone, int ancestor);

/* ---- reading (either output pointer may be NULL) ----
 * Both return IK_E_PARAMETER, outputs untouched, when bone is not in [0, count). */

/* World transform of `bone`. O(1) when the bone is clean; otherwise recomputes it and
 * its dirty ancestors (the lazy cache: see the thread-safety note at the top). */
IK_API ik_status ik_skeleton_get_world(const ik_skeleton *sk, int bone, ik_vec3 *position_ws,
                                       ik_quat *rotation_ws);
/* Local transform of `bone` (relative to its parent), as stored: rotation unit. */
IK_API ik_status ik_skeleton_get_local(const ik_skeleton *sk, int bone, ik_vec3 *position_ls,
                                       ik_quat *rotation_ls);

/* ---- writing ----
 * Each setter validates first and changes nothing when it refuses:
 *   IK_E_PARAMETER  bone not in [0, count), or a zero quaternion
 *   IK_E_NOT_FINITE a NaN or infinite component
 *   IK_E_RANGE      a component, or the local position a world setter works out,
 *                   beyond IK_REAL_MAX_COORD
 * Quaternions may have any non-zero length: they are normalised on the way in.
 * Descendants keep their local transforms, so they follow rigidly. A setter that
 * leaves the stored local transform bit-identical is not a change: nothing is dirtied
 * and the version stays. */

IK_API ik_status ik_skeleton_set_local_rotation(ik_skeleton *sk, int bone, ik_quat rotation_ls);
IK_API ik_status ik_skeleton_set_local_position(ik_skeleton *sk, int bone, ik_vec3 position_ls);
/* Turns the bone (about its own position) so that its world rotation is rotation_ws:
 * local = inverse(parent world rotation) * rotation_ws. */
IK_API ik_status ik_skeleton_set_world_rotation(ik_skeleton *sk, int bone, ik_quat rotation_ws);
/* Moves the bone itself (not its parent) so that its world position is position_ws;
 * its rotation is kept. */
IK_API ik_status ik_skeleton_set_world_position(ik_skeleton *sk, int bone, ik_vec3 position_ws);

/* Every bone back to its rest transform (bit-identical to just after init). Always
 * counts as a change. */
IK_API void ik_skeleton_reset(ik_skeleton *sk);

/* ---- versions (for caches built on the skeleton: nodes, bone-bound chains) ---- */

/* Starts at 1 and goes up by one at each change to any bone: equal versions, no change
 * in between. Reading never changes it. */
IK_API uint64_t ik_skeleton_version(const ik_skeleton *sk);
/* The skeleton version of the last change that may have moved `bone` in world space (a
 * change to the bone or to an ancestor); 0 when bone is out of range. Changes to other
 * bones leave it alone, so a cache keyed on it survives them. */
IK_API uint64_t ik_skeleton_bone_version(const ik_skeleton *sk, int bone);

/* Diagnostic: how many bone world transforms have been computed since init. For tests
 * and profiling of the lazy cache; never needed for correctness. */
IK_API uint64_t ik_skeleton_recompute_count(const ik_skeleton *sk);

/* ---- nodes ---- */

/* A free transform: local position and rotation relative to an optional parent, which
 * is a skeleton bone or another node (never both). Without a parent, local is world.
 * The caller owns the struct and any parent it names, and keeps them alive (and in
 * place) as long as the node refers to them. The world transform is cached against the
 * parent's version, so reading it when nothing moved costs a walk up the node's parent
 * nodes and no maths.
 *
 * Every field is private: go through the functions, which keep the cache honest. If a
 * parent skeleton is re-initialised in the same block, set the node's parent again
 * (versions restart with a new skeleton). */
typedef struct ik_node {
  ik_vec3 position_ls;
  ik_quat rotation_ls; /* unit */
  /* The parent: bone parent_bone of parent_skeleton, or parent_node, or neither. */
  const ik_skeleton *parent_skeleton;
  int parent_bone;
  struct ik_node *parent_node;
  /* Cache: the world transform, valid when cache_valid and the parent's version is
   * still parent_version. world_version goes up each time it is recomputed: child
   * nodes key their own caches on it. */
  ik_vec3 position_ws;
  ik_quat rotation_ws;
  uint64_t parent_version;
  uint64_t world_version;
  int cache_valid;
} ik_node;

/* A node with no parent (so local is world) at `position`, turned by `rotation` (any
 * non-zero length). Validates like the setters below; when refused the node is not
 * written. */
IK_API ik_status ik_node_init(ik_node *node, ik_vec3 position, ik_quat rotation);

/* Hangs the node from bone `bone` of sk. The local transform is kept, so the node
 * jumps to the same offset from its new parent (read the world transform before and
 * set it after to keep the node in place). IK_E_NULL for a NULL sk, IK_E_PARAMETER for
 * a bone out of range; nothing changes when refused. */
IK_API ik_status ik_node_set_parent_bone(ik_node *node, const ik_skeleton *sk, int bone);
/* Hangs the node from `parent`, or detaches it (no parent) when parent is NULL; the
 * local transform is kept. IK_E_PARAMETER, nothing changed, when the node would become
 * its own ancestor (parent is the node or hangs from it). */
IK_API ik_status ik_node_set_parent_node(ik_node *node, ik_node *parent);

/* World transform (either pointer may be NULL). Refreshes the caches of the node and of
 * its parent nodes, and may refresh the parent skeleton's cache: same thread-safety
 * rule as the skeleton. */
IK_API void ik_node_get_world(const ik_node *node, ik_vec3 *position_ws, ik_quat *rotation_ws);
IK_API void ik_node_get_local(const ik_node *node, ik_vec3 *position_ls, ik_quat *rotation_ls);

/* Setters validate like the skeleton's (IK_E_NOT_FINITE, IK_E_RANGE, IK_E_PARAMETER for
 * a zero quaternion) and change nothing when they refuse. World setters store the
 * local transform relative to the current parent. */
IK_API ik_status ik_node_set_local_position(ik_node *node, ik_vec3 position_ls);
IK_API ik_status ik_node_set_local_rotation(ik_node *node, ik_quat rotation_ls);
IK_API ik_status ik_node_set_world_position(ik_node *node, ik_vec3 position_ws);
IK_API ik_status ik_node_set_world_rotation(ik_node *node, ik_quat rotation_ws);

/* Whether the node's world transform depends on `bone` of sk: its chain of parents
 * ends at that bone or at one of its descendants. A chain bound to bones uses it to
 * refuse a target that would move with the chain it drives. 0 for a NULL sk or a bone
 * out of range. */
IK_API int ik_node_depends_on_bone(const ik_node *node, const ik_skeleton *sk, int bone);

#ifdef __cplusplus
}
#endif

#endif /* IK_SKELETON_H */
