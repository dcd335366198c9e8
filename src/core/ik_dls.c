/*
 * Damped least squares (ik_dls.h). Stages of run():
 *   1. validate, then measure lengths when asked;
 *   2. out of reach: lay the chain straight towards the target, no iterations;
 *   3. already there: no iterations (warm start pays off here);
 *   4. settle: every bone put back at its length (coincident joints unfold); find the
 *      plane the pose lies in, if any;
 *   5. steps: solve for joint rotations that move the tip towards the target, apply
 *      them root to tip, then the shared constraint pass; convergence tested after each.
 *      A chain straight along the target's line (the error in J's null space) is bent
 *      first. The best pose so far is kept (ik__best);
 *   6. the best pose back when the last is worse, then the pole, then the result.
 *
 * Joint i (0 .. n - 2) is a ball joint: its three rotation axes are the world axes, and
 * turning about e_k moves the tip by e_k x r_i, r_i = tip - p_i. Hence
 *   J J^T = sum_i (|r_i|^2 I - r_i r_i^T)        (3x3, whatever n is)
 *   J^T y = (r_0 x y, r_1 x y, ...)             (no need to store J)
 * so an iteration is O(n) with no scratch memory. With the chain and target in a plane,
 * every r_i x y is normal to it (the planar property); the steps then turn about that
 * normal only, so the chain stays planar to rounding.
 */
#include "ik_dls.h"

#include <stddef.h>

#include "ik_dls_step.h"
#include "ik_internal.h"

/* The linearisation only holds for small turns: each step asks the tip to move at most
 * this fraction of the chain's length (the best measured: docs/design-notes.md). */
#define DLS_MAX_STEP_FRACTION ((ik_real)0.25)
void ik_dls_job_init(ik_dls_job *job, const ik_chain *chain, ik_vec3 target) {
  job->chain = *chain;
  job->target = target;
  job->tolerance = (ik_real)1e-3;
  job->max_iterations = 10;
  job->damping = (ik_real)0.05;
  ik__result_init(&job->result);
}

ik_status ik_dls_validate(const ik_dls_job *job, ik_error *err) {
  ik_status st = ik__validate_solve(&job->chain, job->target, job->tolerance, job->max_iterations, err);
  if (st != IK_OK) return st;
  if (!ik_real_is_finite(job->damping)) return ik__fail(err, IK_E_NOT_FINITE, "damping", -1);
  if (!(job->damping > 0)) return ik__fail(err, IK_E_PARAMETER, "damping", -1);
  return IK_OK;
}

/* Symmetric 3x3 matrix, the six distinct entries. */
typedef struct sym3 {
  ik_real xx, xy, xz, yy, yz, zz;
} sym3;

/* Solves a y = b for a symmetric positive definite `a` (Cholesky, written out).
 * `min_pivot` is a lower bound every pivot has in exact arithmetic (lambda^2 for
 * J J^T + lambda^2 I); clamping to it keeps rounding from taking a square root of a
 * negative. Returns 0, y untouched, when a pivot is still not positive (lambda^2
 * underflowed). */
static int solve_sym3(sym3 a, ik_vec3 b, ik_real min_pivot, ik_vec3 *y) {
  ik_real l11, l21, l31, l22, l32, l33, d2, d3;
  ik_vec3 z;
  if (!(a.xx > 0)) return 0;
  l11 = ik_sqrt(a.xx);
  l21 = a.xy / l11;
  l31 = a.xz / l11;
  d2 = a.yy - l21 * l21;
  if (d2 < min_pivot) d2 = min_pivot;
  if (!(d2 > 0)) return 0;
  l22 = ik_sqrt(d2);
  l32 = (a.yz - l31 * l21) / l22;
  d3 = a.zz - l31 * l31 - l32 * l32;
  if (d3 < min_pivot) d3 = min_pivot;
  if (!(d3 > 0)) return 0;
  l33 = ik_sqrt(d3);
  /* L z = b, then L^T y = z. */
  z.x = b.x / l11;
  z.y = (b.y - l21 * z.x) / l22;
  z.z = (b.z - l31 * z.x - l32 * z.y) / l33;
  y->z = z.z / l33;
  y->y = (z.y - l32 * y->z) / l22;
  y->x = (z.x - l21 * y->y - l31 * y->z) / l11;
  return 1;
}

static ik_vec3 sym3_mul(sym3 a, ik_vec3 v) {
  return ik_vec3_make(a.xx * v.x + a.xy * v.y + a.xz * v.z, a.xy * v.x + a.yy * v.y + a.yz * v.z,
                      a.xz * v.x + a.yz * v.y + a.zz * v.z);
}

