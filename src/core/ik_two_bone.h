/*
 * ik_two_bone.h: analytic two-bone IK (law of cosines): a limb of three joints, start
 * (shoulder, hip), mid (elbow, knee) and end (hand, foot), solved exactly in one step.
 *
 * The bend plane contains start, target and the pole when one is given; otherwise it
 * is the plane the limb bends in now (start, mid, target), and for a straight limb a
 * stable perpendicular. Bone lengths are measured from the input positions, and the
 * limb's reach (start's largest coordinate plus both lengths) must be within
 * IK_REAL_MAX_REACH, as a chain's (ik_chain.h): IK_E_RANGE for "positions" otherwise.
 */
#ifndef IK_TWO_BONE_H
#define IK_TWO_BONE_H

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ik_two_bone_job {
  /* In/out: start, mid, end. start never moves. */
  ik_vec3 *positions;
  ik_vec3 target; /* in the limb's space */
  int has_pole;   /* non-zero: the mid joint bends towards `pole` */
  ik_vec3 pole;
  /* [0, 1], default 1: the solved bone directions blended from the input ones. */
  ik_real weight;
  /* [0, 1), default 0 (off). Fraction of the full reach over which the limb eases into
   * full extension instead of snapping straight (the soft IK of animation rigs): with
   * s > 0 the limb reaches (1 - s) * reach exactly and approaches full reach smoothly,
   * so targets near full reach are not reached. */
  ik_real softness;
  /* Absolute, >= 0, default 1e-3: only used for result.reached. */
  ik_real tolerance;
  ik_result result; /* output; iterations is always 0 or 1 */
} ik_two_bone_job;

IK_API void ik_two_bone_job_init(ik_two_bone_job *job, ik_vec3 *positions, ik_vec3 target);
IK_API ik_status ik_two_bone_validate(const ik_two_bone_job *job, ik_error *err);
IK_API ik_status ik_two_bone_run(ik_two_bone_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_TWO_BONE_H */
