/*
 * ik_fabrik_stages.h: FABRIK's run() cut into its stages, so that the batch solver
 * (ik_batch.c), which runs the sweeps of many chains side by side in SIMD lanes, does
 * everything else exactly as ik_fabrik_run does. Not installed, not API.
 *
 * ik_fabrik_run is, after validation (ik__fabrik_run_valid):
 *
 *     ik__fabrik_state s;
 *     if (ik__fabrik_begin(job, &s))
 *       do ik__fabrik_sweep(job, &s); while (ik__fabrik_next(job, &s, tip));
 *     ik__fabrik_end(job, &s, best);
 *
 * where a constrained chain keeps its best pose after each sweep in best (ik__best); an
 * unconstrained one passes NULL.
 *
 * A batch may replace ik__fabrik_sweep by its own sweep, provided that it computes the
 * same positions bit for bit (the same operations in the same order); then every chain
 * it solves ends exactly as it would alone.
 */
#ifndef IK_FABRIK_STAGES_H
#define IK_FABRIK_STAGES_H

#include "ik_dls_step.h"
#include "ik_fabrik.h"
#include "ik_internal.h"

typedef struct ik__fabrik_state {
  ik_vec3 root_ws;  /* where the root stays */
  ik_vec3 root_dir; /* ik__root_fallback's direction */
  ik_real total_len;
  ik_real tolerance_len2;
  int kinds;         /* ik__constraint_kinds */
  int iterations;    /* sweeps (then polish steps) done so far */
  ik_real prev_err2; /* tip-to-target distance squared after the previous sweep */
  int may_polish;    /* refined mode, and a target the polish can reach (set when
                      * sweeps are to run) */
  ik_real near2;     /* ik__fabrik_near2, set with may_polish */
  int polish_due;    /* refined mode: the sweeps done after which the polish takes the
                      * budget left (REFINE_POLISH_STEPS, at most half of it) */
} ik__fabrik_state;

/* Stages 1 to 3 on a validated job: measures lengths when asked, lays the chain
 * straight when the target is out of reach, breaks a collinear chain. Returns 1 when
 * sweeps are to run (then at least one does), 0 when the job goes straight to _end. */
int ik__fabrik_begin(ik_fabrik_job *job, ik__fabrik_state *s);

/* ik__fabrik_begin after its lengths are measured (or given), with total_len their sum
 * as ik__total_length sums them: for a caller that summed them as it checked them.
 * Returns 0 or 1 as ik__fabrik_begin does, or 2 when sweeps are to run and the
 * positions were moved first (a collinear chain bent). */
int ik__fabrik_begin_measured(ik_fabrik_job *job, ik__fabrik_state *s, ik_real total_len);
/* The same with the chain's longest bone known too (the fold reach is then not
 * measured again). */
int ik__fabrik_begin_known(ik_fabrik_job *job, ik__fabrik_state *s, ik_real total_len, ik_real longest_len);

/* 1 only when ik_fabrik_validate finds nothing wrong but, perhaps, in the positions and
 * lengths (and their reach), which a caller checks as it reads them (the batch's lanes);
 * 0 when validate must be asked. No constraints: those are left to validate. */
static inline int ik__fabrik_settings_ok(const ik_fabrik_job *job) {
  return ik__chain_settings_ok(&job->chain) &
         ik__solve_settings_ok(job->target, job->tolerance, job->max_iterations) &
         ((job->mode == IK_FABRIK_PLAIN) | (job->mode == IK_FABRIK_REFINED));
}

/* One full sweep, scalar: the forward pass, then the backward pass (or the constraint
 * pass when the chain has constraints). */
void ik__fabrik_sweep(ik_fabrik_job *job, ik__fabrik_state *s);

/* After a sweep that left the tip at `tip`: counts it and returns 1 when another sweep
 * is to run (in refined mode, 0 also when the sweeps hand over to the polish). Reads
 * nothing but s, the job's settings and tip, so a batch can call it on a chain whose
 * positions are still in its lanes. */
int ik__fabrik_next(const ik_fabrik_job *job, ik__fabrik_state *s, ik_vec3 tip);

