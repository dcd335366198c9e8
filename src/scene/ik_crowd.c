/*
 * ik_crowd.c: crowds (ik_crowd.h): a template's instances in one block, solved in blocks
 * of instances over threads.
 */
#include "ik_crowd.h"

#include <stdlib.h>
#include <string.h>

#include "ik_batch.h"
#include "ik_internal.h" /* ik__vec3_in_range */
#include "ik_scene_internal.h"

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)

struct ik_crowd_template {
  int bones, chain_count, targets, passes, feet;
  ik_crowd_chain_desc chains[IK_CROWD_MAX_CHAINS];
  int pass[IK_CROWD_MAX_CHAINS];        /* 0-based */
  int target_slot[IK_CROWD_MAX_CHAINS]; /* among the host's targets, or -1 */
  int solver[IK_CROWD_MAX_CHAINS];      /* IK_BONE_CHAIN_*, the default resolved */
  int kind_count[4];                    /* chains per solver */
  /* Each chain's bones' world positions at rest (a bone chain's rest pose: hinge axes). */
  ik_vec3 rest[IK_CROWD_MAX_CHAINS][IK_CROWD_MAX_JOINTS];
  size_t sk_size; /* the skeleton follows the header */
};

/* The template's probe: one chain as the per-object path builds it (a bone chain on the
 * template's skeleton, its target and pole as nodes hung from their bones), each chain in
 * turn, so that what would refuse there refuses here. */
typedef struct crowd_probe {
  ik_node target, pole;
} crowd_probe;

/* A group of IK_CROWD_LANES instances' bone: its local transform (the animated pose:
 * the root from the host, the rest from the template, the solved rotations) and its
 * world transform, a component's lanes side by side. Instance slot s is lane
 * s % IK_CROWD_LANES of group s / IK_CROWD_LANES; a group holds every bone of the
 * template, in its order. */
#define IK_CROWD_LANES 8
#define L_ IK_CROWD_LANES
#define GROUPS_PER_BLOCK (IK_CROWD_BLOCK / L_)
typedef struct crowd_bone {
  ik_real rl[4][L_];            /* local rotation */
  ik_real pw[3][L_], rw[4][L_]; /* world */
} crowd_bone;
/* A bone's local position is the template's, which no chain changes, but for bone 0's,
 * which the host gives: its lanes follow the group's bones. */

/* The kernels' lanes are the crowd's: a group's 8, a block's groups. */
typedef char crowd_lanes_are_the_kernels[IK__SOA_LANES == L_ && IK__TWO_BONE_LANES == L_ &&
                                                 IK__SOA_JOINTS >= IK_CROWD_MAX_JOINTS &&
                                                 IK__SOA_SETS >= GROUPS_PER_BLOCK && IK_CROWD_BLOCK % L_ == 0
                                             ? 1
                                             : -1];

static ik_vec3 lane_v3(const ik_real *v, int e) { return ik_vec3_make(v[e], v[L_ + e], v[2 * L_ + e]); }
static ik_quat lane_q(const ik_real *q, int e) {
  return ik_quat_make(q[e], q[L_ + e], q[2 * L_ + e], q[3 * L_ + e]);
}
static void set_lane_v3(ik_real *v, int e, ik_vec3 a) { v[e] = a.x, v[L_ + e] = a.y, v[2 * L_ + e] = a.z; }
static void set_lane_q(ik_real *q, int e, ik_quat a) {
  q[e] = a.x, q[L_ + e] = a.y, q[2 * L_ + e] = a.z, q[3 * L_ + e] = a.w;
}

/* Chain j of a group's instances between frames, its lanes side by side (a bone
 * chain's own state, one instance a lane): the warm start (the last solution's bone
 * directions in the frame of what the root hangs from), the twist memory of the bones'
 * turns, the last result, and the foot's spring. */
typedef struct lane_chain {
  ik_real *start;    /* count - 1 directions, 3 x L_ each */
  ik_real *memory;   /* count - 1 quaternions, 4 x L_ each (the tip has no bone of its own) */
  ik_result *result; /* L_ */
  int *has_warm, *grounded;
  ik_foot_state *foot; /* L_, or NULL */
} lane_chain;

/* Chain j of a group's instances within a pass: what the gather read and the solve made. */
typedef struct lane_work {
  ik_real *pos;     /* count joints, 3 x L_ each: the pose the solver starts from, then its solution */
  ik_real *rot;     /* count, 4 x L_: the bones' world rotations as read, then turned */
  ik_real *len;     /* count - 1, L_ each: the bones' lengths as read */
  ik_vec3 *aos;     /* L_ x count: a lane's pose for the one-chain jobs (not two-bone) */
  ik_real *aos_len; /* L_ x (count - 1) */
  ik_real target[3][L_], pole[3][L_], frame[4][L_];
  int ok[L_]; /* read, and to be solved */
  ik_status status[L_];
  ik_result result[L_]; /* the solver's */
} lane_work;

/* One thread's buffers for a block: each chain's work for each group of the block, the
 * jobs of the chains that are not two-bone, and the forward kinematics' bookkeeping. */
typedef struct crowd_scratch {
  char *work; /* chain j of group gi at work + (j * GROUPS_PER_BLOCK + gi) * work_size */
  ik_fabrik_job *fabrik;
  ik_ccd_job *ccd;
  ik_dls_job *dls;
  ik_status *fabrik_status, *ccd_status, *dls_status;
  /* The bones of the block's groups (GROUPS_PER_BLOCK, t->bones each) whose world
   * transforms their locals no longer give, and the path to one (as ik_skeleton's lazy
   * update keeps them). */
  unsigned char *stale;
  int *path;
  /* What the thread found of its share: the first refused input (slot -1 when none), how
   * many chains reached, the first instance that failed (-1: none). */
  int bad_slot, reached, first_failed;
  ik_status bad;
  const char *bad_field;
} crowd_scratch;

struct ik_crowd {
  const ik_crowd_template *t;
  const ik_ground *ground;
  int capacity, count, threads;
  ik_pool *pool;
  crowd_scratch *scratch; /* threads of them, their arrays after them: one allocation */
  ik_real dt;
  ik_real *view[IK_CROWD_VIEWS];
  int width[IK_CROWD_VIEWS];
  const int *parent;             /* the template's bones' parents (-1 for a root) */
  const int *subtree_end;        /* one past each bone's last descendant */
  const ik_vec3 *local_position; /* each bone's local position in the template */
  crowd_bone *pose;              /* groups_of(capacity) groups of t->bones */
  char *state;                   /* groups_of(capacity) groups' chains: state_size each */
  size_t state_size, state_offset[IK_CROWD_MAX_CHAINS];
  size_t work_size;             /* a lane_work and its arrays, for the longest chain */
  unsigned char *used, *failed; /* a slot's */
};

static const int root_width = 7;

/* ---- templates ---- */

static size_t template_header(void) { return ALIGN16(sizeof(ik_crowd_template)); }

static ik_skeleton *template_sk(const ik_crowd_template *t) {
  return (ik_skeleton *)(void *)((char *)t + template_header());
}

/* The probe after the skeleton, and the chain it builds after the probe. */
static size_t probe_size(void) {
  return ALIGN16(sizeof(crowd_probe)) + ALIGN16(ik_bone_chain_size(IK_CROWD_MAX_JOINTS, 1));
}

void ik_crowd_chain_desc_init(ik_crowd_chain_desc *d) {
  memset(d, 0, sizeof *d);
  d->count = 3;
  d->solver = -1;
  d->iterations = 10;
  d->tolerance = (ik_real)1e-3;
  d->target_bone = -1;
  d->pole_bone = -1;
  ik_foot_params_init(&d->foot);
}

size_t ik_crowd_template_size(int bone_count) {
  if (bone_count < 1 || ik_skeleton_size(bone_count) == 0) return 0;
  return template_header() + ALIGN16(ik_skeleton_size(bone_count)) + probe_size();
}

static ik_status fail(ik_error *err, ik_status st, const char *field, int index) {
  if (err) {
    err->status = st;
    err->field = field;
    err->index = index;
  }
  return st;
}

/* Builds chain j on sk in mem, its nodes in pr: IK_OK, or the status with *field naming
 * what was refused. */
