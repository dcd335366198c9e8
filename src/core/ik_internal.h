/*
 * ik_internal.h: pieces the solver files share. Not installed, not API.
 */
#ifndef IK_INTERNAL_H
#define IK_INTERNAL_H

#include "ik_chain.h"

/* Fills err (when non-NULL) and returns status: validate functions end with this. */
ik_status ik__fail(ik_error *err, ik_status status, const char *field, int index);

/* IK_E_NOT_FINITE for NaN/Inf, IK_E_RANGE beyond IK_REAL_MAX_COORD, else IK_OK; fills
 * err on failure. Every validate checks its inputs through these. */
ik_status ik__check_real(ik_real r, ik_error *err, const char *field, int index);
ik_status ik__check_vec3(ik_vec3 v, ik_error *err, const char *field, int index);

/* Validation shared by the iterative jobs: the chain, the target, the tolerance and the
 * iteration cap. */
ik_status ik__validate_solve(const ik_chain *chain, ik_vec3 target, ik_real tolerance,
                             int max_iterations, ik_error *err);

/* Measures chain->lengths from the positions when chain->derive_lengths is set. Call
 * once at the start of run(), after validation. */
void ik__prepare_lengths(const ik_chain *chain);

/* Sum of chain->lengths. */
ik_real ik__total_length(const ik_chain *chain);

/* Whether the chain has any constraint at all (constraints != NULL and one not NONE). */
int ik__has_constraints(const ik_chain *chain);

/* The root-to-tip pass every solver ends a sweep with: each joint i + 1 re-placed at
 * lengths[i] from joint i along the bone's current direction, clamped by the chain's
 * constraints (hinge axes carried from the rest pose). Root stays. `fallback` is the
 * direction used for bone 0 when it has none (coincident joints). */
void ik__constrained_pass(const ik_chain *chain, ik_vec3 fallback);

/* The target is at or beyond full reach: lay the chain straight towards it (then the
 * constraint pass, when there are constraints). */
void ik__lay_straight(const ik_chain *chain, ik_vec3 target);

/* Pole pass (ik_pole.h) on raw positions; returns how many joints turned. */
int ik__apply_pole(ik_vec3 *positions, int count, ik_vec3 pole, ik_real weight);

/* Applies chain->pole when has_pole and, with constraints, re-runs the constraint pass
 * so the pole can never leave one broken. */
void ik__finish_with_pole(const ik_chain *chain, ik_vec3 fallback);

/* A chain whose joints all lie on the line from the root to the target (a straight
 * chain aimed at a target inside its reach, coincident joints) gives FABRIK, CCD and DLS
 * no direction to bend in: they would stay on the line forever. When that is the case,
 * bend the inner joints off the line in an arc, towards the pole when there is one,
 * else the perpendicular nearest +Y, and return 1. Call after the reach and
 * "already there" checks, with ik__root_fallback's direction and the total length.
 * Lengths are restored by the solver's next pass. */
int ik__break_collinear(const ik_chain *chain, ik_vec3 target, ik_vec3 root_dir, ik_real total_len);

/* Shared by the rotation-based solvers (ik_turn.c). */

/* Turns bones first .. count - 2 by q about joint `first`, which stays; each joint is
 * re-placed at its bone length (a bone with no direction takes its parent's). */
void ik__turn_subchain(ik_vec3 *p, const ik_real *lengths, int count, int first, ik_quat q,
                       ik_vec3 parent_dir);
/* Unit normal of the plane holding the target and every joint (to rounding), or zero
 * when they lie on one line or span space. Turning about it keeps a planar chain planar
 * exactly, where the minimal rotation's own axis would drift by rounding. */
ik_vec3 ik__plane_normal(const ik_vec3 *p, int count, ik_vec3 target, ik_real total_len);
/* Shortest distance from the root the tip can reach: the longest bone folded back over
 * all the others (negative when the chain can fold onto its root). */
ik_real ik__fold_reach(const ik_chain *chain, ik_real total_len);
/* Bends a chain stalled on the line to its target at its middle joint; `stalls`
 * alternates between two perpendicular bend planes, so one hinge cannot keep it stuck. */
void ik__unstall(const ik_chain *chain, ik_vec3 root_dir, int stalls);

/* Fills the result from the tip's final position. */
void ik__set_result(ik_result *result, const ik_chain *chain, ik_vec3 target, ik_real tolerance,
                    int iterations);

/* A direction for bone 0 when the chain has none of its own: towards the target, else
 * the base direction, else +Y. */
ik_vec3 ik__root_fallback(const ik_chain *chain, ik_vec3 target);

#endif /* IK_INTERNAL_H */
