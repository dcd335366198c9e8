/* One entry point over the iterative solvers, for the tests that check every solver
 * for the same property. */
#ifndef IK_TEST_SOLVE_ANY_H
#define IK_TEST_SOLVE_ANY_H

#include "ik.h"

typedef enum t_solver { T_FABRIK, T_CCD, T_DLS, T_TWO_BONE, T_SOLVER_COUNT } t_solver;

static const char *const t_solver_names[T_SOLVER_COUNT] = {"fabrik", "ccd", "dls", "two_bone"};

/* Runs `s` on the chain (two-bone uses the positions and pole only; count must be 3). */
static inline ik_status t_solve(t_solver s, const ik_chain *chain, ik_vec3 target, ik_real tolerance,
                                int max_iterations, ik_result *out) {
  ik_status st = IK_OK;
  switch (s) {
    case T_FABRIK: {
      ik_fabrik_job job;
      ik_fabrik_job_init(&job, chain, target);
      job.tolerance = tolerance;
      job.max_iterations = max_iterations;
      st = ik_fabrik_run(&job);
      *out = job.result;
      break;
    }
    case T_CCD: {
      ik_ccd_job job;
      ik_ccd_job_init(&job, chain, target);
      job.tolerance = tolerance;
      job.max_iterations = max_iterations;
      st = ik_ccd_run(&job);
      *out = job.result;
      break;
    }
    case T_DLS: {
      ik_dls_job job;
      ik_dls_job_init(&job, chain, target);
      job.tolerance = tolerance;
      job.max_iterations = max_iterations;
      st = ik_dls_run(&job);
      *out = job.result;
      break;
    }
    case T_TWO_BONE: {
      ik_two_bone_job job;
      ik_two_bone_job_init(&job, chain->positions, target);
      job.tolerance = tolerance;
      job.has_pole = chain->has_pole;
      job.pole = chain->pole;
      st = ik_two_bone_run(&job);
      *out = job.result;
      break;
    }
    case T_SOLVER_COUNT:
      break;
  }
  return st;
}

#endif
