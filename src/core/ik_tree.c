/*
 * FABRIK on a tree of chains (ik_tree.h). Stages of run():
 *   1. validate; measure lengths when asked; each child branch's first joint onto its
 *      parent's tip; per branch, the effector weight below it and how many children;
 *   2. lone branches (no parent, no children) out of reach: laid straight, as a chain
 *      is; every effector already there: no sweeps; a branch lying on the line to
 *      what it aims at (its target, or the weighted centroid of the targets below it):
 *      bent off it, as a chain is;
 *   3. sweeps: the forward pass, branches last to first, each onto its target or its
 *      children's weighted centroid; the backward (or constraint) pass, first to last;
 *      convergence after each; a constrained tree keeps its best pose;
 *   4. the best pose back when the last is worse; effector branches off a sub-base
 *      finished as chains; the poles root to tip, the results.
 * The passes are FABRIK's own (ik_fabrik_stages.h), so that a one-branch tree is the
 * plain chain solve.
 */
#include "ik_tree.h"

#include <stddef.h>

#include "ik_fabrik_stages.h"
#include "ik_internal.h"

void ik_tree_branch_init(ik_tree_branch *branch, const ik_chain *chain, int parent, ik_vec3 target) {
  memset(branch, 0, sizeof *branch);
  branch->chain = *chain;
  branch->parent = parent;
  branch->target = target;
  branch->weight = 1;
  branch->max_iterations = 0;
  ik__result_init(&branch->result);
}

void ik_tree_job_init(ik_tree_job *job, ik_tree_branch *branches, int count) {
  job->branches = branches;
  job->count = count;
  job->tolerance = (ik_real)1e-3;
  job->max_iterations = 10;
  job->reached = 0;
  job->iterations = 0;
  job->distance = 0;
}

static ik_status fail_at(ik_error *err, ik_status st, const char *field, int branch) {
  if (err) {
    err->status = st;
    if (field) err->field = field;
    err->index = branch;
  }
  return st;
}

static ik_real root_coord_max(ik_vec3 v) {
  ik_real m = ik_fabs(v.x);
  if (ik_fabs(v.y) > m) m = ik_fabs(v.y);
  if (ik_fabs(v.z) > m) m = ik_fabs(v.z);
  return m;
}

ik_status ik_tree_job_validate(const ik_tree_job *job, ik_error *err) {
  ik_real total = 0, root_max = 0;
  int b;
  if (!job || !job->branches) return ik__fail(err, IK_E_NULL, "branches", -1);
  if (job->count < 1) return ik__fail(err, IK_E_COUNT, "count", -1);
  if (!ik_real_is_finite(job->tolerance)) return ik__fail(err, IK_E_NOT_FINITE, "tolerance", -1);
  if (!(job->tolerance >= 0)) return ik__fail(err, IK_E_TOLERANCE, "tolerance", -1);
  if (job->max_iterations < 1) return ik__fail(err, IK_E_ITERATIONS, "max_iterations", -1);
  for (b = 0; b < job->count; b++) {
    const ik_tree_branch *br = &job->branches[b];
    ik_status st = ik_chain_validate(&br->chain, err);
    if (st != IK_OK) return fail_at(err, st, NULL, b);
    if (br->parent < -1 || br->parent >= b) return fail_at(err, IK_E_PARAMETER, "parent", b);
    if ((st = ik__check_vec3(br->target, err, "target", b)) != IK_OK) return st;
    if (!ik_real_is_finite(br->weight)) return fail_at(err, IK_E_NOT_FINITE, "weight", b);
    if (!(br->weight >= 0 && br->weight <= 1)) return fail_at(err, IK_E_WEIGHT, "weight", b);
    if (br->max_iterations < 0) return fail_at(err, IK_E_ITERATIONS, "branch_iterations", b);
    if (br->rigid_base &&
        (!br->chain.rest_positions || (br->parent >= 0 && !job->branches[br->parent].chain.rest_positions)))
      return fail_at(err, IK_E_NULL, "rest_positions", b);
    total += br->chain.derive_lengths ? ik_measure_lengths(br->chain.positions, br->chain.count, NULL)
                                      : ik__total_length(&br->chain);
    if (br->parent < 0 && root_coord_max(br->chain.positions[0]) > root_max)
      root_max = root_coord_max(br->chain.positions[0]);
  }
  if (!(root_max + total <= IK_REAL_MAX_REACH)) return ik__fail(err, IK_E_RANGE, "lengths", -1);
  return IK_OK;
}

