/*
 * Cyclic coordinate descent (ik_ccd.h). Stages of run():
 *   1. validate, then measure lengths when asked;
 *   2. out of reach: lay the chain straight towards the target, no iterations;
 *   3. already there: no iterations (warm start pays off here);
 *   4. settle: every bone put back at its length (coincident joints unfold), so that
 *      each joint has a direction to turn; find the plane the pose lies in, if any;
 *   5. sweeps: joints n - 2 down to 0 each turn the rest of the chain to point the tip
 *      at the target, each turn limited by the joint's constraint as it is made (the
 *      frames measured once a sweep: a turn moves only the bones after its joint), then
 *      the shared constraint pass; convergence tested after each full sweep. A sweep
 *      that turns nothing (chain straight along the target's line) bends the chain and
 *      sweeps again. A constrained chain keeps its best pose so far (ik__best);
 *   6. the best pose back when the last is worse, then the pole, then the result.
 *
 * Joints are re-placed from bone directions at the stored lengths after every turn,
 * never moved by a rotation of their offset, so no length drift can build up. A planar
 * pose with its target in the plane turns about the plane's normal only, so it stays
 * planar to rounding.
 */
#include "ik_ccd.h"

#include <stddef.h>

#include "ik_internal.h"

/* A sweep whose turns moved the tip by less than this fraction of its distance to the
 * target has stalled: without limits, every joint already points the tip at the target,
 * which with the target still away happens only when chain and target lie on one line.
 * With limits it also happens when they hold every joint still; the bend then kicks the
 * chain out of that pose (and the best pose kept means it cannot end worse; how often it
 * fires: docs/design-notes.md). */
#define CCD_STALL_FRACTION ((ik_real)1e-3)
/* A stalled solve stops, more sweeps would only spend time: after CCD_IDLE_SWEEPS sweeps
 * in a row that each change the tip's distance to the target by at most CCD_IDLE_GAIN of
 * it (limits hold the chain still, or rounding does under a tolerance too fine), or after
 * CCD_UNBETTERED_SWEEPS that bring it no nearer than its best less that fraction (limits
 * and the bend take it round a cycle). Changes of rounding's size count as none. A short
 * count of the second kind would stop chains that wander and then reach. */
#define CCD_IDLE_SWEEPS 4
#define CCD_IDLE_GAIN ((ik_real)1e-6)
#define CCD_UNBETTERED_SWEEPS 16
/* Sine of the angle from a half turn under which a joint's turn counts as one. */
#define CCD_HALF_TURN_SIN ((ik_real)1e-2)
/* Longest chain whose sweeps limit each joint's turn (frames on the stack). */
#define CCD_LIMITED_MAX_JOINTS 64

void ik_ccd_job_init(ik_ccd_job *job, const ik_chain *chain, ik_vec3 target) {
  job->chain = *chain;
  job->target = target;
  job->tolerance = (ik_real)1e-3;
  job->max_iterations = 10;
  ik__result_init(&job->result);
}

ik_status ik_ccd_validate(const ik_ccd_job *job, ik_error *err) {
  return ik__validate_solve(&job->chain, job->target, job->tolerance, job->max_iterations, err);
}

/* Direction of the bone before joint i (the root's fallback for i == 0). */
static ik_vec3 parent_direction(const ik_vec3 *p, int i, ik_vec3 root_dir) {
  if (i == 0) return root_dir;
  return ik_vec3_normalize_or(ik_vec3_sub(p[i], p[i - 1]), root_dir);
}

/* The turn at joint i taking to_tip onto to_target. In a plane (plane_n non-zero): about
 * its normal, which in exact arithmetic is the minimal rotation's own axis; computed as
 * (to_tip x to_target) / sin that axis amplifies rounding where to_tip is short or the
 * turn nearly a half turn, and a planar chain would drift out of its plane. Otherwise
 * the minimal rotation, except near a half turn, where any perpendicular would do: there
 * turn about the normal of the plane the chain bends in at the joint (to_tip and bone
 * i, else bone i - 1). */
