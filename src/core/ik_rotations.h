/*
 * ik_rotations.h: turn solved joint positions into bone rotations.
 *
 * Bones are visited root to tip. Each bone first inherits what its parent's new
 * rotation did to it (its local rotation is kept), then turns by the minimal rotation
 * from where its child joint now is to where the solver put it: no twist about the
 * bone is added, so the animation's twist survives. The result is blended with the
 * inherited rotation by `weight` (slerp). Only rotations are written: bone lengths can
 * never stretch, whatever the solved positions say.
 */
#ifndef IK_ROTATIONS_H
#define IK_ROTATIONS_H

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
} ik_rotations_job;

void ik_rotations_job_init(ik_rotations_job *job, int count, const ik_vec3 *positions_before,
                           const ik_vec3 *positions_solved, ik_quat *rotations);
ik_status ik_rotations_validate(const ik_rotations_job *job, ik_error *err);
ik_status ik_rotations_run(ik_rotations_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_ROTATIONS_H */
