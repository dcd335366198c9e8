/*
 * ik_rotations.h: turn solved joint positions into bone rotations.
 *
 * Bones are visited root to tip. Each bone first inherits what its parent's new
 * rotation did to it (its local rotation is kept), then turns by the minimal rotation
 * from where its child joint now is to where the solver put it: no twist about the
 * bone is added, so the animation's twist survives. With `twist_memory` the turn is
 * measured from the joint's last result instead (continuous in time). The result is blended with the
 * inherited rotation by `weight` (slerp). Only rotations are written: bone lengths can
 * never stretch, whatever the solved positions say.
 */
#ifndef IK_ROTATIONS_H
#define IK_ROTATIONS_H

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ik_rotations_job {
  int count; /* joints, >= 2 */
  /* World positions of the joints in the pose `rotations` belong to (before solving). */
  const ik_vec3 *positions_before;
  /* Solved world positions (any bone lengths: only directions are used). */
  const ik_vec3 *positions_solved;
  /* In/out: world rotation of each of the `count` joints; unit quaternions. */
  ik_quat *rotations;
  /* [0, 1], default 1. 0 leaves the rotations as they were. */
  ik_real weight;
  /* Non-zero: the tip joint takes `tip_rotation` (world), blended by weight, like a
   * hand matching the target's orientation. */
  int match_tip_rotation;
  ik_quat tip_rotation;
  /* NULL, or `count` limits (radians, >= 0): the most the result may twist joint i about
   * its own bone axis relative to its parent, compared with the input pose. The tip's
   * axis is its last bone's direction. Joint 0's parent is `base_rotation`. */
  const ik_real *twist_limits;
  /* World rotation of joint 0's parent in the pose `rotations` belong to, and now.
   * Joint 0 inherits the difference, as every joint inherits its parent's turn, and
   * twist_limits[0] is measured against it. Default identity for both. */
  ik_quat base_rotation_before;
  ik_quat base_rotation;
  /* NULL, or `count` rotations kept by the caller from one run to the next (identity
   * before the first): what each joint's last result added to its inherited rotation,
   * in the joint's own frame. With it a joint turns from where it was last time, not
   * from the input pose, so a bone whose solved direction comes round opposite its
   * input direction does not spin about its length (the minimal turn from the input is
   * ill-defined there). The twist that history carries is bled back towards none by at
   * most half the bone's turn each run. Written at each run, at full weight. */
  ik_quat *twist_memory;
} ik_rotations_job;

IK_API void ik_rotations_job_init(ik_rotations_job *job, int count, const ik_vec3 *positions_before,
                                  const ik_vec3 *positions_solved, ik_quat *rotations);
IK_API ik_status ik_rotations_validate(const ik_rotations_job *job, ik_error *err);
IK_API ik_status ik_rotations_run(ik_rotations_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_ROTATIONS_H */
