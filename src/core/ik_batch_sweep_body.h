/*
 * ik_batch_sweep_body.h: the vector sweep over a lane group, written once and compiled
 * once per instruction set by ik_batch_sweep.c, which defines before including it:
 *
 *   SWEEP_NAME      the function's name
 *   SWEEP_TARGET    its target attribute (or nothing)
 *   SWEEP_V         a may_alias vector of SWEEP_W ik_real
 *   SWEEP_SQRT(v)   its lane-wise square root, correctly rounded as ik_sqrt
 *   SWEEP_BITS(c)   bit e set for each lane e where the comparison c holds
 *
 * Each lane computes what ik_fabrik.c's forward_pass and backward_pass compute, in the
 * same order: the same subtractions, the squared length summed x, y, then z, one square
 * root and one division, then the multiply-add (never fused: -ffp-contract=off). A step
 * whose bone has no length (bone_len2 <= IK_TINY_LEN2) is redone for its lane by the
 * scalar code, which picks the same fallback direction ik_fabrik.c picks.
 */

/* Vector k of row i of one of the arrays. */
#define SWEEP_AT(array, i, k) (((SWEEP_V *)(rows->array + (i)*lanes))[k])
#define SWEEP_LANES(array, k) (((SWEEP_V *)rows->array)[k])

SWEEP_TARGET static void SWEEP_NAME(ik__lane_rows *rows, int count, ik__lane_mask live) {
  const int lanes = rows->lanes, vectors = lanes / SWEEP_W;
  const ik__lane_mask vector_lanes = ((ik__lane_mask)1 << SWEEP_W) - 1;
  const ik_real tiny = IK_TINY_LEN2;
  int i, k;

  /* Forward: tip on the target, each joint pulled to its bone length from the next. */
  for (k = 0; k < vectors; k++) {
    SWEEP_AT(x, count - 1, k) = SWEEP_LANES(target_x, k);
    SWEEP_AT(y, count - 1, k) = SWEEP_LANES(target_y, k);
    SWEEP_AT(z, count - 1, k) = SWEEP_LANES(target_z, k);
  }
  for (i = count - 2; i >= 0; i--) {
    ik__lane_mask degenerate = 0;
    for (k = 0; k < vectors; k++) {
      const ik__lane_mask on = live >> (k * SWEEP_W) & vector_lanes;
      SWEEP_V next_x, next_y, next_z, bone_x, bone_y, bone_z, bone_len2, s;
      if (!on) continue;
      next_x = SWEEP_AT(x, i + 1, k);
      next_y = SWEEP_AT(y, i + 1, k);
      next_z = SWEEP_AT(z, i + 1, k);
      bone_x = SWEEP_AT(x, i, k) - next_x;
      bone_y = SWEEP_AT(y, i, k) - next_y;
      bone_z = SWEEP_AT(z, i, k) - next_z;
      bone_len2 = bone_x * bone_x + bone_y * bone_y + bone_z * bone_z;
      s = SWEEP_AT(len, i, k) / SWEEP_SQRT(bone_len2);
      SWEEP_AT(x, i, k) = next_x + bone_x * s;
      SWEEP_AT(y, i, k) = next_y + bone_y * s;
      SWEEP_AT(z, i, k) = next_z + bone_z * s;
      degenerate |= (~(ik__lane_mask)SWEEP_BITS(bone_len2 > tiny) & on) << (k * SWEEP_W);
    }
    for (; degenerate; degenerate &= degenerate - 1)
      ik__sweep_lane_forward_step(rows, count, __builtin_ctzl(degenerate), i);
  }

  /* Backward: root back on its anchor, each joint pulled out. */
  for (k = 0; k < vectors; k++) {
    SWEEP_AT(x, 0, k) = SWEEP_LANES(root_x, k);
    SWEEP_AT(y, 0, k) = SWEEP_LANES(root_y, k);
    SWEEP_AT(z, 0, k) = SWEEP_LANES(root_z, k);
  }
  for (i = 0; i + 1 < count; i++) {
    ik__lane_mask degenerate = 0;
    for (k = 0; k < vectors; k++) {
      const ik__lane_mask on = live >> (k * SWEEP_W) & vector_lanes;
      SWEEP_V prev_x, prev_y, prev_z, bone_x, bone_y, bone_z, bone_len2, s;
      if (!on) continue;
      prev_x = SWEEP_AT(x, i, k);
      prev_y = SWEEP_AT(y, i, k);
      prev_z = SWEEP_AT(z, i, k);
      bone_x = SWEEP_AT(x, i + 1, k) - prev_x;
      bone_y = SWEEP_AT(y, i + 1, k) - prev_y;
      bone_z = SWEEP_AT(z, i + 1, k) - prev_z;
      bone_len2 = bone_x * bone_x + bone_y * bone_y + bone_z * bone_z;
      s = SWEEP_AT(len, i, k) / SWEEP_SQRT(bone_len2);
      SWEEP_AT(x, i + 1, k) = prev_x + bone_x * s;
      SWEEP_AT(y, i + 1, k) = prev_y + bone_y * s;
      SWEEP_AT(z, i + 1, k) = prev_z + bone_z * s;
      degenerate |= (~(ik__lane_mask)SWEEP_BITS(bone_len2 > tiny) & on) << (k * SWEEP_W);
    }
    for (; degenerate; degenerate &= degenerate - 1)
      ik__sweep_lane_backward_step(rows, __builtin_ctzl(degenerate), i);
  }
}

#undef SWEEP_AT
#undef SWEEP_LANES
