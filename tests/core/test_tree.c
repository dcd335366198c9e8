/* FABRIK on a tree of chains: reach, lengths, weights, limits, poles, no allocation,
 * determinism, and the one-branch tree as the chain solve. */
#include <stdlib.h>
#include <string.h>

#include "ik_fabrik_stages.h"
#include "test_util.h"

/* Every allocation the process makes while `counting` is set (the test links with
 * --wrap for malloc, calloc and realloc). */
static volatile int counting, allocations; /* volatile: a compiler may assume malloc reads no global */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t s);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) {
  allocations += counting;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s) {
  allocations += counting;
  return __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n) {
  allocations += counting;
  return __real_realloc(p, n);
}

#define MAX_BRANCHES 12
#define MAX_JOINTS 8

/* A tree and its storage: branch b's joints in p[b], lengths in len[b]. */
typedef struct tree {
  ik_tree_branch br[MAX_BRANCHES];
  ik_vec3 p[MAX_BRANCHES][MAX_JOINTS];
  ik_vec3 rest[MAX_BRANCHES][MAX_JOINTS];
  ik_real len[MAX_BRANCHES][MAX_JOINTS];
  ik_constraint cons[MAX_BRANCHES][MAX_JOINTS];
  int count;
  ik_tree_job job;
} tree;

/* Adds a branch of `joints` joints from its parent's tip (or `from`), straight along
 * dir, bones `bone` long. */
static int add_branch(tree *t, int parent, int joints, ik_vec3 from, ik_vec3 dir, ik_real bone) {
  const int b = t->count++;
  ik_chain c;
  int i;
  if (parent >= 0) from = t->p[parent][t->br[parent].chain.count - 1];
  for (i = 0; i < joints; i++) {
    t->p[b][i] = ik_vec3_madd(from, ik_vec3_normalize(dir), bone * (ik_real)i);
    t->rest[b][i] = t->p[b][i];
  }
  for (i = 0; i + 1 < joints; i++) t->len[b][i] = bone;
  ik_chain_init(&c, t->p[b], joints, t->len[b]);
  ik_tree_branch_init(&t->br[b], &c, parent, ik_vec3_zero());
  ik_tree_job_init(&t->job, t->br, t->count);
  return b;
}

/* A Y: a trunk of 3 joints up +Y, two arms of 3 joints out to either side, bent up. */
static void make_y(tree *t) {
  memset(t, 0, sizeof *t);
  add_branch(t, -1, 3, ik_vec3_zero(), ik_vec3_make(0, 1, 0), 1);
  add_branch(t, 0, 3, ik_vec3_zero(), ik_vec3_make(1, 1, 0.2), (ik_real)0.8);
  add_branch(t, 0, 3, ik_vec3_zero(), ik_vec3_make(-1, 1, -0.2), (ik_real)0.8);
}

/* *dst = *src, its chains on dst's own storage. */
static void tree_copy(tree *dst, const tree *src) {
  int b;
  *dst = *src;
  for (b = 0; b < dst->count; b++) {
    ik_chain *c = &dst->br[b].chain;
    c->positions = dst->p[b];
    c->lengths = dst->len[b];
    if (c->constraints) c->constraints = dst->cons[b];
    if (c->rest_positions) c->rest_positions = dst->rest[b];
  }
  dst->job.branches = dst->br;
}

static ik_vec3 tip(const tree *t, int b) { return t->p[b][t->br[b].chain.count - 1]; }

/* Bends every branch of t randomly (lengths kept, each from its parent's tip). */
static void random_pose(tree *t, t_rng *r) {
  int b, i;
  for (b = 0; b < t->count; b++) {
    ik_chain *c = &t->br[b].chain;
    if (t->br[b].parent >= 0) t->p[b][0] = tip(t, t->br[b].parent);
    for (i = 0; i + 1 < c->count; i++)
      t->p[b][i + 1] = ik_vec3_madd(t->p[b][i], t_unit_vector(r), t->len[b][i]);
  }
}

