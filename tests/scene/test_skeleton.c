/* Skeletons and nodes: forward kinematics against hand-worked and naive results, the
 * world setters, reset, the lazy cache (what gets recomputed, what the versions say),
 * nodes hanging from bones and nodes, cycle refusal, depends_on_bone, and validation
 * that refuses bad input and changes nothing. */
#include <stdlib.h>
#include <string.h>

#include "ik_skeleton.h"
#include "test_util.h"

#define MAXB 200

/* Composing transforms down a deep chain gathers rounding: a float build needs room. */
#ifdef IK_REAL_FLOAT
#define T_FK 1e-3
#else
#define T_FK 1e-9
#endif

typedef struct t_skel {
  void *mem;
  ik_skeleton *sk;
} t_skel;

static ik_bone_desc desc(int parent, ik_vec3 position, ik_quat rotation) {
  ik_bone_desc d;
  ik_bone_desc_init(&d);
  d.parent = parent;
  d.position = position;
  d.rotation = rotation;
  return d;
}

static t_skel build(const ik_bone_desc *bones, int count) {
  t_skel s;
  const size_t size = ik_skeleton_size(count);
  ik_error err;
  assert_true(size > 0);
  s.mem = malloc(size);
  assert_non_null(s.mem);
  s.sk = NULL;
  assert_int_equal(ik_skeleton_init(s.mem, size, bones, count, &s.sk, &err), IK_OK);
  assert_non_null(s.sk);
  return s;
}

static void destroy(t_skel *s) { free(s->mem); }

static ik_vec3 v3(double x, double y, double z) { return ik_vec3_make((ik_real)x, (ik_real)y, (ik_real)z); }
static ik_quat about(double x, double y, double z, ik_real angle) {
  return ik_quat_axis_angle(v3(x, y, z), angle);
}

static ik_vec3 world_pos(const ik_skeleton *sk, int bone) {
  ik_vec3 p;
  assert_int_equal(ik_skeleton_get_world(sk, bone, &p, NULL), IK_OK);
  return p;
}
static ik_quat world_rot(const ik_skeleton *sk, int bone) {
  ik_quat q;
  assert_int_equal(ik_skeleton_get_world(sk, bone, NULL, &q), IK_OK);
  return q;
}

/* An arm on a body, worked by hand below:
 *   0 body     root at (0, 1, 0), a quarter turn about +Y (+X -> -Z, +Z -> +X)
 *   1 shoulder (1, 0, 0) from the body, no turn
 *   2 elbow    (0, 0, 2) from the shoulder, a quarter turn about +X (+Y -> +Z, +Z -> -Y)
 *   3 hand     (0, 0, 1) from the elbow, no turn */
static t_skel build_arm(void) {
  ik_bone_desc b[4];
  b[0] = desc(-1, v3(0, 1, 0), about(0, 1, 0, IK_PI / 2));
  b[1] = desc(0, v3(1, 0, 0), ik_quat_identity());
  b[2] = desc(1, v3(0, 0, 2), about(1, 0, 0, IK_PI / 2));
  b[3] = desc(2, v3(0, 0, 1), ik_quat_identity());
  return build(b, 4);
}

/* A branching rig for the cache tests:
 *        0 root
 *       /      \
 *    1 spine   6 leg
 *    /     \
 *  2 larm  4 rarm
 *   |       |
 *  3 lhand 5 rhand */
#define TREE_N 7
static t_skel build_tree(void) {
  ik_bone_desc b[TREE_N];
  b[0] = desc(-1, v3(0, 1, 0), about(0, 1, 0, 0.3));
  b[1] = desc(0, v3(0, 0.5, 0), about(1, 0, 0, 0.1));
  b[2] = desc(1, v3(-0.3, 0.4, 0), about(0, 0, 1, 0.8));
  b[3] = desc(2, v3(0, 0.6, 0), about(0, 1, 0, 0.3));
  b[4] = desc(1, v3(0.3, 0.4, 0), about(0, 0, 1, -0.8));
  b[5] = desc(4, v3(0, 0.6, 0), ik_quat_identity());
  b[6] = desc(0, v3(0.2, -0.5, 0), about(1, 0, 0, -0.2));
  return build(b, TREE_N);
}

static void read_all(const ik_skeleton *sk) {
  int i;
  for (i = 0; i < ik_skeleton_count(sk); i++) (void)world_pos(sk, i);
}

/* ---- forward kinematics ---- */

static void fk_of_a_known_arm_matches_the_hand_worked_pose(void **state) {
  t_skel s = build_arm();
  ik_quat elbow;
  (void)state;
  assert_vec3_near(world_pos(s.sk, 0), v3(0, 1, 0), T_EPS);
  assert_vec3_near(world_pos(s.sk, 1), v3(0, 1, -1), T_EPS); /* body's +X is world -Z */
  assert_vec3_near(world_pos(s.sk, 2), v3(2, 1, -1), T_EPS); /* shoulder's +Z is world +X */
  assert_vec3_near(world_pos(s.sk, 3), v3(2, 0, -1), T_EPS); /* elbow's +Z is world -Y */
  assert_quat_near(world_rot(s.sk, 1), about(0, 1, 0, IK_PI / 2), T_EPS);
  /* The elbow's frame, axis by axis: its X, Y and Z in world space. */
  elbow = world_rot(s.sk, 2);
  assert_vec3_near(ik_quat_rotate(elbow, v3(1, 0, 0)), v3(0, 0, -1), T_EPS);
  assert_vec3_near(ik_quat_rotate(elbow, v3(0, 1, 0)), v3(1, 0, 0), T_EPS);
  assert_vec3_near(ik_quat_rotate(elbow, v3(0, 0, 1)), v3(0, -1, 0), T_EPS);
  assert_quat_near(world_rot(s.sk, 3), elbow, T_EPS);
  assert_int_equal(ik_skeleton_count(s.sk), 4);
  assert_int_equal(ik_skeleton_parent(s.sk, 0), -1);
  assert_int_equal(ik_skeleton_parent(s.sk, 3), 2);
  destroy(&s);
}

static void bone_desc_init_sets_the_documented_defaults(void **state) {
  ik_bone_desc d;
  (void)state;
  memset(&d, 0x5A, sizeof d);
  ik_bone_desc_init(&d);
  assert_null(d.name);
  assert_int_equal(d.parent, -1);
  assert_vec3_near(d.position, ik_vec3_zero(), 0);
  assert_true(d.rotation.x == 0 && d.rotation.y == 0 && d.rotation.z == 0 && d.rotation.w == 1);
}