static ik_status build_chain(const ik_crowd_template *t, crowd_probe *pr, ik_skeleton *sk, int j,
                             ik_bone_chain *c, const char **field) {
  const ik_crowd_chain_desc *d = &t->chains[j];
  ik_ref ref;
  ik_vec3 tip;
  ik_status st;
  *field = "bones";
  if ((st = ik_bone_chain_set_bones(c, sk, d->bones, NULL)) != IK_OK) return st;
  if (d->solver >= 0) c->solver = d->solver;
  c->iterations = d->iterations;
  c->tolerance = d->tolerance;
  *field = "target";
  if (d->target_bone >= 0) {
    if ((st = ik_node_init(&pr->target, d->target_offset, ik_quat_identity())) != IK_OK) return st;
    ik_node_set_parent_bone(&pr->target, sk, d->target_bone);
    ref = ik_ref_node(&pr->target, NULL);
  } else {
    ik_skeleton_get_world(sk, d->bones[d->count - 1], &tip, NULL);
    ref = ik_ref_vec3(tip);
  }
  if ((st = ik_bone_chain_set_target(c, ref)) != IK_OK) return st;
  *field = "pole";
  if (d->pole_bone >= 0) {
    if ((st = ik_node_init(&pr->pole, d->pole_offset, ik_quat_identity())) != IK_OK) return st;
    ik_node_set_parent_bone(&pr->pole, sk, d->pole_bone);
    ref = ik_ref_node(&pr->pole, NULL);
    if ((st = ik_bone_chain_set_pole(c, &ref, NULL)) != IK_OK) return st;
  }
  return IK_OK;
}

/* Chain j's checks that need no instance. */
static ik_status check_desc(const ik_crowd_template *t, int j, ik_error *err) {
  const ik_crowd_chain_desc *d = &t->chains[j];
  ik_status st;
  int i;
  if (d->count < 2 || d->count > IK_CROWD_MAX_JOINTS) return fail(err, IK_E_COUNT, "count", j);
  for (i = 0; i < d->count; i++)
    if (d->bones[i] < 0 || d->bones[i] >= t->bones) return fail(err, IK_E_PARAMETER, "bones", j);
  if (d->solver < -1 || d->solver > IK_BONE_CHAIN_DLS) return fail(err, IK_E_PARAMETER, "solver", j);
  if (d->solver == IK_BONE_CHAIN_TWO_BONE && d->count != 3) return fail(err, IK_E_PARAMETER, "solver", j);
  if (d->iterations < 1 || d->iterations > 10000) return fail(err, IK_E_PARAMETER, "iterations", j);
  if (!(d->tolerance > 0) || !ik__real_in_range(d->tolerance))
    return fail(err, ik_real_is_finite(d->tolerance) ? IK_E_PARAMETER : IK_E_NOT_FINITE, "tolerance", j);
  if (d->target_bone < -1 || d->target_bone >= t->bones) return fail(err, IK_E_PARAMETER, "target_bone", j);
  if (d->pole_bone < -1 || d->pole_bone >= t->bones) return fail(err, IK_E_PARAMETER, "pole_bone", j);
  if (!ik__vec3_in_range(d->target_offset))
    return fail(err, ik_vec3_is_finite(d->target_offset) ? IK_E_RANGE : IK_E_NOT_FINITE, "target_offset", j);
  if (!ik__vec3_in_range(d->pole_offset))
    return fail(err, ik_vec3_is_finite(d->pole_offset) ? IK_E_RANGE : IK_E_NOT_FINITE, "pole_offset", j);
  if (d->has_foot && (st = ik_foot_params_validate(&d->foot, NULL)) != IK_OK) return fail(err, st, "foot", j);
  return IK_OK;
}

/* Whether chain j reads a bone an earlier chain k turns (anything below k's root). */
static int reads_after(const ik_crowd_template *t, int j, int k) {
  const ik_skeleton *sk = template_sk(t);
  const ik_crowd_chain_desc *d = &t->chains[j];
  const int root = t->chains[k].bones[0];
  int i;
  for (i = 0; i < d->count; i++)
    if (ik_skeleton_in_subtree(sk, d->bones[i], root)) return 1;
  return (d->target_bone >= 0 && ik_skeleton_in_subtree(sk, d->target_bone, root)) ||
         (d->pole_bone >= 0 && ik_skeleton_in_subtree(sk, d->pole_bone, root));
}

ik_status ik_crowd_template_init(void *mem, size_t mem_size, const ik_skeleton *sk,
                                 const ik_crowd_chain_desc *chains, int count, ik_crowd_template **out,
                                 ik_error *err) {
  ik_crowd_template *t = (ik_crowd_template *)mem;
  crowd_probe *pr;
  int j, k;
  ik_status st;
  if (!mem || !sk || !chains || !out) return fail(err, IK_E_NULL, "template", -1);
  if (count < 1 || count > IK_CROWD_MAX_CHAINS) return fail(err, IK_E_COUNT, "chains", -1);
  if (mem_size < ik_crowd_template_size(ik_skeleton_count(sk)))
    return fail(err, IK_E_PARAMETER, "mem_size", -1);
  memset(t, 0, sizeof *t);
  t->bones = ik_skeleton_count(sk);
  t->chain_count = count;
  t->sk_size = ik_skeleton_size(t->bones);
  memcpy(t->chains, chains, (size_t)count * sizeof *chains);
  memcpy(template_sk(t), sk, t->sk_size); /* a skeleton block holds no pointer into itself */
  for (j = 0; j < count; j++)
    if ((st = check_desc(t, j, err)) != IK_OK) return st;
  /* The probe instance: every chain built as a crowd builds it, so what would refuse
   * there refuses here. */
  pr = (crowd_probe *)(void *)((char *)template_sk(t) + ALIGN16(t->sk_size));
  for (j = 0; j < count; j++) {
    ik_bone_chain *c = ik_bone_chain_init((char *)pr + ALIGN16(sizeof *pr), chains[j].count, 1);
    const char *field;
    if ((st = build_chain(t, pr, template_sk(t), j, c, &field)) != IK_OK) return fail(err, st, field, j);
    t->solver[j] = c->solver;
    t->kind_count[t->solver[j]]++;
    memcpy(t->rest[j], c->rest, (size_t)chains[j].count * sizeof(ik_vec3));
  }
  /* Every world transform cached now: crowds read the template without writing it. */
  for (j = 0; j < t->bones; j++) ik_skeleton_get_world(template_sk(t), j, NULL, NULL);
  for (j = 0; j < count; j++) {
    t->target_slot[j] = chains[j].target_bone < 0 ? t->targets++ : -1;
    t->feet |= chains[j].has_foot;
    t->pass[j] = 0;
    for (k = 0; k < j; k++)
      if (reads_after(t, j, k) && t->pass[k] + 1 > t->pass[j]) t->pass[j] = t->pass[k] + 1;
    if (t->pass[j] + 1 > t->passes) t->passes = t->pass[j] + 1;
  }
  *out = t;
  return IK_OK;
}

int ik_crowd_template_bones(const ik_crowd_template *t) { return t->bones; }
int ik_crowd_template_chains(const ik_crowd_template *t) { return t->chain_count; }
int ik_crowd_template_targets(const ik_crowd_template *t) { return t->targets; }
int ik_crowd_template_passes(const ik_crowd_template *t) { return t->passes; }
int ik_crowd_template_feet(const ik_crowd_template *t) { return t->feet; }
const ik_skeleton *ik_crowd_template_skeleton(const ik_crowd_template *t) { return template_sk(t); }

/* ---- crowds ---- */

/* The layout: header, the bones' parents, the views (instance-major), the pose lanes,
 * the chains' lanes, then the slots' flags. */
static size_t crowd_header(void) { return ALIGN16(sizeof(ik_crowd)); }

static void widths(const ik_crowd_template *t, int *w) {
  w[IK_CROWD_ROOTS] = root_width;
  w[IK_CROWD_TARGETS] = 3 * t->targets;
  w[IK_CROWD_ROTATIONS] = 4 * t->bones;
  w[IK_CROWD_POSITIONS] = 3 * t->bones;
}

static size_t views_size(const ik_crowd_template *t, int capacity) {
  int w[IK_CROWD_VIEWS], v;
  size_t n = 0;
  widths(t, w);
  for (v = 0; v < IK_CROWD_VIEWS; v++) n += ALIGN16((size_t)capacity * (size_t)w[v] * sizeof(ik_real));
  return n;
}

static size_t parents_size(const ik_crowd_template *t) {
  return ALIGN16(2 * (size_t)t->bones * sizeof(int)) + ALIGN16((size_t)t->bones * sizeof(ik_vec3));
}

static int groups_of(int capacity) { return (capacity + L_ - 1) / L_; }

/* A group's bones and its roots' positions. */
static size_t group_size(const ik_crowd_template *t) {
  return (size_t)t->bones * sizeof(crowd_bone) + 3 * L_ * sizeof(ik_real);
}

