/*
 * ik_ccd.h: cyclic coordinate descent on bare joint positions.
 *
 * One iteration is a sweep from the joint nearest the tip to the root, each joint
 * turning the rest of the chain by the minimal rotation that points its tip at the
 * target, limited by the joint's constraint as it turns (chains of up to 64 joints),
 * followed by the root-to-tip constraint pass every solver shares. Same job shape,
 * outputs and guarantees as FABRIK (ik_fabrik.h).
 */
#ifndef IK_CCD_H
#define IK_CCD_H

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ik_ccd_job {
  ik_chain chain;     /* positions are in/out */
  ik_vec3 target;     /* in the chain's space */
  ik_real tolerance;  /* absolute, >= 0, default 1e-3 */
  int max_iterations; /* >= 1, default 10 */
  ik_result result;   /* output */
} ik_ccd_job;

IK_API void ik_ccd_job_init(ik_ccd_job *job, const ik_chain *chain, ik_vec3 target);
IK_API ik_status ik_ccd_validate(const ik_ccd_job *job, ik_error *err);
IK_API ik_status ik_ccd_run(ik_ccd_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_CCD_H */