static void rest_rotations_and_set_rotations_are_normalised(void **state) {
  ik_bone_desc b[2];
  t_skel s;
  ik_quat q;
  (void)state;
  b[0] = desc(-1, ik_vec3_zero(), ik_quat_make(0, 0, 0, 3));
  b[1] = desc(0, v3(1, 0, 0), ik_quat_make(0, 2, 0, 2)); /* a quarter turn about +Y, length 2.8 */
  s = build(b, 2);
  assert_int_equal(ik_skeleton_get_local(s.sk, 0, NULL, &q), IK_OK);
  assert_true(q.x == 0 && q.y == 0 && q.z == 0 && q.w == 1);
  assert_int_equal(ik_skeleton_get_local(s.sk, 1, NULL, &q), IK_OK);
  assert_near(ik_quat_dot(q, q), 1, T_EPS);
  assert_quat_near(q, about(0, 1, 0, IK_PI / 2), T_EPS);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 0, ik_quat_make(5, 0, 0, 0)), IK_OK);
  assert_int_equal(ik_skeleton_get_local(s.sk, 0, NULL, &q), IK_OK);
  assert_near(ik_quat_dot(q, q), 1, T_EPS);
  assert_int_equal(ik_skeleton_set_world_rotation(s.sk, 1, ik_quat_make(0, 0, 7, 7)), IK_OK);
  assert_near(ik_quat_dot(world_rot(s.sk, 1), world_rot(s.sk, 1)), 1, T_EPS);
  assert_quat_near(world_rot(s.sk, 1), about(0, 0, 1, IK_PI / 2), T_EPS);
  destroy(&s);
}

/* ---- world setters ---- */

/* Every pairwise distance among the bones of `subtree` (and their world rotations
 * relative to each other) is what it was: the subtree moved as one rigid body. */
static void assert_rigid(const ik_vec3 *before_p, const ik_quat *before_q, const ik_skeleton *sk,
                         const int *subtree, int n) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++) {
      const int a = subtree[i], b = subtree[j];
      const ik_quat rel_before = ik_quat_mul(ik_quat_conjugate(before_q[a]), before_q[b]);
      const ik_quat rel_after = ik_quat_mul(ik_quat_conjugate(world_rot(sk, a)), world_rot(sk, b));
      assert_near(ik_vec3_dist(world_pos(sk, a), world_pos(sk, b)), ik_vec3_dist(before_p[a], before_p[b]),
                  T_EPS);
      assert_quat_near(rel_after, rel_before, T_EPS);
    }
}

static void set_world_rotation_reads_back_and_the_subtree_turns_rigidly(void **state) {
  t_skel s = build_tree();
  ik_vec3 p[TREE_N];
  ik_quat q[TREE_N];
  const int spine_subtree[] = {1, 2, 3, 4, 5};
  const ik_quat target =
      ik_quat_normalize(ik_quat_make((ik_real)0.3, (ik_real)-0.5, (ik_real)0.2, (ik_real)0.7));
  int i;
  (void)state;
  for (i = 0; i < TREE_N; i++) assert_int_equal(ik_skeleton_get_world(s.sk, i, &p[i], &q[i]), IK_OK);
  assert_int_equal(ik_skeleton_set_world_rotation(s.sk, 1, target), IK_OK);
  assert_quat_near(world_rot(s.sk, 1), target, T_EPS);
  /* The bone turned about its own position; its parent and the other branch stayed. */
  assert_vec3_near(world_pos(s.sk, 1), p[1], T_EPS);
  assert_vec3_near(world_pos(s.sk, 0), p[0], 0);
  assert_vec3_near(world_pos(s.sk, 6), p[6], 0);
  assert_rigid(p, q, s.sk, spine_subtree, 5);
  /* And the children really moved: the turn is not the identity. */
  assert_true(ik_vec3_dist(world_pos(s.sk, 3), p[3]) > (ik_real)0.1);
  /* A root's world rotation is its local one. */
  assert_int_equal(ik_skeleton_set_world_rotation(s.sk, 0, target), IK_OK);
  assert_quat_near(world_rot(s.sk, 0), target, T_EPS);
  destroy(&s);
}

static void set_world_position_moves_the_bone_and_its_children_follow(void **state) {
  t_skel s = build_tree();
  ik_vec3 p[TREE_N];
  ik_quat q[TREE_N];
  const ik_vec3 target = v3(3, -2, 0.5);
  ik_vec3 shift;
  int i;
  (void)state;
  for (i = 0; i < TREE_N; i++) assert_int_equal(ik_skeleton_get_world(s.sk, i, &p[i], &q[i]), IK_OK);
  assert_int_equal(ik_skeleton_set_world_position(s.sk, 2, target), IK_OK);
  assert_vec3_near(world_pos(s.sk, 2), target, T_EPS);
  /* Rotation kept, so the child translates by the same amount and keeps its rotation. */
  shift = ik_vec3_sub(target, p[2]);
  assert_quat_near(world_rot(s.sk, 2), q[2], T_EPS);
  assert_vec3_near(world_pos(s.sk, 3), ik_vec3_add(p[3], shift), T_EPS);
  assert_quat_near(world_rot(s.sk, 3), q[3], T_EPS);
  /* The parent did not move: only the bone's own offset changed. */
  assert_vec3_near(world_pos(s.sk, 1), p[1], 0);
  assert_vec3_near(world_pos(s.sk, 4), p[4], 0);
  destroy(&s);
}

static void reset_returns_to_rest_exactly(void **state) {
  t_skel s = build_tree(), fresh = build_tree();
  int i;
  (void)state;
  read_all(s.sk);
  assert_int_equal(ik_skeleton_set_world_rotation(s.sk, 1, about(1, 1, 0, 1.2)), IK_OK);
  assert_int_equal(ik_skeleton_set_world_position(s.sk, 4, v3(5, 5, 5)), IK_OK);
  assert_int_equal(ik_skeleton_set_local_position(s.sk, 0, v3(-1, 0, 2)), IK_OK);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 6, about(0, 0, 1, 2)), IK_OK);
  read_all(s.sk);
  ik_skeleton_reset(s.sk);
  for (i = 0; i < TREE_N; i++) {
    ik_vec3 pa, pb, la, lb;
    ik_quat qa, qb, ra, rb;
    assert_int_equal(ik_skeleton_get_world(s.sk, i, &pa, &qa), IK_OK);
    assert_int_equal(ik_skeleton_get_world(fresh.sk, i, &pb, &qb), IK_OK);
    assert_int_equal(ik_skeleton_get_local(s.sk, i, &la, &ra), IK_OK);
    assert_int_equal(ik_skeleton_get_local(fresh.sk, i, &lb, &rb), IK_OK);
    /* Bit for bit, not just close. */
    assert_memory_equal(&pa, &pb, sizeof pa);
    assert_memory_equal(&qa, &qb, sizeof qa);
    assert_memory_equal(&la, &lb, sizeof la);
    assert_memory_equal(&ra, &rb, sizeof ra);
  }
  destroy(&s);
  destroy(&fresh);
}

