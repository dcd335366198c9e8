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
 * Memory: the caller sizes a block with ik_bone_tree_size (aligned as malloc's) and
 * hands it to ik_bone_tree_init; nothing here allocates. A tree keeps the poles it is
 * given (ik_chain_pole, the chain's): keep them alive while it refers to them.
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
  ik_tree_job job;
} ik_bone_tree;

/* IK_OK when parents (joints entries) make a tree this takes: joints >= 2, parents[0]
 * -1, every other in 0 .. j - 1 (IK_E_COUNT; IK_E_PARAMETER, *bad_joint set). */
IK_API ik_status ik_bone_tree_check(int joints, const int *parents, int *bad_joint);
/* Bytes of a tree of `joints` joints (>= 2), whatever its shape. */
IK_API size_t ik_bone_tree_size(int joints);
/* Lays the tree out in mem (ik_bone_tree_size bytes) over checked parents: branches
 * cut, defaults set, every joint at the origin until ik_bone_tree_set_points. */
IK_API ik_bone_tree *ik_bone_tree_init(void *mem, int joints, const int *parents);
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
/* Solves: IK_E_NULL for a closed tree or a closed pole, or the job's refusal (nothing
 * changed); else IK_OK, the results in t->job and each effector's branch. */
IK_API ik_status ik_bone_tree_solve(ik_bone_tree *t);
/* Effector e's result after a solve. */
IK_API const ik_result *ik_bone_tree_result(const ik_bone_tree *t, int effector);

#ifdef __cplusplus
}
#endif

#endif /* IK_BONE_TREE_H */
