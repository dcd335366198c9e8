/*
 * ik_batch_lanes.h: the structure-of-arrays rows the batch sweeps and polishes FABRIK
 * chains in, one chain per lane, and the sweep and polish step over them
 * (ik_batch_sweep.c). Not installed, not API.
 *
 * A lane group is up to IK__LANES chains of the same joint count, one per lane. Row i of
 * x, y, z holds joint i of every lane, row i of len bone i; a row is `lanes` long, fewer
 * for long chains so that any chain of IK_BATCH_LANE_MAX_JOINTS fits the same buffers.
 * The scheduler (ik_batch.c) moves chains in and out of lanes between sweeps and steps.
 */
#ifndef IK_BATCH_LANES_H
#define IK_BATCH_LANES_H

#include "ik_batch.h"
#include "ik_fabrik_stages.h"

/* Chains in a lane group. A joint step is a chain of dependent operations (a square
 * root, then a division) some 50 cycles long: one vector of lanes would wait on it, many
 * keep the divider busy. 32 lanes are 8 AVX2 vectors of doubles (4 of floats) in flight
 * (the best measured: docs/design-notes.md). */
#define IK__LANES 32

/* Cells of each of x, y, z and len: 64 joints of 32 lanes, 128 of 16 or 256 of 8. */
#define IK__LANE_CELLS (64 * IK__LANES)

/* The sweep loads rows as aligned 32-byte vectors: a row is at least 8 lanes (32 bytes of
 * floats) and a multiple of it, and the struct starts on a 32-byte boundary (heap
 * copies: posix_memalign). */
#if defined(__GNUC__)
#define IK__ALIGN32 __attribute__((aligned(32)))
#else
#define IK__ALIGN32
#endif
typedef struct IK__ALIGN32 ik__lane_rows {
  ik_real x[IK__LANE_CELLS], y[IK__LANE_CELLS], z[IK__LANE_CELLS]; /* joint i, lane l: [i * lanes + l] */
  ik_real len[IK__LANE_CELLS];                                     /* bone i, lane l: the same */
  ik_real target_x[IK__LANES], target_y[IK__LANES], target_z[IK__LANES];
  ik_real root_x[IK__LANES], root_y[IK__LANES], root_z[IK__LANES];
  /* ik__fabrik_state.root_dir of each lane: the degenerate steps' fallback. */
  ik_vec3 root_dir[IK__LANES];
  ik_real root_dir_x[IK__LANES], root_dir_y[IK__LANES], root_dir_z[IK__LANES];
  /* A polishing lane's step: its ik__dls_state's plane_n and max_step_len, the damping
   * floor (ik__fabrik_polish_floor2), the tip's error squared before the step, and the
   * step planned (y); and its total length, which the plane is found with. */
  ik_real plane_x[IK__LANES], plane_y[IK__LANES], plane_z[IK__LANES], total[IK__LANES];
  ik_real max_step[IK__LANES], floor2[IK__LANES], err2[IK__LANES];
  ik_real step_x[IK__LANES], step_y[IK__LANES], step_z[IK__LANES];
  /* A sweeping lane's stop test, so that a sweep can tell which lanes may stop without a
   * call per lane: the tip's distance to the target squared after the last sweep and the
   * one before (ik__fabrik_state's prev_err2 as it was before the last sweep), the
   * tolerance squared, the distance squared within which refined mode may hand over
   * to the polish (negative when it never does), and the share of the error before
   * that a near sweep must keep, squared, to count as slow (ik__fabrik_slow2; -1 once
   * the budget left is the polish's, when every near sweep may hand over). */
  ik_real tip_err2[IK__LANES], prev_err2[IK__LANES], tol2[IK__LANES], near2[IK__LANES], slow2[IK__LANES];
  int lanes; /* in use, the length of a row: ik__lanes_for(joint count) */
} ik__lane_rows;

/* Lanes of a group of `count`-joint chains (count <= IK_BATCH_LANE_MAX_JOINTS): 32,
 * halved until the rows fit the cells. */
static inline int ik__lanes_for(int count) {
  int lanes = IK__LANES;
  while (lanes * count > IK__LANE_CELLS) lanes /= 2;
  return lanes;
}

/* Bit l of a lane mask stands for lane l (unsigned long has at least 32 bits). */
typedef unsigned long ik__lane_mask;

/* One full sweep (forward pass, then backward pass, as ik_fabrik.c's forward_pass and
 * backward_pass compute them, bit for bit) of the `count`-joint chains in the lanes of
 * `live` (below rows->lanes). Lanes outside `live` may be changed in any way. Then, for
 * each lane of live, prev_err2 takes tip_err2 and tip_err2 the tip's distance to the
 * target squared (as ik_vec3_dist2(tip, target)); returns the lanes of live where that
 * is <= tol2, or < near2 and > slow2 times prev_err2: those whose ik__fabrik_next may
 * stop. (For the others it continues, unless their iteration budget is spent or their
 * polish is due: the caller counts those.) Reached
 * through ik__sweep_variant: a lane workspace keeps the one it picked. */

