/*
 * FABRIK (ik_fabrik.h). Stages of run() (ik_fabrik_stages.h, which the batch shares):
 *   1. validate, then measure lengths when asked;
 *   2. out of reach: lay the chain straight towards the target, no iterations;
 *   3. already there: no iterations (warm start pays off here); a chain lying on the
 *      root-target line is bent off it first, or no pass could ever bend it;
 *   4. sweeps: forward pass (tip to target, walk back), backward pass (root back, walk
 *      out, constraints applied), convergence tested after each full sweep; in refined
 *      mode they stop early near the target when they slow down (the stop rule below);
 *   5. refined mode: the polish, damped least-squares steps with what is left of the
 *      budget. A constrained chain keeps its best pose after each sweep and step
 *      (ik__best);
 *   6. the best pose back when the last is worse, then the pole, then the result.
 *
 * Refined mode reaches more targets than plain in fewer iterations, bending the chain
 * alike (figures, and what was tried: docs/design-notes.md).
 */
#include <stddef.h>

#include "ik_dls_step.h"
#include "ik_fabrik_stages.h"
#include "ik_internal.h"

/* Refined mode's stop rule. FABRIK converges linearly, and slowest near the answer,
 * where the polish (Gauss-Newton in all but name) converges about quadratically; far
 * from it the polish's linearisation is poor, and sweeps are cheaper and surer. So the
 * sweeps hand over only with the tip within REFINE_NEAR_FRACTION of the chain's length
 * of the target, and then as soon as a sweep fails to shrink that distance by
 * REFINE_SLOW_RATIO, or when the budget left is REFINE_POLISH_STEPS (at most half of
 * it). The values tried: docs/design-notes.md. */
#define REFINE_SLOW_RATIO ((ik_real)0.5)
#define REFINE_NEAR_FRACTION ((ik_real)0.2)
#define REFINE_POLISH_STEPS 3
/* The polish's damping: lambda^2 = (REFINE_DAMPING * length)^2 + |error|^2 (Yamashita
 * and Fukushima's choice for Levenberg-Marquardt). Near the answer lambda is a fifth of
 * ik_dls_job's default and the steps converge about quadratically; a step from farther
 * out, or near a folded (singular) pose, is damped by its own error and cannot throw the
 * chain away, as a fixed small lambda did (docs/design-notes.md). */
#define REFINE_DAMPING ((ik_real)0.01)

void ik_fabrik_job_init(ik_fabrik_job *job, const ik_chain *chain, ik_vec3 target) {
  job->chain = *chain;
  job->target = target;
  job->tolerance = (ik_real)1e-3;
  job->max_iterations = 10;
  job->mode = IK_FABRIK_REFINED;
  ik__result_init(&job->result);
}

ik_status ik_fabrik_validate(const ik_fabrik_job *job, ik_error *err) {
  ik_status st = ik__validate_solve(&job->chain, job->target, job->tolerance, job->max_iterations, err);
  if (st != IK_OK) return st;
  if (job->mode != IK_FABRIK_PLAIN && job->mode != IK_FABRIK_REFINED)
    return ik__fail(err, IK_E_PARAMETER, "mode", -1);
  return IK_OK;
}

/* Direction for joint i in the forward pass when it sits on joint i + 1: carry on along
 * the bone just placed (a folded chain unfolds in its own plane), or for the bone at the
 * tip, back towards the root. */
