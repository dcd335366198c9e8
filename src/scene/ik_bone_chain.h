/*
 * ik_bone_chain.h: a chain the scene drives, solved in one call or in three phases.
 *
 * A bone chain follows bones of a skeleton (or nodes): each solve reads their world pose
 * (gather), solves from it with one of the core's solvers (FABRIK, CCD, DLS, two-bone),
 * and turns the bones by the least rotation that puts each one where the solver did
 * (scatter): the animation's twist is kept, positions are never written and bones never
 * stretch. A point chain (made with bound 0) owns its joints instead. The target is a
 * bone, a node or a fixed point; the pole an ik_chain_pole, a bone or a node.
 *
 * Warm start: unless deterministic, a bone chain starts each solve from its last
 * solution's bone directions, carried in the frame of what its root hangs from, so a
 * chain following a moving target needs few sweeps a frame. Its bones also turn on from
 * their last result (the rotations job's twist_memory), so none spins about its length
 * where a solved direction comes round opposite the animated one. A point chain starts
 * deterministic (from the pose given: its solution then depends on the target and pole
 * alone, not on the frame rate that led there); a caller may clear the flag.
 *
 * Memory: the caller sizes a block with ik_bone_chain_size (aligned as malloc's) and
 * hands it to ik_bone_chain_init; nothing here allocates. The chain keeps pointers to
 * the skeletons, nodes and poles it is given (and to their owners' closed flags, NULL
 * for never closed): keep those alive while it refers to them.
 *
 * Threads: gather, solve and scatter of a chain whose bones, target and pole are on one
 * skeleton (ik_bone_chain_skeleton) touch nothing else: chains of different skeletons
 * may run on different threads, chains of one skeleton on one thread, in order. The
 * solve phase alone (prepare, the job, finish; or ik_bone_chain_solve) touches only the
 * chain's own memory.
 */
#ifndef IK_BONE_CHAIN_H
#define IK_BONE_CHAIN_H

#include <stddef.h>

#include "ik_api.h"
#include "ik_ccd.h"
#include "ik_dls.h"
#include "ik_fabrik.h"
#include "ik_rotations.h"
#include "ik_skeleton.h"
#include "ik_two_bone.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The solver a chain runs (the Lua binding's names, in this order: "fabrik", "ccd",
 * "two_bone", "dls"). */
enum { IK_BONE_CHAIN_FABRIK, IK_BONE_CHAIN_CCD, IK_BONE_CHAIN_TWO_BONE, IK_BONE_CHAIN_DLS };

/* What a chain keeps of a transform: a bone of a skeleton, a node, a fixed point, or
 * (IK_REF_NONE) nothing the scene can read (the Lua binding's host objects). `closed`
 * points at the owner's flag (nonzero: gone), or is NULL. */
enum { IK_REF_NONE, IK_REF_BONE, IK_REF_NODE, IK_REF_VEC3 };
typedef struct ik_ref {
  int kind;
  ik_skeleton *sk; /* IK_REF_BONE: its skeleton and bone index */
  int bone;
  ik_node *node; /* IK_REF_NODE */
  const int *closed;
  ik_vec3 value; /* IK_REF_VEC3 */
} ik_ref;

IK_API ik_ref ik_ref_bone(ik_skeleton *sk, int bone, const int *closed);
IK_API ik_ref ik_ref_node(ik_node *node, const int *closed);
IK_API ik_ref ik_ref_vec3(ik_vec3 value);

/* A pole kept by its owner and read at each solve. */
typedef struct ik_chain_pole {
  ik_vec3 position;
  ik_real weight;
  int closed;
} ik_chain_pole;

/* The pole as one solve sees it. */
typedef struct ik_bone_chain_pole_now {
  int has;
  ik_vec3 position;
  ik_real weight;
} ik_bone_chain_pole_now;

/* One solve, between its phases: what gather read, what solve answered. */
typedef struct ik_bone_chain_now {
  ik_vec3 target;
  ik_bone_chain_pole_now pole;
  int off; /* weight 0: nothing to solve */
  ik_status status;
  ik_result result;
  ik_quat target_rotation; /* match_rotation's; a foot's (ik_bone_batch) */
  /* Bone chains only, from here (a point chain's base_turn stays the identity). */
  ik_quat base_turn; /* what bone 1 hangs from has turned since the chain was made */
  /* The world rotation of what bone 1 hangs from now (identity when the bone cannot
   * tell): the frame the warm pose is kept in, so it turns with the body. */
  ik_quat frame;
} ik_bone_chain_now;