static double max_length_error(const tree *t) {
  double worst = 0;
  int b;
  for (b = 0; b < t->count; b++) {
    double e = t_max_length_error(t->p[b], t->len[b], t->br[b].chain.count);
    if (e > worst) worst = e;
  }
  return worst;
}

/* Each child's first joint on its parent's tip, exactly. */
static void assert_joined(const tree *t) {
  int b;
  for (b = 0; b < t->count; b++)
    if (t->br[b].parent >= 0)
      assert_memory_equal(&t->p[b][0], &t->p[t->br[b].parent][t->br[t->br[b].parent].chain.count - 1],
                          sizeof(ik_vec3));
}

static void every_effector_reaches_targets_of_a_reachable_pose(void **state) {
  t_rng r = t_rng_make(21);
  int k, cases = t_cases(200), reached = 0;
  (void)state;
  for (k = 0; k < cases; k++) {
    tree t, pose;
    make_y(&t);
    pose = t;
    random_pose(&pose, &r);
    t.br[1].target = tip(&pose, 1);
    t.br[2].target = tip(&pose, 2);
    t.job.max_iterations = 200;
    assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
    reached += t.job.reached;
    assert_near(max_length_error(&t), 0, T_LEN_REL * 10);
    assert_memory_equal(&t.p[0][0], &pose.p[0][0], sizeof(ik_vec3));
    assert_joined(&t);
    assert_int_equal(t.job.reached, t.br[1].result.reached && t.br[2].result.reached);
    assert_near(
        t.job.distance,
        t.br[1].result.distance > t.br[2].result.distance ? t.br[1].result.distance : t.br[2].result.distance,
        0);
  }
  assert_int_equal(reached, cases);
}

static void a_hand_reaches_five_sampled_fingertips(void **state) {
  t_rng r = t_rng_make(5);
  int k, f, cases = t_cases(100), reached = 0;
  (void)state;
  for (k = 0; k < cases; k++) {
    tree t, pose;
    memset(&t, 0, sizeof t);
    add_branch(&t, -1, 3, ik_vec3_zero(), ik_vec3_make(0, 1, 0), 1);
    for (f = 0; f < 5; f++)
      add_branch(&t, 0, 4, ik_vec3_zero(), ik_vec3_make((ik_real)(f - 2) * (ik_real)0.3, 1, 0), (ik_real)0.3);
    pose = t;
    random_pose(&pose, &r);
    for (f = 1; f <= 5; f++) t.br[f].target = tip(&pose, f);
    t.job.max_iterations = 300;
    assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
    reached += t.job.reached;
    assert_near(max_length_error(&t), 0, T_LEN_REL * 10);
    assert_joined(&t);
  }
  /* The centroid is a compromise: with five fingers folded tight round a palm that
   * must turn, it can settle a little off (1 case in 100 at 300 sweeps). */
  assert_true(reached >= cases * 97 / 100);
}

/* Two targets far apart, beyond what the Y can reach at once. */
static void unreachable_effectors_are_pulled_by_weight(void **state) {
  tree heavy_left, heavy_right;
  (void)state;
  make_y(&heavy_left);
  heavy_left.br[1].target = ik_vec3_make(6, 2, 0);
  heavy_left.br[2].target = ik_vec3_make(-6, 2, 0);
  heavy_left.br[1].weight = 1;
  heavy_left.br[2].weight = (ik_real)0.2;
  heavy_left.job.max_iterations = 50;
  tree_copy(&heavy_right, &heavy_left);
  heavy_right.br[1].weight = (ik_real)0.2;
  heavy_right.br[2].weight = 1;
  assert_int_equal(ik_tree_job_run(&heavy_left.job), IK_OK);
  assert_int_equal(ik_tree_job_run(&heavy_right.job), IK_OK);
  assert_false(heavy_left.job.reached);
  assert_true(heavy_left.br[1].result.distance < heavy_left.br[2].result.distance);
  assert_true(heavy_right.br[2].result.distance < heavy_right.br[1].result.distance);
  /* Mirror images: the same compromise, the other way round. */
  assert_near(heavy_left.br[1].result.distance, heavy_right.br[2].result.distance, 1e-6);
  assert_near(max_length_error(&heavy_left), 0, T_LEN_REL * 10);
  assert_near(max_length_error(&heavy_right), 0, T_LEN_REL * 10);
  assert_joined(&heavy_left);
}