static ik_vec3 tip_of(const ik_chain *c) { return c->positions[c->count - 1]; }

/* The direction of a chain's last bone, or fallback when it has none. */
static ik_vec3 last_bone_dir(const ik_chain *c, ik_vec3 fallback) {
  return ik_vec3_normalize_or(ik_vec3_sub(c->positions[c->count - 1], c->positions[c->count - 2]), fallback);
}

/* Weighted sum of squared effector distances: what a constrained tree's best pose is
 * the least of (for one branch of weight 1, the chain's own measure). */
static ik_real tree_err2(const ik_tree_job *job) {
  ik_real e = 0;
  int b;
  for (b = 0; b < job->count; b++) {
    const ik_tree_branch *br = &job->branches[b];
    if (br->work.children == 0 && br->work.weight > 0)
      e += br->weight * ik_vec3_dist2(tip_of(&br->chain), br->target);
  }
  return e;
}

typedef struct tree_best {
  ik_vec3 positions[IK__BEST_MAX_JOINTS];
  ik_real err2;
  int keep;
} tree_best;

static void best_copy(ik_tree_job *job, tree_best *best, int save) {
  int b, at = 0;
  for (b = 0; b < job->count; b++) {
    const ik_chain *c = &job->branches[b].chain;
    const size_t bytes = sizeof(ik_vec3) * (size_t)c->count;
    if (save)
      memcpy(best->positions + at, c->positions, bytes);
    else
      memcpy(c->positions, best->positions + at, bytes);
    at += c->count;
  }
}

static void best_offer(ik_tree_job *job, tree_best *best) {
  ik_real e;
  if (!best->keep) return;
  e = tree_err2(job);
  if (best->err2 >= 0 && !(e < best->err2)) return;
  best->err2 = e;
  best_copy(job, best, 1);
}

static void best_restore(ik_tree_job *job, tree_best *best) {
  if (!best->keep || best->err2 < 0) return;
  if (!(tree_err2(job) > best->err2)) return;
  best_copy(job, best, 0);
}

/* A child branch's base is its parent's last bone (ik_tree.h). */
static void set_child_base(ik_tree_branch *br, const ik_chain *parent) {
  ik_chain *c = &br->chain;
  const ik_vec3 now = last_bone_dir(parent, br->work.root_dir);
  if (parent->rest_positions && c->rest_positions) {
    const ik_vec3 *r = parent->rest_positions;
    const ik_vec3 rest = ik_vec3_normalize_or(ik_vec3_sub(r[parent->count - 1], r[parent->count - 2]), now);
    c->base_direction = rest;
    c->base_rotation = ik_quat_from_to(rest, now);
  } else {
    c->base_direction = now;
    c->base_rotation = ik_quat_identity();
  }
}

/* Steps of the tip frame's fit: each turns the frame by the weighted mean of the least
 * rotations that take its rigid children's first bones onto where they asked to go. */
#define FRAME_FIT_STEPS 3

/* The tip frame of branch `b`, just placed (ik_tree_work.frame): the rotation that best
 * fits its rigid children's first bones, each weighted by the effectors below it, to
 * where their second joints are (where their forward passes asked for them), found from
 * the frame the last sweep left. A bone with several children turns freely about its
 * own position, as a ball joint (a chest between its spine and its shoulders). */
static void fit_frame(ik_tree_branch *br, int b) {
  const ik_vec3 tip = tip_of(&br[b].chain);
  ik_quat frame = br[b].work.frame;
  int step, k;
  for (step = 0; step < FRAME_FIT_STEPS; step++) {
    ik_quat sum = ik_quat_make(0, 0, 0, 0);
    for (k = br[b].work.first_child; k >= 0; k = br[k].work.next_sibling) {
      const ik_chain *kc = &br[k].chain;
      ik_quat q;
      if (!br[k].rigid_base || !(br[k].work.weight > 0)) continue;
      q = ik_quat_from_to(ik_quat_rotate(frame, ik_vec3_sub(kc->rest_positions[1], kc->rest_positions[0])),
                          ik_vec3_sub(kc->positions[1], tip));
      if (ik_quat_dot(q, sum) < 0) q = ik_quat_make(-q.x, -q.y, -q.z, -q.w);
      sum = ik_quat_make(sum.x + br[k].work.weight * q.x, sum.y + br[k].work.weight * q.y,
                         sum.z + br[k].work.weight * q.z, sum.w + br[k].work.weight * q.w);
    }
    if (ik_quat_dot(sum, sum) == 0) return;
    frame = ik_quat_normalize(ik_quat_mul(ik_quat_normalize(sum), frame));
  }
  br[b].work.frame = frame;
}