/* The chain: a header, its arrays after it in the same block. Settings (solver ..
 * match_rotation) are the caller's to set between solves; the rest is the chain's. What
 * every solve of a point chain reads comes first, so that a batch of many chains brings
 * few cache lines of each one from memory. */
typedef struct ik_bone_chain {
  int count, solver, iterations;
  int closed;            /* set by the owner: every phase then refuses the chain */
  int bound;             /* a bone chain (refs), else a point chain */
  int constrained;       /* any constraint set: the solvers skip the pass when not */
  int deterministic;     /* start every solve from the given (point: the default) or animated (bone) pose */
  int pole_is_transform; /* bone chains: the pole is pole_ref */
  ik_fabrik_mode mode;
  ik_real tolerance, weight;
  ik_vec3 *positions; /* count: the pose solve moves */
  /* count: point chains, the pose given (where a deterministic chain starts); bone
   * chains, the last solution as count - 1 unit bone directions in `frame` (where the
   * next solve starts: warm start). */
  ik_vec3 *start;
  ik_real *lengths;    /* count - 1: bone i joins joint i and i + 1 */
  ik_chain_pole *pole; /* NULL, or a pole kept by the caller */
  /* Bone chains whose bones are all bones of one skeleton: that skeleton and its
   * closed flag (bones never change), else NULL. */
  ik_skeleton *one_sk;
  const int *one_sk_closed;
  ik_ref target_ref; /* the kept target */
  ik_bone_chain_now now;
  ik_constraint *constraints; /* count - 1, IK_CONSTRAINT_NONE where unset */
  ik_vec3 *before;            /* count, scratch: the pose before a blended solve; for a
                                 bone chain, the bones' positions as read */
  ik_vec3 *rest;              /* count: the rest pose (hinge axes) */
  ik_quat *rotations;         /* bone chains only (else NULL), count: the bones' world
                                 rotations, read, then turned by the rotations job */
  ik_quat *twist_memory;      /* bone chains only (else NULL), count: the rotations job's
                                 memory of each bone's last turn (ik_rotations.h) */
  ik_ref *refs;               /* bone chains only (else NULL), count: the bones */
  ik_ref pole_ref;            /* a bone chain's pole transform */
  ik_vec3 base_direction;     /* zero: none */
  /* Bone chains: the world rotation of what bone 1 hangs from in the rest pose (when
   * the bone can tell), so that bone 1's constraint turns with the character. */
  ik_quat base_rest;
  int has_base_rest;   /* base_rest is known */
  int match_rotation;  /* bone chains: the tip takes the target's rotation */
  int native;          /* bone chains: every bone is a bone or node (refs) */
  int has_warm;        /* bone chains: start holds a solution */
  ik_real loop_radius; /* point chains: ik__loop_radius of the lengths, 0 until a solve folds */
} ik_bone_chain;

/* Bytes of a chain of count joints (>= 2); bound: a bone chain. */
IK_API size_t ik_bone_chain_size(int count, int bound);
/* Lays a chain out in mem (ik_bone_chain_size bytes), with the core's defaults (FABRIK,
 * 10 iterations, tolerance 1e-3, weight 1, the FABRIK job's mode). Its pose is then
 * the caller's to give: ik_bone_chain_set_points or ik_bone_chain_set_bones, or rest
 * (and a bone chain's refs) filled and ik_bone_chain_set_rest. */
IK_API ik_bone_chain *ik_bone_chain_init(void *mem, int count, int bound);
/* After rest (and refs) are filled: the pose and start taken from it, the lengths
 * measured, one_sk found; a chain of 3 bones solves two_bone. */
IK_API void ik_bone_chain_set_rest(ik_bone_chain *c);
/* A point chain's pose: IK_E_NOT_FINITE, IK_E_BONE_LENGTH (two joints at one place) or
 * IK_E_RANGE (ik_chain_validate's reach), nothing changed; else the rest pose. */
IK_API ik_status ik_bone_chain_set_points(ik_bone_chain *c, const ik_vec3 *pose);
/* A point chain's new pose (animation, bones scaled), already checked as set_points
 * checks it: where the next solve starts, the lengths measured again; the rest pose
 * (hinge axes) is kept. */
IK_API void ik_bone_chain_set_start(ik_bone_chain *c, const ik_vec3 *pose);
/* A bone chain on bones[0 .. count) of sk, root first (closed: the skeleton owner's
 * flag, or NULL): their pose now is the rest pose. IK_E_PARAMETER for a bone out of
 * range, IK_E_BONE_LENGTH, IK_E_RANGE as above. */
IK_API ik_status ik_bone_chain_set_bones(ik_bone_chain *c, ik_skeleton *sk, const int *bones,
                                         const int *closed);
