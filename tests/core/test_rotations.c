/* Solved positions to rotations: bones point where the solver put them, twist survives,
 * weight blends, the tip can match a target, twist limits hold, lengths never change,
 * and the job protocol (validation, refused runs change nothing). */
#include <string.h>

#include "ik_internal.h" /* ik__rotations_lanes_variant */
#include "test_util.h"

#define MAXJ 16

/* Rotations compose down the chain, so a float build gathers a little more rounding
 * than one quaternion product. */
#ifdef IK_REAL_FLOAT
#define T_ROT 2e-4
#else
#define T_ROT 1e-9
#endif

typedef struct fixture {
  int count;
  ik_vec3 before_ws[MAXJ];
  ik_vec3 solved_ws[MAXJ];
  ik_quat rot_old_ws[MAXJ]; /* the input, kept for comparison */
  ik_quat rot_ws[MAXJ];     /* in/out */
  ik_real limits[MAXJ];
  ik_rotations_job job;
} fixture;

/* A random chain, random world rotations and a random solved chain with the same root
 * (solved bone lengths differ: only directions count). */
static void random_fixture(fixture *f, t_rng *r, int count) {
  ik_real lengths[MAXJ];
  int i;
  memset(f, 0, sizeof *f); /* the unused rotations too: compared byte for byte */
  f->count = count;
  t_random_chain(r, f->before_ws, lengths, count, 0.2, 2.0, 2.5);
  t_random_chain(r, f->solved_ws, lengths, count, 0.2, 2.0, 2.5);
  for (i = 0; i < count; i++) {
    f->rot_old_ws[i] = t_unit_quat(r);
    f->rot_ws[i] = f->rot_old_ws[i];
    f->limits[i] = 10;
  }
  ik_rotations_job_init(&f->job, count, f->before_ws, f->solved_ws, f->rot_ws);
}

/* A valid 4-joint job the validation tests break one field at a time. */
static void small_fixture(fixture *f) {
  t_rng r = t_rng_make(11);
  random_fixture(f, &r, 4);
}

static ik_vec3 bone_ws(const ik_vec3 *p, int i) { return ik_vec3_sub(p[i + 1], p[i]); }

/* Bone i in joint i's own frame: fixed however the joint turns. */
static ik_vec3 bone_ls(const fixture *f, int i) {
  return ik_quat_rotate(ik_quat_conjugate(f->rot_old_ws[i]), bone_ws(f->before_ws, i));
}

/* How joint i turned relative to its parent, in its own frame: inv(local_old) * local_new
 * with local = inv(parent) * rot; joint 0's parent is the base (identity by default). */
static ik_quat local_delta(const fixture *f, int i) {
  const ik_quat parent_old = i == 0 ? f->job.base_rotation_before : f->rot_old_ws[i - 1];
  const ik_quat parent_new = i == 0 ? f->job.base_rotation : f->rot_ws[i - 1];
  const ik_quat local_old = ik_quat_mul(ik_quat_conjugate(parent_old), f->rot_old_ws[i]);
  const ik_quat local_new = ik_quat_mul(ik_quat_conjugate(parent_new), f->rot_ws[i]);
  return ik_quat_mul(ik_quat_conjugate(local_old), local_new);
}

/* Twist of joint i about its bone (the tip: its parent's bone), relative to its parent
 * and to the input pose. */
static ik_real local_twist(const fixture *f, int i) {
  const int bone = i < f->count - 1 ? i : i - 1;
  const ik_vec3 axis_ls =
      ik_vec3_normalize(ik_quat_rotate(ik_quat_conjugate(f->rot_old_ws[i]), bone_ws(f->before_ws, bone)));
  return ik_quat_twist_angle(local_delta(f, i), axis_ls);
}

static void assert_unit_rotations(const fixture *f) {
  int i;
  for (i = 0; i < f->count; i++) assert_near(ik_quat_dot(f->rot_ws[i], f->rot_ws[i]), 1, T_EPS);
}

/* ---- defaults ---- */

static void init_sets_the_documented_defaults(void **state) {
  fixture f;
  (void)state;
  small_fixture(&f);
  assert_int_equal(f.job.count, 4);
  assert_ptr_equal(f.job.positions_before, f.before_ws);
  assert_ptr_equal(f.job.positions_solved, f.solved_ws);
  assert_ptr_equal(f.job.rotations, f.rot_ws);
  assert_true(f.job.weight == 1);
  assert_int_equal(f.job.match_tip_rotation, 0);
  assert_quat_near(f.job.tip_rotation, ik_quat_identity(), 0);
  assert_null(f.job.twist_limits);
  assert_quat_near(f.job.base_rotation_before, ik_quat_identity(), 0);
  assert_quat_near(f.job.base_rotation, ik_quat_identity(), 0);
  assert_null(f.job.twist_memory);
}

/* ---- the main property ---- */

static void new_rotations_point_old_bones_at_solved_directions(void **state) {
  t_rng r = t_rng_make(101);
  int k, i;
  (void)state;
  for (k = 0; k < 2000; k++) {
    fixture f;
    random_fixture(&f, &r, t_int(&r, 2, 10));
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_unit_rotations(&f);
    for (i = 0; i + 1 < f.count; i++) {
      const ik_vec3 turned_ws = ik_quat_rotate(f.rot_ws[i], bone_ls(&f, i));
      assert_vec3_near(ik_vec3_normalize(turned_ws), ik_vec3_normalize(bone_ws(f.solved_ws, i)), T_ROT);
    }
  }
}

