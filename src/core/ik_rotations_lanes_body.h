/*
 * ik_rotations_lanes_body.h: ik__rotations_run_valid over RL_W jobs at once, one a lane,
 * included by ik_rotations_lanes.c once per instruction set, with:
 *   RL_NAME    the function's name
 *   RL_TARGET  its target attribute (or nothing)
 *   V, M       the real vector and the integer vector a comparison of two V gives
 *   RL_W       lanes in a V
 *   RL_SQRT    square root of each lane of a V
 * Every step is ik_rotations.c's and ik_math's, in their order; branches are both taken
 * and each lane keeps its own (a select is exact).
 */

#define LM_(x) RL_(x)
#define LM_W RL_W
#define LM_SQRT RL_SQRT
#include "ik_lanes_math_body.h"

/* ik_quat_swing_twist. */
static inline void RL_(swing_twist)(QV q, VV axis, QV *swing, QV *twist) {
  const VV n = RL_(v3_normalize)(axis);
  const V p = q.x * n.x + q.y * n.y + q.z * n.z;
  QV tw = {n.x * p, n.y * p, n.z * p, q.w};
  tw = RL_(q_sel)(RL_(v3_dot)(n, n) == 0, RL_(q_identity)(), RL_(q_normalize)(tw));
  *twist = tw;
  *swing = RL_(q_mul)(q, RL_(q_conjugate)(tw));
}

/* ik_rotations.c's bleed_twist. */
static inline QV RL_(bleed_twist)(QV tw, VV axis, V cb, V sb) {
  V p = tw.x * axis.x + tw.y * axis.y + tw.z * axis.z, w = tw.w, ap, ps, ws;
  const M flip = (w < 0) | ((w == 0) & (p < 0));
  QV r;
  p = RL_(sel)(flip, -p, p);
  w = RL_(sel)(flip, -w, w);
  ap = RL_(abs)(p);
  ps = p * cb - RL_(sel)(p > 0, w * sb, -(w * sb));
  ws = w * cb + ap * sb;
  r.x = axis.x * ps, r.y = axis.y * ps, r.z = axis.z * ps, r.w = ws;
  return RL_(q_sel)(ap * cb <= sb * w, RL_(q_identity)(), r);
}

/* ik_rotations.c's turn_from_last, the memory written where `live`. */
static inline QV RL_(turn_from_last)(QV inherited_ws, VV bone_ls, VV to_ws, QV *memory, M live) {
  const QV predicted_ws = RL_(q_normalize)(RL_(q_mul)(inherited_ws, RL_(q_normalize)(*memory)));
  const VV from_ws = RL_(q_rotate)(predicted_ws, bone_ls);
  const QV turn_ws = RL_(from_to)(from_ws, to_ws);
  const QV solved_ws = RL_(q_normalize)(RL_(q_mul)(turn_ws, predicted_ws));
  const VV axis_ls = RL_(v3_normalize)(bone_ls);
  const V turn_sin = RL_SQRT(turn_ws.x * turn_ws.x + turn_ws.y * turn_ws.y + turn_ws.z * turn_ws.z);
  const V cb = RL_SQRT((1 + RL_(abs)(turn_ws.w)) / 2), sb = turn_sin / (2 * cb);
  QV offset_ls = RL_(q_normalize)(RL_(q_mul)(RL_(q_inverse)(inherited_ws), solved_ws));
  QV swing_ls, twist_ls;
  RL_(swing_twist)(offset_ls, axis_ls, &swing_ls, &twist_ls);
  offset_ls = RL_(q_sel)(
      (sb > 0) & (twist_ls.x * axis_ls.x + twist_ls.y * axis_ls.y + twist_ls.z * axis_ls.z != 0),
      RL_(q_normalize)(RL_(q_mul)(swing_ls, RL_(bleed_twist)(twist_ls, axis_ls, cb, sb))), offset_ls);
  *memory = RL_(q_sel)(live, offset_ls, *memory);
  return RL_(q_normalize)(RL_(q_mul)(inherited_ws, offset_ls));
}

