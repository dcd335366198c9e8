/*
 * ik_crowd.h: many characters of one rig, compiled once and instanced, solved in one
 * call per frame over threads, their inputs and outputs in flat arrays.
 *
 * A template is a skeleton and the chains its rig solves: two-bone limbs with poles,
 * FABRIK (or CCD, DLS) chains such as a spine, each chain's target hung from a bone of
 * the character or given by the host every frame, and feet (ik_foot.h: a ray onto the
 * crowd's ground and the spring) on the chains that end in one. A crowd holds
 * `capacity` instances of it in one block the caller sizes (ik_crowd_size): the
 * instances' bones (local and world transforms) laid out across instances, in groups of
 * 8 a bone's component side by side (one instance a vector lane), each instance's
 * chains and foot states, and the views (ik_crowd_view) a host writes and reads once a
 * frame:
 *   IK_CROWD_ROOTS      in, 7 reals an instance: bone 0's position (x, y, z) and
 *                       rotation (x, y, z, w; any non-zero length), in world space
 *   IK_CROWD_TARGETS    in, 3 reals for each host-given target (the chains whose
 *                       target_bone is -1, in chain order): world positions
 *   IK_CROWD_ROTATIONS  out, 4 reals a bone: each bone's local rotation after the solve
 *   IK_CROWD_POSITIONS  out, 3 reals a bone: each bone's world position after the solve
 * Every view is instance-major: instance i's values start at data + i * stride.
 *
 * A solve: every input checked first (nothing moves when one is refused), then each
 * thread takes a contiguous range of whole blocks of IK_CROWD_BLOCK slots and runs each
 * block's instances through the template's passes: forward kinematics across the lanes
 * (a bone of every instance at once, parents first), a pass's chains of every instance
 * of the block read from the lanes, their feet placed, solved (two-bone limbs in vector
 * lanes, one character a lane; FABRIK chains in the core's ik_batch, side by side in its
 * SIMD lanes; CCD and DLS one by one), turned in lanes, and written back into the
 * instances' local rotations.
 * A pass is what one ik_bone_batch solve of those chains would do: all read before any is
 * written. A chain goes in a later pass than any earlier chain that moves the bones it
 * reads (its bones, its target's and pole's bones). The split depends on the slot count
 * and the thread count only.
 *
 * Exactness: an instance ends bit for bit where the per-object path leaves the same
 * character (a skeleton, its chains as ik_bone_chain_set_bones makes them with their
 * targets and poles as nodes hung from its bones, feet, solved pass by pass in
 * ik_bone_batch): the crowd runs the same core code on each instance, and its own
 * reads, forward kinematics and write-back are the skeleton's and the chain's
 * operations in their order (a world transform is a function of the locals alone, so
 * computing them eagerly gives the lazy cache's bits) (tests/scene/test_crowd.c).
 *
 * Instances live in slots 0 .. capacity - 1: ik_crowd_add takes a free slot (the
 * character at rest, as the template's skeleton is), ik_crowd_remove frees one; a free
 * slot's view values are neither read nor written. Slots never move, so pointers into
 * the views stay good until the block is freed.
 *
 * Memory: the caller sizes and owns the template's and the crowd's blocks (aligned as
 * malloc's); ik_crowd_start starts the threads and their job buffers (allocated once,
 * freed by ik_crowd_stop). A solve allocates nothing. The crowd keeps pointers to its
 * template and ground: keep them alive while it lives.
 *
 * Threads: one solve at a time per crowd; the crowd touches nothing outside its block
 * but the ground (read only) and its threads' buffers.
 */
#ifndef IK_CROWD_H
#define IK_CROWD_H

#include <stddef.h>

#include "ik_api.h"
#include "ik_bone_chain.h"
#include "ik_foot.h"
#include "ik_ground.h"
#include "ik_pool.h"
#include "ik_skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most chains of a template, most joints of one of its chains. */
#define IK_CROWD_MAX_CHAINS 16
#define IK_CROWD_MAX_JOINTS 32
/* Instances one thread takes through a pass together. */
#define IK_CROWD_BLOCK 32
/* Most instances of a crowd. */
#define IK_CROWD_MAX_CAPACITY (1 << 20)

/* One chain of a template. */
typedef struct ik_crowd_chain_desc {
  int count;                      /* joints, 2 .. IK_CROWD_MAX_JOINTS */
  int bones[IK_CROWD_MAX_JOINTS]; /* root first: bone indices of the template's skeleton */
  /* IK_BONE_CHAIN_*, or -1 (the default): two-bone for 3 joints, else FABRIK. */
  int solver;
  int iterations;    /* default 10 */
  ik_real tolerance; /* default 1e-3 */
  /* -1 (the default): the host gives the target each frame (IK_CROWD_TARGETS); else
   * the target is target_offset hung from this bone (its frame). */
  int target_bone;
  ik_vec3 target_offset;
  /* -1 (the default): no pole; else pole_offset hung from this bone. */
  int pole_bone;
  ik_vec3 pole_offset;
  /* A foot on the chain's target: its ray and spring give the target solved for. */
  int has_foot;
  ik_foot_params foot; /* ik_foot_params_init's defaults */
} ik_crowd_chain_desc;

IK_API void ik_crowd_chain_desc_init(ik_crowd_chain_desc *desc);

