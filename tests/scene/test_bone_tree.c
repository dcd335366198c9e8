/* ik_bone_tree: trees cut into branches, point trees solved, bone trees on a skeleton
 * (parents found, bones turned, never stretched), and what each refuses. */
#include <stdlib.h>
#include <string.h>

#include "ik_bone_tree.h"
#include "test_util.h"

static ik_vec3 v3(double x, double y, double z) { return ik_vec3_make((ik_real)x, (ik_real)y, (ik_real)z); }

/* A Y: trunk 0-1-2, arms 2-3-4 and 2-5-6. */
static const int Y_PARENTS[7] = {-1, 0, 1, 2, 3, 2, 5};

static ik_bone_tree *y_tree(void) {
  const ik_vec3 pose[7] = {v3(0, 0, 0), v3(0, 1, 0),      v3(0, 2, 0), v3(0.5, 2.5, 0),
                           v3(1, 3, 0), v3(-0.5, 2.5, 0), v3(-1, 3, 0)};
  ik_bone_tree *t = ik_bone_tree_init(malloc(ik_bone_tree_size(7, 0)), 7, Y_PARENTS, 0);
  int bad = -1;
  assert_int_equal(ik_bone_tree_set_points(t, pose, &bad), IK_OK);
  return t;
}

static void cuts_a_y_into_three_branches(void **state) {
  ik_bone_tree *t = y_tree();
  (void)state;
  assert_int_equal(t->branches, 3);
  assert_int_equal(t->effectors, 2);
  assert_int_equal(t->effector_joint[0], 4);
  assert_int_equal(t->effector_joint[1], 6);
  assert_int_equal(ik_bone_tree_branch_at(t, 2), 0);
  assert_int_equal(ik_bone_tree_branch_at(t, 4), t->effector_branch[0]);
  assert_int_equal(ik_bone_tree_branch_at(t, 3), -1);
  assert_int_equal(ik_bone_tree_branch_at(t, 0), -1);
  assert_int_equal(t->branch[t->effector_branch[1]].parent, 0);
  free(t);
}

static void solves_a_point_tree_and_keeps_its_start(void **state) {
  ik_bone_tree *t = y_tree();
  ik_vec3 start[7];
  int j;
  (void)state;
  memcpy(start, t->positions, sizeof start);
  t->iterations = 50;
  ik_bone_tree_set_target(t, 0, v3(1, 2.5, 0.5));
  ik_bone_tree_set_target(t, 1, v3(-1, 2.2, -0.3));
  assert_int_equal(ik_bone_tree_solve(t), IK_OK);
  assert_true(t->job.reached);
  assert_true((double)ik_bone_tree_result(t, 0)->distance <= 1e-3);
  for (j = 1; j < 7; j++)
    assert_near(ik_vec3_dist(t->positions[j], t->positions[Y_PARENTS[j]]), t->lengths[j], T_LEN_REL * 10);
  /* Deterministic: a second solve starts from the pose given, and ends the same. */
  {
    ik_vec3 first[7];
    memcpy(first, t->positions, sizeof first);
    assert_int_equal(ik_bone_tree_solve(t), IK_OK);
    assert_memory_equal(first, t->positions, sizeof first);
  }
  assert_memory_equal(start, t->start, sizeof start);
  free(t);
}

static void refuses_bad_trees(void **state) {
  const int not_first[3] = {0, -1, 1}, later[3] = {-1, 2, 0};
  ik_bone_tree *t = y_tree();
  ik_vec3 pose[7];
  int bad = -1;
  (void)state;
  assert_int_equal(ik_bone_tree_check(1, Y_PARENTS, &bad), IK_E_COUNT);
  assert_int_equal(ik_bone_tree_check(3, not_first, &bad), IK_E_PARAMETER);
  assert_int_equal(bad, 0);
  assert_int_equal(ik_bone_tree_check(3, later, &bad), IK_E_PARAMETER);
  assert_int_equal(bad, 1);
  assert_int_equal(ik_bone_tree_check(7, Y_PARENTS, &bad), IK_OK);
  memcpy(pose, t->positions, sizeof pose);
  pose[5] = pose[2];
  assert_int_equal(ik_bone_tree_set_points(t, pose, &bad), IK_E_BONE_LENGTH);
  assert_int_equal(bad, 5);
  pose[5] = v3(0, (double)NAN, 0);
  assert_int_equal(ik_bone_tree_set_points(t, pose, &bad), IK_E_NOT_FINITE);
  t->closed = 1;
  assert_int_equal(ik_bone_tree_solve(t), IK_E_NULL);
  free(t);
}

