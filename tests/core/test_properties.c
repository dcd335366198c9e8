/* Properties every solver keeps, over seeded random chains (2 to 100 joints, random
 * bone lengths) and targets: lengths kept, root fixed, reached exactly when the tip is
 * within tolerance, reached false only when unreachable, constrained or capped,
 * constraints never broken, the bend on the pole's side. */
#include <string.h>

#include "solve_any.h"
#include "test_util.h"

#define MAXJ 100
#define CASES 400

typedef struct tally {
  int solves, reached, capped, unreachable;
} tally;

static void check_case(t_solver s, t_rng *r, int constrained, tally *t) {
  ik_vec3 p[MAXJ], rest[MAXJ], root;
  ik_real len[MAXJ];
  ik_constraint cons[MAXJ];
  int n = s == T_TWO_BONE ? 3 : t_int(r, 2, MAXJ);
  int max_iterations = t_int(r, 1, 60);
  ik_real total, tolerance, dist;
  ik_vec3 target;
  ik_chain chain;
  ik_result res;
  int i;
  t_random_chain(r, p, len, n, 0.05, 2.0, 1.5);
  memcpy(rest, p, sizeof(ik_vec3) * (size_t)n);
  total = ik_measure_lengths(p, n, NULL);
  tolerance = total * (ik_real)1e-4;
  dist = total * (ik_real)t_uniform(r, 0, 1.3);
  target = ik_vec3_scale(t_unit_vector(r), dist);
  root = p[0];
  ik_chain_init(&chain, p, n, len);
  if (constrained) {
    for (i = 0; i + 1 < n; i++) {
      memset(&cons[i], 0, sizeof cons[i]);
      cons[i].type = (i % 3 == 2) ? IK_CONSTRAINT_HINGE : IK_CONSTRAINT_CONE;
      cons[i].angle = (ik_real)t_uniform(r, 0.1, 2.0);
      /* A hinge's axis lies across its parent bone, as a knee's or elbow's does. */
      cons[i].axis = ik_vec3_cross(i == 0 ? ik_vec3_sub(rest[1], rest[0]) : ik_vec3_sub(rest[i], rest[i - 1]),
                                   t_unit_vector(r));
      cons[i].min = (ik_real)t_uniform(r, -2, 0);
      cons[i].max = (ik_real)t_uniform(r, 0, 2);
    }
    chain.constraints = cons;
    chain.rest_positions = rest;
    chain.base_direction = ik_vec3_sub(rest[1], rest[0]);
  }
  assert_int_equal(t_solve(s, &chain, target, tolerance, max_iterations, &res), IK_OK);

  if (t_max_length_error(p, len, n) > T_LEN_REL) {
    print_error("%s: bone length off by %g (relative) on %d joints\n", t_solver_names[s],
                t_max_length_error(p, len, n), n);
    fail();
  }
  assert_memory_equal(&p[0], &root, sizeof root);
  assert_near(res.distance, ik_vec3_dist(p[n - 1], target), 0);
  assert_int_equal(res.reached, res.distance <= tolerance);
  if (constrained) assert_near(ik_chain_constraint_violation(&chain, NULL), 0, T_CONSTRAINT_RAD);
  /* Not reached: the target is out of reach, the chain constrained, or the cap hit; or
   * CCD stalled, and going on from where it stopped gains nothing. */
  if (!res.reached && !constrained && dist < total * (ik_real)0.999 && s != T_TWO_BONE) {
    if (s == T_CCD && res.iterations < max_iterations) {
      ik_result more;
      assert_int_equal(t_solve(s, &chain, target, tolerance, max_iterations, &more), IK_OK);
      assert_true(more.distance >= res.distance * (1 - (ik_real)1e-4));
    } else {
      assert_int_equal(res.iterations, max_iterations);
    }
  }
  if (!res.reached && s == T_TWO_BONE && dist <= total * (ik_real)0.999 &&
      dist >= ik_fabs(len[0] - len[1]) * (ik_real)1.001) {
    print_error("two_bone missed a reachable target by %g\n", (double)res.distance);
    fail();
  }
  t->solves++;
  t->reached += res.reached;
  t->capped += !res.reached && res.iterations == max_iterations;
  t->unreachable += dist >= total;
}

