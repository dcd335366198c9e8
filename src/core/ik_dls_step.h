/*
 * ik_dls_step.h: one damped-least-squares iteration (ik_dls.c), shared by ik_dls_run and
 * FABRIK's refined finish (ik_fabrik.c), which polishes the sweeps' pose with a few of
 * them. Not installed, not API.
 */
#ifndef IK_DLS_STEP_H
#define IK_DLS_STEP_H

#include "ik_chain.h"

/* The chain is stuck when both hold: e^T J J^T e is below this fraction of
 * |e|^2 trace(J J^T) (the error nearly in J's null space: every bone within about
 * 0.01 rad of the error's line) ... */
#define IK__DLS_NULL_SPACE_RATIO ((ik_real)1e-4)
/* ... and the planned step would move the tip by less than this fraction of the asked
 * move. Either alone misfires: heavy damping makes every step short, and a chain
 * stretched towards a far target is nearly straight yet still progressing. (Here, for the
 * batch's lane steps, which must plan exactly as ik_dls.c does.) */
#define IK__DLS_STALL_FRACTION ((ik_real)1e-3)

/* A joint's turn in a step, about dtheta by |dtheta|, as a quaternion: when
 * h = dtheta / 2 has |h|^2 <= IK__DLS_SERIES_MAX_H2 (turns up to 1 rad), from the
 * series (h (1 - |h|^2 / 6), 1 - |h|^2 / 2) (sine's and cosine's to the third order),
 * normalised with the product it joins: no sine or cosine, and a turn at most 0.21% too
 * large (at 1 rad; the excess shrinks as the angle's fourth power); larger turns from
 * sin and cos. Here for the batch's lane steps, which must turn as ik_dls.c does. */
#define IK__DLS_SERIES_MAX_H2 ((ik_real)0.25)

/* What the iterations of one solve share; ik__dls_begin fills it. */
typedef struct ik__dls_state {
  ik_vec3 root_dir; /* ik__root_fallback's direction */
  ik_vec3 plane_n;  /* the plane the steps stay in, or zero (ik__plane_normal) */
  ik_real total_len;
  ik_real lambda2;      /* the damping term, squared; a caller may change it between steps */
  ik_real max_step_len; /* longest move a step asks of the tip */
  ik_real stuck_floor_len;
  int kinds;       /* ik__constraint_kinds */
  int may_unstall; /* whether bending a stuck chain can help */
  int stalls;      /* bends done so far */
} ik__dls_state;

/* Sets s up for a chain whose bones have their lengths and directions (the first step
 * reads them): `damping` is lambda as a fraction of total_len. */
void ik__dls_begin(ik__dls_state *s, const ik_chain *chain, ik_vec3 target, ik_real damping, ik_vec3 root_dir,
                   ik_real total_len, int kinds);
/* The same, for a caller that knows whether bending a stuck chain can help (its target
 * beyond ik__fold_reach and 3 joints or more). */
void ik__dls_begin_known(ik__dls_state *s, const ik_chain *chain, ik_vec3 target, ik_real damping,
                         ik_vec3 root_dir, ik_real total_len, int kinds, int may_unstall);
/* All of it but the plane (left zero): for a caller that finds ik__plane_normal's itself
 * before the first step (the batch, for many chains at once). */
void ik__dls_begin_planeless(ik__dls_state *s, ik_real damping, ik_vec3 root_dir, ik_real total_len,
                             int kinds, int may_unstall);

/* One iteration, O(n): plans a step towards the target (bending a stuck chain first),
 * applies it root to tip, then the constraint pass when there are constraints. */
void ik__dls_step(ik__dls_state *s, const ik_chain *chain, ik_vec3 target);

/* The second half of a step alone: turns the chain by the planned y (joint i about
 * (tip - joint i) x y, onto plane_n when it is not zero), root to tip, bones keeping
 * their lengths; root_dir stands in for a bone with no direction. (For the tests, which
 * hold the batch's lane steps to it.) */
void ik__dls_apply_step(const ik_chain *chain, ik_vec3 y, ik_vec3 root_dir, ik_vec3 plane_n);

#endif /* IK_DLS_STEP_H */
