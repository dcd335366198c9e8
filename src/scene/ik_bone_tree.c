/*
 * Trees of joints (ik_bone_tree.h): cut into the core's branches once, solved by
 * copying the joints into them and back.
 */
#include "ik_bone_tree.h"

#include <string.h>

ik_status ik_bone_tree_check(int joints, const int *parents, int *bad_joint) {
  int j;
  if (joints < 2) return IK_E_COUNT;
  for (j = 0; j < joints; j++) {
    if (j == 0 ? parents[0] != -1 : !(parents[j] >= 0 && parents[j] < j)) {
      if (bad_joint) *bad_joint = j;
      return IK_E_PARAMETER;
    }
  }
  return IK_OK;
}

/* At most joints - 1 branches, with joints - 1 bones and a first joint each. The arrays
 * widest aligned first: every array's size is a multiple of its element's alignment. */
size_t ik_bone_tree_size(int joints) {
  const size_t n = (size_t)joints, bones = n - 1, slots = 2 * bones;
  return sizeof(ik_bone_tree) + bones * (sizeof(ik_tree_branch) + sizeof(ik_chain_pole *)) +
         bones * sizeof(ik_constraint) + (2 * n + 2 * slots) * sizeof(ik_vec3) +
         (n + bones) * sizeof(ik_real) + (6 * n + slots + bones) * sizeof(int);
}

static void lay_out(ik_bone_tree *t, int n) {
  const int bones = n - 1, slots = 2 * bones;
  char *at = (char *)(t + 1);
  t->branch = (ik_tree_branch *)(void *)at;
  at += (size_t)bones * sizeof(ik_tree_branch);
  t->poles = (ik_chain_pole **)(void *)at;
  at += (size_t)bones * sizeof(ik_chain_pole *);
  t->branch_cons = (ik_constraint *)(void *)at;
  at += (size_t)bones * sizeof(ik_constraint);
  t->positions = (ik_vec3 *)(void *)at;
  t->start = t->positions + n;
  t->branch_points = t->start + n;
  t->branch_rest = t->branch_points + slots;
  t->lengths = (ik_real *)(void *)(t->branch_rest + slots);
  t->branch_lengths = t->lengths + n;
  t->parents = (int *)(void *)(t->branch_lengths + bones);
  t->bone_branch = t->parents + n;
  t->bone_slot = t->bone_branch + n;
  t->effector_branch = t->bone_slot + n;
  t->effector_joint = t->effector_branch + n;
  t->branch_first = t->effector_joint + n;
  t->branch_joint = t->branch_first + bones;
}

/* Cuts the tree into branches (ik_bone_tree.h), children counted in `children`. */
static void cut(ik_bone_tree *t, int *children) {
  const int n = t->joints;
  int j, b, first = 0;
  memset(children, 0, sizeof(int) * (size_t)n);
  for (j = 1; j < n; j++) children[t->parents[j]]++;
  t->branches = 0;
  t->bone_branch[0] = -1;
  t->bone_slot[0] = 0;
  for (j = 1; j < n; j++) {
    const int p = t->parents[j];
    if (p == 0 || children[p] != 1) {
      b = t->branches++;
      t->branch[b].parent = p == 0 ? -1 : t->bone_branch[p];
      t->branch[b].chain.count = 2;
      t->branch_first[b] = p; /* for now: its first joint */
    } else {
      b = t->bone_branch[p];
      t->branch[b].chain.count++;
    }
    t->bone_branch[j] = b;
    t->bone_slot[j] = t->branch[b].chain.count - 1;
  }
  for (b = 0; b < t->branches; b++) {
    const int start = t->branch_first[b];
    t->branch_first[b] = first;
    t->branch_joint[first] = start;
    first += t->branch[b].chain.count;
  }
  for (j = 1; j < n; j++) t->branch_joint[t->branch_first[t->bone_branch[j]] + t->bone_slot[j]] = j;
  t->effectors = 0;
  for (j = 1; j < n; j++) {
    if (children[j] != 0) continue;
    t->effector_joint[t->effectors] = j;
    t->effector_branch[t->effectors++] = t->bone_branch[j];
  }
}

ik_bone_tree *ik_bone_tree_init(void *mem, int joints, const int *parents) {
  ik_bone_tree *t = (ik_bone_tree *)mem;
  int b, j;
  memset(t, 0, sizeof *t);
  t->joints = joints;
  t->iterations = 10;
  t->tolerance = (ik_real)1e-3;
  t->deterministic = 1;
  lay_out(t, joints);
  memcpy(t->parents, parents, sizeof(int) * (size_t)joints);
  for (j = 0; j < joints; j++) t->positions[j] = t->start[j] = ik_vec3_zero();
  /* effector_joint holds the children counts while the tree is cut: cut() writes its
   * e-th effector only once joints 1 .. e have been read. */
  cut(t, t->effector_joint);
  for (b = 0; b < t->branches; b++) {
    const int first = t->branch_first[b], count = t->branch[b].chain.count, parent = t->branch[b].parent;
    ik_chain c;
    ik_chain_init(&c, t->branch_points + first, count, t->branch_lengths + (first - b));
    c.rest_positions = t->branch_rest + first;
    ik_tree_branch_init(&t->branch[b], &c, parent, ik_vec3_zero());
    t->poles[b] = NULL;
  }
  for (j = 0; j + 1 < joints; j++) {
    memset(&t->branch_cons[j], 0, sizeof t->branch_cons[j]);
    t->branch_cons[j].type = IK_CONSTRAINT_NONE;
  }
  for (j = 0; j < joints; j++) t->lengths[j] = 0;
  ik_tree_job_init(&t->job, t->branch, t->branches);
  return t;
}