/* J J^T for the current pose and tip (without the damping term). */
static sym3 jacobian_product(const ik_vec3 *p, int count) {
  const ik_vec3 tip_ws = p[count - 1];
  sym3 jjt;
  int i;
  jjt.xx = jjt.xy = jjt.xz = jjt.yy = jjt.yz = jjt.zz = 0;
  for (i = 0; i + 1 < count; i++) {
    ik_vec3 r = ik_vec3_sub(tip_ws, p[i]);
    ik_real r_len2 = ik_vec3_len2(r);
    jjt.xx += r_len2 - r.x * r.x;
    jjt.yy += r_len2 - r.y * r.y;
    jjt.zz += r_len2 - r.z * r.z;
    jjt.xy -= r.x * r.y;
    jjt.xz -= r.x * r.z;
    jjt.yz -= r.y * r.z;
  }
  return jjt;
}

/* Plans one step: y with (J J^T + lambda^2 I) y = e, e the tip error clamped to
 * max_step_len (zero when the solve fails). Returns whether the chain is stuck: the
 * error lies in J's null space (e^T J J^T e = sum_i |r_i x e|^2 is tiny only when every
 * r_i is nearly parallel to e) and the step, J J^T y, would barely move the tip. */
static int plan_step(const ik_vec3 *p, int count, ik_vec3 target, ik_real lambda2, ik_real max_step_len,
                     ik_vec3 *y) {
  const sym3 jjt = jacobian_product(p, count);
  sym3 damped = jjt;
  ik_vec3 err_ws = ik_vec3_sub(target, p[count - 1]);
  ik_real err_len2 = ik_vec3_len2(err_ws);
  ik_real trace = jjt.xx + jjt.yy + jjt.zz;
  if (err_len2 > max_step_len * max_step_len)
    err_ws = ik_vec3_scale(err_ws, max_step_len / ik_sqrt(err_len2));
  err_len2 = ik_vec3_len2(err_ws);
  damped.xx += lambda2;
  damped.yy += lambda2;
  damped.zz += lambda2;
  if (!solve_sym3(damped, err_ws, lambda2, y)) *y = ik_vec3_zero();
  return ik_vec3_dot(err_ws, sym3_mul(jjt, err_ws)) <= IK__DLS_NULL_SPACE_RATIO * trace * err_len2 &&
         ik_vec3_len2(sym3_mul(jjt, *y)) <= IK__DLS_STALL_FRACTION * IK__DLS_STALL_FRACTION * err_len2;
}

/* R_i, unnormalised (IK__DLS_SERIES_MAX_H2): the series for the small turns a step
 * nearly always asks, which spares the sine, cosine and normalised axis that were a
 * third of a refined FABRIK's polish step (and that the batch's lanes computed one lane
 * at a time). */
static ik_quat joint_turn(ik_vec3 dtheta) {
  const ik_vec3 h = ik_vec3_scale(dtheta, (ik_real)0.5);
  const ik_real h2 = ik_vec3_len2(h);
  if (h2 <= IK__DLS_SERIES_MAX_H2) {
    const ik_real s = 1 - h2 * ((ik_real)1 / 6);
    return ik_quat_make(h.x * s, h.y * s, h.z * s, 1 - h2 * (ik_real)0.5);
  }
  return ik_quat_axis_angle(dtheta, ik_vec3_len(dtheta));
}

/* Applies the planned step root to tip: dtheta_i = J_i^T y = r_i x y. Joint i's turn is
 * about a world axis of the old pose; its parents have turned by turn_ws meanwhile,
 * which carries that axis along, so bone i's new direction is turn_ws * R_i * (old
 * direction). Every joint is re-placed at its bone length: the step cannot change a
 * length, however large the turn. */
void ik__dls_apply_step(const ik_chain *chain, ik_vec3 y, ik_vec3 root_dir, ik_vec3 plane_n) {
  ik_vec3 *p = chain->positions;
  const int count = chain->count;
  const ik_vec3 tip_ws = p[count - 1];
  ik_quat turn_ws = ik_quat_identity();
  ik_vec3 old_ws = p[0]; /* joint i before the step; p[i] already holds the new one */
  ik_vec3 parent_dir = root_dir;
  int i;
  for (i = 0; i + 1 < count; i++) {
    ik_vec3 old_next_ws = p[i + 1];
    ik_vec3 dir_old = ik_vec3_normalize_or(ik_vec3_sub(old_next_ws, old_ws), parent_dir);
    ik_vec3 dtheta = ik_vec3_cross(ik_vec3_sub(tip_ws, old_ws), y);
    /* In a plane dtheta is along its normal in exact arithmetic: make it so exactly, or
     * rounding in the off-plane parts of r_i and y turns the chain out of its plane. */
    if (ik_vec3_len2(plane_n) > 0) dtheta = ik_vec3_scale(plane_n, ik_vec3_dot(dtheta, plane_n));
    turn_ws = ik_quat_normalize(ik_quat_mul(turn_ws, joint_turn(dtheta)));
    p[i + 1] = ik_vec3_madd(p[i], ik_quat_rotate(turn_ws, dir_old), chain->lengths[i]);
    parent_dir = dir_old;
    old_ws = old_next_ws;
  }
}