static void solved_equal_to_before_changes_nothing(void **state) {
  t_rng r = t_rng_make(102);
  int k, i;
  (void)state;
  for (k = 0; k < 500; k++) {
    fixture f;
    random_fixture(&f, &r, t_int(&r, 2, 10));
    f.job.positions_solved = f.before_ws;
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    for (i = 0; i < f.count; i++) assert_quat_near(f.rot_ws[i], f.rot_old_ws[i], T_ROT);
  }
}

/* Each joint turns by the minimal rotation after inheriting: relative to its parent it
 * never spins about its own bone, so the animation's twist survives. */
static void no_twist_is_added_about_any_bone(void **state) {
  t_rng r = t_rng_make(103);
  int k, i;
  (void)state;
  for (k = 0; k < 2000; k++) {
    fixture f;
    random_fixture(&f, &r, t_int(&r, 2, 10));
    f.job.weight = (ik_real)t_uniform(&r, 0.05, 1);
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    for (i = 0; i < f.count; i++) assert_near(local_twist(&f, i), 0, T_ROT);
    /* The tip, without match_tip_rotation, keeps its local rotation entirely. */
    assert_quat_near(local_delta(&f, f.count - 1), ik_quat_identity(), T_ROT);
  }
}

/* A chain turned rigidly about an axis across its first bone (so the minimal turn of
 * bone 0 is that turn): every joint turns by it, and every later bone is then already
 * where it was solved, so nothing else changes. */
static void a_rigid_turn_turns_every_joint(void **state) {
  t_rng r = t_rng_make(104);
  int k, i;
  (void)state;
  for (k = 0; k < 500; k++) {
    fixture f;
    ik_quat turn;
    random_fixture(&f, &r, t_int(&r, 2, 10));
    /* Up to just short of a half turn: exactly opposite bones have no unique turn. */
    turn = ik_quat_axis_angle(ik_vec3_cross(bone_ws(f.before_ws, 0), t_unit_vector(&r)),
                              (ik_real)t_uniform(&r, -3.0, 3.0));
    for (i = 0; i < f.count; i++) f.solved_ws[i] = ik_quat_rotate(turn, f.before_ws[i]);
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    for (i = 0; i < f.count - 1; i++)
      assert_quat_near(f.rot_ws[i], ik_quat_mul(turn, f.rot_old_ws[i]), T_ROT);
    /* The tip has no bone: it follows its parent's turn. */
    assert_quat_near(f.rot_ws[f.count - 1], ik_quat_mul(turn, f.rot_old_ws[f.count - 1]), T_ROT);
  }
}

/* ---- weight ---- */

static void weight_zero_leaves_rotations_bit_identical(void **state) {
  t_rng r = t_rng_make(105);
  int k;
  (void)state;
  for (k = 0; k < 200; k++) {
    fixture f;
    random_fixture(&f, &r, t_int(&r, 2, 10));
    f.job.weight = 0;
    f.job.match_tip_rotation = k & 1;
    f.job.tip_rotation = t_unit_quat(&r);
    f.job.twist_limits = (k & 2) ? f.limits : NULL;
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_memory_equal(f.rot_ws, f.rot_old_ws, sizeof(ik_quat) * (size_t)f.count);
  }
}

static void half_weight_turns_a_single_bone_half_way(void **state) {
  t_rng r = t_rng_make(106);
  int k;
  (void)state;
  for (k = 0; k < 1000; k++) {
    fixture f;
    ik_vec3 old_dir, solved_dir, half_dir;
    ik_real angle;
    random_fixture(&f, &r, 2);
    f.job.weight = 0.5;
    old_dir = ik_vec3_normalize(bone_ws(f.before_ws, 0));
    solved_dir = ik_vec3_normalize(bone_ws(f.solved_ws, 0));
    angle = ik_vec3_angle(old_dir, solved_dir);
    if (angle > (ik_real)3.1) continue; /* nearly opposite: the half-way plane is ill-defined */
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_near(ik_quat_angle_between(f.rot_old_ws[0], f.rot_ws[0]), angle / 2, T_ROT);
    half_dir = ik_vec3_normalize(ik_quat_rotate(f.rot_ws[0], bone_ls(&f, 0)));
    assert_near(ik_vec3_angle(old_dir, half_dir), angle / 2, T_ROT);
    assert_near(ik_vec3_angle(half_dir, solved_dir), angle / 2, T_ROT);
  }
}

static void half_weight_on_a_known_case(void **state) {
  fixture f;
  (void)state;
  small_fixture(&f);
  f.count = f.job.count = 2;
  f.before_ws[0] = ik_vec3_zero();
  f.before_ws[1] = ik_vec3_make(0, 0, 2);
  f.solved_ws[0] = ik_vec3_zero();
  f.solved_ws[1] = ik_vec3_make(5, 0, 0); /* +Z to +X: 90 degrees about +Y */
  f.rot_ws[0] = f.rot_old_ws[0] = ik_quat_identity();
  f.rot_ws[1] = f.rot_old_ws[1] = ik_quat_identity();
  f.job.weight = 0.5;
  assert_int_equal(ik_rotations_run(&f.job), IK_OK);
  assert_quat_near(f.rot_ws[0], ik_quat_axis_angle(ik_vec3_make(0, 1, 0), IK_PI / 4), T_EPS);
  assert_quat_near(f.rot_ws[1], f.rot_ws[0], T_EPS); /* the tip inherits */
}

