/*
 * ik_internal.h: pieces the solver files share. Not installed, not API.
 */
#ifndef IK_INTERNAL_H
#define IK_INTERNAL_H

#include <string.h>

#include "ik_chain.h"

/* Fills err (when non-NULL) and returns status: validate functions end with this. */
ik_status ik__fail(ik_error *err, ik_status status, const char *field, int index);

/* IK_E_NOT_FINITE for NaN/Inf, IK_E_RANGE beyond IK_REAL_MAX_COORD, else IK_OK; fills
 * err on failure. Every validate checks its inputs through these. */
ik_status ik__check_real(ik_real r, ik_error *err, const char *field, int index);
ik_status ik__check_vec3(ik_vec3 v, ik_error *err, const char *field, int index);
/* The same for each component of a quaternion (so its squared length cannot overflow);
 * says nothing about its length: a zero quaternion passes. */
ik_status ik__check_quat(ik_quat q, ik_error *err, const char *field, int index);

/* ik__check_real's common case, inlined into per-joint loops: validate runs before
 * every solve, and a call per coordinate cost about what a sweep of a short chain does
 * (a batch of chains felt it most). The full check runs only to name a fault. */
static inline int ik__real_in_range(ik_real r) { return ik_fabs(r) <= IK_REAL_MAX_COORD; }
/* & rather than &&: no branch per coordinate, and a loop of these vectorises. */
static inline int ik__vec3_in_range(ik_vec3 v) {
  return ik__real_in_range(v.x) & ik__real_in_range(v.y) & ik__real_in_range(v.z);
}

/* The per-joint part of the quick checks, in two operations a coordinate where testing
 * each took four: the magnitudes of the coordinates summed axis by axis. Every
 * coordinate is in range when the sums are (ik__sums_in_range), and NaN or infinity
 * makes a sum fail; a pose whose sums alone exceed the range is left to the full check,
 * which then passes it. */
static inline void ik__add_magnitudes(ik_vec3 *sums, ik_vec3 v) {
  sums->x += ik_fabs(v.x);
  sums->y += ik_fabs(v.y);
  sums->z += ik_fabs(v.z);
}
static inline int ik__sums_in_range(ik_vec3 sums) { return ik__vec3_in_range(sums); }

/* Bit for bit the same quaternion (a setter's "no change", a job's "nothing turns"). */
static inline int ik__quat_identical(ik_quat a, ik_quat b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}

/* The result every job starts with: not reached, no iterations, distance 0. */
void ik__result_init(ik_result *result);

/* The unit vector across the unit vector n towards a (a's part across n, normalised), or
 * any perpendicular of n when that part is rounding noise: within 64 epsilons of |a|.
 * A short part (a within about 7 degrees of n's line) is projected a second time after
 * normalising: the first projection leaves a part along n of the order of a's rounding,
 * which normalising magnifies by |a| / |part|, and the result would not be perpendicular
 * to n. A long one is perpendicular to rounding already, and spared the second square
 * root (this runs for every constrained bone of every sweep). */
static inline ik_vec3 ik__unit_across(ik_vec3 a, ik_vec3 n_unit) {
  const ik_vec3 across = ik_vec3_project_on_plane(a, n_unit);
  const ik_real across_len2 = ik_vec3_len2(across), a_len2 = ik_vec3_len2(a);
  const ik_real noise_len = 64 * IK_REAL_EPSILON;
  if (!(across_len2 > noise_len * noise_len * a_len2)) return ik_vec3_any_perpendicular(n_unit);
  if (64 * across_len2 >= a_len2) return ik_vec3_normalize(across);
  return ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_normalize(across), n_unit));
}

/* Whether the largest coordinate of root plus total_len is within IK_REAL_MAX_REACH
 * (ik_chain.h); ik__check_reach says why not. */
static inline int ik__reach_ok(ik_vec3 root, ik_real total_len) {
  ik_real root_max = ik_fabs(root.x);
  if (ik_fabs(root.y) > root_max) root_max = ik_fabs(root.y);
  if (ik_fabs(root.z) > root_max) root_max = ik_fabs(root.z);
  return root_max + total_len <= IK_REAL_MAX_REACH;
}
/* IK_E_RANGE (with field, index -1) unless ik__reach_ok. */
ik_status ik__check_reach(ik_vec3 root, ik_real total_len, ik_error *err, const char *field);

/* Validation shared by the iterative jobs: the chain, the target, the tolerance and the
 * iteration cap. */
