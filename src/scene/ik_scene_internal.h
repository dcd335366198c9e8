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

#endif /* IK_SCENE_INTERNAL_H */
