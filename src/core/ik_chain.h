/*
 * ik_chain.h: what every ikrig solver job shares: status codes, joint constraints,
 * the chain description and the solve result.
 *
 * A chain is joints root first, in one coordinate space of the caller's choosing
 * (usually world space, "_ws"). The solvers move joint positions only and keep every
 * bone length; turning positions into bone rotations is ik_rotations.h's job.
 *
 * Every job follows one protocol: fill the struct (the *_init function sets the
 * defaults), call *_validate, then *_run. run() validates again and changes nothing
 * when the job is refused, so a bad job can never corrupt the caller's data.
 * No job allocates, logs or touches global state: jobs on separate data may run on
 * separate threads.
 */
#ifndef IK_CHAIN_H
#define IK_CHAIN_H

#include "ik_api.h"
#include "ik_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ik_status {
  IK_OK = 0,
  IK_E_NULL,        /* a required array is NULL */
  IK_E_COUNT,       /* wrong joint count (n < 2; two-bone needs exactly 3) */
  IK_E_NOT_FINITE,  /* NaN or infinity in an input */
  IK_E_BONE_LENGTH, /* a bone length is zero, negative or not finite */
  IK_E_TOLERANCE,   /* tolerance negative */
  IK_E_ITERATIONS,  /* iteration cap below 1 */
  IK_E_WEIGHT,      /* a weight outside [0, 1] */
  IK_E_CONSTRAINT,  /* unknown constraint type */
  IK_E_CONE_ANGLE,  /* cone angle outside [0, pi] */
  IK_E_HINGE_AXIS,  /* hinge axis is the zero vector */
  IK_E_HINGE_RANGE, /* hinge min > max, or outside [-pi, pi] */
  IK_E_TWIST_LIMIT, /* twist limit negative */
  IK_E_PARAMETER,   /* a solver parameter out of range (softness, damping, ...) */
  IK_E_RANGE,       /* a coordinate or length too large to square (|x| > IK_REAL_MAX_COORD),
                       or a chain reaching too far (beyond IK_REAL_MAX_REACH) */
  IK_STATUS_COUNT
} ik_status;

/* Largest coordinate or bone length a job takes: its square, and sums of a few
 * squares, must stay finite. */
#ifdef IK_REAL_FLOAT
#define IK_REAL_MAX_COORD ((ik_real)1e15)
#else
#define IK_REAL_MAX_COORD ((ik_real)1e140)
#endif

/* Largest reach of a chain or limb: its root's largest coordinate (in magnitude) plus
 * its total bone length, whether the lengths are given or measured from the positions.
 * Every joint a solver places lies within the total length of the root, so a solved
 * pose stays within IK_REAL_MAX_REACH, half of IK_REAL_MAX_COORD, and the other half is
 * room for rounding: a pose a job produced is always one the next job accepts. */
#define IK_REAL_MAX_REACH (IK_REAL_MAX_COORD / 2)

/* Why validate() refused a job: the code, the job field at fault and the joint, bone
 * or constraint index (-1 when the field is not an array). */
typedef struct ik_error {
  ik_status status;
  const char *field;
  int index;
} ik_error;

/* A short English sentence for a status ("bone length must be positive"). */
IK_API const char *ik_status_message(ik_status status);

typedef enum ik_constraint_type {
  IK_CONSTRAINT_NONE = 0,
  IK_CONSTRAINT_CONE, /* the bone stays within `angle` of its parent bone */
  IK_CONSTRAINT_HINGE /* the bone turns only about `axis`, between `min` and `max` */
} ik_constraint_type;

/* Limits bone i (joint i to i + 1) relative to bone i - 1, or for bone 0 relative to
 * the chain's base direction. Applied in the root-to-tip pass of every solver. */
typedef struct ik_constraint {
  ik_constraint_type type;
  /* cone: largest angle between the bone and its parent, radians, in [0, pi]. */
  ik_real angle;
  /* hinge: axis in the rest pose (any length but zero). It is carried along as the
   * parent bone turns, so a knee's axis follows the thigh: by the parent's minimal
   * rotation from its rest direction, or, for a hinged parent, by its turn about its
   * own axis and then the minimal rotation left. */
  ik_vec3 axis;
  /* hinge: signed angle range from the parent direction, about `axis` (right-hand
   * rule), radians; -pi <= min <= max <= pi. 0 is straight on from the parent. */
  ik_real min, max;
} ik_constraint;

