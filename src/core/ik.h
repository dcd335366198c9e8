/*
 * ik.h: the ikrig C core, all of it. Include this, link the `ik` library.
 *
 *   ik_math.h       vec3 and quaternion value types (conventions block at its top)
 *   ik_chain.h      status codes, constraints, the chain description, results
 *   ik_fabrik.h     FABRIK                 ik_ccd.h     cyclic coordinate descent
 *   ik_dls.h        damped least squares   ik_two_bone.h  analytic two-bone
 *   ik_pole.h       pole targets           ik_rotations.h solved points to rotations
 *   ik_tree.h       FABRIK on a tree of chains, several end effectors
 *   ik_batch.h      many jobs at once, over SIMD lanes (over threads: the scene's ik_pool.h)
 */
#ifndef IK_H
#define IK_H

#include "ik_batch.h"
#include "ik_ccd.h"
#include "ik_chain.h"
#include "ik_dls.h"
#include "ik_fabrik.h"
#include "ik_math.h"
#include "ik_pole.h"
#include "ik_rotations.h"
#include "ik_tree.h"
#include "ik_two_bone.h"

#define IK_VERSION_MAJOR 0
#define IK_VERSION_MINOR 1
#define IK_VERSION_PATCH 0
#define IK_VERSION "0.1.0"

#endif /* IK_H */
