/*
 * ik_bone_chain.c: bone chains (ik_bone_chain.h): one chain's solve in gather, solve and
 * scatter, with no Lua.
 */
#include "ik_bone_chain.h"

#include <string.h>

#include "ik_internal.h" /* ik__rotations_run_valid, ik__vec3_in_range */
#include "ik_pole.h"
#include "ik_rotations.h"
#include "ik_scene_internal.h"

ik_ref ik_ref_bone(ik_skeleton *sk, int bone, const int *closed) {
  ik_ref r;
  memset(&r, 0, sizeof r);
  r.kind = IK_REF_BONE;
  r.sk = sk;
  r.bone = bone;
  r.closed = closed;
  return r;
}

ik_ref ik_ref_node(ik_node *node, const int *closed) {
  ik_ref r;
  memset(&r, 0, sizeof r);
  r.kind = IK_REF_NODE;
  r.node = node;
  r.closed = closed;
  return r;
}

ik_ref ik_ref_vec3(ik_vec3 value) {
  ik_ref r;
  memset(&r, 0, sizeof r);
  r.kind = IK_REF_VEC3;
  r.value = value;
  return r;
}

/* ---- construction ---- */

size_t ik_bone_chain_size(int count, int bound) {
  return sizeof(ik_bone_chain) + (size_t)(count - 1) * (sizeof(ik_constraint) + sizeof(ik_real)) +
         (size_t)count * 4 * sizeof(ik_vec3) +
         (bound ? (size_t)count * (2 * sizeof(ik_quat) + sizeof(ik_ref)) : 0);
}

/* Each array's size is a multiple of ik_real's alignment and the header holds an
 * ik_real, so every array starts aligned. */
ik_bone_chain *ik_bone_chain_init(void *mem, int n, int bound) {
  ik_bone_chain *c = (ik_bone_chain *)mem;
  char *at = (char *)(c + 1);
  int i;
  memset(c, 0, sizeof *c);
  c->constraints = (ik_constraint *)(void *)at;
  at += (size_t)(n - 1) * sizeof(ik_constraint);
  c->positions = (ik_vec3 *)(void *)at;
  c->before = c->positions + n;
  c->rest = c->before + n;
  c->start = c->rest + n;
  c->lengths = (ik_real *)(void *)(c->start + n);
  c->rotations = bound ? (ik_quat *)(void *)(c->lengths + (n - 1)) : NULL;
  /* After the quaternions, whose array size is a multiple of 4 reals: aligned. */
  c->twist_memory = bound ? c->rotations + n : NULL;
  c->refs = bound ? (ik_ref *)(void *)(c->twist_memory + n) : NULL;
  for (i = 0; i < n - 1; i++) {
    memset(&c->constraints[i], 0, sizeof c->constraints[i]);
    c->constraints[i].type = IK_CONSTRAINT_NONE;
  }
  if (bound) memset(c->refs, 0, (size_t)n * sizeof *c->refs);
  c->count = n;
  c->bound = bound;
  /* A point chain's pose is then a function of its target and pole, not of its past. */
  c->deterministic = !bound;
  c->solver = IK_BONE_CHAIN_FABRIK;
  c->iterations = 10; /* the core's defaults (ik_fabrik_job_init) */
  c->tolerance = (ik_real)1e-3;
  c->weight = 1;
  c->base_rest = ik_quat_identity();
  c->now.base_turn = ik_quat_identity();
  c->now.frame = ik_quat_identity();
  {
    ik_fabrik_job defaults; /* the core's mode default, whatever it becomes */
    ik_chain none;
    ik_chain_init(&none, c->positions, n, c->lengths);
    ik_fabrik_job_init(&defaults, &none, ik_vec3_zero());
    c->mode = defaults.mode;
  }
  return c;
}