static inline QV RL_(load_q)(const ik_quat *const *at, int i) {
  QV r;
  int e;
  for (e = 0; e < RL_W; e++)
    r.x[e] = at[e][i].x, r.y[e] = at[e][i].y, r.z[e] = at[e][i].z, r.w[e] = at[e][i].w;
  return r;
}
static inline VV RL_(load_v)(const ik_vec3 *const *at, int i) {
  VV r;
  int e;
  for (e = 0; e < RL_W; e++) r.x[e] = at[e][i].x, r.y[e] = at[e][i].y, r.z[e] = at[e][i].z;
  return r;
}
static inline void RL_(store_q)(ik_quat *const *at, int i, QV v, int n) {
  int e;
  for (e = 0; e < n; e++) at[e][i] = ik_quat_make(v.x[e], v.y[e], v.z[e], v.w[e]);
}
/* Full weight: turn_towards without the slerp. */
static inline QV RL_(turn_towards)(QV from, QV to) {
  const QV neg = {-to.x, -to.y, -to.z, -to.w};
  return RL_(q_sel)(RL_(q_dot)(from, to) < 0, neg, to);
}

/* One joint of the loop: joint i's new world rotation from its old one and its parent's
 * turn (parent_old_ws, parent_new_ws: updated to this joint's), its bone before and as
 * solved (i < tip), the twist memory it turns on from (written where `live`). */
static inline __attribute__((always_inline)) QV RL_(joint)(QV rot_old_ws, QV *parent_old_ws,
                                                           QV *parent_new_ws, VV bone_old_ws, VV to_ws,
                                                           QV *memory, int is_tip, M match_tip, QV tip_ws) {
  const QV parent_turn_ws = RL_(q_normalize)(RL_(q_mul)(*parent_new_ws, RL_(q_inverse)(*parent_old_ws)));
  const QV inherited_ws = RL_(q_normalize)(RL_(q_mul)(parent_turn_ws, rot_old_ws));
  QV rot_new_ws;
  if (!is_tip) {
    const VV bone_ls = RL_(q_rotate)(RL_(q_conjugate)(rot_old_ws), bone_old_ws);
    const M live = RL_(v3_dot)(to_ws, to_ws) > IK_TINY_LEN2;
    const QV solved_ws =
        RL_(q_sel)(live, RL_(turn_from_last)(inherited_ws, bone_ls, to_ws, memory, live), inherited_ws);
    rot_new_ws = RL_(turn_towards)(inherited_ws, solved_ws);
  } else {
    rot_new_ws = RL_(q_sel)(match_tip, RL_(turn_towards)(inherited_ws, tip_ws), inherited_ws);
  }
  rot_new_ws = RL_(q_normalize)(rot_new_ws);
  *parent_old_ws = rot_old_ws;
  *parent_new_ws = rot_new_ws;
  return rot_new_ws;
}

