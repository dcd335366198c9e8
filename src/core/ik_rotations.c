/*
 * ik_rotations.c: solved joint positions to bone rotations (ik_rotations.h).
 *
 * One pass root to tip. Joint i first inherits its parent's turn (its rotation relative
 * to its parent, "local", is kept), then turns by the minimal rotation taking its bone
 * from where the inherited rotation put it to the solved direction. Only the parent's
 * rotation before and after is carried from joint to joint: no allocation.
 */
#include "ik_rotations.h"

#include <stddef.h>

#include "ik_internal.h"

void ik_rotations_job_init(ik_rotations_job *job, int count, const ik_vec3 *positions_before,
                           const ik_vec3 *positions_solved, ik_quat *rotations) {
  job->count = count;
  job->positions_before = positions_before;
  job->positions_solved = positions_solved;
  job->rotations = rotations;
  job->weight = 1;
  job->match_tip_rotation = 0;
  job->tip_rotation = ik_quat_identity();
  job->twist_limits = NULL;
  job->base_rotation_before = ik_quat_identity();
  job->base_rotation = ik_quat_identity();
  job->twist_memory = NULL;
}

ik_status ik_rotations_validate(const ik_rotations_job *job, ik_error *err) {
  ik_status st;
  int i;
  if (job == NULL) return ik__fail(err, IK_E_NULL, "job", -1);
  if (job->positions_before == NULL) return ik__fail(err, IK_E_NULL, "positions_before", -1);
  if (job->positions_solved == NULL) return ik__fail(err, IK_E_NULL, "positions_solved", -1);
  if (job->rotations == NULL) return ik__fail(err, IK_E_NULL, "rotations", -1);
  if (job->count < 2) return ik__fail(err, IK_E_COUNT, "count", -1);
  for (i = 0; i < job->count; i++) {
    if ((st = ik__check_vec3(job->positions_before[i], err, "positions_before", i)) != IK_OK) return st;
    if ((st = ik__check_vec3(job->positions_solved[i], err, "positions_solved", i)) != IK_OK) return st;
    if ((st = ik__check_quat(job->rotations[i], err, "rotations", i)) != IK_OK) return st;
  }
  if (!ik_real_is_finite(job->weight)) return ik__fail(err, IK_E_NOT_FINITE, "weight", -1);
  /* tip_rotation is checked even when unused: init sets it, so garbage there is a bug
   * in the caller worth reporting. */
  if ((st = ik__check_quat(job->tip_rotation, err, "tip_rotation", -1)) != IK_OK) return st;
  if ((st = ik__check_quat(job->base_rotation_before, err, "base_rotation_before", -1)) != IK_OK) return st;
  if ((st = ik__check_quat(job->base_rotation, err, "base_rotation", -1)) != IK_OK) return st;
  /* Bone i joins joints i and i + 1. Its direction in the old pose is what every joint's
   * local bone axis is measured from; a bone with none cannot be turned. Solved bones
   * may be anything: a zero solved bone keeps the inherited direction. */
  for (i = 0; i + 1 < job->count; i++) {
    const ik_real bone_len2 = ik_vec3_dist2(job->positions_before[i], job->positions_before[i + 1]);
    if (!(bone_len2 > IK_TINY_LEN2)) return ik__fail(err, IK_E_BONE_LENGTH, "positions_before", i);
  }
  if (!(job->weight >= 0 && job->weight <= 1)) return ik__fail(err, IK_E_WEIGHT, "weight", -1);
  if (job->twist_limits != NULL) {
    for (i = 0; i < job->count; i++) {
      const ik_real limit = job->twist_limits[i];
      if (!ik_real_is_finite(limit) || !(limit >= 0))
        return ik__fail(err, IK_E_TWIST_LIMIT, "twist_limits", i);
    }
  }
  if (job->twist_memory != NULL) {
    for (i = 0; i < job->count; i++)
      if ((st = ik__check_quat(job->twist_memory[i], err, "twist_memory", i)) != IK_OK) return st;
  }
  return ik__fail(err, IK_OK, NULL, -1);
}

/* The twist `tw` (unit, about unit `axis`) cut back towards none by the rotation whose
 * half-angle has cosine cb and sine sb, or none if it is no larger: half-angle sums with
 * no trigonometry, so lanes can round every step as this does. */