/* ---- the lazy cache ---- */

static void reading_without_a_change_recomputes_nothing_and_keeps_the_version(void **state) {
  t_skel s = build_tree();
  uint64_t version, computed;
  (void)state;
  assert_int_equal(ik_skeleton_version(s.sk), 1);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), 0); /* init computes nothing */
  read_all(s.sk);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), TREE_N);
  version = ik_skeleton_version(s.sk);
  computed = ik_skeleton_recompute_count(s.sk);
  read_all(s.sk);
  read_all(s.sk);
  assert_int_equal(ik_skeleton_version(s.sk), version);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed);
  destroy(&s);
}

static void a_change_leaves_the_siblings_subtrees_clean(void **state) {
  t_skel s = build_tree();
  uint64_t computed, version;
  (void)state;
  read_all(s.sk);
  computed = ik_skeleton_recompute_count(s.sk);
  version = ik_skeleton_version(s.sk);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, about(0, 0, 1, 0.3)), IK_OK);
  assert_int_equal(ik_skeleton_version(s.sk), version + 1);
  /* Everything outside the left arm's subtree is still clean. */
  (void)world_pos(s.sk, 0);
  (void)world_pos(s.sk, 1);
  (void)world_pos(s.sk, 4);
  (void)world_pos(s.sk, 5);
  (void)world_pos(s.sk, 6);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed);
  /* The hand is dirty, and so is the arm above it: two computations, then none. */
  (void)world_pos(s.sk, 3);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed + 2);
  (void)world_pos(s.sk, 2);
  (void)world_pos(s.sk, 3);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed + 2);
  destroy(&s);
}

static void a_dirty_read_walks_up_to_the_first_clean_ancestor_only(void **state) {
  t_skel s = build_tree();
  uint64_t computed;
  (void)state;
  read_all(s.sk);
  computed = ik_skeleton_recompute_count(s.sk);
  assert_int_equal(ik_skeleton_set_local_position(s.sk, 1, v3(0, 0.6, 0)), IK_OK);
  /* Right hand: spine, right arm, right hand; the root was clean and is not redone. */
  (void)world_pos(s.sk, 5);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed + 3);
  /* Left hand: the spine is clean now, so left arm and left hand only. */
  (void)world_pos(s.sk, 3);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed + 5);
  /* Repeated writes to a dirty bone dirty nothing more. */
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, about(0, 1, 0, 0.5)), IK_OK);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, about(0, 1, 0, 0.6)), IK_OK);
  read_all(s.sk);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed + 7);
  destroy(&s);
}

/* A second root after the first one's bones: a change to the first tree must neither
 * dirty it nor look for its (non-existent) parent. */
static void a_second_root_is_independent_of_the_first(void **state) {
  ik_bone_desc b[4];
  t_skel s;
  ik_vec3 p3;
  uint64_t computed, version3;
  (void)state;
  b[0] = desc(-1, v3(0, 0, 0), ik_quat_identity());
  b[1] = desc(0, v3(1, 0, 0), ik_quat_identity());
  b[2] = desc(-1, v3(0, 0, 5), about(0, 1, 0, 1));
  b[3] = desc(2, v3(1, 0, 0), ik_quat_identity());
  s = build(b, 4);
  read_all(s.sk);
  p3 = world_pos(s.sk, 3);
  assert_vec3_near(p3, ik_vec3_add(v3(0, 0, 5), ik_quat_rotate(about(0, 1, 0, 1), v3(1, 0, 0))), T_EPS);
  computed = ik_skeleton_recompute_count(s.sk);
  version3 = ik_skeleton_bone_version(s.sk, 3);
  assert_int_equal(ik_skeleton_set_local_position(s.sk, 0, v3(9, 9, 9)), IK_OK);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 1, about(1, 0, 0, 1)), IK_OK);
  assert_vec3_near(world_pos(s.sk, 3), p3, 0);
  assert_true(ik_skeleton_bone_version(s.sk, 3) == version3);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed);
  assert_vec3_near(world_pos(s.sk, 1), v3(10, 9, 9), T_EPS);
  assert_int_equal(ik_skeleton_set_world_position(s.sk, 2, v3(-1, -1, -1)), IK_OK);
  assert_vec3_near(world_pos(s.sk, 2), v3(-1, -1, -1), 0);
  destroy(&s);
}

static void a_write_of_the_same_value_is_no_change(void **state) {
  t_skel s = build_tree();
  ik_vec3 p, pw;
  ik_quat q;
  uint64_t version, computed;
  (void)state;
  read_all(s.sk);
  version = ik_skeleton_version(s.sk);
  computed = ik_skeleton_recompute_count(s.sk);
  assert_int_equal(ik_skeleton_get_local(s.sk, 2, &p, &q), IK_OK);
  assert_int_equal(ik_skeleton_set_local_position(s.sk, 2, p), IK_OK);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, q), IK_OK);
  /* A root's world position is its local one, so that world setter is exact too. */
  assert_int_equal(ik_skeleton_get_world(s.sk, 0, &pw, NULL), IK_OK);
  assert_int_equal(ik_skeleton_set_world_position(s.sk, 0, pw), IK_OK);
  assert_int_equal(ik_skeleton_version(s.sk), version);
  read_all(s.sk);
  assert_int_equal(ik_skeleton_recompute_count(s.sk), computed);
  destroy(&s);
}

static void bone_versions_move_for_the_changed_subtree_only(void **state) {
  t_skel s = build_tree();
  uint64_t before[TREE_N];
  int i;
  (void)state;
  read_all(s.sk);
  for (i = 0; i < TREE_N; i++) before[i] = ik_skeleton_bone_version(s.sk, i);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 4, about(1, 0, 0, 0.4)), IK_OK);
  for (i = 0; i < TREE_N; i++) {
    const int moved = i == 4 || i == 5;
    const uint64_t expected = moved ? ik_skeleton_version(s.sk) : before[i];
    assert_int_equal(ik_skeleton_bone_version(s.sk, i), expected);
  }
  /* Still moves when the bone was already dirty (its cache is not the only reader). */
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 5, about(1, 0, 0, 0.4)), IK_OK);
  assert_int_equal(ik_skeleton_bone_version(s.sk, 5), ik_skeleton_version(s.sk));
  assert_int_equal(ik_skeleton_bone_version(s.sk, 99), 0);
  /* Reset moves every bone. */
  ik_skeleton_reset(s.sk);
  for (i = 0; i < TREE_N; i++) assert_int_equal(ik_skeleton_bone_version(s.sk, i), ik_skeleton_version(s.sk));
  destroy(&s);
}