static void weight_zero_ignores_the_effector(void **state) {
  tree a, b;
  (void)state;
  make_y(&a);
  a.br[1].target = ik_vec3_make(1, 2.5, 0);
  a.br[2].weight = 0;
  a.br[2].target = ik_vec3_make(-9, 0, 0);
  tree_copy(&b, &a);
  b.br[2].target = ik_vec3_make(0, -9, 3);
  assert_int_equal(ik_tree_job_run(&a.job), IK_OK);
  assert_int_equal(ik_tree_job_run(&b.job), IK_OK);
  assert_true(a.br[1].result.reached);
  assert_true(a.job.reached); /* the ignored effector does not count */
  assert_false(a.br[2].result.reached);
  assert_memory_equal(a.p, b.p, sizeof a.p);
  assert_near(max_length_error(&a), 0, T_LEN_REL * 10);
}

static void coincident_targets_and_one_bone_branches(void **state) {
  tree t;
  (void)state;
  memset(&t, 0, sizeof t);
  add_branch(&t, -1, 2, ik_vec3_zero(), ik_vec3_make(0, 1, 0), 1);
  add_branch(&t, 0, 2, ik_vec3_zero(), ik_vec3_make(1, 1, 0), 1);
  add_branch(&t, 0, 2, ik_vec3_zero(), ik_vec3_make(-1, 1, 0), 1);
  t.br[1].target = t.br[2].target = ik_vec3_make(0.5, 1.6, 0.3);
  t.job.max_iterations = 100;
  assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
  assert_true(t.job.reached);
  assert_near(max_length_error(&t), 0, T_LEN_REL * 10);
  assert_joined(&t);
}

static void branch_iterations_cap_what_a_branch_takes_part_in(void **state) {
  tree t;
  (void)state;
  make_y(&t);
  t.br[1].target = ik_vec3_make(1.5, 1.5, 0.5);
  t.br[2].target = ik_vec3_make(-0.5, 2.5, 0.5);
  t.br[2].max_iterations = 2;
  t.job.max_iterations = 30;
  t.job.tolerance = 0;
  assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
  assert_int_equal(t.br[2].result.iterations, 2);
  assert_int_equal(t.br[1].result.iterations, t.job.iterations);
  assert_true(t.job.iterations > 2);
  assert_true((double)t.br[1].result.distance < 1e-3);
}

/* Cones on every bone of a Y's arms, and hinges on the trunk. */
static void constraints_hold_on_every_branch(void **state) {
  t_rng r = t_rng_make(8);
  int k, b, i, cases = t_cases(100);
  (void)state;
  for (k = 0; k < cases; k++) {
    tree t;
    make_y(&t);
    for (b = 0; b < 3; b++) {
      for (i = 0; i < 2; i++) {
        ik_constraint *c = &t.cons[b][i];
        if (b == 0) {
          c->type = IK_CONSTRAINT_HINGE;
          c->axis = ik_vec3_make(0, 0, 1);
          c->min = -1;
          c->max = 1;
        } else {
          c->type = IK_CONSTRAINT_CONE;
          c->angle = (ik_real)t_uniform(&r, 0.2, 1.0);
        }
      }
      t.br[b].chain.constraints = t.cons[b];
      t.br[b].chain.rest_positions = t.rest[b];
    }
    t.br[0].chain.base_direction = ik_vec3_make(0, 1, 0);
    t.br[1].target = ik_vec3_add(ik_vec3_make(1, 2, 0), ik_vec3_scale(t_unit_vector(&r), 1.5));
    t.br[2].target = ik_vec3_add(ik_vec3_make(-1, 2, 0), ik_vec3_scale(t_unit_vector(&r), 1.5));
    t.job.max_iterations = 30;
    assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
    for (b = 0; b < 3; b++)
      assert_true((double)ik_chain_constraint_violation(&t.br[b].chain, NULL) <= T_CONSTRAINT_RAD);
    assert_near(max_length_error(&t), 0, T_LEN_REL * 10);
    assert_joined(&t);
  }
}

