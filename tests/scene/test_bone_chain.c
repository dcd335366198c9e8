/* Bone chains (ik_bone_chain.h) and their batch (ik_bone_batch.h) from a C host, with no
 * Lua: a chain on a skeleton's bones reaching a node, bones that turn and never stretch,
 * warm start against a deterministic chain, targets and poles that would move with the
 * chain refused, closed skeletons refused with nothing turned, and a batch over threads
 * giving every chain bit for bit what its own run gives. */
#include <stdlib.h>
#include <string.h>

#include "ik_bone_batch.h"
#include "ik_bone_chain.h"
#include "test_util.h"

#define ARM_BONES 4

typedef struct rig {
  void *mem;
  ik_skeleton *sk;
} rig;

static ik_vec3 v3(double x, double y, double z) { return ik_vec3_make((ik_real)x, (ik_real)y, (ik_real)z); }

/* A root at `at` and a straight arm of ARM_BONES bones along +X, each bent 0.2 rad about Z
 * (so the arm is not straight), unit lengths, then a finger bone off the tip. */
static rig make_rig(ik_vec3 at) {
  ik_bone_desc d[ARM_BONES + 1];
  ik_error err;
  rig r;
  size_t size = ik_skeleton_size(ARM_BONES + 1);
  int i;
  for (i = 0; i <= ARM_BONES; i++) {
    ik_bone_desc_init(&d[i]);
    d[i].parent = i - 1;
    d[i].position = i == 0 ? at : v3(1, 0, 0);
    d[i].rotation = ik_quat_axis_angle(v3(0, 0, 1), (ik_real)0.2);
  }
  d[ARM_BONES].position = v3(0, 0.3, 0);
  r.mem = malloc(size);
  assert_non_null(r.mem);
  assert_int_equal(ik_skeleton_init(r.mem, size, d, ARM_BONES + 1, &r.sk, &err), IK_OK);
  return r;
}

static ik_vec3 world(const ik_skeleton *sk, int bone) {
  ik_vec3 p;
  assert_int_equal(ik_skeleton_get_world(sk, bone, &p, NULL), IK_OK);
  return p;
}

static const int arm[ARM_BONES] = {0, 1, 2, 3};

/* A bone chain over arm[] of r, FABRIK (4 bones: not two_bone). */
static ik_bone_chain *arm_chain(const rig *r, const int *closed) {
  ik_bone_chain *c = ik_bone_chain_init(malloc(ik_bone_chain_size(ARM_BONES, 1)), ARM_BONES, 1);
  assert_int_equal(ik_bone_chain_set_bones(c, r->sk, arm, closed), IK_OK);
  c->iterations = 30;
  return c;
}

