/*
 * ik_fabrik.h: FABRIK (Aristidou and Lasenby, 2011) on bare joint positions.
 *
 * One iteration is a full sweep: the forward pass puts the tip on the target and walks
 * back to the root keeping bone lengths; the backward pass puts the root back and walks
 * out to the tip, applying the chain's constraints. Convergence is tested after each
 * full sweep, so the root never stays moved. The mode says how the sweeps are finished.
 */
#ifndef IK_FABRIK_H
#define IK_FABRIK_H

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the sweeps are run and finished. */
typedef enum ik_fabrik_mode {
  /* The sweeps alone, as Aristidou and Lasenby describe them. */
  IK_FABRIK_PLAIN = 0,
  /* The same sweeps, finished so that more targets are reached within the same
   * iteration budget: near the target, once the sweeps slow down (or when the budget
   * left is small), damped least-squares steps take over (with the constraint pass
   * after each), which converge about quadratically where FABRIK crawls. The poses
   * stay FABRIK's: the steps are small, minimal corrections. An unconstrained 3-joint
   * chain takes the one step they converge to (its mid joint where the law of cosines
   * puts it, in the chain's plane). Each step counts as an iteration. A budget of 1 is
   * the plain sweep (see ik_fabrik.c for figures). */
  IK_FABRIK_REFINED
} ik_fabrik_mode;

typedef struct ik_fabrik_job {
  /* The chain (positions are in/out). */
  ik_chain chain;
  /* Where the tip should go, in the chain's space. */
  ik_vec3 target;
  /* Absolute distance under which the tip counts as there. >= 0. Default 1e-3. */
  ik_real tolerance;
  /* Most iterations to run: full sweeps, and in refined mode the steps that finish
   * them. >= 1. Default 10. */
  int max_iterations;
  /* IK_FABRIK_PLAIN or IK_FABRIK_REFINED. Default IK_FABRIK_REFINED. */
  ik_fabrik_mode mode;
  /* Output. */
  ik_result result;
} ik_fabrik_job;

/* Sets the defaults above over `chain` (which is copied). */
IK_API void ik_fabrik_job_init(ik_fabrik_job *job, const ik_chain *chain, ik_vec3 target);
IK_API ik_status ik_fabrik_validate(const ik_fabrik_job *job, ik_error *err);
/* Solves in place. A refused job (the status returned) leaves positions untouched.
 * Not reaching the target is not an error: see job->result. */
IK_API ik_status ik_fabrik_run(ik_fabrik_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_FABRIK_H */
