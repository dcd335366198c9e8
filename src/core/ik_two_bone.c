/*
 * ik_two_bone.c: analytic two-bone IK.
 *
 * run() measures the limb from its input pose, turns the target into a goal distance
 * (soft reach, then the reachable range), picks the bend direction and places mid and
 * end by the law of cosines. Everything is in the limb's own space ("_ws").
 */
#include "ik_two_bone.h"

#include <stddef.h>

#include "ik_internal.h"

void ik_two_bone_job_init(ik_two_bone_job *job, ik_vec3 *positions, ik_vec3 target) {
  job->positions = positions;
  job->target = target;
  job->has_pole = 0;
  job->pole = ik_vec3_zero();
  job->weight = 1;
  job->softness = 0;
  job->tolerance = (ik_real)1e-3;
  ik__result_init(&job->result);
}

/* Validation's common case, one comparison per value: ik__check_real's test. The checks
 * that name the fault run only when it fails (run() validates before every solve, where
 * a call per coordinate was dear: docs/design-notes.md). */
static int in_range(ik_real r) { return ik_fabs(r) <= IK_REAL_MAX_COORD; }
static int vec3_in_range(ik_vec3 v) { return in_range(v.x) && in_range(v.y) && in_range(v.z); }

static int values_in_range(const ik_two_bone_job *job) {
  const ik_vec3 *p = job->positions;
  return vec3_in_range(p[0]) && vec3_in_range(p[1]) && vec3_in_range(p[2]) && vec3_in_range(job->target) &&
         (!job->has_pole || vec3_in_range(job->pole)) && ik_real_is_finite(job->weight) &&
         ik_real_is_finite(job->softness) && ik_real_is_finite(job->tolerance);
}

/* Names the first value out of range or not finite (IK_OK when none is). */
static ik_status check_values(const ik_two_bone_job *job, ik_error *err) {
  ik_status status;
  int i;
  for (i = 0; i < 3; i++) {
    if ((status = ik__check_vec3(job->positions[i], err, "positions", i)) != IK_OK) return status;
  }
  if ((status = ik__check_vec3(job->target, err, "target", -1)) != IK_OK) return status;
  /* An unused pole may hold anything. */
  if (job->has_pole && (status = ik__check_vec3(job->pole, err, "pole", -1)) != IK_OK) return status;
  if (!ik_real_is_finite(job->weight)) return ik__fail(err, IK_E_NOT_FINITE, "weight", -1);
  if (!ik_real_is_finite(job->softness)) return ik__fail(err, IK_E_NOT_FINITE, "softness", -1);
  if (!ik_real_is_finite(job->tolerance)) return ik__fail(err, IK_E_NOT_FINITE, "tolerance", -1);
  return IK_OK;
}

/* ik_two_bone_validate, also giving run() the bone lengths it measured (solve measures
 * them the same way: the distance from joint i to joint i + 1). */
static ik_status validate(const ik_two_bone_job *job, ik_error *err, ik_real *lengths) {
  ik_status status;
  int i;
  if (job == NULL) return ik__fail(err, IK_E_NULL, "job", -1);
  if (job->positions == NULL) return ik__fail(err, IK_E_NULL, "positions", -1);
  if (!values_in_range(job) && (status = check_values(job, err)) != IK_OK) return status;
  /* Bone i joins positions i and i + 1; one with no direction cannot be bent. */
  for (i = 0; i < 2; i++) {
    const ik_real len2 = ik_vec3_dist2(job->positions[i], job->positions[i + 1]);
    if (!(len2 > IK_TINY_LEN2)) return ik__fail(err, IK_E_BONE_LENGTH, "positions", i);
    lengths[i] = ik_sqrt(len2);
  }
  /* The limb's reach, as a chain's (ik_chain.h), so the solved limb is valid input again. */
  if (!ik__reach_ok(job->positions[0], lengths[0] + lengths[1]) &&
      (status = ik__check_reach(job->positions[0], lengths[0] + lengths[1], err, "positions")) != IK_OK)
    return status;
  if (job->tolerance < 0) return ik__fail(err, IK_E_TOLERANCE, "tolerance", -1);
  if (job->weight < 0 || job->weight > 1) return ik__fail(err, IK_E_WEIGHT, "weight", -1);
  if (job->softness < 0 || job->softness >= 1) return ik__fail(err, IK_E_PARAMETER, "softness", -1);
  if (err) ik__fail(err, IK_OK, NULL, -1);
  return IK_OK;
}

ik_status ik_two_bone_validate(const ik_two_bone_job *job, ik_error *err) {
  ik_real lengths[2];
  return validate(job, err, lengths);
}

/* Soft reach: past (1 - softness) * reach the goal distance follows an exponential that
 * meets the straight line with the same value and slope and tends to full reach without
 * getting there, so the knee never snaps straight as the target drifts outwards. */