static void run_solver(t_solver s, int constrained) {
  t_rng r = t_rng_make(0xC0FFEEu + (uint64_t)s * 31 + (uint64_t)constrained);
  tally t = {0, 0, 0, 0};
  int k;
  for (k = 0; k < t_cases(CASES); k++) check_case(s, &r, constrained, &t);
  /* The random mix must actually exercise both outcomes, or the test proves little. */
  assert_true(t.reached > 0);
  assert_true(t.reached < t.solves);
  assert_true(t.unreachable > 0);
}

static void fabrik_properties(void **state) {
  (void)state;
  run_solver(T_FABRIK, 0);
}
static void fabrik_constrained_properties(void **state) {
  (void)state;
  run_solver(T_FABRIK, 1);
}
static void ccd_properties(void **state) {
  (void)state;
  run_solver(T_CCD, 0);
}
static void ccd_constrained_properties(void **state) {
  (void)state;
  run_solver(T_CCD, 1);
}
static void dls_properties(void **state) {
  (void)state;
  run_solver(T_DLS, 0);
}
static void dls_constrained_properties(void **state) {
  (void)state;
  run_solver(T_DLS, 1);
}
static void two_bone_properties(void **state) {
  (void)state;
  run_solver(T_TWO_BONE, 0);
}

/* The tip's distance to the target after `budget` iterations of `s` from the chain's
 * positions (FABRIK in plain mode, whose sweeps do not depend on the budget: refined
 * mode hands over to its polish by the budget left). */
static ik_real distance_after(t_solver s, const ik_chain *chain, ik_vec3 target, int budget) {
  ik_result res;
  if (s == T_FABRIK) {
    ik_fabrik_job job;
    ik_fabrik_job_init(&job, chain, target);
    job.tolerance = 0;
    job.max_iterations = budget;
    job.mode = IK_FABRIK_PLAIN;
    assert_int_equal(ik_fabrik_run(&job), IK_OK);
    res = job.result;
  } else {
    assert_int_equal(t_solve(s, chain, target, 0, budget, &res), IK_OK);
  }
  return res.distance;
}

/* A solve ends no further from its target than any pose its iterations passed through,
 * so one more iteration never ends further away. Planar chains of 3 to 8 joints, every
 * bone hinged to +-1.5 rad, targets at 0.02 to 1 of the length: under the limits many
 * are out of reach, and the iterations wander (solves used to end more than 1% of the
 * length further away than a pose they had held in 16 to 20% of these cases). */
static void more_iterations_never_end_further_away(void **state) {
  int s;
  (void)state;
  for (s = 0; s < T_TWO_BONE; s++) {
    t_rng r = t_rng_make(7 + (uint64_t)s);
    int k, i, budget;
    for (k = 0; k < t_cases(100); k++) {
      const int n = t_int(&r, 3, 8);
      ik_vec3 p[8], rest[8];
      ik_real len[8], angle = (ik_real)t_uniform(&r, -3, 3), total, prev = -1;
      ik_constraint cons[8];
      ik_vec3 target;
      ik_chain chain;
      rest[0] = ik_vec3_zero();
      for (i = 1; i < n; i++) {
        const ik_real l = (ik_real)t_uniform(&r, 0.2, 1.5);
        angle += (ik_real)t_uniform(&r, -1, 1);
        rest[i] = ik_vec3_add(rest[i - 1], ik_vec3_make(l * ik_cos(angle), l * ik_sin(angle), 0));
      }
      total = ik_measure_lengths(rest, n, len);
      angle = (ik_real)t_uniform(&r, -3, 3);
      target = ik_vec3_scale(ik_vec3_make(ik_cos(angle), ik_sin(angle), 0),
                             total * (ik_real)t_uniform(&r, 0.02, 1));
      memset(cons, 0, sizeof cons);
      for (i = 0; i + 1 < n; i++) {
        cons[i].type = IK_CONSTRAINT_HINGE;
        cons[i].axis = ik_vec3_make(0, 0, 1);
        cons[i].min = (ik_real)-1.5;
        cons[i].max = (ik_real)1.5;
      }
      ik_chain_init(&chain, p, n, len);
      chain.constraints = cons;
      chain.rest_positions = rest;
      for (budget = 1; budget <= 20; budget++) {
        ik_real d;
        memcpy(p, rest, sizeof(ik_vec3) * (size_t)n);
        d = distance_after((t_solver)s, &chain, target, budget);
        if (prev >= 0 && d > prev) {
          print_error("%s: %d iterations end %g from the target, %d ended %g (case %d)\n", t_solver_names[s],
                      budget, (double)d, budget - 1, (double)prev, k);
          fail();
        }
        prev = d;
      }
    }
  }
}

