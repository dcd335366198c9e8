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

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)

struct ik_crowd_template {
  int bones, chain_count, targets, passes, feet, most_in_pass;
  ik_crowd_chain_desc chains[IK_CROWD_MAX_CHAINS];
  int pass[IK_CROWD_MAX_CHAINS];        /* 0-based */
  int target_slot[IK_CROWD_MAX_CHAINS]; /* among the host's targets, or -1 */
  size_t sk_size;                       /* the skeleton follows the header */
};

/* One instance's record; its arrays (as many as the template has chains) and chains
 * follow it in the block. Its bones are in the crowd's pose lanes (crowd_bone). The
 * chains and nodes hang from the template's skeleton: only ik_crowd_add reads them
 * through it, the solve reads and writes the lanes. */
typedef struct crowd_inst {
  ik_node *target_node, *pole_node;
  ik_foot_state *foot;
  ik_bone_chain **chains;
  int *lane, *slot, *grounded;
  int used, failed;
} crowd_inst;

/* Bytes of a record and its arrays for n chains. */
static size_t record_size(int n) {
  return ALIGN16(sizeof(crowd_inst)) + ALIGN16(2 * (size_t)n * sizeof(ik_node)) +
         ALIGN16((size_t)n * sizeof(ik_foot_state)) + ALIGN16((size_t)n * sizeof(ik_bone_chain *)) +
         ALIGN16(3 * (size_t)n * sizeof(int));
}

/* Points the record's arrays into the bytes after it; the chains follow them. */
static void lay_out(crowd_inst *in, int n) {
  char *at = (char *)in + ALIGN16(sizeof(crowd_inst));
  memset(in, 0, record_size(n));
  in->target_node = (ik_node *)(void *)at;
  in->pole_node = in->target_node + n;
  at += ALIGN16(2 * (size_t)n * sizeof(ik_node));
  in->foot = (ik_foot_state *)(void *)at;
  at += ALIGN16((size_t)n * sizeof(ik_foot_state));
  in->chains = (ik_bone_chain **)(void *)at;
  at += ALIGN16((size_t)n * sizeof(ik_bone_chain *));
  in->lane = (int *)(void *)at;
  in->slot = in->lane + n;
  in->grounded = in->slot + n;
}

/* A group of IK_CROWD_LANES instances' bone: its local transform (the animated pose:
 * the root from the host, the rest from the template, the solved rotations) and its
 * world transform, a component's lanes side by side. Instance slot s is lane
 * s % IK_CROWD_LANES of group s / IK_CROWD_LANES; a group holds every bone of the
 * template, in its order. */
#define IK_CROWD_LANES 8
#define GROUPS_PER_BLOCK (IK_CROWD_BLOCK / IK_CROWD_LANES)
typedef struct crowd_bone {
  ik_real pl[3][IK_CROWD_LANES], rl[4][IK_CROWD_LANES]; /* local: position, rotation */
  ik_real pw[3][IK_CROWD_LANES], rw[4][IK_CROWD_LANES]; /* world */
} crowd_bone;

#define L_ IK_CROWD_LANES
static ik_vec3 lane_v3(const ik_real *v, int e) { return ik_vec3_make(v[e], v[L_ + e], v[2 * L_ + e]); }
static ik_quat lane_q(const ik_real *q, int e) {
  return ik_quat_make(q[e], q[L_ + e], q[2 * L_ + e], q[3 * L_ + e]);
}
static void set_lane_v3(ik_real *v, int e, ik_vec3 a) { v[e] = a.x, v[L_ + e] = a.y, v[2 * L_ + e] = a.z; }
static void set_lane_q(ik_real *q, int e, ik_quat a) {
  q[e] = a.x, q[L_ + e] = a.y, q[2 * L_ + e] = a.z, q[3 * L_ + e] = a.w;
}
#undef L_

/* One thread's jobs for a pass of its current block. */
typedef struct crowd_scratch {
  ik_fabrik_job *fabrik;
  ik_two_bone_job *two_bone;
  ik_status *fabrik_status, *two_bone_status;
  ik_rotations_job rot[IK_CROWD_BLOCK]; /* one chain of the block's instances at a time */
  ik_rotations_job *rot_jobs[IK_CROWD_BLOCK];
  /* The bones of the block's groups (GROUPS_PER_BLOCK, t->bones each) whose world
   * transforms their locals no longer give, and the path to one (as ik_skeleton's lazy
   * update keeps them). */
  unsigned char *stale;
  int *path;
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
  const int *parent;      /* the template's bones' parents (-1 for a root) */
  const int *subtree_end; /* one past each bone's last descendant */
  crowd_bone *pose;       /* (capacity / IK_CROWD_LANES, rounded up) groups of t->bones */
  char *instances;
  size_t inst_size, chain_offset[IK_CROWD_MAX_CHAINS];
};