typedef struct ik_crowd_template ik_crowd_template;

/* Bytes of a template on a skeleton of bone_count bones (0 when bone_count < 1). */
IK_API size_t ik_crowd_template_size(int bone_count);
/* Builds a template in mem from sk as it stands (copied: sk may go) and count chains
 * (1 .. IK_CROWD_MAX_CHAINS). Refused, nothing written, with err naming the field and
 * the chain (err->index): IK_E_NULL (a NULL pointer), IK_E_COUNT (count, a chain's
 * joints), IK_E_PARAMETER (mem_size, a bone out of range, a solver, a target or pole
 * bone that moves with its chain, a two-bone chain not of 3 joints, a chain on bones
 * at one place or out of reach), IK_E_NOT_FINITE / IK_E_RANGE (an offset, tolerance),
 * a foot's parameters as ik_foot_params_validate says. */
IK_API ik_status ik_crowd_template_init(void *mem, size_t mem_size, const ik_skeleton *sk,
                                        const ik_crowd_chain_desc *chains, int count, ik_crowd_template **out,
                                        ik_error *err);
IK_API int ik_crowd_template_bones(const ik_crowd_template *t);
IK_API int ik_crowd_template_chains(const ik_crowd_template *t);
/* How many targets the host gives an instance (chains with target_bone -1). */
IK_API int ik_crowd_template_targets(const ik_crowd_template *t);
IK_API int ik_crowd_template_passes(const ik_crowd_template *t);
/* Whether the template's chains have feet (a crowd of it then needs a ground). */
IK_API int ik_crowd_template_feet(const ik_crowd_template *t);
IK_API const ik_skeleton *ik_crowd_template_skeleton(const ik_crowd_template *t);

/* The views. */
enum { IK_CROWD_ROOTS, IK_CROWD_TARGETS, IK_CROWD_ROTATIONS, IK_CROWD_POSITIONS, IK_CROWD_VIEWS };

/* A view: instance i's `width` reals at data + i * stride, for i in [0, capacity). */
typedef struct ik_crowd_view {
  ik_real *data;
  int capacity, stride, width;
} ik_crowd_view;

typedef struct ik_crowd ik_crowd;

/* Bytes of a crowd of capacity (1 .. IK_CROWD_MAX_CAPACITY) instances of t; 0 out of
 * range. */
IK_API size_t ik_crowd_size(const ik_crowd_template *t, int capacity);
/* Lays a crowd out in mem with no instance and no threads (ground: the feet's, NULL
 * when the template has none). IK_E_NULL, IK_E_COUNT (capacity), IK_E_PARAMETER
 * (mem_size; a template with feet and no ground, or a custom ground). */
IK_API ik_status ik_crowd_init(void *mem, size_t mem_size, const ik_crowd_template *t, int capacity,
                               const ik_ground *ground, ik_crowd **out, ik_error *err);
/* Starts `threads` threads (1 .. IK_POOL_MAX_THREADS) and their job buffers, stopping
 * any before: IK_E_PARAMETER out of range, IK_E_NULL when the system refused. */
IK_API ik_status ik_crowd_start(ik_crowd *c, int threads);
/* Stops the threads and frees their buffers; the block stays the caller's. */
IK_API void ik_crowd_stop(ik_crowd *c);
IK_API int ik_crowd_threads(const ik_crowd *c);

/* A new instance in the lowest free slot, at rest (the template's pose, feet fresh,
 * roots and targets in the views at that pose): its slot, or -1 when full. */
IK_API int ik_crowd_add(ik_crowd *c);
/* Frees slot i: IK_E_PARAMETER when it is out of range or free. */
IK_API ik_status ik_crowd_remove(ik_crowd *c, int slot);
IK_API int ik_crowd_used(const ik_crowd *c, int slot);
IK_API int ik_crowd_count(const ik_crowd *c);
IK_API int ik_crowd_capacity(const ik_crowd *c);
IK_API const ik_crowd_template *ik_crowd_template_of(const ik_crowd *c);

/* View `which` (IK_CROWD_*); data NULL for an unknown one or a template with no host
 * targets. */
IK_API ik_crowd_view ik_crowd_get_view(ik_crowd *c, int which);

/* One frame, dt seconds (>= 0) after the last: every used instance solved. IK_OK with
 * how many chains reached in *reached (NULL: not counted); IK_E_PARAMETER for dt;
 * IK_E_NOT_FINITE / IK_E_RANGE / IK_E_PARAMETER (a zero rotation) with err->field
 * "roots" or "targets" and err->index the slot, nothing solved; IK_E_PARAMETER with
 * err->field "chains" and err->index the slot when an instance's chain could not be read
 * or turned (its pose is then as far as it got; others are solved). */
IK_API ik_status ik_crowd_solve(ik_crowd *c, ik_real dt, int *reached, ik_error *err);

/* What the last solve said of chain `chain` of the instance in `slot`: IK_OK with its
 * result (and, when grounded is not NULL, whether its foot was planted: 0 without a
 * foot); IK_E_PARAMETER for a free slot or a chain out of range. */
IK_API ik_status ik_crowd_result(const ik_crowd *c, int slot, int chain, ik_result *result, int *grounded);

#ifdef __cplusplus
}
#endif

#endif /* IK_CROWD_H */
