/*
 * ik_dls.h: Jacobian damped least squares (Levenberg-Marquardt style) on bare joint
 * positions, every inner joint a ball joint (3 rotational degrees of freedom).
 *
 * Each iteration solves  dtheta = J^T (J J^T + lambda^2 I)^-1 e  for the tip error e.
 * J J^T is 3x3 whatever the chain length, so an iteration costs O(n) and needs no
 * scratch memory. The rotations are applied root to tip (bone lengths exact), then the
 * shared constraint pass. Slower per iteration than FABRIK and CCD; it is the accuracy
 * reference and the base for several effectors.
 */
#ifndef IK_DLS_H
#define IK_DLS_H

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ik_dls_job {
  ik_chain chain;     /* positions are in/out */
  ik_vec3 target;     /* in the chain's space */
  ik_real tolerance;  /* absolute, >= 0, default 1e-3 */
  int max_iterations; /* >= 1, default 10 */
  /* lambda as a fraction of the chain's total length, > 0. Larger is steadier near
   * singular poses and slower to converge. Default 0.05. */
  ik_real damping;
  ik_result result; /* output */
} ik_dls_job;

IK_API void ik_dls_job_init(ik_dls_job *job, const ik_chain *chain, ik_vec3 target);
IK_API ik_status ik_dls_validate(const ik_dls_job *job, ik_error *err);
IK_API ik_status ik_dls_run(ik_dls_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_DLS_H */