static ik_quat joint_turn(const ik_vec3 *p, int i, ik_vec3 to_tip, ik_vec3 to_target, ik_vec3 plane_n) {
  ik_real half_turn_len2 = CCD_HALF_TURN_SIN * CCD_HALF_TURN_SIN * ik_vec3_len2(to_tip);
  int k;
  if (ik_vec3_len2(plane_n) > 0)
    return ik_quat_axis_angle(plane_n, ik_vec3_signed_angle(to_tip, to_target, plane_n));
  if (ik_vec3_dot(to_tip, to_target) > 0 ||
      ik_vec3_len2(ik_vec3_cross(to_tip, to_target)) > half_turn_len2 * ik_vec3_len2(to_target))
    return ik_quat_from_to(to_tip, to_target);
  for (k = i; k >= i - 1 && k >= 0; k--) {
    ik_vec3 bone = ik_vec3_sub(p[k + 1], p[k]);
    ik_vec3 normal = ik_vec3_cross(to_tip, bone);
    if (ik_vec3_len2(normal) > half_turn_len2 * ik_vec3_len2(bone)) {
      normal = ik_vec3_normalize(normal);
      return ik_quat_axis_angle(normal, ik_vec3_signed_angle(to_tip, to_target, normal));
    }
  }
  return ik_quat_from_to(to_tip, to_target); /* straight there: no plane to keep */
}

/* One CCD sweep, joint `first` down to the root (a full sweep starts at count - 2, the
 * joint nearest the tip). Returns the largest single move of the tip, which the caller
 * compares with the distance left to detect a stall. `tiny_len2` is the squared
 * distance below which a joint has no direction to aim from or at. */
static ik_real ccd_sweep(const ik_chain *chain, ik_vec3 target, ik_vec3 root_dir, ik_vec3 plane_n,
                         ik_real tiny_len2, int first, int kinds) {
  ik_vec3 *p = chain->positions;
  const int count = chain->count;
  ik_constraint_frame frames[CCD_LIMITED_MAX_JOINTS - 1];
  int frame_of[CCD_LIMITED_MAX_JOINTS - 1];
  ik_real max_step_len2 = 0;
  int i, limited = kinds && count <= CCD_LIMITED_MAX_JOINTS;
  if (limited) {
    const int n = ik__bone_frames(chain, root_dir, kinds, frames);
    for (i = 0; i + 1 < count; i++) frame_of[i] = -1;
    for (i = 0; i < n; i++) frame_of[frames[i].bone] = i;
  }
  for (i = first; i >= 0; i--) {
    ik_vec3 tip_ws = p[count - 1];
    ik_vec3 to_tip = ik_vec3_sub(tip_ws, p[i]);
    ik_vec3 to_target = ik_vec3_sub(target, p[i]);
    ik_real step_len2;
    ik_quat q;
    /* The tip on the joint (or the target on it): any turn leaves the tip where it is. */
    if (ik_vec3_len2(to_tip) <= tiny_len2 || ik_vec3_len2(to_target) <= tiny_len2) continue;
    q = joint_turn(p, i, to_tip, to_target, plane_n);
    if (limited && frame_of[i] >= 0) {
      const ik_vec3 dir = ik_vec3_normalize(ik_vec3_sub(p[i + 1], p[i]));
      if (ik_vec3_len2(dir) > 0) q = ik__limit_turn(&frames[frame_of[i]], dir, q);
    }
    ik__turn_subchain(p, chain->lengths, count, i, q, parent_direction(p, i, root_dir));
    step_len2 = ik_vec3_dist2(p[count - 1], tip_ws);
    if (step_len2 > max_step_len2) max_step_len2 = step_len2;
  }
  return ik_sqrt(max_step_len2);
}

