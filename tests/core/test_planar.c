/* Planar chains: joints and target in one plane stay in it, for every solver, with
 * hinge axes normal to the plane. */
#include <string.h>

#include "ik_internal.h"
#include "solve_any.h"
#include "test_util.h"

#define MAXJ 40

/* Largest distance of any joint from the plane through the origin with normal n. */
static double off_plane(const ik_vec3 *p, int n, ik_vec3 normal) {
  double worst = 0;
  int i;
  for (i = 0; i < n; i++) {
    double d = (double)ik_fabs(ik_vec3_dot(p[i], normal));
    if (d > worst) worst = d;
  }
  return worst;
}

/* How check_solver draws its cases. */
typedef struct planar_cases {
  int cases, max_joints, iterations;
  double bend;                 /* largest turn between consecutive rest bones, radians */
  double limit;                /* every bone hinged about the normal, in [-limit, limit]; 0: none */
  double reach_min, reach_max; /* the target's distance from the root, of the length */
  int turned;                  /* every case in a turned frame (else every other) */
} planar_cases;

/* A random chain in the plane z = 0, then everything turned by `frame`. */
static void planar_chain(t_rng *r, ik_quat frame, ik_vec3 *p, ik_real *len, int n, double bend) {
  ik_real angle = (ik_real)t_uniform(r, -3, 3);
  int i;
  p[0] = ik_vec3_zero();
  for (i = 1; i < n; i++) {
    ik_real l = (ik_real)t_uniform(r, 0.2, 1.5);
    angle += (ik_real)t_uniform(r, -bend, bend);
    p[i] = ik_vec3_add(p[i - 1], ik_vec3_make(l * ik_cos(angle), l * ik_sin(angle), 0));
  }
  for (i = 0; i < n; i++) p[i] = ik_quat_rotate(frame, p[i]);
  ik_measure_lengths(p, n, len);
}

static void check_solver(t_solver s, const planar_cases *c) {
  ik_vec3 p[MAXJ], rest[MAXJ];
  ik_real len[MAXJ];
  ik_constraint cons[MAXJ];
  t_rng r = t_rng_make(1234 + (uint64_t)s);
  int k, i;
  for (k = 0; k < c->cases; k++) {
    ik_quat frame = c->turned || k % 2 ? t_unit_quat(&r) : ik_quat_identity();
    ik_vec3 normal = ik_quat_rotate(frame, ik_vec3_make(0, 0, 1));
    int n = s == T_TWO_BONE ? 3 : t_int(&r, 3, c->max_joints);
    ik_real total;
    ik_vec3 target;
    ik_chain chain;
    ik_result res;
    planar_chain(&r, frame, p, len, n, c->bend);
    memcpy(rest, p, sizeof(ik_vec3) * (size_t)n);
    total = ik_measure_lengths(p, n, NULL);
    target = ik_quat_rotate(frame, ik_vec3_scale(ik_vec3_make(ik_cos((ik_real)k), ik_sin((ik_real)k), 0),
                                                 total * (ik_real)t_uniform(&r, c->reach_min, c->reach_max)));
    ik_chain_init(&chain, p, n, len);
    if (k % 5 == 0) {
      chain.has_pole = 1; /* a pole in the plane keeps the bend in it */
      chain.pole = ik_quat_rotate(frame, ik_vec3_make(0, 3, 0));
    }
    if (c->limit > 0) {
      for (i = 0; i + 1 < n; i++) {
        memset(&cons[i], 0, sizeof cons[i]);
        cons[i].type = IK_CONSTRAINT_HINGE;
        cons[i].axis = normal;
        cons[i].min = (ik_real)-c->limit;
        cons[i].max = (ik_real)c->limit;
      }
      chain.constraints = cons;
      chain.rest_positions = rest;
    }
    assert_int_equal(t_solve(s, &chain, target, (ik_real)1e-3, c->iterations, &res), IK_OK);
    if (off_plane(p, n, normal) > T_PLANE_REL * (double)total) {
      print_error("%s left the plane by %g (case %d, %d joints)\n", t_solver_names[s],
                  off_plane(p, n, normal), k, n);
      fail();
    }
    if (c->limit > 0) assert_near(ik_chain_constraint_violation(&chain, NULL), 0, T_CONSTRAINT_RAD);
  }
}

/* Chains of up to 40 joints, gently bent, targets mostly within reach. */
static const planar_cases gentle = {200, MAXJ, 30, 1, 0, 0.05, 1.2, 0};
static const planar_cases gentle_hinged = {200, MAXJ, 30, 1, 2, 0.05, 1.2, 0};
/* Short chains folded at rest, every bone (the first, which has no parent, too) hinged,
 * targets near the root and so often out of reach under the limits: solvers swing the
 * first bone round by about a half turn, where carrying the hinge axes by the minimal
 * rotation alone tilted them (FABRIK and DLS left the plane by up to 0.56 of the
 * length, in 1 case of 1,000 or so). */