/* ---- tip rotation ---- */

static void tip_takes_the_target_rotation(void **state) {
  t_rng r = t_rng_make(107);
  int k;
  (void)state;
  for (k = 0; k < 1000; k++) {
    fixture f;
    int tip;
    random_fixture(&f, &r, t_int(&r, 2, 10));
    tip = f.count - 1;
    f.job.match_tip_rotation = 1;
    f.job.tip_rotation = t_unit_quat(&r);
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_quat_near(f.rot_ws[tip], f.job.tip_rotation, T_ROT);
  }
}

static void tip_rotation_blends_by_weight(void **state) {
  t_rng r = t_rng_make(108);
  int k;
  (void)state;
  for (k = 0; k < 1000; k++) {
    fixture f;
    ik_quat inherited_ws;
    ik_real full;
    int tip;
    random_fixture(&f, &r, t_int(&r, 2, 6));
    tip = f.count - 1;
    f.job.positions_solved = f.before_ws; /* nothing moves: the tip inherits its input */
    f.job.match_tip_rotation = 1;
    f.job.tip_rotation = t_unit_quat(&r);
    f.job.weight = (ik_real)t_uniform(&r, 0, 1);
    inherited_ws = f.rot_old_ws[tip];
    full = ik_quat_angle_between(inherited_ws, f.job.tip_rotation);
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_near(ik_quat_angle_between(inherited_ws, f.rot_ws[tip]), full * f.job.weight, T_ROT);
    assert_near(ik_quat_angle_between(f.rot_ws[tip], f.job.tip_rotation), full * (1 - f.job.weight), T_ROT);
  }
}

/* ---- twist limits ---- */

static void twist_limit_cuts_a_quarter_turn_to_the_limit(void **state) {
  t_rng r = t_rng_make(109);
  int k;
  (void)state;
  for (k = 0; k < 500; k++) {
    fixture f;
    ik_vec3 axis_ws;
    ik_real sign = (k & 1) ? 1 : -1;
    int tip;
    random_fixture(&f, &r, t_int(&r, 2, 8));
    tip = f.count - 1;
    f.job.positions_solved = f.before_ws;
    axis_ws = ik_vec3_normalize(bone_ws(f.before_ws, tip - 1));
    f.job.match_tip_rotation = 1;
    f.job.tip_rotation = ik_quat_mul(ik_quat_axis_angle(axis_ws, sign * IK_PI / 2), f.rot_old_ws[tip]);
    f.limits[tip] = (ik_real)0.3;
    f.job.twist_limits = f.limits;
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_near(local_twist(&f, tip), sign * (ik_real)0.3, T_ROT);
    /* A pure twist target: the result is that twist, cut back, and nothing else. */
    assert_quat_near(f.rot_ws[tip],
                     ik_quat_mul(ik_quat_axis_angle(axis_ws, sign * (ik_real)0.3), f.rot_old_ws[tip]), T_ROT);
  }
}

static void twist_within_the_limit_is_left_alone(void **state) {
  t_rng r = t_rng_make(110);
  int k;
  (void)state;
  for (k = 0; k < 500; k++) {
    fixture f;
    int tip;
    random_fixture(&f, &r, t_int(&r, 2, 8));
    tip = f.count - 1;
    f.job.match_tip_rotation = 1;
    f.job.tip_rotation = t_unit_quat(&r);
    f.limits[tip] = 4; /* above pi: never binds */
    f.job.twist_limits = f.limits;
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_quat_near(f.rot_ws[tip], f.job.tip_rotation, T_ROT);
  }
}

/* A random tip target twists and swings: the twist is capped, the swing kept. */
static void twist_limits_hold_for_random_tip_targets(void **state) {
  t_rng r = t_rng_make(111);
  int k, i;
  (void)state;
  for (k = 0; k < 2000; k++) {
    fixture f;
    int tip;
    ik_real twist_free;
    random_fixture(&f, &r, t_int(&r, 2, 8));
    tip = f.count - 1;
    for (i = 0; i < f.count; i++) f.limits[i] = (ik_real)t_uniform(&r, 0, 1.5);
    f.job.match_tip_rotation = 1;
    f.job.tip_rotation = t_unit_quat(&r);
    /* The twist the tip would take without a limit. */
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    twist_free = local_twist(&f, tip);
    memcpy(f.rot_ws, f.rot_old_ws, sizeof f.rot_ws);
    f.job.twist_limits = f.limits;
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_unit_rotations(&f);
    for (i = 0; i < f.count; i++) assert_true(ik_fabs(local_twist(&f, i)) <= f.limits[i] + (ik_real)T_ROT);
    assert_near(local_twist(&f, tip), ik_clamp(twist_free, -f.limits[tip], f.limits[tip]), T_ROT);
    /* The limit only spins the tip about its bone; the bones still point as solved. */
    for (i = 0; i + 1 < f.count; i++) {
      const ik_vec3 turned_ws = ik_quat_rotate(f.rot_ws[i], bone_ls(&f, i));
      assert_vec3_near(ik_vec3_normalize(turned_ws), ik_vec3_normalize(bone_ws(f.solved_ws, i)), T_ROT);
    }
  }
}

