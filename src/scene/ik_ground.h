/*
 * ik_ground.h: ray queries against the ground a character stands on.
 *
 * One opaque type, ik_ground, of four kinds:
 *   plane        a point and a normal;
 *   heightfield  a regular grid of heights (y up), each cell two triangles, marched cell
 *                by cell along the ray;
 *   mesh         any triangles, with a bounding volume hierarchy built at init;
 *   custom       a C callback (the Lua binding wraps a Lua function in one).
 *
 * Memory: ikrig allocates nothing. For each kind, *_size() says how many bytes the
 * ground needs and *_init() builds it inside the caller's buffer (any alignment; a Lua
 * userdata, a malloc block, a static array), copying what it needs from the inputs, so
 * the inputs may be freed after init. The buffer must not move or be freed while the
 * ground is in use; there is nothing to destroy. Init refuses bad input with a status,
 * fills err (when non-NULL) with the field and index at fault, and then leaves *out
 * untouched.
 *
 * Queries (ik_ground_raycast) allocate nothing, keep no state and only read the ground:
 * any number of threads may query one ground at once (a custom ground is as thread-safe
 * as its callback).
 *
 * All positions and directions are in one space of the caller's choosing (usually world
 * space, "_ws"); distances are in that space's unit.
 */
#ifndef IK_GROUND_H
#define IK_GROUND_H

#include <stddef.h>

#include "ik_api.h"
#include "ik_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ik_ground ik_ground;

typedef enum ik_ground_kind {
  IK_GROUND_PLANE = 0,
  IK_GROUND_HEIGHTFIELD,
  IK_GROUND_MESH,
  IK_GROUND_CUSTOM
} ik_ground_kind;

/* Where a ray met the ground. When hit is 0 the other fields are zero. */
typedef struct ik_ray_hit {
  int hit;
  ik_vec3 point;    /* origin + unit direction * distance */
  ik_vec3 normal;   /* unit surface normal, turned to face against the ray (back faces
                       report the flipped normal) */
  ik_real distance; /* along the ray, in [0, max_distance] */
} ik_ray_hit;

/* Custom ground. Called with a unit direction and max_dist >= 0 (both already
 * validated) and *hit zeroed. Return 1 after filling hit->distance and hit->normal (any
 * non-zero length, either side: ikrig normalises and flips it, and recomputes
 * hit->point from the distance), 0 for no hit, or a negative number to abort the query:
 * ik_ground_raycast then returns IK_E_PARAMETER (a binding keeps its own record of what
 * went wrong). A hit whose distance is outside [0, max_dist] counts as no hit, whatever
 * its normal; ik_ground_raycast refuses a NaN or infinite distance (IK_E_NOT_FINITE),
 * and for a hit within the range a NaN or infinite normal (IK_E_NOT_FINITE) or a zero
 * one (IK_E_PARAMETER). */
typedef int (*ik_ground_raycast_fn)(void *user, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_dist,
                                    ik_ray_hit *hit);

/* Largest mesh ikrig builds a hierarchy for (its node indices stay in an int and its
 * depth within the traversal stack). */
#define IK_GROUND_MESH_MAX_TRIANGLES (1 << 28)

/* ---- plane ---- */

IK_API size_t ik_ground_plane_size(void);
/* point: any point of the plane. normal: any length but zero (normalised here); the
 * plane is two-sided, and a ray parallel to it misses, even one lying in it. */
IK_API ik_status ik_ground_plane_init(void *mem, size_t mem_size, ik_vec3 point, ik_vec3 normal,
                                      ik_ground **out, ik_error *err);

/* ---- heightfield ---- */

/* 0 when columns or rows is below 2 or the grid is too large for init. */
IK_API size_t ik_ground_heightfield_size(int columns, int rows);
/* Sample (c, r) is the vertex (origin.x + c * cell_size, origin.y + heights[r * columns
 * + c], origin.z + r * cell_size): `origin` is the grid's (min x, min z) corner and its
 * base height, columns run along +X and rows along +Z (row-major, rows * columns
 * heights, copied). cell_size > 0; columns, rows >= 2. Cell (c, r) is split along its
 * diagonal from sample (c, r) to (c + 1, r + 1) into the triangles
 * {(c, r), (c, r + 1), (c + 1, r + 1)} and {(c, r), (c + 1, r + 1), (c + 1, r)}, front
 * faces up. Outside the grid's x/z extent there is no ground. */
IK_API ik_status ik_ground_heightfield_init(void *mem, size_t mem_size, ik_vec3 origin, ik_real cell_size,
                                            int columns, int rows, const ik_real *heights, ik_ground **out,
                                            ik_error *err);

/* ---- mesh ---- */

/* An upper bound of what init uses (the hierarchy's worst case); 0 when a count is
 * below its minimum or above IK_GROUND_MESH_MAX_TRIANGLES. */
IK_API size_t ik_ground_mesh_size(int vertex_count, int triangle_count);
/* vertex_count >= 3 positions; triangle_count >= 1 triangles, 3 vertex indices each
 * (0-based, each in [0, vertex_count)). Winding does not matter (two-sided); triangles
 * with no area are kept but never hit. Both arrays are read during init only. Builds a
 * binned-SAH bounding volume hierarchy: O(n log n). */
IK_API ik_status ik_ground_mesh_init(void *mem, size_t mem_size, const ik_vec3 *vertices, int vertex_count,
                                     const int *triangles, int triangle_count, ik_ground **out,
                                     ik_error *err);

/* ---- custom ---- */

IK_API size_t ik_ground_custom_size(void);
/* raycast must not be NULL; user is passed to it as is. */
IK_API ik_status ik_ground_custom_init(void *mem, size_t mem_size, ik_ground_raycast_fn raycast, void *user,
                                       ik_ground **out, ik_error *err);

/* ---- queries ---- */

/* The kind of an initialised ground (g must not be NULL). */
IK_API ik_ground_kind ik_ground_get_kind(const ik_ground *g);

/* Checks a query: g, hit non-NULL; origin finite; direction finite and not zero;
 * max_distance finite and >= 0. */
IK_API ik_status ik_ground_raycast_validate(const ik_ground *g, ik_vec3 origin, ik_vec3 direction,
                                            ik_real max_distance, const ik_ray_hit *hit, ik_error *err);

/* The nearest point where the ray origin + t * unit(direction), 0 <= t <= max_distance,
 * meets the ground (a hit exactly at max_distance counts; so does one at the origin).
 * direction may have any non-zero length. Returns IK_OK with hit->hit 0 or 1; on any
 * other status *hit is untouched. */
IK_API ik_status ik_ground_raycast(const ik_ground *g, ik_vec3 origin, ik_vec3 direction,
                                   ik_real max_distance, ik_ray_hit *hit);

#ifdef __cplusplus
}
#endif

#endif /* IK_GROUND_H */
