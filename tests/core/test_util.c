#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void t_assert_near(double a, double b, double tol, const char *what, const char *file, int line) {
  if (!(fabs(a - b) <= tol)) {
    print_error("%s = %.17g, expected %.17g (tolerance %g)\n", what, a, b, tol);
    _fail(file, line);
  }
}

void t_assert_vec3_near(ik_vec3 a, ik_vec3 b, double tol, const char *what, const char *file, int line) {
  double d = (double)ik_vec3_dist(a, b);
  if (!(d <= tol)) {
    print_error("%s = (%.12g, %.12g, %.12g), expected (%.12g, %.12g, %.12g): off by %g (tolerance %g)\n",
                what, (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y, (double)b.z, d, tol);
    _fail(file, line);
  }
}

void t_assert_quat_near(ik_quat a, ik_quat b, double tol, const char *what, const char *file, int line) {
  double d = (double)ik_quat_angle_between(ik_quat_normalize(a), ik_quat_normalize(b));
  if (!(d <= tol)) {
    print_error("%s = (%.12g, %.12g, %.12g, %.12g), expected (%.12g, %.12g, %.12g, %.12g): %g rad apart\n",
                what, (double)a.x, (double)a.y, (double)a.z, (double)a.w, (double)b.x, (double)b.y,
                (double)b.z, (double)b.w, d);
    _fail(file, line);
  }
}

t_rng t_rng_make(uint64_t seed) {
  t_rng r;
  r.state = seed;
  return r;
}

static uint64_t next_u64(t_rng *r) {
  uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double t_uniform(t_rng *r, double lo, double hi) {
  return lo + (hi - lo) * ((double)(next_u64(r) >> 11) * (1.0 / 9007199254740992.0));
}

int t_int(t_rng *r, int lo, int hi) { return lo + (int)(next_u64(r) % (uint64_t)(hi - lo + 1)); }

ik_vec3 t_unit_vector(t_rng *r) {
  for (;;) {
    ik_vec3 v = ik_vec3_make((ik_real)t_uniform(r, -1, 1), (ik_real)t_uniform(r, -1, 1),
                             (ik_real)t_uniform(r, -1, 1));
    double l2 = (double)ik_vec3_len2(v);
    if (l2 > 0.01 && l2 <= 1) return ik_vec3_normalize(v);
  }
}

ik_quat t_unit_quat(t_rng *r) {
  ik_vec3 axis = t_unit_vector(r);
  return ik_quat_axis_angle(axis, (ik_real)t_uniform(r, -3.14159, 3.14159));
}

void t_straight_chain(ik_vec3 *p, int count, ik_real bone) {
  int i;
  for (i = 0; i < count; i++) p[i] = ik_vec3_make(bone * (ik_real)i, 0, 0);
}

void t_random_chain(t_rng *r, ik_vec3 *p, ik_real *lengths, int count, double min_len, double max_len,
                    double max_bend) {
  ik_vec3 dir = t_unit_vector(r);
  int i;
  p[0] = ik_vec3_zero();
  for (i = 1; i < count; i++) {
    ik_vec3 axis = ik_vec3_any_perpendicular(dir);
    ik_quat spin = ik_quat_axis_angle(dir, (ik_real)t_uniform(r, -3.14159, 3.14159));
    ik_quat bend = ik_quat_axis_angle(ik_quat_rotate(spin, axis), (ik_real)t_uniform(r, 0, max_bend));
    ik_real len = (ik_real)t_uniform(r, min_len, max_len);
    dir = ik_vec3_normalize(ik_quat_rotate(bend, dir));
    p[i] = ik_vec3_madd(p[i - 1], dir, len);
    lengths[i - 1] = ik_vec3_dist(p[i], p[i - 1]);
  }
}

double t_max_length_error(const ik_vec3 *p, const ik_real *lengths, int count) {
  double worst = 0;
  int i;
  for (i = 0; i + 1 < count; i++) {
    double e = fabs((double)ik_vec3_dist(p[i], p[i + 1]) - (double)lengths[i]) / (double)lengths[i];
    if (e > worst) worst = e;
  }
  return worst;
}

int t_cases(int n) {
  const char *env = getenv("IK_TEST_SCALE");
  double scale = env ? strtod(env, NULL) : 1.0;
  int scaled;
  if (!(scale > 0 && scale <= 1)) scale = 1.0;
  scaled = (int)((double)n * scale);
  return scaled < 1 ? 1 : scaled;
}

void t_random_constraints(t_rng *r, ik_constraint *cons, int bones) {
  int i;
  for (i = 0; i < bones; i++) {
    memset(&cons[i], 0, sizeof cons[i]);
    if (i % 2 == 0) {
      cons[i].type = IK_CONSTRAINT_CONE;
      cons[i].angle = (ik_real)t_uniform(r, 0.05, 1.2);
    } else {
      cons[i].type = IK_CONSTRAINT_HINGE;
      cons[i].axis = ik_vec3_make(0, 0, 1);
      cons[i].min = (ik_real)t_uniform(r, -1.5, 0);
      cons[i].max = (ik_real)t_uniform(r, 0, 1.5);
    }
  }
}
