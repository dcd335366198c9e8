/*
 * ik_two_bone_lanes_body.h: ik_two_bone_run over TL_W limbs at once, one a lane, for
 * ik__two_bone_run_lanes (ik_internal.h); included by ik_two_bone_lanes.c once per
 * instruction set, with:
 *   TL_NAME    the function's name
 *   V, M       the real vector and the integer vector a comparison of two V gives
 *   TL_W       lanes in a V
 *   TL_SQRT    square root of each lane of a V (correctly rounded, as ik_sqrt)
 *   TL_BITS    an M's lanes as bits of an int (lane e bit e set when all ones)
 * ik_math's steps on lanes are ik_lanes_math_body.h's, under the TL_ prefix.
 *
 * The kernel. A lane is a job of weight 1 and softness 0, so the solve is ik_two_bone.c's
 * without the blend and the soft reach (soften_distance returns the target's distance
 * when softness is 0). Every step below is ik_two_bone.c's and ik_math's, the same IEEE
 * operations in the same order (none fused: the core is built with -ffp-contract=off), so
 * a lane gives the scalar job's bits:
 *   - validation's common case: quick_valid's test, as a lane mask;
 *   - the aim, for a target off the start (a finite squared distance above IK_TINY_LEN2);
 *   - the goal distance clamped to the limb's range;
 *   - the bend direction, every rung of bend_direction's: the pole's part across the
 *     aim, else the mid joint's, else the knee's side, else ik_vec3_any_perpendicular,
 *     with across_axis's re-projection of a short part;
 *   - the law of cosines, the placement and ik_vec3_normalize_or (its fallback too:
 *     a select of the aim).
 * Branches are taken both ways and each lane keeps its own (a select is exact); a branch
 * only rare lanes take is computed when one of them does. A lane quick validation
 * refuses (NaN, infinity, out of range, a bone of no length), or whose target sits on
 * the start (limb_direction's aim), is flagged and redone by the caller with
 * ik_two_bone_run itself, which gives it its bits and status.
 * Settings out of range (the tolerance) send every lane there. Lanes past the count
 * compute a copy of the first and are never stored.
 */

#define LM_(x) TL_(x)
#define LM_W TL_W
#define LM_SQRT TL_SQRT
#include "ik_lanes_math_body.h"

static inline int TL_(any)(M m) { return TL_BITS(m) != 0; }
/* ik_vec3_normalize_or: the lane math's normalize gives zero where this gives the
 * fallback (the lower bone's direction falls back to the aim). */
static inline VV TL_(v3_normalize_or)(VV a, VV fallback) {
  const V len2 = TL_(v3_dot)(a, a);
  const M ok = (len2 > IK_TINY_LEN2) & TL_(finite)(len2);
  return TL_(v3_sel)(ok, TL_(v3_scale)(a, 1 / TL_SQRT(len2)), fallback);
}
static inline VV TL_(v3_project_on_plane)(VV a, VV n_unit) {
  return TL_(v3_madd)(a, n_unit, -TL_(v3_dot)(a, n_unit));
}

/* ik_two_bone.c's across_axis (inlined: a call passes its vectors through memory). */
static inline __attribute__((always_inline)) VV TL_(across_axis)(VV v, V v_len, VV axis_ws) {
  const VV off_ws = TL_(v3_project_on_plane)(v, axis_ws);
  const V off_len2 = TL_(v3_dot)(off_ws, off_ws);
  const V noise_len = 16 * IK_REAL_EPSILON * v_len;
  const VV none = {TL_(splat)(0), TL_(splat)(0), TL_(splat)(0)};
  const M is_zero = off_len2 <= noise_len * noise_len;
  const M long_part = (64 * off_len2 >= v_len * v_len) & (off_len2 > IK_TINY_LEN2);
  VV r = TL_(v3_scale)(off_ws, 1 / TL_SQRT(off_len2));
  if (TL_(any)(~is_zero & ~long_part))
    r = TL_(v3_sel)(long_part, r,
                    TL_(v3_normalize)(TL_(v3_project_on_plane)(TL_(v3_normalize)(off_ws), axis_ws)));
  return TL_(v3_sel)(is_zero, none, r);
}