/* A child's first bone is limited relative to its parent's last bone. */
static void a_child_cone_is_measured_from_the_parent_bone(void **state) {
  tree t;
  ik_vec3 trunk_dir, arm_dir;
  (void)state;
  make_y(&t);
  t.cons[1][0].type = IK_CONSTRAINT_CONE;
  t.cons[1][0].angle = (ik_real)0.3;
  t.br[1].chain.constraints = t.cons[1];
  t.br[1].target = ik_vec3_make(3, 0, 0); /* straight out sideways: 90 degrees off the trunk */
  t.br[2].weight = 0;
  assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
  trunk_dir = ik_vec3_sub(t.p[0][2], t.p[0][1]);
  arm_dir = ik_vec3_sub(t.p[1][1], t.p[1][0]);
  assert_true((double)ik_vec3_angle(trunk_dir, arm_dir) <= 0.3 + T_CONSTRAINT_RAD);
}

/* Rigid first bones keep their rest angle to each other (a chest's two shoulders) and
 * the tree still reaches targets the rigid body can. */
static void rigid_first_bones_stay_rigid(void **state) {
  tree t;
  int b, k, reached = 0, cases = t_cases(50);
  t_rng r = t_rng_make(11);
  (void)state;
  for (k = 0; k < cases; k++) {
    ik_vec3 a0, b0, a1, b1;
    make_y(&t);
    t.br[0].chain.rest_positions = t.rest[0];
    for (b = 1; b <= 2; b++) {
      t.br[b].rigid_base = 1;
      t.br[b].chain.rest_positions = t.rest[b];
    }
    t.br[1].target = ik_vec3_add(ik_vec3_make(1.2, 2.4, 0), ik_vec3_scale(t_unit_vector(&r), 0.5));
    t.br[2].target = ik_vec3_add(ik_vec3_make(-1.2, 2.4, 0), ik_vec3_scale(t_unit_vector(&r), 0.5));
    t.job.max_iterations = 100;
    a0 = ik_vec3_sub(t.rest[1][1], t.rest[1][0]);
    b0 = ik_vec3_sub(t.rest[2][1], t.rest[2][0]);
    assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
    reached += t.job.reached;
    a1 = ik_vec3_sub(t.p[1][1], t.p[1][0]);
    b1 = ik_vec3_sub(t.p[2][1], t.p[2][0]);
    assert_near(ik_vec3_angle(a1, b1), ik_vec3_angle(a0, b0), 1e-6);
    assert_near(max_length_error(&t), 0, T_LEN_REL * 10);
    assert_joined(&t);
  }
  assert_true(reached > 0);
  /* Without rest positions a rigid branch is refused by name. */
  make_y(&t);
  t.br[2].rigid_base = 1;
  {
    ik_error err;
    assert_int_equal(ik_tree_job_validate(&t.job, &err), IK_E_NULL);
    assert_string_equal(err.field, "rest_positions");
    assert_int_equal(err.index, 2);
  }
}

static void poles_bend_their_branch(void **state) {
  tree t;
  ik_vec3 line, side, elbow;
  (void)state;
  make_y(&t);
  t.br[1].target = ik_vec3_make(1.2, 2.5, 0);
  t.br[2].target = ik_vec3_make(-1.0, 2.4, 0.3);
  t.br[1].chain.has_pole = 1;
  t.br[1].chain.pole = ik_vec3_make(1, 2, 5);
  t.br[1].chain.pole_weight = 1;
  t.job.max_iterations = 50;
  assert_int_equal(ik_tree_job_run(&t.job), IK_OK);
  assert_true(t.job.reached);
  line = ik_vec3_normalize(ik_vec3_sub(tip(&t, 1), t.p[1][0]));
  side = ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_sub(t.br[1].chain.pole, t.p[1][0]), line));
  elbow = ik_vec3_normalize(ik_vec3_project_on_plane(ik_vec3_sub(t.p[1][1], t.p[1][0]), line));
  assert_vec3_near(elbow, side, 1e-4);
  assert_near(max_length_error(&t), 0, T_LEN_REL * 10);
  assert_joined(&t);
}

