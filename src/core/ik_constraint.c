/*
 * Joint constraints, applied in the root-to-tip pass every solver ends a sweep with.
 *
 * Hinge axes are given in the rest pose and carried along the chain: the rotation that
 * takes the rest pose to the current one is built bone by bone, root to tip, each step
 * taking the bone's carried rest direction to its current direction (carry_frame: a
 * hinged bone's turn about its axis, then the minimal rotation left; other bones' the
 * minimal rotation alone). A knee's axis therefore turns with the thigh, which the
 * seed's world-space axis does not do. No such carry is continuous everywhere: this
 * one is ill-conditioned where a bone lies along its own hinge axis, which the pass
 * never leaves an enforced hinge doing (only a bone 0 without a base direction, whose
 * hinge is not enforced, can get there), and where an unhinged bone has turned by half
 * a turn.
 */
#include <stddef.h>

#include "ik_internal.h"

ik_status ik_constraint_validate(const ik_constraint *c) {
  switch (c->type) {
    case IK_CONSTRAINT_NONE:
      return IK_OK;
    case IK_CONSTRAINT_CONE:
      if (!ik_real_is_finite(c->angle)) return IK_E_NOT_FINITE;
      return c->angle >= 0 && c->angle <= IK_PI ? IK_OK : IK_E_CONE_ANGLE;
    case IK_CONSTRAINT_HINGE:
      if (!ik_vec3_is_finite(c->axis) || !ik_real_is_finite(c->min) || !ik_real_is_finite(c->max))
        return IK_E_NOT_FINITE;
      if (ik_vec3_len2(ik_vec3_normalize(c->axis)) == 0) return IK_E_HINGE_AXIS;
      return -IK_PI <= c->min && c->min <= c->max && c->max <= IK_PI ? IK_OK : IK_E_HINGE_RANGE;
  }
  return IK_E_CONSTRAINT;
}

int ik__constraint_kinds(const ik_chain *chain) {
  int i, kinds = 0;
  if (!chain->constraints) return 0;
  for (i = 0; i + 1 < chain->count; i++) {
    if (chain->constraints[i].type == IK_CONSTRAINT_HINGE) return IK__CONSTRAINED | IK__HINGED;
    if (chain->constraints[i].type != IK_CONSTRAINT_NONE) kinds = IK__CONSTRAINED;
  }
  return kinds;
}

/* A unit bone whose component along its unit hinge axis is at most this lies in the
 * hinge's plane, to rounding. */
#define CARRY_FLAT (16 * IK_REAL_EPSILON)

/* Wraps an angle difference into (-pi, pi]. */
static ik_real wrap_angle(ik_real a) {
  while (a > IK_PI) a -= 2 * IK_PI;
  while (a <= -IK_PI) a += 2 * IK_PI;
  return a;
}

/* The hinge plane's basis: e1 is the parent direction flattened into the plane (what
 * angle 0 means), e2 = axis x e1 (positive angles). A parent along the axis has no
 * flattened direction: any perpendicular of the axis stands in for it. */
static void hinge_basis(ik_vec3 parent_dir, ik_vec3 axis_unit, ik_vec3 *e1, ik_vec3 *e2) {
  *e1 = ik__unit_across(parent_dir, axis_unit);
  *e2 = ik_vec3_cross(axis_unit, *e1);
}

static ik_real hinge_angle(ik_vec3 dir, ik_vec3 e1, ik_vec3 e2) {
  ik_real x = ik_vec3_dot(dir, e1), y = ik_vec3_dot(dir, e2);
  return (x == 0 && y == 0) ? 0 : ik_atan2(y, x);
}

/* How far outside [min, max] the angle a is, going round the shorter way. */
static ik_real range_excess(ik_real a, ik_real min, ik_real max) {
  ik_real below, above;
  if (a >= min && a <= max) return 0;
  below = ik_fabs(wrap_angle(min - a));
  above = ik_fabs(wrap_angle(a - max));
  return below < above ? below : above;
}

static inline ik_vec3 clamp_cone(ik_vec3 dir, ik_vec3 parent_dir, ik_real max_angle) {
  ik_vec3 side;
  if (ik_vec3_angle(dir, parent_dir) <= max_angle) return dir;
  /* Turn the parent direction towards dir, stopping on the cone's edge. side must be
   * unit and perpendicular to the parent for the result to be unit: a dir (nearly)
   * opposite the parent leaves only rounding across it, and then any side will do. */
  side = ik__unit_across(dir, parent_dir);
  return ik_vec3_add(ik_vec3_scale(parent_dir, ik_cos(max_angle)), ik_vec3_scale(side, ik_sin(max_angle)));
}

