/*
 * test_util.h: what the C tests share: cmocka, tolerances by scalar type, a seeded
 * random generator and chain builders. Comparators live here and nowhere else.
 */
#ifndef IK_TEST_UTIL_H
#define IK_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the four headers above first. */
#include <cmocka.h>

#include "ik.h"

/* Relative tolerance on a bone length after a solve, and a generic "exact" tolerance. */
#ifdef IK_REAL_FLOAT
#define T_LEN_REL 1e-4
#define T_EPS 1e-4
#else
#define T_LEN_REL 1e-9
#define T_EPS 1e-9
#endif
/* Constraints may be broken by rounding only: the bound in double. In float,
 * positions themselves carry ~1e-7 relative error, so a short bone far from the origin
 * has a direction good to ~1e-5 rad at best. Planar chains: a hinge axis carried
 * across a bone that folds nearly straight back (a near half turn) is good to ~1e-4 in
 * float, and tilts the next bone's plane by as much. */
#ifdef IK_REAL_FLOAT
#define T_CONSTRAINT_RAD 1e-4
#define T_PLANE_REL 1e-3
#else
#define T_CONSTRAINT_RAD 1e-6
#define T_PLANE_REL 1e-10
#endif

/* Fails the test, printing both values, when |a - b| > tol. */
#define assert_near(a, b, tol) t_assert_near((double)(a), (double)(b), (double)(tol), #a, __FILE__, __LINE__)
#define assert_vec3_near(a, b, tol) t_assert_vec3_near((a), (b), (double)(tol), #a, __FILE__, __LINE__)
/* Same rotation (q and -q equal) within tol radians. */
#define assert_quat_near(a, b, tol) t_assert_quat_near((a), (b), (double)(tol), #a, __FILE__, __LINE__)

void t_assert_near(double a, double b, double tol, const char *what, const char *file, int line);
void t_assert_vec3_near(ik_vec3 a, ik_vec3 b, double tol, const char *what, const char *file, int line);
void t_assert_quat_near(ik_quat a, ik_quat b, double tol, const char *what, const char *file, int line);

/* Deterministic generator (splitmix64): the same seed gives the same chains everywhere. */
typedef struct t_rng {
  uint64_t state;
} t_rng;
t_rng t_rng_make(uint64_t seed);
double t_uniform(t_rng *r, double lo, double hi);
int t_int(t_rng *r, int lo, int hi); /* inclusive */
ik_vec3 t_unit_vector(t_rng *r);
ik_quat t_unit_quat(t_rng *r);

/* A straight chain along +X from the origin: count joints, unit bones. */
void t_straight_chain(ik_vec3 *p, int count, ik_real bone);
/* A random chain: bone lengths in [min_len, max_len], directions random within
 * `max_bend` radians of the previous bone; root at the origin. Lengths out. */
/* Constraints for `bones` bones: cones (0.05 to 1.2 rad) on even bones, hinges about +Z
 * (min in [-1.5, 0], max in [0, 1.5]) on odd ones; the property tests' mix. */
void t_random_constraints(t_rng *r, ik_constraint *cons, int bones);
void t_random_chain(t_rng *r, ik_vec3 *p, ik_real *lengths, int count, double min_len, double max_len,
                    double max_bend);
/* The README's first chain on a chain already holding 4 joints: a 60-degree cone on
 * bone 1 (cons, 3 entries, filled) and the pole at (1, 2, 0); its target is
 * (1.5, 1.5, 0). */
void t_readme_pole_and_cone(ik_chain *chain, ik_constraint *cons);
/* Max relative error |measured - expected| / expected over the bones. */
double t_max_length_error(const ik_vec3 *p, const ik_real *lengths, int count);

/* How many random cases a property test runs: n times $IK_TEST_SCALE (a factor in
 * (0, 1], default 1), at least 1. Under valgrind, 50 times slower, the test command
 * runs them at a quarter. */
int t_cases(int n);

#endif /* IK_TEST_UTIL_H */