static ik_quat bleed_twist(ik_quat tw, ik_vec3 axis, ik_real cb, ik_real sb) {
  ik_real p = tw.x * axis.x + tw.y * axis.y + tw.z * axis.z, w = tw.w, ap, ps, ws;
  /* q and -q are one twist: take the one whose half-angle is in (-pi/2, pi/2]. */
  if (w < 0 || (w == 0 && p < 0)) p = -p, w = -w;
  ap = ik_fabs(p);
  if (ap * cb <= sb * w) return ik_quat_identity(); /* |half-angle| within the bleed's */
  ps = p * cb - (p > 0 ? w * sb : -(w * sb));
  ws = w * cb + ap * sb;
  return ik_quat_make(axis.x * ps, axis.y * ps, axis.z * ps, ws);
}

/* The joint's full-weight rotation when it remembers its last offset: the offset
 * carried on (in the joint's frame, so the body turning changes nothing), the minimal
 * turn from where that leaves the bone to where it was solved, and the remembered twist
 * bled back by at most half of that turn. Writes the new offset. */
static ik_quat turn_from_last(ik_quat inherited_ws, ik_vec3 bone_ls, ik_vec3 to_ws, ik_quat *memory) {
  const ik_quat predicted_ws = ik_quat_normalize(ik_quat_mul(inherited_ws, ik_quat_normalize(*memory)));
  const ik_vec3 from_ws = ik_quat_rotate(predicted_ws, bone_ls);
  const ik_quat turn_ws = ik_quat_from_to(from_ws, to_ws);
  const ik_quat solved_ws = ik_quat_normalize(ik_quat_mul(turn_ws, predicted_ws));
  const ik_vec3 axis_ls = ik_vec3_normalize(bone_ls);
  /* The bleed is half the turn: its half-angle is a quarter of the turn's, whose cosine
   * and sine are |w| and |xyz| (unit); the sine from the sine, exact near no turn. */
  const ik_real turn_sin = ik_sqrt(turn_ws.x * turn_ws.x + turn_ws.y * turn_ws.y + turn_ws.z * turn_ws.z);
  const ik_real cb = ik_sqrt((1 + ik_fabs(turn_ws.w)) / 2), sb = turn_sin / (2 * cb);
  ik_quat offset_ls = ik_quat_normalize(ik_quat_mul(ik_quat_inverse(inherited_ws), solved_ws));
  ik_quat swing_ls, twist_ls;
  ik_quat_swing_twist(offset_ls, axis_ls, &swing_ls, &twist_ls);
  /* No twist (a half-turn swing leaves none either) or no turn: nothing to bleed. */
  if (sb > 0 && twist_ls.x * axis_ls.x + twist_ls.y * axis_ls.y + twist_ls.z * axis_ls.z != 0)
    offset_ls = ik_quat_normalize(ik_quat_mul(swing_ls, bleed_twist(twist_ls, axis_ls, cb, sb)));
  *memory = offset_ls;
  return ik_quat_normalize(ik_quat_mul(inherited_ws, offset_ls));
}

/* Limits how far the joint twists about its own bone relative to its parent, compared
 * with the old pose. The change is measured in the joint's own frame (right of the old
 * local rotation), where the bone axis is fixed whatever the joint does. */
static ik_quat limit_twist(ik_quat rot_new_ws, ik_quat rot_old_ws, ik_quat parent_new_ws,
                           ik_quat parent_old_ws, ik_vec3 bone_ls, ik_real limit) {
  const ik_quat local_old = ik_quat_mul(ik_quat_inverse(parent_old_ws), rot_old_ws);
  const ik_quat local_new = ik_quat_mul(ik_quat_inverse(parent_new_ws), rot_new_ws);
  const ik_quat delta_ls = ik_quat_normalize(ik_quat_mul(ik_quat_inverse(local_old), local_new));
  const ik_vec3 axis_ls = ik_vec3_normalize(bone_ls);
  ik_quat swing_ls, twist_ls;
  ik_real twist_angle;
  ik_quat_swing_twist(delta_ls, axis_ls, &swing_ls, &twist_ls);
  /* The angle of the twist part itself, so a half-turn swing (no twist part) reads 0
   * here exactly as it does in the decomposition. */
  twist_angle = ik_quat_twist_angle(twist_ls, axis_ls);
  if (ik_fabs(twist_angle) <= limit) return rot_new_ws;
  twist_ls = ik_quat_axis_angle(axis_ls, ik_clamp(twist_angle, -limit, limit));
  /* rot = parent * local_old * swing * twist: the swing keeps the bone where it was
   * put, only the spin about it is cut back. */
  return ik_quat_mul(parent_new_ws, ik_quat_mul(local_old, ik_quat_mul(swing_ls, twist_ls)));
}