static size_t pose_size(const ik_crowd_template *t, int capacity) {
  return ALIGN16((size_t)groups_of(capacity) * group_size(t));
}

/* Bytes of chain j's lanes in a group, and where its parts start. */
static size_t chain_lanes_size(const ik_crowd_chain_desc *d) {
  return ALIGN16((size_t)(d->count - 1) * 3 * L_ * sizeof(ik_real)) +
         ALIGN16((size_t)(d->count - 1) * 4 * L_ * sizeof(ik_real)) + ALIGN16(L_ * sizeof(ik_result)) +
         ALIGN16(2 * L_ * sizeof(int)) + (d->has_foot ? ALIGN16(L_ * sizeof(ik_foot_state)) : 0);
}

static size_t state_size(const ik_crowd_template *t) {
  size_t n = 0;
  int j;
  for (j = 0; j < t->chain_count; j++) n += chain_lanes_size(&t->chains[j]);
  return n;
}

size_t ik_crowd_size(const ik_crowd_template *t, int capacity) {
  if (!t || capacity < 1 || capacity > IK_CROWD_MAX_CAPACITY) return 0;
  return crowd_header() + parents_size(t) + views_size(t, capacity) + pose_size(t, capacity) +
         (size_t)groups_of(capacity) * state_size(t) + ALIGN16(2 * (size_t)capacity);
}

/* Group g's bones. */
static crowd_bone *group_at(const ik_crowd *c, int g) {
  return (crowd_bone *)(void *)((char *)c->pose + (size_t)g * group_size(c->t));
}

/* Bone 0's local position lanes of the group whose bones are `bone`. */
static ik_real *root_position(const ik_crowd *c, const crowd_bone *bone) {
  return (ik_real *)(void *)(bone + c->t->bones);
}

/* Chain j of group g's lanes. */
static lane_chain chain_at(const ik_crowd *c, int g, int j) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  char *at = c->state + (size_t)g * c->state_size + c->state_offset[j];
  lane_chain lc;
  lc.start = (ik_real *)(void *)at;
  at += ALIGN16((size_t)(d->count - 1) * 3 * L_ * sizeof(ik_real));
  lc.memory = (ik_real *)(void *)at;
  at += ALIGN16((size_t)(d->count - 1) * 4 * L_ * sizeof(ik_real));
  lc.result = (ik_result *)(void *)at;
  at += ALIGN16(L_ * sizeof(ik_result));
  lc.has_warm = (int *)(void *)at;
  lc.grounded = lc.has_warm + L_;
  at += ALIGN16(2 * L_ * sizeof(int));
  lc.foot = d->has_foot ? (ik_foot_state *)(void *)at : NULL;
  return lc;
}

/* Puts lane e of group g at the template's pose. */
static void pose_rest(ik_crowd *c, int g, int e) {
  const ik_skeleton *sk = template_sk(c->t);
  crowd_bone *bone = group_at(c, g);
  int b;
  for (b = 0; b < c->t->bones; b++) {
    ik_vec3 p;
    ik_quat q;
    ik_skeleton_get_local(sk, b, &p, &q);
    if (b == 0) set_lane_v3(root_position(c, bone), e, p);
    set_lane_q(bone[b].rl[0], e, q);
    ik_skeleton_get_world(sk, b, &p, &q);
    set_lane_v3(bone[b].pw[0], e, p);
    set_lane_q(bone[b].rw[0], e, q);
  }
}

/* Lane e of group g's chains as a bone chain starts: no warm start, no turn remembered,
 * no result, its feet fresh. */
static void chains_rest(ik_crowd *c, int g, int e) {
  int j, i;
  for (j = 0; j < c->t->chain_count; j++) {
    const lane_chain lc = chain_at(c, g, j);
    for (i = 0; i + 1 < c->t->chains[j].count; i++) {
      set_lane_q(lc.memory + (size_t)i * 4 * L_, e, ik_quat_identity());
      set_lane_v3(lc.start + (size_t)i * 3 * L_, e, ik_vec3_zero()); /* computed on, never kept */
    }
    memset(&lc.result[e], 0, sizeof lc.result[e]);
    lc.has_warm[e] = 0;
    lc.grounded[e] = 0;
    if (lc.foot) ik_foot_state_init(&lc.foot[e]);
  }
}

ik_status ik_crowd_init(void *mem, size_t mem_size, const ik_crowd_template *t, int capacity,
                        const ik_ground *ground, ik_crowd **out, ik_error *err) {
  ik_crowd *c = (ik_crowd *)mem;
  char *at;
  int v, j, *parent, *end;
  size_t off;
  if (!mem || !t || !out) return fail(err, IK_E_NULL, "crowd", -1);
  if (capacity < 1 || capacity > IK_CROWD_MAX_CAPACITY) return fail(err, IK_E_COUNT, "capacity", -1);
  if (mem_size < ik_crowd_size(t, capacity)) return fail(err, IK_E_PARAMETER, "mem_size", -1);
  if (t->feet && (!ground || ik_ground_get_kind(ground) == IK_GROUND_CUSTOM))
    return fail(err, IK_E_PARAMETER, "ground", -1);
  memset(c, 0, sizeof *c);
  c->t = t;
  c->ground = ground;
  c->capacity = capacity;
  widths(t, c->width);
  at = (char *)c + crowd_header();
  parent = (int *)(void *)at;
  end = parent + t->bones;
  for (j = 0; j < t->bones; j++) parent[j] = ik_skeleton_parent(template_sk(t), j), end[j] = j + 1;
  for (j = t->bones - 1; j > 0; j--) /* children before parents: each end final before its parent reads it */
    if (parent[j] >= 0 && end[parent[j]] < end[j]) end[parent[j]] = end[j];
  c->parent = parent;
  c->subtree_end = end;
  {
    ik_vec3 *local = (ik_vec3 *)(void *)(at + ALIGN16(2 * (size_t)t->bones * sizeof(int)));
    for (j = 0; j < t->bones; j++) ik_skeleton_get_local(template_sk(t), j, &local[j], NULL);
    c->local_position = local;
  }
  at += parents_size(t);
  for (v = 0; v < IK_CROWD_VIEWS; v++) {
    const size_t n = (size_t)capacity * (size_t)c->width[v] * sizeof(ik_real);
    c->view[v] = c->width[v] ? (ik_real *)(void *)at : NULL;
    memset(at, 0, n);
    at += ALIGN16(n);
  }
  c->pose = (crowd_bone *)(void *)at;
  at += pose_size(t, capacity);
  c->state = at;
  c->state_size = state_size(t);
  for (j = 0, off = 0; j < t->chain_count; j++) {
    c->state_offset[j] = off;
    off += chain_lanes_size(&t->chains[j]);
  }
  at += (size_t)groups_of(capacity) * c->state_size;
  c->used = (unsigned char *)at;
  c->failed = c->used + capacity;
  memset(c->used, 0, 2 * (size_t)capacity);
  /* Every lane, the ones past the last slot too, computes alongside the others: keep
   * them all finite. */
  for (j = 0; j < groups_of(capacity) * L_; j++) {
    pose_rest(c, j / L_, j % L_);
    chains_rest(c, j / L_, j % L_);
  }
  *out = c;
  return IK_OK;
}

/* The longest chain's joints. */
static int most_joints(const ik_crowd_template *t) {
  int j, n = 2;
  for (j = 0; j < t->chain_count; j++)
    if (t->chains[j].count > n) n = t->chains[j].count;
  return n;
}

/* A lane_work and its arrays for chains of up to n joints. */
static size_t work_size(int n) {
  return ALIGN16(sizeof(lane_work)) + ALIGN16((size_t)n * 7 * L_ * sizeof(ik_real)) +
         ALIGN16((size_t)(n - 1) * L_ * sizeof(ik_real)) + ALIGN16((size_t)L_ * (size_t)n * sizeof(ik_vec3)) +
         ALIGN16((size_t)L_ * (size_t)(n - 1) * sizeof(ik_real));
}

static void lay_out_work(char *at, int n) {
  lane_work *w = (lane_work *)(void *)at;
  at += ALIGN16(sizeof(lane_work));
  w->pos = (ik_real *)(void *)at;
  w->rot = w->pos + (size_t)n * 3 * L_;
  at += ALIGN16((size_t)n * 7 * L_ * sizeof(ik_real));
  w->len = (ik_real *)(void *)at;
  at += ALIGN16((size_t)(n - 1) * L_ * sizeof(ik_real));
  w->aos = (ik_vec3 *)(void *)at;
  at += ALIGN16((size_t)L_ * (size_t)n * sizeof(ik_vec3));
  w->aos_len = (ik_real *)(void *)at;
}