static const planar_cases folded_hinged = {5000, 8, 60, 3, 2.5, 0.02, 0.6, 1};

static void fabrik_stays_planar(void **state) {
  (void)state;
  check_solver(T_FABRIK, &gentle);
}
static void ccd_stays_planar(void **state) {
  (void)state;
  check_solver(T_CCD, &gentle);
}
static void dls_stays_planar(void **state) {
  (void)state;
  check_solver(T_DLS, &gentle);
}
static void two_bone_stays_planar(void **state) {
  (void)state;
  check_solver(T_TWO_BONE, &gentle);
}
static void fabrik_with_hinges_stays_planar(void **state) {
  (void)state;
  check_solver(T_FABRIK, &gentle_hinged);
}
static void ccd_with_hinges_stays_planar(void **state) {
  (void)state;
  check_solver(T_CCD, &gentle_hinged);
}
static void dls_with_hinges_stays_planar(void **state) {
  (void)state;
  check_solver(T_DLS, &gentle_hinged);
}
static void fabrik_folded_back_stays_planar(void **state) {
  (void)state;
  check_solver(T_FABRIK, &folded_hinged);
}
static void ccd_folded_back_stays_planar(void **state) {
  (void)state;
  check_solver(T_CCD, &folded_hinged);
}
static void dls_folded_back_stays_planar(void **state) {
  (void)state;
  check_solver(T_DLS, &folded_hinged);
}

/* A folded planar chain unfolds in its own plane. */
static void folded_planar_chain_unfolds_in_plane(void **state) {
  int s;
  (void)state;
  for (s = 0; s < T_TWO_BONE; s++) {
    ik_vec3 p[5] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 1, 0}};
    ik_real len[4] = {1, 1, 1, 1};
    ik_chain chain;
    ik_result res;
    ik_chain_init(&chain, p, 5, len);
    assert_int_equal(t_solve((t_solver)s, &chain, ik_vec3_make(2, 2, 0), (ik_real)1e-3, 50, &res), IK_OK);
    assert_near(off_plane(p, 5, ik_vec3_make(0, 0, 1)), 0, 1e-9);
    assert_near(t_max_length_error(p, len, 5), 0, T_LEN_REL);
  }
}

/* ik__plane_kept: a normal passed in comes back bit for bit while the chain and the
 * target lie in its plane to rounding (here a normal tilted by rounding-sized amounts,
 * which finding the plane again would straighten); once a joint leaves the plane, or
 * there is no normal, the plane is found again. */
static void a_plane_is_kept_while_the_chain_lies_in_it(void **state) {
  ik_vec3 p[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {2, 1, 0}};
  const ik_vec3 target = ik_vec3_make((ik_real)1.5, (ik_real)0.5, 0);
  const ik_vec3 tilted = ik_vec3_normalize(ik_vec3_make(16 * IK_REAL_EPSILON, 0, 1));
  ik_vec3 kept, found;
  (void)state;
  kept = ik__plane_kept(p, 4, target, tilted, 3);
  assert_memory_equal(&kept, &tilted, sizeof kept);
  found = ik__plane_normal(p, 4, target, 3);
  assert_near(ik_fabs(found.z), 1, 0);
  kept = ik__plane_kept(p, 4, target, ik_vec3_zero(), 3);
  assert_memory_equal(&kept, &found, sizeof kept);
  p[3].z = (ik_real)0.01; /* out of the plane: the chain spans space */
  kept = ik__plane_kept(p, 4, target, tilted, 3);
  assert_near(ik_vec3_len(kept), 0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fabrik_stays_planar),
      cmocka_unit_test(ccd_stays_planar),
      cmocka_unit_test(dls_stays_planar),
      cmocka_unit_test(two_bone_stays_planar),
      cmocka_unit_test(fabrik_with_hinges_stays_planar),
      cmocka_unit_test(ccd_with_hinges_stays_planar),
      cmocka_unit_test(dls_with_hinges_stays_planar),
      cmocka_unit_test(fabrik_folded_back_stays_planar),
      cmocka_unit_test(ccd_folded_back_stays_planar),
      cmocka_unit_test(dls_folded_back_stays_planar),
      cmocka_unit_test(folded_planar_chain_unfolds_in_plane),
      cmocka_unit_test(a_plane_is_kept_while_the_chain_lies_in_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