/* A chain, as every iterative job reads it. */
typedef struct ik_chain {
  /* In/out. `count` joint positions, root first; the solvers start from them (warm
   * start) and write the solution back. Root stays where it is. */
  ik_vec3 *positions;
  int count; /* >= 2 */
  /* count - 1 bone lengths (bone i joins joint i and i + 1), each > 0. When
   * derive_lengths is non-zero, run() first measures them from `positions` (the
   * per-frame re-measure that keeps IK right when animation scales bones). */
  ik_real *lengths;
  int derive_lengths;
  /* NULL, or count - 1 constraints: entry i limits bone i. */
  const ik_constraint *constraints;
  /* The `count` positions of the rest pose that hinge axes are expressed in. Needed
   * (validate refuses NULL) when any constraint is a hinge; unused otherwise. */
  const ik_vec3 *rest_positions;
  /* Direction bone 0 is measured against by constraints[0], in the rest pose; the zero
   * vector (default) leaves bone 0 free. */
  ik_vec3 base_direction;
  /* Rotation of whatever the root hangs from, since the rest pose: it turns
   * base_direction and bone 0's hinge axis. Default identity (a zero quaternion also
   * counts as identity). */
  ik_quat base_rotation;
  /* Optional pole: inner joints bend towards it (ik_pole.h). pole_weight in [0, 1]. */
  int has_pole;
  ik_vec3 pole;
  ik_real pole_weight;
} ik_chain;

/* What a solve tells the caller. */
typedef struct ik_result {
  /* Exactly "distance <= tolerance": a target at full reach counts as reached. */
  int reached;
  /* Full sweeps done by an iterative solver: 0 when the tip was already there or the
   * target out of reach. Two-bone, solved in one step, says 1 whenever it ran. */
  int iterations;
  /* Final distance from the tip to the target. A constrained solve, and any DLS solve,
   * of up to 64 joints ends its iterations on the nearest pose they passed through (the
   * pole, when there is one, is applied after: on a constrained chain, within its limits,
   * so that it never takes the tip off). */
  ik_real distance;
} ik_result;

/* A chain with no constraints, no pole and identity base rotation. */
IK_API void ik_chain_init(ik_chain *chain, ik_vec3 *positions, int count, ik_real *lengths);

/* Checks every field of the chain; fills err when non-NULL. Besides each value on its
 * own, the chain's reach (IK_REAL_MAX_REACH: the root plus the total length, given or
 * measured) must be within range: IK_E_RANGE for "lengths" ("positions" when the lengths
 * are derived), index -1. */
IK_API ik_status ik_chain_validate(const ik_chain *chain, ik_error *err);

/* Sum of the bone lengths between consecutive positions, written to lengths_out
 * (count - 1 entries) when it is non-NULL. */
IK_API ik_real ik_measure_lengths(const ik_vec3 *positions, int count, ik_real *lengths_out);

/* Checks one constraint (used by the chain's validate and by bindings that build
 * constraints before they have a chain). */
IK_API ik_status ik_constraint_validate(const ik_constraint *c);

/* The largest amount, in radians, by which the chain's current positions break its
 * constraints (hinge axes carried from the rest pose exactly as the solvers carry
 * them); 0 when every constraint holds. *worst_bone, when non-NULL, gets that bone
 * (-1 when none is broken). Not validated: a chain with nothing to measure (NULL
 * positions or constraints, count < 2, or a hinge but NULL rest_positions) gives 0. */
IK_API ik_real ik_chain_constraint_violation(const ik_chain *chain, int *worst_bone);

/* One constrained bone's limit in the chain's current pose, for drawing or checking:
 * the geometry the constraint pass measures that bone against. */
typedef struct ik_constraint_frame {
  int bone;                /* the bone it limits (0-based: joint bone to bone + 1) */
  ik_constraint_type type; /* IK_CONSTRAINT_CONE or IK_CONSTRAINT_HINGE */
  ik_vec3 apex;            /* the bone's first joint, positions[bone] */
  ik_vec3 direction;       /* the parent bone's direction (bone 0: the base direction,
                              turned by base_rotation), unit */
  ik_vec3 axis;            /* hinge: the axis carried from the rest pose, unit; cone: zero */
  ik_real angle;           /* cone: the largest angle from direction; hinge: 0 */
  ik_real min, max;        /* hinge: the range about axis from direction; cone: 0 */
  ik_real length;          /* the bone's current length, |positions[bone + 1] - apex| */
} ik_constraint_frame;

/* Writes the frame of every bone whose constraint applies (type not NONE, and a parent
 * direction: bone 0 needs a non-zero base_direction) to out, root to tip, and returns
 * how many. out holds count - 1 entries. The frames come from the constraint pass's own
 * walk over the current positions (hinge axes carried exactly as the solvers carry
 * them), so a pose the pass produced has every bone inside its frame. Not validated: a
 * chain with nothing to describe (NULL positions, constraints or out, count < 2, or a
 * hinge but NULL rest_positions) gives 0. */
IK_API int ik_chain_constraint_frames(const ik_chain *chain, ik_constraint_frame *out);

/* Turns the solved positions `to` (count joints) part of the way back towards the
 * pose `from`: each bone's direction is rotated from its old direction by `weight`
 * of the angle, root to tip. The root, to[0], is kept as it is (solvers never move it,
 * so it is from[0] too), and so are the bone lengths of `to`. weight 1 leaves `to` as
 * is; weight 0 (or less) copies `from`. */
IK_API void ik_blend_chain(const ik_vec3 *from, ik_vec3 *to, int count, ik_real weight);

#ifdef __cplusplus
}
#endif

#endif /* IK_CHAIN_H */
