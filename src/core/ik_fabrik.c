/*
 * FABRIK (ik_fabrik.h). Stages of run() (ik_fabrik_stages.h, which the batch shares):
 *   1. validate, then measure lengths when asked;
 *   2. out of reach: lay the chain straight towards the target, no iterations;
 *   3. already there: no iterations (warm start pays off here); a chain lying on the
 *      root-target line is bent off it first, or no pass could ever bend it;
 *   4. sweeps: forward pass (tip to target, walk back), backward pass (root back, walk
 *      out, constraints applied), convergence tested after each full sweep;
 *   5. pole, then the result.
 */
#include <stddef.h>

#include "ik_fabrik_stages.h"
#include "ik_internal.h"

void ik_fabrik_job_init(ik_fabrik_job *job, const ik_chain *chain, ik_vec3 target) {
  job->chain = *chain;
  job->target = target;
  job->tolerance = (ik_real)1e-3;
  job->max_iterations = 10;
  job->mode = IK_FABRIK_PLAIN;
  ik__result_init(&job->result);
}

ik_status ik_fabrik_validate(const ik_fabrik_job *job, ik_error *err) {
  return ik__validate_solve(&job->chain, job->target, job->tolerance, job->max_iterations, err);
}

/* Direction for joint i in the forward pass when it sits on joint i + 1: carry on along
 * the bone just placed (a folded chain unfolds in its own plane), or for the bone at the
 * tip, back towards the root. */
static ik_vec3 forward_fallback(const ik_vec3 *p, int count, int i, ik_vec3 root_dir) {
  if (i + 2 < count)
    return ik_vec3_normalize_or(ik_vec3_sub(p[i + 1], p[i + 2]), ik_vec3_neg(root_dir));
  return ik_vec3_neg(root_dir);
}

/* Tip to root: tip on the target, each joint pulled to its bone length from the next.
 * The joint just placed is carried in a local: reading it back from memory would put a
 * store-to-load round trip on the loop's only dependency chain. */
static void forward_pass(ik_vec3 *p, const ik_real *len, int count, ik_vec3 target, ik_vec3 root_dir) {
  ik_vec3 next_ws = target;
  int i;
  p[count - 1] = target;
  for (i = count - 2; i >= 0; i--) {
    ik_vec3 bone = ik_vec3_sub(p[i], next_ws);
    ik_real bone_len2 = ik_vec3_len2(bone);
    if (bone_len2 > IK_TINY_LEN2)
      next_ws = ik_vec3_madd(next_ws, bone, len[i] / ik_sqrt(bone_len2));
    else
      next_ws = ik_vec3_madd(next_ws, forward_fallback(p, count, i, root_dir), len[i]);
    p[i] = next_ws;
  }
}

/* Root to tip without constraints: root back on its anchor, each joint pulled out. */
static void backward_pass(ik_vec3 *p, const ik_real *len, int count, ik_vec3 root_ws, ik_vec3 root_dir) {
  ik_vec3 prev_ws = root_ws;
  int i;
  p[0] = root_ws;
  for (i = 0; i + 1 < count; i++) {
    ik_vec3 bone = ik_vec3_sub(p[i + 1], prev_ws);
    ik_real bone_len2 = ik_vec3_len2(bone);
    if (bone_len2 > IK_TINY_LEN2) {
      prev_ws = ik_vec3_madd(prev_ws, bone, len[i] / ik_sqrt(bone_len2));
    } else {
      ik_vec3 dir = i == 0 ? root_dir : ik_vec3_normalize_or(ik_vec3_sub(p[i], p[i - 1]), root_dir);
      prev_ws = ik_vec3_madd(prev_ws, dir, len[i]);
    }
    p[i + 1] = prev_ws;
  }
}

int ik__fabrik_begin(ik_fabrik_job *job, ik__fabrik_state *s) {
  const ik_chain *chain = &job->chain;
  const ik_vec3 *p = chain->positions;
  ik__prepare_lengths(chain);
  s->root_ws = p[0];
  s->root_dir = ik__root_fallback(chain, job->target);
  s->total_len = ik__total_length(chain);
  s->tolerance_len2 = job->tolerance * job->tolerance;
  s->kinds = ik__constraint_kinds(chain);
  s->iterations = 0;
  s->prev_err2 = ik_vec3_dist2(p[chain->count - 1], job->target);

  if (ik_vec3_dist2(job->target, s->root_ws) >= s->total_len * s->total_len) {
    ik__lay_straight(chain, job->target, s->kinds);
    return 0;
  }
  if (s->prev_err2 <= s->tolerance_len2) return 0;
  ik__break_collinear(chain, job->target, s->root_dir, s->total_len);
  return 1;
}

void ik__fabrik_sweep(ik_fabrik_job *job, ik__fabrik_state *s) {
  const ik_chain *chain = &job->chain;
  ik_vec3 *p = chain->positions;
  forward_pass(p, chain->lengths, chain->count, job->target, s->root_dir);
  if (s->kinds) {
    p[0] = s->root_ws;
    ik__constrained_pass(chain, s->root_dir, s->kinds);
  } else {
    backward_pass(p, chain->lengths, chain->count, s->root_ws, s->root_dir);
  }
}

int ik__fabrik_next(const ik_fabrik_job *job, ik__fabrik_state *s, ik_vec3 tip) {
  const ik_real err2 = ik_vec3_dist2(tip, job->target);
  s->iterations++;
  s->prev_err2 = err2;
  return err2 > s->tolerance_len2 && s->iterations < job->max_iterations;
}

void ik__fabrik_end(ik_fabrik_job *job, ik__fabrik_state *s) {
  ik__finish_with_pole(&job->chain, s->root_dir, s->kinds);
  ik__set_result(&job->result, &job->chain, job->target, job->tolerance, s->iterations);
}

ik_status ik_fabrik_run(ik_fabrik_job *job) {
  ik__fabrik_state s;
  ik_status st = ik_fabrik_validate(job, NULL);
  if (st != IK_OK) return st;
  if (ik__fabrik_begin(job, &s)) {
    do ik__fabrik_sweep(job, &s);
    while (ik__fabrik_next(job, &s, job->chain.positions[job->chain.count - 1]));
  }
  ik__fabrik_end(job, &s);
  return IK_OK;
}