ik_status ik__validate_solve(const ik_chain *chain, ik_vec3 target, ik_real tolerance, int max_iterations,
                             ik_error *err);
/* The common case of the checks that do not read the joints, each in one branchless
 * test (validation runs before every solve): ik_chain_validate's after the positions and
 * lengths (base direction and rotation, pole; no constraints, left to the full check),
 * and the target, the tolerance and the iteration cap. 1 only when validation would pass
 * them (in range implies finite); 0 when it must be asked: it says what is wrong, or,
 * for a base rotation beyond IK_REAL_MAX_COORD, that nothing is. */
static inline int ik__chain_settings_ok(const ik_chain *chain) {
  const ik_quat r = chain->base_rotation;
  const int pole_ok = ik__vec3_in_range(chain->pole) & (chain->pole_weight >= 0) & (chain->pole_weight <= 1);
  return ik__vec3_in_range(chain->base_direction) & ik__real_in_range(r.x) & ik__real_in_range(r.y) &
         ik__real_in_range(r.z) & ik__real_in_range(r.w) & (chain->constraints == NULL) &
         ((chain->has_pole == 0) | pole_ok);
}
static inline int ik__solve_settings_ok(ik_vec3 target, ik_real tolerance, int max_iterations) {
  return ik__vec3_in_range(target) & ik_real_is_finite(tolerance) & (tolerance >= 0) & (max_iterations >= 1);
}

/* Measures chain->lengths from the positions when chain->derive_lengths is set. Call
 * once at the start of run(), after validation. */
void ik__prepare_lengths(const ik_chain *chain);

/* Sum of chain->lengths. */
ik_real ik__total_length(const ik_chain *chain);

/* The result of an iterative solve: the tip's distance to the target, and whether that
 * is within tolerance. */
static inline void ik__set_result(ik_result *result, const ik_chain *chain, ik_vec3 target, ik_real tolerance,
                                  int iterations) {
  result->distance = ik_vec3_dist(chain->positions[chain->count - 1], target);
  result->reached = result->distance <= tolerance;
  result->iterations = iterations;
}

/* What the chain's constraints ask of the constraint pass, found in one scan at the start
 * of a solve and passed to everything below that runs the pass: 0 when there is no
 * constraint at all (constraints NULL, or every one NONE), else IK__CONSTRAINED, with
 * IK__HINGED added when one is a hinge (its axis is then carried from the rest pose). */
#define IK__CONSTRAINED 1
#define IK__HINGED 2
int ik__constraint_kinds(const ik_chain *chain);

/* The root-to-tip pass every solver ends a sweep with: each joint i + 1 re-placed at
 * lengths[i] from joint i along the bone's current direction, clamped by the chain's
 * constraints (hinge axes carried from the rest pose). Root stays. `fallback` is the
 * direction used for bone 0 when it has none (coincident joints); `kinds` is
 * ik__constraint_kinds(chain). */
void ik__constrained_pass(const ik_chain *chain, ik_vec3 fallback, int kinds);

/* The frame of every bone the constraint pass limits in the current pose, as
 * ik_chain_constraint_frames gives them (`fallback` and `kinds` as for
 * ik__constrained_pass); returns how many. */
int ik__bone_frames(const ik_chain *chain, ik_vec3 fallback, int kinds, ik_constraint_frame *out);
/* A turn q of the bone along unit `dir` (and all after it) about its first joint, limited
 * by the bone's frame f. A cone's bone: q when the turned bone stays inside, else q
 * followed by the least turn on to the cone's edge. A hinged bone: always replaced by a
 * turn about the hinge's axis, to the angle in its range nearest the one q asks for. */
ik_quat ik__limit_turn(const ik_constraint_frame *f, ik_vec3 dir, ik_quat q);

/* For a chain bent at joint `bone` (1 .. count - 2) out of the line `line_dir` the bone
 * lies on: when bone `bone` has a hinge whose plane crosses the line, the unit vector
 * across the line, in that plane, that the joint must move out towards (the chain
 * bulging that way, the bone after the joint turning back) for the hinge to allow the
 * bend: the bone then turns about the hinge's axis, carried over the current pose as the
 * constraint pass carries it, with the sign of the middle of [min, max]. A range
 * centred on 0 allows either side: *bulge_dir's own side is kept (+ when it has none).
 * Returns 0, *bulge_dir untouched, when the bone has no hinge or its axis lies along
 * the line. */