/* The constraint pass with a bone exactly opposite its parent (a cone's clamp), or a
 * parent along a hinge's axis (the hinge's zero direction): the direction across the
 * parent, or the axis, is rounding noise there, and once normalised it must still be
 * made perpendicular, or the clamped bone is not unit and the chain stretches. */
static void bones_opposite_or_along_an_axis_keep_their_lengths(void **state) {
  int s, k, kind;
  (void)state;
  for (s = 0; s < T_TWO_BONE; s++) {
    for (kind = 0; kind < 2; kind++) {
      for (k = 1; k <= 20; k++) {
        const ik_vec3 u = ik_vec3_normalize(ik_vec3_make(1, (ik_real)0.37 * k, (ik_real)0.21 * k * k));
        const ik_vec3 w = ik_vec3_normalize(ik_vec3_make((ik_real)0.3, (ik_real)-0.2, (ik_real)0.1));
        ik_vec3 p[3], rest[3];
        ik_real len[2] = {1, 1};
        ik_constraint cons[2];
        ik_chain chain;
        ik_result res;
        p[0] = ik_vec3_zero();
        p[1] = u;
        p[2] = ik_vec3_add(u, w);
        memcpy(rest, p, sizeof p);
        memset(cons, 0, sizeof cons);
        if (kind == 0) {
          /* Target on the root: the forward pass folds bone 1 straight back on bone 0. */
          cons[1].type = IK_CONSTRAINT_CONE;
          cons[1].angle = 1;
        } else {
          cons[1].type = IK_CONSTRAINT_HINGE;
          cons[1].axis = ik_vec3_scale(u, 3); /* along the parent bone */
          cons[1].min = (ik_real)-0.5;
          cons[1].max = (ik_real)0.5;
        }
        ik_chain_init(&chain, p, 3, len);
        chain.constraints = cons;
        chain.rest_positions = rest;
        assert_int_equal(
            t_solve((t_solver)s, &chain, kind == 0 ? ik_vec3_zero() : ik_vec3_make(0.5, 0.2, -0.3),
                    (ik_real)1e-3, 10, &res),
            IK_OK);
        if (t_max_length_error(p, len, 3) > T_LEN_REL) {
          print_error("%s, %s, case %d: bone length off by %g (relative)\n", t_solver_names[s],
                      kind == 0 ? "cone" : "hinge", k, t_max_length_error(p, len, 3));
          fail();
        }
      }
    }
  }
}

/* A straight chain aimed at a target on its own line, inside its reach: there is no
 * side to bend to, and each solver has to make one, then reach the target. */
static void straight_chain_reaches_a_target_on_its_line(void **state) {
  int s, n;
  (void)state;
  for (s = 0; s < T_TWO_BONE; s++) {
    for (n = 3; n <= 6; n++) {
      ik_vec3 p[6];
      ik_real len[5];
      ik_chain chain;
      ik_result res;
      int i;
      for (i = 0; i < n; i++) p[i] = ik_vec3_make(0, -(ik_real)i / (ik_real)(n - 1), 0);
      ik_measure_lengths(p, n, len);
      ik_chain_init(&chain, p, n, len);
      assert_int_equal(
          t_solve((t_solver)s, &chain, ik_vec3_make(0, (ik_real)-0.8, 0), (ik_real)1e-4, 60, &res), IK_OK);
      if (!res.reached) {
        print_error("%s, %d joints: %g from the target\n", t_solver_names[s], n, (double)res.distance);
        fail();
      }
      assert_near(t_max_length_error(p, len, n), 0, T_LEN_REL);
    }
  }
}

/* A straight chain with a one-sided hinge (a knee), a target on its line: the chain
 * must bend the one way the hinge allows, in the hinge's plane as its parent carries it
 * (the base turned about the line, or not). Bent any other way, the constraint pass
 * clamps it straight again, and it never moves. */