static void solves_a_skeleton_to_a_node(void **state) {
  rig r = make_rig(v3(0, 0, 0));
  ik_bone_chain *c = arm_chain(&r, NULL);
  ik_node target;
  ik_result res;
  ik_real before[ARM_BONES - 1];
  int i;
  (void)state;
  for (i = 0; i < ARM_BONES - 1; i++) before[i] = ik_vec3_dist(world(r.sk, i), world(r.sk, i + 1));
  assert_int_equal(ik_node_init(&target, v3(1.5, 1.5, 0.5), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_bone_chain_set_target(c, ik_ref_node(&target, NULL)), IK_OK);
  assert_int_equal(ik_bone_chain_run(c, &res), IK_OK);
  assert_true(res.reached);
  /* The tip bone is where the target is, the root stayed, no bone stretched. */
  assert_true(ik_vec3_dist(world(r.sk, ARM_BONES - 1), v3(1.5, 1.5, 0.5)) <= c->tolerance);
  assert_near(res.distance, ik_vec3_dist(world(r.sk, ARM_BONES - 1), v3(1.5, 1.5, 0.5)), T_EPS);
  assert_vec3_near(world(r.sk, 0), v3(0, 0, 0), T_EPS);
  for (i = 0; i < ARM_BONES - 1; i++)
    assert_near(ik_vec3_dist(world(r.sk, i), world(r.sk, i + 1)), before[i], T_EPS * 10);
  free(c);
  free(r.mem);
}

static void point_chain_reaches_a_point(void **state) {
  ik_vec3 pose[3] = {{0, 0, 0}, {0, 1, 0}, {0, 2, 0.1f}};
  ik_bone_chain *c = ik_bone_chain_init(malloc(ik_bone_chain_size(3, 0)), 3, 0);
  ik_result res;
  (void)state;
  assert_int_equal(ik_bone_chain_set_points(c, pose), IK_OK);
  assert_int_equal(ik_bone_chain_set_target(c, ik_ref_vec3(v3(1, 1, 0))), IK_OK);
  assert_int_equal(ik_bone_chain_run(c, &res), IK_OK);
  assert_true(res.reached);
  assert_true(ik_vec3_dist(c->positions[2], v3(1, 1, 0)) <= c->tolerance);
  /* Bad poses are refused and change nothing. */
  pose[1] = pose[0];
  assert_int_equal(ik_bone_chain_set_points(c, pose), IK_E_BONE_LENGTH);
  pose[1] = v3(0, (double)NAN, 0);
  assert_int_equal(ik_bone_chain_set_points(c, pose), IK_E_NOT_FINITE);
  pose[1] = v3(0, (double)IK_REAL_MAX_REACH, 0);
  assert_int_equal(ik_bone_chain_set_points(c, pose), IK_E_RANGE);
  assert_true(ik_vec3_dist(c->positions[2], v3(1, 1, 0)) <= c->tolerance);
  free(c);
}

/* Warm start: solved once, a chain already there needs no sweep the second time; a
 * deterministic one starts again from the animated pose and sweeps as often. */
static void warm_start_keeps_the_last_solution(void **state) {
  int deterministic;
  (void)state;
  for (deterministic = 0; deterministic <= 1; deterministic++) {
    rig r = make_rig(v3(0, 0, 0));
    ik_bone_chain *c = arm_chain(&r, NULL);
    ik_result first, second;
    int i;
    c->deterministic = deterministic;
    c->tolerance = (ik_real)1e-6;
    assert_int_equal(ik_bone_chain_set_target(c, ik_ref_vec3(v3(0.5, 2.5, 1))), IK_OK);
    assert_int_equal(ik_bone_chain_run(c, &first), IK_OK);
    assert_true(first.iterations >= 1);
    /* The animation puts the arm back to its rest pose. */
    for (i = 0; i < ARM_BONES; i++)
      assert_int_equal(ik_skeleton_set_local_rotation(r.sk, i, ik_quat_axis_angle(v3(0, 0, 1), (ik_real)0.2)),
                       IK_OK);
    assert_int_equal(ik_bone_chain_run(c, &second), IK_OK);
    assert_true(second.reached);
    if (deterministic)
      assert_int_equal(second.iterations, first.iterations);
    else
      assert_int_equal(second.iterations, 0);
    free(c);
    free(r.mem);
  }
}

static void refuses_what_moves_with_the_chain(void **state) {
  rig r = make_rig(v3(0, 0, 0));
  ik_bone_chain *c = arm_chain(&r, NULL);
  ik_ref own = ik_ref_bone(r.sk, 2, NULL), finger = ik_ref_bone(r.sk, ARM_BONES, NULL);
  ik_node on_hand;
  ik_ref hung;
  int is_bone = 0;
  (void)state;
  assert_int_equal(ik_bone_chain_moves_with(c, &own, &is_bone), 3);
  assert_true(is_bone);
  /* The finger hangs from the tip bone (4): named as that bone, not as the bone itself. */
  assert_int_equal(ik_bone_chain_moves_with(c, &finger, &is_bone), ARM_BONES);
  assert_false(is_bone);
  assert_int_equal(ik_bone_chain_set_target(c, own), IK_E_PARAMETER);
  assert_int_equal(ik_bone_chain_set_target(c, finger), IK_E_PARAMETER);
  assert_int_equal(ik_node_init(&on_hand, v3(0, 1, 0), ik_quat_identity()), IK_OK);
  assert_int_equal(ik_node_set_parent_bone(&on_hand, r.sk, 1), IK_OK);
  hung = ik_ref_node(&on_hand, NULL);
  assert_int_equal(ik_bone_chain_set_pole(c, &hung, NULL), IK_E_PARAMETER);
  assert_int_equal(c->target_ref.kind, IK_REF_NONE); /* nothing was kept */
  assert_int_equal(c->pole_is_transform, 0);
  /* Bones out of range or at one place. */
  {
    const int bad[ARM_BONES] = {0, 1, 2, 9};
    assert_int_equal(ik_bone_chain_set_bones(c, r.sk, bad, NULL), IK_E_PARAMETER);
  }
  free(c);
  free(r.mem);
}

static void a_closed_skeleton_is_refused_and_not_turned(void **state) {
  rig r = make_rig(v3(0, 0, 0));
  int closed = 0;
  ik_bone_chain *c = arm_chain(&r, &closed);
  ik_result res;
  ik_vec3 tip;
  (void)state;
  assert_int_equal(ik_bone_chain_set_target(c, ik_ref_vec3(v3(1, 2, 0))), IK_OK);
  tip = world(r.sk, ARM_BONES - 1);
  closed = 1;
  assert_null(ik_bone_chain_skeleton(c));
  assert_int_equal(ik_bone_chain_run(c, &res), IK_E_PARAMETER);
  assert_vec3_near(world(r.sk, ARM_BONES - 1), tip, 0);
  closed = 0;
  assert_ptr_equal(ik_bone_chain_skeleton(c), r.sk);
  assert_int_equal(ik_bone_chain_run(c, &res), IK_OK);
  c->closed = 1;
  assert_int_equal(ik_bone_chain_run(c, &res), IK_E_NULL);
  free(c);
  free(r.mem);
}

/* A crowd: CROWD rigs each with a bone chain (FABRIK, two_bone on the first three bones
 * every third rig, CCD every fifth) to a node of its own, and a point chain. Solved by a
 * batch over threads and, on a copy of everything, one chain at a time: the same bits. */
#define CROWD 40

typedef struct crowd {
  rig rigs[CROWD];
  ik_node targets[CROWD];
  ik_bone_chain *chains[2 * CROWD];
} crowd;

static void make_crowd(crowd *w) {
  int i;
  for (i = 0; i < CROWD; i++) {
    ik_bone_chain *c;
    const int three = i % 3 == 0;
    ik_vec3 pose[3];
    w->rigs[i] = make_rig(v3(3 * i, 0, 0));
    assert_int_equal(ik_node_init(&w->targets[i], v3(3 * i + 1.2, 1.4 + 0.01 * i, 0.3), ik_quat_identity()),
                     IK_OK);
    c = ik_bone_chain_init(malloc(ik_bone_chain_size(three ? 3 : ARM_BONES, 1)), three ? 3 : ARM_BONES, 1);
    assert_int_equal(ik_bone_chain_set_bones(c, w->rigs[i].sk, arm, NULL), IK_OK);
    if (i % 5 == 0 && !three) c->solver = IK_BONE_CHAIN_CCD;
    assert_int_equal(ik_bone_chain_set_target(c, ik_ref_node(&w->targets[i], NULL)), IK_OK);
    w->chains[i] = c;
    pose[0] = v3(i, -5, 0);
    pose[1] = v3(i, -4, 0.2);
    pose[2] = v3(i, -3, 0);
    c = ik_bone_chain_init(malloc(ik_bone_chain_size(3, 0)), 3, 0);
    assert_int_equal(ik_bone_chain_set_points(c, pose), IK_OK);
    assert_int_equal(ik_bone_chain_set_target(c, ik_ref_vec3(v3(i + 1, -4, 0))), IK_OK);
    w->chains[CROWD + i] = c;
  }
}

static void free_crowd(crowd *w) {
  int i;
  for (i = 0; i < CROWD; i++) free(w->rigs[i].mem);
  for (i = 0; i < 2 * CROWD; i++) free(w->chains[i]);
}

static void batch_gives_each_chain_its_own_bits(void **state) {
  static crowd alone, together;
  int threads;
  (void)state;
  for (threads = 1; threads <= 3; threads += 2) {
    ik_bone_batch b;
    void *buffer = malloc(ik_bone_batch_buffer_size(2 * CROWD));
    void *scratch = malloc(ik_bone_batch_scratch_size(threads));
    ik_result res;
    ik_error err;
    int i, k, reached = 0, batch_reached;
    make_crowd(&alone);
    make_crowd(&together);
    ik_bone_batch_init(&b);
    ik_bone_batch_place(&b, buffer, 2 * CROWD);
    assert_int_equal(ik_bone_batch_start(&b, threads, scratch), IK_OK);
    for (i = 0; i < 2 * CROWD; i++)
      assert_int_equal(ik_bone_batch_add(&b, together.chains[i], NULL, NULL, NULL), i);
    assert_int_equal(ik_bone_batch_add(&b, together.chains[0], NULL, NULL, NULL), -1); /* full */
    for (k = 0; k < 3; k++) { /* three frames: warm starts too */
      reached = 0;
      for (i = 0; i < 2 * CROWD; i++) {
        assert_int_equal(ik_bone_chain_run(alone.chains[i], &res), IK_OK);
        reached += res.reached;
      }
      assert_int_equal(ik_bone_batch_solve(&b, 0, &batch_reached, &err), IK_OK);
      assert_int_equal(batch_reached, reached);
      for (i = 0; i < 2 * CROWD; i++) {
        const ik_bone_chain *a = alone.chains[i], *t = together.chains[i];
        assert_memory_equal(&a->now.result, &t->now.result, sizeof a->now.result);
        assert_memory_equal(a->positions, t->positions, (size_t)a->count * sizeof *a->positions);
      }
      for (i = 0; i < CROWD; i++)
        assert_memory_equal(alone.rigs[i].mem, together.rigs[i].mem, ik_skeleton_size(ARM_BONES + 1));
    }
    assert_true(reached > CROWD);
    /* An entry the batch cannot read is named. */
    together.chains[5]->target_ref = ik_ref_bone(together.rigs[5].sk, 1, NULL);
    assert_int_equal(ik_bone_batch_solve(&b, 0, &batch_reached, &err), IK_E_PARAMETER);
    assert_int_equal(err.index, 5);
    ik_bone_batch_free(&b);
    free(buffer);
    free(scratch);
    free_crowd(&alone);
    free_crowd(&together);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(solves_a_skeleton_to_a_node),
      cmocka_unit_test(point_chain_reaches_a_point),
      cmocka_unit_test(warm_start_keeps_the_last_solution),
      cmocka_unit_test(refuses_what_moves_with_the_chain),
      cmocka_unit_test(a_closed_skeleton_is_refused_and_not_turned),
      cmocka_unit_test(batch_gives_each_chain_its_own_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