static inline void TL_(load)(V *v, const ik_real *at, int k, int n) {
  int e;
  if (k + TL_W <= n) {
    memcpy(v, at + k, sizeof *v);
    return;
  }
  for (e = 0; e < TL_W; e++) (*v)[e] = at[k + e < n ? k + e : 0];
}
static inline VV TL_(load_v)(ik_real (*at)[IK__TWO_BONE_LANES], int k, int n) {
  VV r;
  TL_(load)(&r.x, at[0], k, n);
  TL_(load)(&r.y, at[1], k, n);
  TL_(load)(&r.z, at[2], k, n);
  return r;
}
/* The lanes below n not in `scalar`: a whole vector when it can (the common case). */
static inline void TL_(store)(ik_real *at, V v, int k, int n, int scalar) {
  int e;
  if (k + TL_W <= n && scalar == 0) {
    memcpy(at + k, &v, sizeof v);
    return;
  }
  for (e = 0; e < TL_W && k + e < n; e++)
    if (!(scalar >> e & 1)) at[k + e] = v[e];
}
static inline void TL_(store_v)(ik_real (*at)[IK__TWO_BONE_LANES], VV v, int k, int n, int scalar) {
  TL_(store)(at[0], v.x, k, n, scalar);
  TL_(store)(at[1], v.y, k, n, scalar);
  TL_(store)(at[2], v.z, k, n, scalar);
}
static inline void TL_(add_magnitudes)(VV *sums, VV v) {
  sums->x += TL_(abs)(v.x);
  sums->y += TL_(abs)(v.y);
  sums->z += TL_(abs)(v.z);
}

/* Lanes k .. k + TL_W - 1 of l (those below l->n); returns the lanes (bit e for lane
 * k + e) left for ik_two_bone_run, whose outputs it has not written. Lanes past n
 * compute a copy of lane 0 and are not stored. */