static ik_real soften_distance(ik_real target_len, ik_real reach, ik_real softness) {
  const ik_real hard_len = reach * (1 - softness);
  const ik_real soft_len = reach - hard_len;
  if (!(soft_len > 0) || target_len <= hard_len) return target_len;
  return hard_len + soft_len * (1 - ik_exp(-(target_len - hard_len) / soft_len));
}

/* Unit direction of the part of v (of length v_len) across the unit `axis_ws`, or zero
 * when v lies on the axis. The threshold is relative to |v|: an absolute one would read
 * the rounding noise of a long bone lying on the axis as a direction. */
static ik_vec3 across_axis(ik_vec3 v, ik_real v_len, ik_vec3 axis_ws) {
  const ik_vec3 off_ws = ik_vec3_project_on_plane(v, axis_ws);
  const ik_real off_len2 = ik_vec3_len2(off_ws);
  const ik_real noise_len = 16 * IK_REAL_EPSILON * v_len;
  if (off_len2 <= noise_len * noise_len) return ik_vec3_zero();
  /* Just above the threshold off_ws is mostly rounding (the axis itself carries the
   * cancellation of a target near the start), and need not be perpendicular to the axis;
   * a bend direction that is not would stretch the upper bone. Projecting its direction
   * once more makes it perpendicular to rounding. A part across of an eighth of |v| or
   * more is that already, and spared the second square root (as in ik__unit_across). */
  if (64 * off_len2 >= v_len * v_len && off_len2 > IK_TINY_LEN2)
    return ik_vec3_scale(off_ws, 1 / ik_sqrt(off_len2));
  return ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_normalize(off_ws), axis_ws));
}

/* Unit vector perpendicular to aim_ws, towards the side the mid joint goes to. */
static ik_vec3 bend_direction(const ik_two_bone_job *job, ik_vec3 aim_ws, ik_real upper_len) {
  const ik_vec3 start_ws = job->positions[0];
  const ik_vec3 start_mid_ws = ik_vec3_sub(job->positions[1], start_ws);
  ik_vec3 bend_ws = ik_vec3_zero();
  if (job->has_pole) {
    const ik_vec3 start_pole_ws = ik_vec3_sub(job->pole, start_ws);
    bend_ws = across_axis(start_pole_ws, ik_vec3_len(start_pole_ws), aim_ws);
  }
  /* No pole, or one on the start-target line: keep the mid joint on its side of it, so
   * the limb turns as little as it can. (|start_mid_ws| is the upper bone's length.) */
  if (ik_vec3_len2(bend_ws) == 0) bend_ws = across_axis(start_mid_ws, upper_len, aim_ws);
  /* Mid on the start-target line but the limb bent: the knee's side of the start-end
   * line, turned to face the target, keeps the limb bending the same way round. */
  if (ik_vec3_len2(bend_ws) == 0) {
    const ik_vec3 start_end_ws = ik_vec3_sub(job->positions[2], start_ws);
    const ik_vec3 knee_ws = across_axis(start_mid_ws, upper_len, ik_vec3_normalize(start_end_ws));
    bend_ws = across_axis(knee_ws, ik_vec3_len(knee_ws), aim_ws);
  }
  /* Straight or folded limb on the target line: any plane will do, but the same one
   * every frame, or the knee would spin. */
  if (ik_vec3_len2(bend_ws) == 0) bend_ws = ik_vec3_any_perpendicular(aim_ws);
  return bend_ws;
}

/* The direction the limb points in: start to end, or start to mid when end sits on the
 * start. Only asked for when the target sits on the start. */
static ik_vec3 limb_direction(const ik_vec3 *positions_ws) {
  const ik_vec3 start_end_dir = ik_vec3_normalize(ik_vec3_sub(positions_ws[2], positions_ws[0]));
  if (ik_vec3_len2(start_end_dir) > 0) return start_end_dir;
  return ik_vec3_normalize(ik_vec3_sub(positions_ws[1], positions_ws[0]));
}

/* Writes the solved mid and end joints; start stays. lengths: the bones', measured from
 * the pose by validate (so animated bone scale is honoured). */