void ik__dls_begin(ik__dls_state *s, const ik_chain *chain, ik_vec3 target, ik_real damping, ik_vec3 root_dir,
                   ik_real total_len, int kinds) {
  /* Bending helps only a target the chain can reach: one nearer than folding allows is
   * best served by the folded line (and one bone cannot bend). */
  const int may_unstall =
      chain->count >= 3 && ik_vec3_dist(target, chain->positions[0]) > ik__fold_reach(chain, total_len);
  ik__dls_begin_known(s, chain, target, damping, root_dir, total_len, kinds, may_unstall);
}

void ik__dls_begin_known(ik__dls_state *s, const ik_chain *chain, ik_vec3 target, ik_real damping,
                         ik_vec3 root_dir, ik_real total_len, int kinds, int may_unstall) {
  ik__dls_begin_planeless(s, damping, root_dir, total_len, kinds, may_unstall);
  /* Fixed for the solve: turns about a fixed axis keep every point's height over the
   * plane exactly, so rounding cannot feed back into the axis. Re-found only when
   * something other than a step moved the chain. */
  s->plane_n = ik__plane_normal(chain->positions, chain->count, target, total_len);
}

void ik__dls_begin_planeless(ik__dls_state *s, ik_real damping, ik_vec3 root_dir, ik_real total_len,
                             int kinds, int may_unstall) {
  const ik_real lambda_len = damping * total_len;
  s->root_dir = root_dir;
  s->total_len = total_len;
  s->kinds = kinds;
  s->lambda2 = lambda_len * lambda_len;
  s->max_step_len = DLS_MAX_STEP_FRACTION * total_len;
  /* Below this distance "stuck" is rounding noise near the solution, not a straight
   * chain: bending it would only throw the solution away. */
  s->stuck_floor_len = 1024 * IK_REAL_EPSILON * total_len;
  s->may_unstall = may_unstall;
  s->stalls = 0;
  s->plane_n = ik_vec3_zero();
}

void ik__dls_step(ik__dls_state *s, const ik_chain *chain, ik_vec3 target) {
  const ik_vec3 *p = chain->positions;
  const int count = chain->count;
  ik_vec3 y;
  int stuck = plan_step(p, count, target, s->lambda2, s->max_step_len, &y);
  /* Stuck: bend first, so that the iteration still ends with a real step. */
  if (stuck && s->may_unstall && ik_vec3_dist(p[count - 1], target) > s->stuck_floor_len) {
    ik__unstall(chain, s->root_dir, s->stalls++);
    s->plane_n = ik__plane_normal(p, count, target, s->total_len);
    plan_step(p, count, target, s->lambda2, s->max_step_len, &y);
  }
  ik__dls_apply_step(chain, y, s->root_dir, s->plane_n);
  if (s->kinds) {
    ik__constrained_pass(chain, s->root_dir, s->kinds);
    s->plane_n = ik__plane_kept(p, count, target, s->plane_n, s->total_len);
  }
}

ik_status ik_dls_run(ik_dls_job *job) {
  const ik_chain *chain = &job->chain;
  ik_vec3 *p = chain->positions;
  const int count = chain->count;
  ik_status st = ik_dls_validate(job, NULL);
  ik_vec3 root_ws, root_dir;
  ik_real total_len, tolerance_len2;
  int kinds, iterations = 0;
  if (st != IK_OK) return st;

  ik__prepare_lengths(chain);
  root_ws = p[0];
  root_dir = ik__root_fallback(chain, job->target);
  total_len = ik__total_length(chain);
  tolerance_len2 = job->tolerance * job->tolerance;
  kinds = ik__constraint_kinds(chain);

  if (ik_vec3_dist2(job->target, root_ws) >= total_len * total_len) {
    ik__lay_straight(chain, job->target, kinds);
  } else if (ik_vec3_dist2(p[count - 1], job->target) > tolerance_len2) {
    ik__dls_state s;
    ik__best best;
    /* Settle: the steps turn bones, so each must have its length and a direction. */
    ik__constrained_pass(chain, root_dir, kinds);
    ik__dls_begin(&s, chain, job->target, job->damping, root_dir, total_len, kinds);
    ik__best_begin(&best, chain, 1);
    while (iterations < job->max_iterations) {
      ik__dls_step(&s, chain, job->target);
      iterations++;
      if (ik_vec3_dist2(p[count - 1], job->target) <= tolerance_len2) break;
      ik__best_offer(&best, chain, job->target);
    }
    ik__best_restore(&best, chain, job->target);
  }

  ik__finish_with_pole(chain, root_dir, kinds);
  ik__set_result(&job->result, chain, job->target, job->tolerance, iterations);
  return IK_OK;
}
