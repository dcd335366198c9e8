/*
 * ik_batch_polish_body.h: refined FABRIK's polish step (ik_dls.c's plan_step, then
 * ik__dls_apply_step, for chains without constraints) over a lane group, written once and
 * compiled once per instruction set by ik_batch_sweep.c, with the macros of
 * ik_batch_sweep_body.h and:
 *
 *   PLAN_NAME, APPLY_NAME   the two step functions' names
 *   PLANE_NAME              the plane-normal function's (ik__plane_normal over lanes)
 *   SWEEP_M                 the integer vector a comparison of SWEEP_V gives
 *
 * Each lane computes what ik_dls.c computes, in the same order. Its branches become
 * selects between both results, which gives the same bits: every IEEE operation on a
 * lane is still the one the scalar code would do. A joint's turn takes ik_dls.c's series
 * (IK__DLS_SERIES_MAX_H2), or for a large turn libm's sine and cosine, lane by lane.
 * The one branch that is not a select, bending a stuck chain (ik__unstall), is
 * left to the caller: plan returns the lanes that may be stuck, and the caller redoes
 * their whole step with ik__dls_step.
 */

#define POLISH_AT(array, i, k) (((SWEEP_V *)(rows->array + (i)*lanes))[k])
#define POLISH_LANES(array, k) (((SWEEP_V *)rows->array)[k])
#define POLISH_SELECT(m, a, b) ((SWEEP_V)((((SWEEP_M)(a)) & (m)) | (((SWEEP_M)(b)) & ~(m))))
#define POLISH_FINITE(v) (((v) - (v)) == ((v) - (v)))

SWEEP_TARGET static ik__lane_mask PLAN_NAME(ik__lane_rows *rows, int count, ik__lane_mask live) {
  const int lanes = rows->lanes, vectors = lanes / SWEEP_W, tip = count - 1;
  const ik__lane_mask vector_lanes = ((ik__lane_mask)1 << SWEEP_W) - 1;
  ik__lane_mask stuck = 0;
  int i, k;
  for (k = 0; k < vectors; k++) {
    const ik__lane_mask on = live >> (k * SWEEP_W) & vector_lanes;
    const SWEEP_V zero = {0};
    SWEEP_V tip_x, tip_y, tip_z, xx, xy, xz, yy, yz, zz, err_x, err_y, err_z, err_len2, trace, max_len, scale;
    SWEEP_V lambda2, l11, l21, l31, l22, l32, l33, d2, d3, z_x, z_y, z_z, y_x, y_y, y_z, je_x, je_y, je_z;
    SWEEP_M clamp, solved, null_space, stalled;
    if (!on) continue;
    tip_x = POLISH_AT(x, tip, k);
    tip_y = POLISH_AT(y, tip, k);
    tip_z = POLISH_AT(z, tip, k);
    /* jacobian_product */
    xx = xy = xz = yy = yz = zz = zero;
    for (i = 0; i + 1 < count; i++) {
      const SWEEP_V r_x = tip_x - POLISH_AT(x, i, k), r_y = tip_y - POLISH_AT(y, i, k),
                    r_z = tip_z - POLISH_AT(z, i, k);
      const SWEEP_V r_len2 = r_x * r_x + r_y * r_y + r_z * r_z;
      xx += r_len2 - r_x * r_x;
      yy += r_len2 - r_y * r_y;
      zz += r_len2 - r_z * r_z;
      xy -= r_x * r_y;
      xz -= r_x * r_z;
      yz -= r_y * r_z;
    }
    /* plan_step: the error, clamped to the longest step */
    err_x = POLISH_LANES(target_x, k) - tip_x;
    err_y = POLISH_LANES(target_y, k) - tip_y;
    err_z = POLISH_LANES(target_z, k) - tip_z;
    err_len2 = err_x * err_x + err_y * err_y + err_z * err_z;
    trace = xx + yy + zz;
    max_len = POLISH_LANES(max_step, k);
    clamp = err_len2 > max_len * max_len;
    scale = max_len / SWEEP_SQRT(err_len2);
    err_x = POLISH_SELECT(clamp, err_x * scale, err_x);
    err_y = POLISH_SELECT(clamp, err_y * scale, err_y);
    err_z = POLISH_SELECT(clamp, err_z * scale, err_z);
    err_len2 = err_x * err_x + err_y * err_y + err_z * err_z;
    lambda2 = POLISH_LANES(floor2, k) + POLISH_LANES(err2, k);
    /* solve_sym3 on J J^T + lambda^2 I */
    solved = xx + lambda2 > 0;
    l11 = SWEEP_SQRT(xx + lambda2);
    l21 = xy / l11;
    l31 = xz / l11;
    d2 = yy + lambda2 - l21 * l21;
    d2 = POLISH_SELECT(d2 < lambda2, lambda2, d2);
    solved &= d2 > 0;
    l22 = SWEEP_SQRT(d2);
    l32 = (yz - l31 * l21) / l22;
    d3 = zz + lambda2 - l31 * l31 - l32 * l32;
    d3 = POLISH_SELECT(d3 < lambda2, lambda2, d3);
    solved &= d3 > 0;
    l33 = SWEEP_SQRT(d3);
    z_x = err_x / l11;
    z_y = (err_y - l21 * z_x) / l22;
    z_z = (err_z - l31 * z_x - l32 * z_y) / l33;
    y_z = z_z / l33;
    y_y = (z_y - l32 * y_z) / l22;
    y_x = (z_x - l21 * y_y - l31 * y_z) / l11;
    POLISH_LANES(step_x, k) = POLISH_SELECT(solved, y_x, zero);
    POLISH_LANES(step_y, k) = POLISH_SELECT(solved, y_y, zero);
    POLISH_LANES(step_z, k) = POLISH_SELECT(solved, y_z, zero);
    y_x = POLISH_LANES(step_x, k);
    y_y = POLISH_LANES(step_y, k);
    y_z = POLISH_LANES(step_z, k);
    /* stuck: the error in J's null space, and a step that would barely move the tip */
    je_x = xx * err_x + xy * err_y + xz * err_z;
    je_y = xy * err_x + yy * err_y + yz * err_z;
    je_z = xz * err_x + yz * err_y + zz * err_z;
    null_space = err_x * je_x + err_y * je_y + err_z * je_z <= IK__DLS_NULL_SPACE_RATIO * trace * err_len2;
    je_x = xx * y_x + xy * y_y + xz * y_z;
    je_y = xy * y_x + yy * y_y + yz * y_z;
    je_z = xz * y_x + yz * y_y + zz * y_z;
    stalled =
        je_x * je_x + je_y * je_y + je_z * je_z <= IK__DLS_STALL_FRACTION * IK__DLS_STALL_FRACTION * err_len2;
    stuck |= ((ik__lane_mask)SWEEP_BITS(null_space & stalled) & on) << (k * SWEEP_W);
  }
  return stuck;
}