static void solve(const ik_two_bone_job *job, const ik_real *lengths) {
  ik_vec3 *positions_ws = job->positions;
  const ik_vec3 start_ws = positions_ws[0];
  const ik_real upper_len = lengths[0];
  const ik_real lower_len = lengths[1];
  const ik_real reach = upper_len + lower_len;
  const ik_real min_reach = ik_fabs(upper_len - lower_len);

  /* Aim: a target on the start joint has no direction; keep the one the limb points in
   * so the limb folds in place. (ik_vec3_normalize_or, sharing its square root with
   * target_len.) */
  const ik_vec3 start_target_ws = ik_vec3_sub(job->target, start_ws);
  const ik_real target_len2 = ik_vec3_len2(start_target_ws);
  const ik_real target_len = ik_sqrt(target_len2);
  const ik_vec3 aim_ws = target_len2 > IK_TINY_LEN2 && ik_real_is_finite(target_len2)
                             ? ik_vec3_scale(start_target_ws, 1 / target_len)
                             : limb_direction(positions_ws);

  /* Goal distance: soft reach first, then what the limb can span at all (too far: lay it
   * straight; too near: fold it as far as it goes). */
  const ik_real goal_len = ik_clamp(soften_distance(target_len, reach, job->softness), min_reach, reach);

  const ik_vec3 bend_ws = bend_direction(job, aim_ws, upper_len);

  /* Law of cosines for the angle at the start, as 2 * l1 * d * (cos, sin) =
   * (d^2 + l1^2 - l2^2, sqrt of Heron's product). The clamp makes one factor of Heron's
   * product exactly zero at full reach and at full fold, so the limb lies exactly on the
   * line there, and no cos -> sin cancellation costs digits near straight. */
  const ik_real along = goal_len * goal_len + (upper_len - lower_len) * reach;
  const ik_real across = ik_sqrt((reach + goal_len) * (reach - goal_len)) *
                         ik_sqrt((goal_len + min_reach) * (goal_len - min_reach));
  const ik_real scale = 2 * upper_len * goal_len;
  /* Equal bones and the goal on the start: the limit is a right angle. */
  const ik_real cos_start = scale > 0 ? along / scale : 0;
  const ik_real sin_start = scale > 0 ? across / scale : 1;

  /* Place: mid on its circle, then end at the lower bone's length towards the goal, which
   * keeps that length exact whatever rounding did to mid. */
  const ik_vec3 goal_ws = ik_vec3_madd(start_ws, aim_ws, goal_len);
  const ik_vec3 mid_dir_ws = ik_vec3_add(ik_vec3_scale(aim_ws, cos_start), ik_vec3_scale(bend_ws, sin_start));
  const ik_vec3 solved_mid_ws = ik_vec3_madd(start_ws, mid_dir_ws, upper_len);
  const ik_vec3 lower_dir_ws = ik_vec3_normalize_or(ik_vec3_sub(goal_ws, solved_mid_ws), aim_ws);
  positions_ws[1] = solved_mid_ws;
  positions_ws[2] = ik_vec3_madd(solved_mid_ws, lower_dir_ws, lower_len);
}

/* validate's common case folded into the lengths' measuring, in one branchless test:
 * the magnitudes' sums axis by axis in range (so every coordinate is, and none is NaN or
 * infinite), both bones of a length, the reach, the settings in their ranges (which no
 * NaN is); 0 when validate must be asked (it names the fault, or finds none). The
 * lengths are validate's, bit for bit. */
static int quick_valid(const ik_two_bone_job *job, ik_real *lengths) {
  const ik_vec3 *p = job->positions;
  const ik_real upper_len2 = ik_vec3_dist2(p[0], p[1]), lower_len2 = ik_vec3_dist2(p[1], p[2]);
  ik_vec3 sums = ik_vec3_zero();
  ik__add_magnitudes(&sums, p[0]);
  ik__add_magnitudes(&sums, p[1]);
  ik__add_magnitudes(&sums, p[2]);
  ik__add_magnitudes(&sums, job->target);
  if (job->has_pole) ik__add_magnitudes(&sums, job->pole);
  lengths[0] = ik_sqrt(upper_len2);
  lengths[1] = ik_sqrt(lower_len2);
  return ik__sums_in_range(sums) & (upper_len2 > IK_TINY_LEN2) & (lower_len2 > IK_TINY_LEN2) &
         ik__reach_ok(p[0], lengths[0] + lengths[1]) & (job->tolerance >= 0) &
         ik_real_is_finite(job->tolerance) & (job->weight >= 0) & (job->weight <= 1) & (job->softness >= 0) &
         (job->softness < 1);
}

ik_status ik_two_bone_run(ik_two_bone_job *job) {
  ik_real lengths[2];
  ik_vec3 input_ws[3];
  if (!job || !job->positions || !quick_valid(job, lengths)) {
    const ik_status status = validate(job, NULL, lengths);
    if (status != IK_OK) return status;
  }

  /* weight 0 leaves the pose as it is, bit for bit, without solving and blending back. */
  if (job->weight >= 1) {
    solve(job, lengths);
  } else if (job->weight > 0) {
    input_ws[0] = job->positions[0];
    input_ws[1] = job->positions[1];
    input_ws[2] = job->positions[2];
    solve(job, lengths);
    ik_blend_chain(input_ws, job->positions, 3, job->weight);
  }

  job->result.distance = ik_vec3_dist(job->positions[2], job->target);
  job->result.reached = job->result.distance <= job->tolerance;
  job->result.iterations = 1;
  return IK_OK;
}
