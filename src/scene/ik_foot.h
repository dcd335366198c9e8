/*
 * ik_foot.h: foot placement on uneven ground, and the pelvis drop that goes with it.
 *
 * Each frame, after animation and before the leg solvers, for each foot:
 *   1. a ray from ray_height above the animated foot straight down (along -up), reaching
 *      ray_length below it, finds the ground;
 *   2. a foot at or below the ground (its ankle closer than foot_offset to the surface,
 *      measured along the surface normal) is raised along up until it is exactly
 *      foot_offset from the surface, and turned by the minimal rotation from up to the
 *      ground normal; a foot above that (swinging) is left where the animation has it;
 *   3. the correction (offset and rotation) is smoothed over time, so stepping off a
 *      stair edge does not snap the leg; the result is the leg IK's target. Smoothing
 *      may slow a foot coming down, never leave its sole under the ground: a foot the
 *      spring would leave below it is put on it (and stops coming down; it is not
 *      given the ground's rise as a speed, which a riser would make rise / dt).
 * The smoothing acts on the correction, not on the foot: a foot the animation moves is
 * followed without lag, and only the ground's effect on it eases in and out.
 *
 * Position smoothing is a critically damped spring (angular frequency
 * omega = 2 / smooth_time) integrated exactly, in closed form, for a goal that moves
 * linearly from the previous update's goal to this one's over the step (a goal held
 * constant over the step is the special case of no change). The foot is taken to move
 * in a straight line from the previous update's animated position to this one's; when
 * the goal halfway along does not lie between its ends' (an edge was crossed: a riser, a
 * kerb), up to 8 more rays halve the frame to find when, and the spring runs up to the
 * edge and on from it, so the goal's step falls at the same moment at every frame rate.
 * So an update casts 1 ray, 2 when the goal moved, 9 when it stepped. Being exact, it gives the
 * same path at any frame rate for a goal that moves steadily, and stays stable for a
 * step of any length (a long one lands on the goal). Rotation smoothing is a slerp towards the goal by
 * 1 - exp(-dt * omega) per step, exact at any frame rate for a goal that holds still.
 *
 * Pelvis: a foot on a lower step cannot reach down when the pelvis stays at the
 * animated height, so the pelvis is lowered by the lowest foot's "deficit" (the most
 * negative among the feet: how far below the animated foot its ground is), with its
 * own spring. The frame order
 * that keeps this free of feedback:
 *   1. animation writes the pose (pelvis and feet at their animated places);
 *   2. ik_foot_deficit() for each planted foot (skip swinging ones if the animation
 *      says which they are), then ik_pelvis_update() gives the pelvis offset;
 *   3. move the pelvis, and each animated foot with it, by up * offset;
 *   4. ik_foot_update() for each foot from its lowered animated position; solve the legs.
 *
 * Spaces: every position, direction and rotation is in one space (usually world space,
 * "_ws"), the ground's. Distances in its unit, times in seconds.
 * Nothing here allocates or keeps global state; a call changes only the state passed
 * to it, and a refused call (any status but IK_OK) changes nothing at all.
 */
#ifndef IK_FOOT_H
#define IK_FOOT_H

#include "ik_api.h"
#include "ik_chain.h"
#include "ik_ground.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ground steeper than acos(IK_FOOT_MIN_COS) (about 75.5 degrees) is treated as that
 * steep when keeping foot_offset along its normal, so the raise stays below
 * 4 * foot_offset above the surface. */
#define IK_FOOT_MIN_COS ((ik_real)0.25)

/* Smooth times below this (seconds) count as 0: no smoothing. */
#define IK_FOOT_MIN_SMOOTH_TIME ((ik_real)1e-6)

typedef struct ik_foot_params {
  /* >= 0, default 0.5: the ray starts this far above the animated foot (along up), so
   * it finds ground the animated foot has sunk into by up to this much. */
  ik_real ray_height;
  /* >= 0, default 1.0: and ends this far below the animated foot. */
  ik_real ray_length;
  /* >= 0, default 0.08: from the foot's position (the ankle) to the sole. A planted
   * foot's position is this far from the ground surface along its normal. */
  ik_real foot_offset;
  /* Seconds, >= 0, default 0.05: time scale of the smoothing (omega = 2 / smooth_time;
   * a step change is 90% done after about 2 * smooth_time). 0 (or anything below
   * IK_FOOT_MIN_SMOOTH_TIME): no smoothing. */
  ik_real smooth_time;
  /* Any length but zero (normalised inside), default (0, 1, 0): the world's up. */
  ik_vec3 up;
} ik_foot_params;

