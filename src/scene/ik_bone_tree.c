/*
 * Trees of joints (ik_bone_tree.h): cut into the core's branches once, solved by
 * copying the joints into them and back.
 */
#include "ik_bone_tree.h"

#include <string.h>

#include "ik_internal.h"
#include "ik_rotations.h"

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
size_t ik_bone_tree_size(int joints, int bound) {
  const size_t n = (size_t)joints, bones = n - 1, slots = 2 * bones;
  return sizeof(ik_bone_tree) + bones * (sizeof(ik_tree_branch) + sizeof(ik_chain_pole *)) +
         bones * sizeof(ik_constraint) + (bound ? (2 * n + 2 * slots) * sizeof(ik_quat) : 0) +
         ((bound ? 3 : 2) * n + (bound ? 3 : 2) * slots) * sizeof(ik_vec3) + (n + bones) * sizeof(ik_real) +
         (6 * n + slots + bones + (bound ? 3 * n : 0)) * sizeof(int);
}

static void lay_out(ik_bone_tree *t, int n, int bound) {
  const int bones = n - 1, slots = 2 * bones;
  char *at = (char *)(t + 1);
  t->branch = (ik_tree_branch *)(void *)at;
  at += (size_t)bones * sizeof(ik_tree_branch);
  t->poles = (ik_chain_pole **)(void *)at;
  at += (size_t)bones * sizeof(ik_chain_pole *);
  t->branch_cons = (ik_constraint *)(void *)at;
  at += (size_t)bones * sizeof(ik_constraint);
  t->rotations = bound ? (ik_quat *)(void *)at : NULL;
  t->turns = bound ? t->rotations + n : NULL;
  t->branch_rot = bound ? t->turns + n : NULL;
  t->twist_memory = bound ? t->branch_rot + slots : NULL;
  at += bound ? (2 * (size_t)n + 2 * (size_t)slots) * sizeof(ik_quat) : 0;
  t->positions = (ik_vec3 *)(void *)at;
  t->start = t->positions + n;
  t->branch_points = t->start + n;
  t->branch_rest = t->branch_points + slots;
  t->branch_before = bound ? t->branch_rest + slots : NULL;
  t->warm = bound ? t->branch_rest + 2 * slots : NULL;
  t->lengths = (ik_real *)(void *)(t->branch_rest + (bound ? 2 * slots + n : slots));
  t->branch_lengths = t->lengths + n;
  t->parents = (int *)(void *)(t->branch_lengths + bones);
  t->bone_branch = t->parents + n;
  t->bone_slot = t->bone_branch + n;
  t->effector_branch = t->bone_slot + n;
  t->effector_joint = t->effector_branch + n;
  t->branch_first = t->effector_joint + n;
  t->branch_joint = t->branch_first + bones;
  t->bones = bound ? t->branch_joint + slots : NULL;
  t->pair = bound ? t->bones + n : NULL;
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

ik_bone_tree *ik_bone_tree_init(void *mem, int joints, const int *parents, int bound) {
  ik_bone_tree *t = (ik_bone_tree *)mem;
  int b, j, roots = 0;
  memset(t, 0, sizeof *t);
  t->joints = joints;
  t->iterations = 10;
  t->tolerance = (ik_real)1e-3;
  /* A bone tree remembers its bones' last turns unless told not to, as a bone chain does. */
  t->deterministic = !bound;
  t->bound = bound;
  lay_out(t, joints, bound);
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
    roots += parent < 0;
    t->poles[b] = NULL;
  }
  /* A bone tree's branch starting at a bone with several children: a branch hanging from
   * another one, or from a root with more than one. */
  for (b = 0; bound && b < t->branches; b++) t->branch[b].rigid_base = t->branch[b].parent >= 0 || roots > 1;
  for (j = 0; j + 1 < joints; j++) {
    memset(&t->branch_cons[j], 0, sizeof t->branch_cons[j]);
    t->branch_cons[j].type = IK_CONSTRAINT_NONE;
  }
  for (j = 0; j < joints; j++) t->lengths[j] = 0;
  ik_tree_job_init(&t->job, t->branch, t->branches);
  return t;
}

/* scratch[b] for bone b of sk: -1 not seen yet; j >= 0 listed as joint j; -3 - j not
 * listed, its nearest listed ancestor joint j (-2: none). */