#ifndef RL_NO_JOBS
/* n <= RL_W jobs, as ik__rotations_run_lanes documents; unused lanes repeat job 0. */
RL_TARGET static void RL_NAME(ik_rotations_job *const *jobs, int n) {
  const int count = jobs[0]->count, tip = count - 1;
  const ik_vec3 *before[RL_W], *solved[RL_W];
  ik_quat *rot[RL_W], *mem[RL_W], base_before[RL_W], base[RL_W], tip_rotation[RL_W];
  const ik_quat *const *crot = (const ik_quat *const *)rot, *const *cmem = (const ik_quat *const *)mem;
  const ik_quat *cb_before[RL_W], *cb_base[RL_W], *ctip[RL_W];
  QV parent_old_ws, parent_new_ws, tip_ws;
  M match_tip;
  int i, e;
  for (e = 0; e < RL_W; e++) {
    const ik_rotations_job *j = jobs[e < n ? e : 0];
    before[e] = j->positions_before, solved[e] = j->positions_solved;
    rot[e] = j->rotations, mem[e] = j->twist_memory;
    base_before[e] = j->base_rotation_before, base[e] = j->base_rotation, tip_rotation[e] = j->tip_rotation;
    cb_before[e] = &base_before[e], cb_base[e] = &base[e], ctip[e] = &tip_rotation[e];
    match_tip[e] = j->match_tip_rotation ? -1 : 0;
  }
  parent_old_ws = RL_(q_normalize)(RL_(load_q)(cb_before, 0));
  parent_new_ws = RL_(q_normalize)(RL_(load_q)(cb_base, 0));
  tip_ws = RL_(q_normalize)(RL_(load_q)(ctip, 0));
  for (i = 0; i <= tip; i++) {
    const int bone = i < tip ? i : tip - 1;
    const VV bone_old_ws = RL_(v3_sub)(RL_(load_v)(before, bone + 1), RL_(load_v)(before, bone));
    const VV to_ws = i < tip ? RL_(v3_sub)(RL_(load_v)(solved, i + 1), RL_(load_v)(solved, i)) : bone_old_ws;
    QV memory = i < tip ? RL_(load_q)(cmem, i) : RL_(q_identity)();
    const QV rot_new_ws = RL_(joint)(RL_(q_normalize)(RL_(load_q)(crot, i)), &parent_old_ws, &parent_new_ws,
                                     bone_old_ws, to_ws, &memory, i == tip, match_tip, tip_ws);
    if (i < tip) RL_(store_q)(mem, i, memory, n);
    RL_(store_q)(rot, i, rot_new_ws, n);
  }
}

#endif

/* The structure-of-arrays form (ik__rotations_soa), n sets at once. Joint by joint,
 * each set's vectors one after the other: a joint is a long chain of dependent square
 * roots and divisions, and the next vector's chain, close behind in the instruction
 * stream, overlaps it. */
RL_TARGET static void RL_SOA_NAME(const ik__rotations_soa *sets, int n) {
  enum { NV = IK__SOA_LANES / RL_W };
  const int tip = sets[0].count - 1, st = sets[0].stride;
  QV parent_old_ws[IK__SOA_SETS][NV], parent_new_ws[IK__SOA_SETS][NV];
  M write[IK__SOA_SETS][NV], no_match;
  int i, e, v, g;
  for (g = 0; g < n; g++)
    for (v = 0; v < NV; v++) {
      parent_old_ws[g][v] = parent_new_ws[g][v] = RL_(q_identity)();
      for (e = 0; e < RL_W; e++) write[g][v][e] = (sets[g].mask >> (v * RL_W + e)) & 1u ? -1 : 0;
    }
  for (e = 0; e < RL_W; e++) no_match[e] = 0;
  for (i = 0; i < tip; i++)
    for (g = 0; g < n; g++)
      for (v = 0; v < NV; v++) {
        const ik__rotations_soa *s = &sets[g];
        const int k = v * RL_W;
        const VV bone_old_ws =
            RL_(v3_sub)(RL_(ld_v)(s->before[i + 1] + k, st), RL_(ld_v)(s->before[i] + k, st));
        const VV to_ws = RL_(v3_sub)(RL_(ld_v)(s->solved[i + 1] + k, st), RL_(ld_v)(s->solved[i] + k, st));
        QV memory = RL_(ld_q)(s->memory[i] + k, st);
        const QV rot_new_ws =
            RL_(joint)(RL_(q_normalize)(RL_(ld_q)(s->rotations[i] + k, st)), &parent_old_ws[g][v],
                       &parent_new_ws[g][v], bone_old_ws, to_ws, &memory, 0, no_match, RL_(q_identity)());
        RL_(st_q)(s->memory[i] + k, st, memory, write[g][v]);
        RL_(st_q)(s->rotations[i] + k, st, rot_new_ws, write[g][v]);
      }
}

#undef VV
#undef QV
#undef LM_
#undef LM_W
#undef LM_SQRT
