/* Pole targets: choose the bend plane of a solved chain (ik_pole.h). */
#include "ik_pole.h"

#include <stddef.h>
#include <string.h>

#include "ik_internal.h"

void ik_pole_job_init(ik_pole_job *job, ik_vec3 *positions, int count, ik_vec3 pole) {
  job->positions = positions;
  job->count = count;
  job->pole = pole;
  job->weight = 1;
  job->turned = 0;
}

ik_status ik_pole_validate(const ik_pole_job *job, ik_error *err) {
  ik_status st;
  int i;
  if (!job->positions) return ik__fail(err, IK_E_NULL, "positions", -1);
  if (job->count < 2) return ik__fail(err, IK_E_COUNT, "count", -1);
  for (i = 0; i < job->count; i++)
    if ((st = ik__check_vec3(job->positions[i], err, "positions", i)) != IK_OK) return st;
  if ((st = ik__check_vec3(job->pole, err, "pole", -1)) != IK_OK) return st;
  if (!ik_real_is_finite(job->weight)) return ik__fail(err, IK_E_NOT_FINITE, "weight", -1);
  if (!(job->weight >= 0 && job->weight <= 1)) return ik__fail(err, IK_E_WEIGHT, "weight", -1);
  return IK_OK;
}

ik_status ik_pole_run(ik_pole_job *job) {
  ik_status st = ik_pole_validate(job, NULL);
  if (st != IK_OK) return st;
  job->turned = ik__apply_pole(job->positions, job->count, job->pole, job->weight);
  return IK_OK;
}

/* Joint i turns, with every joint after it but the tip, about the line from joint i - 1
 * to the tip: bone i - 1 and the bones after it keep their lengths, the tip stays, and no
 * joint before i moves, so the turns root to tip never undo one another (turning joint
 * i alone about its neighbours' axis moved the axis of the turn before it, and left
 * chains of three bones or more zig-zagging across the root-to-tip line). Each joint
 * turns as far as it can towards the pole's side of the root-to-tip line (`side`, the
 * pole's offset from that line), so at full weight the chain lies in the plane of root,
 * tip and pole, every joint on the pole's side that its circle reaches. The axes all
 * pass through the tip, so the turns so far compose into one rotation about it, `q`,
 * which places each joint in its turn from where it was: O(n). */