void ik_bone_chain_set_rest(ik_bone_chain *c) {
  const size_t size = (size_t)c->count * sizeof *c->rest;
  int i;
  memcpy(c->positions, c->rest, size);
  ik_measure_lengths(c->positions, c->count, c->lengths);
  if (!c->bound) {
    memcpy(c->start, c->rest, size);
    c->loop_radius = 0; /* measured by the first solve that folds */
    return;
  }
  for (i = 0; i < c->count; i++) c->twist_memory[i] = ik_quat_identity();
  c->native = 1;
  for (i = 0; i < c->count; i++)
    if (c->refs[i].kind != IK_REF_BONE && c->refs[i].kind != IK_REF_NODE) c->native = 0;
  c->one_sk = NULL;
  if (c->refs[0].kind == IK_REF_BONE) {
    c->one_sk = c->refs[0].sk;
    c->one_sk_closed = c->refs[0].closed;
    for (i = 1; i < c->count; i++)
      if (c->refs[i].kind != IK_REF_BONE || c->refs[i].sk != c->one_sk) c->one_sk = NULL;
  }
  if (c->count == 3) c->solver = IK_BONE_CHAIN_TWO_BONE; /* a limb: exact, and it takes the pole */
}

/* Whether pose (count joints) may be a chain's: finite, no bone of zero length, within
 * reach. */
static ik_status check_pose(const ik_bone_chain *c, const ik_vec3 *pose) {
  ik_chain chain;
  int i;
  for (i = 0; i < c->count; i++) {
    if (!ik__vec3_in_range(pose[i])) return ik_vec3_is_finite(pose[i]) ? IK_E_RANGE : IK_E_NOT_FINITE;
    if (i > 0 && !(ik_vec3_dist2(pose[i - 1], pose[i]) > IK_TINY_LEN2)) return IK_E_BONE_LENGTH;
  }
  ik_chain_init(&chain, (ik_vec3 *)pose, c->count, c->lengths); /* only read */
  chain.derive_lengths = 1;
  return ik_chain_validate(&chain, NULL) == IK_OK ? IK_OK : IK_E_RANGE;
}

ik_status ik_bone_chain_set_points(ik_bone_chain *c, const ik_vec3 *pose) {
  const ik_status st = check_pose(c, pose);
  if (st != IK_OK) return st;
  memcpy(c->rest, pose, (size_t)c->count * sizeof *pose);
  ik_bone_chain_set_rest(c);
  return IK_OK;
}

void ik_bone_chain_set_start(ik_bone_chain *c, const ik_vec3 *pose) {
  const size_t size = (size_t)c->count * sizeof *pose;
  memmove(c->positions, pose, size);
  memmove(c->start, pose, size);
  ik_measure_lengths(c->positions, c->count, c->lengths);
  c->loop_radius = 0;
}

ik_status ik_bone_chain_set_bones(ik_bone_chain *c, ik_skeleton *sk, const int *bones, const int *closed) {
  ik_quat world, local;
  ik_status st;
  int i;
  if (!c->bound || !sk || !bones) return IK_E_NULL;
  for (i = 0; i < c->count; i++) {
    if (bones[i] < 0 || bones[i] >= ik_skeleton_count(sk)) return IK_E_PARAMETER;
    ik_skeleton_get_world(sk, bones[i], &c->before[i], NULL);
  }
  if ((st = check_pose(c, c->before)) != IK_OK) return st;
  for (i = 0; i < c->count; i++) c->refs[i] = ik_ref_bone(sk, bones[i], closed);
  memcpy(c->rest, c->before, (size_t)c->count * sizeof *c->rest);
  ik_skeleton_get_world(sk, bones[0], NULL, &world);
  ik_skeleton_get_local(sk, bones[0], NULL, &local);
  c->base_rest = ik_quat_normalize(ik_quat_mul(ik_quat_normalize(world), ik_quat_inverse(local)));
  c->has_base_rest = 1;
  ik_bone_chain_set_rest(c);
  return IK_OK;
}

void ik_bone_chain_set_constraint(ik_bone_chain *c, int bone, const ik_constraint *con) {
  int k;
  if (con) {
    c->constraints[bone] = *con;
  } else {
    memset(&c->constraints[bone], 0, sizeof c->constraints[bone]);
    c->constraints[bone].type = IK_CONSTRAINT_NONE;
  }
  c->constrained = 0;
  for (k = 0; k < c->count - 1; k++) c->constrained |= c->constraints[k].type != IK_CONSTRAINT_NONE;
}

/* ---- targets and poles ---- */