/* Bones turned by the minimal rotation add no twist, so even zero limits leave them
 * pointing exactly as solved. */
static void zero_limits_do_not_stop_bones_turning(void **state) {
  t_rng r = t_rng_make(112);
  int k, i;
  (void)state;
  for (k = 0; k < 1000; k++) {
    fixture f;
    random_fixture(&f, &r, t_int(&r, 2, 10));
    for (i = 0; i < f.count; i++) f.limits[i] = 0;
    f.job.twist_limits = f.limits;
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    for (i = 0; i + 1 < f.count; i++) {
      const ik_vec3 turned_ws = ik_quat_rotate(f.rot_ws[i], bone_ls(&f, i));
      assert_vec3_near(ik_vec3_normalize(turned_ws), ik_vec3_normalize(bone_ws(f.solved_ws, i)), T_ROT);
    }
  }
}

/* ---- base rotation ---- */

/* Joint 0 inherits its parent's turn like every other joint (its local rotation is
 * kept), and twist_limits[0] is measured against that parent. */
static void joint_zero_follows_the_base_rotation(void **state) {
  t_rng r = t_rng_make(113);
  int k, i;
  (void)state;
  for (k = 0; k < 500; k++) {
    fixture f;
    ik_quat base_turn;
    random_fixture(&f, &r, t_int(&r, 2, 8));
    f.job.base_rotation_before = t_unit_quat(&r);
    base_turn = t_unit_quat(&r);
    f.job.base_rotation = ik_quat_mul(base_turn, f.job.base_rotation_before);
    /* The whole chain carried by the base: every joint turns with it. */
    for (i = 0; i < f.count; i++) f.solved_ws[i] = ik_quat_rotate(base_turn, f.before_ws[i]);
    for (i = 0; i < f.count; i++) f.limits[i] = 0;
    f.job.twist_limits = f.limits;
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    for (i = 0; i < f.count; i++)
      assert_quat_near(f.rot_ws[i], ik_quat_mul(base_turn, f.rot_old_ws[i]), T_ROT);
  }
}

/* ---- lengths ---- */

/* Solved bones of any length: the rotations carry the old bones, so positions derived
 * from them keep the old lengths and take the solved directions. */
/* ---- remembered turns ---- */

/* One bone animated along +X (the rest pose, every step) whose solved direction goes
 * once round a circle passing 1.1 degrees from -X: the largest turn of the bone about
 * its own length in one step (beyond its direction's turn, radians), with and without
 * twist memory. */
static ik_real worst_spin(int remember) {
  const int steps = 720;
  ik_vec3 before[2], solved[2];
  ik_quat rot[2], memory[2], last = ik_quat_identity();
  ik_vec3 last_dir = ik_vec3_make(1, 0, 0);
  ik_real worst = 0;
  int s;
  memory[0] = memory[1] = ik_quat_identity();
  for (s = 0; s <= steps; s++) {
    const ik_real a = 2 * (ik_real)IK_PI * (ik_real)s / (ik_real)steps;
    ik_rotations_job job;
    ik_vec3 dir;
    ik_real twist, turn;
    before[0] = ik_vec3_zero(), before[1] = ik_vec3_make(1, 0, 0);
    solved[0] = ik_vec3_zero();
    solved[1] = ik_vec3_normalize(ik_vec3_make(ik_cos(a), (ik_real)0.02, ik_sin(a)));
    rot[0] = rot[1] = ik_quat_identity();
    ik_rotations_job_init(&job, 2, before, solved, rot);
    if (remember) job.twist_memory = memory;
    assert_int_equal(ik_rotations_run(&job), IK_OK);
    dir = ik_quat_rotate(rot[0], ik_vec3_make(1, 0, 0));
    assert_true((double)ik_vec3_dist(dir, solved[1]) < T_ROT);
    twist = ik_fabs(ik_quat_twist_angle(ik_quat_mul(ik_quat_inverse(last), rot[0]), ik_vec3_make(1, 0, 0)));
    turn = ik_vec3_angle(last_dir, dir);
    if (s > 0 && twist - turn > worst) worst = twist - turn;
    last = rot[0], last_dir = dir;
  }
  return worst;
}

static void remembered_turns_never_spin_a_bone(void **state) {
  (void)state;
  assert_true(worst_spin(0) > (ik_real)0.5); /* the turn from the pose alone flips near -X */
  assert_true((double)worst_spin(1) <= T_ROT);
}

/* The twist history carries is bled back: after the circle the bone, back on +X, has
 * turned back to its pose, not kept the loop's twist. */