int ik__hinge_bulge(const ik_chain *chain, int bone, ik_vec3 line_dir, ik_vec3 *bulge_dir);
/* FABRIK's start for a hinged chain: when the first hinged inner joint lies on the far
 * side of the root-to-target line from the side its hinge lets it bulge (ik__hinge_bulge),
 * the sweeps would swing it over the line, where the hinge holds the chain straight for
 * good; so the chain is turned about its root, as one body, to point its tip at the
 * target, and 1 returned. Only with bone 0 free to turn (no limit of its own). */
int ik__hinge_face(const ik_chain *chain, ik_vec3 target);

/* A solve whose iterations may get worse keeps the best pose they passed through (the
 * tip nearest the target), on the stack, and ends on it: a constrained one (any solver),
 * and DLS's: those ended far worse than a pose they had held often enough to matter,
 * unconstrained FABRIK and CCD never (docs/design-notes.md). Chains of more than
 * IK__BEST_MAX_JOINTS joints end where their last iteration left them. */
#define IK__BEST_MAX_JOINTS 64
typedef struct ik__best {
  ik_vec3 positions[IK__BEST_MAX_JOINTS];
  ik_real err2; /* the tip's distance to the target, squared, in positions; < 0: none yet */
  int keep;     /* whether this solve keeps one */
} ik__best;

/* wanted: whether the solve would keep one (a chain too long cannot). */
static inline void ik__best_begin(ik__best *best, const ik_chain *chain, int wanted) {
  best->keep = wanted && chain->count <= IK__BEST_MAX_JOINTS;
  best->err2 = -1;
}
/* After an iteration (which ends with the constraint pass, so every pose offered keeps
 * the limits): keeps the pose when its tip is nearer than the best one's. */
static inline void ik__best_offer(ik__best *best, const ik_chain *chain, ik_vec3 target) {
  ik_real err2;
  if (!best->keep) return;
  err2 = ik_vec3_dist2(chain->positions[chain->count - 1], target);
  if (best->err2 >= 0 && !(err2 < best->err2)) return;
  best->err2 = err2;
  memcpy(best->positions, chain->positions, sizeof(ik_vec3) * (size_t)chain->count);
}
/* After the last iteration, before the pole: puts the best pose back when the chain's
 * tip is now farther from the target than its tip was. */
static inline void ik__best_restore(const ik__best *best, const ik_chain *chain, ik_vec3 target) {
  if (!best->keep || best->err2 < 0) return;
  if (!(ik_vec3_dist2(chain->positions[chain->count - 1], target) > best->err2)) return;
  memcpy(chain->positions, best->positions, sizeof(ik_vec3) * (size_t)chain->count);
}

/* The target is at or beyond full reach: lay the chain straight towards it (then the
 * constraint pass, when there are constraints). */
void ik__lay_straight(const ik_chain *chain, ik_vec3 target, int kinds);

/* Pole pass (ik_pole.h) on raw positions; returns how many joints turned. */
int ik__apply_pole(ik_vec3 *positions, int count, ik_vec3 pole, ik_real weight);

/* Applies chain->pole when has_pole and, with constraints, re-runs the constraint pass
 * so the pole can never leave one broken. */
void ik__finish_with_pole(const ik_chain *chain, ik_vec3 fallback, int kinds);

/* FABRIK's way out of a straight chain. A chain whose joints all lie on the line from
 * the root to the target (a straight chain aimed at a target inside its reach,
 * coincident joints) gives FABRIK's passes no direction to bend in: they would keep it
 * on the line forever. When that is the case, bend the inner joints off the line in an
 * arc and return 1: within the plane of the first inner bone's hinge, towards the side
 * its range allows (ik__hinge_bulge), when one has a hinge; else towards the pole when
 * there is one, else the perpendicular nearest +Y. Call after the reach and "already
 * there" checks, with ik__root_fallback's direction and the total length. Lengths are
 * restored by the solver's next pass. (CCD and DLS detect a stall as they go, and bend
 * with ik__unstall.) */
int ik__break_collinear(const ik_chain *chain, ik_vec3 target, ik_vec3 root_dir, ik_real total_len);
/* Whether joint i of p lies off the line from p[0] along line_dir, by more than rounding
 * in a chain total_len long: one such joint is all FABRIK needs to bend a chain, and
 * ik__break_collinear then does nothing. (Inline: a solve's caller can ask it of joint 1
 * first, the nearly certain answer.) */
static inline int ik__off_line(const ik_vec3 *p, int i, ik_vec3 line_dir, ik_real total_len) {
  const ik_real off_len_max = 1024 * IK_REAL_EPSILON * total_len;
  return ik_vec3_len2(ik_vec3_project_on_plane(ik_vec3_sub(p[i], p[0]), line_dir)) >
         off_len_max * off_len_max;
}

