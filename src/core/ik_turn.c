/*
 * Helpers the rotation-based solvers (CCD, DLS) share: turning a sub-chain, the plane
 * lock that keeps planar chains planar under rounding, and bending a stalled chain.
 */
#include <stddef.h>

#include "ik_internal.h"

/* Bend given to a stalled chain: enough for the next sweeps to find a side to fold to,
 * far from any angle where the fold would itself be straight. */
#define IK_UNSTALL_ANGLE ((ik_real)0.5)

/* Turns bones first .. count - 2 by q about joint `first`, which stays. Each joint is
 * re-placed at its bone length along the turned old direction; a bone with no
 * direction of its own (coincident joints) takes its parent's. */
void ik__turn_subchain(ik_vec3 *p, const ik_real *lengths, int count, int first, ik_quat q,
                       ik_vec3 parent_dir) {
  ik_vec3 old_ws = p[first]; /* joint j before the turn; p[j] already holds the new one */
  int j;
  for (j = first; j + 1 < count; j++) {
    ik_vec3 old_next_ws = p[j + 1];
    ik_vec3 dir_old = ik_vec3_normalize_or(ik_vec3_sub(old_next_ws, old_ws), parent_dir);
    p[j + 1] = ik_vec3_madd(p[j], ik_quat_rotate(q, dir_old), lengths[j]);
    parent_dir = dir_old;
    old_ws = old_next_ws;
  }
}

/* How far from a plane a point of a planar pose may lie, by rounding alone: the pose's
 * size is its length plus the target's distance. */
static ik_real flat_len_of(const ik_vec3 *p, ik_vec3 target, ik_real total_len) {
  return IK__FLAT_EPSILONS * IK_REAL_EPSILON * (total_len + ik_vec3_dist(target, p[0]));
}

/* Whether the target and every joint lie within flat_len of the plane through the root
 * with unit normal `normal`. */
static int flat_in(const ik_vec3 *p, int count, ik_vec3 target, ik_vec3 normal, ik_real flat_len) {
  int j;
  for (j = 0; j <= count; j++)
    if (ik_fabs(ik_vec3_dot(ik_vec3_sub(j < count ? p[j] : target, p[0]), normal)) > flat_len) return 0;
  return 1;
}

/* The unit normal of the plane holding the target and every joint, to rounding; the
 * zero vector when they lie on (or near) one line, or span space. The axis is the
 * farthest of them from the root, the normal comes from the point farthest off that
 * axis, and every point must lie within IK__FLAT_EPSILONS epsilons of the pose's
 * size from the plane. */
ik_vec3 ik__plane_normal(const ik_vec3 *p, int count, ik_vec3 target, ik_real total_len) {
  const ik_vec3 root_ws = p[0];
  ik_vec3 axis = ik_vec3_sub(target, root_ws), normal = ik_vec3_zero();
  ik_real size = total_len + ik_vec3_len(axis);
  ik_real axis_len2, best_len2 = 0;
  int j;
  for (j = 1; j < count; j++)
    if (ik_vec3_dist2(p[j], root_ws) > ik_vec3_len2(axis)) axis = ik_vec3_sub(p[j], root_ws);
  axis_len2 = ik_vec3_len2(axis);
  for (j = 0; j <= count; j++) {
    ik_vec3 arm = ik_vec3_cross(axis, ik_vec3_sub(j < count ? p[j] : target, root_ws));
    if (ik_vec3_len2(arm) > best_len2) {
      best_len2 = ik_vec3_len2(arm);
      normal = arm;
    }
  }
  /* Nearly one line: the normal would be rounding noise about the line. */
  if (!(best_len2 > IK__LINE_FRACTION * IK__LINE_FRACTION * size * size * axis_len2)) return ik_vec3_zero();
  normal = ik_vec3_normalize(normal);
  return flat_in(p, count, target, normal, flat_len_of(p, target, total_len)) ? normal : ik_vec3_zero();
}

ik_vec3 ik__plane_kept(const ik_vec3 *p, int count, ik_vec3 target, ik_vec3 normal, ik_real total_len) {
  if (ik_vec3_len2(normal) > 0 && flat_in(p, count, target, normal, flat_len_of(p, target, total_len)))
    return normal;
  return ik__plane_normal(p, count, target, total_len);
}

/* Shortest distance from the root the tip can reach: folding the longest bone back
 * over all the others. */
ik_real ik__fold_reach(const ik_chain *chain, ik_real total_len) {
  ik_real longest = 0;
  int i;
  for (i = 0; i + 1 < chain->count; i++)
    if (chain->lengths[i] > longest) longest = chain->lengths[i];
  return 2 * longest - total_len;
}

/* A chain lying straight along the line to its target is a fixed point of CCD (every
 * minimal rotation is the identity). Bend it so that the next sweep has a side to fold
 * towards. At the first inner joint whose bone has a hinge (ik__hinge_bulge), within
 * the hinge's plane and to the side its range allows: a one-sided knee bent any other
 * way would be clamped straight again. Without one, at the middle joint, in a plane
 * across the bone. `stalls` alternates the bend, between the hinge's two sides or
 * between two perpendicular planes, so that whatever clamps one bend cannot keep the
 * chain stuck. */
int ik__unstall(const ik_chain *chain, ik_vec3 root_dir, int stalls) {
  ik_vec3 *p = chain->positions;
  int joint, hinged = 0;
  ik_vec3 bone_dir = root_dir, side = ik_vec3_zero(), bulge;
  for (joint = 1; joint + 1 < chain->count && !hinged; joint++) {
    ik_vec3 parent_dir = ik_vec3_normalize_or(ik_vec3_sub(p[joint], p[joint - 1]), bone_dir);
    bone_dir = ik_vec3_normalize_or(ik_vec3_sub(p[joint + 1], p[joint]), parent_dir);
    bulge = ik_vec3_neg(ik_vec3_any_perpendicular(bone_dir));
    if (ik__hinge_bulge(chain, joint, bone_dir, &bulge)) {
      /* The joint bulges one way, the bone after it turns the other. */
      side = (stalls & 1) ? bulge : ik_vec3_neg(bulge);
      hinged = 1;
    }
  }
  if (hinged) {
    joint--;
  } else {
    joint = (chain->count - 1) / 2;
    bone_dir = ik_vec3_normalize_or(
        ik_vec3_sub(p[joint + 1], p[joint]),
        joint == 0 ? root_dir : ik_vec3_normalize_or(ik_vec3_sub(p[joint], p[joint - 1]), root_dir));
    side = ik_vec3_any_perpendicular(bone_dir);
    if (stalls & 1) side = ik_vec3_cross(bone_dir, side);
  }
  /* Rotating about bone x side turns the bone towards side. */
  ik__turn_subchain(p, chain->lengths, chain->count, joint,
                    ik_quat_axis_angle(ik_vec3_cross(bone_dir, side), IK_UNSTALL_ANGLE), bone_dir);
  return joint;
}