static lane_work *work_at(const ik_crowd *c, const crowd_scratch *s, int j, int gi) {
  return (lane_work *)(void *)(s->work + ((size_t)j * GROUPS_PER_BLOCK + (size_t)gi) * c->work_size);
}

/* Thread part's buffers: one allocation for all threads (sizes in units of bytes). */
static size_t scratch_size(const ik_crowd *c) {
  const ik_crowd_template *t = c->t;
  const size_t block = IK_CROWD_BLOCK;
  return ALIGN16((size_t)t->chain_count * GROUPS_PER_BLOCK * c->work_size) +
         ALIGN16(block * (size_t)t->kind_count[IK_BONE_CHAIN_FABRIK] * sizeof(ik_fabrik_job)) +
         ALIGN16(block * (size_t)t->kind_count[IK_BONE_CHAIN_CCD] * sizeof(ik_ccd_job)) +
         ALIGN16(block * (size_t)t->kind_count[IK_BONE_CHAIN_DLS] * sizeof(ik_dls_job)) +
         ALIGN16(block * (size_t)t->chain_count * sizeof(ik_status)) +
         ALIGN16((size_t)t->bones * sizeof(int)) + ALIGN16(GROUPS_PER_BLOCK * (size_t)t->bones);
}

static void lay_out_scratch(ik_crowd *c, crowd_scratch *s, char *at) {
  const ik_crowd_template *t = c->t;
  const size_t block = IK_CROWD_BLOCK;
  int j, gi;
  s->work = at;
  for (j = 0; j < t->chain_count; j++)
    for (gi = 0; gi < GROUPS_PER_BLOCK; gi++)
      lay_out_work(s->work + ((size_t)j * GROUPS_PER_BLOCK + (size_t)gi) * c->work_size, most_joints(t));
  at += ALIGN16((size_t)t->chain_count * GROUPS_PER_BLOCK * c->work_size);
  s->fabrik = (ik_fabrik_job *)(void *)at;
  at += ALIGN16(block * (size_t)t->kind_count[IK_BONE_CHAIN_FABRIK] * sizeof(ik_fabrik_job));
  s->ccd = (ik_ccd_job *)(void *)at;
  at += ALIGN16(block * (size_t)t->kind_count[IK_BONE_CHAIN_CCD] * sizeof(ik_ccd_job));
  s->dls = (ik_dls_job *)(void *)at;
  at += ALIGN16(block * (size_t)t->kind_count[IK_BONE_CHAIN_DLS] * sizeof(ik_dls_job));
  s->fabrik_status = (ik_status *)(void *)at; /* a block's jobs of each solver, one after the other */
  s->ccd_status = s->fabrik_status + block * (size_t)t->kind_count[IK_BONE_CHAIN_FABRIK];
  s->dls_status = s->ccd_status + block * (size_t)t->kind_count[IK_BONE_CHAIN_CCD];
  at += ALIGN16(block * (size_t)t->chain_count * sizeof(ik_status));
  s->path = (int *)(void *)at;
  at += ALIGN16((size_t)t->bones * sizeof(int));
  s->stale = (unsigned char *)at;
}

ik_status ik_crowd_start(ik_crowd *c, int threads) {
  size_t per;
  char *at;
  int i;
  if (threads < 1 || threads > IK_POOL_MAX_THREADS) return IK_E_PARAMETER;
  ik_crowd_stop(c);
  c->work_size = work_size(most_joints(c->t));
  per = scratch_size(c);
  /* Zeroed: a lane no instance holds is computed alongside the others, on values set. */
  c->scratch =
      (crowd_scratch *)calloc(1, ALIGN16((size_t)threads * sizeof(crowd_scratch)) + (size_t)threads * per);
  if (!c->scratch) return IK_E_NULL;
  c->pool = ik_pool_new(threads);
  if (!c->pool) {
    free(c->scratch);
    c->scratch = NULL;
    return IK_E_NULL;
  }
  at = (char *)c->scratch + ALIGN16((size_t)threads * sizeof(crowd_scratch));
  for (i = 0; i < threads; i++, at += per) lay_out_scratch(c, &c->scratch[i], at);
  c->threads = threads;
  return IK_OK;
}

void ik_crowd_stop(ik_crowd *c) {
  ik_pool_free(c->pool);
  free(c->scratch);
  c->pool = NULL;
  c->scratch = NULL;
  c->threads = 0;
}

int ik_crowd_threads(const ik_crowd *c) { return c->threads; }

/* Puts instance `slot`'s pose at rest into the views: the root's, and each host-given
 * target on its chain's tip. */
static void write_rest(ik_crowd *c, int slot) {
  const ik_crowd_template *t = c->t;
  ik_real *r = c->view[IK_CROWD_ROOTS] + (size_t)slot * (size_t)c->width[IK_CROWD_ROOTS];
  ik_vec3 p;
  ik_quat q;
  int j;
  ik_skeleton_get_local(template_sk(t), 0, &p, &q);
  r[0] = p.x, r[1] = p.y, r[2] = p.z, r[3] = q.x, r[4] = q.y, r[5] = q.z, r[6] = q.w;
  for (j = 0; j < t->chain_count; j++) {
    ik_real *v;
    if (t->target_slot[j] < 0) continue;
    v = c->view[IK_CROWD_TARGETS] + (size_t)slot * (size_t)c->width[IK_CROWD_TARGETS] + 3 * t->target_slot[j];
    p = t->rest[j][t->chains[j].count - 1];
    v[0] = p.x, v[1] = p.y, v[2] = p.z;
  }
}

/* Writes the instance's bones (their world transforms current) into the output views. */
static void write_pose(ik_crowd *c, int slot) {
  const crowd_bone *bone = group_at(c, slot / L_);
  const int e = slot % L_;
  ik_real *r = c->view[IK_CROWD_ROTATIONS] + (size_t)slot * (size_t)c->width[IK_CROWD_ROTATIONS];
  ik_real *p = c->view[IK_CROWD_POSITIONS] + (size_t)slot * (size_t)c->width[IK_CROWD_POSITIONS];
  int b;
  for (b = 0; b < c->t->bones; b++, r += 4, p += 3) {
    r[0] = bone[b].rl[0][e], r[1] = bone[b].rl[1][e], r[2] = bone[b].rl[2][e], r[3] = bone[b].rl[3][e];
    p[0] = bone[b].pw[0][e], p[1] = bone[b].pw[1][e], p[2] = bone[b].pw[2][e];
  }
}

int ik_crowd_add(ik_crowd *c) {
  int slot;
  for (slot = 0; slot < c->capacity && c->used[slot]; slot++) continue;
  if (slot == c->capacity) return -1;
  pose_rest(c, slot / L_, slot % L_);
  chains_rest(c, slot / L_, slot % L_);
  c->used[slot] = 1;
  c->failed[slot] = 0;
  c->count++;
  write_rest(c, slot);
  write_pose(c, slot);
  return slot;
}

ik_status ik_crowd_remove(ik_crowd *c, int slot) {
  if (slot < 0 || slot >= c->capacity || !c->used[slot]) return IK_E_PARAMETER;
  c->used[slot] = 0;
  c->count--;
  return IK_OK;
}

int ik_crowd_used(const ik_crowd *c, int slot) { return slot >= 0 && slot < c->capacity && c->used[slot]; }
int ik_crowd_count(const ik_crowd *c) { return c->count; }
int ik_crowd_capacity(const ik_crowd *c) { return c->capacity; }
const ik_crowd_template *ik_crowd_template_of(const ik_crowd *c) { return c->t; }

ik_crowd_view ik_crowd_get_view(ik_crowd *c, int which) {
  ik_crowd_view v;
  memset(&v, 0, sizeof v);
  if (which < 0 || which >= IK_CROWD_VIEWS || !c->view[which]) return v;
  v.data = c->view[which];
  v.capacity = c->capacity;
  v.stride = v.width = c->width[which];
  return v;
}

/* ---- solving ---- */

static ik_status check_reals(const ik_real *r, int n) {
  int i;
  for (i = 0; i < n; i++) {
    if (!ik_real_is_finite(r[i])) return IK_E_NOT_FINITE;
    if (!ik__real_in_range(r[i])) return IK_E_RANGE;
  }
  return IK_OK;
}