static int TL_NAME(ik__two_bone_lanes *l, int k) {
  const int n = l->n;
  const VV p0 = TL_(load_v)(l->p[0], k, n), p1 = TL_(load_v)(l->p[1], k, n), p2 = TL_(load_v)(l->p[2], k, n);
  const VV target = TL_(load_v)(l->target, k, n);
  const VV zero3 = {TL_(splat)(0), TL_(splat)(0), TL_(splat)(0)};
  const VV pole = l->has_pole ? TL_(load_v)(l->pole, k, n) : zero3;
  VV sums = zero3, bend_ws = zero3, start_target_ws, aim_ws, goal_ws, mid_dir_ws, solved_mid_ws, lower_dir_ws,
     end_ws;
  V upper_len2, lower_len2, upper_len, lower_len, reach, min_reach, root_max, target_len2, target_len;
  V goal_len, along, across, scale, scale_or_1, cos_start, sin_start, distance;
  M valid, scalar, bend_zero;
  int e, out = 0;

  /* quick_valid. */
  upper_len2 = TL_(v3_dist2)(p0, p1);
  lower_len2 = TL_(v3_dist2)(p1, p2);
  TL_(add_magnitudes)(&sums, p0);
  TL_(add_magnitudes)(&sums, p1);
  TL_(add_magnitudes)(&sums, p2);
  TL_(add_magnitudes)(&sums, target);
  if (l->has_pole) TL_(add_magnitudes)(&sums, pole);
  upper_len = TL_SQRT(upper_len2);
  lower_len = TL_SQRT(lower_len2);
  root_max = TL_(abs)(p0.x);
  root_max = TL_(sel)(TL_(abs)(p0.y) > root_max, TL_(abs)(p0.y), root_max);
  root_max = TL_(sel)(TL_(abs)(p0.z) > root_max, TL_(abs)(p0.z), root_max);
  valid = (TL_(abs)(sums.x) <= IK_REAL_MAX_COORD) & (TL_(abs)(sums.y) <= IK_REAL_MAX_COORD) &
          (TL_(abs)(sums.z) <= IK_REAL_MAX_COORD) & (upper_len2 > IK_TINY_LEN2) &
          (lower_len2 > IK_TINY_LEN2) & (root_max + (upper_len + lower_len) <= IK_REAL_MAX_REACH);

  /* solve: the aim. */
  reach = upper_len + lower_len;
  min_reach = TL_(abs)(upper_len - lower_len);
  start_target_ws = TL_(v3_sub)(target, p0);
  target_len2 = TL_(v3_dot)(start_target_ws, start_target_ws);
  target_len = TL_SQRT(target_len2);
  valid &= (target_len2 > IK_TINY_LEN2) & TL_(finite)(target_len2);
  aim_ws = TL_(v3_scale)(start_target_ws, 1 / target_len);

  goal_len = TL_(sel)(target_len < min_reach, min_reach, TL_(sel)(target_len > reach, reach, target_len));

  /* bend_direction: the pole's side, else the mid joint's, else the knee's, else any
   * perpendicular; each rung computed only when a lane needs it. */
  bend_zero = TL_(splat)(0) == TL_(splat)(0);
  if (l->has_pole) {
    const VV start_pole_ws = TL_(v3_sub)(pole, p0);
    bend_ws = TL_(across_axis)(start_pole_ws, TL_SQRT(TL_(v3_dot)(start_pole_ws, start_pole_ws)), aim_ws);
    bend_zero = TL_(v3_dot)(bend_ws, bend_ws) == 0;
  }
  if (TL_(any)(bend_zero & valid)) {
    const VV start_mid_ws = TL_(v3_sub)(p1, p0);
    const VV mid_bend_ws = TL_(across_axis)(start_mid_ws, upper_len, aim_ws);
    bend_ws = TL_(v3_sel)(bend_zero, mid_bend_ws, bend_ws);
    bend_zero &= TL_(v3_dot)(mid_bend_ws, mid_bend_ws) == 0;
    if (TL_(any)(bend_zero & valid)) {
      const VV knee_ws = TL_(across_axis)(start_mid_ws, upper_len, TL_(v3_normalize)(TL_(v3_sub)(p2, p0)));
      const VV knee_bend_ws = TL_(across_axis)(knee_ws, TL_SQRT(TL_(v3_dot)(knee_ws, knee_ws)), aim_ws);
      bend_ws = TL_(v3_sel)(bend_zero, knee_bend_ws, bend_ws);
      bend_zero &= TL_(v3_dot)(knee_bend_ws, knee_bend_ws) == 0;
      if (TL_(any)(bend_zero & valid))
        bend_ws = TL_(v3_sel)(bend_zero, TL_(any_perpendicular)(aim_ws), bend_ws);
    }
  }

  /* The law of cosines. */
  along = goal_len * goal_len + (upper_len - lower_len) * reach;
  across = TL_SQRT((reach + goal_len) * (reach - goal_len)) *
           TL_SQRT((goal_len + min_reach) * (goal_len - min_reach));
  scale = 2 * upper_len * goal_len;
  scale_or_1 = TL_(sel)(scale > 0, scale, TL_(splat)(1));
  cos_start = TL_(sel)(scale > 0, along / scale_or_1, TL_(splat)(0));
  sin_start = TL_(sel)(scale > 0, across / scale_or_1, TL_(splat)(1));

  /* Place. */
  goal_ws = TL_(v3_madd)(p0, aim_ws, goal_len);
  mid_dir_ws = TL_(v3_add)(TL_(v3_scale)(aim_ws, cos_start), TL_(v3_scale)(bend_ws, sin_start));
  solved_mid_ws = TL_(v3_madd)(p0, mid_dir_ws, upper_len);
  lower_dir_ws = TL_(v3_normalize_or)(TL_(v3_sub)(goal_ws, solved_mid_ws), aim_ws);
  end_ws = TL_(v3_madd)(solved_mid_ws, lower_dir_ws, lower_len);
  distance = TL_SQRT(TL_(v3_dist2)(end_ws, target));

  scalar = ~valid;
  out = TL_BITS(scalar) & ((1 << (n - k < TL_W ? n - k : TL_W)) - 1);
  TL_(store_v)(l->p[1], solved_mid_ws, k, n, out);
  TL_(store_v)(l->p[2], end_ws, k, n, out);
  TL_(store)(l->distance, distance, k, n, out);
  if (out == 0 && k + TL_W <= n)
    for (e = 0; e < TL_W; e++) l->status[k + e] = IK_OK;
  else
    for (e = 0; e < TL_W && k + e < n; e++)
      if (!(out >> e & 1)) l->status[k + e] = IK_OK;
  return out;
}

#undef VV
#undef QV
#undef LM_
#undef LM_W
#undef LM_SQRT
