/*
 * ik_crowd_lanes_body.h: the crowd's steps across a group's lanes (ik_crowd.c), included
 * once per instruction set, with:
 *   CL_(x)   the names' suffix
 *   V, M     the real vector and the integer vector a comparison of two V gives
 *   VW       lanes in a V (IK_CROWD_LANES a multiple of it)
 *   VSQRT    square root of each lane of a V
 * Every step is ik_skeleton.c's and ik_math's, in their order, none fused (built with
 * -ffp-contract=off), so each lane has the scalar bits; a select is exact.
 */

#define LM_(x) CL_(x)
#define LM_W VW
#define LM_SQRT VSQRT
#include "ik_lanes_math_body.h"

static inline M CL_(lanes)(const int *flag) {
  M m;
  int e;
  for (e = 0; e < VW; e++) m[e] = flag[e] ? -1 : 0;
  return m;
}
static inline void CL_(st_mask)(int *flag, M m) {
  int e;
  for (e = 0; e < VW; e++) flag[e] = m[e] != 0;
}

/* Bone b's world transform from its parent p's and its locals: compute_world's
 * ik_quat_rotate, ik_vec3_add, ik_quat_mul and ik_quat_normalize. */
static void CL_(world)(crowd_bone *bone, int b, int p, ik_vec3 local) {
  int k;
  for (k = 0; k < IK_CROWD_LANES; k += VW) {
    const V qx = CL_(ld)(bone[p].rw[0] + k), qy = CL_(ld)(bone[p].rw[1] + k), qz = CL_(ld)(bone[p].rw[2] + k),
            qw = CL_(ld)(bone[p].rw[3] + k);
    const V lx = CL_(splat)(local.x), ly = CL_(splat)(local.y), lz = CL_(splat)(local.z);
    const V rx = CL_(ld)(bone[b].rl[0] + k), ry = CL_(ld)(bone[b].rl[1] + k), rz = CL_(ld)(bone[b].rl[2] + k),
            rw = CL_(ld)(bone[b].rl[3] + k);
    const V two = CL_(splat)(2);
    const V tx = (qy * lz - qz * ly) * two, ty = (qz * lx - qx * lz) * two, tz = (qx * ly - qy * lx) * two;
    const V mx = qw * rx + qx * rw + qy * rz - qz * ry, my = qw * ry - qx * rz + qy * rw + qz * rx,
            mz = qw * rz + qx * ry - qy * rx + qz * rw, mw = qw * rw - qx * rx - qy * ry - qz * rz;
    const V len2 = mx * mx + my * my + mz * mz + mw * mw;
    const M ok = (len2 > IK_TINY_LEN2) & ((len2 - len2) == (len2 - len2));
    const V inv = 1 / VSQRT(len2), zero = CL_(splat)(0);
    CL_(st)(bone[b].pw[0] + k, CL_(ld)(bone[p].pw[0] + k) + ((lx + tx * qw) + (qy * tz - qz * ty)));
    CL_(st)(bone[b].pw[1] + k, CL_(ld)(bone[p].pw[1] + k) + ((ly + ty * qw) + (qz * tx - qx * tz)));
    CL_(st)(bone[b].pw[2] + k, CL_(ld)(bone[p].pw[2] + k) + ((lz + tz * qw) + (qx * ty - qy * tx)));
    CL_(st)(bone[b].rw[0] + k, CL_(sel)(ok, mx * inv, zero));
    CL_(st)(bone[b].rw[1] + k, CL_(sel)(ok, my * inv, zero));
    CL_(st)(bone[b].rw[2] + k, CL_(sel)(ok, mz * inv, zero));
    CL_(st)(bone[b].rw[3] + k, CL_(sel)(ok, mw * inv, CL_(splat)(1)));
  }
}

/* Bone b's local rotation where write[e]: ik_skeleton_set_world_rotation's
 * normalize(conjugate(parent's world rotation, the identity's for a root) * normalize(q))
 * of the world rotations q (a component's lanes side by side). */