static void straight_chain_bends_the_way_its_one_sided_hinge_allows(void **state) {
  int s, n, hinged, sign, turned;
  (void)state;
  for (s = 0; s < T_TWO_BONE; s++) {
    for (n = 3; n <= 6; n++) {
      /* Not on the last bone of a longer chain: CCD gets stuck there (its last joint
       * aims the tip straight back, against the hinge), whichever way it bends first. */
      for (hinged = 1; hinged + 1 < n && (n <= 4 || hinged + 2 < n); hinged++) {
        for (sign = -1; sign <= 1; sign += 2) {
          for (turned = 0; turned < 2; turned++) {
            ik_vec3 p[6], rest[6];
            ik_real len[5];
            ik_constraint cons[5];
            ik_chain chain;
            ik_result res;
            int i;
            for (i = 0; i < n; i++) p[i] = rest[i] = ik_vec3_make(0, -(ik_real)i, 0);
            ik_measure_lengths(p, n, len);
            memset(cons, 0, sizeof cons);
            cons[hinged].type = IK_CONSTRAINT_HINGE;
            cons[hinged].axis = ik_vec3_make(1, 0, 0);
            cons[hinged].min = sign > 0 ? 0 : (ik_real)-2.5;
            cons[hinged].max = sign > 0 ? (ik_real)2.5 : 0;
            ik_chain_init(&chain, p, n, len);
            chain.constraints = cons;
            chain.rest_positions = rest;
            if (turned) chain.base_rotation = ik_quat_axis_angle(ik_vec3_make(0, 1, 0), (ik_real)1.2);
            assert_int_equal(
                t_solve((t_solver)s, &chain, ik_vec3_make(0, (ik_real)-0.7 * (ik_real)(n - 1), 0),
                        (ik_real)1e-4, 100, &res),
                IK_OK);
            if (!res.reached) {
              print_error("%s, %d joints, hinge on bone %d, range of sign %d, base %s: %g from the target\n",
                          t_solver_names[s], n, hinged, sign, turned ? "turned" : "at rest",
                          (double)res.distance);
              fail();
            }
            assert_near(ik_chain_constraint_violation(&chain, NULL), 0, T_CONSTRAINT_RAD);
          }
        }
      }
    }
  }
}

/* With a pole, a limb bends to the pole's side, whatever the solver. */
static void bend_is_on_the_pole_side(void **state) {
  t_rng r = t_rng_make(99);
  int s, k;
  (void)state;
  for (s = 0; s < T_SOLVER_COUNT; s++) {
    for (k = 0; k < t_cases(200); k++) {
      ik_vec3 p[3], axis, elbow_flat, pole_flat;
      ik_real len[2];
      ik_chain chain;
      ik_result res;
      ik_vec3 target, pole;
      t_random_chain(&r, p, len, 3, 0.5, 1.5, 2.0);
      target = ik_vec3_scale(t_unit_vector(&r), (len[0] + len[1]) * (ik_real)t_uniform(&r, 0.3, 0.9));
      if (ik_vec3_dist(target, ik_vec3_zero()) < ik_fabs(len[0] - len[1]) * (ik_real)1.2) continue;
      pole = ik_vec3_add(ik_vec3_scale(target, (ik_real)0.5), ik_vec3_scale(t_unit_vector(&r), 3));
      ik_chain_init(&chain, p, 3, len);
      chain.has_pole = 1;
      chain.pole = pole;
      assert_int_equal(t_solve((t_solver)s, &chain, target, (ik_real)1e-4, 100, &res), IK_OK);
      axis = ik_vec3_normalize(ik_vec3_sub(p[2], p[0]));
      elbow_flat = ik_vec3_project_on_plane(p[1], axis);
      pole_flat = ik_vec3_project_on_plane(pole, axis);
      if (ik_vec3_len2(pole_flat) < (ik_real)0.01) continue; /* pole on the axis: no side */
      if (!(ik_vec3_dot(elbow_flat, pole_flat) > 0)) {
        print_error("%s bent away from the pole (case %d)\n", t_solver_names[s], k);
        fail();
      }
    }
  }
}

/* ---- CCD and DLS: the same cases by name ---- */

/* A chain over its own arrays, and what one solve of it is asked and answers. */
typedef struct rot_case {
  ik_vec3 p[MAXJ];
  ik_real len[MAXJ];
  ik_chain chain;
  ik_vec3 target;
  ik_real tolerance;
  int max_iterations;
  ik_result result;
} rot_case;

/* The chain over f's arrays as they are now, with the jobs' defaults. */
static void case_make(rot_case *f, int count, ik_vec3 target) {
  ik_chain_init(&f->chain, f->p, count, f->len);
  f->target = target;
  f->tolerance = (ik_real)1e-3;
  f->max_iterations = 10;
}

/* A straight chain of unit bones along +X. */
static void case_straight(rot_case *f, int count, ik_vec3 target) {
  t_straight_chain(f->p, count, 1);
  ik_measure_lengths(f->p, count, f->len);
  case_make(f, count, target);
}

static ik_status case_solve(t_solver s, rot_case *f) {
  return t_solve(s, &f->chain, f->target, f->tolerance, f->max_iterations, &f->result);
}