static const int root_width = 7;

/* ---- templates ---- */

static size_t template_header(void) { return ALIGN16(sizeof(ik_crowd_template)); }

static ik_skeleton *template_sk(const ik_crowd_template *t) {
  return (ik_skeleton *)(void *)((char *)t + template_header());
}

/* The probe instance after the skeleton: what template_init builds to check the
 * chains as a crowd will. */
static size_t probe_size(void) {
  return record_size(IK_CROWD_MAX_CHAINS) + ALIGN16(ik_bone_chain_size(IK_CROWD_MAX_JOINTS, 1));
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

/* Builds chain j of instance `in` (its skeleton in place) in mem: 0, or the status
 * with *field naming what was refused. */
static ik_status build_chain(const ik_crowd_template *t, crowd_inst *in, ik_skeleton *sk, int j, void *mem,
                             const char **field) {
  const ik_crowd_chain_desc *d = &t->chains[j];
  ik_bone_chain *c = ik_bone_chain_init(mem, d->count, 1);
  ik_ref ref;
  ik_vec3 tip;
  ik_status st;
  in->chains[j] = c;
  *field = "bones";
  if ((st = ik_bone_chain_set_bones(c, sk, d->bones, NULL)) != IK_OK) return st;
  if (d->solver >= 0) c->solver = d->solver;
  c->iterations = d->iterations;
  c->tolerance = d->tolerance;
  *field = "target";
  if (d->target_bone >= 0) {
    if ((st = ik_node_init(&in->target_node[j], d->target_offset, ik_quat_identity())) != IK_OK) return st;
    ik_node_set_parent_bone(&in->target_node[j], sk, d->target_bone);
    ref = ik_ref_node(&in->target_node[j], NULL);
  } else {
    ik_skeleton_get_world(sk, d->bones[d->count - 1], &tip, NULL);
    ref = ik_ref_vec3(tip);
  }
  if ((st = ik_bone_chain_set_target(c, ref)) != IK_OK) return st;
  *field = "pole";
  if (d->pole_bone >= 0) {
    if ((st = ik_node_init(&in->pole_node[j], d->pole_offset, ik_quat_identity())) != IK_OK) return st;
    ik_node_set_parent_bone(&in->pole_node[j], sk, d->pole_bone);
    ref = ik_ref_node(&in->pole_node[j], NULL);
    if ((st = ik_bone_chain_set_pole(c, &ref, NULL)) != IK_OK) return st;
  }
  ik_foot_state_init(&in->foot[j]);
  in->grounded[j] = 0;
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
  int j, k, in_pass[IK_CROWD_MAX_CHAINS];
  char *probe;
  crowd_inst *in;
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
  probe = (char *)template_sk(t) + ALIGN16(t->sk_size);
  in = (crowd_inst *)(void *)probe;
  lay_out(in, count);
  for (j = 0; j < count; j++) {
    const char *field;
    void *cm = (char *)in + record_size(count);
    if ((st = build_chain(t, in, template_sk(t), j, cm, &field)) != IK_OK) return fail(err, st, field, j);
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
  memset(in_pass, 0, sizeof in_pass);
  for (j = 0; j < count; j++)
    if (++in_pass[t->pass[j]] > t->most_in_pass) t->most_in_pass = in_pass[t->pass[j]];
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
 * then each instance's record and chains. */
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

static size_t parents_size(const ik_crowd_template *t) { return ALIGN16(2 * (size_t)t->bones * sizeof(int)); }

static int groups_of(int capacity) { return (capacity + IK_CROWD_LANES - 1) / IK_CROWD_LANES; }

static size_t pose_size(const ik_crowd_template *t, int capacity) {
  return ALIGN16((size_t)groups_of(capacity) * (size_t)t->bones * sizeof(crowd_bone));
}

/* Group g's bones. */
static crowd_bone *group_at(const ik_crowd *c, int g) { return c->pose + (size_t)g * (size_t)c->t->bones; }

/* Puts lane e of group g at the template's pose. */
static void pose_rest(ik_crowd *c, int g, int e) {
  const ik_skeleton *sk = template_sk(c->t);
  crowd_bone *bone = group_at(c, g);
  int b;
  for (b = 0; b < c->t->bones; b++) {
    ik_vec3 p;
    ik_quat q;
    ik_skeleton_get_local(sk, b, &p, &q);
    set_lane_v3(bone[b].pl[0], e, p);
    set_lane_q(bone[b].rl[0], e, q);
    ik_skeleton_get_world(sk, b, &p, &q);
    set_lane_v3(bone[b].pw[0], e, p);
    set_lane_q(bone[b].rw[0], e, q);
  }
}

static size_t inst_size(const ik_crowd_template *t) {
  size_t n = record_size(t->chain_count);
  int j;
  for (j = 0; j < t->chain_count; j++) n += ALIGN16(ik_bone_chain_size(t->chains[j].count, 1));
  return n;
}

size_t ik_crowd_size(const ik_crowd_template *t, int capacity) {
  if (!t || capacity < 1 || capacity > IK_CROWD_MAX_CAPACITY) return 0;
  return crowd_header() + parents_size(t) + views_size(t, capacity) + pose_size(t, capacity) +
         (size_t)capacity * inst_size(t);
}

static crowd_inst *inst_at(const ik_crowd *c, int slot) {
  return (crowd_inst *)(void *)(c->instances + (size_t)slot * c->inst_size);
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
  at += parents_size(t);
  for (v = 0; v < IK_CROWD_VIEWS; v++) {
    const size_t n = (size_t)capacity * (size_t)c->width[v] * sizeof(ik_real);
    c->view[v] = c->width[v] ? (ik_real *)(void *)at : NULL;
    memset(at, 0, n);
    at += ALIGN16(n);
  }
  c->pose = (crowd_bone *)(void *)at;
  for (j = 0; j < capacity; j++) pose_rest(c, j / IK_CROWD_LANES, j % IK_CROWD_LANES);
  /* The lanes past the last slot compute alongside the others: keep them finite. */
  for (j = capacity; j < groups_of(capacity) * IK_CROWD_LANES; j++)
    pose_rest(c, j / IK_CROWD_LANES, j % IK_CROWD_LANES);
  at += pose_size(t, capacity);
  c->instances = at;
  c->inst_size = inst_size(t);
  off = record_size(t->chain_count);
  for (j = 0; j < t->chain_count; j++) {
    c->chain_offset[j] = off;
    off += ALIGN16(ik_bone_chain_size(t->chains[j].count, 1));
  }
  for (j = 0; j < capacity; j++) inst_at(c, j)->used = 0;
  *out = c;
  return IK_OK;
}

/* Thread `part`'s arrays for a pass of a block. */
static size_t scratch_jobs(const ik_crowd *c) { return (size_t)IK_CROWD_BLOCK * (size_t)c->t->most_in_pass; }

ik_status ik_crowd_start(ik_crowd *c, int threads) {
  const size_t n = scratch_jobs(c);
  const size_t per = ALIGN16(n * (sizeof(ik_fabrik_job) + sizeof(ik_two_bone_job) + 2 * sizeof(ik_status))) +
                     ALIGN16((size_t)c->t->bones * sizeof(int)) +
                     ALIGN16(GROUPS_PER_BLOCK * (size_t)c->t->bones);
  char *at;
  int i;
  if (threads < 1 || threads > IK_POOL_MAX_THREADS) return IK_E_PARAMETER;
  ik_crowd_stop(c);
  c->scratch =
      (crowd_scratch *)malloc(ALIGN16((size_t)threads * sizeof(crowd_scratch)) + (size_t)threads * per);
  if (!c->scratch) return IK_E_NULL;
  c->pool = ik_pool_new(threads);
  if (!c->pool) {
    free(c->scratch);
    c->scratch = NULL;
    return IK_E_NULL;
  }
  at = (char *)c->scratch + ALIGN16((size_t)threads * sizeof(crowd_scratch));
  for (i = 0; i < threads; i++) {
    crowd_scratch *s = &c->scratch[i];
    s->fabrik = (ik_fabrik_job *)(void *)at;
    s->two_bone = (ik_two_bone_job *)(void *)(s->fabrik + n);
    s->fabrik_status = (ik_status *)(void *)(s->two_bone + n);
    s->two_bone_status = s->fabrik_status + n;
    s->path = (int *)(void *)(at + ALIGN16(n * (sizeof(ik_fabrik_job) + sizeof(ik_two_bone_job) +
                                                2 * sizeof(ik_status))));
    s->stale = (unsigned char *)(s->path + ALIGN16((size_t)c->t->bones * sizeof(int)) / sizeof(int));
    at += per;
  }
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

/* Puts instance `slot`'s pose at rest into the views. */
static void write_rest(ik_crowd *c, int slot) {
  const ik_crowd_template *t = c->t;
  crowd_inst *in = inst_at(c, slot);
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
    p = in->chains[j]->target_ref.value;
    v[0] = p.x, v[1] = p.y, v[2] = p.z;
  }
}

/* Writes the instance's bones (their world transforms current) into the output views. */
static void write_pose(ik_crowd *c, int slot) {
  const crowd_bone *bone = group_at(c, slot / IK_CROWD_LANES);
  const int e = slot % IK_CROWD_LANES;
  ik_real *r = c->view[IK_CROWD_ROTATIONS] + (size_t)slot * (size_t)c->width[IK_CROWD_ROTATIONS];
  ik_real *p = c->view[IK_CROWD_POSITIONS] + (size_t)slot * (size_t)c->width[IK_CROWD_POSITIONS];
  int b;
  for (b = 0; b < c->t->bones; b++, r += 4, p += 3) {
    r[0] = bone[b].rl[0][e], r[1] = bone[b].rl[1][e], r[2] = bone[b].rl[2][e], r[3] = bone[b].rl[3][e];
    p[0] = bone[b].pw[0][e], p[1] = bone[b].pw[1][e], p[2] = bone[b].pw[2][e];
  }
}

int ik_crowd_add(ik_crowd *c) {
  const ik_crowd_template *t = c->t;
  int slot, j;
  crowd_inst *in;
  for (slot = 0; slot < c->capacity && inst_at(c, slot)->used; slot++) continue;
  if (slot == c->capacity) return -1;
  in = inst_at(c, slot);
  lay_out(in, t->chain_count);
  pose_rest(c, slot / IK_CROWD_LANES, slot % IK_CROWD_LANES);
  for (j = 0; j < t->chain_count; j++) {
    const char *field;
    /* The template built these very chains on this very skeleton: none refuses. */
    (void)build_chain(t, in, template_sk(t), j, (char *)in + c->chain_offset[j], &field);
  }
  in->used = 1;
  c->count++;
  write_rest(c, slot);
  write_pose(c, slot);
  return slot;
}

ik_status ik_crowd_remove(ik_crowd *c, int slot) {
  if (slot < 0 || slot >= c->capacity || !inst_at(c, slot)->used) return IK_E_PARAMETER;
  inst_at(c, slot)->used = 0;
  c->count--;
  return IK_OK;
}

int ik_crowd_used(const ik_crowd *c, int slot) {
  return slot >= 0 && slot < c->capacity && inst_at(c, slot)->used;
}
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

/* The inputs of every used instance, before anything moves. */
static ik_status check_inputs(const ik_crowd *c, ik_error *err) {
  int slot;
  for (slot = 0; slot < c->capacity; slot++) {
    const ik_real *r = c->view[IK_CROWD_ROOTS] + (size_t)slot * root_width;
    ik_status st;
    if (!inst_at(c, slot)->used) continue;
    if ((st = check_reals(r, root_width)) != IK_OK) return fail(err, st, "roots", slot);
    if (!(r[3] != 0 || r[4] != 0 || r[5] != 0 || r[6] != 0)) return fail(err, IK_E_PARAMETER, "roots", slot);
    if (c->t->targets &&
        (st = check_reals(c->view[IK_CROWD_TARGETS] + (size_t)slot * (size_t)c->width[IK_CROWD_TARGETS],
                          c->width[IK_CROWD_TARGETS])) != IK_OK)
      return fail(err, st, "targets", slot);
  }
  return IK_OK;
}

/* The host's inputs into instance `slot`: its root bone, as ik_skeleton_set_local_*
 * takes them (a rotation too short to normalise leaves the last), and its kept targets. */
static void take_inputs(ik_crowd *c, int slot) {
  const ik_crowd_template *t = c->t;
  crowd_inst *in = inst_at(c, slot);
  crowd_bone *root = group_at(c, slot / IK_CROWD_LANES);
  const int e = slot % IK_CROWD_LANES;
  const ik_real *r = c->view[IK_CROWD_ROOTS] + (size_t)slot * root_width;
  const ik_quat q = ik_quat_make(r[3], r[4], r[5], r[6]);
  int j;
  in->failed = 0;
  set_lane_v3(root->pl[0], e, ik_vec3_make(r[0], r[1], r[2]));
  if (ik_quat_dot(q, q) > IK_TINY_LEN2) set_lane_q(root->rl[0], e, ik_quat_normalize(q));
  for (j = 0; j < t->chain_count; j++) {
    const ik_real *v;
    if (t->target_slot[j] < 0) continue;
    v = c->view[IK_CROWD_TARGETS] + (size_t)slot * (size_t)c->width[IK_CROWD_TARGETS] + 3 * t->target_slot[j];
    in->chains[j]->target_ref.value = ik_vec3_make(v[0], v[1], v[2]);
  }
}

/* ik_skeleton.c's compute_world for bone b of lane e. */
static void world_one(const ik_crowd *c, crowd_bone *bone, int b, int e) {
  const int p = c->parent[b];
  if (p < 0) {
    set_lane_v3(bone[b].pw[0], e, lane_v3(bone[b].pl[0], e));
    set_lane_q(bone[b].rw[0], e, lane_q(bone[b].rl[0], e));
  } else {
    const ik_quat parent_ws = lane_q(bone[p].rw[0], e);
    set_lane_v3(bone[b].pw[0], e,
                ik_vec3_add(lane_v3(bone[p].pw[0], e), ik_quat_rotate(parent_ws, lane_v3(bone[b].pl[0], e))));
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
/* AVX2 (not FMA: a fused multiply-add would round differently from the scalar code). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
typedef ik_real crowd_v32 __attribute__((vector_size(32)));
typedef __typeof__(((crowd_v32){0}) < ((crowd_v32){0})) crowd_m32;
#define CL_SUFFIX avx2
#define V crowd_v32
#define M crowd_m32
#define VW ((int)(32 / sizeof(ik_real)))
#define VSQRT(v) IK__SQRT_V32(crowd_v32, v)
#include "ik_crowd_lanes_body.h"
#undef CL_SUFFIX
#undef V
#undef M
#undef VW
#undef VSQRT
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

/* Bone b's world transform across the group's lanes, 32-byte vectors where the CPU has
 * them (the same bits either way). */
static void world_lanes(crowd_bone *bone, int b, int p) {
#ifdef CROWD_AVX2
  if (__builtin_cpu_supports("avx2")) {
    world_avx2(bone, b, p);
    return;
  }
#endif
  world_base(bone, b, p);
}

static void local_lanes(crowd_bone *bone, int b, int p, const ik_real (*q)[IK_CROWD_LANES],
                        const int *write) {
#ifdef CROWD_AVX2
  if (__builtin_cpu_supports("avx2")) {
    local_avx2(bone, b, p, q, write);
    return;
  }
#endif
  local_base(bone, b, p, q, write);
}
#endif

/* Forward kinematics of a group's stale bones, parents first, a bone across the lanes at
 * a time: the world transforms are a function of the locals alone, so computing them
 * eagerly gives the bits the per-object skeleton's lazy updates give. */
static void forward_group(const ik_crowd *c, crowd_bone *bone, unsigned char *stale) {
  int b, e;
  for (b = 0; b < c->t->bones; b++) {
    if (!stale[b]) continue;
    stale[b] = 0;
#if defined(__GNUC__)
    if (c->parent[b] >= 0) {
      world_lanes(bone, b, c->parent[b]);
      continue;
    }
#endif
    for (e = 0; e < IK_CROWD_LANES; e++) world_one(c, bone, b, e);
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
      world_lanes(bone, b, c->parent[b]);
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

/* A point hung `offset` from bone b (its world transform current), as an ik_node's. */
static ik_vec3 hung(const crowd_bone *bone, int e, int b, ik_vec3 offset) {
  return ik_vec3_add(lane_v3(bone[b].pw[0], e), ik_quat_rotate(lane_q(bone[b].rw[0], e), offset));
}

/* ik_bone_chain_gather of chain j of instance `in` (lane e of `bone`, its world
 * transforms current) from the lanes: its lane, or -1 where the chain's gather would
 * refuse it. */
static int gather(const ik_crowd *c, crowd_inst *in, const crowd_bone *bone, int e, int j) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  ik_bone_chain *ch = in->chains[j];
  ik_bone_chain_now *s = &ch->now;
  int i;
  ik_bone_chain_begin(ch);
  s->target_rotation = ik_quat_identity();
  /* A template's chains never match the target's rotation, so none reads it. */
  s->target = d->target_bone < 0 ? ch->target_ref.value : hung(bone, e, d->target_bone, d->target_offset);
  if (s->off) return ik_bone_chain_lane(ch);
  s->base_turn = ik_quat_identity();
  s->frame = ik_quat_identity();
  for (i = 0; i < ch->count; i++) {
    ch->before[i] = lane_v3(bone[d->bones[i]].pw[0], e);
    ch->rotations[i] = lane_q(bone[d->bones[i]].rw[0], e);
    if (i > 0 && !(ik_vec3_dist2(ch->before[i - 1], ch->before[i]) > IK_TINY_LEN2)) return -1;
  }
  if ((ch->has_base_rest && ch->constrained) || !ch->deterministic) {
    s->frame = ik_quat_normalize(ik_quat_mul(ik_quat_normalize(ch->rotations[0]),
                                             ik_quat_inverse(lane_q(bone[d->bones[0]].rl[0], e))));
    if (ch->has_base_rest && ch->constrained)
      s->base_turn = ik_quat_mul(s->frame, ik_quat_inverse(ch->base_rest));
  }
  ik_measure_lengths(ch->before, ch->count, ch->lengths);
  {
    ik_chain chain;
    ik_chain_init(&chain, ch->before, ch->count, ch->lengths);
    if (ik_chain_validate(&chain, NULL) != IK_OK) return -1;
  }
  s->pole.has = d->pole_bone >= 0;
  if (s->pole.has) {
    s->pole.position = hung(bone, e, d->pole_bone, d->pole_offset);
    s->pole.weight = 1;
  }
  return ik_bone_chain_lane(ch);
}

#if !defined(__GNUC__)
/* ik_bone_chain_scatter of chain j into the lanes: each bone's world rotation set as
 * ik_skeleton_set_world_rotation sets it (against its parent as it stands then), the
 * result measured at the tip. 0, or -1 where the chain's scatter would refuse. */
static int scatter(const ik_crowd *c, crowd_scratch *sc, unsigned char *stale, crowd_inst *in,
                   crowd_bone *bone, int e, int j) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  ik_bone_chain *ch = in->chains[j];
  ik_bone_chain_now *s = &ch->now;
  const int n = ch->match_rotation ? ch->count : ch->count - 1, tip = d->bones[ch->count - 1];
  int i;
  if (s->status != IK_OK) return -1;
  for (i = 0; i < n && !s->off; i++) {
    const int b = d->bones[i], p = c->parent[b];
    const ik_quat q = ch->rotations[i];
    ik_quat parent_ws = ik_quat_identity();
    if (ik__check_quat(q, NULL, NULL, -1) != IK_OK || !(ik_quat_dot(q, q) > IK_TINY_LEN2)) return -1;
    if (p >= 0) {
      fresh(c, sc, stale, bone, e, p);
      parent_ws = lane_q(bone[p].rw[0], e);
    }
    set_lane_q(bone[b].rl[0], e,
               ik_quat_normalize(ik_quat_mul(ik_quat_conjugate(parent_ws), ik_quat_normalize(q))));
    mark_stale(c, stale, b);
  }
  fresh(c, sc, stale, bone, e, tip);
  s->result.distance = ik_vec3_dist(lane_v3(bone[tip].pw[0], e), s->target);
  s->result.reached = !s->off && s->result.distance <= ch->tolerance;
  return 0;
}
#endif

#if defined(__GNUC__)
/* scatter across the lanes: chain j of the instances of group g (in[e], NULL where a
 * lane has none to write), a bone of them all at once. A lane stops where its scatter
 * would refuse (the instance failed), as scatter stops. */
static void scatter_group(const ik_crowd *c, crowd_scratch *sc, unsigned char *stale, crowd_bone *bone,
                          crowd_inst *const *in, int j) {
  const ik_crowd_chain_desc *d = &c->t->chains[j];
  const int count = d->count, tip = d->bones[count - 1];
  int live[IK_CROWD_LANES], any = 0, e, i;
  for (e = 0; e < IK_CROWD_LANES; e++) {
    live[e] = in[e] && in[e]->chains[j]->now.status == IK_OK;
    if (in[e] && !live[e]) in[e]->failed = 1;
    any |= live[e];
  }
  if (!any) return;
  /* A template's chains never match the target's rotation: the tip keeps its own. */
  for (i = 0; i < count - 1; i++) {
    const int b = d->bones[i], p = c->parent[b];
    ik_real q[4][IK_CROWD_LANES];
    int write[IK_CROWD_LANES];
    for (e = 0; e < IK_CROWD_LANES; e++) {
      ik_quat r = ik_quat_identity();
      if (live[e] && !in[e]->chains[j]->now.off) {
        r = in[e]->chains[j]->rotations[i];
        if (ik__check_quat(r, NULL, NULL, -1) != IK_OK || !(ik_quat_dot(r, r) > IK_TINY_LEN2)) {
          live[e] = 0;
          in[e]->failed = 1;
          r = ik_quat_identity();
        }
      }
      q[0][e] = r.x, q[1][e] = r.y, q[2][e] = r.z, q[3][e] = r.w;
      write[e] = live[e] && !in[e]->chains[j]->now.off;
    }
    if (p >= 0) fresh(c, sc, stale, bone, -1, p);
    local_lanes(bone, b, p, (const ik_real(*)[IK_CROWD_LANES])q, write);
    mark_stale(c, stale, b);
  }
  fresh(c, sc, stale, bone, -1, tip);
  for (e = 0; e < IK_CROWD_LANES; e++) {
    ik_bone_chain_now *s;
    if (!live[e]) continue;
    s = &in[e]->chains[j]->now;
    s->result.distance = ik_vec3_dist(lane_v3(bone[tip].pw[0], e), s->target);
    s->result.reached = !s->off && s->result.distance <= in[e]->chains[j]->tolerance;
  }
}
#endif

/* Chain j's foot, as ik_bone_batch places it: its ray and spring give the target. */
static void place_foot(const ik_crowd *c, crowd_inst *in, int j) {
  ik_bone_chain *ch = in->chains[j];
  ik_foot_result out;
  in->grounded[j] = 0;
  if (ik__foot_update_valid(&c->t->chains[j].foot, &in->foot[j], c->ground, ch->now.target,
                            ch->now.target_rotation, c->dt, &out) == IK_OK) {
    ch->now.target = out.position;
    ch->now.target_rotation = out.rotation;
    in->grounded[j] = out.grounded;
  }
}

/* Chain j of the n instances at `slots`, solved: its finish, the bones turned in vector
 * lanes, one instance a lane (bit for bit each chain's own rotations job). A pass's chains
 * share no bone, so each may turn before any scatters. */
static void turn_chain(ik_crowd *c, int part, const int *slots, int n, int j) {
  crowd_scratch *s = &c->scratch[part];
  int i, lanes = 0;
  for (i = 0; i < n; i++) {
    crowd_inst *in = inst_at(c, slots[i]);
    ik_rotations_job *rot = &s->rot[lanes];
    int turns;
    if (in->failed) continue;
    if (in->lane[j] == IK_LANE_FABRIK)
      turns = ik_bone_chain_finish_begin(in->chains[j], &s->fabrik[in->slot[j]].result,
                                         s->fabrik_status[in->slot[j]], rot);
    else if (in->lane[j] == IK_LANE_TWO_BONE)
      turns = ik_bone_chain_finish_begin(in->chains[j], &s->two_bone[in->slot[j]].result,
                                         s->two_bone_status[in->slot[j]], rot);
    else
      continue; /* solved and finished whole */
    if (!turns) continue;
    if (ik__rotations_lane_able(rot))
      s->rot_jobs[lanes++] = rot;
    else
      ik__rotations_run_valid(rot);
  }
  ik__rotations_run_lanes(s->rot_jobs, lanes);
}

/* The groups of the block's instances brought current. */
static void forward_block(ik_crowd *c, crowd_scratch *s, const int *slots, int n) {
  const int g0 = slots[0] / IK_CROWD_LANES;
  int g;
  for (g = g0; g <= slots[n - 1] / IK_CROWD_LANES; g++)
    forward_group(c, group_at(c, g), s->stale + (size_t)(g - g0) * (size_t)c->t->bones);
}

/* Pass p's chains of the n instances at `slots` written into the lanes: chain by chain
 * across each group's lanes where vectors are, else instance by instance; the same
 * values either way (the instances share nothing, an instance's chains keep their order). */
static void write_back(ik_crowd *c, crowd_scratch *s, const int *slots, int n, int p) {
  const ik_crowd_template *t = c->t;
  const int g0 = slots[0] / IK_CROWD_LANES, groups = slots[n - 1] / IK_CROWD_LANES - g0 + 1;
  int i, j, g;
#if defined(__GNUC__)
  {
    crowd_inst *in[GROUPS_PER_BLOCK][IK_CROWD_LANES];
    memset(in, 0, sizeof in);
    for (i = 0; i < n; i++) {
      crowd_inst *x = inst_at(c, slots[i]);
      if (!x->failed) in[slots[i] / IK_CROWD_LANES - g0][slots[i] % IK_CROWD_LANES] = x;
    }
    for (j = 0; j < t->chain_count; j++)
      for (g = 0; g < groups && t->pass[j] == p; g++)
        scatter_group(c, s, s->stale + (size_t)g * (size_t)t->bones, group_at(c, g0 + g), in[g], j);
  }
#else
  for (i = 0; i < n; i++) {
    crowd_inst *in = inst_at(c, slots[i]);
    unsigned char *stale = s->stale + (size_t)(slots[i] / IK_CROWD_LANES - g0) * (size_t)t->bones;
    if (in->failed) continue;
    memset(stale, 0, (size_t)t->bones); /* all current since the pass began */
    for (j = 0; j < t->chain_count; j++)
      if (t->pass[j] == p &&
          scatter(c, s, stale, in, group_at(c, slots[i] / IK_CROWD_LANES), slots[i] % IK_CROWD_LANES, j) != 0)
        in->failed = 1;
  }
  /* One lane's fresh bones are not its group's: the next pass computes them all. */
  memset(s->stale, 1, (size_t)groups * (size_t)t->bones);
  (void)g;
#endif
}

/* Pass p of the n instances at `slots`, on thread part's jobs: read, feet, solve in the
 * lanes, turn, write back. */
static void run_pass(ik_crowd *c, int part, const int *slots, int n, int p) {
  const ik_crowd_template *t = c->t;
  crowd_scratch *s = &c->scratch[part];
  ik_batch jobs;
  int i, j;
  forward_block(c, s, slots, n);
  ik_batch_init(&jobs);
  for (i = 0; i < n; i++) {
    crowd_inst *in = inst_at(c, slots[i]);
    const crowd_bone *bone = group_at(c, slots[i] / IK_CROWD_LANES);
    const int e = slots[i] % IK_CROWD_LANES;
    if (in->failed) continue;
    for (j = 0; j < t->chain_count && !in->failed; j++) {
      ik_foot_result probe;
      if (t->pass[j] != p) continue;
      in->lane[j] = gather(c, in, bone, e, j);
      if (in->lane[j] < 0) in->failed = 1;
      if (!in->failed && t->chains[j].has_foot &&
          ik_foot_validate(&t->chains[j].foot, &in->foot[j], c->ground, in->chains[j]->now.target,
                           in->chains[j]->now.target_rotation, 0, &probe, NULL) != IK_OK)
        in->failed = 1;
    }
    for (j = 0; j < t->chain_count && !in->failed; j++) {
      ik_bone_chain *ch = in->chains[j];
      if (t->pass[j] != p) continue;
      if (t->chains[j].has_foot) place_foot(c, in, j);
      if (in->lane[j] == IK_LANE_FABRIK) {
        in->slot[j] = jobs.fabrik_count++;
        ik_bone_chain_prepare(ch, in->lane[j], &s->fabrik[in->slot[j]]);
      } else if (in->lane[j] == IK_LANE_TWO_BONE) {
        in->slot[j] = jobs.two_bone_count++;
        ik_bone_chain_prepare(ch, in->lane[j], &s->two_bone[in->slot[j]]);
      } else {
        ik_bone_chain_solve(ch);
      }
    }
  }
  jobs.fabrik = s->fabrik;
  jobs.fabrik_status = s->fabrik_status;
  jobs.two_bone = s->two_bone;
  jobs.two_bone_status = s->two_bone_status;
  ik_batch_run_slice(&jobs, 0, 1, ik_pool_lanes(c->pool, part)); /* well formed by construction */
  for (j = 0; j < t->chain_count; j++)
    if (t->pass[j] == p) turn_chain(c, part, slots, n, j);
  write_back(c, s, slots, n, p);
}

static void run_block(ik_crowd *c, int part, const int *slots, int n) {
  crowd_scratch *s = &c->scratch[part];
  int i, p;
  for (i = 0; i < n; i++) take_inputs(c, slots[i]);
  memset(s->stale, 1, GROUPS_PER_BLOCK * (size_t)c->t->bones); /* every root moved */
  for (p = 0; p < c->t->passes; p++) run_pass(c, part, slots, n, p);
  forward_block(c, s, slots, n);
  for (i = 0; i < n; i++) write_pose(c, slots[i]);
}

/* Thread part's share of the slots, whole blocks of IK_CROWD_BLOCK slots (so no two
 * threads share a group of lanes), their used instances together. */
static void solve_part(ik_crowd *c, int part) {
  const int blocks = (c->capacity + IK_CROWD_BLOCK - 1) / IK_CROWD_BLOCK;
  const int first = (int)((long long)blocks * part / c->threads);
  const int last = (int)((long long)blocks * (part + 1) / c->threads);
  int slots[IK_CROWD_BLOCK], block;
  for (block = first; block < last; block++) {
    const int end = (block + 1) * IK_CROWD_BLOCK < c->capacity ? (block + 1) * IK_CROWD_BLOCK : c->capacity;
    int n = 0, slot;
    for (slot = block * IK_CROWD_BLOCK; slot < end; slot++)
      if (inst_at(c, slot)->used) slots[n++] = slot;
    if (n) run_block(c, part, slots, n);
  }
}

static void solve_parts(void *ctx, int begin, int end) {
  int part;
  for (part = begin; part < end; part++) solve_part((ik_crowd *)ctx, part);
}

ik_status ik_crowd_solve(ik_crowd *c, ik_real dt, int *reached, ik_error *err) {
  ik_status st;
  int slot, j, first_failed = -1, count = 0;
  if (reached) *reached = 0;
  if (!c->pool) return fail(err, IK_E_NULL, "threads", -1);
  if (!(dt >= 0) || !ik__real_in_range(dt)) return fail(err, IK_E_PARAMETER, "dt", -1);
  if ((st = check_inputs(c, err)) != IK_OK) return st;
  c->dt = dt;
  ik_pool_run(c->pool, c->threads, solve_parts, c);
  for (slot = 0; slot < c->capacity; slot++) {
    const crowd_inst *in = inst_at(c, slot);
    if (!in->used) continue;
    if (in->failed && first_failed < 0) first_failed = slot;
    for (j = 0; j < c->t->chain_count && !in->failed; j++) count += in->chains[j]->now.result.reached != 0;
  }
  if (reached) *reached = count;
  if (first_failed >= 0) return fail(err, IK_E_PARAMETER, "chains", first_failed);
  return IK_OK;
}

ik_status ik_crowd_result(const ik_crowd *c, int slot, int chain, ik_result *result, int *grounded) {
  const crowd_inst *in;
  if (!ik_crowd_used(c, slot) || chain < 0 || chain >= c->t->chain_count) return IK_E_PARAMETER;
  in = inst_at(c, slot);
  if (result) *result = in->chains[chain]->now.result;
  if (grounded) *grounded = c->t->chains[chain].has_foot ? in->grounded[chain] : 0;
  return IK_OK;
}