static void runs_allocate_nothing_and_repeat_bit_for_bit(void **state) {
  tree a, b;
  (void)state;
  make_y(&a);
  a.br[1].target = ik_vec3_make(1.5, 1.5, 0.5);
  a.br[2].target = ik_vec3_make(-0.5, 2.5, 0.5);
  a.cons[1][1].type = IK_CONSTRAINT_CONE;
  a.cons[1][1].angle = (ik_real)0.5;
  a.br[1].chain.constraints = a.cons[1];
  tree_copy(&b, &a);
  counting = 1;
  allocations = 0;
  assert_int_equal(ik_tree_job_validate(&a.job, NULL), IK_OK);
  assert_int_equal(ik_tree_job_run(&a.job), IK_OK);
  counting = 0;
  assert_int_equal(allocations, 0);
  assert_int_equal(ik_tree_job_run(&b.job), IK_OK);
  assert_memory_equal(a.p, b.p, sizeof a.p);
  assert_int_equal(a.job.iterations, b.job.iterations);
  assert_memory_equal(&a.job.distance, &b.job.distance, sizeof a.job.distance);
  /* The wrap sees allocations at all (a test that could not fail is none). */
  counting = 1;
  {
    void *volatile block = malloc(16);
    free(block);
  }
  counting = 0;
  assert_int_equal(allocations, 1);
}

/* A tree of one branch is the plain chain solve, bit for bit, with and without
 * constraints and a pole, reachable or not. */
static void one_branch_is_the_chain_solve(void **state) {
  t_rng r = t_rng_make(3);
  int k, cases = t_cases(300);
  (void)state;
  for (k = 0; k < cases; k++) {
    ik_vec3 p_tree[12], p_chain[12];
    ik_real l[12], l2[12];
    ik_constraint cons[12];
    const int n = t_int(&r, 2, 12);
    ik_chain c;
    ik_fabrik_job fj;
    ik_tree_branch br;
    ik_tree_job tj;
    ik_vec3 target = ik_vec3_scale(t_unit_vector(&r), (ik_real)t_uniform(&r, 0, 1.3 * n));
    t_random_chain(&r, p_tree, l, n, 0.3, 1.5, 1.0);
    memcpy(p_chain, p_tree, sizeof p_tree);
    memcpy(l2, l, sizeof l);
    ik_chain_init(&c, p_tree, n, l);
    if (k % 3 == 1) {
      t_random_constraints(&r, cons, n - 1);
      c.constraints = cons;
      c.rest_positions = p_chain; /* the start pose, never written: p_chain is a copy */
    }
    if (k % 2 == 1) {
      c.has_pole = 1;
      c.pole = ik_vec3_scale(t_unit_vector(&r), 5);
      c.pole_weight = (ik_real)t_uniform(&r, 0.2, 1);
    }
    ik_tree_branch_init(&br, &c, -1, target);
    ik_tree_job_init(&tj, &br, 1);
    tj.max_iterations = t_int(&r, 1, 20);
    ik_vec3 rest_copy[12];
    memcpy(rest_copy, p_chain, sizeof rest_copy);
    c.rest_positions = k % 3 == 1 ? rest_copy : NULL;
    br.chain.rest_positions = c.rest_positions;
    c.positions = p_chain;
    c.lengths = l2;
    ik_fabrik_job_init(&fj, &c, target);
    fj.mode = IK_FABRIK_PLAIN;
    fj.max_iterations = tj.max_iterations;
    assert_int_equal(ik_tree_job_run(&tj), IK_OK);
    assert_int_equal(ik_fabrik_run(&fj), IK_OK);
    assert_memory_equal(p_tree, p_chain, sizeof(ik_vec3) * (size_t)n);
    assert_int_equal(br.result.reached, fj.result.reached);
    assert_int_equal(br.result.iterations, fj.result.iterations);
    assert_memory_equal(&br.result.distance, &fj.result.distance, sizeof(ik_real));
    assert_int_equal(tj.reached, fj.result.reached);
  }
}