static void a_copied_block_is_an_independent_skeleton(void **state) {
  t_skel s = build_tree();
  const size_t size = ik_skeleton_size(TREE_N);
  void *copy_mem = malloc(size);
  const ik_skeleton *copy = (const ik_skeleton *)copy_mem;
  ik_vec3 p3;
  (void)state;
  assert_non_null(copy_mem);
  /* The init contract puts the skeleton at the start of its block. */
  assert_ptr_equal((void *)s.sk, s.mem);
  read_all(s.sk);
  p3 = world_pos(s.sk, 3);
  memcpy(copy_mem, s.mem, size);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 1, about(0, 0, 1, 1)), IK_OK);
  assert_vec3_near(world_pos(copy, 3), p3, 0);
  assert_true(ik_vec3_dist(world_pos(s.sk, 3), p3) > (ik_real)0.1);
  free(copy_mem);
  destroy(&s);
}

/* ---- validation ---- */

static ik_bone_desc good_bones[3];
static void fill_good_bones(void) {
  good_bones[0] = desc(-1, v3(0, 1, 0), ik_quat_identity());
  good_bones[1] = desc(0, v3(1, 0, 0), about(0, 0, 1, 0.5));
  good_bones[2] = desc(1, v3(1, 0, 0), ik_quat_identity());
}

/* Init with good_bones, one field broken by the caller: the code, the field and the
 * bone are reported, and neither the block nor *out is written. */
static void expect_init_refused(int count, size_t mem_size, ik_status status, const char *field, int index) {
  unsigned char mem[4096 + 64];
  unsigned char *aligned = mem + (16 - (uintptr_t)mem % 16) % 16;
  ik_skeleton *out = (ik_skeleton *)(uintptr_t)0x1234;
  ik_error err;
  size_t i;
  memset(mem, 0xAB, sizeof mem);
  assert_true(mem_size <= 4096);
  assert_int_equal(ik_skeleton_init(aligned, mem_size, good_bones, count, &out, &err), status);
  assert_int_equal(err.status, status);
  assert_string_equal(err.field, field);
  assert_int_equal(err.index, index);
  assert_ptr_equal((void *)out, (void *)(uintptr_t)0x1234);
  for (i = 0; i < sizeof mem; i++) assert_int_equal(mem[i], 0xAB);
}

static void init_refuses_bad_bones_and_writes_nothing(void **state) {
  const size_t size = ik_skeleton_size(3);
  const ik_real nan = (ik_real)NAN, inf = (ik_real)INFINITY;
  (void)state;
  fill_good_bones();
  good_bones[1].parent = 1; /* itself */
  expect_init_refused(3, size, IK_E_PARAMETER, "parent", 1);
  fill_good_bones();
  good_bones[1].parent = 2; /* a later bone: parents must come first */
  expect_init_refused(3, size, IK_E_PARAMETER, "parent", 1);
  fill_good_bones();
  good_bones[0].parent = 0; /* a root must say -1 */
  expect_init_refused(3, size, IK_E_PARAMETER, "parent", 0);
  fill_good_bones();
  good_bones[2].parent = -2;
  expect_init_refused(3, size, IK_E_PARAMETER, "parent", 2);
  fill_good_bones();
  good_bones[2].position.y = nan;
  expect_init_refused(3, size, IK_E_NOT_FINITE, "position", 2);
  fill_good_bones();
  good_bones[0].position.z = -inf;
  expect_init_refused(3, size, IK_E_NOT_FINITE, "position", 0);
  fill_good_bones();
  good_bones[1].position.x = IK_REAL_MAX_COORD * 2;
  expect_init_refused(3, size, IK_E_RANGE, "position", 1);
  fill_good_bones();
  good_bones[1].rotation = ik_quat_make(0, 0, 0, 0);
  expect_init_refused(3, size, IK_E_PARAMETER, "rotation", 1);
  fill_good_bones();
  good_bones[2].rotation.w = nan;
  expect_init_refused(3, size, IK_E_NOT_FINITE, "rotation", 2);
  fill_good_bones();
  good_bones[2].rotation.x = IK_REAL_MAX_COORD * 2; /* its squared length would overflow */
  expect_init_refused(3, size, IK_E_RANGE, "rotation", 2);
  fill_good_bones();
  expect_init_refused(0, size, IK_E_COUNT, "bone_count", -1);
  expect_init_refused(-3, size, IK_E_COUNT, "bone_count", -1);
  expect_init_refused(3, size - 1, IK_E_PARAMETER, "mem_size", -1);
}

