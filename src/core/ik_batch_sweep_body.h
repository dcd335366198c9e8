/*
 * ik_batch_sweep_body.h: the vector sweep over a lane group, written once and compiled
 * once per instruction set by ik_batch_sweep.c, which defines before including it:
 *
 *   SWEEP_NAME      the function's name
 *   SWEEP_TARGET    its target attribute (or nothing)
 *   SWEEP_V         a may_alias vector of SWEEP_W ik_real
 *   SWEEP_M         the integer vector a comparison of two SWEEP_V gives
 *   SWEEP_SQRT(v)   its lane-wise square root, correctly rounded as ik_sqrt
 *   SWEEP_BITS(c)   bit e set for each lane e where the comparison c holds
 *
 * Each lane computes what ik_fabrik.c's forward_pass and backward_pass compute, in the
 * same order: the same subtractions, the squared length summed x, y, then z, one square
 * root and one division, then the multiply-add (never fused: -ffp-contract=off). A step
 * whose bone has no length (bone_len2 <= IK_TINY_LEN2) is redone for its lane by the
 * scalar code, which picks the same fallback direction ik_fabrik.c picks. Such steps are
 * rare, so a row only asks whether any live lane had one (one test a row, not one a
 * vector); each vector's squared lengths are kept aside to say which.
 */

/* Vector k of one of the lane arrays. */
#define SWEEP_LANES(array, k) (((SWEEP_V *)rows->array)[k])

SWEEP_TARGET static ik__lane_mask SWEEP_NAME(ik__lane_rows *rows, int count, ik__lane_mask live) {
  const int vectors = rows->lanes / SWEEP_W, all_bits = (1 << SWEEP_W) - 1;
  const ik__lane_mask vector_lanes = ((ik__lane_mask)1 << SWEEP_W) - 1;
  const ik_real tiny = IK_TINY_LEN2;
  SWEEP_V *const x = (SWEEP_V *)rows->x, *const y = (SWEEP_V *)rows->y, *const z = (SWEEP_V *)rows->z;
  const SWEEP_V *const len = (const SWEEP_V *)rows->len;
  SWEEP_V len2_row[IK__LANES / SWEEP_W]; /* this row's bone_len2, vector by vector */
  SWEEP_M dead[IK__LANES / SWEEP_W];     /* all ones in lanes outside live */
  SWEEP_M lane_bit;                      /* element e: 1 << e */
  int first = vectors, end = 0, i, k, e;
  ik__lane_mask checks = 0;

  /* The vectors from the first to the last with a live lane (all of them but while the
   * group drains); their dead lanes are computed too, and their steps never count as
   * degenerate. */
  for (e = 0; e < SWEEP_W; e++) lane_bit[e] = 1 << e;
  for (k = 0; k < vectors; k++) {
    const ik__lane_mask bits = live >> (k * SWEEP_W) & vector_lanes;
    dead[k] = (lane_bit & (int)bits) == 0;
    if (bits && k < first) first = k;
    if (bits) end = k + 1;
  }

  /* Forward: tip on the target, each joint pulled to its bone length from the next.
   * Vector k of row i is x[i * vectors + k]. */
  for (k = first; k < end; k++) {
    x[(count - 1) * vectors + k] = SWEEP_LANES(target_x, k);
    y[(count - 1) * vectors + k] = SWEEP_LANES(target_y, k);
    z[(count - 1) * vectors + k] = SWEEP_LANES(target_z, k);
  }
  for (i = count - 2; i >= 0; i--) {
    SWEEP_V *const xi = x + i * vectors, *const yi = y + i * vectors, *const zi = z + i * vectors;
    const SWEEP_V *const leni = len + i * vectors;
    SWEEP_M fine = ~(SWEEP_M){0};
    for (k = first; k < end; k++) {
      const SWEEP_V next_x = xi[vectors + k], next_y = yi[vectors + k], next_z = zi[vectors + k];
      const SWEEP_V bone_x = xi[k] - next_x, bone_y = yi[k] - next_y, bone_z = zi[k] - next_z;
      const SWEEP_V bone_len2 = bone_x * bone_x + bone_y * bone_y + bone_z * bone_z;
      const SWEEP_V s = leni[k] / SWEEP_SQRT(bone_len2);
      xi[k] = next_x + bone_x * s;
      yi[k] = next_y + bone_y * s;
      zi[k] = next_z + bone_z * s;
      len2_row[k] = bone_len2;
      fine &= (bone_len2 > tiny) | dead[k];
    }
    if (SWEEP_BITS(fine) != all_bits) redo_degenerate(rows, count, live, (const ik_real *)len2_row, 1, i);
  }

  /* Backward: root back on its anchor, each joint pulled out. */
  for (k = first; k < end; k++) {
    x[k] = SWEEP_LANES(root_x, k);
    y[k] = SWEEP_LANES(root_y, k);
    z[k] = SWEEP_LANES(root_z, k);
  }
  for (i = 0; i + 1 < count; i++) {
    SWEEP_V *const xi = x + i * vectors, *const yi = y + i * vectors, *const zi = z + i * vectors;
    const SWEEP_V *const leni = len + i * vectors;
    SWEEP_M fine = ~(SWEEP_M){0};
    for (k = first; k < end; k++) {
      const SWEEP_V prev_x = xi[k], prev_y = yi[k], prev_z = zi[k];
      const SWEEP_V bone_x = xi[vectors + k] - prev_x, bone_y = yi[vectors + k] - prev_y,
                    bone_z = zi[vectors + k] - prev_z;
      const SWEEP_V bone_len2 = bone_x * bone_x + bone_y * bone_y + bone_z * bone_z;
      const SWEEP_V s = leni[k] / SWEEP_SQRT(bone_len2);
      xi[vectors + k] = prev_x + bone_x * s;
      yi[vectors + k] = prev_y + bone_y * s;
      zi[vectors + k] = prev_z + bone_z * s;
      len2_row[k] = bone_len2;
      fine &= (bone_len2 > tiny) | dead[k];
    }
    if (SWEEP_BITS(fine) != all_bits) redo_degenerate(rows, count, live, (const ik_real *)len2_row, 0, i);
  }

  /* The tip's distance to the target, as ik__fabrik_next measures it, and whether that
   * sweep may be the last (ik__lane_rows' tol2, near2 and slow2). */
  for (k = first; k < end; k++) {
    const SWEEP_V dx = x[(count - 1) * vectors + k] - SWEEP_LANES(target_x, k);
    const SWEEP_V dy = y[(count - 1) * vectors + k] - SWEEP_LANES(target_y, k);
    const SWEEP_V dz = z[(count - 1) * vectors + k] - SWEEP_LANES(target_z, k);
    const SWEEP_V err2 = dx * dx + dy * dy + dz * dz, before2 = SWEEP_LANES(tip_err2, k);
    SWEEP_LANES(prev_err2, k) = before2;
    SWEEP_LANES(tip_err2, k) = err2;
    checks |=
        (ik__lane_mask)SWEEP_BITS((err2 <= SWEEP_LANES(tol2, k)) |
                                  ((err2 < SWEEP_LANES(near2, k)) & (err2 > SWEEP_LANES(slow2, k) * before2)))
        << (k * SWEEP_W);
  }
  return checks & live;
}

#undef SWEEP_LANES