int ik_bone_chain_moves_with(const ik_bone_chain *c, const ik_ref *v, int *is_bone) {
  int i;
  for (i = c->count; i >= 1; i--) {
    const ik_ref *b = &c->refs[i - 1];
    *is_bone = v->kind == b->kind &&
               (v->kind == IK_REF_BONE ? v->sk == b->sk && v->bone == b->bone : v->node == b->node);
    if (*is_bone) return i;
    if (b->kind == IK_REF_BONE &&
        (v->kind == IK_REF_NODE ? ik_node_depends_on_bone(v->node, b->sk, b->bone)
                                : v->sk == b->sk && ik_skeleton_in_subtree(b->sk, v->bone, b->bone)))
      return i;
  }
  return 0;
}

ik_status ik_bone_chain_set_target(ik_bone_chain *c, ik_ref target) {
  int is_bone;
  if (c->bound && c->native && target.kind != IK_REF_VEC3 && target.kind != IK_REF_NONE &&
      ik_bone_chain_moves_with(c, &target, &is_bone))
    return IK_E_PARAMETER;
  c->target_ref = target;
  return IK_OK;
}

ik_status ik_bone_chain_set_pole(ik_bone_chain *c, const ik_ref *ref, ik_chain_pole *p) {
  int is_bone;
  if (ref && (!c->bound || !c->native || ik_bone_chain_moves_with(c, ref, &is_bone))) return IK_E_PARAMETER;
  c->pole = ref ? NULL : p;
  c->pole_is_transform = ref != NULL;
  if (ref) c->pole_ref = *ref;
  return IK_OK;
}

/* ---- solving ---- */

/* Near the root, a deterministic point chain's pose is a function of where the target
 * is, and must not turn over as its direction does (docs/motion.md, "Where a point chain
 * starts"): an iterative solver starts from the pose given folded towards a loop
 * (ik__fold_start), all the way at the root and not at all from FOLD_REACH of the
 * chain's length out, and the pole, whose plane turns with the target's direction,
 * lets go within POLE_REACH of it. Both eased by smoothstep. */
#define FOLD_REACH ((ik_real)0.8)
#define POLE_REACH ((ik_real)0.3)

static ik_real smoothstep01(ik_real x) {
  if (!(x > 0)) return 0;
  if (x >= 1) return 1;
  return x * x * (3 - 2 * x);
}

/* Whether the chain folds near its root: deterministic, unconstrained point chains
 * solved by FABRIK, CCD or DLS (the two-bone solver's pose is its own formula). */
static int folds_near_root(const ik_bone_chain *c) {
  return !c->bound && c->deterministic && !c->constrained && c->solver != IK_BONE_CHAIN_TWO_BONE &&
         c->count > 2;
}

/* The lengths' loop radius (ik__loop_radius), measured once after they change. */
static ik_real loop_radius(ik_bone_chain *c) {
  if (!(c->loop_radius > 0)) c->loop_radius = ik__loop_radius(c->lengths, c->count);
  return c->loop_radius;
}

/* The target's distance from the root, in chain lengths. */
static ik_real target_reach(const ik_bone_chain *c) {
  ik_real total = 0;
  int i;
  for (i = 0; i + 1 < c->count; i++) total += c->lengths[i];
  return ik_vec3_dist(c->now.target, c->positions[0]) / total;
}

/* The core's description of the chain, over its pose c->positions. */
static void fill_chain(const ik_bone_chain *c, ik_chain *chain) {
  const ik_bone_chain_now *s = &c->now;
  ik_chain_init(chain, c->positions, c->count, c->lengths);
  if (c->constrained) chain->constraints = c->constraints;
  chain->rest_positions = c->rest;
  chain->base_direction = c->base_direction;
  chain->base_rotation = s->base_turn;
  if (s->pole.has) {
    chain->has_pole = 1;
    chain->pole = s->pole.position;
    chain->pole_weight = s->pole.weight;
    if (folds_near_root(c)) chain->pole_weight *= smoothstep01(target_reach(c) / POLE_REACH);
  }
}

/* A two-bone limb's pole at full weight goes into its job; a lighter one needs the pole
 * pass after it (see run_two_bone). */
static int two_bone_pole_pass(const ik_bone_chain *c) { return c->now.pole.has && c->now.pole.weight < 1; }

static void fill_two_bone(ik_bone_chain *c, ik_two_bone_job *job) {
  ik_two_bone_job_init(job, c->positions, c->now.target);
  job->tolerance = c->tolerance;
  if (c->now.pole.has && !two_bone_pole_pass(c)) {
    job->has_pole = 1;
    job->pole = c->now.pole.position;
  }
}