/* The inputs of the used instances of slots [begin, end): the first refused in s. */
static void check_inputs(const ik_crowd *c, crowd_scratch *s, int begin, int end) {
  int slot;
  s->bad_slot = -1;
  for (slot = begin; slot < end; slot++) {
    const ik_real *r = c->view[IK_CROWD_ROOTS] + (size_t)slot * root_width;
    ik_status st = IK_OK;
    const char *field = "roots";
    if (!c->used[slot]) continue;
    if ((st = check_reals(r, root_width)) == IK_OK && !(r[3] != 0 || r[4] != 0 || r[5] != 0 || r[6] != 0))
      st = IK_E_PARAMETER;
    if (st == IK_OK && c->t->targets) {
      st = check_reals(c->view[IK_CROWD_TARGETS] + (size_t)slot * (size_t)c->width[IK_CROWD_TARGETS],
                       c->width[IK_CROWD_TARGETS]);
      field = "targets";
    }
    if (st != IK_OK) {
      s->bad_slot = slot, s->bad = st, s->bad_field = field;
      return;
    }
  }
}

/* The host's root into instance `slot`'s bone 0, as ik_skeleton_set_local_* takes it (a
 * rotation too short to normalise leaves the last). */
static void take_root(ik_crowd *c, int slot) {
  crowd_bone *root = group_at(c, slot / L_);
  const int e = slot % L_;
  const ik_real *r = c->view[IK_CROWD_ROOTS] + (size_t)slot * root_width;
  const ik_quat q = ik_quat_make(r[3], r[4], r[5], r[6]);
  c->failed[slot] = 0;
  set_lane_v3(root_position(c, root), e, ik_vec3_make(r[0], r[1], r[2]));
  if (ik_quat_dot(q, q) > IK_TINY_LEN2) set_lane_q(root->rl[0], e, ik_quat_normalize(q));
}

/* ik_skeleton.c's compute_world for bone b of lane e. */
static void world_one(const ik_crowd *c, crowd_bone *bone, int b, int e) {
  const int p = c->parent[b];
  if (p < 0) {
    set_lane_v3(bone[b].pw[0], e, b == 0 ? lane_v3(root_position(c, bone), e) : c->local_position[b]);
    set_lane_q(bone[b].rw[0], e, lane_q(bone[b].rl[0], e));
  } else {
    const ik_quat parent_ws = lane_q(bone[p].rw[0], e);
    set_lane_v3(bone[b].pw[0], e,
                ik_vec3_add(lane_v3(bone[p].pw[0], e), ik_quat_rotate(parent_ws, c->local_position[b])));
    set_lane_q(bone[b].rw[0], e, ik_quat_normalize(ik_quat_mul(parent_ws, lane_q(bone[b].rl[0], e))));
  }
}

#if defined(__GNUC__)
#define CL_CAT2(a, b) a##_##b
#define CL_CAT(a, b) CL_CAT2(a, b)
#define CL_(x) CL_CAT(x, CL_SUFFIX)

#include "ik_lanes_real.h"
#define CL_SUFFIX base
#define V ik__rv16
#define M ik__rm16
#define VW ((int)(16 / sizeof(ik_real)))
#define VSQRT(v) ik__sqrt_v16(v)
#include "ik_crowd_lanes_body.h"
#undef CL_SUFFIX
#undef V
#undef M
#undef VW
#undef VSQRT

#if defined(__x86_64__) || defined(__i386__)
#define CROWD_AVX2 1
IK__TARGET_AVX2_BEGIN
#define CL_SUFFIX avx2
#define V ik__rv32
#define M ik__rm32
#define VW ((int)(32 / sizeof(ik_real)))
#define VSQRT(v) IK__SQRT_V32(ik__rv32, v)
#include "ik_crowd_lanes_body.h"
#undef CL_SUFFIX
#undef V
#undef M
#undef VW
#undef VSQRT
IK__TARGET_END

#ifndef IK_REAL_FLOAT
/* AVX-512F for doubles: a group's 8 lanes in one vector. (16 floats are more lanes than
 * a group has: floats keep AVX2's 8.) */
#define CROWD_AVX512 1
IK__TARGET_AVX512_BEGIN
#define CL_SUFFIX avx512
#define V ik__rv64
#define M ik__rm64
#define VW 8
#define VSQRT(v) IK__SQRT_V64_PD(v)
#include "ik_crowd_lanes_body.h"
#undef CL_SUFFIX
#undef V
#undef M
#undef VW
#undef VSQRT
IK__TARGET_END
#endif
#endif

/* A lane step in the widest vectors the processor has (the same bits in any). */
#ifdef CROWD_AVX512
#define CROWD_TRY_AVX512(fn, args)         \
  if (__builtin_cpu_supports("avx512f")) { \
    fn##_avx512 args;                      \
    return;                                \
  }
#else
#define CROWD_TRY_AVX512(fn, args)
#endif
#ifdef CROWD_AVX2
#define CROWD_TRY_AVX2(fn, args)        \
  if (__builtin_cpu_supports("avx2")) { \
    fn##_avx2 args;                     \
    return;                             \
  }
#else
#define CROWD_TRY_AVX2(fn, args)
#endif
#define CROWD_LANES(fn, args) \
  CROWD_TRY_AVX512(fn, args)  \
  CROWD_TRY_AVX2(fn, args)    \
  fn##_base args

/* Bone b's world transform across the group's lanes. */
static void world_lanes(crowd_bone *bone, int b, int p, ik_vec3 local) {
  CROWD_LANES(world, (bone, b, p, local));
}

static void local_lanes(crowd_bone *bone, int b, int p, const ik_real (*q)[IK_CROWD_LANES],
                        const int *write) {
  CROWD_LANES(local, (bone, b, p, q, write));
}

/* A chain's read, start and kept warm start across a group's lanes (below). */
static void gather_group(const crowd_bone *bone, const ik_crowd_chain_desc *d, lane_work *w) {
  CROWD_LANES(gather, (bone, d, w, w->ok));
}

static void start_group(const crowd_bone *bone, const ik_crowd_chain_desc *d, lane_work *w,
                        const lane_chain *lc) {
  CROWD_LANES(start, (bone, d, w, lc->start, lc->has_warm));
}

static void keep_group(const ik_crowd_chain_desc *d, const lane_work *w, const lane_chain *lc,
                       const int *done) {
  CROWD_LANES(keep, (d, w, lc->start, done));
}
#else
/* ik_skeleton_set_world_rotation's local rotation, lane by lane. */
static void local_lanes(crowd_bone *bone, int b, int p, const ik_real (*q)[IK_CROWD_LANES],
                        const int *write) {
  int e;
  for (e = 0; e < L_; e++) {
    const ik_quat parent_ws = p >= 0 ? lane_q(bone[p].rw[0], e) : ik_quat_identity();
    if (!write[e]) continue;
    set_lane_q(
        bone[b].rl[0], e,
        ik_quat_normalize(ik_quat_mul(ik_quat_conjugate(parent_ws), ik_quat_normalize(lane_q(q[0], e)))));
  }
}
#endif

/* Forward kinematics of the stale bones of the block's groups, parents first, a bone of
 * a group's 8 lanes at a time and of each group in turn (each group's chain down the
 * skeleton is long and dependent; the groups' overlap): the world transforms are a
 * function of the locals alone, so computing them eagerly gives the bits the per-object
 * skeleton's lazy updates give. */
static void forward_groups(const ik_crowd *c, crowd_bone *const *bone, unsigned char *const *stale,
                           int groups) {
  int b, e, g;
  for (b = 0; b < c->t->bones; b++)
    for (g = 0; g < groups; g++) {
      if (!stale[g][b]) continue;
      stale[g][b] = 0;
#if defined(__GNUC__)
      if (c->parent[b] >= 0) {
        world_lanes(bone[g], b, c->parent[b], c->local_position[b]);
        continue;
      }
#endif
      for (e = 0; e < IK_CROWD_LANES; e++) world_one(c, bone[g], b, e);
    }
}

/* Bone b of `bone` with its world transform current (every lane, or lane e when e >= 0):
 * it and its stale ancestors computed again, top down. */
static void fresh(const ik_crowd *c, crowd_scratch *s, unsigned char *stale, crowd_bone *bone, int e, int b) {
  int depth = 0, k;
  for (; b >= 0 && stale[b]; b = c->parent[b]) s->path[depth++] = b;
  while (depth > 0) {
    b = s->path[--depth];
    stale[b] = 0;
    if (e >= 0) {
      world_one(c, bone, b, e);
      continue;
    }
#if defined(__GNUC__)
    if (c->parent[b] >= 0) {
      world_lanes(bone, b, c->parent[b], c->local_position[b]);
      continue;
    }
#endif
    for (k = 0; k < IK_CROWD_LANES; k++) world_one(c, bone, b, k);
  }
}