/* The sweep for one instruction set: 0 the baseline, 1 AVX2, 2 one lane at a time in
 * scalar code (what compilers without vector extensions run), 3 AVX-512F (AVX2's for a
 * group narrower than its vectors). NULL when that one is not built here or the
 * processor lacks it. Every one gives the same bits; the tests hold each to the scalar
 * solver, whichever the machine would pick. */
typedef ik__lane_mask (*ik__sweep_fn)(ik__lane_rows *rows, int count, ik__lane_mask live);
ik__sweep_fn ik__sweep_variant(int isa);

/* The widest instruction set this processor runs, of ik__sweep_variant's: what a lane
 * workspace takes when it is laid out. */
int ik__best_isa(void);

/* A step whose bone has no length (bone_len2 <= IK_TINY_LEN2), on one lane, in scalar
 * code: the vector sweep computes every lane, then redoes such steps with these. */
/* Forward pass, joint i of `lane` (joints i + 1 .. count - 1 already placed). */
void ik__sweep_lane_forward_step(ik__lane_rows *rows, int count, int lane, int i);
/* Backward pass, joint i + 1 of `lane` (joints 0 .. i already placed). */
void ik__sweep_lane_backward_step(ik__lane_rows *rows, int lane, int i);

/* Refined mode's polish step (ik__dls_step without constraints) on the `count`-joint
 * chains in the lanes of `live`, in two halves. Plan solves for each lane's step (into
 * step_x, y, z) and returns the lanes that may be stuck (whose step may need a bend
 * first, ik__unstall): the caller does their step with ik__dls_step instead, from their
 * positions before apply. Apply then turns the chains of `live` by their steps, as
 * ik__dls_apply_step, bit for bit; it changes no lane outside `live`. Without vector
 * extensions plan returns every lane. */

/* The polish's start over lane groups: ik__plane_normal of the chains of `live` (their
 * joints, target and total) into their plane_x, y, z, bit for bit; no other lane
 * changes. */

/* The three for one instruction set, as ik__sweep_variant. */
typedef struct ik__polish_fns {
  ik__lane_mask (*plan)(ik__lane_rows *rows, int count, ik__lane_mask live);
  void (*apply)(ik__lane_rows *rows, int count, ik__lane_mask live);
  void (*plane)(ik__lane_rows *rows, int count, ik__lane_mask live);
} ik__polish_fns;
ik__polish_fns ik__polish_variant(int isa);

/* Jobs sorted by joint count at a time: a pool thread's, and a run's without a pool
 * (whose buffers are on the caller's stack). The lanes of a joint count drain at the end
 * of a chunk (the last chains sweep in part-empty vectors): a larger chunk drains less
 * often (docs/design-notes.md). */
#define IK__CHUNK 4096
#define IK__STACK_CHUNK 512

/* What one thread of a batch works in: two lane groups and the jobs in their lanes, and
 * the chunk being sorted (150 KB, 76 KB with float, and the chunk's arrays: 24 KB in a
 * pool, 3 KB on the stack). The groups come first, so that they are
 * aligned as the struct is (a row set's size is a multiple of 32 bytes). */
struct ik_batch_lanes {
  ik__lane_rows rows;   /* the sweep group */
  ik__lane_rows polish; /* the polish group (refined mode) */
  ik_fabrik_job *job[IK__LANES];
  ik__fabrik_state state[IK__LANES];
  ik_fabrik_job *polish_job[IK__LANES];
  ik__fabrik_state polish_state[IK__LANES];
  ik__dls_state dls[IK__LANES];
  /* The sweep group's count of sweeps, the count when each lane's chain came in (its
   * ik__fabrik_state's iterations are the difference), and the first count at which some
   * lane's iteration budget may be spent. */
  long long rounds, entered[IK__LANES], next_due;
  /* The count at which each lane's ik__fabrik_next must be asked whatever its sweep
   * flags: its polish's due count, then its budget's. */
  long long due_at[IK__LANES];
  /* Polish lanes whose chains came in since the last step: their planes are found, all
   * at once, before it. */
  ik__lane_mask unplaned;
  /* The sweep and polish step of the widest instruction set the processor has, picked
   * once when the workspace is laid out (ik__best_isa), so a solve reads no global. */
  ik__sweep_fn sweep;
  ik__polish_fns polish_fns;
  int chunk;     /* jobs sorted at a time: IK__CHUNK or IK__STACK_CHUNK */
  int *order;    /* chunk of them: the chunk's lane jobs, by joint count */
  short *joints; /* chunk of them: joint count of a lane job of the chunk, else 0 */
};

#endif /* IK_BATCH_LANES_H */