static inline ik_vec3 clamp_hinge(ik_vec3 dir, ik_vec3 parent_dir, ik_vec3 axis_unit, ik_real min,
                                  ik_real max) {
  ik_vec3 e1, e2;
  ik_real a;
  hinge_basis(parent_dir, axis_unit, &e1, &e2);
  a = hinge_angle(dir, e1, e2);
  if (a < min || a > max) {
    ik_real below = ik_fabs(wrap_angle(min - a)), above = ik_fabs(wrap_angle(a - max));
    a = below < above ? min : max;
  }
  return ik_vec3_add(ik_vec3_scale(e1, ik_cos(a)), ik_vec3_scale(e2, ik_sin(a)));
}

static ik_real violation(const ik_constraint *c, ik_vec3 dir, ik_vec3 parent_dir, ik_vec3 axis_unit) {
  ik_vec3 e1, e2;
  ik_real off_plane, excess;
  if (c->type == IK_CONSTRAINT_CONE) {
    ik_real over = ik_vec3_angle(dir, parent_dir) - c->angle;
    return over > 0 ? over : 0;
  }
  hinge_basis(parent_dir, axis_unit, &e1, &e2);
  off_plane = ik_fabs(IK_PI / 2 - ik_vec3_angle(dir, axis_unit));
  excess = range_excess(hinge_angle(dir, e1, e2), c->min, c->max);
  return off_plane > excess ? off_plane : excess;
}

/* The turn about the unit axis that takes the projection of the unit vector `from` on
 * the axis's plane to that of the unit vector `to`; identity when either projection is
 * (nearly) zero. Built from the angle's cosine and sine, so it stays exact through a
 * half turn, where the minimal rotation (ik_quat_from_to) must pick its axis from
 * rounding. */
static ik_quat turn_about(ik_vec3 axis_unit, ik_vec3 from, ik_vec3 to) {
  const ik_vec3 f = ik_vec3_project_on_plane(from, axis_unit);
  const ik_vec3 t = ik_vec3_project_on_plane(to, axis_unit);
  const ik_real c = ik_vec3_dot(f, t), s = ik_vec3_dot(ik_vec3_cross(f, t), axis_unit);
  const ik_real r = ik_sqrt(c * c + s * s);
  ik_real v, w;
  if (!(r > IK_REAL_EPSILON)) return ik_quat_identity();
  /* (axis sin(a/2), cos(a/2)) is along (axis s, r + c) and along (axis (r - c), s):
   * take the one whose sum does not cancel. */
  if (c >= 0) {
    v = s;
    w = r + c;
  } else {
    v = r - c;
    w = s;
  }
  return ik_quat_normalize(ik_quat_make(axis_unit.x * v, axis_unit.y * v, axis_unit.z * v, w));
}

/* The hinge axis of a bone limited by c (or NULL), carried by its parent's `frame`
 * (rest -> now), unit; zero when c is no hinge. */
static ik_vec3 carried_axis(const ik_constraint *c, ik_quat frame) {
  if (!c || c->type != IK_CONSTRAINT_HINGE) return ik_vec3_zero();
  return ik_vec3_normalize(ik_quat_rotate(frame, c->axis));
}

/* The frame (rest -> now) of bone i, from its parent's `frame`: the parent's turned on
 * by what takes the bone's rest direction, carried by the parent's frame, to its
 * current direction `dir`. A hinged bone (axis_unit not zero) turns about its axis,
 * then by the minimal rotation left (none when dir lies in the hinge plane, as the pass
 * leaves it); other bones by the minimal rotation alone. The minimal rotation is
 * ill-conditioned near a half turn: carried by it alone, a planar hinged chain whose
 * first bone folded back past a half turn had its axes tilted by rounding, and the
 * solvers took it out of its plane by up to 0.56 of its length. */
static ik_quat carry_frame(const ik_chain *chain, ik_quat frame, int i, ik_vec3 dir, ik_vec3 axis_unit) {
  const ik_vec3 rest_ws =
      ik_quat_rotate(frame, ik_vec3_sub(chain->rest_positions[i + 1], chain->rest_positions[i]));
  if (ik_vec3_len2(axis_unit) > 0) {
    const ik_vec3 rest_unit = ik_vec3_normalize(rest_ws);
    const ik_quat twist = turn_about(axis_unit, rest_unit, dir);
    frame = ik_quat_mul(twist, frame);
    /* Both in the hinge plane to rounding, as the pass leaves a bone whose rest lies in
     * it: the tilt left is rounding (and the commonest case, worth its test). */
    if (ik_fabs(ik_vec3_dot(rest_unit, axis_unit)) <= CARRY_FLAT &&
        ik_fabs(ik_vec3_dot(dir, axis_unit)) <= CARRY_FLAT)
      return ik_quat_normalize(frame);
    return ik_quat_normalize(ik_quat_mul(ik_quat_from_to(ik_quat_rotate(twist, rest_unit), dir), frame));
  }
  return ik_quat_normalize(ik_quat_mul(ik_quat_from_to(rest_ws, dir), frame));
}

