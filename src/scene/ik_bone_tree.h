/*
 * ik_bone_tree.h: a tree of joints the scene solves with the core's tree job (ik_tree.h).
 *
 * The tree is given as joints, root first, each with the index of its parent joint
 * (every parent before its children). The scene cuts it into the core's branches: a
 * branch runs from the root, or from a joint with several children, down to the next
 * joint with none (an end effector) or several. Effectors are numbered in joint order;
 * a branch is named by its last joint. Each solve copies the joints into the branches,
 * runs the job and copies them back.
 *
 * A bone tree follows bones of one skeleton: joint j is bone j's position. Each solve
 * reads the bones' world pose, solves, and turns the bones, branch by branch, root
 * first: a bone with several children by the rotation that takes two of them where the
 * solver put them (the solve holds a skeleton's branch points rigid: every branch from a
 * bone with several children is a rigid_base branch, ik_tree.h); the bones of a branch
 * with one child each as a bone chain turns them (ik_rotations.h), from the bone the
 * branch hangs from as turned. An effector branch hanging from a branch point is first
 * solved once more as a chain from where that bone's turn put it. Positions are never
 * written and bones never stretch.
 *
 * Unless deterministic (a bone tree's default is not), a bone tree works as a bone chain
 * does (ik_bone_chain.h): each branch's bones turn on from their last result (twist
 * memory, per branch slot), so none spins about its length where a solved direction
 * comes round opposite the animated one, and the solve starts from the last solution's
 * bone directions, carried in the frame of what the root bone hangs from and laid out
 * with the bones' lengths as read (warm start). A deterministic bone tree starts from
 * the bones as read and turns each bone by the least rotation from there.
 *
 * Memory: the caller sizes a block with ik_bone_tree_size (aligned as malloc's) and
 * hands it to ik_bone_tree_init; nothing here allocates. A tree keeps the poles and the
 * skeleton it is given (and the skeleton owner's closed flag): keep them alive while it
 * refers to them.
 */
#ifndef IK_BONE_TREE_H
#define IK_BONE_TREE_H

#include <stddef.h>

#include "ik_api.h"
#include "ik_bone_chain.h"
#include "ik_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ik_bone_tree {
  int joints, branches, effectors;
  int iterations;             /* the job's sweeps, >= 1 (default 10) */
  ik_real tolerance;          /* >= 0 (default 1e-3) */
  int deterministic;          /* start every solve from the pose given (default), else from the last */
  int closed;                 /* set by the owner: solves then refuse the tree */
  int *parents;               /* joints: parent joint, -1 for the root */
  ik_vec3 *positions;         /* joints: the pose (solved) */
  ik_vec3 *start;             /* joints: the pose given, where a deterministic solve starts */
  ik_real *lengths;           /* joints: lengths[j] the bone from parents[j] to j (lengths[0] 0) */
  ik_tree_branch *branch;     /* branches */
  ik_vec3 *branch_points;     /* every branch's joints, one after another */
  ik_vec3 *branch_rest;       /* the same, in the pose given */
  ik_real *branch_lengths;    /* every branch's bones */
  ik_constraint *branch_cons; /* every branch's bones, IK_CONSTRAINT_NONE where unset */
  int *branch_joint;          /* every branch's joints: the tree's joint index */
  int *branch_first;          /* branches: offset of its first joint in the arrays above */
  int *bone_branch;           /* joints: the branch bone parents[j] -> j lies in (-1 for the root) */
  int *bone_slot;             /* joints: j's place in that branch (1 .. its count - 1) */
  int *effector_branch;       /* effectors: its branch */
  int *effector_joint;        /* effectors: its joint */
  ik_chain_pole **poles;      /* branches: NULL or a kept pole */
  int bound;                  /* a bone tree: the joints are bones of sk */
  ik_skeleton *sk;
  const int *sk_closed;   /* the skeleton owner's flag (nonzero: gone), or NULL */
  int *bones;             /* bound: joints, the bone of each */
  ik_quat *rotations;     /* bound: joints, the bones' world rotations as read */
  ik_quat *turns;         /* bound: joints, scratch: each bone's turn */
  int *pair;              /* bound: 2 * joints, scratch: two children of each bone */
  ik_vec3 *branch_before; /* bound: every branch's joints, scratch: the bones' positions as read */
  ik_quat *branch_rot;    /* bound: every branch's joints, scratch: the rotations job's rotations */
  ik_quat *twist_memory;  /* bound: every branch's joints, kept: the rotations job's twist_memory */
  ik_vec3 *warm;          /* bound: joints, kept: each bone's last solved direction, in the root's frame */
  int has_warm;           /* bound: warm holds a solution */
  ik_tree_job job;
} ik_bone_tree;

