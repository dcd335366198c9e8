/* The baseline the benchmarks compare against: FABRIK written straight from the
 * seed's pseudocode, in plain C, with no job, validation or extras. */
#ifndef IK_BASELINE_FABRIK_H
#define IK_BASELINE_FABRIK_H

#include "ik_math.h"

/* Returns 1 when the tip ends within tolerance; *iterations gets the sweeps done. */
int baseline_fabrik(ik_vec3 *p, const ik_real *lengths, int n, ik_vec3 target, int max_iterations,
                    ik_real tolerance, int *iterations);

#endif