/* Bone b's local transform changed: it and its subtree are stale. */
static void mark_stale(const ik_crowd *c, unsigned char *stale, int b) {
  int i;
  stale[b] = 1;
  for (i = b + 1; i < c->subtree_end[b]; i++)
    if (stale[c->parent[i]]) stale[i] = 1;
}

/* The block a thread is taking through a pass: its first group and how many, and which
 * of their lanes hold instances still going. */
typedef struct crowd_block {
  int g0, groups;
  int live[GROUPS_PER_BLOCK][L_];
} crowd_block;

/* The host's target of chain j, lane e of group g, into w. */
static void host_target(const ik_crowd *c, lane_work *w, int g, int e, int j) {
  const ik_real *v = c->view[IK_CROWD_TARGETS] + (size_t)(g * L_ + e) * (size_t)c->width[IK_CROWD_TARGETS] +
                     3 * c->t->target_slot[j];
  set_lane_v3(w->target[0], e, ik_vec3_make(v[0], v[1], v[2]));
}

#if !defined(__GNUC__)
/* A point hung `offset` from bone b (its world transform current), as an ik_node's. */
static ik_vec3 hung(const crowd_bone *bone, int e, int b, ik_vec3 offset) {
  return ik_vec3_add(lane_v3(bone[b].pw[0], e), ik_quat_rotate(lane_q(bone[b].rw[0], e), offset));
}

/* ik_bone_chain_gather of chain d of lane e (its world transforms current) from the
 * lanes into w: 1, or 0 where the chain's gather would refuse it. */
static int gather_lane(const crowd_bone *bone, const ik_crowd_chain_desc *d, lane_work *w, int e) {
  const int n = d->count;
  ik_vec3 p[IK_CROWD_MAX_JOINTS];
  ik_real total = 0;
  int i, ok = 1;
  if (d->target_bone >= 0) set_lane_v3(w->target[0], e, hung(bone, e, d->target_bone, d->target_offset));
  for (i = 0; i < n; i++) {
    p[i] = lane_v3(bone[d->bones[i]].pw[0], e);
    set_lane_q(w->rot + (size_t)i * 4 * L_, e, lane_q(bone[d->bones[i]].rw[0], e));
    if (i > 0 && !(ik_vec3_dist2(p[i - 1], p[i]) > IK_TINY_LEN2)) return 0;
  }
  set_lane_q(w->frame[0], e,
             ik_quat_normalize(ik_quat_mul(ik_quat_normalize(lane_q(w->rot, e)),
                                           ik_quat_inverse(lane_q(bone[d->bones[0]].rl[0], e)))));
  /* ik_measure_lengths, then ik_chain_validate's test of the chain as read. */
  for (i = 0; i < n; i++) ok &= ik__vec3_in_range(p[i]);
  for (i = 0; i + 1 < n; i++) {
    const ik_real len = ik_vec3_dist(p[i], p[i + 1]);
    w->len[(size_t)i * L_ + (size_t)e] = len;
    ok &= ik__real_in_range(len) & (len > 0);
    total += len;
  }
  if (!ok || !ik__reach_ok(p[0], total)) return 0;
  if (d->pole_bone >= 0) set_lane_v3(w->pole[0], e, hung(bone, e, d->pole_bone, d->pole_offset));
  return 1;
}

static void gather_group(const crowd_bone *bone, const ik_crowd_chain_desc *d, lane_work *w) {
  int e;
  for (e = 0; e < L_; e++)
    if (w->ok[e]) w->ok[e] = gather_lane(bone, d, w, e);
}

/* Where a bone chain's solver starts, each lane: the last solution's bone directions
 * carried in the frame and laid out with the lengths as read (warm start), or the pose
 * as read. */
static void start_group(const crowd_bone *bone, const ik_crowd_chain_desc *d, lane_work *w,
                        const lane_chain *lc) {
  int e, i;
  for (e = 0; e < L_; e++) {
    ik_vec3 at = lane_v3(bone[d->bones[0]].pw[0], e);
    set_lane_v3(w->pos, e, at);
    for (i = 0; i + 1 < d->count; i++) {
      at =
          ik_vec3_madd(at, ik_quat_rotate(lane_q(w->frame[0], e), lane_v3(lc->start + (size_t)i * 3 * L_, e)),
                       w->len[(size_t)i * L_ + (size_t)e]);
      set_lane_v3(w->pos + (size_t)(i + 1) * 3 * L_, e,
                  lc->has_warm[e] ? at : lane_v3(bone[d->bones[i + 1]].pw[0], e));
    }
  }
}

/* The warm start kept where done[e]: each solved bone's direction, back in the frame. */
static void keep_group(const ik_crowd_chain_desc *d, const lane_work *w, const lane_chain *lc,
                       const int *done) {
  int e, i;
  for (e = 0; e < L_; e++) {
    ik_quat back;
    if (!done[e]) continue;
    back = ik_quat_inverse(lane_q(w->frame[0], e));
    for (i = 0; i + 1 < d->count; i++)
      set_lane_v3(
          lc->start + (size_t)i * 3 * L_, e,
          ik_quat_rotate(back, ik_vec3_normalize(ik_vec3_sub(lane_v3(w->pos + (size_t)(i + 1) * 3 * L_, e),
                                                             lane_v3(w->pos + (size_t)i * 3 * L_, e)))));
  }
}
#endif

/* Chain j's feet of the block's instances to be solved, as ik_bone_batch places them:
 * the ray and the spring give each its target, all in one ik__foot_update_many. */
static void place_feet(const ik_crowd *c, crowd_scratch *s, const crowd_block *k, int j) {
  ik_foot_state *states[IK_CROWD_BLOCK];
  ik_vec3 at[IK_CROWD_BLOCK];
  ik_quat turn[IK_CROWD_BLOCK];
  ik_foot_result out[IK_CROWD_BLOCK];
  ik_status st[IK_CROWD_BLOCK];
  int gi, e, n = 0;
  for (gi = 0; gi < k->groups; gi++) {
    const lane_work *w = work_at(c, s, j, gi);
    const lane_chain lc = chain_at(c, k->g0 + gi, j);
    for (e = 0; e < L_; e++) {
      if (!w->ok[e]) continue;
      lc.grounded[e] = 0;
      states[n] = &lc.foot[e];
      at[n] = lane_v3(w->target[0], e);
      turn[n++] = ik_quat_identity();
    }
  }
  if (!n) return;
  ik__foot_update_many(&c->t->chains[j].foot, c->ground, c->dt, n, states, at, turn, out, st);
  for (gi = 0, n = 0; gi < k->groups; gi++) {
    lane_work *w = work_at(c, s, j, gi);
    const lane_chain lc = chain_at(c, k->g0 + gi, j);
    for (e = 0; e < L_; e++) {
      if (!w->ok[e]) continue;
      if (st[n] == IK_OK) {
        set_lane_v3(w->target[0], e, out[n].position);
        lc.grounded[e] = out[n].grounded;
      }
      n++;
    }
  }
}

/* Chain j's two-bone limbs across a group's lanes, as the job a bone chain fills (its
 * pole at full weight) solves each (ik__two_bone_run_lanes: the job's bits). A lane not
 * to be solved is given its own tip as the target, so the kernel reads only values set. */
static void two_bone_group(const ik_crowd *c, lane_work *w, int j) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  ik__two_bone_lanes l;
  int e, any = 0;
  for (e = 0; e < L_; e++) any |= w->ok[e];
  if (!any) return;
  memcpy(l.p, w->pos, sizeof l.p);
  memcpy(l.target, w->target, sizeof l.target);
  for (e = 0; e < L_; e++)
    if (!w->ok[e]) set_lane_v3(l.target[0], e, lane_v3(w->pos + 2 * 3 * L_, e));
  l.has_pole = d->pole_bone >= 0;
  if (l.has_pole) memcpy(l.pole, w->pole, sizeof l.pole);
  l.n = L_;
  l.tolerance = d->tolerance;
  ik__two_bone_run_lanes(&l);
  for (e = 0; e < L_; e++) {
    int i, k;
    if (!w->ok[e]) continue;
    ik__result_init(&w->result[e]); /* a refused job's */
    if ((w->status[e] = ik__two_bone_lane_result(&l, e, &w->result[e])) != IK_OK) continue;
    for (i = 1; i < 3; i++)
      for (k = 0; k < 3; k++) w->pos[((size_t)i * 3 + (size_t)k) * L_ + (size_t)e] = l.p[i][k][e];
  }
}