/* hips, spine, chest, and two arms: a rigid shoulder, an elbow, a hand. */
static ik_skeleton *body(void **mem) {
  ik_bone_desc d[9];
  ik_error err;
  ik_skeleton *sk;
  const size_t size = ik_skeleton_size(9);
  static const int parents[9] = {-1, 0, 1, 2, 3, 4, 2, 6, 7};
  const ik_vec3 at[9] = {v3(0, 0, 0),   v3(0, 1, 0),      v3(0, 1, 0),    v3(0.3, 0.2, 0), v3(0.5, 0, 0),
                         v3(0.5, 0, 0), v3(-0.3, 0.2, 0), v3(-0.5, 0, 0), v3(-0.5, 0, 0)};
  int i;
  for (i = 0; i < 9; i++) {
    ik_bone_desc_init(&d[i]);
    d[i].parent = parents[i];
    d[i].position = at[i];
  }
  *mem = malloc(size);
  assert_int_equal(ik_skeleton_init(*mem, size, d, 9, &sk, &err), IK_OK);
  return sk;
}

static void a_bone_tree_turns_its_bones_and_never_stretches_them(void **state) {
  void *mem;
  ik_skeleton *sk = body(&mem);
  const int bones[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  int parents[9], scratch[9], bad = -1, why = 0, other = 0, j;
  ik_vec3 local_before[9];
  ik_bone_tree *t;
  (void)state;
  assert_int_equal(ik_bone_tree_parents_of(sk, bones, 9, parents, scratch, &bad, &why, &other), IK_OK);
  for (j = 1; j < 9; j++) assert_int_equal(parents[j], ik_skeleton_parent(sk, j));
  for (j = 0; j < 9; j++) ik_skeleton_get_local(sk, j, &local_before[j], NULL);
  t = ik_bone_tree_init(malloc(ik_bone_tree_size(9, 1)), 9, parents, 1);
  assert_int_equal(ik_bone_tree_set_bones(t, sk, bones, NULL, &bad), IK_OK);
  t->iterations = 200;
  ik_bone_tree_set_target(t, 0, v3(0.9, 2.4, 0.5));
  ik_bone_tree_set_target(t, 1, v3(-0.8, 2.0, 0.4));
  assert_int_equal(ik_bone_tree_solve(t), IK_OK);
  assert_true(t->job.reached);
  {
    ik_vec3 hand;
    ik_skeleton_get_world(sk, 5, &hand, NULL);
    assert_true((double)ik_vec3_dist(hand, v3(0.9, 2.4, 0.5)) <= 1e-3);
    assert_near(ik_vec3_dist(hand, v3(0.9, 2.4, 0.5)), ik_bone_tree_result(t, 0)->distance, 0);
  }
  for (j = 0; j < 9; j++) {
    ik_vec3 local;
    ik_skeleton_get_local(sk, j, &local, NULL);
    assert_memory_equal(&local, &local_before[j], sizeof local);
  }
  free(t);
  free(mem);
}

static void parents_of_names_what_is_wrong(void **state) {
  void *mem;
  ik_skeleton *sk = body(&mem);
  int parents[3], scratch[9], bad = -1, why = 0, other = -1;
  const int root_late[2] = {3, 0}, twice[2] = {0, 0}, apart[2] = {3, 6}, ancestor_late[3] = {0, 5, 4},
            out_of_range[2] = {0, 9}, skipping[3] = {0, 2, 5};
  (void)state;
  assert_int_equal(ik_bone_tree_parents_of(sk, root_late, 2, parents, scratch, &bad, &why, &other),
                   IK_E_PARAMETER);
  assert_int_equal(why, 3);
  assert_int_equal(ik_bone_tree_parents_of(sk, twice, 2, parents, scratch, &bad, &why, &other),
                   IK_E_PARAMETER);
  assert_int_equal(why, 2);
  assert_int_equal(ik_bone_tree_parents_of(sk, apart, 2, parents, scratch, &bad, &why, &other),
                   IK_E_PARAMETER);
  assert_int_equal(why, 4);
  assert_int_equal(ik_bone_tree_parents_of(sk, ancestor_late, 3, parents, scratch, &bad, &why, &other),
                   IK_E_PARAMETER);
  assert_int_equal(why, 5);
  assert_int_equal(bad, 1);
  assert_int_equal(other, 2);
  assert_int_equal(ik_bone_tree_parents_of(sk, out_of_range, 2, parents, scratch, &bad, &why, &other),
                   IK_E_PARAMETER);
  assert_int_equal(why, 1);
  /* Bones left out between: each hangs from its nearest listed ancestor. */
  assert_int_equal(ik_bone_tree_parents_of(sk, skipping, 3, parents, scratch, &bad, &why, &other), IK_OK);
  assert_int_equal(parents[1], 0);
  assert_int_equal(parents[2], 1);
  free(mem);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cuts_a_y_into_three_branches),
      cmocka_unit_test(solves_a_point_tree_and_keeps_its_start),
      cmocka_unit_test(refuses_bad_trees),
      cmocka_unit_test(a_bone_tree_turns_its_bones_and_never_stretches_them),
      cmocka_unit_test(parents_of_names_what_is_wrong),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