/* The two-bone job takes a pole at full weight only: a lighter one turns the solved
 * limb part of the way, as the pole pass of the other solvers does. Both jobs are
 * validated before either runs, so a refusal leaves the limb as it was, never solved
 * but not turned to its pole. (The pole job checks the positions it is given; the
 * solved ones stay within the limb's reach, which the two-bone job checked.) */
static ik_status run_two_bone(ik_bone_chain *c, ik_result *r) {
  const int pole_pass = two_bone_pole_pass(c);
  ik_two_bone_job job;
  ik_pole_job pj;
  ik_status st;
  fill_two_bone(c, &job);
  /* Without the pole pass, the job's run validates alike, and refuses leaving the limb. */
  if (pole_pass) {
    st = ik_two_bone_validate(&job, NULL);
    ik_pole_job_init(&pj, c->positions, 3, c->now.pole.position);
    pj.weight = c->now.pole.weight;
    if (st == IK_OK) st = ik_pole_validate(&pj, NULL);
    if (st != IK_OK) return st;
  }
  st = ik_two_bone_run(&job);
  if (st == IK_OK && pole_pass) st = ik_pole_run(&pj);
  *r = job.result;
  return st;
}

static void fill_fabrik(const ik_bone_chain *c, ik_fabrik_job *job) {
  ik_chain chain;
  fill_chain(c, &chain);
  ik_fabrik_job_init(job, &chain, c->now.target);
  job->tolerance = c->tolerance;
  job->max_iterations = c->iterations;
  job->mode = c->mode;
}

/* CCD and DLS take the chain's settings alike: run_ccd and run_dls are this one body
 * over the job kind (ik_<kind>_job, ik_<kind>_job_init, ik_<kind>_run). */
#define DEFINE_RUN_ITERATIVE(kind)                                    \
  static ik_status run_##kind(const ik_bone_chain *c, ik_result *r) { \
    ik_##kind##_job job;                                              \
    ik_chain chain;                                                   \
    ik_status st;                                                     \
    fill_chain(c, &chain);                                            \
    ik_##kind##_job_init(&job, &chain, c->now.target);                \
    job.tolerance = c->tolerance;                                     \
    job.max_iterations = c->iterations;                               \
    st = ik_##kind##_run(&job);                                       \
    *r = job.result;                                                  \
    return st;                                                        \
  }

DEFINE_RUN_ITERATIVE(ccd)
DEFINE_RUN_ITERATIVE(dls)

#undef DEFINE_RUN_ITERATIVE

static ik_status run_fabrik(const ik_bone_chain *c, ik_result *r) {
  ik_fabrik_job job;
  ik_status st;
  fill_fabrik(c, &job);
  st = ik_fabrik_run(&job);
  *r = job.result;
  return st;
}

static void measure(const ik_bone_chain *c, ik_result *r) {
  r->distance = ik_vec3_dist(c->positions[c->count - 1], c->now.target);
  r->reached = r->distance <= c->tolerance;
}

/* The gathers' own copies, inlined there (they run for every chain of a batch). */
static void begin(ik_bone_chain *c) {
  c->now.off = !(c->weight > 0);
  c->now.status = IK_OK;
}

static int lane_of(const ik_bone_chain *c) {
  if (c->now.off) return IK_LANE_NONE;
  if (c->solver == IK_BONE_CHAIN_FABRIK) return IK_LANE_FABRIK;
  if (c->solver == IK_BONE_CHAIN_TWO_BONE && !two_bone_pole_pass(c)) return IK_LANE_TWO_BONE;
  return IK_LANE_NONE;
}

void ik_bone_chain_begin(ik_bone_chain *c) { begin(c); }

int ik_bone_chain_lane(const ik_bone_chain *c) { return lane_of(c); }

/* ---- solving: the C phases (any thread) ---- */

