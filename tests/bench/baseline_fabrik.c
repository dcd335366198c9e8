#include "baseline_fabrik.h"

static ik_vec3 safe_dir(ik_vec3 v) {
  ik_real sq = v.x * v.x + v.y * v.y + v.z * v.z;
  if (sq > (ik_real)1e-12) {
    ik_real len = ik_sqrt(sq);
    return ik_vec3_make(v.x / len, v.y / len, v.z / len);
  }
  return ik_vec3_make(0, 1, 0);
}

int baseline_fabrik(ik_vec3 *p, const ik_real *lengths, int n, ik_vec3 target, int max_iterations,
                    ik_real tolerance, int *iterations) {
  ik_vec3 root = p[0];
  ik_real total = 0, tol_sq = tolerance * tolerance;
  int i, iter;
  *iterations = 0;
  for (i = 0; i < n - 1; i++) total += lengths[i];
  if (ik_vec3_len2(ik_vec3_sub(target, root)) >= total * total) {
    ik_vec3 dir = safe_dir(ik_vec3_sub(target, root));
    for (i = 1; i < n; i++) p[i] = ik_vec3_add(p[i - 1], ik_vec3_scale(dir, lengths[i - 1]));
    return 0;
  }
  for (iter = 0; iter < max_iterations; iter++) {
    *iterations = iter + 1;
    p[n - 1] = target;
    for (i = n - 2; i >= 0; i--)
      p[i] = ik_vec3_add(p[i + 1], ik_vec3_scale(safe_dir(ik_vec3_sub(p[i], p[i + 1])), lengths[i]));
    p[0] = root;
    for (i = 1; i < n; i++)
      p[i] = ik_vec3_add(p[i - 1], ik_vec3_scale(safe_dir(ik_vec3_sub(p[i], p[i - 1])), lengths[i - 1]));
    if (ik_vec3_len2(ik_vec3_sub(p[n - 1], target)) < tol_sq) return 1;
  }
  return 0;
}