static void init_refuses_null_and_misaligned_memory(void **state) {
  unsigned char mem[4096 + 64];
  unsigned char *aligned = mem + (16 - (uintptr_t)mem % 16) % 16;
  const size_t size = ik_skeleton_size(3);
  ik_skeleton *out = NULL;
  ik_error err;
  (void)state;
  fill_good_bones();
  assert_int_equal(ik_skeleton_init(NULL, size, good_bones, 3, &out, &err), IK_E_NULL);
  assert_string_equal(err.field, "mem");
  assert_int_equal(ik_skeleton_init(aligned, size, NULL, 3, &out, &err), IK_E_NULL);
  assert_string_equal(err.field, "bones");
  assert_int_equal(ik_skeleton_init(aligned, size, good_bones, 3, NULL, &err), IK_E_NULL);
  assert_string_equal(err.field, "out");
  assert_int_equal(ik_skeleton_init(aligned + 1, size, good_bones, 3, &out, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "mem");
  assert_null(out);
  /* err is optional; the exact size is enough. */
  assert_int_equal(ik_skeleton_init(aligned, size, good_bones, 3, &out, NULL), IK_OK);
  assert_ptr_equal((void *)out, (void *)aligned);
}

static void size_is_zero_for_no_bones_and_grows_with_bones(void **state) {
  (void)state;
  assert_true(ik_skeleton_size(0) == 0);
  assert_true(ik_skeleton_size(-1) == 0);
  assert_true(ik_skeleton_size(1) > 0);
  assert_true(ik_skeleton_size(2) > ik_skeleton_size(1));
  assert_true(ik_skeleton_size(200) - ik_skeleton_size(100) ==
              100 * (ik_skeleton_size(2) - ik_skeleton_size(1)));
}

/* Everything a refused setter could have touched, read while every bone is clean. */
typedef struct snapshot {
  ik_vec3 p_ls[TREE_N], p_ws[TREE_N];
  ik_quat q_ls[TREE_N], q_ws[TREE_N];
  uint64_t version, computed;
} snapshot;

static void take(const ik_skeleton *sk, snapshot *s) {
  int i;
  memset(s, 0, sizeof *s);
  for (i = 0; i < TREE_N; i++) {
    assert_int_equal(ik_skeleton_get_world(sk, i, &s->p_ws[i], &s->q_ws[i]), IK_OK);
    assert_int_equal(ik_skeleton_get_local(sk, i, &s->p_ls[i], &s->q_ls[i]), IK_OK);
  }
  s->version = ik_skeleton_version(sk);
  s->computed = ik_skeleton_recompute_count(sk);
}

static void assert_unchanged(const ik_skeleton *sk, const snapshot *before) {
  snapshot after;
  take(sk, &after);
  /* Nothing was dirtied either: taking the snapshot recomputed nothing. */
  assert_memory_equal(&after, before, sizeof after);
}

static void setters_refuse_bad_input_and_change_nothing(void **state) {
  t_skel s = build_tree();
  snapshot before;
  const ik_real nan = (ik_real)NAN, inf = (ik_real)INFINITY, huge = IK_REAL_MAX_COORD * 2;
  const ik_quat ok_q = about(0, 1, 0, 0.5);
  const ik_vec3 ok_p = v3(1, 2, 3);
  ik_vec3 out_p = v3(7, 7, 7);
  ik_quat out_q = ik_quat_make(7, 7, 7, 7);
  (void)state;
  take(s.sk, &before);
  /* Index out of range, both ends, for every setter and getter. */
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, -1, ok_q), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, TREE_N, ok_q), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_set_local_position(s.sk, TREE_N, ok_p), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_set_world_rotation(s.sk, -1, ok_q), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_set_world_position(s.sk, TREE_N, ok_p), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_get_world(s.sk, TREE_N, &out_p, &out_q), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_get_local(s.sk, -1, &out_p, &out_q), IK_E_PARAMETER);
  assert_vec3_near(out_p, v3(7, 7, 7), 0);
  assert_true(out_q.w == 7);
  assert_int_equal(ik_skeleton_parent(s.sk, TREE_N), -1);
  /* Non-finite components. */
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, ik_quat_make(0, nan, 0, 1)), IK_E_NOT_FINITE);
  assert_int_equal(ik_skeleton_set_world_rotation(s.sk, 2, ik_quat_make(0, 0, 0, inf)), IK_E_NOT_FINITE);
  assert_int_equal(ik_skeleton_set_local_position(s.sk, 2, v3(0, 0, nan)), IK_E_NOT_FINITE);
  assert_int_equal(ik_skeleton_set_world_position(s.sk, 2, ik_vec3_make(-inf, 0, 0)), IK_E_NOT_FINITE);
  /* Zero (and vanishingly small) quaternions have no rotation to normalise to. */
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, ik_quat_make(0, 0, 0, 0)), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_set_world_rotation(s.sk, 2, ik_quat_make(0, 0, 0, 0)), IK_E_PARAMETER);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, ik_quat_make(0, 0, 0, (ik_real)1e-30)),
                   IK_E_PARAMETER);
  /* Beyond IK_REAL_MAX_COORD. */
  assert_int_equal(ik_skeleton_set_local_position(s.sk, 2, ik_vec3_make(huge, 0, 0)), IK_E_RANGE);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, ik_quat_make(huge, 0, 0, 1)), IK_E_RANGE);
  assert_unchanged(s.sk, &before);
  /* A world position in range whose offset from the parent is not. */
  assert_int_equal(
      ik_skeleton_set_local_position(s.sk, 0, ik_vec3_make(-IK_REAL_MAX_COORD * (ik_real)0.9, 0, 0)), IK_OK);
  take(s.sk, &before);
  assert_int_equal(
      ik_skeleton_set_world_position(s.sk, 6, ik_vec3_make(IK_REAL_MAX_COORD * (ik_real)0.9, 0, 0)),
      IK_E_RANGE);
  assert_unchanged(s.sk, &before);
  /* NULL skeletons are refused, not dereferenced. */
  assert_int_equal(ik_skeleton_set_local_rotation(NULL, 0, ok_q), IK_E_NULL);
  assert_int_equal(ik_skeleton_get_world(NULL, 0, &out_p, &out_q), IK_E_NULL);
  destroy(&s);
}

/* ---- nodes ---- */

static void node_parented_to_a_bone_follows_it(void **state) {
  t_skel s = build_tree();
  ik_node target;
  ik_vec3 bone_p, p;
  ik_quat bone_q, q;
  const ik_vec3 offset = v3(0, 0.2, 0.1);
  const ik_quat turn = about(0, 0, 1, 0.4);
  (void)state;
  assert_int_equal(ik_node_init(&target, offset, turn), IK_OK);
  /* No parent: local is world. */
  ik_node_get_world(&target, &p, &q);
  assert_vec3_near(p, offset, 0);
  assert_quat_near(q, turn, T_EPS);
  assert_int_equal(ik_node_set_parent_bone(&target, s.sk, 3), IK_OK);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 1, about(1, 0, 0, 0.9)), IK_OK);
  assert_int_equal(ik_skeleton_get_world(s.sk, 3, &bone_p, &bone_q), IK_OK);
  ik_node_get_world(&target, &p, &q);
  assert_vec3_near(p, ik_vec3_add(bone_p, ik_quat_rotate(bone_q, offset)), T_EPS);
  assert_quat_near(q, ik_quat_mul(bone_q, turn), T_EPS);
  /* The bone moves again; the node follows. */
  assert_int_equal(ik_skeleton_set_world_position(s.sk, 3, v3(4, 4, 4)), IK_OK);
  ik_node_get_world(&target, &p, NULL);
  assert_vec3_near(p, ik_vec3_add(v3(4, 4, 4), ik_quat_rotate(world_rot(s.sk, 3), offset)), T_EPS);
  destroy(&s);
}

/* Both bones are at the same version in a fresh skeleton: the cache must not take the
 * new parent's version for the old one's. The local transform is kept. */