/* Shared by the rotation-based solvers (ik_turn.c). */

/* Turns bones first .. count - 2 by q about joint `first`, which stays; each joint is
 * re-placed at its bone length (a bone with no direction takes its parent's). */
void ik__turn_subchain(ik_vec3 *p, const ik_real *lengths, int count, int first, ik_quat q,
                       ik_vec3 parent_dir);
/* Plane lock (ik__plane_normal): points within this many epsilons of the pose's size of
 * a plane lie in it (a planar pose moved by rounding only) ... */
#define IK__FLAT_EPSILONS ((ik_real)256)
/* ... but a pose within this fraction of its size of one line has no plane worth
 * keeping: rounding could tilt the normal found about that line. (Here for the batch's
 * lane copy of ik__plane_normal.) */
#define IK__LINE_FRACTION ((ik_real)1e-3)
/* Unit normal of the plane holding the target and every joint (to rounding), or zero
 * when they lie on one line or span space. Turning about it keeps a planar chain planar
 * exactly, where the minimal rotation's own axis would drift by rounding. */
ik_vec3 ik__plane_normal(const ik_vec3 *p, int count, ik_vec3 target, ik_real total_len);
/* After something other than a turn about it moved the chain (a constraint pass): the
 * same normal while the chain and target still lie in its plane to rounding, else
 * ik__plane_normal's. A normal found again from a planar pose tilts by the pose's
 * rounding, and turns about it tilt the chain with it: re-found at every step, that fed
 * back (float chains folding near their root left the plane by 1e-3 of their length
 * in 30 steps). */
ik_vec3 ik__plane_kept(const ik_vec3 *p, int count, ik_vec3 target, ik_vec3 normal, ik_real total_len);
/* A start for a chain whose target is near its root (ik_bone_chain.c): each bone turned
 * from its direction in p towards its direction in the chain folded into a loop (the
 * bones as chords of the circle through the root that they close, in the plane of bone
 * 0 and side_ws, setting out from the root towards side_ws), by s in [0, 1], and the
 * joints laid out again with the lengths len. No change for s <= 0. A straight chain
 * gives a solver no side to fold a target at its root to, and what it picks turns over
 * with the target's direction; the loop is one pose for every direction. loop_radius is
 * ik__loop_radius(len, count), measured once for the lengths (it costs far more than the
 * fold). */
void ik__fold_start(ik_vec3 *p, const ik_real *len, int count, ik_vec3 side_ws, ik_real s,
                    ik_real loop_radius);
/* The radius of the circle through the root whose chords of lengths len close a loop. */
ik_real ik__loop_radius(const ik_real *len, int count);
/* Shortest distance from the root the tip can reach: the longest bone folded back over
 * all the others (negative when the chain can fold onto its root). */
ik_real ik__fold_reach(const ik_chain *chain, ik_real total_len);
/* Bends a chain stalled on the line to its target, and returns the joint it bent at:
 * the first inner joint whose bone has a hinge, in the hinge's plane and towards the
 * side its range allows (ik__hinge_bulge), `stalls` alternating the sign; without one,
 * the middle joint, `stalls` alternating between two perpendicular bend planes. Either
 * way, one hinge cannot keep the chain stuck. */
int ik__unstall(const ik_chain *chain, ik_vec3 root_dir, int stalls);

/* A direction for bone 0 when the chain has none of its own: towards the target, else
 * along bone 0, else the base direction, else +Y. The first is inline (every solve asks,
 * and it is nearly always the answer); ik__root_fallback_rest tries the others. */
ik_vec3 ik__root_fallback_rest(const ik_chain *chain);
static inline ik_vec3 ik__root_fallback(const ik_chain *chain, ik_vec3 target) {
  const ik_vec3 dir = ik_vec3_normalize(ik_vec3_sub(target, chain->positions[0]));
  return ik_vec3_len2(dir) > 0 ? dir : ik__root_fallback_rest(chain);
}

/* ik_rotations_run for a job ik_rotations_validate has passed, or whose every input the
 * caller produced through checked readers and a solver (the Lua binding's bone chains):
 * no second validation per solve. */
struct ik_rotations_job;
void ik__rotations_run_valid(struct ik_rotations_job *job);
/* Whether ik__rotations_run_lanes takes the valid job: full weight, twist memory, no twist
 * limits. */