SWEEP_TARGET static void APPLY_NAME(ik__lane_rows *rows, int count, ik__lane_mask live) {
  const int lanes = rows->lanes, vectors = lanes / SWEEP_W, tip = count - 1;
  const ik__lane_mask vector_lanes = ((ik__lane_mask)1 << SWEEP_W) - 1;
  const ik_real tiny = IK_TINY_LEN2;
  int i, k, e;
  for (k = 0; k < vectors; k++) {
    const ik__lane_mask on = live >> (k * SWEEP_W) & vector_lanes;
    const SWEEP_V zero = {0};
    SWEEP_M store = {0}, planar;
    SWEEP_V tip_x, tip_y, tip_z, old_x, old_y, old_z, new_x, new_y, new_z, parent_x, parent_y, parent_z;
    SWEEP_V y_x, y_y, y_z, n_x, n_y, n_z, turn_x, turn_y, turn_z, turn_w;
    if (!on) continue;
    for (e = 0; e < SWEEP_W; e++) store[e] = (on >> e & 1) ? -1 : 0;
    tip_x = POLISH_AT(x, tip, k);
    tip_y = POLISH_AT(y, tip, k);
    tip_z = POLISH_AT(z, tip, k);
    old_x = new_x = POLISH_AT(x, 0, k);
    old_y = new_y = POLISH_AT(y, 0, k);
    old_z = new_z = POLISH_AT(z, 0, k);
    parent_x = POLISH_LANES(root_dir_x, k);
    parent_y = POLISH_LANES(root_dir_y, k);
    parent_z = POLISH_LANES(root_dir_z, k);
    y_x = POLISH_LANES(step_x, k);
    y_y = POLISH_LANES(step_y, k);
    y_z = POLISH_LANES(step_z, k);
    n_x = POLISH_LANES(plane_x, k);
    n_y = POLISH_LANES(plane_y, k);
    n_z = POLISH_LANES(plane_z, k);
    planar = n_x * n_x + n_y * n_y + n_z * n_z > 0;
    turn_x = turn_y = turn_z = zero;
    turn_w = zero + 1;
    for (i = 0; i + 1 < count; i++) {
      const SWEEP_V next_x = POLISH_AT(x, i + 1, k), next_y = POLISH_AT(y, i + 1, k),
                    next_z = POLISH_AT(z, i + 1, k);
      SWEEP_V d_x = next_x - old_x, d_y = next_y - old_y, d_z = next_z - old_z, len2, inv, r_x, r_y, r_z;
      SWEEP_V dt_x, dt_y, dt_z, along, h_x, h_y, h_z, h2, s, q_x, q_y, q_z, q_w;
      SWEEP_V m_x, m_y, m_z, m_w, t_x, t_y, t_z;
      SWEEP_M ok, large;
      /* dir_old: ik_vec3_normalize_or(next - old, parent_dir) */
      len2 = d_x * d_x + d_y * d_y + d_z * d_z;
      ok = (len2 > tiny) & POLISH_FINITE(len2);
      inv = 1 / SWEEP_SQRT(len2);
      d_x = POLISH_SELECT(ok, d_x * inv, parent_x);
      d_y = POLISH_SELECT(ok, d_y * inv, parent_y);
      d_z = POLISH_SELECT(ok, d_z * inv, parent_z);
      /* dtheta = (tip - old) x y, onto the plane's normal when there is a plane */
      r_x = tip_x - old_x;
      r_y = tip_y - old_y;
      r_z = tip_z - old_z;
      dt_x = r_y * y_z - r_z * y_y;
      dt_y = r_z * y_x - r_x * y_z;
      dt_z = r_x * y_y - r_y * y_x;
      along = dt_x * n_x + dt_y * n_y + dt_z * n_z;
      dt_x = POLISH_SELECT(planar, n_x * along, dt_x);
      dt_y = POLISH_SELECT(planar, n_y * along, dt_y);
      dt_z = POLISH_SELECT(planar, n_z * along, dt_z);
      /* ik_dls.c's joint_turn: the series, or for the lanes of a large turn
       * ik_quat_axis_angle(dtheta, |dtheta|), its sine and cosine lane by lane */
      h_x = dt_x * (ik_real)0.5;
      h_y = dt_y * (ik_real)0.5;
      h_z = dt_z * (ik_real)0.5;
      h2 = h_x * h_x + h_y * h_y + h_z * h_z;
      s = 1 - h2 * ((ik_real)1 / 6);
      q_x = h_x * s;
      q_y = h_y * s;
      q_z = h_z * s;
      q_w = 1 - h2 * (ik_real)0.5;
      large = ~(h2 <= IK__DLS_SERIES_MAX_H2);
      if (SWEEP_BITS(large) & (int)on) {
        SWEEP_V angle, half, sin_half, cos_half, a_x, a_y, a_z;
        SWEEP_M identity;
        len2 = dt_x * dt_x + dt_y * dt_y + dt_z * dt_z;
        angle = SWEEP_SQRT(len2);
        ok = (len2 > tiny) & POLISH_FINITE(len2);
        inv = 1 / angle;
        a_x = POLISH_SELECT(ok, dt_x * inv, zero);
        a_y = POLISH_SELECT(ok, dt_y * inv, zero);
        a_z = POLISH_SELECT(ok, dt_z * inv, zero);
        half = angle * (ik_real)0.5;
        sin_half = zero;
        cos_half = zero + 1;
        for (e = 0; e < SWEEP_W; e++) {
          if (!(on >> e & 1) || !large[e] || half[e] == 0) continue; /* sin(+0) is +0, cos(+0) 1 */
          sin_half[e] = ik_sin(half[e]);
          cos_half[e] = ik_cos(half[e]);
        }
        identity = a_x * a_x + a_y * a_y + a_z * a_z == 0;
        q_x = POLISH_SELECT(large, POLISH_SELECT(identity, zero, a_x * sin_half), q_x);
        q_y = POLISH_SELECT(large, POLISH_SELECT(identity, zero, a_y * sin_half), q_y);
        q_z = POLISH_SELECT(large, POLISH_SELECT(identity, zero, a_z * sin_half), q_z);
        q_w = POLISH_SELECT(large, POLISH_SELECT(identity, zero + 1, cos_half), q_w);
      }
      /* turn = ik_quat_normalize(turn * q) */
      m_x = turn_w * q_x + turn_x * q_w + turn_y * q_z - turn_z * q_y;
      m_y = turn_w * q_y - turn_x * q_z + turn_y * q_w + turn_z * q_x;
      m_z = turn_w * q_z + turn_x * q_y - turn_y * q_x + turn_z * q_w;
      m_w = turn_w * q_w - turn_x * q_x - turn_y * q_y - turn_z * q_z;
      len2 = m_x * m_x + m_y * m_y + m_z * m_z + m_w * m_w;
      ok = (len2 > tiny) & POLISH_FINITE(len2);
      inv = 1 / SWEEP_SQRT(len2);
      turn_x = POLISH_SELECT(ok, m_x * inv, zero);
      turn_y = POLISH_SELECT(ok, m_y * inv, zero);
      turn_z = POLISH_SELECT(ok, m_z * inv, zero);
      turn_w = POLISH_SELECT(ok, m_w * inv, zero + 1);
      /* p[i + 1] = p[i] + ik_quat_rotate(turn, dir_old) * len[i] */
      t_x = (turn_y * d_z - turn_z * d_y) * 2;
      t_y = (turn_z * d_x - turn_x * d_z) * 2;
      t_z = (turn_x * d_y - turn_y * d_x) * 2;
      new_x = new_x + (d_x + t_x * turn_w + (turn_y * t_z - turn_z * t_y)) * POLISH_AT(len, i, k);
      new_y = new_y + (d_y + t_y * turn_w + (turn_z * t_x - turn_x * t_z)) * POLISH_AT(len, i, k);
      new_z = new_z + (d_z + t_z * turn_w + (turn_x * t_y - turn_y * t_x)) * POLISH_AT(len, i, k);
      POLISH_AT(x, i + 1, k) = POLISH_SELECT(store, new_x, next_x);
      POLISH_AT(y, i + 1, k) = POLISH_SELECT(store, new_y, next_y);
      POLISH_AT(z, i + 1, k) = POLISH_SELECT(store, new_z, next_z);
      parent_x = d_x;
      parent_y = d_y;
      parent_z = d_z;
      old_x = next_x;
      old_y = next_y;
      old_z = next_z;
    }
  }
}