/* Constraint of bone i (0 .. count - 2), copied; NULL removes it. */
IK_API void ik_bone_chain_set_constraint(ik_bone_chain *c, int bone, const ik_constraint *con);

/* The 1-based index of the bone of a native bone chain that the kept bone or node v
 * would move with: v is that bone (*is_bone set), or hangs from it or below it; the
 * bone nearest the tip is named. 0 when none. */
IK_API int ik_bone_chain_moves_with(const ik_bone_chain *c, const ik_ref *v, int *is_bone);
/* The target: IK_E_PARAMETER when it would move with the chain's bones (a target that
 * runs away with every solve), nothing changed. */
IK_API ik_status ik_bone_chain_set_target(ik_bone_chain *c, ik_ref target);
/* A bone chain's pole on a bone or node (IK_E_PARAMETER as for the target), or the
 * pole p (ref NULL), or none (both NULL). */
IK_API ik_status ik_bone_chain_set_pole(ik_bone_chain *c, const ik_ref *ref, ik_chain_pole *p);

/* Which job the solve phase of a gathered chain is: one a batch may hand to the core's
 * ik_batch (an ik_fabrik_job, an ik_two_bone_job), or none (ik_bone_chain_solve). */
enum { IK_LANE_NONE, IK_LANE_FABRIK, IK_LANE_TWO_BONE };

/* Starts a solve: weight 0 turns it off, status IK_OK. Gathers call it. */
IK_API void ik_bone_chain_begin(ik_bone_chain *c);
/* The lane of a gathered chain. */
IK_API int ik_bone_chain_lane(const ik_bone_chain *c);

/* The skeleton a native bone chain alone reads and writes (its bones, target and pole;
 * or nodes hanging from nothing, refreshed here so that reading them later writes
 * nothing), or NULL for any other chain. */
IK_API const ik_skeleton *ik_bone_chain_skeleton(const ik_bone_chain *c);
/* Gather of a chain ik_bone_chain_skeleton accepted: the lane, or -1 when it cannot
 * be read as it stands (the target or pole moves with its bones, match_rotation with a
 * point target, bones at one place, out of range). */
IK_API int ik_bone_chain_gather(ik_bone_chain *c);
/* Gather of a point chain whose target is kept (a point; with read_refs, a bone or a
 * node too) and whose pole is an open ik_chain_pole or none: the lane, else -1. */
IK_API int ik_bone_chain_gather_point(ik_bone_chain *c, int read_refs);

/* The solve phase, whole. */
IK_API void ik_bone_chain_solve(ik_bone_chain *c);
/* The solve phase in three steps, for the lanes: prepare fills `job` (an
 * ik_fabrik_job or an ik_two_bone_job, after the lane) over the chain's buffers; the
 * caller runs it (alone or in an ik_batch) and hands back what it said to finish. */
IK_API void ik_bone_chain_prepare(ik_bone_chain *c, int lane, void *job);
IK_API void ik_bone_chain_finish(ik_bone_chain *c, const ik_result *r, ik_status st);
/* ik_bone_chain_finish but for its rotations job: 1 when the bones need turning, *rot
 * then the job that ends the finish (ik__rotations_run_valid, or many such jobs in
 * ik__rotations_run_lanes), else 0 and the finish is done. */
IK_API int ik_bone_chain_finish_begin(ik_bone_chain *c, const ik_result *r, ik_status st,
                                      ik_rotations_job *rot);

/* Scatter of a gathered and solved chain (a bone chain's bones turned, the tip's
 * distance measured where it is now): 0, or -1 when the solver refused the chain, the
 * tip's skeleton was closed or a bone refused its rotation. */
IK_API int ik_bone_chain_scatter(ik_bone_chain *c);

/* Gather, solve and scatter of a native chain or a point chain with a kept target,
 * the result in *out: IK_OK, or IK_E_PARAMETER when the chain could not be gathered or
 * scattered (see above; nothing then turned), IK_E_NULL for a closed chain. */
IK_API ik_status ik_bone_chain_run(ik_bone_chain *c, ik_result *out);

/* Asks for some of a chain's memory to be brought into cache: a hint, for a pass over
 * many chains, given a few chains ahead. HEADER first: SOLVE (the arrays every solve
 * touches) and REFS (the kept target's and pole's memory, the skeleton's closed flag)
 * read the header. */
enum { IK_BONE_CHAIN_PREFETCH_HEADER, IK_BONE_CHAIN_PREFETCH_SOLVE, IK_BONE_CHAIN_PREFETCH_REFS };
IK_API void ik_bone_chain_prefetch(const ik_bone_chain *c, int what);

#ifdef __cplusplus
}
#endif

#endif /* IK_BONE_CHAIN_H */