ik_status ik_bone_tree_set_points(ik_bone_tree *t, const ik_vec3 *pose, int *bad_joint) {
  ik_real total = 0, root_max;
  int j, b;
  for (j = 0; j < t->joints; j++) {
    if (!ik_vec3_is_finite(pose[j]) || !(ik_fabs(pose[j].x) <= IK_REAL_MAX_COORD) ||
        !(ik_fabs(pose[j].y) <= IK_REAL_MAX_COORD) || !(ik_fabs(pose[j].z) <= IK_REAL_MAX_COORD)) {
      if (bad_joint) *bad_joint = j;
      return ik_vec3_is_finite(pose[j]) ? IK_E_RANGE : IK_E_NOT_FINITE;
    }
  }
  for (j = 1; j < t->joints; j++) {
    const ik_real len = ik_vec3_dist(pose[j], pose[t->parents[j]]);
    if (!(len > 0)) {
      if (bad_joint) *bad_joint = j;
      return IK_E_BONE_LENGTH;
    }
    total += len;
  }
  root_max = ik_fabs(pose[0].x);
  if (ik_fabs(pose[0].y) > root_max) root_max = ik_fabs(pose[0].y);
  if (ik_fabs(pose[0].z) > root_max) root_max = ik_fabs(pose[0].z);
  if (!(root_max + total <= IK_REAL_MAX_REACH)) {
    if (bad_joint) *bad_joint = -1;
    return IK_E_RANGE;
  }
  for (j = 0; j < t->joints; j++) {
    t->positions[j] = t->start[j] = pose[j];
    t->lengths[j] = j == 0 ? 0 : ik_vec3_dist(pose[j], pose[t->parents[j]]);
  }
  for (b = 0; b < t->branches; b++) {
    const int first = t->branch_first[b];
    int k;
    for (k = 0; k < t->branch[b].chain.count; k++) {
      const int joint = t->branch_joint[first + k];
      t->branch_rest[first + k] = pose[joint];
      if (k > 0) t->branch_lengths[first - b + k - 1] = t->lengths[joint];
    }
  }
  return IK_OK;
}

void ik_bone_tree_set_constraint(ik_bone_tree *t, int joint, const ik_constraint *c) {
  const int b = t->bone_branch[joint], first = t->branch_first[b];
  ik_constraint *slot = &t->branch_cons[first - b + t->bone_slot[joint] - 1];
  int k;
  if (c) {
    *slot = *c;
  } else {
    memset(slot, 0, sizeof *slot);
    slot->type = IK_CONSTRAINT_NONE;
  }
  /* The core skips the constraint pass of a branch with none. */
  t->branch[b].chain.constraints = NULL;
  for (k = 0; k + 1 < t->branch[b].chain.count; k++)
    if (t->branch_cons[first - b + k].type != IK_CONSTRAINT_NONE)
      t->branch[b].chain.constraints = t->branch_cons + (first - b);
}

const ik_constraint *ik_bone_tree_constraint(const ik_bone_tree *t, int joint) {
  const int b = t->bone_branch[joint];
  const ik_constraint *c = &t->branch_cons[t->branch_first[b] - b + t->bone_slot[joint] - 1];
  return c->type == IK_CONSTRAINT_NONE ? NULL : c;
}

int ik_bone_tree_branch_at(const ik_bone_tree *t, int joint) {
  int b;
  if (joint <= 0 || joint >= t->joints) return -1;
  b = t->bone_branch[joint];
  return t->bone_slot[joint] == t->branch[b].chain.count - 1 ? b : -1;
}

void ik_bone_tree_set_target(ik_bone_tree *t, int effector, ik_vec3 target) {
  t->branch[t->effector_branch[effector]].target = target;
}

void ik_bone_tree_set_weight(ik_bone_tree *t, int effector, ik_real weight) {
  t->branch[t->effector_branch[effector]].weight = weight;
}

ik_status ik_bone_tree_solve(ik_bone_tree *t) {
  const ik_vec3 *from = t->deterministic ? t->start : t->positions;
  ik_status st;
  int b, k;
  if (t->closed) return IK_E_NULL;
  for (b = 0; b < t->branches; b++) {
    ik_chain *c = &t->branch[b].chain;
    const ik_chain_pole *p = t->poles[b];
    const int first = t->branch_first[b];
    if (p && p->closed) return IK_E_NULL;
    c->has_pole = p != NULL;
    if (p) {
      c->pole = p->position;
      c->pole_weight = p->weight;
    }
    for (k = 0; k < c->count; k++) t->branch_points[first + k] = from[t->branch_joint[first + k]];
  }
  t->job.tolerance = t->tolerance;
  t->job.max_iterations = t->iterations;
  if ((st = ik_tree_job_run(&t->job)) != IK_OK) return st;
  for (b = 0; b < t->branches; b++) {
    const int first = t->branch_first[b];
    for (k = 0; k < t->branch[b].chain.count; k++)
      t->positions[t->branch_joint[first + k]] = t->branch_points[first + k];
  }
  return IK_OK;
}

const ik_result *ik_bone_tree_result(const ik_bone_tree *t, int effector) {
  return &t->branch[t->effector_branch[effector]].result;
}