/* Stage 1 and 2; returns 1 when sweeps are to run. */
static int tree_begin(ik_tree_job *job) {
  ik_tree_branch *br = job->branches;
  const ik_real tol2 = job->tolerance * job->tolerance;
  int b, sweeps = 0;
  for (b = 0; b < job->count; b++) {
    ik__prepare_lengths(&br[b].chain);
    br[b].work.children = 0;
    br[b].work.frozen = 0;
    br[b].work.kinds = ik__constraint_kinds(&br[b].chain);
    br[b].work.pull_ws = ik_vec3_zero();
    br[b].work.pull_weight = 0;
    ik__result_init(&br[b].result);
  }
  for (b = job->count - 1; b >= 0; b--) {
    br[b].work.first_child = -1;
    br[b].work.frame = ik_quat_identity();
  }
  for (b = job->count - 1; b >= 1; b--) {
    if (br[b].parent < 0) continue;
    br[br[b].parent].work.children++;
    br[b].work.next_sibling = br[br[b].parent].work.first_child;
    br[br[b].parent].work.first_child = b;
  }
  /* Weights and aims (in pull_*), leaves up. */
  for (b = job->count - 1; b >= 0; b--) {
    ik_tree_work *w = &br[b].work;
    if (w->children == 0) {
      w->weight = br[b].weight;
      w->pull_ws = ik_vec3_scale(br[b].target, br[b].weight);
      w->pull_weight = br[b].weight;
    } else {
      w->weight = w->pull_weight;
    }
    if (br[b].parent >= 0) {
      ik_tree_work *pw = &br[br[b].parent].work;
      pw->pull_ws = ik_vec3_add(pw->pull_ws, w->pull_ws);
      pw->pull_weight += w->pull_weight;
    }
  }
  for (b = 0; b < job->count; b++) {
    ik_chain *c = &br[b].chain;
    ik_tree_work *w = &br[b].work;
    const ik_vec3 aim = w->children == 0
                            ? br[b].target
                            : ik_vec3_scale(w->pull_ws, w->pull_weight > 0 ? 1 / w->pull_weight : 0);
    const ik_real total_len = ik__total_length(c);
    if (br[b].parent >= 0) {
      const ik_chain *pc = &br[br[b].parent].chain;
      c->positions[0] = tip_of(pc);
      w->root_dir = last_bone_dir(pc, br[br[b].parent].work.root_dir);
    } else {
      w->root_ws = c->positions[0];
      /* A rigid root branch's first bone keeps this direction. */
      w->root_dir = br[b].rigid_base ? ik__root_fallback_rest(c) : ik__root_fallback(c, aim);
    }
    if (w->weight <= 0) continue;
    if (br[b].parent < 0 && w->children == 0 && !br[b].rigid_base &&
        ik_vec3_dist2(aim, c->positions[0]) >= total_len * total_len) {
      ik__lay_straight(c, aim, w->kinds);
      w->frozen = 1;
      continue;
    }
    if (w->children == 0 && ik_vec3_dist2(tip_of(c), aim) > tol2) sweeps = 1;
  }
  /* Each tip frame from the pose given, for the rigid children's first bones. */
  for (b = 0; b < job->count; b++)
    if (br[b].work.first_child >= 0 && br[b].chain.rest_positions) {
      fit_frame(br, b);
      fit_frame(br, b);
    }
  if (!sweeps) return 0;
  for (b = 0; b < job->count; b++) {
    ik_chain *c = &br[b].chain;
    ik_tree_work *w = &br[b].work;
    const ik_real total_len = ik__total_length(c);
    ik_vec3 aim;
    int bent;
    if (w->weight <= 0 || w->frozen) continue;
    aim = w->children == 0 ? br[b].target : ik_vec3_scale(w->pull_ws, 1 / w->pull_weight);
    if (!(ik_vec3_dist2(aim, c->positions[0]) < total_len * total_len)) continue;
    bent = !ik__off_line(c->positions, 1, w->root_dir, total_len) &&
           ik__break_collinear(c, aim, w->root_dir, total_len);
    /* As the chain solve starts (ik_fabrik.c); a rigid first bone is not the branch's to turn. */
    if (!bent && (w->kinds & IK__HINGED) && !br[b].rigid_base) ik__hinge_face(c, aim);
  }
  return 1;
}