static void CL_(local)(crowd_bone *bone, int b, int p, const ik_real (*q)[IK_CROWD_LANES], const int *write) {
  int k, e;
  for (k = 0; k < IK_CROWD_LANES; k += VW) {
    const V one = CL_(splat)(1), zero = CL_(splat)(0);
    const V px = -(p >= 0 ? CL_(ld)(bone[p].rw[0] + k) : zero),
            py = -(p >= 0 ? CL_(ld)(bone[p].rw[1] + k) : zero),
            pz = -(p >= 0 ? CL_(ld)(bone[p].rw[2] + k) : zero),
            pw = p >= 0 ? CL_(ld)(bone[p].rw[3] + k) : one;
    const V ax = CL_(ld)(q[0] + k), ay = CL_(ld)(q[1] + k), az = CL_(ld)(q[2] + k), aw = CL_(ld)(q[3] + k);
    const V alen2 = ax * ax + ay * ay + az * az + aw * aw;
    const M aok = (alen2 > IK_TINY_LEN2) & ((alen2 - alen2) == (alen2 - alen2));
    const V ainv = 1 / VSQRT(alen2);
    const V bx = CL_(sel)(aok, ax * ainv, zero), by = CL_(sel)(aok, ay * ainv, zero),
            bz = CL_(sel)(aok, az * ainv, zero), bw = CL_(sel)(aok, aw * ainv, one);
    const V mx = pw * bx + px * bw + py * bz - pz * by, my = pw * by - px * bz + py * bw + pz * bx,
            mz = pw * bz + px * by - py * bx + pz * bw, mw = pw * bw - px * bx - py * by - pz * bz;
    const V len2 = mx * mx + my * my + mz * mz + mw * mw;
    const M ok = (len2 > IK_TINY_LEN2) & ((len2 - len2) == (len2 - len2));
    const V inv = 1 / VSQRT(len2);
    M w;
    for (e = 0; e < VW; e++) w[e] = write[k + e] ? -1 : 0;
    CL_(st)(bone[b].rl[0] + k, CL_(sel)(w, CL_(sel)(ok, mx * inv, zero), CL_(ld)(bone[b].rl[0] + k)));
    CL_(st)(bone[b].rl[1] + k, CL_(sel)(w, CL_(sel)(ok, my * inv, zero), CL_(ld)(bone[b].rl[1] + k)));
    CL_(st)(bone[b].rl[2] + k, CL_(sel)(w, CL_(sel)(ok, mz * inv, zero), CL_(ld)(bone[b].rl[2] + k)));
    CL_(st)(bone[b].rl[3] + k, CL_(sel)(w, CL_(sel)(ok, mw * inv, one), CL_(ld)(bone[b].rl[3] + k)));
  }
}

/* A point hung `offset` from bone b, as an ik_node's: ik_vec3_add(position,
 * ik_quat_rotate(rotation, offset)). */
static inline VV CL_(hung)(const crowd_bone *bone, int b, int k, ik_vec3 offset) {
  const VV at = {CL_(splat)(offset.x), CL_(splat)(offset.y), CL_(splat)(offset.z)};
  return CL_(v3_add)(CL_(ld_v)(bone[b].pw[0] + k, L_), CL_(q_rotate)(CL_(ld_q)(bone[b].rw[0] + k, L_), at));
}

/* gather_lane across the lanes: chain d of the group read from its bones into w (the
 * host's targets already in w->target), ok[e] cleared where the chain's gather would
 * refuse lane e. */