/* IK_OK when parents (joints entries) make a tree this takes: joints >= 2, parents[0]
 * -1, every other in 0 .. j - 1 (IK_E_COUNT; IK_E_PARAMETER, *bad_joint set). */
IK_API ik_status ik_bone_tree_check(int joints, const int *parents, int *bad_joint);
/* The parents of a bone tree on bones[0 .. joints) of sk: each bone's nearest listed
 * ancestor. scratch holds ik_skeleton_count(sk) ints. IK_E_PARAMETER with *bad_joint
 * and *why: 1 a bone out of range, 2 a bone listed twice, 3 bones[0] hangs from another
 * listed bone, 4 a bone hangs from no listed bone, 5 a bone listed before its nearest
 * listed ancestor (then *other_joint is that ancestor). Work: O(joints + bones of sk). */
IK_API ik_status ik_bone_tree_parents_of(const ik_skeleton *sk, const int *bones, int joints, int *parents,
                                         int *scratch, int *bad_joint, int *why, int *other_joint);
/* Bytes of a tree of `joints` joints (>= 2), whatever its shape; bound: a bone tree. */
IK_API size_t ik_bone_tree_size(int joints, int bound);
/* Lays the tree out in mem (ik_bone_tree_size bytes) over checked parents: branches
 * cut, defaults set, every joint at the origin until ik_bone_tree_set_points. */
IK_API ik_bone_tree *ik_bone_tree_init(void *mem, int joints, const int *parents, int bound);
/* A bone tree on bones (those ik_bone_tree_parents_of gave the parents of): their pose
 * now is the rest pose (ik_bone_tree_set_points' statuses). */
IK_API ik_status ik_bone_tree_set_bones(ik_bone_tree *t, ik_skeleton *sk, const int *bones, const int *closed,
                                        int *bad_joint);
/* The pose (joints positions): IK_E_NOT_FINITE, IK_E_BONE_LENGTH (a joint on its
 * parent: *bad_joint) or IK_E_RANGE (the tree's reach), nothing changed; else the rest
 * and start pose, lengths measured. */
IK_API ik_status ik_bone_tree_set_points(ik_bone_tree *t, const ik_vec3 *pose, int *bad_joint);
/* The constraint of the bone ending at joint j (1 .. joints - 1), copied; NULL removes
 * it. A branch's first bone is limited against its parent branch's last (ik_tree.h). */
IK_API void ik_bone_tree_set_constraint(ik_bone_tree *t, int joint, const ik_constraint *c);
IK_API const ik_constraint *ik_bone_tree_constraint(const ik_bone_tree *t, int joint);
/* The branch whose last joint is j, or -1 (j is inside a branch, or the root). */
IK_API int ik_bone_tree_branch_at(const ik_bone_tree *t, int joint);
/* Effector e's target and weight (checked by the solve). */
IK_API void ik_bone_tree_set_target(ik_bone_tree *t, int effector, ik_vec3 target);
IK_API void ik_bone_tree_set_weight(ik_bone_tree *t, int effector, ik_real weight);
/* Solves: IK_E_NULL for a closed tree, pole or skeleton, or the job's refusal (nothing
 * changed; a bone tree: IK_E_PARAMETER when a bone refused its rotation, the bones
 * before it turned); else IK_OK, the results in t->job and each effector's branch (a
 * bone tree's distances measured on its bones as turned). */
IK_API ik_status ik_bone_tree_solve(ik_bone_tree *t);
/* Effector e's result after a solve. */
IK_API const ik_result *ik_bone_tree_result(const ik_bone_tree *t, int effector);

#ifdef __cplusplus
}
#endif

#endif /* IK_BONE_TREE_H */