static void reparenting_a_node_keeps_its_local_transform_under_the_new_parent(void **state) {
  t_skel s = build_tree();
  ik_node n, other;
  ik_vec3 p, other_p;
  ik_quat other_q;
  const ik_vec3 offset = v3(0.1, 0.2, 0.3);
  (void)state;
  assert_int_equal(ik_node_init(&n, offset, ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_init(&other, v3(5, 0, 0), about(0, 0, 1, IK_PI / 2)), IK_OK);
  assert_int_equal(ik_node_set_parent_bone(&n, s.sk, 3), IK_OK);
  ik_node_get_world(&n, &p, NULL);
  assert_true(ik_skeleton_bone_version(s.sk, 3) == ik_skeleton_bone_version(s.sk, 5));
  assert_int_equal(ik_node_set_parent_bone(&n, s.sk, 5), IK_OK);
  ik_node_get_world(&n, &p, NULL);
  assert_vec3_near(p, ik_vec3_add(world_pos(s.sk, 5), ik_quat_rotate(world_rot(s.sk, 5), offset)), T_EPS);
  assert_int_equal(ik_node_set_parent_node(&n, &other), IK_OK);
  ik_node_get_world(&other, &other_p, &other_q);
  ik_node_get_world(&n, &p, NULL);
  assert_vec3_near(p, ik_vec3_add(other_p, ik_quat_rotate(other_q, offset)), T_EPS);
  assert_int_equal(ik_node_set_parent_bone(&n, s.sk, 6), IK_OK);
  ik_node_get_world(&n, &p, NULL);
  assert_vec3_near(p, ik_vec3_add(world_pos(s.sk, 6), ik_quat_rotate(world_rot(s.sk, 6), offset)), T_EPS);
  destroy(&s);
}

static void node_cache_survives_changes_elsewhere_in_the_skeleton(void **state) {
  t_skel s = build_tree();
  ik_node foot;
  uint64_t stamp;
  ik_vec3 p;
  (void)state;
  assert_int_equal(ik_node_init(&foot, v3(0, -0.1, 0), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_set_parent_bone(&foot, s.sk, 6), IK_OK);
  ik_node_get_world(&foot, &p, NULL);
  /* world_version is the node's private cache stamp: read here to see that an arm
   * moving does not make the leg's node recompute, and the leg moving does. */
  stamp = foot.world_version;
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 2, about(0, 1, 0, 1)), IK_OK);
  ik_node_get_world(&foot, NULL, NULL);
  ik_node_get_world(&foot, NULL, NULL);
  assert_true(foot.world_version == stamp);
  assert_int_equal(ik_skeleton_set_local_position(s.sk, 0, v3(0, 2, 0)), IK_OK);
  ik_node_get_world(&foot, &p, NULL);
  assert_true(foot.world_version != stamp);
  assert_vec3_near(p, ik_vec3_add(world_pos(s.sk, 6), ik_quat_rotate(world_rot(s.sk, 6), v3(0, -0.1, 0))),
                   T_EPS);
  destroy(&s);
}

static void node_parented_to_a_node_follows_it(void **state) {
  t_skel s = build_tree();
  ik_node hand_target, pole;
  ik_vec3 p, parent_p;
  ik_quat q, parent_q;
  const ik_vec3 offset = v3(1, 0, 0);
  (void)state;
  assert_int_equal(ik_node_init(&hand_target, v3(0, 0, 0.3), about(0, 1, 0, IK_PI / 2)), IK_OK);
  assert_int_equal(ik_node_init(&pole, offset, ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_set_parent_node(&pole, &hand_target), IK_OK);
  /* Parent without a parent: its local is its world; its +X is world -Z. */
  ik_node_get_world(&pole, &p, &q);
  assert_vec3_near(p, v3(0, 0, -0.7), T_EPS);
  assert_quat_near(q, about(0, 1, 0, IK_PI / 2), T_EPS);
  /* The parent moves by a world setter; the child follows. */
  assert_int_equal(ik_node_set_world_position(&hand_target, v3(2, 0, 0)), IK_OK);
  ik_node_get_world(&pole, &p, NULL);
  assert_vec3_near(p, v3(2, 0, -1), T_EPS);
  /* Two levels: the parent hangs from a bone, the bone turns, the grandchild follows. */
  assert_int_equal(ik_node_set_parent_bone(&hand_target, s.sk, 5), IK_OK);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 4, about(0, 0, 1, 1.1)), IK_OK);
  ik_node_get_world(&hand_target, &parent_p, &parent_q);
  ik_node_get_world(&pole, &p, &q);
  assert_vec3_near(p, ik_vec3_add(parent_p, ik_quat_rotate(parent_q, offset)), T_EPS);
  assert_quat_near(q, parent_q, T_EPS);
  assert_int_equal(ik_skeleton_set_local_rotation(s.sk, 0, about(0, 1, 0, -0.7)), IK_OK);
  ik_node_get_world(&pole, &p, NULL); /* read the child first: it must refresh its parent */
  ik_node_get_world(&hand_target, &parent_p, &parent_q);
  assert_vec3_near(p, ik_vec3_add(parent_p, ik_quat_rotate(parent_q, offset)), T_EPS);
  destroy(&s);
}