/* The core chain a bone chain's solver is given, lane e's pose copied out of the lanes. */
static void chain_lane(const ik_crowd *c, lane_work *w, int e, int j, ik_chain *chain) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  ik_vec3 *p = w->aos + (size_t)e * (size_t)d->count;
  ik_real *len = w->aos_len + (size_t)e * (size_t)(d->count - 1);
  int i;
  for (i = 0; i < d->count; i++) p[i] = lane_v3(w->pos + (size_t)i * 3 * L_, e);
  for (i = 0; i + 1 < d->count; i++) len[i] = w->len[(size_t)i * L_ + (size_t)e];
  ik_chain_init(chain, p, d->count, len);
  chain->rest_positions = (ik_vec3 *)c->t->rest[j];
  if (d->pole_bone >= 0) {
    chain->has_pole = 1;
    chain->pole = lane_v3(w->pole[0], e);
  }
}

/* The jobs of a pass's chains that are not two-bone, one a lane, in (chain, group, lane)
 * order: filled, then read back in that order. */
typedef struct crowd_jobs {
  ik_batch batch;
  int n[4];
} crowd_jobs;

static void add_job(const ik_crowd *c, crowd_scratch *s, crowd_jobs *jobs, lane_work *w, int e, int j) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  const int solver = c->t->solver[j];
  const ik_vec3 target = lane_v3(w->target[0], e);
  ik_chain chain;
  chain_lane(c, w, e, j, &chain);
  if (solver == IK_BONE_CHAIN_FABRIK) {
    ik_fabrik_job *job = &s->fabrik[jobs->n[solver]++];
    ik_fabrik_job_init(job, &chain, target);
    job->tolerance = d->tolerance;
    job->max_iterations = d->iterations;
  } else if (solver == IK_BONE_CHAIN_CCD) {
    ik_ccd_job *job = &s->ccd[jobs->n[solver]++];
    ik_ccd_job_init(job, &chain, target);
    job->tolerance = d->tolerance;
    job->max_iterations = d->iterations;
  } else {
    ik_dls_job *job = &s->dls[jobs->n[solver]++];
    ik_dls_job_init(job, &chain, target);
    job->tolerance = d->tolerance;
    job->max_iterations = d->iterations;
  }
}

static void take_job(const ik_crowd *c, const crowd_scratch *s, crowd_jobs *jobs, lane_work *w, int e,
                     int j) {
  const int solver = c->t->solver[j], k = jobs->n[solver]++;
  const ik_vec3 *p = w->aos + (size_t)e * (size_t)c->t->chains[j].count;
  int i;
  if (solver == IK_BONE_CHAIN_FABRIK)
    w->status[e] = s->fabrik_status[k], w->result[e] = s->fabrik[k].result;
  else if (solver == IK_BONE_CHAIN_CCD)
    w->status[e] = s->ccd_status[k], w->result[e] = s->ccd[k].result;
  else
    w->status[e] = s->dls_status[k], w->result[e] = s->dls[k].result;
  if (w->status[e] == IK_OK)
    for (i = 1; i < c->t->chains[j].count; i++) set_lane_v3(w->pos + (size_t)i * 3 * L_, e, p[i]);
}

/* ik_bone_chain_finish_begin of a solved lane: the warm start kept; then its bones
 * turned by the rotations job, every such lane of the group at once. */
static int finish_group(const ik_crowd *c, lane_work *w, const lane_chain *lc, const crowd_bone *bone, int j,
                        ik__rotations_soa *rs) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  int e, i, done[L_];
  rs->count = d->count;
  rs->stride = L_;
  rs->mask = 0;
  for (e = 0; e < L_; e++) {
    done[e] = w->ok[e] && w->status[e] == IK_OK;
    if (w->ok[e]) lc->result[e] = w->result[e];
    if (done[e]) lc->has_warm[e] = 1, rs->mask |= 1u << e;
  }
  keep_group(d, w, lc, done);
  if (!rs->mask) return 0;
  for (i = 0; i < d->count; i++) {
    rs->before[i] = bone[d->bones[i]].pw[0];
    rs->solved[i] = w->pos + (size_t)i * 3 * L_;
    rs->rotations[i] = w->rot + (size_t)i * 4 * L_;
    rs->memory[i] = i + 1 < d->count ? lc->memory + (size_t)i * 4 * L_ : NULL; /* the tip's is never read */
  }
  return 1;
}

/* ik_bone_chain_scatter of chain j across a group's lanes where `go`: each bone's world
 * rotation set as ik_skeleton_set_world_rotation sets it (against its parent as it
 * stands then), a bone of them all at once, the tip's distance measured. A lane stops
 * where its scatter would refuse (the instance failed). */
static void scatter_group(ik_crowd *c, crowd_scratch *sc, unsigned char *stale, crowd_bone *bone,
                          lane_work *w, const lane_chain *lc, int g, const int *go, int j) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  const int count = d->count, tip = d->bones[count - 1];
  int live[L_], any = 0, e, i;
  for (e = 0; e < L_; e++) {
    live[e] = go[e] && w->ok[e] && w->status[e] == IK_OK;
    if (go[e] && w->ok[e] && !live[e]) c->failed[g * L_ + e] = 1;
    any |= live[e];
  }
  if (!any) return;
  /* A template's chains never match the target's rotation: the tip keeps its own. */
  for (i = 0; i < count - 1; i++) {
    const int b = d->bones[i], p = c->parent[b];
    const ik_real *rot = w->rot + (size_t)i * 4 * L_;
    ik_real q[4][L_];
    for (e = 0; e < L_; e++) {
      ik_quat r = ik_quat_identity();
      if (live[e]) {
        r = lane_q(rot, e);
        /* ik__check_quat's test (finite, in range), inlined: it runs for every bone. */
        if (!(ik__real_in_range(r.x) & ik__real_in_range(r.y) & ik__real_in_range(r.z) &
              ik__real_in_range(r.w)) ||
            !(ik_quat_dot(r, r) > IK_TINY_LEN2)) {
          live[e] = 0;
          c->failed[g * L_ + e] = 1;
          r = ik_quat_identity();
        }
      }
      q[0][e] = r.x, q[1][e] = r.y, q[2][e] = r.z, q[3][e] = r.w;
    }
    if (p >= 0) fresh(c, sc, stale, bone, -1, p);
    local_lanes(bone, b, p, (const ik_real(*)[L_])q, live);
    mark_stale(c, stale, b);
  }
  fresh(c, sc, stale, bone, -1, tip);
  for (e = 0; e < L_; e++) {
    if (!live[e]) continue;
    lc->result[e].distance = ik_vec3_dist(lane_v3(bone[tip].pw[0], e), lane_v3(w->target[0], e));
    lc->result[e].reached = lc->result[e].distance <= d->tolerance;
  }
}

/* The groups of the block brought current. */
static void forward_block(ik_crowd *c, crowd_scratch *s, const crowd_block *k) {
  crowd_bone *bone[GROUPS_PER_BLOCK];
  unsigned char *stale[GROUPS_PER_BLOCK];
  int gi;
  for (gi = 0; gi < k->groups; gi++) {
    bone[gi] = group_at(c, k->g0 + gi);
    stale[gi] = s->stale + (size_t)gi * (size_t)c->t->bones;
  }
  forward_groups(c, bone, stale, k->groups);
}

/* Pass p of the block on thread part's buffers: every chain of the pass read, the feet
 * placed, solved (two-bone limbs across the lanes, the others in the core's ik_batch,
 * FABRIK chains side by side in its SIMD lanes), turned in vector lanes, then written
 * back. */