static void case_lengths_and_root(const rot_case *f, ik_vec3 root) {
  assert_near(t_max_length_error(f->p, f->len, f->chain.count), 0, T_LEN_REL);
  assert_memory_equal(&f->p[0], &root, sizeof root);
}

/* Solves and checks what every case here asks: lengths kept, root in place, reached. */
static void case_reaches(t_solver s, rot_case *f, ik_vec3 root) {
  assert_int_equal(case_solve(s, f), IK_OK);
  case_lengths_and_root(f, root);
  assert_true(f->result.reached);
}

/* Offset of joint i from the line root -> tip. */
static ik_vec3 off_axis(const rot_case *f, int i) {
  int n = f->chain.count;
  ik_vec3 axis = ik_vec3_normalize(ik_vec3_sub(f->p[n - 1], f->p[0]));
  return ik_vec3_project_on_plane(ik_vec3_sub(f->p[i], f->p[0]), axis);
}

static void pole_bends_the_middle_joint_of_three_towards_it(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    ik_vec3 side;
    case_straight(&f, 3, ik_vec3_make((ik_real)1.2, 0, 0));
    f.p[1] = ik_vec3_make((ik_real)0.7, (ik_real)0.7, 0); /* bent towards +Y */
    f.p[2] = ik_vec3_make((ik_real)1.4, 0, 0);
    f.len[0] = f.len[1] = 1;
    f.chain.has_pole = 1;
    f.chain.pole = ik_vec3_make((ik_real)0.7, 0, -5); /* wants the bend towards -Z */
    case_reaches(s, &f, ik_vec3_zero());
    side = off_axis(&f, 1);
    assert_true(side.z < (ik_real)-0.5);
    /* In the plane of root, tip and pole; the tip is only within tolerance of y = 0. */
    assert_near(side.y, 0, f.tolerance);
  }
}

static void pole_bends_both_inner_joints_of_four_towards_it(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    case_straight(&f, 4, ik_vec3_make(2, 0, 0));
    f.p[1] = ik_vec3_make((ik_real)0.8, (ik_real)0.6, 0); /* bent towards +Y */
    f.p[2] = ik_vec3_make((ik_real)1.8, (ik_real)0.6, 0);
    f.p[3] = ik_vec3_make((ik_real)2.6, 0, 0);
    f.chain.has_pole = 1;
    f.chain.pole = ik_vec3_make(1, 0, -5);
    f.max_iterations = 50;
    case_reaches(s, &f, ik_vec3_zero());
    /* Without the pole both stay in z = 0. The shared pole pass turns joint 1 first,
     * about an axis that joint 2 still tilts, so joint 1 turns less. */
    assert_true(off_axis(&f, 1).z < (ik_real)-0.1);
    assert_true(off_axis(&f, 2).z < (ik_real)-0.5);
  }
}

static void folded_chain_unfolds_without_losing_a_bone(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    int i;
    /* Bones doubled back on each other: joints 0, 2, 4 coincide, and 1, 3. */
    for (i = 0; i < 5; i++) f.p[i] = ik_vec3_make((ik_real)(i % 2), 0, 0);
    for (i = 0; i < 4; i++) f.len[i] = 1;
    case_make(&f, 5, ik_vec3_make(0, (ik_real)2.5, 0));
    f.max_iterations = 100;
    case_reaches(s, &f, ik_vec3_zero());
  }
}

static void all_joints_coincident_unfold_to_their_lengths(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    int i;
    for (i = 0; i < 6; i++) f.p[i] = ik_vec3_make(1, 1, 1);
    for (i = 0; i < 5; i++) f.len[i] = (ik_real)0.5 + (ik_real)i * (ik_real)0.1;
    case_make(&f, 6, ik_vec3_make(2, 2, 1));
    f.max_iterations = 100;
    case_reaches(s, &f, ik_vec3_make(1, 1, 1));
  }
}

static void target_at_the_root_folds_the_chain_onto_it(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    ik_real tip_dist;
    case_straight(&f, 5, ik_vec3_zero());
    f.max_iterations = 100;
    case_reaches(s, &f, ik_vec3_zero());
    /* The result describes the chain as it is. */
    tip_dist = ik_vec3_dist(f.p[4], f.target);
    assert_near(f.result.distance, tip_dist, 0);
    assert_int_equal(f.result.reached, tip_dist <= f.tolerance);
  }
}