static int branch_active(const ik_tree_branch *br, int sweep) {
  return br->work.weight > 0 && !br->work.frozen && (br->max_iterations == 0 || sweep <= br->max_iterations);
}

/* A rigid_base branch (ik_tree.h) from its second joint on, as a chain of its own hanging
 * from its first bone; returns that bone's direction. */
static ik_vec3 rigid_rest_of(const ik_tree_branch *br, const ik_tree_branch *parent, ik_chain *sub) {
  const ik_chain *c = &br->chain;
  const ik_vec3 *r = c->rest_positions;
  const ik_vec3 rest_dir = ik_vec3_normalize(ik_vec3_sub(r[1], r[0]));
  ik_quat turn = ik_quat_identity();
  ik_vec3 dir = br->work.root_dir;
  if (parent) {
    turn = parent->work.frame;
    dir = ik_quat_rotate(turn, rest_dir);
  }
  *sub = *c;
  sub->positions = c->positions + 1;
  sub->count = c->count - 1;
  sub->lengths = c->lengths + 1;
  sub->rest_positions = r + 1;
  sub->constraints = c->constraints ? c->constraints + 1 : NULL;
  sub->base_direction = rest_dir;
  sub->base_rotation = turn;
  return dir;
}

/* The backward pass of a rigid_base branch: its first bone placed, then the rest. */
static void rigid_pass(ik_tree_branch *br, const ik_tree_branch *parent, ik_vec3 root_ws) {
  ik_chain *c = &br->chain, sub;
  const ik_vec3 dir = rigid_rest_of(br, parent, &sub);
  int kinds;
  c->positions[0] = root_ws;
  c->positions[1] = ik_vec3_madd(root_ws, dir, c->lengths[0]);
  if (c->count < 3) return;
  kinds = ik__constraint_kinds(&sub);
  if (kinds)
    ik__constrained_pass(&sub, dir, kinds);
  else
    ik__fabrik_backward_pass(sub.positions, sub.lengths, sub.count, c->positions[1], dir);
}

/* One tree sweep (the `sweep`-th, from 1). */
static void tree_sweep(ik_tree_job *job, int sweep) {
  ik_tree_branch *br = job->branches;
  int b;
  for (b = 0; b < job->count; b++) {
    br[b].work.pull_ws = ik_vec3_zero();
    br[b].work.pull_weight = 0;
  }
  for (b = job->count - 1; b >= 0; b--) {
    ik_chain *c = &br[b].chain;
    ik_tree_work *w = &br[b].work;
    ik_vec3 target;
    if (!branch_active(&br[b], sweep)) continue;
    if (w->children == 0) {
      target = br[b].target;
      br[b].result.iterations++;
    } else {
      if (!(w->pull_weight > 0)) continue;
      target = ik_vec3_scale(w->pull_ws, 1 / w->pull_weight);
    }
    ik__fabrik_forward_pass(c->positions, c->lengths, c->count, target, w->root_dir);
    if (br[b].parent >= 0) {
      ik_tree_work *pw = &br[br[b].parent].work;
      pw->pull_ws = ik_vec3_madd(pw->pull_ws, c->positions[0], w->weight);
      pw->pull_weight += w->weight;
    }
  }
  for (b = 0; b < job->count; b++) {
    ik_chain *c = &br[b].chain;
    ik_tree_work *w = &br[b].work;
    ik_vec3 root_ws;
    if (w->frozen) continue;
    if (br[b].parent >= 0) {
      const ik_chain *pc = &br[br[b].parent].chain;
      root_ws = tip_of(pc);
      w->root_dir = last_bone_dir(pc, br[br[b].parent].work.root_dir);
      if (w->kinds) set_child_base(&br[b], pc);
    } else {
      root_ws = w->root_ws;
    }
    if (br[b].rigid_base) {
      rigid_pass(&br[b], br[b].parent >= 0 ? &br[br[b].parent] : NULL, root_ws);
    } else if (w->kinds) {
      c->positions[0] = root_ws;
      ik__constrained_pass(c, w->root_dir, w->kinds);
    } else {
      ik__fabrik_backward_pass(c->positions, c->lengths, c->count, root_ws, w->root_dir);
    }
    if (w->first_child >= 0 && c->rest_positions) fit_frame(br, b);
  }
}