static void node_world_setters_read_back_under_a_turned_parent(void **state) {
  t_skel s = build_tree();
  ik_node n;
  ik_vec3 p, lp;
  ik_quat q;
  const ik_quat target_q = about(1, 2, 3, 0.8);
  (void)state;
  assert_int_equal(ik_node_init(&n, ik_vec3_zero(), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_set_parent_bone(&n, s.sk, 2), IK_OK);
  assert_int_equal(ik_node_set_world_position(&n, v3(-1, 3, 2)), IK_OK);
  assert_int_equal(ik_node_set_world_rotation(&n, target_q), IK_OK);
  ik_node_get_world(&n, &p, &q);
  assert_vec3_near(p, v3(-1, 3, 2), T_EPS);
  assert_quat_near(q, target_q, T_EPS);
  /* Stored relative to the bone: the bone moving carries it along. */
  ik_node_get_local(&n, &lp, NULL);
  assert_vec3_near(ik_vec3_add(world_pos(s.sk, 2), ik_quat_rotate(world_rot(s.sk, 2), lp)), v3(-1, 3, 2),
                   T_EPS);
  /* Local setters, each after a read that left the cache fresh: they must invalidate it. */
  assert_int_equal(ik_node_set_local_position(&n, v3(0, 1, 0)), IK_OK);
  ik_node_get_world(&n, &p, NULL);
  assert_vec3_near(p, ik_vec3_add(world_pos(s.sk, 2), ik_quat_rotate(world_rot(s.sk, 2), v3(0, 1, 0))),
                   T_EPS);
  assert_int_equal(ik_node_set_local_rotation(&n, ik_quat_make(0, 0, 0, 2)), IK_OK);
  ik_node_get_world(&n, NULL, &q);
  assert_quat_near(q, world_rot(s.sk, 2), T_EPS);
  destroy(&s);
}

static void node_cycles_are_refused_and_change_nothing(void **state) {
  ik_node a, b, c;
  ik_vec3 before_p, p;
  (void)state;
  assert_int_equal(ik_node_init(&a, v3(1, 0, 0), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_init(&b, v3(0, 1, 0), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_init(&c, v3(0, 0, 1), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_set_parent_node(&b, &a), IK_OK); /* a <- b <- c */
  assert_int_equal(ik_node_set_parent_node(&c, &b), IK_OK);
  ik_node_get_world(&a, &before_p, NULL);
  assert_int_equal(ik_node_set_parent_node(&a, &a), IK_E_PARAMETER);
  assert_int_equal(ik_node_set_parent_node(&a, &c), IK_E_PARAMETER);
  assert_int_equal(ik_node_set_parent_node(&a, &b), IK_E_PARAMETER);
  assert_null(a.parent_node);
  ik_node_get_world(&a, &p, NULL);
  assert_vec3_near(p, before_p, 0);
  ik_node_get_world(&c, &p, NULL);
  assert_vec3_near(p, v3(1, 1, 1), T_EPS);
  /* Re-hanging within the tree without a cycle is fine, and NULL detaches. */
  assert_int_equal(ik_node_set_parent_node(&c, &a), IK_OK);
  ik_node_get_world(&c, &p, NULL);
  assert_vec3_near(p, v3(1, 0, 1), T_EPS);
  assert_int_equal(ik_node_set_parent_node(&c, NULL), IK_OK);
  ik_node_get_world(&c, &p, NULL);
  assert_vec3_near(p, v3(0, 0, 1), T_EPS);
}

static void depends_on_bone_sees_descendants_through_nodes(void **state) {
  t_skel s = build_tree(), other = build_tree();
  ik_node on_hand, under_node, free_node, on_other;
  (void)state;
  assert_int_equal(ik_node_init(&on_hand, ik_vec3_zero(), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_init(&under_node, ik_vec3_zero(), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_init(&free_node, ik_vec3_zero(), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_init(&on_other, ik_vec3_zero(), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_set_parent_bone(&on_hand, s.sk, 3), IK_OK); /* left hand */
  assert_int_equal(ik_node_set_parent_node(&under_node, &on_hand), IK_OK);
  assert_int_equal(ik_node_set_parent_bone(&on_other, other.sk, 3), IK_OK);
  /* The left hand, its arm, the spine and the root all carry it. */
  assert_true(ik_node_depends_on_bone(&under_node, s.sk, 3));
  assert_true(ik_node_depends_on_bone(&under_node, s.sk, 2));
  assert_true(ik_node_depends_on_bone(&under_node, s.sk, 1));
  assert_true(ik_node_depends_on_bone(&under_node, s.sk, 0));
  assert_true(ik_node_depends_on_bone(&on_hand, s.sk, 2));
  /* The right arm and the leg do not. */
  assert_false(ik_node_depends_on_bone(&under_node, s.sk, 4));
  assert_false(ik_node_depends_on_bone(&under_node, s.sk, 5));
  assert_false(ik_node_depends_on_bone(&under_node, s.sk, 6));
  /* No parent, another skeleton, a bone out of range. */
  assert_false(ik_node_depends_on_bone(&free_node, s.sk, 0));
  assert_false(ik_node_depends_on_bone(&on_other, s.sk, 2));
  assert_false(ik_node_depends_on_bone(&on_hand, s.sk, TREE_N));
  assert_false(ik_node_depends_on_bone(&on_hand, NULL, 0));
  assert_true(ik_skeleton_in_subtree(s.sk, 5, 1));
  assert_false(ik_skeleton_in_subtree(s.sk, 5, 2));
  destroy(&s);
  destroy(&other);
}

static void node_validation_refuses_and_changes_nothing(void **state) {
  t_skel s = build_tree();
  ik_node n, untouched;
  unsigned char sentinel[sizeof(ik_node)];
  const ik_real nan = (ik_real)NAN;
  ik_vec3 p_ls, p_ws;
  ik_quat q_ls, q_ws;
  (void)state;
  memset(&untouched, 0x3C, sizeof untouched);
  memcpy(sentinel, &untouched, sizeof sentinel);
  assert_int_equal(ik_node_init(&untouched, v3(nan, 0, 0), ik_quat_identity()), IK_E_NOT_FINITE);
  assert_int_equal(ik_node_init(&untouched, v3(0, 0, 0), ik_quat_make(0, 0, 0, 0)), IK_E_PARAMETER);
  assert_int_equal(ik_node_init(&untouched, ik_vec3_make(IK_REAL_MAX_COORD * 2, 0, 0), ik_quat_identity()),
                   IK_E_RANGE);
  assert_memory_equal(&untouched, sentinel, sizeof sentinel);

  assert_int_equal(ik_node_init(&n, v3(1, 2, 3), about(0, 1, 0, 0.3)), IK_OK);
  assert_int_equal(ik_node_set_parent_bone(&n, s.sk, 1), IK_OK);
  ik_node_get_local(&n, &p_ls, &q_ls);
  ik_node_get_world(&n, &p_ws, &q_ws);
  assert_int_equal(ik_node_set_local_position(&n, v3(0, nan, 0)), IK_E_NOT_FINITE);
  assert_int_equal(ik_node_set_local_rotation(&n, ik_quat_make(0, 0, 0, 0)), IK_E_PARAMETER);
  assert_int_equal(ik_node_set_world_position(&n, v3(0, 0, nan)), IK_E_NOT_FINITE);
  assert_int_equal(ik_node_set_world_rotation(&n, ik_quat_make(nan, 0, 0, 1)), IK_E_NOT_FINITE);
  assert_int_equal(ik_node_set_parent_bone(&n, s.sk, TREE_N), IK_E_PARAMETER);
  assert_int_equal(ik_node_set_parent_bone(&n, s.sk, -1), IK_E_PARAMETER);
  assert_int_equal(ik_node_set_parent_bone(&n, NULL, 0), IK_E_NULL);
  assert_ptr_equal(n.parent_skeleton, s.sk);
  assert_int_equal(n.parent_bone, 1);
  {
    ik_vec3 p;
    ik_quat q;
    ik_node_get_local(&n, &p, &q);
    assert_memory_equal(&p, &p_ls, sizeof p);
    assert_memory_equal(&q, &q_ls, sizeof q);
    ik_node_get_world(&n, &p, &q);
    assert_memory_equal(&p, &p_ws, sizeof p);
    assert_memory_equal(&q, &q_ws, sizeof q);
  }
  destroy(&s);
}

/* ---- random hierarchies against naive forward kinematics ---- */

/* What the test believes the skeleton holds, and the plain parents-first pass. */
typedef struct mirror {
  int count;
  int parent[MAXB];
  ik_vec3 rest_p[MAXB], p_ls[MAXB], p_ws[MAXB];
  ik_quat rest_q[MAXB], q_ls[MAXB], q_ws[MAXB];
} mirror;

static void naive_fk(mirror *m) {
  int i;
  for (i = 0; i < m->count; i++) {
    const int par = m->parent[i];
    if (par < 0) {
      m->p_ws[i] = m->p_ls[i];
      m->q_ws[i] = m->q_ls[i];
    } else {
      m->p_ws[i] = ik_vec3_add(m->p_ws[par], ik_quat_rotate(m->q_ws[par], m->p_ls[i]));
      m->q_ws[i] = ik_quat_normalize(ik_quat_mul(m->q_ws[par], m->q_ls[i]));
    }
  }
}

static ik_quat random_nonunit_quat(t_rng *r) {
  const ik_quat q = t_unit_quat(r);
  const ik_real s = (ik_real)t_uniform(r, 0.2, 5);
  return ik_quat_make(q.x * s, q.y * s, q.z * s, q.w * s);
}

static void assert_matches_naive(const ik_skeleton *sk, mirror *m) {
  int i;
  naive_fk(m);
  for (i = 0; i < m->count; i++) {
    ik_vec3 p;
    ik_quat q;
    assert_int_equal(ik_skeleton_get_world(sk, i, &p, &q), IK_OK);
    assert_vec3_near(p, m->p_ws[i], T_FK * (1 + (double)ik_vec3_len(m->p_ws[i])));
    assert_quat_near(q, m->q_ws[i], T_FK);
  }
}

static void run_random_hierarchy(uint64_t seed, int count) {
  t_rng r = t_rng_make(seed);
  static mirror m;
  ik_bone_desc bones[MAXB];
  t_skel s;
  int i, step;
  m.count = count;
  for (i = 0; i < count; i++) {
    /* Mostly a long chain (deep recomputation paths), with branches and extra roots. */
    const int par = i == 0 ? -1 : (t_uniform(&r, 0, 1) < 0.7 ? i - 1 : t_int(&r, -1, i - 1));
    bones[i] =
        desc(par, ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0.1, 1)), random_nonunit_quat(&r));
    m.parent[i] = par;
    m.rest_p[i] = m.p_ls[i] = bones[i].position;
    m.rest_q[i] = m.q_ls[i] = ik_quat_normalize(bones[i].rotation);
  }
  s = build(bones, count);
  assert_matches_naive(s.sk, &m);
  for (step = 0; step < 60; step++) {
    const int bone = t_int(&r, 0, count - 1);
    const int op = t_int(&r, 0, 5);
    const uint64_t version = ik_skeleton_version(s.sk);
    if (op == 0) {
      const ik_quat q = random_nonunit_quat(&r);
      assert_int_equal(ik_skeleton_set_local_rotation(s.sk, bone, q), IK_OK);
      m.q_ls[bone] = ik_quat_normalize(q);
    } else if (op == 1) {
      const ik_vec3 p = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0, 2));
      assert_int_equal(ik_skeleton_set_local_position(s.sk, bone, p), IK_OK);
      m.p_ls[bone] = p;
    } else if (op == 2) {
      const ik_quat q = t_unit_quat(&r);
      assert_int_equal(ik_skeleton_set_world_rotation(s.sk, bone, q), IK_OK);
      assert_quat_near(world_rot(s.sk, bone), q, T_FK);
      assert_int_equal(ik_skeleton_get_local(s.sk, bone, NULL, &m.q_ls[bone]), IK_OK);
    } else if (op == 3) {
      const ik_vec3 p = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0, 20));
      assert_int_equal(ik_skeleton_set_world_position(s.sk, bone, p), IK_OK);
      assert_vec3_near(world_pos(s.sk, bone), p, T_FK * 20);
      assert_int_equal(ik_skeleton_get_local(s.sk, bone, &m.p_ls[bone], NULL), IK_OK);
    } else if (op == 4) {
      /* Partial reads leave a mix of clean and dirty bones for the next edits. */
      int k;
      for (k = 0; k < 3; k++) (void)world_pos(s.sk, t_int(&r, 0, count - 1));
      assert_true(ik_skeleton_version(s.sk) == version);
      continue;
    } else if (t_uniform(&r, 0, 1) < 0.2) {
      ik_skeleton_reset(s.sk);
      for (i = 0; i < count; i++) {
        m.p_ls[i] = m.rest_p[i];
        m.q_ls[i] = m.rest_q[i];
      }
    } else {
      continue;
    }
    assert_true(ik_skeleton_version(s.sk) > version);
    if (step % 7 == 0) assert_matches_naive(s.sk, &m);
  }
  assert_matches_naive(s.sk, &m);
  destroy(&s);
}

static void random_deep_hierarchies_agree_with_naive_fk(void **state) {
  static const int sizes[] = {1, 2, 3, 5, 17, 64, 199, 200};
  t_rng pick = t_rng_make(2024);
  size_t k;
  int trial;
  (void)state;
  for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) run_random_hierarchy(100 + k, sizes[k]);
  for (trial = 0; trial < 40; trial++) run_random_hierarchy(1000 + (uint64_t)trial, t_int(&pick, 1, MAXB));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fk_of_a_known_arm_matches_the_hand_worked_pose),
      cmocka_unit_test(bone_desc_init_sets_the_documented_defaults),
      cmocka_unit_test(rest_rotations_and_set_rotations_are_normalised),
      cmocka_unit_test(set_world_rotation_reads_back_and_the_subtree_turns_rigidly),
      cmocka_unit_test(set_world_position_moves_the_bone_and_its_children_follow),
      cmocka_unit_test(reset_returns_to_rest_exactly),
      cmocka_unit_test(reading_without_a_change_recomputes_nothing_and_keeps_the_version),
      cmocka_unit_test(a_change_leaves_the_siblings_subtrees_clean),
      cmocka_unit_test(a_dirty_read_walks_up_to_the_first_clean_ancestor_only),
      cmocka_unit_test(a_second_root_is_independent_of_the_first),
      cmocka_unit_test(a_write_of_the_same_value_is_no_change),
      cmocka_unit_test(bone_versions_move_for_the_changed_subtree_only),
      cmocka_unit_test(a_copied_block_is_an_independent_skeleton),
      cmocka_unit_test(init_refuses_bad_bones_and_writes_nothing),
      cmocka_unit_test(init_refuses_null_and_misaligned_memory),
      cmocka_unit_test(size_is_zero_for_no_bones_and_grows_with_bones),
      cmocka_unit_test(setters_refuse_bad_input_and_change_nothing),
      cmocka_unit_test(node_parented_to_a_bone_follows_it),
      cmocka_unit_test(reparenting_a_node_keeps_its_local_transform_under_the_new_parent),
      cmocka_unit_test(node_cache_survives_changes_elsewhere_in_the_skeleton),
      cmocka_unit_test(node_parented_to_a_node_follows_it),
      cmocka_unit_test(node_world_setters_read_back_under_a_turned_parent),
      cmocka_unit_test(node_cycles_are_refused_and_change_nothing),
      cmocka_unit_test(depends_on_bone_sees_descendants_through_nodes),
      cmocka_unit_test(node_validation_refuses_and_changes_nothing),
      cmocka_unit_test(random_deep_hierarchies_agree_with_naive_fk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
