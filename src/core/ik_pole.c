/* Pole targets: choose the bend plane of a solved chain (ik_pole.h). */
#include "ik_pole.h"

#include <stddef.h>

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

int ik__apply_pole(ik_vec3 *p, int count, ik_vec3 pole, ik_real weight) {
  ik_vec3 plane_n;
  int i, locked, turned = 0;
  if (!(weight > 0) || count < 3) return 0;
  /* A chain and pole in one plane must stay in it. Each turn is about an axis through
   * joints the previous turn just moved, so rounding off the plane compounds along the
   * chain (by the ratio of bone to axis length, large where the chain zig-zags); putting
   * each turned joint back on the plane stops that. The lock holds while every turn
   * keeps the chain in its plane (see below). */
  plane_n = ik__plane_normal(p, count, pole, ik_measure_lengths(p, count, NULL));
  locked = ik_vec3_len2(plane_n) > 0;
  for (i = 1; i + 1 < count; i++) {
    ik_vec3 start_ws = p[i - 1];
    ik_vec3 axis_unit = ik_vec3_normalize(ik_vec3_sub(p[i + 1], start_ws));
    ik_vec3 joint_rel, pole_rel, joint_flat, pole_flat;
    ik_real joint_flat_len2, pole_flat_len2, angle;
    if (ik_vec3_len2(axis_unit) == 0) continue; /* neighbours coincide: no axis */
    joint_rel = ik_vec3_sub(p[i], start_ws);
    pole_rel = ik_vec3_sub(pole, start_ws);
    joint_flat = ik_vec3_project_on_plane(joint_rel, axis_unit);
    pole_flat = ik_vec3_project_on_plane(pole_rel, axis_unit);
    joint_flat_len2 = ik_vec3_len2(joint_flat);
    pole_flat_len2 = ik_vec3_len2(pole_flat);
    /* Compared with the bone's own scale: a joint a hair off a straight chain has no
     * meaningful bend side, and turning it would be noise. */
    if (joint_flat_len2 <= 64 * IK_REAL_EPSILON * ik_vec3_len2(joint_rel)) continue;
    if (pole_flat_len2 <= 64 * IK_REAL_EPSILON * ik_vec3_len2(pole_rel)) continue;
    angle = ik_vec3_signed_angle(joint_flat, pole_flat, axis_unit);
    /* In the plane, the full turn is 0 (the joint is on the pole's side) or a half turn
     * (the far side), to rounding, and either leaves the joint in the plane: projecting
     * it back only undoes rounding. Part of a half turn (weight < 1) takes the joint out
     * of the plane on purpose, where projecting would shorten its bones; from there on
     * the chain is no longer planar, and the lock is off. */
    if (locked && weight < 1 && ik_fabs(angle) > IK_PI / 2) locked = 0;
    angle *= weight;
    p[i] = ik_vec3_add(start_ws, ik_quat_rotate(ik_quat_axis_angle(axis_unit, angle), joint_rel));
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

void ik__finish_with_pole(const ik_chain *chain, ik_vec3 fallback, int kinds) {
  if (!chain->has_pole) return;
  ik__apply_pole(chain->positions, chain->count, chain->pole, chain->pole_weight);
  /* Turning about the neighbours' axis keeps lengths but may break a constraint. */
  if (kinds) ik__constrained_pass(chain, fallback, kinds);
}