ik_status ik_ccd_run(ik_ccd_job *job) {
  const ik_chain *chain = &job->chain;
  ik_vec3 *p = chain->positions;
  const int count = chain->count;
  ik_status st = ik_ccd_validate(job, NULL);
  ik_vec3 root_ws, root_dir, plane_n;
  ik__best best;
  ik_real total_len, tolerance_len2, tiny_len2, stall_floor_len, noise_len, best_len, last_len;
  int kinds, may_unstall, iterations = 0, stalls = 0, idle = 0, unbettered = 0;
  if (st != IK_OK) return st;

  ik__prepare_lengths(chain);
  root_ws = p[0];
  root_dir = ik__root_fallback(chain, job->target);
  total_len = ik__total_length(chain);
  tolerance_len2 = job->tolerance * job->tolerance;
  kinds = ik__constraint_kinds(chain);
  /* Scale-relative: positions carry rounding of about epsilon times the chain's size,
   * and a direction made of rounding noise is no direction. */
  tiny_len2 = (16 * IK_REAL_EPSILON * total_len) * (16 * IK_REAL_EPSILON * total_len);
  /* Below this distance a "stall" is rounding noise near the solution, not a straight
   * chain: bending it would only throw the solution away. */
  stall_floor_len = 1024 * IK_REAL_EPSILON * total_len;
  /* Changes of the tip's distance this small are rounding, not progress. */
  noise_len = 16 * IK_REAL_EPSILON * total_len;
  /* Bending helps only a target the chain can reach: one nearer than folding allows is
   * best served by the folded line CCD already found (and one bone cannot bend). */
  may_unstall = count >= 3 && ik_vec3_dist(job->target, root_ws) > ik__fold_reach(chain, total_len);

  if (ik_vec3_dist2(job->target, root_ws) >= total_len * total_len) {
    ik__lay_straight(chain, job->target, kinds);
  } else if (ik_vec3_dist2(p[count - 1], job->target) > tolerance_len2) {
    /* Settle: the sweeps turn bones, so each must have its length and a direction. */
    ik__constrained_pass(chain, root_dir, kinds);
    /* Fixed for the solve: turns about a fixed axis keep every point's height over the
     * plane exactly, so rounding cannot feed back into the axis. Re-found only when
     * something other than a turn moved the chain. */
    plane_n = ik__plane_normal(p, count, job->target, total_len);
    ik__best_begin(&best, chain, kinds);
    best_len = last_len = ik_vec3_dist(p[count - 1], job->target);
    while (iterations < job->max_iterations) {
      ik_real err_len = ik_vec3_dist(p[count - 1], job->target);
      ik_real step_len = ccd_sweep(chain, job->target, root_dir, plane_n, tiny_len2, count - 2, kinds);
      iterations++;
      /* Stalled: bend, then sweep again so that the iteration still ends with a sweep:
       * only the joints before the bend, which turn it as a whole to aim the tip. The
       * bent joint and those after it lie on the line to the target, and would aim the
       * tip along it, straight again. */
      if (may_unstall && err_len > stall_floor_len && step_len < CCD_STALL_FRACTION * err_len) {
        const int bent = ik__unstall(chain, root_dir, stalls++);
        plane_n = ik__plane_normal(p, count, job->target, total_len);
        ccd_sweep(chain, job->target, root_dir, plane_n, tiny_len2, bent - 1, kinds);
      }
      if (kinds) {
        ik__constrained_pass(chain, root_dir, kinds);
        plane_n = ik__plane_normal(p, count, job->target, total_len);
      }
      if (ik_vec3_dist2(p[count - 1], job->target) <= tolerance_len2) break;
      ik__best_offer(&best, chain, job->target);
      {
        /* With no best pose kept, stop only on one as near as the best. */
        const ik_real len = ik_vec3_dist(p[count - 1], job->target);
        idle = ik_fabs(len - last_len) > CCD_IDLE_GAIN * last_len + noise_len ? 0 : idle + 1;
        if (len < best_len * (1 - CCD_IDLE_GAIN) - noise_len) {
          best_len = len;
          unbettered = 0;
        } else {
          unbettered++;
        }
        if ((idle >= CCD_IDLE_SWEEPS || unbettered >= CCD_UNBETTERED_SWEEPS) &&
            (best.keep || len <= best_len * (1 + CCD_IDLE_GAIN) + noise_len))
          break;
        last_len = len;
      }
    }
    ik__best_restore(&best, chain, job->target);
  }

  ik__finish_with_pole(chain, root_dir, kinds);
  ik__set_result(&job->result, chain, job->target, job->tolerance, iterations);
  return IK_OK;
}