static void remembered_twist_bleeds_back(void **state) {
  ik_vec3 before[2] = {{0, 0, 0}, {1, 0, 0}}, solved[2] = {{0, 0, 0}, {0, 0, 0}};
  ik_quat rot[2], memory[2];
  int s;
  (void)state;
  memory[0] = ik_quat_axis_angle(ik_vec3_make(1, 0, 0), 1);
  memory[1] = ik_quat_identity();
  /* Swinging the bone 0.4 rad out and back bleeds 0.2 rad of the remembered twist each way. */
  for (s = 0; s < 2; s++) {
    ik_rotations_job job;
    solved[1] = s == 0 ? ik_vec3_make(ik_cos((ik_real)0.4), ik_sin((ik_real)0.4), 0) : ik_vec3_make(1, 0, 0);
    rot[0] = rot[1] = ik_quat_identity();
    ik_rotations_job_init(&job, 2, before, solved, rot);
    job.twist_memory = memory;
    assert_int_equal(ik_rotations_run(&job), IK_OK);
  }
  assert_true((double)ik_fabs(ik_quat_twist_angle(rot[0], ik_vec3_make(1, 0, 0)) - (ik_real)0.6) < 1e-4);
  assert_true((double)ik_vec3_dist(ik_quat_rotate(rot[0], ik_vec3_make(1, 0, 0)), ik_vec3_make(1, 0, 0)) <
              T_ROT);
}

/* A remembered pure twist t about the bone and a swing of the bone by theta: the swing is
 * kept whole and the twist comes back by theta / 2, to none if it was no more, on
 * either side (the bleed's half-angle sums against the angles themselves). */
static void remembered_twist_bleeds_by_half_the_turn(void **state) {
  const ik_vec3 x = {1, 0, 0};
  t_rng r = t_rng_make(117);
  int k, bled = 0, cleared = 0;
  (void)state;
  for (k = 0; k < 2000; k++) {
    const ik_real t = (ik_real)t_uniform(&r, -3.1, 3.1), theta = (ik_real)t_uniform(&r, 0.01, 3.1);
    const ik_real phi = (ik_real)t_uniform(&r, -3.1, 3.1);
    const ik_vec3 to = {ik_cos(theta), ik_sin(theta) * ik_cos(phi), ik_sin(theta) * ik_sin(phi)};
    ik_vec3 before[2] = {{0, 0, 0}, {1, 0, 0}}, solved[2];
    ik_quat rot[2], memory[2], swing, twist;
    ik_rotations_job job;
    ik_real want;
    solved[0] = ik_vec3_zero(), solved[1] = to;
    memory[0] = ik_quat_axis_angle(x, t), memory[1] = ik_quat_identity();
    rot[0] = rot[1] = ik_quat_identity();
    ik_rotations_job_init(&job, 2, before, solved, rot);
    job.twist_memory = memory;
    assert_int_equal(ik_rotations_run(&job), IK_OK);
    want = ik_fabs(t) <= theta / 2 ? 0 : t > 0 ? t - theta / 2 : t + theta / 2;
    ik_quat_swing_twist(memory[0], x, &swing, &twist);
    assert_near(ik_quat_twist_angle(twist, x), want, T_ROT);
    assert_vec3_near(ik_quat_rotate(rot[0], x), to, T_ROT);
    bled += want != 0, cleared += want == 0;
  }
  assert_true(bled > 500 && cleared > 500);
}

/* Jobs of one shape for the lanes: random poses, memories and bases, some solved bones
 * of no length, some exactly reversed (the half-turn branch), some memories identity. */
#define LANE_JOBS 11
typedef struct lane_set {
  ik_vec3 before[LANE_JOBS][MAXJ], solved[LANE_JOBS][MAXJ];
  ik_quat rot[LANE_JOBS][MAXJ], memory[LANE_JOBS][MAXJ];
  ik_rotations_job job[LANE_JOBS];
  ik_rotations_job *jobs[LANE_JOBS];
} lane_set;

static void random_lane_set(lane_set *s, t_rng *r, int count, int match_tip) {
  ik_real lengths[MAXJ];
  int k, i;
  memset(s, 0, sizeof *s);
  for (k = 0; k < LANE_JOBS; k++) {
    t_random_chain(r, s->before[k], lengths, count, 0.2, 2.0, 2.5);
    t_random_chain(r, s->solved[k], lengths, count, 0.2, 2.0, 2.5);
    for (i = 0; i < count; i++) {
      s->rot[k][i] = t_unit_quat(r);
      s->memory[k][i] = t_int(r, 0, 3) == 0 ? ik_quat_identity() : t_unit_quat(r);
    }
    i = t_int(r, 0, count - 2);
    if (t_int(r, 0, 4) == 0) s->solved[k][i + 1] = s->solved[k][i];
    if (t_int(r, 0, 4) == 0) {
      /* the bone as the memory and the pose predict it, solved the other way round */
      const ik_quat pred =
          ik_quat_normalize(ik_quat_mul(ik_quat_normalize(s->rot[k][0]), ik_quat_normalize(s->memory[k][0])));
      const ik_vec3 from = ik_quat_rotate(
          pred,
          ik_quat_rotate(ik_quat_conjugate(s->rot[k][0]), ik_vec3_sub(s->before[k][1], s->before[k][0])));
      s->solved[k][1] = ik_vec3_sub(s->solved[k][0], from);
    }
    ik_rotations_job_init(&s->job[k], count, s->before[k], s->solved[k], s->rot[k]);
    s->job[k].twist_memory = s->memory[k];
    s->job[k].match_tip_rotation = match_tip && t_int(r, 0, 2) != 0;
    s->job[k].tip_rotation = t_unit_quat(r);
    if (t_int(r, 0, 1))
      s->job[k].base_rotation_before = t_unit_quat(r), s->job[k].base_rotation = t_unit_quat(r);
    assert_int_equal(ik_rotations_validate(&s->job[k], NULL), IK_OK);
    assert_true(ik__rotations_lane_able(&s->job[k]));
    s->jobs[k] = &s->job[k];
  }
}