static void target_on_a_joint_is_reached(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    case_straight(&f, 5, ik_vec3_make(2, 0, 0)); /* joint 2 sits on the target */
    f.p[3] = ik_vec3_make(2, 1, 0);
    f.p[4] = ik_vec3_make(2, 2, 0);
    f.max_iterations = 100;
    case_reaches(s, &f, ik_vec3_zero());
  }
}

/* Every joint already points the tip at the target: CCD's minimal rotations are all the
 * identity, and every r_i of DLS is parallel to the error (in J's null space), so
 * neither moves unless it detects the stall. */
static void straight_chain_with_target_straight_ahead_bends_to_reach_it(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    case_straight(&f, 5, ik_vec3_make((ik_real)2.5, 0, 0));
    f.max_iterations = 100;
    case_reaches(s, &f, ik_vec3_zero());
  }
}

/* In the plane z = 0 every turn is about Z and z stays 0; in a turned plane rounding
 * moves joints, and the solver must not amplify it (T_PLANE_REL of the chain's size). */
static void planar_chain_and_target_stay_in_their_plane(void **state) {
  t_solver s;
  (void)state;
  for (s = T_CCD; s <= T_DLS; s++) {
    rot_case f;
    t_rng r = t_rng_make(505);
    int k, i;
    for (k = 0; k < t_cases(400); k++) {
      ik_quat frame = k % 2 ? t_unit_quat(&r) : ik_quat_identity();
      ik_vec3 normal = ik_quat_rotate(frame, ik_vec3_make(0, 0, 1));
      int n = t_int(&r, 3, 40);
      ik_real angle = (ik_real)t_uniform(&r, -3, 3), total;
      double off_plane = 0;
      f.p[0] = ik_vec3_zero();
      for (i = 1; i < n; i++) {
        ik_real l = (ik_real)t_uniform(&r, 0.1, 2);
        angle += (ik_real)t_uniform(&r, -1, 1);
        f.p[i] = ik_vec3_add(f.p[i - 1], ik_vec3_make(l * ik_cos(angle), l * ik_sin(angle), 0));
      }
      for (i = 0; i < n; i++) f.p[i] = ik_quat_rotate(frame, f.p[i]);
      total = ik_measure_lengths(f.p, n, f.len);
      angle = (ik_real)t_uniform(&r, -3, 3);
      case_make(&f, n,
                ik_quat_rotate(frame, ik_vec3_scale(ik_vec3_make(ik_cos(angle), ik_sin(angle), 0),
                                                    total * (ik_real)t_uniform(&r, 0.05, 0.95))));
      f.max_iterations = 30;
      assert_int_equal(case_solve(s, &f), IK_OK);
      case_lengths_and_root(&f, ik_vec3_zero());
      for (i = 0; i < n; i++) {
        double d = (double)ik_fabs(ik_vec3_dot(f.p[i], normal));
        if (d > off_plane) off_plane = d;
      }
      if (k % 2 == 0) {
        for (i = 0; i < n; i++) assert_near(f.p[i].z, 0, T_EPS);
      } else {
        assert_near(off_plane, 0, T_PLANE_REL * (double)total);
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fabrik_properties),
      cmocka_unit_test(fabrik_constrained_properties),
      cmocka_unit_test(ccd_properties),
      cmocka_unit_test(ccd_constrained_properties),
      cmocka_unit_test(dls_properties),
      cmocka_unit_test(dls_constrained_properties),
      cmocka_unit_test(two_bone_properties),
      cmocka_unit_test(more_iterations_never_end_further_away),
      cmocka_unit_test(bend_is_on_the_pole_side),
      cmocka_unit_test(bones_opposite_or_along_an_axis_keep_their_lengths),
      cmocka_unit_test(straight_chain_reaches_a_target_on_its_line),
      cmocka_unit_test(straight_chain_bends_the_way_its_one_sided_hinge_allows),
      cmocka_unit_test(pole_bends_the_middle_joint_of_three_towards_it),
      cmocka_unit_test(pole_bends_both_inner_joints_of_four_towards_it),
      cmocka_unit_test(folded_chain_unfolds_without_losing_a_bone),
      cmocka_unit_test(all_joints_coincident_unfold_to_their_lengths),
      cmocka_unit_test(target_at_the_root_folds_the_chain_onto_it),
      cmocka_unit_test(target_on_a_joint_is_reached),
      cmocka_unit_test(straight_chain_with_target_straight_ahead_bends_to_reach_it),
      cmocka_unit_test(planar_chain_and_target_stay_in_their_plane),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