/* Puts the pose the solver starts from into c->positions. */
static void start_pose(ik_bone_chain *c) {
  const size_t size = (size_t)c->count * sizeof *c->positions;
  int i;
  if (!c->bound) {
    if (c->deterministic) memcpy(c->positions, c->start, size);
    if (c->weight < 1) memcpy(c->before, c->positions, size);
    if (folds_near_root(c) && target_reach(c) < FOLD_REACH) {
      const ik_vec3 side_ws =
          c->now.pole.has ? ik_vec3_sub(c->now.pole.position, c->positions[0]) : ik_vec3_make(0, 1, 0);
      ik__fold_start(c->positions, c->lengths, c->count, side_ws,
                     1 - smoothstep01(target_reach(c) / FOLD_REACH), loop_radius(c));
    }
    return;
  }
  if (c->deterministic || !c->has_warm) {
    memcpy(c->positions, c->before, size);
    return;
  }
  /* Warm start: the last solution's bone directions, carried to where the root and what
   * it hangs from are now, laid out with the bones' lengths now. */
  c->positions[0] = c->before[0];
  for (i = 0; i < c->count - 1; i++)
    c->positions[i + 1] =
        ik_vec3_madd(c->positions[i], ik_quat_rotate(c->now.frame, c->start[i]), c->lengths[i]);
}

void ik_bone_chain_prepare(ik_bone_chain *c, int lane, void *job) {
  start_pose(c);
  if (lane == IK_LANE_FABRIK)
    fill_fabrik(c, (ik_fabrik_job *)job);
  else
    fill_two_bone(c, (ik_two_bone_job *)job);
}

int ik_bone_chain_finish_begin(ik_bone_chain *c, const ik_result *r, ik_status st, ik_rotations_job *rot) {
  ik_bone_chain_now *s = &c->now;
  ik_quat back;
  int i;
  s->status = st;
  s->result = *r;
  if (st != IK_OK) return 0;
  if (!c->bound) {
    if (c->weight < 1) {
      ik_blend_chain(c->before, c->positions, c->count, c->weight);
      measure(c, &s->result); /* the solver's result was for the pose before blending */
    }
    return 0;
  }
  back = ik_quat_inverse(s->frame);
  for (i = 0; i < c->count - 1; i++)
    c->start[i] = ik_quat_rotate(back, ik_vec3_normalize(ik_vec3_sub(c->positions[i + 1], c->positions[i])));
  c->has_warm = 1;
  /* Full weight on the points: the weight blends rotations here, so every bone turns by
   * its share of the angle and no bone is ever asked to stretch. */
  ik_rotations_job_init(rot, c->count, c->before, c->positions, c->rotations);
  rot->weight = c->weight;
  rot->match_tip_rotation = c->match_rotation;
  rot->tip_rotation = s->target_rotation;
  /* Bones turn on from their last result, so none spins where its solved direction
   * comes round opposite the animated one; a deterministic chain forgets. */
  rot->twist_memory = c->deterministic ? NULL : c->twist_memory;
  return 1;
}

void ik_bone_chain_finish(ik_bone_chain *c, const ik_result *r, ik_status st) {
  ik_rotations_job rot;
  /* Every input of the job is checked already: the bones as gather read them (finite,
   * no bone of zero length), the weight as it was set, the target's rotation as read,
   * and the solved pose as the solver made it within the reach it checked. */
  if (ik_bone_chain_finish_begin(c, r, st, &rot)) ik__rotations_run_valid(&rot);
}

void ik_bone_chain_solve(ik_bone_chain *c) {
  ik_result r;
  ik_status st;
  if (c->now.off) {
    r.iterations = 0;
    r.reached = 0;
    r.distance = 0;
    if (!c->bound) measure(c, &r); /* the pose stays bit for bit; a bone chain's scatter measures */
    c->now.result = r;
    c->now.status = IK_OK;
    return;
  }
  start_pose(c);
  if (c->solver == IK_BONE_CHAIN_TWO_BONE)
    st = run_two_bone(c, &r);
  else if (c->solver == IK_BONE_CHAIN_CCD)
    st = run_ccd(c, &r);
  else if (c->solver == IK_BONE_CHAIN_DLS)
    st = run_dls(c, &r);
  else
    st = run_fabrik(c, &r);
  ik_bone_chain_finish(c, &r, st);
}

/* ---- gather and scatter ---- */

/* The skeleton a kept ik.node finally hangs from (through its parent nodes), or NULL
 * when it hangs from none. */
static const ik_skeleton *node_root(const ik_node *n) {
  while (n->parent_node) n = n->parent_node;
  return n->parent_skeleton;
}