/* Every instruction set's lanes give each job the bits it gets alone, whatever the
 * number of jobs (part-filled vectors too). */
static void lanes_give_the_scalar_bits(void **state) {
  static lane_set want, got;
  t_rng r = t_rng_make(131);
  int isa, k, n, tested = 0;
  (void)state;
  for (isa = 0; isa < 3; isa++) {
    const ik__rotations_lanes_fn run = ik__rotations_lanes_variant(isa);
    if (!run) continue;
    tested++;
    for (k = 0; k < 300; k++) {
      const int count = t_int(&r, 2, MAXJ), match_tip = t_int(&r, 0, 1);
      t_rng copy;
      int j;
      n = t_int(&r, 1, LANE_JOBS);
      copy = r;
      random_lane_set(&want, &r, count, match_tip);
      random_lane_set(&got, &copy, count, match_tip);
      for (j = 0; j < n; j++) ik__rotations_run_valid(want.jobs[j]);
      run(got.jobs, n);
      assert_memory_equal(want.rot, got.rot, sizeof want.rot);
      assert_memory_equal(want.memory, got.memory, sizeof want.memory);
    }
  }
  assert_true(tested >= 2);
}

/* The structure-of-arrays form: every instruction set gives each lane whose bit is set
 * the bits a bone chain's job (identity bases, no tip match) gets alone, but for the tip,
 * which it leaves; a lane whose bit is clear keeps everything. */
static void soa_lanes_give_the_scalar_bits(void **state) {
  static lane_set want[IK__SOA_SETS];
  static ik_real before[IK__SOA_SETS][MAXJ][3][IK__SOA_LANES], solved[IK__SOA_SETS][MAXJ][3][IK__SOA_LANES];
  static ik_real rot[IK__SOA_SETS][MAXJ][4][IK__SOA_LANES], mem[IK__SOA_SETS][MAXJ][4][IK__SOA_LANES];
  t_rng r = t_rng_make(132);
  int isa, k, tested = 0;
  (void)state;
  for (isa = 0; isa < 4; isa++) {
    const ik__rotations_soa_fn run = ik__rotations_soa_variant(isa);
    if (!run) continue;
    tested++;
    for (k = 0; k < 300; k++) {
      const int count = t_int(&r, 2, MAXJ), n = t_int(&r, 1, IK__SOA_SETS);
      ik__rotations_soa s[IK__SOA_SETS];
      int g, e, i, c;
      for (g = 0; g < n; g++) {
        random_lane_set(&want[g], &r, count, 0);
        s[g].count = count;
        s[g].stride = IK__SOA_LANES;
        s[g].mask = (unsigned)t_int(&r, 0, (1 << IK__SOA_LANES) - 1);
        for (e = 0; e < IK__SOA_LANES; e++) {
          want[g].job[e].base_rotation_before = want[g].job[e].base_rotation = ik_quat_identity();
          for (i = 0; i < count; i++) {
            const ik_real *b = &want[g].before[e][i].x, *v = &want[g].solved[e][i].x;
            const ik_real *q = &want[g].rot[e][i].x, *m = &want[g].memory[e][i].x;
            for (c = 0; c < 3; c++) before[g][i][c][e] = b[c], solved[g][i][c][e] = v[c];
            for (c = 0; c < 4; c++) rot[g][i][c][e] = q[c], mem[g][i][c][e] = m[c];
          }
        }
        for (i = 0; i < count; i++) {
          s[g].before[i] = before[g][i][0], s[g].solved[i] = solved[g][i][0];
          s[g].rotations[i] = rot[g][i][0], s[g].memory[i] = i + 1 < count ? mem[g][i][0] : NULL;
        }
      }
      run(s, n);
      for (g = 0; g < n; g++)
        for (e = 0; e < IK__SOA_LANES; e++) {
          const ik_quat tip = want[g].rot[e][count - 1];
          if ((s[g].mask >> e) & 1u) ik__rotations_run_valid(&want[g].job[e]);
          want[g].rot[e][count - 1] = tip;
          for (i = 0; i < count; i++) {
            const ik_real *q = &want[g].rot[e][i].x, *m = &want[g].memory[e][i].x;
            for (c = 0; c < 4; c++) {
              assert_memory_equal(&rot[g][i][c][e], &q[c], sizeof q[c]);
              if (i + 1 < count) assert_memory_equal(&mem[g][i][c][e], &m[c], sizeof m[c]);
            }
          }
        }
    }
  }
  assert_true(tested >= 2);
}

