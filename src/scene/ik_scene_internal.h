/*
 * ik_scene_internal.h: pieces the scene files share. Not installed, not API.
 */
#ifndef IK_SCENE_INTERNAL_H
#define IK_SCENE_INTERNAL_H

#include "ik_foot.h"

/* A closed flag an owner keeps; NULL: never closed. */
static inline int ik__is_closed(const int *flag) { return flag && *flag; }

/* ik_foot_update for inputs ik_foot_validate has passed (a batch checks each foot
 * before its threads update it): what is left to fail is a custom ground's query. */
ik_status ik__foot_update_valid(const ik_foot_params *params, ik_foot_state *state, const ik_ground *ground,
                                ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt,
                                ik_foot_result *out);

/* n feet sharing params, ground and dt, each updated as ik__foot_update_valid updates it
 * (bit for bit, state and result): what is the same for every foot (up, the spring's
 * coefficients, the turn's weight) is worked out once. states[i], animated_positions[i],
 * animated_rotations[i] give out[i] and status[i]; every foot's inputs already checked
 * (ik__foot_check_inputs, with params and ground checked once). */
void ik__foot_update_many(const ik_foot_params *params, const ik_ground *ground, ik_real dt, int n,
                          ik_foot_state *const *states, const ik_vec3 *animated_positions,
                          const ik_quat *animated_rotations, ik_foot_result *out, ik_status *status);

/* ik_foot_validate's status for one foot, for params ik_foot_params_validate has passed
 * and a non-NULL ground (a crowd or batch checks those once per set of feet). */
ik_status ik__foot_check_inputs(const ik_foot_params *params, const ik_foot_state *state,
                                ik_vec3 animated_position, ik_quat animated_rotation, ik_real dt);

/* ik_ground_raycast for inputs ik_ground_raycast_validate has passed, with the direction
 * already as that call normalizes it (bit for bit its answer). A ray straight along y on
 * a heightfield goes to its one cell without the walk. */
ik_status ik__ground_raycast_unit(const ik_ground *g, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_distance,
                                  ik_ray_hit *hit);

#endif /* IK_SCENE_INTERNAL_H */
