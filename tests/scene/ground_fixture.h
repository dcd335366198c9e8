/*
 * ground_fixture.h: grounds for the scene tests, each in a malloc'd block of its own
 * (the tests may allocate; ikrig does not). Each maker fails the test on refusal.
 */
#ifndef IK_GROUND_FIXTURE_H
#define IK_GROUND_FIXTURE_H

#include <stdlib.h>

#include "ik_ground.h"
#include "test_util.h"

typedef struct owned_ground {
  void *mem;
  ik_ground *g;
} owned_ground;

static inline void release(owned_ground *o) {
  free(o->mem);
  o->mem = NULL;
  o->g = NULL;
}

/* A block of `size` bytes (which must be non-zero: a size function said yes). */
static inline owned_ground owned_block(size_t size) {
  owned_ground o;
  assert_true(size > 0);
  o.mem = malloc(size);
  o.g = NULL;
  assert_non_null(o.mem);
  return o;
}

static inline owned_ground make_plane(ik_vec3 point, ik_vec3 normal) {
  const size_t size = ik_ground_plane_size();
  owned_ground o = owned_block(size);
  assert_int_equal(ik_ground_plane_init(o.mem, size, point, normal, &o.g, NULL), IK_OK);
  return o;
}

static inline owned_ground make_heightfield(ik_vec3 origin, ik_real cell, int columns, int rows,
                                            const ik_real *heights) {
  const size_t size = ik_ground_heightfield_size(columns, rows);
  owned_ground o = owned_block(size);
  assert_int_equal(ik_ground_heightfield_init(o.mem, size, origin, cell, columns, rows, heights, &o.g, NULL),
                   IK_OK);
  return o;
}

static inline owned_ground make_mesh(const ik_vec3 *vertices, int vertex_count, const int *triangles,
                                     int triangle_count) {
  const size_t size = ik_ground_mesh_size(vertex_count, triangle_count);
  owned_ground o = owned_block(size);
  assert_int_equal(
      ik_ground_mesh_init(o.mem, size, vertices, vertex_count, triangles, triangle_count, &o.g, NULL), IK_OK);
  return o;
}

static inline owned_ground make_custom(ik_ground_raycast_fn raycast, void *user) {
  const size_t size = ik_ground_custom_size();
  owned_ground o = owned_block(size);
  assert_int_equal(ik_ground_custom_init(o.mem, size, raycast, user, &o.g, NULL), IK_OK);
  return o;
}

static inline ik_vec3 v3(double x, double y, double z) {
  return ik_vec3_make((ik_real)x, (ik_real)y, (ik_real)z);
}

#endif /* IK_GROUND_FIXTURE_H */