/* The tip's distance to the target, squared, below which ik__fabrik_next may hand a
 * refined chain over to the polish; negative when it never will (plain mode, or a target
 * the polish cannot reach). Above it, and above the tolerance, _next continues until the
 * iteration budget is spent. */
ik_real ik__fabrik_near2(const ik_fabrik_job *job, const ik__fabrik_state *s);

/* The sweep's two passes on bare positions, for the tree solver (ik_tree.c), which runs
 * them branch by branch: tip to root (tip on target, each joint pulled to its length
 * from the next), and root to tip without constraints (root on root_ws, each joint
 * pulled out). root_dir stands in for a bone with no direction, as in a sweep. */
void ik__fabrik_forward_pass(ik_vec3 *p, const ik_real *len, int count, ik_vec3 target, ik_vec3 root_dir);
void ik__fabrik_backward_pass(ik_vec3 *p, const ik_real *len, int count, ik_vec3 root_ws, ik_vec3 root_dir);

/* Refined mode's slow sweep, for a caller that tests it (the batch's lanes): with the
 * tip err2 from the target after a sweep and prev_err2 before it, near the target,
 * _next hands over when err2 > ik__fabrik_slow2() * prev_err2 (this product, bit for
 * bit), or once s->iterations reaches s->polish_due. */
ik_real ik__fabrik_slow2(void);

/* ik_fabrik_run after ik_fabrik_validate has passed the job. */
void ik__fabrik_run_valid(ik_fabrik_job *job);

/* The last stages, on the chain's positions: whatever the mode adds after the sweeps
 * (refined: the polish, scalar, counted in s->iterations), the best pose back when best
 * is not NULL and the last is worse (ik__best_restore), the pole, the result. It is
 *
 *     if (ik__fabrik_polish_begin(job, &s, &dls) && !ik__fabrik_polish_closed(job, &s)) {
 *       err2 = |tip - target|^2;
 *       do {
 *         dls.lambda2 = ik__fabrik_polish_floor2(&s) + err2;
 *         ik__dls_step(&dls, chain, target);  (or a batch's step, bit for bit the same)
 *         if (best) ik__best_offer(best, chain, target);
 *         err2 = |tip - target|^2;
 *       } while (ik__fabrik_polish_next(job, &s, err2));
 *     }
 *     if (best) ik__best_restore(best, chain, target);
 *     ik__fabrik_finish(job, &s);
 */
void ik__fabrik_end(ik_fabrik_job *job, ik__fabrik_state *s, ik__best *best);

/* After the sweeps, on the chain's positions: 1, with dls set up, when refined mode's
 * polish is to take at least one step. */
int ik__fabrik_polish_begin(ik_fabrik_job *job, const ik__fabrik_state *s, ik__dls_state *dls);
/* The same but for dls->plane_n, left zero, with err2 the tip's distance to the target
 * squared (as ik_vec3_dist2 measures it): for a caller that has both where the
 * positions are not (the batch's lanes), and sets ik__plane_normal's (of the positions,
 * target and total length) before the first step. */
int ik__fabrik_polish_begin_planeless(const ik_fabrik_job *job, const ik__fabrik_state *s, ik_real err2,
                                      ik__dls_state *dls);

/* Refined mode's polish of an unconstrained 3-joint chain in one step, after
 * ik__fabrik_polish_begin_planeless: 1 when it placed the chain (counted in
 * s->iterations, no steps to take), 0 when the steps are to run. */
int ik__fabrik_polish_closed(ik_fabrik_job *job, ik__fabrik_state *s);

/* The polish's damping floor, squared: a step's lambda^2 is this plus |error|^2. */
ik_real ik__fabrik_polish_floor2(const ik__fabrik_state *s);

/* After a polish step that left the tip err2 (squared) from the target: counts it and
 * returns 1 when another step is to run. */
int ik__fabrik_polish_next(const ik_fabrik_job *job, ik__fabrik_state *s, ik_real err2);

/* The pole, then the result. */
void ik__fabrik_finish(ik_fabrik_job *job, const ik__fabrik_state *s);

#endif /* IK_FABRIK_STAGES_H */