/* One foot's memory between frames. ik_foot_state_init() clears it; the first update
 * after that snaps to its goal instead of springing from nothing. */
typedef struct ik_foot_state {
  ik_vec3 offset;   /* smoothed correction added to the animated position */
  ik_vec3 velocity; /* of offset, per second */
  ik_vec3 goal;     /* the correction the last update aimed for */
  ik_quat rotation; /* smoothed correction rotation, applied after the animated one */
  ik_vec3 animated; /* the animated position the last update was given */
  int initialised;
} ik_foot_state;

typedef struct ik_foot_result {
  ik_vec3 position; /* target for the leg IK: animated position + smoothed offset */
  ik_quat rotation; /* target rotation: smoothed correction * animated rotation */
  /* This update's goal plants the foot: ground was hit and the animated foot is at or
   * below foot_offset from it (deficit >= 0, give or take rounding). */
  int grounded;
  int ground_hit;        /* the ray found ground */
  ik_vec3 ground_point;  /* where (zero when ground_hit is 0) */
  ik_vec3 ground_normal; /* unit, facing up (zero when ground_hit is 0) */
  /* Signed distance along up from the animated foot to where it would stand on the
   * ground: > 0 it is sunk in by that much (and is raised), < 0 the ground is that far
   * below it. 0 when no ground was hit. */
  ik_real deficit;
} ik_foot_result;

IK_API void ik_foot_params_init(ik_foot_params *params);
IK_API ik_status ik_foot_params_validate(const ik_foot_params *params, ik_error *err);

IK_API void ik_foot_state_init(ik_foot_state *state);

/* Checks an update: params valid, state, ground and out non-NULL (out is not read),
 * state finite, animated position and rotation finite (the rotation need not be unit:
 * it is normalised, a zero quaternion counting as identity), dt finite and >= 0. */
IK_API ik_status ik_foot_validate(const ik_foot_params *params, const ik_foot_state *state,
                                  const ik_ground *ground, ik_vec3 animated_position,
                                  ik_quat animated_rotation, ik_real dt, const ik_foot_result *out,
                                  ik_error *err);

/* One frame for one foot, dt seconds after the previous one. The first update after
 * ik_foot_state_init snaps the state to its goal whatever dt is; after that, dt = 0
 * gives the current smoothed correction on the new animated pose and changes nothing.
 * Any status but IK_OK (refused input, or a custom ground's callback failing) leaves
 * state and *out untouched. */
IK_API ik_status ik_foot_update(const ik_foot_params *params, ik_foot_state *state, const ik_ground *ground,
                                ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                                ik_foot_result *out);

/* The deficit ik_foot_update would report for this animated position (see
 * ik_foot_result), with no state: for the pelvis, measured before the pelvis moves.
 * *deficit is untouched unless IK_OK is returned. */
IK_API ik_status ik_foot_deficit(const ik_foot_params *params, const ik_ground *ground,
                                 ik_vec3 animated_position, ik_real *deficit);

/* ---- pelvis ---- */

/* How far to move the pelvis along up, <= 0: the most negative of the feet's deficits,
 * 0 when none is negative (or count <= 0, or foot_deficits is NULL). */
IK_API ik_real ik_pelvis_offset(const ik_real *foot_deficits, int count);

typedef struct ik_pelvis {
  /* Parameter. Seconds, >= 0, default 0.05: the spring's time scale, as for feet (0,
   * or below IK_FOOT_MIN_SMOOTH_TIME: no smoothing). */
  ik_real smooth_time;
  /* State (ik_pelvis_init clears it; the first update snaps). */
  ik_real offset, velocity, goal;
  int initialised;
} ik_pelvis;

IK_API void ik_pelvis_init(ik_pelvis *pelvis);

/* Checks an update: pelvis non-NULL and finite, smooth_time >= 0, count >= 0, the count
 * deficits (foot_deficits may be NULL when count is 0) finite, dt finite and >= 0. */
IK_API ik_status ik_pelvis_validate(const ik_pelvis *pelvis, const ik_real *foot_deficits, int count,
                                    ik_real dt, ik_error *err);

/* Springs the pelvis offset towards ik_pelvis_offset(foot_deficits, count) over dt and
 * writes it to *offset_out (when non-NULL). Refused input changes nothing. */
IK_API ik_status ik_pelvis_update(ik_pelvis *pelvis, const ik_real *foot_deficits, int count, ik_real dt,
                                  ik_real *offset_out);

#ifdef __cplusplus
}
#endif

#endif /* IK_FOOT_H */