static void bone_lengths_cannot_change(void **state) {
  t_rng r = t_rng_make(114);
  int k, i;
  (void)state;
  for (k = 0; k < 1000; k++) {
    fixture f;
    ik_vec3 derived_ws[MAXJ];
    random_fixture(&f, &r, t_int(&r, 2, 10));
    /* Stretch and squash the solved bones. */
    {
      ik_vec3 prev_ws = f.solved_ws[0];
      for (i = 0; i + 1 < f.count; i++) {
        const ik_vec3 b = ik_vec3_sub(f.solved_ws[i + 1], prev_ws);
        prev_ws = f.solved_ws[i + 1];
        f.solved_ws[i + 1] = ik_vec3_madd(f.solved_ws[i], b, (ik_real)t_uniform(&r, 0.3, 3.0));
      }
    }
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    derived_ws[0] = f.before_ws[0];
    for (i = 0; i + 1 < f.count; i++) {
      derived_ws[i + 1] = ik_vec3_add(derived_ws[i], ik_quat_rotate(f.rot_ws[i], bone_ls(&f, i)));
      assert_near(ik_vec3_dist(derived_ws[i + 1], derived_ws[i]),
                  ik_vec3_dist(f.before_ws[i + 1], f.before_ws[i]), T_ROT);
      assert_vec3_near(ik_vec3_normalize(ik_vec3_sub(derived_ws[i + 1], derived_ws[i])),
                       ik_vec3_normalize(bone_ws(f.solved_ws, i)), T_ROT);
    }
  }
}

/* ---- degenerate input ---- */

static void zero_solved_bone_keeps_the_inherited_direction(void **state) {
  fixture f;
  int i;
  (void)state;
  small_fixture(&f);
  f.solved_ws[2] = f.solved_ws[1]; /* bone 1 has no solved direction */
  assert_int_equal(ik_rotations_run(&f.job), IK_OK);
  for (i = 0; i < f.count; i++) assert_true(ik_quat_is_finite(f.rot_ws[i]));
  assert_unit_rotations(&f);
  assert_quat_near(local_delta(&f, 1), ik_quat_identity(), T_ROT);
}

static void non_unit_input_rotations_give_unit_output(void **state) {
  t_rng r = t_rng_make(115);
  int k, i;
  (void)state;
  for (k = 0; k < 200; k++) {
    fixture f;
    random_fixture(&f, &r, t_int(&r, 2, 8));
    for (i = 0; i < f.count; i++) {
      const ik_real s = (ik_real)t_uniform(&r, 0.5, 2);
      f.rot_ws[i] = ik_quat_make(f.rot_ws[i].x * s, f.rot_ws[i].y * s, f.rot_ws[i].z * s, f.rot_ws[i].w * s);
    }
    assert_int_equal(ik_rotations_run(&f.job), IK_OK);
    assert_unit_rotations(&f);
    for (i = 0; i + 1 < f.count; i++) {
      const ik_vec3 turned_ws = ik_quat_rotate(f.rot_ws[i], bone_ls(&f, i));
      assert_vec3_near(ik_vec3_normalize(turned_ws), ik_vec3_normalize(bone_ws(f.solved_ws, i)), T_ROT);
    }
  }
}

/* ---- the job protocol ---- */

static void expect_refused(fixture *f, ik_status status, const char *field, int index) {
  ik_error err;
  ik_quat saved[MAXJ];
  memcpy(saved, f->rot_ws, sizeof saved);
  err.status = IK_OK;
  err.field = NULL;
  err.index = -2;
  assert_int_equal(ik_rotations_validate(&f->job, &err), status);
  assert_int_equal(err.status, status);
  assert_non_null(err.field);
  assert_string_equal(err.field, field);
  assert_int_equal(err.index, index);
  assert_int_equal(ik_rotations_validate(&f->job, NULL), status);
  assert_int_equal(ik_rotations_run(&f->job), status);
  assert_memory_equal(f->rot_ws, saved, sizeof saved);
}