/* After a sweep: 1 when another is to run. */
static int tree_next(ik_tree_job *job) {
  const ik_real tol2 = job->tolerance * job->tolerance;
  int b, any_active = 0, all_there = 1;
  job->iterations++;
  if (job->iterations >= job->max_iterations) return 0;
  for (b = 0; b < job->count; b++) {
    const ik_tree_branch *br = &job->branches[b];
    if (br->work.children != 0 || br->work.weight <= 0 || br->work.frozen) continue;
    all_there &= ik_vec3_dist2(tip_of(&br->chain), br->target) <= tol2;
  }
  for (b = 0; b < job->count; b++) any_active |= branch_active(&job->branches[b], job->iterations + 1);
  return !all_there && any_active;
}

static void tree_finish(ik_tree_job *job) {
  ik_tree_branch *br = job->branches;
  int b;
  job->reached = 1;
  job->distance = 0;
  for (b = 0; b < job->count; b++) {
    ik_chain *c = &br[b].chain;
    ik_tree_work *w = &br[b].work;
    if (br[b].rigid_base) {
      const ik_tree_branch *parent = br[b].parent >= 0 ? &br[br[b].parent] : NULL;
      ik_chain sub;
      ik_vec3 dir;
      /* The parent's pole may have turned its last bone: the first bone follows. */
      if (parent && !w->frozen) rigid_pass(&br[b], parent, tip_of(&parent->chain));
      dir = rigid_rest_of(&br[b], parent, &sub);
      if (sub.count >= 2) ik__finish_with_pole(&sub, dir, ik__constraint_kinds(&sub));
    } else {
      if (br[b].parent >= 0 && w->kinds) set_child_base(&br[b], &br[br[b].parent].chain);
      ik__finish_with_pole(c, w->root_dir, w->kinds);
    }
    if (w->first_child >= 0 && c->rest_positions) fit_frame(br, b);
    if (w->children != 0) {
      br[b].result.reached = 1;
      br[b].result.distance = 0;
      continue;
    }
    br[b].result.distance = ik_vec3_dist(tip_of(c), br[b].target);
    br[b].result.reached = br[b].result.distance <= job->tolerance;
    if (br[b].weight > 0) {
      job->reached &= br[b].result.reached;
      if (br[b].result.distance > job->distance) job->distance = br[b].result.distance;
    }
  }
}

/* After the sweeps: each effector branch hanging from a sub-base and not yet there is
 * finished as a chain from where the sweeps left that sub-base (FABRIK's refined mode,
 * the job's budget again), which reaches in a few damped least-squares steps what the
 * sweeps approach slowly. The sub-base stays, so the tree stays joined; a branch's pole
 * is applied after, by tree_finish. Root branches are left as the sweeps left them (a
 * one-branch tree stays the plain chain solve). */
static void polish_effectors(ik_tree_job *job) {
  ik_tree_branch *br = job->branches;
  const ik_real tol2 = job->tolerance * job->tolerance;
  int b;
  for (b = 0; b < job->count; b++) {
    ik_tree_work *w = &br[b].work;
    ik_fabrik_job fj;
    ik_chain c;
    if (br[b].parent < 0 || w->children != 0 || !(w->weight > 0) || w->frozen) continue;
    if (ik_vec3_dist2(tip_of(&br[b].chain), br[b].target) <= tol2) continue;
    if (br[b].rigid_base) {
      rigid_rest_of(&br[b], &br[br[b].parent], &c);
      if (c.count < 2) continue;
    } else {
      if (w->kinds) set_child_base(&br[b], &br[br[b].parent].chain);
      c = br[b].chain;
    }
    c.has_pole = 0;
    c.derive_lengths = 0;
    ik_fabrik_job_init(&fj, &c, br[b].target);
    fj.tolerance = job->tolerance;
    fj.max_iterations = br[b].max_iterations > 0 ? br[b].max_iterations : job->max_iterations;
    ik__fabrik_run_valid(&fj);
  }
}

static void tree_run_valid(ik_tree_job *job) {
  tree_best best;
  int b, joints = 0, kinds = 0;
  job->iterations = 0;
  if (tree_begin(job)) {
    for (b = 0; b < job->count; b++) {
      joints += job->branches[b].chain.count;
      kinds |= job->branches[b].work.kinds;
    }
    best.keep = kinds && joints <= IK__BEST_MAX_JOINTS;
    best.err2 = -1;
    do {
      tree_sweep(job, job->iterations + 1);
      best_offer(job, &best);
    } while (tree_next(job));
    best_restore(job, &best);
    polish_effectors(job);
  }
  tree_finish(job);
}

ik_status ik_tree_job_run(ik_tree_job *job) {
  ik_status st = ik_tree_job_validate(job, NULL);
  if (st != IK_OK) return st;
  tree_run_valid(job);
  return IK_OK;
}