static void run_pass(ik_crowd *c, int part, crowd_block *k, int p) {
  const ik_crowd_template *t = c->t;
  crowd_scratch *s = &c->scratch[part];
  crowd_jobs jobs;
  int j, gi, e, go[GROUPS_PER_BLOCK][L_];
  forward_block(c, s, k);
  /* Read: an instance any of whose chains of the pass cannot be read fails. */
  for (j = 0; j < t->chain_count; j++) {
    if (t->pass[j] != p) continue;
    for (gi = 0; gi < k->groups; gi++) {
      const int g = k->g0 + gi;
      const crowd_bone *bone = group_at(c, g);
      lane_work *w = work_at(c, s, j, gi);
      const lane_chain lc = chain_at(c, g, j);
      for (e = 0; e < L_; e++) {
        w->ok[e] = k->live[gi][e];
        if (w->ok[e] && t->chains[j].target_bone < 0) host_target(c, w, g, e, j);
      }
      gather_group(bone, &t->chains[j], w);
      for (e = 0; e < L_; e++) {
        if (!k->live[gi][e]) continue;
        if (!w->ok[e] || (t->chains[j].has_foot &&
                          ik__foot_check_inputs(&t->chains[j].foot, &lc.foot[e], lane_v3(w->target[0], e),
                                                ik_quat_identity(), 0) != IK_OK)) {
          w->ok[e] = 0;
          k->live[gi][e] = 0;
          c->failed[g * L_ + e] = 1;
        }
      }
    }
  }
  /* Feet, starts, and the solves. */
  memset(&jobs, 0, sizeof jobs);
  ik_batch_init(&jobs.batch);
  for (j = 0; j < t->chain_count; j++) {
    if (t->pass[j] != p) continue;
    for (gi = 0; gi < k->groups; gi++)
      for (e = 0; e < L_; e++)
        work_at(c, s, j, gi)->ok[e] &= k->live[gi][e]; /* a later chain may have failed it */
    if (t->chains[j].has_foot) place_feet(c, s, k, j);
    for (gi = 0; gi < k->groups; gi++) {
      const crowd_bone *bone = group_at(c, k->g0 + gi);
      lane_work *w = work_at(c, s, j, gi);
      const lane_chain lc = chain_at(c, k->g0 + gi, j);
      start_group(bone, &t->chains[j], w, &lc);
      if (t->solver[j] == IK_BONE_CHAIN_TWO_BONE)
        two_bone_group(c, w, j);
      else
        for (e = 0; e < L_; e++)
          if (w->ok[e]) add_job(c, s, &jobs, w, e, j);
    }
  }
  jobs.batch.fabrik = s->fabrik, jobs.batch.fabrik_count = jobs.n[IK_BONE_CHAIN_FABRIK];
  jobs.batch.ccd = s->ccd, jobs.batch.ccd_count = jobs.n[IK_BONE_CHAIN_CCD];
  jobs.batch.dls = s->dls, jobs.batch.dls_count = jobs.n[IK_BONE_CHAIN_DLS];
  jobs.batch.fabrik_status = s->fabrik_status;
  jobs.batch.ccd_status = s->ccd_status;
  jobs.batch.dls_status = s->dls_status;
  ik_batch_run_slice(&jobs.batch, 0, 1, ik_pool_lanes(c->pool, part)); /* well formed by construction */
  memset(jobs.n, 0, sizeof jobs.n);
  for (j = 0; j < t->chain_count; j++) {
    ik__rotations_soa turns[GROUPS_PER_BLOCK];
    int n = 0;
    if (t->pass[j] != p) continue;
    for (gi = 0; gi < k->groups; gi++) {
      lane_work *w = work_at(c, s, j, gi);
      const lane_chain lc = chain_at(c, k->g0 + gi, j);
      if (t->solver[j] != IK_BONE_CHAIN_TWO_BONE)
        for (e = 0; e < L_; e++)
          if (w->ok[e]) take_job(c, s, &jobs, w, e, j);
      n += finish_group(c, w, &lc, group_at(c, k->g0 + gi), j, &turns[n]);
    }
    /* The block's groups' turns together: their chains of square roots overlap. */
    if (n) ik__rotations_run_soa(turns, n);
  }
  /* Written back, chain by chain across each group's lanes (an instance's chains keep
   * their order), every instance that was going when the writing began. */
  for (gi = 0; gi < k->groups; gi++)
    for (e = 0; e < L_; e++) go[gi][e] = k->live[gi][e];
  for (j = 0; j < t->chain_count; j++) {
    if (t->pass[j] != p) continue;
    for (gi = 0; gi < k->groups; gi++) {
      const lane_chain lc = chain_at(c, k->g0 + gi, j);
      scatter_group(c, s, s->stale + (size_t)gi * (size_t)t->bones, group_at(c, k->g0 + gi),
                    work_at(c, s, j, gi), &lc, k->g0 + gi, go[gi], j);
    }
  }
  for (gi = 0; gi < k->groups; gi++)
    for (e = 0; e < L_; e++) k->live[gi][e] &= !c->failed[(k->g0 + gi) * L_ + e];
}

/* Block `block` (IK_CROWD_BLOCK slots from block * IK_CROWD_BLOCK) on thread part. */
static void run_block(ik_crowd *c, int part, int block) {
  crowd_scratch *s = &c->scratch[part];
  const int first = block * IK_CROWD_BLOCK;
  const int end = first + IK_CROWD_BLOCK < c->capacity ? first + IK_CROWD_BLOCK : c->capacity;
  crowd_block k;
  int slot, p, any = 0;
  memset(&k, 0, sizeof k);
  k.g0 = first / L_;
  k.groups = groups_of(end) - k.g0;
  for (slot = first; slot < end; slot++) {
    if (!c->used[slot]) continue;
    take_root(c, slot);
    k.live[slot / L_ - k.g0][slot % L_] = 1;
    any = 1;
  }
  if (!any) return;
  memset(s->stale, 1, GROUPS_PER_BLOCK * (size_t)c->t->bones); /* every root moved */
  for (p = 0; p < c->t->passes; p++) run_pass(c, part, &k, p);
  forward_block(c, s, &k);
  for (slot = first; slot < end; slot++) {
    int j;
    if (!c->used[slot]) continue;
    write_pose(c, slot);
    if (c->failed[slot]) {
      if (s->first_failed < 0) s->first_failed = slot;
      continue;
    }
    for (j = 0; j < c->t->chain_count; j++)
      s->reached += chain_at(c, slot / L_, j).result[slot % L_].reached != 0;
  }
}

/* Thread part's share of the slots: whole blocks of IK_CROWD_BLOCK slots (so no two
 * threads share a group of lanes), [*first, *last) of them. */
static void part_blocks(const ik_crowd *c, int part, int *first, int *last) {
  const int blocks = (c->capacity + IK_CROWD_BLOCK - 1) / IK_CROWD_BLOCK;
  *first = (int)((long long)blocks * part / c->threads);
  *last = (int)((long long)blocks * (part + 1) / c->threads);
}

static void check_parts(void *ctx, int begin, int end) {
  const ik_crowd *c = (const ik_crowd *)ctx;
  int part, first, last;
  for (part = begin; part < end; part++) {
    part_blocks(c, part, &first, &last);
    last = last * IK_CROWD_BLOCK < c->capacity ? last * IK_CROWD_BLOCK : c->capacity;
    check_inputs(c, &c->scratch[part], first * IK_CROWD_BLOCK, last);
  }
}

static void solve_parts(void *ctx, int begin, int end) {
  ik_crowd *c = (ik_crowd *)ctx;
  int part, block, first, last;
  for (part = begin; part < end; part++) {
    c->scratch[part].reached = 0;
    c->scratch[part].first_failed = -1;
    part_blocks(c, part, &first, &last);
    for (block = first; block < last; block++) run_block(c, part, block);
  }
}

ik_status ik_crowd_solve(ik_crowd *c, ik_real dt, int *reached, ik_error *err) {
  int part, first_failed = -1, count = 0;
  if (reached) *reached = 0;
  if (!c->pool) return fail(err, IK_E_NULL, "threads", -1);
  if (!(dt >= 0) || !ik__real_in_range(dt)) return fail(err, IK_E_PARAMETER, "dt", -1);
  /* Every input checked, on the threads, before anything moves: the parts are in slot
   * order, so the first part's refusal is the lowest slot's. */
  ik_pool_run(c->pool, c->threads, check_parts, c);
  for (part = 0; part < c->threads; part++) {
    const crowd_scratch *s = &c->scratch[part];
    if (s->bad_slot >= 0) return fail(err, s->bad, s->bad_field, s->bad_slot);
  }
  c->dt = dt;
  ik_pool_run(c->pool, c->threads, solve_parts, c);
  for (part = 0; part < c->threads; part++) {
    count += c->scratch[part].reached;
    if (first_failed < 0) first_failed = c->scratch[part].first_failed;
  }
  if (reached) *reached = count;
  if (first_failed >= 0) return fail(err, IK_E_PARAMETER, "chains", first_failed);
  return IK_OK;
}

ik_status ik_crowd_result(const ik_crowd *c, int slot, int chain, ik_result *result, int *grounded) {
  lane_chain lc;
  if (!ik_crowd_used(c, slot) || chain < 0 || chain >= c->t->chain_count) return IK_E_PARAMETER;
  lc = chain_at(c, slot / L_, chain);
  if (result) *result = lc.result[slot % L_];
  if (grounded) *grounded = c->t->chains[chain].has_foot ? lc.grounded[slot % L_] : 0;
  return IK_OK;
}