static void validation_names_the_field_and_index(void **state) {
  fixture f;
  ik_error err;
  const ik_real nan = (ik_real)NAN, inf = (ik_real)INFINITY;
  (void)state;

  small_fixture(&f);
  assert_int_equal(ik_rotations_validate(&f.job, &err), IK_OK);
  assert_int_equal(err.status, IK_OK);
  assert_int_equal(ik_rotations_validate(NULL, &err), IK_E_NULL);
  assert_int_equal(ik_rotations_run(NULL), IK_E_NULL);

  small_fixture(&f), f.job.positions_before = NULL;
  expect_refused(&f, IK_E_NULL, "positions_before", -1);
  small_fixture(&f), f.job.positions_solved = NULL;
  expect_refused(&f, IK_E_NULL, "positions_solved", -1);
  small_fixture(&f), f.job.rotations = NULL;
  expect_refused(&f, IK_E_NULL, "rotations", -1);

  small_fixture(&f), f.job.count = 1;
  expect_refused(&f, IK_E_COUNT, "count", -1);
  small_fixture(&f), f.job.count = 0;
  expect_refused(&f, IK_E_COUNT, "count", -1);
  small_fixture(&f), f.job.count = -3;
  expect_refused(&f, IK_E_COUNT, "count", -1);

  small_fixture(&f), f.before_ws[2].y = nan;
  expect_refused(&f, IK_E_NOT_FINITE, "positions_before", 2);
  small_fixture(&f), f.solved_ws[3].z = inf;
  expect_refused(&f, IK_E_NOT_FINITE, "positions_solved", 3);
  small_fixture(&f), f.rot_ws[1].w = nan;
  expect_refused(&f, IK_E_NOT_FINITE, "rotations", 1);
  small_fixture(&f), f.job.weight = nan;
  expect_refused(&f, IK_E_NOT_FINITE, "weight", -1);
  {
    ik_quat memory[MAXJ];
    int i;
    small_fixture(&f);
    for (i = 0; i < MAXJ; i++) memory[i] = ik_quat_identity();
    memory[2].z = nan;
    f.job.twist_memory = memory;
    expect_refused(&f, IK_E_NOT_FINITE, "twist_memory", 2);
  }
  small_fixture(&f), f.job.tip_rotation.x = -inf;
  expect_refused(&f, IK_E_NOT_FINITE, "tip_rotation", -1);
  small_fixture(&f), f.job.base_rotation_before.y = nan;
  expect_refused(&f, IK_E_NOT_FINITE, "base_rotation_before", -1);
  small_fixture(&f), f.job.base_rotation.z = inf;
  expect_refused(&f, IK_E_NOT_FINITE, "base_rotation", -1);
  small_fixture(&f), f.before_ws[1].x = IK_REAL_MAX_COORD * 10;
  expect_refused(&f, IK_E_RANGE, "positions_before", 1);

  small_fixture(&f), f.before_ws[2] = f.before_ws[1];
  expect_refused(&f, IK_E_BONE_LENGTH, "positions_before", 1);
  small_fixture(&f), f.before_ws[3] = f.before_ws[2];
  expect_refused(&f, IK_E_BONE_LENGTH, "positions_before", 2);

  small_fixture(&f), f.job.weight = (ik_real)-0.01;
  expect_refused(&f, IK_E_WEIGHT, "weight", -1);
  small_fixture(&f), f.job.weight = (ik_real)1.01;
  expect_refused(&f, IK_E_WEIGHT, "weight", -1);

  small_fixture(&f), f.job.twist_limits = f.limits, f.limits[2] = (ik_real)-0.1;
  expect_refused(&f, IK_E_TWIST_LIMIT, "twist_limits", 2);
  small_fixture(&f), f.job.twist_limits = f.limits, f.limits[0] = nan;
  expect_refused(&f, IK_E_TWIST_LIMIT, "twist_limits", 0);
  small_fixture(&f), f.job.twist_limits = f.limits, f.limits[3] = inf;
  expect_refused(&f, IK_E_TWIST_LIMIT, "twist_limits", 3);
}

/* Boundary values are accepted. */
static void boundary_values_are_accepted(void **state) {
  fixture f;
  (void)state;
  small_fixture(&f), f.job.weight = 0;
  assert_int_equal(ik_rotations_validate(&f.job, NULL), IK_OK);
  small_fixture(&f), f.job.weight = 1;
  assert_int_equal(ik_rotations_validate(&f.job, NULL), IK_OK);
  small_fixture(&f), f.job.twist_limits = f.limits, f.limits[0] = 0;
  assert_int_equal(ik_rotations_validate(&f.job, NULL), IK_OK);
  /* A moved solved joint on top of its neighbour is fine: only before-bones must exist. */
  small_fixture(&f), f.solved_ws[2] = f.solved_ws[1];
  assert_int_equal(ik_rotations_validate(&f.job, NULL), IK_OK);
  small_fixture(&f), f.job.count = 2;
  assert_int_equal(ik_rotations_run(&f.job), IK_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(init_sets_the_documented_defaults),
      cmocka_unit_test(new_rotations_point_old_bones_at_solved_directions),
      cmocka_unit_test(solved_equal_to_before_changes_nothing),
      cmocka_unit_test(no_twist_is_added_about_any_bone),
      cmocka_unit_test(a_rigid_turn_turns_every_joint),
      cmocka_unit_test(weight_zero_leaves_rotations_bit_identical),
      cmocka_unit_test(half_weight_turns_a_single_bone_half_way),
      cmocka_unit_test(half_weight_on_a_known_case),
      cmocka_unit_test(tip_takes_the_target_rotation),
      cmocka_unit_test(tip_rotation_blends_by_weight),
      cmocka_unit_test(twist_limit_cuts_a_quarter_turn_to_the_limit),
      cmocka_unit_test(twist_within_the_limit_is_left_alone),
      cmocka_unit_test(twist_limits_hold_for_random_tip_targets),
      cmocka_unit_test(zero_limits_do_not_stop_bones_turning),
      cmocka_unit_test(joint_zero_follows_the_base_rotation),
      cmocka_unit_test(remembered_turns_never_spin_a_bone),
      cmocka_unit_test(remembered_twist_bleeds_back),
      cmocka_unit_test(remembered_twist_bleeds_by_half_the_turn),
      cmocka_unit_test(lanes_give_the_scalar_bits),
      cmocka_unit_test(soa_lanes_give_the_scalar_bits),
      cmocka_unit_test(bone_lengths_cannot_change),
      cmocka_unit_test(zero_solved_bone_keeps_the_inherited_direction),
      cmocka_unit_test(non_unit_input_rotations_give_unit_output),
      cmocka_unit_test(validation_names_the_field_and_index),
      cmocka_unit_test(boundary_values_are_accepted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
