/*
 * ik_pole.h: bend a solved chain towards a pole target.
 *
 * Each inner joint i may turn, with the joints after it but the tip, about the line from
 * joint i - 1 to the tip without changing any bone's length or moving the joints before
 * it. The pole pass turns each, root to tip, towards the pole's side of the root-to-tip
 * line, by `weight` of the angle: at full weight the chain ends in the plane of root, tip
 * and pole, every inner joint on the pole's side wherever its turn can take it there.
 * Skipped where there is nothing to turn: a straight chain (the joint is on the axis), a
 * joint before it on the tip, or a pole on the root-to-tip line. (The solvers' pole on a
 * constrained chain of up to 64 joints takes the largest part of its weight whose turns
 * break no limit: a pole is a preference, a limit is not.)
 */
#ifndef IK_POLE_H
#define IK_POLE_H

#include "ik_api.h"
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

IK_API void ik_pole_job_init(ik_pole_job *job, ik_vec3 *positions, int count, ik_vec3 pole);
IK_API ik_status ik_pole_validate(const ik_pole_job *job, ik_error *err);
IK_API ik_status ik_pole_run(ik_pole_job *job);

#ifdef __cplusplus
}
#endif

#endif /* IK_POLE_H */