/* One walk root to tip. enforce: clamp and re-place joints; otherwise only measure.
 * kinds: ik__constraint_kinds(chain). frames, when non-NULL, gets the frame of every
 * constrained bone with a parent direction, as measured (*n_frames: how many); a
 * measuring walk then measures nothing else (it returns 0). */
static ik_real walk(const ik_chain *chain, ik_vec3 fallback, int enforce, int kinds, int *worst_bone,
                    ik_constraint_frame *frames, int *n_frames) {
  ik_vec3 *p = chain->positions;
  const ik_constraint *cons = (kinds & IK__CONSTRAINED) ? chain->constraints : NULL;
  const int carry = (kinds & IK__HINGED) != 0;
  ik_quat frame = ik_quat_normalize(chain->base_rotation); /* rest -> now, of the parent */
  ik_vec3 parent_dir = ik_vec3_normalize(ik_quat_rotate(frame, chain->base_direction));
  int has_parent = ik_vec3_len2(parent_dir) > 0;
  ik_real worst = 0;
  int i;
  if (worst_bone) *worst_bone = -1;
  for (i = 0; i + 1 < chain->count; i++) {
    const ik_constraint *c = cons ? &cons[i] : NULL;
    ik_vec3 dir = ik_vec3_normalize_or(ik_vec3_sub(p[i + 1], p[i]), i == 0 ? fallback : parent_dir);
    const ik_vec3 axis_unit = carried_axis(c, frame);
    if (c && c->type != IK_CONSTRAINT_NONE && has_parent) {
      if (frames) {
        ik_constraint_frame *f = &frames[(*n_frames)++];
        f->bone = i;
        f->type = c->type;
        f->apex = p[i];
        f->direction = parent_dir;
        f->axis = axis_unit;
        f->angle = c->type == IK_CONSTRAINT_CONE ? c->angle : 0;
        f->min = c->type == IK_CONSTRAINT_HINGE ? c->min : 0;
        f->max = c->type == IK_CONSTRAINT_HINGE ? c->max : 0;
        f->length = ik_vec3_dist(p[i + 1], p[i]);
      }
      if (enforce) {
        dir = c->type == IK_CONSTRAINT_CONE ? clamp_cone(dir, parent_dir, c->angle)
                                            : clamp_hinge(dir, parent_dir, axis_unit, c->min, c->max);
      } else if (!frames) {
        ik_real v = violation(c, dir, parent_dir, axis_unit);
        if (v > worst) {
          worst = v;
          if (worst_bone) *worst_bone = i;
        }
      }
    }
    if (enforce) {
      p[i + 1] = ik_vec3_madd(p[i], dir, chain->lengths[i]);
      /* Go on from the bone as placed, as a measuring walk over the result reads it: an
       * unhinged bone's frame is carried by a from-to rotation, which is ill-conditioned
       * near a half turn, and there the rounding between the clamped direction and the
       * placed bone turned the carried hinge axis by a visible angle (0.1 rad, found by
       * fuzz_core), leaving the pose outside its own limits as the next walk measures
       * them. */
      dir = ik_vec3_normalize_or(ik_vec3_sub(p[i + 1], p[i]), dir);
    }
    if (carry) frame = carry_frame(chain, frame, i, dir, axis_unit);
    parent_dir = dir;
    has_parent = 1;
  }
  return worst;
}

void ik__constrained_pass(const ik_chain *chain, ik_vec3 fallback, int kinds) {
  walk(chain, fallback, 1, kinds, NULL, NULL, NULL);
}