/* Whether the kept target or pole r reads only sk (or a node hanging from nothing, which
 * is then refreshed here, so that reading it later changes nothing). */
static int ref_local_to(const ik_ref *r, const ik_skeleton *sk) {
  const ik_skeleton *root;
  if (r->kind == IK_REF_VEC3) return 1;
  if (ik__is_closed(r->closed)) return 0;
  if (r->kind == IK_REF_BONE) return r->sk == sk;
  if (r->kind != IK_REF_NODE) return 0;
  root = node_root(r->node);
  if (root == NULL) ik_node_get_world(r->node, NULL, NULL);
  return root == NULL || root == sk;
}

const ik_skeleton *ik_bone_chain_skeleton(const ik_bone_chain *c) {
  const ik_skeleton *sk = c->one_sk;
  if (c->closed || !sk || ik__is_closed(c->one_sk_closed)) return NULL;
  if (c->pole ? c->pole->closed : c->pole_is_transform && !ref_local_to(&c->pole_ref, sk)) return NULL;
  if (c->target_ref.kind == IK_REF_NONE || !ref_local_to(&c->target_ref, sk)) return NULL;
  return sk;
}

/* World position (and rotation, when rotation is not NULL) of a kept bone or node. */
static void ref_world(const ik_ref *r, ik_vec3 *position, ik_quat *rotation) {
  if (r->kind == IK_REF_BONE)
    ik_skeleton_get_world(r->sk, r->bone, position, rotation);
  else
    ik_node_get_world(r->node, position, rotation);
}

/* The reading of a chain ik_bone_chain_skeleton accepted: -1 for anything a caller
 * must report (the Lua binding raises for it). */
static int native_read(ik_bone_chain *c) {
  ik_bone_chain_now *s = &c->now;
  const ik_ref *t = &c->target_ref;
  ik_quat local;
  int i, is_bone = 0;
  if (t->kind == IK_REF_VEC3) {
    if (c->match_rotation) return -1;
    s->target = t->value;
  } else {
    if (ik_bone_chain_moves_with(c, t, &is_bone)) return -1;
    ref_world(t, &s->target, c->match_rotation ? &s->target_rotation : NULL);
  }
  if (s->off) return 0;
  s->base_turn = ik_quat_identity();
  s->frame = ik_quat_identity();
  for (i = 0; i < c->count; i++) {
    ik_skeleton_get_world(c->refs[i].sk, c->refs[i].bone, &c->before[i], &c->rotations[i]);
    if (i > 0 && !(ik_vec3_dist2(c->before[i - 1], c->before[i]) > IK_TINY_LEN2)) return -1;
  }
  /* The frame and base turn: a bone can always tell its parent's rotation. */
  if ((c->has_base_rest && c->constrained) || !c->deterministic) {
    ik_skeleton_get_local(c->refs[0].sk, c->refs[0].bone, NULL, &local);
    s->frame = ik_quat_normalize(ik_quat_mul(ik_quat_normalize(c->rotations[0]), ik_quat_inverse(local)));
    if (c->has_base_rest && c->constrained)
      s->base_turn = ik_quat_mul(s->frame, ik_quat_inverse(c->base_rest));
  }
  ik_measure_lengths(c->before, c->count, c->lengths);
  { /* the reach, as the core checks it */
    ik_chain chain;
    ik_chain_init(&chain, c->before, c->count, c->lengths);
    if (ik_chain_validate(&chain, NULL) != IK_OK) return -1;
  }
  s->pole.has = 0;
  if (c->pole) {
    s->pole.has = 1;
    s->pole.position = c->pole->position;
    s->pole.weight = c->pole->weight;
  } else if (c->pole_is_transform) {
    if (ik_bone_chain_moves_with(c, &c->pole_ref, &is_bone)) return -1;
    s->pole.has = 1;
    ref_world(&c->pole_ref, &s->pole.position, NULL);
    s->pole.weight = 1;
  }
  return 0;
}

int ik_bone_chain_gather(ik_bone_chain *c) {
  begin(c);
  c->now.target_rotation = ik_quat_identity();
  if (native_read(c) != 0) return -1;
  return lane_of(c);
}