int ik__apply_pole(ik_vec3 *p, int count, ik_vec3 pole, ik_real weight) {
  const ik_vec3 tip_ws = p[count - 1];
  const ik_vec3 line_unit = ik_vec3_normalize(ik_vec3_sub(tip_ws, p[0]));
  const ik_vec3 side = ik_vec3_project_on_plane(ik_vec3_sub(pole, p[0]), line_unit);
  const ik_real side_len2 = ik_vec3_len2(side);
  ik_vec3 plane_n;
  ik_quat q = ik_quat_identity();
  int i, locked, turned = 0;
  if (!(weight > 0) || count < 3) return 0;
  /* The pole on the root-to-tip line: no side to bend to. */
  if (side_len2 <= 64 * IK_REAL_EPSILON * ik_vec3_dist2(pole, p[0])) return 0;
  /* A chain and pole in one plane must stay in it: the turns are 0 or half turns about
   * lines in the plane, and putting each turned joint back on the plane undoes their
   * rounding. The lock holds while every turn keeps the chain in its plane (see below). */
  plane_n = ik__plane_normal(p, count, pole, ik_measure_lengths(p, count, NULL));
  locked = ik_vec3_len2(plane_n) > 0;
  for (i = 1; i + 1 < count; i++) {
    ik_vec3 start_ws = p[i - 1];
    ik_vec3 axis_unit = ik_vec3_normalize(ik_vec3_sub(tip_ws, start_ws));
    ik_vec3 joint_rel, joint_flat, side_flat;
    ik_real joint_flat_len2, angle;
    p[i] = ik_vec3_add(tip_ws, ik_quat_rotate(q, ik_vec3_sub(p[i], tip_ws)));
    if (ik_vec3_len2(axis_unit) == 0) continue; /* the joint before sits on the tip: no axis */
    joint_rel = ik_vec3_sub(p[i], start_ws);
    joint_flat = ik_vec3_project_on_plane(joint_rel, axis_unit);
    side_flat = ik_vec3_project_on_plane(side, axis_unit);
    joint_flat_len2 = ik_vec3_len2(joint_flat);
    /* Compared with the bone's own scale: a joint a hair off a straight chain has no
     * meaningful bend side, and turning it would be noise; nor has an axis across the
     * root-to-tip line along the pole's side. */
    if (joint_flat_len2 <= 64 * IK_REAL_EPSILON * ik_vec3_len2(joint_rel)) continue;
    if (ik_vec3_len2(side_flat) <= 64 * IK_REAL_EPSILON * side_len2) continue;
    angle = ik_vec3_signed_angle(joint_flat, side_flat, axis_unit);
    /* In the plane, the full turn is 0 (the joint is on the pole's side) or a half turn
     * (the far side), to rounding, and either leaves the joint in the plane: projecting
     * it back only undoes rounding. Part of a half turn (weight < 1) takes the joint out
     * of the plane on purpose, where projecting would shorten its bones; from there on
     * the chain is no longer planar, and the lock is off. */
    if (locked && weight < 1 && ik_fabs(angle) > IK_PI / 2) locked = 0;
    angle *= weight;
    {
      const ik_quat turn = ik_quat_axis_angle(axis_unit, angle);
      q = ik_quat_normalize(ik_quat_mul(turn, q));
      p[i] = ik_vec3_add(start_ws, ik_quat_rotate(turn, joint_rel));
    }
    if (locked) {
      /* Projecting moves the joint off its circle about the axis, changing its bones by
       * about off^2 / radius: nothing while off is rounding. Farther off, the turn left
       * the plane for real (an axis that is itself rounding, between neighbours that all
       * but coincide, need not lie in the plane), and projecting would shorten the
       * bones: the lock is off, as for a part turn. */
      const ik_real off = ik_vec3_dot(ik_vec3_sub(p[i], p[0]), plane_n);
      if (off * off > 64 * IK_REAL_EPSILON * joint_flat_len2) {
        locked = 0;
      } else {
        p[i] = ik_vec3_madd(p[i], plane_n, -off);
      }
    }
    turned++;
  }
  return turned;
}

/* Halvings of the pole's weight tried on a constrained chain (see below). */
#define POLE_WEIGHT_HALVINGS 12

/* A constrained chain's pole is a preference and its limits are not: the pole's turns
 * keep every bone's length and the tip, but may break a limit, and the constraint pass
 * that restores it moves the tip off the target. So the chain takes the largest part of
 * the pole's weight (found by halving) whose turns break no limit the pose kept. */
static void apply_pole_within_limits(const ik_chain *chain) {
  ik_vec3 before[IK__BEST_MAX_JOINTS];
  const size_t size = sizeof(ik_vec3) * (size_t)chain->count;
  const ik_real allowed = ik_chain_constraint_violation(chain, NULL) + 1024 * IK_REAL_EPSILON;
  ik_real lo = 0, hi = chain->pole_weight;
  int k;
  memcpy(before, chain->positions, size);
  ik__apply_pole(chain->positions, chain->count, chain->pole, hi);
  if (ik_chain_constraint_violation(chain, NULL) <= allowed) return;
  for (k = 0; k < POLE_WEIGHT_HALVINGS; k++) {
    const ik_real mid = (lo + hi) / 2;
    memcpy(chain->positions, before, size);
    ik__apply_pole(chain->positions, chain->count, chain->pole, mid);
    if (ik_chain_constraint_violation(chain, NULL) <= allowed) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  memcpy(chain->positions, before, size);
  ik__apply_pole(chain->positions, chain->count, chain->pole, lo);
}

void ik__finish_with_pole(const ik_chain *chain, ik_vec3 fallback, int kinds) {
  if (!chain->has_pole) return;
  if (kinds && chain->count <= IK__BEST_MAX_JOINTS) {
    apply_pole_within_limits(chain);
  } else {
    ik__apply_pole(chain->positions, chain->count, chain->pole, chain->pole_weight);
  }
  /* Rounding, or a chain too long to be kept within them above: the limits hold. */
  if (kinds) ik__constrained_pass(chain, fallback, kinds);
}