int ik__hinge_bulge(const ik_chain *chain, int bone, ik_vec3 line_dir, ik_vec3 *bulge_dir) {
  const ik_vec3 *p = chain->positions;
  const ik_constraint *c;
  ik_quat frame;
  ik_vec3 dir = line_dir, bulge;
  ik_real middle;
  int i;
  if (!chain->constraints || bone < 1 || bone + 1 >= chain->count) return 0;
  c = &chain->constraints[bone];
  if (c->type != IK_CONSTRAINT_HINGE) return 0;
  /* The axis as the constraint pass will carry it over this pose. */
  frame = ik_quat_normalize(chain->base_rotation);
  for (i = 0; i < bone; i++) {
    dir = ik_vec3_normalize_or(ik_vec3_sub(p[i + 1], p[i]), dir);
    frame = carry_frame(chain, frame, i, dir, carried_axis(&chain->constraints[i], frame));
  }
  /* Bulging towards b turns the bone after the joint about b x line: the bulge is
   * line x axis, or its opposite, whichever gives the middle of the range's sign. */
  bulge = ik_vec3_cross(line_dir, carried_axis(c, frame));
  if (!(ik_vec3_len2(bulge) > 64 * IK_REAL_EPSILON)) return 0; /* axis along the line: no plane */
  bulge = ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_normalize(bulge), line_dir));
  middle = (c->min + c->max) / 2;
  if (middle < 0 || (middle == 0 && ik_vec3_dot(bulge, *bulge_dir) < 0)) bulge = ik_vec3_neg(bulge);
  *bulge_dir = bulge;
  return 1;
}

int ik__hinge_face(const ik_chain *chain, ik_vec3 target) {
  ik_vec3 *p = chain->positions;
  const ik_vec3 root_ws = p[0], reach = ik_vec3_sub(target, root_ws);
  const ik_vec3 line_dir = ik_vec3_normalize(reach);
  const ik_vec3 tip_rel = ik_vec3_sub(p[chain->count - 1], root_ws);
  ik_quat q;
  int i;
  if (!chain->constraints || chain->count < 3 || ik_vec3_len2(line_dir) == 0) return 0;
  /* Bone 0 must be free to turn: a limit of its own would take the turn back. */
  if (chain->constraints[0].type != IK_CONSTRAINT_NONE && ik_vec3_len2(chain->base_direction) > 0) return 0;
  for (i = 1; i + 1 < chain->count; i++) {
    const ik_vec3 off = ik_vec3_project_on_plane(ik_vec3_sub(p[i], root_ws), line_dir);
    ik_vec3 bulge = off;
    if (!ik__hinge_bulge(chain, i, line_dir, &bulge)) continue;
    if (ik_vec3_dot(off, bulge) >= 0 || ik_vec3_len2(tip_rel) == 0) return 0;
    break;
  }
  if (i + 1 >= chain->count) return 0;
  /* Turned as one body, every bend is kept (the hinge's among them) and the tip points
   * at the target: the bend's bulge then lies on the side the hinge bends to. */
  q = ik_quat_from_to(tip_rel, reach);
  for (i = 1; i < chain->count; i++)
    p[i] = ik_vec3_add(root_ws, ik_quat_rotate(q, ik_vec3_sub(p[i], root_ws)));
  return 1;
}

ik_real ik_chain_constraint_violation(const ik_chain *chain, int *worst_bone) {
  int kinds;
  if (worst_bone) *worst_bone = -1;
  if (!chain || !chain->positions || chain->count < 2 || !chain->constraints) return 0;
  kinds = ik__constraint_kinds(chain);
  /* Hinge axes are given in the rest pose: without one there is nothing to measure. */
  if ((kinds & IK__HINGED) && !chain->rest_positions) return 0;
  return walk(chain, ik_vec3_make(0, 1, 0), 0, kinds, worst_bone, NULL, NULL);
}

int ik_chain_constraint_frames(const ik_chain *chain, ik_constraint_frame *out) {
  int kinds;
  if (!chain || !out || !chain->positions || chain->count < 2 || !chain->constraints) return 0;
  kinds = ik__constraint_kinds(chain);
  if ((kinds & IK__HINGED) && !chain->rest_positions) return 0;
  return ik__bone_frames(chain, ik_vec3_make(0, 1, 0), kinds, out);
}

int ik__bone_frames(const ik_chain *chain, ik_vec3 fallback, int kinds, ik_constraint_frame *out) {
  int n = 0;
  walk(chain, fallback, 0, kinds, NULL, out, &n);
  return n;
}

ik_quat ik__limit_turn(const ik_constraint_frame *f, ik_vec3 dir, ik_quat q) {
  const ik_vec3 turned = ik_quat_rotate(q, dir);
  if (f->type == IK_CONSTRAINT_CONE) {
    const ik_vec3 clamped = clamp_cone(turned, f->direction, f->angle);
    /* clamp_cone gives its input back, bit for bit, when it is inside the cone. */
    if (clamped.x == turned.x && clamped.y == turned.y && clamped.z == turned.z) return q;
    return ik_quat_normalize(ik_quat_mul(ik_quat_from_to(turned, clamped), q));
  }
  return turn_about(f->axis, dir, clamp_hinge(turned, f->direction, f->axis, f->min, f->max));
}
