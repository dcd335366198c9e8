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

static inline V CL_(load)(const ik_real *a) {
  V v;
  memcpy(&v, a, sizeof v);
  return v;
}
static inline void CL_(store)(ik_real *a, V v) { memcpy(a, &v, sizeof v); }
static inline V CL_(splat)(ik_real s) {
  V v;
  int e;
  for (e = 0; e < VW; e++) v[e] = s;
  return v;
}
static inline V CL_(sel)(M m, V a, V b) { return (V)(((M)a & m) | ((M)b & ~m)); }

/* Bone b's world transform from its parent p's and its locals: compute_world's
 * ik_quat_rotate, ik_vec3_add, ik_quat_mul and ik_quat_normalize. */
static void CL_(world)(crowd_bone *bone, int b, int p) {
  int k;
  for (k = 0; k < IK_CROWD_LANES; k += VW) {
    const V qx = CL_(load)(bone[p].rw[0] + k), qy = CL_(load)(bone[p].rw[1] + k),
            qz = CL_(load)(bone[p].rw[2] + k), qw = CL_(load)(bone[p].rw[3] + k);
    const V lx = CL_(load)(bone[b].pl[0] + k), ly = CL_(load)(bone[b].pl[1] + k),
            lz = CL_(load)(bone[b].pl[2] + k);
    const V rx = CL_(load)(bone[b].rl[0] + k), ry = CL_(load)(bone[b].rl[1] + k),
            rz = CL_(load)(bone[b].rl[2] + k), rw = CL_(load)(bone[b].rl[3] + k);
    const V two = CL_(splat)(2);
    const V tx = (qy * lz - qz * ly) * two, ty = (qz * lx - qx * lz) * two, tz = (qx * ly - qy * lx) * two;
    const V mx = qw * rx + qx * rw + qy * rz - qz * ry, my = qw * ry - qx * rz + qy * rw + qz * rx,
            mz = qw * rz + qx * ry - qy * rx + qz * rw, mw = qw * rw - qx * rx - qy * ry - qz * rz;
    const V len2 = mx * mx + my * my + mz * mz + mw * mw;
    const M ok = (len2 > IK_TINY_LEN2) & ((len2 - len2) == (len2 - len2));
    const V inv = 1 / VSQRT(len2), zero = CL_(splat)(0);
    CL_(store)(bone[b].pw[0] + k, CL_(load)(bone[p].pw[0] + k) + ((lx + tx * qw) + (qy * tz - qz * ty)));
    CL_(store)(bone[b].pw[1] + k, CL_(load)(bone[p].pw[1] + k) + ((ly + ty * qw) + (qz * tx - qx * tz)));
    CL_(store)(bone[b].pw[2] + k, CL_(load)(bone[p].pw[2] + k) + ((lz + tz * qw) + (qx * ty - qy * tx)));
    CL_(store)(bone[b].rw[0] + k, CL_(sel)(ok, mx * inv, zero));
    CL_(store)(bone[b].rw[1] + k, CL_(sel)(ok, my * inv, zero));
    CL_(store)(bone[b].rw[2] + k, CL_(sel)(ok, mz * inv, zero));
    CL_(store)(bone[b].rw[3] + k, CL_(sel)(ok, mw * inv, CL_(splat)(1)));
  }
}

/* Bone b's local rotation where write[e]: ik_skeleton_set_world_rotation's
 * normalize(conjugate(parent's world rotation, the identity's for a root) * normalize(q))
 * of the world rotations q (a component's lanes side by side). */
static void CL_(local)(crowd_bone *bone, int b, int p, const ik_real (*q)[IK_CROWD_LANES], const int *write) {
  int k, e;
  for (k = 0; k < IK_CROWD_LANES; k += VW) {
    const V one = CL_(splat)(1), zero = CL_(splat)(0);
    const V px = -(p >= 0 ? CL_(load)(bone[p].rw[0] + k) : zero),
            py = -(p >= 0 ? CL_(load)(bone[p].rw[1] + k) : zero),
            pz = -(p >= 0 ? CL_(load)(bone[p].rw[2] + k) : zero),
            pw = p >= 0 ? CL_(load)(bone[p].rw[3] + k) : one;
    const V ax = CL_(load)(q[0] + k), ay = CL_(load)(q[1] + k), az = CL_(load)(q[2] + k),
            aw = CL_(load)(q[3] + k);
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
    CL_(store)(bone[b].rl[0] + k, CL_(sel)(w, CL_(sel)(ok, mx * inv, zero), CL_(load)(bone[b].rl[0] + k)));
    CL_(store)(bone[b].rl[1] + k, CL_(sel)(w, CL_(sel)(ok, my * inv, zero), CL_(load)(bone[b].rl[1] + k)));
    CL_(store)(bone[b].rl[2] + k, CL_(sel)(w, CL_(sel)(ok, mz * inv, zero), CL_(load)(bone[b].rl[2] + k)));
    CL_(store)(bone[b].rl[3] + k, CL_(sel)(w, CL_(sel)(ok, mw * inv, one), CL_(load)(bone[b].rl[3] + k)));
  }
}