static ik_vec3 forward_fallback(const ik_vec3 *p, int count, int i, ik_vec3 root_dir) {
  if (i + 2 < count) return ik_vec3_normalize_or(ik_vec3_sub(p[i + 1], p[i + 2]), ik_vec3_neg(root_dir));
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

void ik__fabrik_forward_pass(ik_vec3 *p, const ik_real *len, int count, ik_vec3 target, ik_vec3 root_dir) {
  forward_pass(p, len, count, target, root_dir);
}

void ik__fabrik_backward_pass(ik_vec3 *p, const ik_real *len, int count, ik_vec3 root_ws, ik_vec3 root_dir) {
  backward_pass(p, len, count, root_ws, root_dir);
}

int ik__fabrik_begin(ik_fabrik_job *job, ik__fabrik_state *s) {
  ik__prepare_lengths(&job->chain);
  return ik__fabrik_begin_measured(job, s, ik__total_length(&job->chain)) != 0;
}

int ik__fabrik_begin_measured(ik_fabrik_job *job, ik__fabrik_state *s, ik_real total_len) {
  return ik__fabrik_begin_known(job, s, total_len, -1);
}

/* longest_len < 0: not known, measured (ik__fold_reach) only when refined mode asks. */
int ik__fabrik_begin_known(ik_fabrik_job *job, ik__fabrik_state *s, ik_real total_len, ik_real longest_len) {
  const ik_chain *chain = &job->chain;
  const ik_vec3 *p = chain->positions;
  const int half = job->max_iterations / 2;
  ik_real reach2, near_len, fold_len;
  int bent;
  s->root_ws = p[0];
  s->root_dir = ik__root_fallback(chain, job->target);
  s->total_len = total_len;
  s->tolerance_len2 = job->tolerance * job->tolerance;
  s->kinds = ik__constraint_kinds(chain);
  s->iterations = 0;
  s->may_polish = 0;
  s->near2 = -1;
  s->polish_due = job->max_iterations - (REFINE_POLISH_STEPS < half ? REFINE_POLISH_STEPS : half);
  s->prev_err2 = ik_vec3_dist2(p[chain->count - 1], job->target);

  reach2 = ik_vec3_dist2(job->target, s->root_ws);
  if (reach2 >= s->total_len * s->total_len) {
    ik__lay_straight(chain, job->target, s->kinds);
    return 0;
  }
  if (s->prev_err2 <= s->tolerance_len2) return 0;
  bent = !ik__off_line(p, 1, s->root_dir, s->total_len) &&
         ik__break_collinear(chain, job->target, s->root_dir, s->total_len);
  if (!bent && (s->kinds & IK__HINGED)) bent = ik__hinge_face(chain, job->target);
  /* A target nearer the root than the chain can fold is out of reach: no polish can
   * reach it either, and from where the sweeps stall it would only pick another
   * nearest pose, not always a nearer one: those are left to the sweeps, as in plain
   * mode. */
  if (job->mode == IK_FABRIK_REFINED) {
    fold_len = longest_len >= 0 ? 2 * longest_len - total_len : ik__fold_reach(chain, total_len);
    s->may_polish = ik_sqrt(reach2) > fold_len;
    near_len = REFINE_NEAR_FRACTION * s->total_len;
    if (s->may_polish) s->near2 = near_len * near_len;
  }
  return bent ? 2 : 1;
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

ik_real ik__fabrik_slow2(void) { return REFINE_SLOW_RATIO * REFINE_SLOW_RATIO; }

ik_real ik__fabrik_near2(const ik_fabrik_job *job, const ik__fabrik_state *s) {
  (void)job;
  return s->near2;
}

/* Refined mode's stop rule (above) is near2 and polish_due, set by begin: plain mode's
 * near2 is negative, so it never hands over. */
int ik__fabrik_next(const ik_fabrik_job *job, ik__fabrik_state *s, ik_vec3 tip) {
  const ik_real err2 = ik_vec3_dist2(tip, job->target);
  const ik_real prev_err2 = s->prev_err2;
  s->iterations++;
  s->prev_err2 = err2;
  if (err2 <= s->tolerance_len2 || s->iterations >= job->max_iterations) return 0;
  if (!(err2 < s->near2)) return 1;
  return s->iterations < s->polish_due && !(err2 > REFINE_SLOW_RATIO * REFINE_SLOW_RATIO * prev_err2);
}

int ik__fabrik_polish_begin(ik_fabrik_job *job, const ik__fabrik_state *s, ik__dls_state *dls) {
  const ik_chain *chain = &job->chain;
  const ik_real err2 = ik_vec3_dist2(chain->positions[chain->count - 1], job->target);
  if (!ik__fabrik_polish_begin_planeless(job, s, err2, dls)) return 0;
  dls->plane_n = ik__plane_normal(chain->positions, chain->count, job->target, s->total_len);
  return 1;
}

int ik__fabrik_polish_begin_planeless(const ik_fabrik_job *job, const ik__fabrik_state *s, ik_real err2,
                                      ik__dls_state *dls) {
  /* No sweeps, no polish: the chain was laid straight, or was there already. */
  if (job->mode != IK_FABRIK_REFINED || s->iterations == 0 || !s->may_polish) return 0;
  if (err2 <= s->tolerance_len2 || s->iterations >= job->max_iterations) return 0;
  /* may_polish: the target lies beyond the fold reach, which is all ik__dls_begin would
   * measure again for may_unstall. */
  ik__dls_begin_planeless(dls, REFINE_DAMPING, s->root_dir, s->total_len, s->kinds, job->chain.count >= 3);
  return 1;
}

ik_real ik__fabrik_polish_floor2(const ik__fabrik_state *s) {
  const ik_real floor_len = REFINE_DAMPING * s->total_len;
  return floor_len * floor_len;
}

int ik__fabrik_polish_next(const ik_fabrik_job *job, ik__fabrik_state *s, ik_real err2) {
  s->iterations++;
  return err2 > s->tolerance_len2 && s->iterations < job->max_iterations;
}

void ik__fabrik_finish(ik_fabrik_job *job, const ik__fabrik_state *s) {
  ik__finish_with_pole(&job->chain, s->root_dir, s->kinds);
  ik__set_result(&job->result, &job->chain, job->target, job->tolerance, s->iterations);
}

/* An unconstrained 3-joint chain's polish in one step: the pose its steps converge to.
 * After the sweeps the chain and target lie in one plane (the tip sits on the line from
 * the mid joint to the target), and the steps turn the joints about its normal, so they
 * end where the law of cosines puts the mid joint, on its side of the root-target line.
 * 0, the chain untouched, when the steps must run: constraints, or the mid joint nearly
 * on that line (no side to keep). */
int ik__fabrik_polish_closed(ik_fabrik_job *job, ik__fabrik_state *s) {
  ik_vec3 *p = job->chain.positions;
  const ik_real *len = job->chain.lengths;
  const ik_real upper_len = len[0], lower_len = len[1];
  const ik_real reach = upper_len + lower_len, min_reach = ik_fabs(upper_len - lower_len);
  const ik_vec3 root_target = ik_vec3_sub(job->target, p[0]), root_mid = ik_vec3_sub(p[1], p[0]);
  ik_vec3 aim, off;
  ik_real goal_len, off_len2, along, across, half_inv;
  if (job->chain.count != 3 || s->kinds) return 0;
  /* may_polish: the target lies beyond the fold reach (min_reach here) and within reach. */
  goal_len = ik_sqrt(ik_vec3_len2(root_target));
  aim = ik_vec3_scale(root_target, 1 / goal_len);
  off = ik_vec3_madd(root_mid, aim, -ik_vec3_dot(root_mid, aim));
  off_len2 = ik_vec3_len2(off);
  if (!(off_len2 > IK__LINE_FRACTION * IK__LINE_FRACTION * upper_len * upper_len)) return 0;
  goal_len = ik_clamp(goal_len, min_reach, reach);
  /* 2 * l1 * d * (cos, sin) of the angle at the root, as ik_two_bone.c's solve; the mid
   * joint l1 * (cos, sin) out. */
  along = goal_len * goal_len + (upper_len - lower_len) * reach;
  across = ik_sqrt((reach + goal_len) * (reach - goal_len)) *
           ik_sqrt((goal_len + min_reach) * (goal_len - min_reach));
  half_inv = 1 / (2 * goal_len);
  p[1] = ik_vec3_add(p[0], ik_vec3_add(ik_vec3_scale(aim, along * half_inv),
                                       ik_vec3_scale(off, across * half_inv / ik_sqrt(off_len2))));
  p[2] = ik_vec3_madd(p[1], ik_vec3_normalize_or(ik_vec3_sub(job->target, p[1]), aim), lower_len);
  s->iterations++;
  return 1;
}

/* Refined mode's finish: damped least-squares steps (ik_dls.c's, with the constraint
 * pass after each) from where the sweeps left the chain, until the tip is there or the
 * budget is spent; for 3 joints, the step they converge to (ik__fabrik_polish_closed). */
void ik__fabrik_end(ik_fabrik_job *job, ik__fabrik_state *s, ik__best *best) {
  const ik_chain *chain = &job->chain;
  const ik_vec3 *tip = &chain->positions[chain->count - 1];
  ik__dls_state dls;
  if (s->may_polish && ik__fabrik_polish_begin_planeless(job, s, ik_vec3_dist2(*tip, job->target), &dls) &&
      !ik__fabrik_polish_closed(job, s)) {
    const ik_real floor_len2 = ik__fabrik_polish_floor2(s);
    ik_real err2 = ik_vec3_dist2(*tip, job->target);
    dls.plane_n = ik__plane_normal(chain->positions, chain->count, job->target, s->total_len);
    do {
      dls.lambda2 = floor_len2 + err2;
      ik__dls_step(&dls, chain, job->target);
      if (best) ik__best_offer(best, chain, job->target);
      err2 = ik_vec3_dist2(*tip, job->target);
    } while (ik__fabrik_polish_next(job, s, err2));
  }
  if (best) ik__best_restore(best, chain, job->target);
  ik__fabrik_finish(job, s);
}

/* Stages 4 to 6 after begin returned `begun`. */
static void run_begun(ik_fabrik_job *job, ik__fabrik_state *s, int begun) {
  ik__best best;
  if (begun) {
    ik__best_begin(&best, &job->chain, s->kinds);
    do {
      ik__fabrik_sweep(job, s);
      ik__best_offer(&best, &job->chain, job->target);
    } while (ik__fabrik_next(job, s, job->chain.positions[job->chain.count - 1]));
    ik__fabrik_end(job, s, &best);
  } else {
    ik__fabrik_end(job, s, NULL);
  }
}

void ik__fabrik_run_valid(ik_fabrik_job *job) {
  ik__fabrik_state s;
  const int begun = ik__fabrik_begin(job, &s);
  run_begun(job, &s, begun);
}

/* ik_fabrik_validate's common case in one pass over the joints (every position and
 * length in range, lengths given and positive, no constraints), summing the lengths as
 * ik__total_length does and finding the longest as ik__fold_reach does; 0 when validate
 * must be asked (it names the fault, or finds none). */
static int quick_valid(const ik_fabrik_job *job, ik_real *total_len, ik_real *longest_len) {
  const ik_chain *chain = &job->chain;
  const ik_vec3 *p = chain->positions;
  const ik_real *len = chain->lengths;
  ik_vec3 sums = ik_vec3_zero();
  ik_real total = 0, longest = 0;
  int i, ok = 1;
  if (!p || !len || chain->count < 2 || chain->derive_lengths) return 0;
  ik__add_magnitudes(&sums, p[0]);
  /* Each length positive; in range then when the reach is (their sum is within it). */
  for (i = 0; i + 1 < chain->count; i++) {
    ik__add_magnitudes(&sums, p[i + 1]);
    ok &= len[i] > 0;
    total += len[i];
    if (len[i] > longest) longest = len[i];
  }
  *total_len = total;
  *longest_len = longest;
  return ok & ik__sums_in_range(sums) & ik__reach_ok(p[0], total) & ik__fabrik_settings_ok(job);
}

ik_status ik_fabrik_run(ik_fabrik_job *job) {
  ik__fabrik_state s;
  ik_real total_len, longest_len;
  ik_status st;
  if (quick_valid(job, &total_len, &longest_len)) {
    run_begun(job, &s, ik__fabrik_begin_known(job, &s, total_len, longest_len) != 0);
    return IK_OK;
  }
  st = ik_fabrik_validate(job, NULL);
  if (st != IK_OK) return st;
  ik__fabrik_run_valid(job);
  return IK_OK;
}