static int nearest_listed(const ik_skeleton *sk, int bone, int *scratch) {
  int a = ik_skeleton_parent(sk, bone), found;
  while (a >= 0 && scratch[a] == -1) a = ik_skeleton_parent(sk, a);
  found = a < 0 ? -1 : scratch[a] >= 0 ? scratch[a] : -3 - scratch[a];
  /* Every unlisted bone walked learns the answer: no bone is walked twice. */
  for (a = ik_skeleton_parent(sk, bone); a >= 0 && scratch[a] == -1; a = ik_skeleton_parent(sk, a))
    scratch[a] = -3 - found;
  return found;
}

ik_status ik_bone_tree_parents_of(const ik_skeleton *sk, const int *bones, int joints, int *parents,
                                  int *scratch, int *bad_joint, int *why, int *other_joint) {
  const int count = ik_skeleton_count(sk);
  int j;
  for (j = 0; j < count; j++) scratch[j] = -1;
  for (j = 0; j < joints; j++) {
    *bad_joint = j;
    if (bones[j] < 0 || bones[j] >= count) return *why = 1, IK_E_PARAMETER;
    if (scratch[bones[j]] != -1) return *why = 2, *other_joint = scratch[bones[j]], IK_E_PARAMETER;
    scratch[bones[j]] = j;
  }
  for (j = 0; j < joints; j++) {
    const int p = nearest_listed(sk, bones[j], scratch);
    *bad_joint = j;
    *other_joint = p;
    if (j == 0 && p >= 0) return *why = 3, IK_E_PARAMETER;
    if (j > 0 && p < 0) return *why = 4, IK_E_PARAMETER;
    if (p >= j) return *why = 5, IK_E_PARAMETER;
    parents[j] = j == 0 ? -1 : p;
  }
  return IK_OK;
}