/* ik__plane_normal (ik_turn.c) of each lane of `live` into plane_x, y, z, from its
 * joints, target and total: the same operations in the same order. Its branches are
 * selects: a point replaces the axis, or an arm the normal, only where it is strictly
 * farther, as in the scalar loops, and every test the scalar code returns early on
 * selects the zero vector at the end. Lanes outside live keep their planes. */
SWEEP_TARGET static void PLANE_NAME(ik__lane_rows *rows, int count, ik__lane_mask live) {
  const int lanes = rows->lanes, vectors = lanes / SWEEP_W;
  const ik__lane_mask vector_lanes = ((ik__lane_mask)1 << SWEEP_W) - 1;
  const ik_real tiny = IK_TINY_LEN2, line2 = IK__LINE_FRACTION * IK__LINE_FRACTION;
  const ik_real flat_scale = IK__FLAT_EPSILONS * IK_REAL_EPSILON;
  int j, k, e;
  for (k = 0; k < vectors; k++) {
    const ik__lane_mask on = live >> (k * SWEEP_W) & vector_lanes;
    const SWEEP_V zero = {0};
    SWEEP_M store = {0}, keep, flat = ~(SWEEP_M){0};
    SWEEP_V root_x, root_y, root_z, a_x, a_y, a_z, axis_len, size, axis_len2, best2, n_x, n_y, n_z, n_len2,
        inv, flat_len;
    if (!on) continue;
    for (e = 0; e < SWEEP_W; e++) store[e] = (on >> e & 1) ? -1 : 0;
    root_x = POLISH_AT(x, 0, k);
    root_y = POLISH_AT(y, 0, k);
    root_z = POLISH_AT(z, 0, k);
    a_x = POLISH_LANES(target_x, k) - root_x;
    a_y = POLISH_LANES(target_y, k) - root_y;
    a_z = POLISH_LANES(target_z, k) - root_z;
    axis_len = SWEEP_SQRT(a_x * a_x + a_y * a_y + a_z * a_z);
    size = POLISH_LANES(total, k) + axis_len;
    for (j = 1; j < count; j++) {
      const SWEEP_V d_x = POLISH_AT(x, j, k) - root_x, d_y = POLISH_AT(y, j, k) - root_y,
                    d_z = POLISH_AT(z, j, k) - root_z;
      const SWEEP_M farther = d_x * d_x + d_y * d_y + d_z * d_z > a_x * a_x + a_y * a_y + a_z * a_z;
      a_x = POLISH_SELECT(farther, d_x, a_x);
      a_y = POLISH_SELECT(farther, d_y, a_y);
      a_z = POLISH_SELECT(farther, d_z, a_z);
    }
    axis_len2 = a_x * a_x + a_y * a_y + a_z * a_z;
    best2 = n_x = n_y = n_z = zero;
    for (j = 0; j <= count; j++) {
      const SWEEP_V v_x = (j < count ? POLISH_AT(x, j, k) : POLISH_LANES(target_x, k)) - root_x;
      const SWEEP_V v_y = (j < count ? POLISH_AT(y, j, k) : POLISH_LANES(target_y, k)) - root_y;
      const SWEEP_V v_z = (j < count ? POLISH_AT(z, j, k) : POLISH_LANES(target_z, k)) - root_z;
      const SWEEP_V arm_x = a_y * v_z - a_z * v_y, arm_y = a_z * v_x - a_x * v_z,
                    arm_z = a_x * v_y - a_y * v_x;
      const SWEEP_V arm2 = arm_x * arm_x + arm_y * arm_y + arm_z * arm_z;
      const SWEEP_M better = arm2 > best2;
      best2 = POLISH_SELECT(better, arm2, best2);
      n_x = POLISH_SELECT(better, arm_x, n_x);
      n_y = POLISH_SELECT(better, arm_y, n_y);
      n_z = POLISH_SELECT(better, arm_z, n_z);
    }
    keep = best2 > line2 * size * size * axis_len2;
    /* ik_vec3_normalize (a normal too short is zero, and zero is flat) */
    n_len2 = n_x * n_x + n_y * n_y + n_z * n_z;
    inv = 1 / SWEEP_SQRT(n_len2);
    n_x = POLISH_SELECT((n_len2 > tiny) & POLISH_FINITE(n_len2), n_x * inv, zero);
    n_y = POLISH_SELECT((n_len2 > tiny) & POLISH_FINITE(n_len2), n_y * inv, zero);
    n_z = POLISH_SELECT((n_len2 > tiny) & POLISH_FINITE(n_len2), n_z * inv, zero);
    /* flat_in, with flat_len_of's |target - root| (the first axis' length) */
    flat_len = flat_scale * (POLISH_LANES(total, k) + axis_len);
    for (j = 0; j <= count; j++) {
      const SWEEP_V v_x = (j < count ? POLISH_AT(x, j, k) : POLISH_LANES(target_x, k)) - root_x;
      const SWEEP_V v_y = (j < count ? POLISH_AT(y, j, k) : POLISH_LANES(target_y, k)) - root_y;
      const SWEEP_V v_z = (j < count ? POLISH_AT(z, j, k) : POLISH_LANES(target_z, k)) - root_z;
      const SWEEP_V off = v_x * n_x + v_y * n_y + v_z * n_z;
      flat &= ~((off > flat_len) | (-off > flat_len));
    }
    keep &= flat & store;
    POLISH_LANES(plane_x, k) = POLISH_SELECT(keep, n_x, POLISH_SELECT(store, zero, POLISH_LANES(plane_x, k)));
    POLISH_LANES(plane_y, k) = POLISH_SELECT(keep, n_y, POLISH_SELECT(store, zero, POLISH_LANES(plane_y, k)));
    POLISH_LANES(plane_z, k) = POLISH_SELECT(keep, n_z, POLISH_SELECT(store, zero, POLISH_LANES(plane_z, k)));
  }
}

#undef POLISH_AT
#undef POLISH_LANES
#undef POLISH_SELECT
#undef POLISH_FINITE