int ik__rotations_lane_able(const struct ik_rotations_job *job);
/* ik__rotations_run_valid on each of n valid, lane-able jobs of one joint count, bit for bit as one by one,
 * several at a time in vector lanes. */
void ik__rotations_run_lanes(struct ik_rotations_job *const *jobs, int n);
/* ik__rotations_run_lanes for one instruction set: 0 the baseline, 1 AVX2, 2 one by one in
 * scalar code; NULL when not built here or the processor lacks it (for the tests). */
typedef void (*ik__rotations_lanes_fn)(struct ik_rotations_job *const *jobs, int n);
ik__rotations_lanes_fn ik__rotations_lanes_variant(int isa);

/* IK__SOA_LANES bone chains' rotations jobs at once, held as structure of arrays, one
 * chain a lane: each lane as ik__rotations_run_valid runs a job of `count` joints with
 * weight 1, twist memory, no twist limits, no tip match and identity base rotations.
 * Value i of lane e has its components at p[i][e], p[i][stride + e], p[i][2 * stride +
 * e] (and p[i][3 * stride + e]): before (the joints as read), solved (as solved),
 * rotations (the joints' world rotations, in as read, out turned) and memory (the twist
 * memory, in and out; the tip's is neither read nor written, and may be NULL). Only joints 0 .. count - 2 are
 * turned: the tip's rotation, which a bone chain that does not take its target's rotation never writes, is
 * left as it was. A lane whose bit in mask is clear is computed, not written. */
#define IK__SOA_LANES 8
#define IK__SOA_JOINTS 32
typedef struct ik__rotations_soa {
  int count, stride;
  unsigned mask;
  const ik_real *before[IK__SOA_JOINTS], *solved[IK__SOA_JOINTS];
  ik_real *rotations[IK__SOA_JOINTS], *memory[IK__SOA_JOINTS];
} ik__rotations_soa;
/* n (1 .. IK__SOA_SETS) sets of one count and stride at once (their steps interleaved). */
#define IK__SOA_SETS 4
void ik__rotations_run_soa(const ik__rotations_soa *sets, int n);
/* ik__rotations_run_soa for one instruction set, as ik__rotations_lanes_variant (3:
 * AVX-512F, doubles only). */
typedef void (*ik__rotations_soa_fn)(const ik__rotations_soa *sets, int n);
ik__rotations_soa_fn ik__rotations_soa_variant(int isa);

/* Up to IK__TWO_BONE_LANES two-bone limbs in structure-of-arrays form, lane e a limb: each
 * as ik_two_bone_run solves an ik_two_bone_job on those positions and target with weight
 * 1, softness 0, `tolerance`, and the pole when has_pole (the same pole flag for all
 * lanes), bit for bit (ik_two_bone_lanes_body.h). Reached is distance <= tolerance and
 * iterations 1, as the job says (ik__two_bone_lane_result). */
#define IK__TWO_BONE_LANES 8
typedef struct ik__two_bone_lanes {
  ik_real p[3][3][IK__TWO_BONE_LANES]; /* in/out: joint (start, mid, end), axis (x, y, z), lane */
  ik_real target[3][IK__TWO_BONE_LANES];
  ik_real pole[3][IK__TWO_BONE_LANES];  /* read when has_pole */
  ik_real distance[IK__TWO_BONE_LANES]; /* out: result.distance */
  ik_status status[IK__TWO_BONE_LANES]; /* out: ik_two_bone_run's (a refused lane's positions unchanged) */
  int n, has_pole;                      /* lanes used (1 .. 8); lanes >= n are neither read nor written */
  ik_real tolerance;
  unsigned redone; /* out: bit e set when lane e went through ik_two_bone_run (tests, benchmarks) */
} ik__two_bone_lanes;
void ik__two_bone_run_lanes(ik__two_bone_lanes *l);
/* Lane e's result as ik_two_bone_run leaves its job's: when the lane's status is IK_OK,
 * the distance, reached (distance <= tolerance) and one iteration into *result; else
 * *result untouched. Returns the lane's status. */
ik_status ik__two_bone_lane_result(const ik__two_bone_lanes *l, int e, ik_result *result);
/* One instruction set's version (0 baseline, 1 AVX2, 2 scalar one by one, 3 AVX-512F
 * for doubles), for tests; NULL when not built here or the processor lacks it. */
typedef void (*ik__two_bone_lanes_fn)(ik__two_bone_lanes *l);
ik__two_bone_lanes_fn ik__two_bone_lanes_variant(int isa);

#endif /* IK_INTERNAL_H */
