/*
 * ik_pole.h: bend a solved chain towards a pole target.
 *
 * Each inner joint i may turn about the axis through its neighbours i - 1 and i + 1
 * without changing either bone's length or moving any other joint. The pole pass turns
 * it, root to tip, towards the pole's projection on the plane normal to that axis, by
 * `weight` of the angle. Skipped where there is nothing to turn: a straight chain (the
 * joint is on the axis), neighbours that coincide, or a pole on the axis.
 */
#ifndef IK_POLE_H
#define IK_POLE_H

#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ik_pole_job {
  ik_vec3 *positions; /* in/out, `count` joints, root first */
  int count;          /* >= 2 (a 2-joint chain has no inner joint: nothing to do) */
  ik_vec3 pole;       /* in the chain's space */
  ik_real weight;     /* [0, 1], default 1 */
  int turned;         /* output: inner joints that were turned */
} ik_pole_job;

void ik_pole_job_init(ik_pole_job *job, ik_vec3 *positions, int count, ik_vec3 pole);
ik_status ik_pole_validate(const ik_pole_job *job, ik_error *err);
ik_status ik_pole_run(ik_pole_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_POLE_H */