ik_status ik_bone_tree_set_bones(ik_bone_tree *t, ik_skeleton *sk, const int *bones, const int *closed,
                                 int *bad_joint) {
  ik_vec3 *pose = t->positions; /* read in place: set_points copies it to where it stays */
  int j;
  for (j = 0; j < t->joints; j++) ik_skeleton_get_world(sk, bones[j], &pose[j], &t->rotations[j]);
  t->sk = sk;
  t->sk_closed = closed;
  memcpy(t->bones, bones, sizeof(int) * (size_t)t->joints);
  for (j = 0; j < 2 * (t->joints - 1); j++) t->twist_memory[j] = ik_quat_identity();
  t->has_warm = 0;
  return ik_bone_tree_set_points(t, pose, bad_joint);
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

/* The world rotation of what the root bone hangs from (identity: nothing). */
static ik_quat root_frame(const ik_bone_tree *t) {
  const int up = ik_skeleton_parent(t->sk, t->bones[0]);
  ik_quat q = ik_quat_identity();
  if (up >= 0) ik_skeleton_get_world(t->sk, up, NULL, &q);
  return q;
}

/* Reads a bone tree's pose, and where the solve starts (positions): the pose as read,
 * or warm, the last solution's directions laid out from the root with the lengths as
 * read; IK_E_NULL when its skeleton is gone. */
static ik_status gather_bones(ik_bone_tree *t) {
  ik_quat frame;
  int j;
  if (t->sk_closed && *t->sk_closed) return IK_E_NULL;
  for (j = 0; j < t->joints; j++) ik_skeleton_get_world(t->sk, t->bones[j], &t->start[j], &t->rotations[j]);
  if (t->deterministic || !t->has_warm) {
    memcpy(t->positions, t->start, sizeof(ik_vec3) * (size_t)t->joints);
    return IK_OK;
  }
  frame = root_frame(t);
  t->positions[0] = t->start[0];
  for (j = 1; j < t->joints; j++) {
    const int p = t->parents[j];
    t->positions[j] = ik_vec3_madd(t->positions[p], ik_quat_rotate(frame, t->warm[j]),
                                   ik_vec3_dist(t->start[j], t->start[p]));
  }
  return IK_OK;
}

/* Keeps each bone's direction as turned, in the root's frame, for a warm start. */
static void keep_warm(ik_bone_tree *t) {
  const ik_quat back = ik_quat_inverse(root_frame(t));
  int j;
  for (j = 0; j < t->joints; j++) ik_skeleton_get_world(t->sk, t->bones[j], &t->warm[j], NULL);
  /* Tip first: a parent's slot still holds its position when its children read it. */
  for (j = t->joints - 1; j > 0; j--)
    t->warm[j] = ik_quat_rotate(back, ik_vec3_normalize(ik_vec3_sub(t->warm[j], t->warm[t->parents[j]])));
  t->warm[0] = ik_vec3_zero();
  t->has_warm = 1;
}

/* An effector branch hanging from a bone with several children starts where that bone's
 * turn put its second joint, not where the tree solve did (the skeleton holds the
 * children's first bones rigid, the solve does not): the rest of the branch, from that
 * joint, is solved again as a chain (ik_fabrik, from the tree's solved directions laid
 * from there) into the branch's points, which its bones are then turned to. */
static void finish_branch(ik_bone_tree *t, int b) {
  ik_tree_branch *br = &t->branch[b];
  const int first = t->branch_first[b], n = br->chain.count - 1;
  ik_real *len = t->branch_lengths + (first - b) + 1;
  ik_vec3 *p = t->branch_points + first + 1;
  ik_fabrik_job job;
  ik_chain c;
  int k;
  if (br->parent < 0 || n < 2 || br->weight <= 0) return;
  for (k = n - 1; k > 0; k--) p[k] = ik_vec3_sub(p[k], p[k - 1]); /* directions, tip first */
  ik_skeleton_get_world(t->sk, t->bones[t->branch_joint[first]], &t->branch_points[first], NULL);
  ik_skeleton_get_world(t->sk, t->bones[t->branch_joint[first + 1]], &p[0], NULL);
  for (k = 1; k < n; k++) p[k] = ik_vec3_madd(p[k - 1], ik_vec3_normalize(p[k]), len[k - 1]);
  ik_chain_init(&c, p, n, len);
  if (br->chain.constraints) {
    c.constraints = br->chain.constraints + 1;
    c.rest_positions = t->branch_rest + first + 1;
    c.base_direction = ik_vec3_normalize(ik_vec3_sub(t->branch_rest[first + 1], t->branch_rest[first]));
    c.base_rotation = ik_quat_from_to(c.base_direction, ik_vec3_sub(p[0], t->branch_points[first]));
  }
  c.has_pole = br->chain.has_pole;
  c.pole = br->chain.pole;
  c.pole_weight = br->chain.pole_weight;
  ik_fabrik_job_init(&job, &c, br->target);
  job.tolerance = t->tolerance;
  job.max_iterations = t->iterations;
  (void)ik_fabrik_run(&job); /* refused: the points stay the tree's directions */
}

/* Sets a bone with several children to its turn (sum: its new world rotation). */
static ik_status set_branch_point(ik_bone_tree *t, int j) {
  return ik_skeleton_set_world_rotation(t->sk, t->bones[j], t->turns[j]);
}

/* Turns a branch's bones with one child each, root to tip, as a bone chain's scatter
 * does (ik_rotations.h, twist memory kept per branch slot unless deterministic), from
 * the bone it starts at as that was turned; then the branch point it ends at, if any. */
static ik_status turn_branch(ik_bone_tree *t, int b, const int *children) {
  const int first = t->branch_first[b], count = t->branch[b].chain.count;
  const int head = t->branch_joint[first], tail = t->branch_joint[first + count - 1];
  const int s0 = children[head] > 1; /* a branch point's bone is turned by its children together */
  int k;
  if (s0 && children[tail] == 0) finish_branch(t, b);
  if (count - s0 >= 2) {
    ik_rotations_job rot;
    for (k = s0; k < count; k++) {
      const int j = t->branch_joint[first + k];
      t->branch_before[first + k] = t->start[j];
      t->branch_rot[first + k] = t->rotations[j];
    }
    ik_rotations_job_init(&rot, count - s0, t->branch_before + first + s0, t->branch_points + first + s0,
                          t->branch_rot + first + s0);
    if (s0) {
      rot.base_rotation_before = t->rotations[head];
      rot.base_rotation = t->turns[head];
    }
    rot.twist_memory = t->deterministic ? NULL : t->twist_memory + first + s0;
    /* Inputs checked already: the bones as read (finite, no bone of zero length) and the
     * solved pose within the reach the tree job checked. */
    ik__rotations_run_valid(&rot);
    /* The last joint inherits its parent's turn: its bone keeps its local rotation. */
    for (k = s0; k + 1 < count; k++)
      if (ik_skeleton_set_world_rotation(t->sk, t->bones[t->branch_joint[first + k]],
                                         t->branch_rot[first + k]) != IK_OK)
        return IK_E_PARAMETER;
  }
  return children[tail] > 1 ? set_branch_point(t, tail) : IK_OK;
}

/* Turns each bone with several children by the rotation that takes two of its children
 * (not on one line) from where they were read (start) to where they were solved
 * (positions), else by the mean of their least rotations; each branch's bones with one
 * child as a bone chain turns them (turn_branch); and measures the effectors on the
 * bones as turned. */
static ik_status scatter_bones(ik_bone_tree *t) {
  ik_quat *sum = t->turns;
  int *pair = t->pair;     /* each joint's first two children not on one line, -1 when none */
  int *children = t->pair; /* once the turns are made: each joint's children counted */
  int j, e, b;
  for (j = 0; j < t->joints; j++) {
    sum[j] = ik_quat_make(0, 0, 0, 0);
    pair[2 * j] = pair[2 * j + 1] = -1;
  }
  for (j = 1; j < t->joints; j++) {
    const int p = t->parents[j];
    const ik_vec3 read = ik_vec3_sub(t->start[j], t->start[p]);
    ik_quat q = ik_quat_from_to(read, ik_vec3_sub(t->positions[j], t->positions[p]));
    if (ik_quat_dot(q, sum[p]) < 0) q = ik_quat_make(-q.x, -q.y, -q.z, -q.w);
    sum[p] = ik_quat_make(sum[p].x + q.x, sum[p].y + q.y, sum[p].z + q.z, sum[p].w + q.w);
    if (pair[2 * p] < 0) {
      pair[2 * p] = j;
    } else if (pair[2 * p + 1] < 0) {
      const ik_vec3 first = ik_vec3_sub(t->start[pair[2 * p]], t->start[p]);
      if (ik_vec3_len2(ik_vec3_cross(ik_vec3_normalize(first), ik_vec3_normalize(read))) > (ik_real)1e-6)
        pair[2 * p + 1] = j;
    }
  }
  for (j = 0; j < t->joints; j++) {
    ik_quat turn;
    /* Unit turns of one sign never cancel: a zero sum is a bone with no children. */
    if (ik_quat_dot(sum[j], sum[j]) == 0) continue;
    turn = ik_quat_normalize(sum[j]);
    if (pair[2 * j + 1] >= 0) {
      /* Two children off one line fix the turn: exact for rigid first bones (ik_tree.h). */
      const int a = pair[2 * j], b2 = pair[2 * j + 1];
      const ik_quat from = ik_quat_look_rotation(ik_vec3_sub(t->start[a], t->start[j]),
                                                 ik_vec3_sub(t->start[b2], t->start[j]));
      const ik_quat to = ik_quat_look_rotation(ik_vec3_sub(t->positions[a], t->positions[j]),
                                               ik_vec3_sub(t->positions[b2], t->positions[j]));
      turn = ik_quat_mul(to, ik_quat_conjugate(from));
    }
    sum[j] = ik_quat_normalize(ik_quat_mul(turn, t->rotations[j]));
  }
  for (j = 0; j < t->joints; j++) children[j] = 0;
  for (j = 1; j < t->joints; j++) children[t->parents[j]]++;
  if (children[0] > 1 && set_branch_point(t, 0) != IK_OK) return IK_E_PARAMETER;
  /* Branches are numbered parents first: a branch point is set before its branches. */
  for (b = 0; b < t->branches; b++)
    if (turn_branch(t, b, children) != IK_OK) return IK_E_PARAMETER;
  t->job.reached = 1;
  t->job.distance = 0;
  for (e = 0; e < t->effectors; e++) {
    ik_tree_branch *br = &t->branch[t->effector_branch[e]];
    ik_vec3 p;
    ik_skeleton_get_world(t->sk, t->bones[t->effector_joint[e]], &p, NULL);
    br->result.distance = ik_vec3_dist(p, br->target);
    br->result.reached = br->result.distance <= t->tolerance;
    if (br->weight > 0) {
      t->job.reached &= br->result.reached;
      if (br->result.distance > t->job.distance) t->job.distance = br->result.distance;
    }
  }
  keep_warm(t);
  return IK_OK;
}

ik_status ik_bone_tree_solve(ik_bone_tree *t) {
  const ik_vec3 *from = t->deterministic && !t->bound ? t->start : t->positions;
  ik_status st;
  int b, k;
  if (t->closed) return IK_E_NULL;
  if (t->bound && (st = gather_bones(t)) != IK_OK) return st;
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
  return t->bound ? scatter_bones(t) : IK_OK;
}

const ik_result *ik_bone_tree_result(const ik_bone_tree *t, int effector) {
  return &t->branch[t->effector_branch[effector]].result;
}