int ik_bone_chain_gather_point(ik_bone_chain *c, int read_refs) {
  ik_bone_chain_now *s = &c->now;
  const ik_ref *t = &c->target_ref;
  if (c->closed || c->bound || (c->pole ? c->pole->closed : c->pole_is_transform)) return -1;
  if (t->kind == IK_REF_VEC3) {
    s->target = t->value;
  } else if (read_refs && (t->kind == IK_REF_BONE || t->kind == IK_REF_NODE)) {
    if (ik__is_closed(t->closed)) return -1;
    ref_world(t, &s->target, NULL);
  } else {
    return -1;
  }
  begin(c);
  s->target_rotation = ik_quat_identity();
  s->pole.has = c->pole != NULL;
  if (c->pole) {
    s->pole.position = c->pole->position;
    s->pole.weight = c->pole->weight;
  }
  return lane_of(c);
}

int ik_bone_chain_scatter(ik_bone_chain *c) {
  ik_bone_chain_now *s = &c->now;
  const ik_ref *tip;
  ik_vec3 p;
  int i, n = c->match_rotation ? c->count : c->count - 1;
  if (!c->bound) return s->status == IK_OK ? 0 : -1; /* a point chain's pose is its own */
  tip = &c->refs[c->count - 1];
  if (s->status != IK_OK || ik__is_closed(tip->closed)) return -1;
  for (i = 0; i < n && !s->off; i++)
    if (ik_skeleton_set_world_rotation(c->refs[i].sk, c->refs[i].bone, c->rotations[i]) != IK_OK) return -1;
  ik_skeleton_get_world(tip->sk, tip->bone, &p, NULL);
  s->result.distance = ik_vec3_dist(p, s->target);
  s->result.reached = !s->off && s->result.distance <= c->tolerance;
  return 0;
}

ik_status ik_bone_chain_run(ik_bone_chain *c, ik_result *out) {
  int lane;
  if (c->closed) return IK_E_NULL;
  lane = c->bound ? (ik_bone_chain_skeleton(c) ? ik_bone_chain_gather(c) : -1)
                  : ik_bone_chain_gather_point(c, 1);
  if (lane < 0) return IK_E_PARAMETER;
  ik_bone_chain_solve(c);
  if (ik_bone_chain_scatter(c) != 0) return IK_E_PARAMETER;
  *out = c->now.result;
  return IK_OK;
}

#if defined(__GNUC__)
static void prefetch_bytes(const void *at, size_t bytes) {
  const char *p = (const char *)at, *end = p + bytes;
  for (; p < end; p += 64) __builtin_prefetch(p);
}
#else
static void prefetch_bytes(const void *at, size_t bytes) {
  (void)at;
  (void)bytes;
}
#endif

/* The memory a kept target or pole is read from. */
static void prefetch_ref(const ik_ref *r) {
  if (r->kind == IK_REF_NODE) prefetch_bytes(r->node, sizeof *r->node);
  if ((r->kind == IK_REF_NODE || r->kind == IK_REF_BONE) && r->closed)
    prefetch_bytes(r->closed, sizeof *r->closed);
}

void ik_bone_chain_prefetch(const ik_bone_chain *c, int what) {
  size_t n;
  if (what == IK_BONE_CHAIN_PREFETCH_HEADER) {
    prefetch_bytes(c, sizeof *c);
  } else if (what == IK_BONE_CHAIN_PREFETCH_REFS) {
    prefetch_ref(&c->target_ref);
    if (c->pole_is_transform) prefetch_ref(&c->pole_ref);
    if (c->one_sk && c->one_sk_closed) prefetch_bytes(c->one_sk_closed, sizeof *c->one_sk_closed);
  } else {
    /* What every solve reads or writes; the rest (constraints, the rest pose, a blend's
     * or a bone chain's scratch) only some chains touch. */
    n = (size_t)c->count;
    prefetch_bytes(c->positions, n * sizeof *c->positions);
    prefetch_bytes(c->start, n * sizeof *c->start);
    prefetch_bytes(c->lengths, (n - 1) * sizeof *c->lengths);
    if (!c->bound) return;
    prefetch_bytes(c->before, n * sizeof *c->before);
    prefetch_bytes(c->rotations, n * sizeof *c->rotations);
    prefetch_bytes(c->refs, n * sizeof *c->refs);
  }
}