/* slerp(from, to, weight), and at full weight `to` itself on from's side (as slerp
 * takes it), without the sines: the common case of a solved chain. */
static ik_quat turn_towards(ik_quat from, ik_quat to, ik_real weight) {
  if (weight != 1) return ik_quat_slerp(from, to, weight);
  if (ik_quat_dot(from, to) < 0) return ik_quat_make(-to.x, -to.y, -to.z, -to.w);
  return to;
}

ik_status ik_rotations_run(ik_rotations_job *job) {
  const ik_status st = ik_rotations_validate(job, NULL);
  if (st != IK_OK) return st;
  ik__rotations_run_valid(job);
  return IK_OK;
}

void ik__rotations_run_valid(ik_rotations_job *job) {
  const int tip = job->count - 1;
  ik_quat parent_old_ws, parent_new_ws;
  int i;
  /* Nothing turns: leave the caller's rotations bit for bit, not re-derived through a
   * product with an inverse that rounds. */
  if (job->weight == 0 && ik__quat_identical(job->base_rotation_before, job->base_rotation)) return;
  parent_old_ws = ik_quat_normalize(job->base_rotation_before);
  parent_new_ws = ik_quat_normalize(job->base_rotation);
  for (i = 0; i <= tip; i++) {
    const ik_quat rot_old_ws = ik_quat_normalize(job->rotations[i]);
    /* What the parent's turn did to this joint: new_parent * old_local. */
    const ik_quat parent_turn_ws =
        ik_quat_normalize(ik_quat_mul(parent_new_ws, ik_quat_inverse(parent_old_ws)));
    const ik_quat inherited_ws = ik_quat_normalize(ik_quat_mul(parent_turn_ws, rot_old_ws));
    /* The bone whose axis this joint twists about: its own, or for the tip its parent's
     * (the tip has no bone of its own). */
    const int bone = i < tip ? i : tip - 1;
    const ik_vec3 bone_old_ws = ik_vec3_sub(job->positions_before[bone + 1], job->positions_before[bone]);
    ik_quat rot_new_ws;
    if (i < tip && job->twist_memory != NULL) {
      const ik_vec3 to_ws = ik_vec3_sub(job->positions_solved[i + 1], job->positions_solved[i]);
      const ik_vec3 bone_ls = ik_quat_rotate(ik_quat_conjugate(rot_old_ws), bone_old_ws);
      const ik_quat solved_ws = ik_vec3_len2(to_ws) > IK_TINY_LEN2
                                    ? turn_from_last(inherited_ws, bone_ls, to_ws, &job->twist_memory[i])
                                    : inherited_ws;
      rot_new_ws = turn_towards(inherited_ws, solved_ws, job->weight);
    } else if (i < tip) {
      const ik_vec3 from_ws = ik_quat_rotate(parent_turn_ws, bone_old_ws);
      const ik_vec3 to_ws = ik_vec3_sub(job->positions_solved[i + 1], job->positions_solved[i]);
      /* Minimal turn, applied after the inherited rotation: it adds no twist about the
       * bone, so the animation's twist survives. */
      const ik_quat solved_ws = ik_quat_mul(ik_quat_from_to(from_ws, to_ws), inherited_ws);
      rot_new_ws = turn_towards(inherited_ws, solved_ws, job->weight);
    } else if (job->match_tip_rotation) {
      rot_new_ws = turn_towards(inherited_ws, ik_quat_normalize(job->tip_rotation), job->weight);
    } else {
      rot_new_ws = inherited_ws;
    }
    if (job->twist_limits != NULL) {
      /* The bone in the joint's own frame: where the old rotation holds it. */
      const ik_vec3 bone_ls = ik_quat_rotate(ik_quat_conjugate(rot_old_ws), bone_old_ws);
      rot_new_ws =
          limit_twist(rot_new_ws, rot_old_ws, parent_new_ws, parent_old_ws, bone_ls, job->twist_limits[i]);
    }
    rot_new_ws = ik_quat_normalize(rot_new_ws);
    job->rotations[i] = rot_new_ws;
    parent_old_ws = rot_old_ws;
    parent_new_ws = rot_new_ws;
  }
}
