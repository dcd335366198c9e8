/*
 * ik_tree.h: FABRIK on a tree of chains with several end effectors (Aristidou and
 * Lasenby 2011, section 4.2: "multiple end effectors").
 *
 * A tree is branches, each an ik_chain (joints root first, in one space of the caller's
 * choosing, usually world space): a branch hangs from the tip of its parent branch (its
 * first joint is that tip: the sub-base) or, with no parent, from its own first joint,
 * which stays where it is. A branch no other branch hangs from ends in an end effector,
 * with a target and a weight. One tree sweep is:
 *
 *   - tip to root, branches last to first: each effector branch is pulled tip first onto
 *     its target (FABRIK's forward pass); each inner branch onto the weighted centroid of
 *     where its children's first joints ended up, each child weighted by the sum of the
 *     effector weights below it;
 *   - root to tip, branches first to last: each branch's first joint put back (on its
 *     anchor, or on its parent's tip), then FABRIK's backward pass out to the tip, or,
 *     on a constrained branch, the constraint pass.
 *
 * Convergence is tested after each sweep: every effector of non-zero weight within
 * tolerance. Then each effector branch hanging from a sub-base and not yet there is
 * finished as a chain from that sub-base (ik_fabrik in refined mode, the branch's or the
 * job's budget), and each branch's pole is applied, root to tip (a pole keeps a branch's
 * two ends where they are, so the tree stays joined). The job allocates nothing, logs
 * nothing and touches no global state; its only working storage is in the branches.
 *
 * A tree of one branch is a chain, and is solved exactly as ik_fabrik_run solves it in
 * IK_FABRIK_PLAIN mode (bit for bit): out of reach, laid straight; already there, left;
 * a chain on its target's line, bent off it first; a constrained chain of up to
 * IK__BEST_MAX_JOINTS joints ending on its best pose. Trees keep their best pose, by the
 * weighted sum of squared effector distances, when they have constraints and at most
 * that many joints in all.
 */
#ifndef IK_TREE_H
#define IK_TREE_H

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What run() keeps per branch while it solves; no input, overwritten by every run. */
typedef struct ik_tree_work {
  ik_vec3 pull_ws;     /* weighted sum of the children's first joints after the forward pass */
  ik_real pull_weight; /* the weights in it */
  ik_real weight;      /* sum of the effector weights at and below this branch */
  ik_vec3 root_ws;     /* a root branch's anchor: its first joint as given */
  ik_vec3 root_dir;    /* the direction for a bone with none */
  int children;        /* branches hanging from this one's tip */
  int kinds;           /* ik__constraint_kinds of the chain */
  int frozen;          /* a lone branch laid straight: no sweep moves it */
  int first_child;     /* the first branch hanging from this one's tip, -1 none */
  int next_sibling;    /* the next branch hanging from the same tip, -1 none */
  ik_quat frame;       /* rotation of this branch's tip frame since the rest pose: what
                        * its rigid_base children's first bones turn by */
} ik_tree_work;

typedef struct ik_tree_branch {
  /* The branch. positions are in/out; run() first writes the parent's tip into a child
   * branch's positions[0]. A child branch's base is its parent's last bone: its
   * base_direction and base_rotation are set by run() (the parent's last bone in the
   * parent's rest pose, when both branches have rest_positions, and the minimal rotation
   * to where that bone is now; else that bone now, identity), so its constraints[0]
   * limits its first bone relative to the parent's last. */
  ik_chain chain;
  /* The branch this one hangs from, 0 .. index - 1; -1: none (a root branch). */
  int parent;
  /* Effector branches only (no children): where the tip should go, in the tree's space,
   * and how much it counts, in [0, 1] (default 1). Weight 0: the effector is ignored
   * (its branch follows its parent, lengths and constraints kept). Unreachable targets
   * are compromised between by weight: a heavier effector ends nearer its target. */
  ik_vec3 target;
  ik_real weight;
  /* How many tree sweeps this branch's forward pass takes part in: 0 (default) for all
   * of the job's; else after that many it only follows its parent (its targets stop
   * pulling). A budget per branch: fingers may settle in 3 sweeps while the spine takes
   * 10. >= 0. */
  int max_iterations;
  /* Non-zero: the first bone is rigid, as a skeleton holds the first bones of a bone's
   * several children: it keeps its rest direction (chain.rest_positions, needed) turned
   * by its parent's tip frame, the rotation that best fits (by weight) the parent's
   * rigid children to where they ask to go, as a ball joint would turn (the parent's
   * rest_positions, needed: the frame is the identity in the rest pose); a root
   * branch's first bone keeps its direction as given. Its constraints[0] is then
   * unused. Default 0. */
  int rigid_base;
  /* Output, effector branches: distance from the tip to the target, reached when
   * within the job's tolerance; iterations: the sweeps it took part in. Inner branches:
   * reached 1, distance 0. */
  ik_result result;
  ik_tree_work work;
} ik_tree_branch;

typedef struct ik_tree_job {
  /* `count` branches, each branch's parent before it. In/out (positions, results). */
  ik_tree_branch *branches;
  int count; /* >= 1 */
  /* Absolute distance under which an effector counts as there. >= 0. Default 1e-3. */
  ik_real tolerance;
  /* Most tree sweeps. >= 1. Default 10. */
  int max_iterations;
  /* Output: every effector of non-zero weight reached; sweeps run; the largest
   * distance of an effector of non-zero weight to its target. */
  int reached;
  int iterations;
  ik_real distance;
} ik_tree_job;

/* Sets a branch over `chain` (copied): no parent, target at the origin, weight 1, every
 * sweep. */
IK_API void ik_tree_branch_init(ik_tree_branch *branch, const ik_chain *chain, int parent, ik_vec3 target);
/* Sets the defaults above over the caller's branches. */
IK_API void ik_tree_job_init(ik_tree_job *job, ik_tree_branch *branches, int count);
/* Checks every field. err->index names the branch (the chain's own field, when a chain
 * is at fault: err->field is then the chain's, e.g. "lengths"). Besides each chain on
 * its own: parent in -1 .. index - 1 (IK_E_PARAMETER, "parent"), weight in [0, 1]
 * (IK_E_WEIGHT, "weight"), target in range ("target"), max_iterations >= 0
 * (IK_E_ITERATIONS, "branch_iterations"), rest_positions of a rigid_base branch and of
 * its parent (IK_E_NULL, "rest_positions"), and the tree's reach, the largest root
 * coordinate plus every length, within IK_REAL_MAX_REACH (IK_E_RANGE, "lengths", -1). */
IK_API ik_status ik_tree_job_validate(const ik_tree_job *job, ik_error *err);
/* Solves in place. A refused job (the status returned) changes nothing. Effectors out
 * of reach are not an error: see the results. */
IK_API ik_status ik_tree_job_run(ik_tree_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_TREE_H */