static void CL_(gather)(const crowd_bone *bone, const ik_crowd_chain_desc *d, lane_work *w, int *ok) {
  const int n = d->count;
  int k, i;
  for (k = 0; k < L_; k += VW) {
    const V tiny = CL_(splat)(IK_TINY_LEN2), max_coord = CL_(splat)(IK_REAL_MAX_COORD);
    VV prev = CL_(ld_v)(bone[d->bones[0]].pw[0] + k, L_), root = prev;
    V total = CL_(splat)(0), root_max;
    M good = CL_(lanes)(ok + k);
    QV frame;
    if (d->target_bone >= 0)
      CL_(put_v)(w->target[0] + k, L_, CL_(hung)(bone, d->target_bone, k, d->target_offset));
    for (i = 0; i < n; i++) {
      const QV r = CL_(ld_q)(bone[d->bones[i]].rw[0] + k, L_);
      CL_(put_q)(w->rot + (size_t)i * 4 * L_ + k, L_, r);
    }
    /* ik_measure_lengths; ik_chain_validate's positions, lengths and reach. */
    good &=
        (CL_(abs)(prev.x) <= max_coord) & (CL_(abs)(prev.y) <= max_coord) & (CL_(abs)(prev.z) <= max_coord);
    for (i = 1; i < n; i++) {
      const VV p = CL_(ld_v)(bone[d->bones[i]].pw[0] + k, L_);
      const V len2 = CL_(v3_dist2)(prev, p), len = VSQRT(len2);
      good &= (len2 > tiny) & (CL_(abs)(p.x) <= max_coord) & (CL_(abs)(p.y) <= max_coord) &
              (CL_(abs)(p.z) <= max_coord) & (CL_(abs)(len) <= max_coord) & (len > 0);
      CL_(st)(w->len + (size_t)(i - 1) * L_ + k, len);
      total += len;
      prev = p;
    }
    root_max = CL_(abs)(root.x);
    root_max = CL_(sel)(CL_(abs)(root.y) > root_max, CL_(abs)(root.y), root_max);
    root_max = CL_(sel)(CL_(abs)(root.z) > root_max, CL_(abs)(root.z), root_max);
    good &= root_max + total <= CL_(splat)(IK_REAL_MAX_REACH);
    frame = CL_(q_normalize)(CL_(q_mul)(CL_(q_normalize)(CL_(ld_q)(w->rot + k, L_)),
                                        CL_(q_inverse)(CL_(ld_q)(bone[d->bones[0]].rl[0] + k, L_))));
    CL_(put_q)(w->frame[0] + k, L_, frame);
    if (d->pole_bone >= 0) CL_(put_v)(w->pole[0] + k, L_, CL_(hung)(bone, d->pole_bone, k, d->pole_offset));
    CL_(st_mask)(ok + k, good);
  }
}

/* Where a bone chain's solver starts, across the lanes: the warm start laid out from
 * the root with the lengths as read, or the pose as read (start_pose). */
static void CL_(start)(const crowd_bone *bone, const ik_crowd_chain_desc *d, lane_work *w,
                       const ik_real *start, const int *has_warm) {
  int k, i;
  for (k = 0; k < L_; k += VW) {
    const M warm = CL_(lanes)(has_warm + k);
    const QV frame = CL_(ld_q)(w->frame[0] + k, L_);
    VV at = CL_(ld_v)(bone[d->bones[0]].pw[0] + k, L_);
    CL_(put_v)(w->pos + k, L_, at);
    for (i = 0; i + 1 < d->count; i++) {
      const VV dir = CL_(q_rotate)(frame, CL_(ld_v)(start + (size_t)i * 3 * L_ + k, L_));
      at = CL_(v3_madd)(at, dir, CL_(ld)(w->len + (size_t)i * L_ + k));
      CL_(put_v)
      (w->pos + (size_t)(i + 1) * 3 * L_ + k, L_,
       CL_(v3_sel)(warm, at, CL_(ld_v)(bone[d->bones[i + 1]].pw[0] + k, L_)));
    }
  }
}

/* finish's warm start across the lanes where done[e]: each solved bone's direction,
 * back in the frame. */
static void CL_(keep)(const ik_crowd_chain_desc *d, const lane_work *w, ik_real *start, const int *done) {
  int k, i;
  for (k = 0; k < L_; k += VW) {
    const M m = CL_(lanes)(done + k);
    const QV back = CL_(q_inverse)(CL_(ld_q)(w->frame[0] + k, L_));
    for (i = 0; i + 1 < d->count; i++) {
      const VV bone_ws = CL_(v3_sub)(CL_(ld_v)(w->pos + (size_t)(i + 1) * 3 * L_ + k, L_),
                                     CL_(ld_v)(w->pos + (size_t)i * 3 * L_ + k, L_));
      CL_(st_v)(start + (size_t)i * 3 * L_ + k, L_, CL_(q_rotate)(back, CL_(v3_normalize)(bone_ws)), m);
    }
  }
}

#undef VV
#undef QV
#undef LM_
#undef LM_W
#undef LM_SQRT