static void refuses_bad_input_and_changes_nothing(void **state) {
  tree t, before;
  ik_error err;
  (void)state;
  make_y(&t);
  before = t;
#define REFUSED(setup, st, fld, idx)                          \
  do {                                                        \
    make_y(&t);                                               \
    setup;                                                    \
    memcpy(before.p, t.p, sizeof t.p);                        \
    memset(&err, 0, sizeof err);                              \
    assert_int_equal(ik_tree_job_validate(&t.job, &err), st); \
    assert_int_equal(err.status, st);                         \
    assert_string_equal(err.field, fld);                      \
    assert_int_equal(err.index, idx);                         \
    assert_int_equal(ik_tree_job_run(&t.job), st);            \
    assert_memory_equal(t.p, before.p, sizeof t.p);           \
  } while (0)
  REFUSED(t.job.branches = NULL, IK_E_NULL, "branches", -1);
  REFUSED(t.job.count = 0, IK_E_COUNT, "count", -1);
  REFUSED(t.job.tolerance = -1, IK_E_TOLERANCE, "tolerance", -1);
  REFUSED(t.job.max_iterations = 0, IK_E_ITERATIONS, "max_iterations", -1);
  REFUSED(t.br[2].parent = 2, IK_E_PARAMETER, "parent", 2);
  REFUSED(t.br[1].parent = -2, IK_E_PARAMETER, "parent", 1);
  REFUSED(t.br[1].weight = (ik_real)1.5, IK_E_WEIGHT, "weight", 1);
  REFUSED(t.br[1].weight = (ik_real)NAN, IK_E_NOT_FINITE, "weight", 1);
  REFUSED(t.br[2].target.x = (ik_real)INFINITY, IK_E_NOT_FINITE, "target", 2);
  REFUSED(t.br[2].max_iterations = -1, IK_E_ITERATIONS, "branch_iterations", 2);
  /* A zero-length bone is refused by name, given or measured. */
  REFUSED(t.len[1][1] = 0, IK_E_BONE_LENGTH, "lengths", 1);
  REFUSED((t.br[2].chain.derive_lengths = 1, t.p[2][2] = t.p[2][1]), IK_E_BONE_LENGTH, "positions", 2);
  REFUSED(t.br[1].chain.count = 1, IK_E_COUNT, "count", 1);
  /* Each branch within reach on its own, the tree not. */
  REFUSED((t.len[1][0] = t.len[2][0] = IK_REAL_MAX_REACH * (ik_real)0.6), IK_E_RANGE, "lengths", -1);
#undef REFUSED
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_effector_reaches_targets_of_a_reachable_pose),
      cmocka_unit_test(a_hand_reaches_five_sampled_fingertips),
      cmocka_unit_test(unreachable_effectors_are_pulled_by_weight),
      cmocka_unit_test(weight_zero_ignores_the_effector),
      cmocka_unit_test(coincident_targets_and_one_bone_branches),
      cmocka_unit_test(branch_iterations_cap_what_a_branch_takes_part_in),
      cmocka_unit_test(constraints_hold_on_every_branch),
      cmocka_unit_test(a_child_cone_is_measured_from_the_parent_bone),
      cmocka_unit_test(rigid_first_bones_stay_rigid),
      cmocka_unit_test(poles_bend_their_branch),
      cmocka_unit_test(runs_allocate_nothing_and_repeat_bit_for_bit),
      cmocka_unit_test(one_branch_is_the_chain_solve),
      cmocka_unit_test(refuses_bad_input_and_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
