/*
 * test_ground.c: ray queries against planes, heightfields, meshes and callbacks: hand-
 * computed hits (edges, vertices, vertical and parallel rays, rays from below, back
 * faces, max distance), the heightfield and a mesh of the same heights agreeing, the
 * BVH agreeing with brute force, and every refusal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ground_fixture.h"

/* Distances and points from exact small numbers: exact to rounding. Random rays cross
 * tens of units at any angle: float keeps about 1e-6 of that. */
#ifdef IK_REAL_FLOAT
#define T_HIT 2e-5
#define T_AGREE 1e-3
#define next_down(x) nextafterf((x), -1.0f)
#else
#define T_HIT 1e-12
#define T_AGREE 1e-8
#define next_down(x) nextafter((x), -1.0)
#endif

/* ---- helpers ---- */

static ik_ray_hit cast(const ik_ground *g, ik_vec3 origin, ik_vec3 direction, ik_real max_distance) {
  ik_ray_hit hit;
  memset(&hit, 0x5a, sizeof hit);
  assert_int_equal(ik_ground_raycast(g, origin, direction, max_distance, &hit), IK_OK);
  return hit;
}

static void assert_miss(ik_ray_hit hit) {
  assert_int_equal(hit.hit, 0);
  assert_vec3_near(hit.point, ik_vec3_zero(), 0);
  assert_vec3_near(hit.normal, ik_vec3_zero(), 0);
  assert_near(hit.distance, 0, 0);
}

static void assert_hit(ik_ray_hit hit, ik_vec3 point, ik_vec3 normal, double distance) {
  assert_int_equal(hit.hit, 1);
  assert_vec3_near(hit.point, point, T_HIT * 10);
  assert_vec3_near(hit.normal, normal, T_HIT * 10);
  assert_near(hit.distance, distance, T_HIT * 10);
}

static ik_vec3 unit3(double x, double y, double z) { return ik_vec3_normalize(v3(x, y, z)); }

static const ik_vec3 down = {0, -1, 0};
static const ik_vec3 up = {0, 1, 0};

/* The small field most hand-computed cases use: 3 x 3 samples, 2 x 2 unit cells, the
 * grid's corner at (10, 1, 20). In cell (0, 0), with (u, v) = (x - 10, z - 20), the
 * triangle above the diagonal (v > u) is h = 2v, the one below it h = u + v; in cell
 * (1, 0), with u' = u - 1, they are h = 1 - u' + v and h = 1 - u'/2 + v/2. */
static const ik_real small_heights[9] = {0, 1, (ik_real)0.5, 2, 2, 1, 0, 1, 0};

static owned_ground small_field(void) { return make_heightfield(v3(10, 1, 20), 1, 3, 3, small_heights); }

/* The vertex (c, r) of a heightfield, as a mesh of the same heights gets it. */
static ik_vec3 grid_vertex(ik_vec3 origin, ik_real cell, int columns, const ik_real *heights, int c, int r) {
  return ik_vec3_make(origin.x + cell * (ik_real)c, origin.y + heights[r * columns + c],
                      origin.z + cell * (ik_real)r);
}

/* A mesh of the heightfield's own triangles (same vertices, same diagonals). Arrays
 * malloc'd; the caller frees them. */
static owned_ground mesh_of_heightfield(ik_vec3 origin, ik_real cell, int columns, int rows,
                                        const ik_real *heights) {
  ik_vec3 *vertices = malloc(sizeof(ik_vec3) * (size_t)(columns * rows));
  int *triangles = malloc(sizeof(int) * 6 * (size_t)((columns - 1) * (rows - 1)));
  int c, r, t = 0;
  owned_ground o;
  assert_non_null(vertices);
  assert_non_null(triangles);
  for (r = 0; r < rows; r++) {
    for (c = 0; c < columns; c++)
      vertices[r * columns + c] = grid_vertex(origin, cell, columns, heights, c, r);
  }
  for (r = 0; r + 1 < rows; r++) {
    for (c = 0; c + 1 < columns; c++) {
      const int v00 = r * columns + c, v10 = v00 + 1, v01 = v00 + columns, v11 = v01 + 1;
      triangles[t++] = v00;
      triangles[t++] = v01;
      triangles[t++] = v11;
      triangles[t++] = v00;
      triangles[t++] = v11;
      triangles[t++] = v10;
    }
  }
  o = make_mesh(vertices, columns * rows, triangles, t / 3);
  free(vertices);
  free(triangles);
  return o;
}

/* Möller–Trumbore over every triangle, in double, each triangle widened by `slack` (a
 * fraction of its edges; 0 for the exact triangles). What the BVH must agree with. */
static int brute_force(const ik_vec3 *vertices, const int *triangles, int triangle_count, ik_vec3 o,
                       ik_vec3 d, double max_distance, double slack, double *t_best) {
  int i, found = 0;
  double best = max_distance;
  for (i = 0; i < triangle_count; i++) {
    const ik_vec3 a = vertices[triangles[3 * i]], b = vertices[triangles[3 * i + 1]],
                  c = vertices[triangles[3 * i + 2]];
    const double e1[3] = {(double)b.x - (double)a.x, (double)b.y - (double)a.y, (double)b.z - (double)a.z};
    const double e2[3] = {(double)c.x - (double)a.x, (double)c.y - (double)a.y, (double)c.z - (double)a.z};
    const double dd[3] = {(double)d.x, (double)d.y, (double)d.z};
    const double s[3] = {(double)o.x - (double)a.x, (double)o.y - (double)a.y, (double)o.z - (double)a.z};
    const double p[3] = {dd[1] * e2[2] - dd[2] * e2[1], dd[2] * e2[0] - dd[0] * e2[2],
                         dd[0] * e2[1] - dd[1] * e2[0]};
    const double q[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2],
                         s[0] * e1[1] - s[1] * e1[0]};
    const double det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
    double u, v, t;
    if (det == 0) continue;
    u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) / det;
    v = (dd[0] * q[0] + dd[1] * q[1] + dd[2] * q[2]) / det;
    t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det;
    if (u < -slack || v < -slack || u + v > 1 + slack || t < 0 || t > best) continue;
    best = t;
    found = 1;
  }
  *t_best = best;
  return found;
}

/* The BVH's answer must lie between the exact triangles' and the widened ones': it hits
 * whatever the exact ones hit, no farther; whatever it hits the widened ones hit, no
 * nearer. (ik_ground.c lets a triangle reach about 1e-12 of its edges beyond itself in
 * double, 1e-4 in float, so that no ray slips between two; the widened triangles reach
 * four times that.) */
static void assert_between_brute_forces(const ik_vec3 *vertices, const int *triangles, int triangle_count,
                                        ik_vec3 o, ik_vec3 d, ik_real max_distance, ik_ray_hit hit) {
  const double slack = 4 * 1024 * IK_REAL_EPSILON;
  double t_exact, t_wide;
  const int exact = brute_force(vertices, triangles, triangle_count, o, d, (double)max_distance, 0, &t_exact);
  const int wide =
      brute_force(vertices, triangles, triangle_count, o, d, (double)max_distance, slack, &t_wide);
  if ((exact && !hit.hit) || (hit.hit && !wide)) {
    print_error("bvh %d, exact brute force %d, widened %d\n", hit.hit, exact, wide);
    fail();
  }
  if (!hit.hit) return;
  if (exact) assert_true((double)hit.distance <= t_exact + T_AGREE * (1 + t_exact));
  assert_true((double)hit.distance >= t_wide - T_AGREE * (1 + t_wide));
}

/* ---- plane ---- */

static void test_plane_vertical_ray_hits_straight_below(void **state) {
  owned_ground o = make_plane(v3(5, 0, -7), v3(0, 3, 0));
  (void)state;
  /* Any direction length: normalised inside. */
  assert_hit(cast(o.g, v3(1, 2, 3), v3(0, -5, 0), 10), v3(1, 0, 3), up, 2);
  assert_hit(cast(o.g, v3(1, 2, 3), v3(0, -1e-3, 0), 10), v3(1, 0, 3), up, 2);
  release(&o);
}

static void test_plane_oblique_rays_hit_where_hand_computed(void **state) {
  /* x + y = 0 through the origin. */
  owned_ground o = make_plane(v3(0, 0, 0), v3(1, 1, 0));
  const ik_vec3 n = unit3(1, 1, 0);
  (void)state;
  assert_hit(cast(o.g, v3(0, 2, 0), down, 10), v3(0, 0, 0), n, 2);
  assert_hit(cast(o.g, v3(3, 0, 5), v3(-1, 0, 0), 10), v3(0, 0, 5), n, 3);
  /* From (2, 0, 0) along -x-z at 45 degrees: x = 0 after 2 sqrt(2). */
  assert_hit(cast(o.g, v3(2, 0, 0), v3(-1, 0, -1), 10), v3(0, 0, -2), n, 2 * sqrt(2.0));
  release(&o);
}

static void test_plane_ray_parallel_to_it_misses_even_inside_it(void **state) {
  owned_ground o = make_plane(v3(0, 0, 0), up);
  (void)state;
  assert_miss(cast(o.g, v3(0, 1, 0), v3(1, 0, 0), 100));
  assert_miss(cast(o.g, v3(0, 0, 0), v3(0, 0, 1), 100));
  release(&o);
}

static void test_plane_ray_from_below_hits_back_face_with_flipped_normal(void **state) {
  owned_ground o = make_plane(v3(0, 0, 0), up);
  (void)state;
  assert_miss(cast(o.g, v3(0, -1, 0), down, 100));
  assert_hit(cast(o.g, v3(2, -1, 0), up, 100), v3(2, 0, 0), down, 1);
  release(&o);
}

static void test_plane_hit_at_max_distance_counts_and_beyond_misses(void **state) {
  owned_ground o = make_plane(v3(0, 0, 0), up);
  (void)state;
  assert_hit(cast(o.g, v3(0, 2, 0), down, 2), v3(0, 0, 0), up, 2);
  assert_miss(cast(o.g, v3(0, 2, 0), down, next_down((ik_real)2)));
  /* A ray starting on the plane hits it at 0, even with no length to go. */
  assert_hit(cast(o.g, v3(3, 0, 4), down, 0), v3(3, 0, 4), up, 0);
  release(&o);
}

static void test_plane_random_hits_lie_on_it_at_their_distance(void **state) {
  t_rng r = t_rng_make(11);
  const ik_vec3 n = unit3(0.3, 1, -0.2), p0 = v3(1, -2, 3);
  owned_ground o = make_plane(p0, n);
  int i, hits = 0;
  (void)state;
  for (i = 0; i < 1000; i++) {
    const ik_vec3 origin = v3(t_uniform(&r, -10, 10), t_uniform(&r, -10, 10), t_uniform(&r, -10, 10));
    const ik_vec3 d = t_unit_vector(&r);
    const ik_ray_hit hit = cast(o.g, origin, d, 30);
    if (!hit.hit) continue;
    hits++;
    assert_near(ik_vec3_dot(ik_vec3_sub(hit.point, p0), n), 0, T_HIT * 1e3);
    assert_vec3_near(hit.point, ik_vec3_madd(origin, d, hit.distance), T_HIT * 1e3);
    assert_near(ik_vec3_len(hit.normal), 1, T_HIT * 10);
    assert_true(ik_vec3_dot(hit.normal, d) <= 0);
  }
  assert_true(hits > 200);
  release(&o);
}

/* ---- heightfield ---- */

static void test_heightfield_vertical_rays_hit_each_triangle_where_hand_computed(void **state) {
  owned_ground o = small_field();
  (void)state;
  /* Cell (0, 0) above its diagonal: h = 2v; below it: h = u + v. */
  assert_hit(cast(o.g, v3(10.25, 5, 20.75), down, 10), v3(10.25, 2.5, 20.75), unit3(0, 1, -2), 2.5);
  assert_hit(cast(o.g, v3(10.75, 5, 20.25), down, 10), v3(10.75, 2, 20.25), unit3(-1, 1, -1), 3);
  /* Cell (1, 0) below its diagonal: h = 1 - u'/2 + v/2. */
  assert_hit(cast(o.g, v3(11.75, 5, 20.25), down, 10), v3(11.75, 1.75, 20.25), unit3(0.5, 1, -0.5), 3.25);
  release(&o);
}

static void test_heightfield_vertical_rays_on_edges_and_vertices_hit(void **state) {
  owned_ground o = small_field();
  ik_ray_hit hit;
  (void)state;
  /* On the diagonal of cell (0, 0): both triangles give h = 1. */
  hit = cast(o.g, v3(10.5, 5, 20.5), down, 10);
  assert_int_equal(hit.hit, 1);
  assert_vec3_near(hit.point, v3(10.5, 2, 20.5), T_HIT);
  /* On the grid line x = 11 between cells (0, 0) and (1, 0): both give h = 1.25. */
  hit = cast(o.g, v3(11, 5, 20.25), down, 10);
  assert_int_equal(hit.hit, 1);
  assert_vec3_near(hit.point, v3(11, 2.25, 20.25), T_HIT);
  assert_true((double)ik_vec3_dist(hit.normal, unit3(-1, 1, -1)) < 1e-6 ||
              (double)ik_vec3_dist(hit.normal, unit3(1, 1, -1)) < 1e-6);
  /* On the grid line z = 21 between rows 0 and 1. */
  hit = cast(o.g, v3(10.5, 5, 21), down, 10);
  assert_int_equal(hit.hit, 1);
  assert_vec3_near(hit.point, v3(10.5, 3, 21), T_HIT);
  /* Every sample, the grid's own corners and borders included. */
  {
    int c, r;
    for (r = 0; r < 3; r++) {
      for (c = 0; c < 3; c++) {
        const ik_vec3 sample = grid_vertex(v3(10, 1, 20), 1, 3, small_heights, c, r);
        hit = cast(o.g, ik_vec3_make(sample.x, 5, sample.z), down, 10);
        assert_int_equal(hit.hit, 1);
        assert_vec3_near(hit.point, sample, T_HIT);
        assert_near(hit.distance, 5 - sample.y, T_HIT);
      }
    }
  }
  release(&o);
}

static void test_heightfield_oblique_ray_crosses_cells_to_the_hand_computed_hit(void **state) {
  owned_ground o = small_field();
  (void)state;
  /* From outside the grid, down at 45 degrees along z = 20.5: passes 0.1 over the
   * upper triangle of cell (1, 0) and meets its lower one, h = 1.25 - u'/2, at u' = 0.7. */
  assert_hit(cast(o.g, v3(9, 4.6, 20.5), v3(1, -1, 0), 10), v3(11.7, 1.9, 20.5), unit3(0.5, 1, -0.5),
             2.7 * sqrt(2.0));
  /* Horizontal, along -x at h = 1.2: meets h = 1 - u' + v at u' = 0.3. */
  assert_hit(cast(o.g, v3(13, 2.2, 20.5), v3(-1, 0, 0), 10), v3(11.3, 2.2, 20.5), unit3(1, 1, -1), 1.7);
  release(&o);
}

static void test_heightfield_ray_from_below_hits_back_face(void **state) {
  owned_ground o = small_field();
  (void)state;
  assert_hit(cast(o.g, v3(10.25, -5, 20.75), up, 10), v3(10.25, 2.5, 20.75), unit3(0, -1, 2), 7.5);
  assert_miss(cast(o.g, v3(10.25, -5, 20.75), down, 100));
  release(&o);
}

static void test_heightfield_misses_outside_above_and_beyond_max_distance(void **state) {
  owned_ground o = small_field();
  ik_ray_hit hit;
  (void)state;
  assert_miss(cast(o.g, v3(9.5, 5, 21), down, 100));
  assert_miss(cast(o.g, v3(12.001, 5, 21), down, 100));
  assert_miss(cast(o.g, v3(11, 5, 19.999), down, 100));
  /* Parallel to the grid above its highest sample; horizontal just above the surface. */
  assert_miss(cast(o.g, v3(9, 10, 21), v3(1, 0, 0.3), 100));
  assert_miss(cast(o.g, v3(13, 2.55, 20.5), v3(-1, 0, 0), 10)); /* the line peaks at 2.5 */
  /* A hit at exactly max_distance counts; a hair less misses it. */
  hit = cast(o.g, v3(10.25, 5, 20.75), down, 100);
  assert_int_equal(hit.hit, 1);
  assert_int_equal(cast(o.g, v3(10.25, 5, 20.75), down, hit.distance).hit, 1);
  assert_miss(cast(o.g, v3(10.25, 5, 20.75), down, next_down(hit.distance)));
  release(&o);
}

static void test_heightfield_near_vertical_rays_agree_with_vertical(void **state) {
  owned_ground o = small_field();
  const ik_ray_hit straight = cast(o.g, v3(10.25, 5, 20.75), down, 10);
  const ik_ray_hit tilted = cast(o.g, v3(10.25, 5, 20.75), v3(1e-12, -1, -1e-12), 10);
  (void)state;
  assert_int_equal(tilted.hit, 1);
  assert_vec3_near(tilted.point, straight.point, 1e-6);
  release(&o);
}

/* float: a vertical ray finds no hit at all in cells much below 1e-6 (open question,
 * not this test's). */
#ifdef IK_REAL_FLOAT
#define TINY_CELL 1e-6
#else
#define TINY_CELL 1e-30
#endif
/* A flat field whose cells are as large as init takes (near IK_REAL_MAX_COORD), and one
 * whose cells are tiny: the normal comes from the cross product of two cell edges, whose
 * square overflowed (or underflowed), and the hit reported a zero normal (found by
 * fuzz_core). Unit and up at either scale. */
static void test_heightfield_of_huge_or_tiny_cells_reports_a_unit_normal(void **state) {
  static const ik_real flat[4] = {-1, -1, -1, -1};
  const ik_real cells[2] = {(ik_real)TINY_CELL, IK_REAL_MAX_COORD / 4};
  int k;
  (void)state;
  for (k = 0; k < 2; k++) {
    const ik_real cell = cells[k];
    owned_ground o = make_heightfield(v3(0, 0, 0), cell, 2, 2, flat);
    const ik_ray_hit hit = cast(o.g, v3((double)cell / 4, 5, (double)cell / 2), down, 100);
    assert_int_equal(hit.hit, 1);
    assert_vec3_near(hit.normal, up, T_HIT);
    release(&o);
  }
}

/* ---- mesh ---- */

/* One triangle in y = 1: (0, 1, 0), (2, 1, 0), (0, 1, 2). */
static owned_ground one_triangle(void) {
  static const int tri[3] = {0, 1, 2};
  ik_vec3 vertices[3];
  vertices[0] = v3(0, 1, 0);
  vertices[1] = v3(2, 1, 0);
  vertices[2] = v3(0, 1, 2);
  return make_mesh(vertices, 3, tri, 1);
}

static void test_mesh_triangle_hits_inside_on_edges_and_on_vertices(void **state) {
  owned_ground o = one_triangle();
  (void)state;
  assert_hit(cast(o.g, v3(0.5, 3, 0.5), down, 10), v3(0.5, 1, 0.5), up, 2);
  /* Edges: y-axis side, x-axis side, hypotenuse. */
  assert_hit(cast(o.g, v3(0, 3, 1), down, 10), v3(0, 1, 1), up, 2);
  assert_hit(cast(o.g, v3(1, 3, 0), down, 10), v3(1, 1, 0), up, 2);
  assert_hit(cast(o.g, v3(1, 3, 1), down, 10), v3(1, 1, 1), up, 2);
  /* Vertices. */
  assert_hit(cast(o.g, v3(0, 3, 0), down, 10), v3(0, 1, 0), up, 2);
  assert_hit(cast(o.g, v3(2, 3, 0), down, 10), v3(2, 1, 0), up, 2);
  assert_hit(cast(o.g, v3(0, 3, 2), down, 10), v3(0, 1, 2), up, 2);
  /* Just outside. */
  assert_miss(cast(o.g, v3(1.01, 3, 1.01), down, 10));
  assert_miss(cast(o.g, v3(-0.01, 3, 1), down, 10));
  release(&o);
}

static void test_mesh_back_face_reports_normal_facing_the_ray(void **state) {
  owned_ground o = one_triangle();
  (void)state;
  assert_hit(cast(o.g, v3(0.5, -1, 0.5), up, 10), v3(0.5, 1, 0.5), down, 2);
  /* Oblique from below. */
  assert_hit(cast(o.g, v3(0.5, 0, -0.5), v3(0, 1, 1), 10), v3(0.5, 1, 0.5), down, sqrt(2.0));
  release(&o);
}

static void test_mesh_parallel_beyond_and_behind_rays_miss(void **state) {
  owned_ground o = one_triangle();
  ik_ray_hit hit;
  (void)state;
  assert_miss(cast(o.g, v3(-1, 1, 0.5), v3(1, 0, 0), 10)); /* in the triangle's plane */
  assert_miss(cast(o.g, v3(-1, 1.5, 0.5), v3(1, 0, 0), 10));
  assert_miss(cast(o.g, v3(0.5, 0, 0.5), down, 10)); /* starts below, heads away */
  hit = cast(o.g, v3(0.5, 3, 0.5), down, 2);
  assert_int_equal(hit.hit, 1);
  assert_near(hit.distance, 2, 0);
  assert_miss(cast(o.g, v3(0.5, 3, 0.5), down, next_down((ik_real)2)));
  release(&o);
}

static void test_mesh_ray_through_shared_edge_or_vertex_never_slips_through(void **state) {
  /* A fan of 6 triangles round (0, 0, 0), tilted so no ray is axis-aligned with it;
   * rays at the centre and along every spoke must hit. */
  ik_vec3 vertices[7];
  int triangles[18];
  t_rng r = t_rng_make(5);
  owned_ground o;
  int i, k;
  (void)state;
  vertices[0] = v3(0, 0, 0);
  for (i = 0; i < 6; i++) {
    const double a = (double)i * 2 * 3.14159265358979 / 6;
    vertices[1 + i] = v3(cos(a), 0.3 * cos(a) - 0.2 * sin(a), sin(a));
    triangles[3 * i] = 0;
    triangles[3 * i + 1] = 1 + i;
    triangles[3 * i + 2] = 1 + (i + 1) % 6;
  }
  o = make_mesh(vertices, 7, triangles, 6);
  for (k = 0; k < 2000; k++) {
    const int spoke = t_int(&r, 0, 6);
    const ik_real s = (ik_real)t_uniform(&r, 0, 0.999);
    const ik_vec3 target = ik_vec3_scale(vertices[spoke], s); /* on a spoke (or the centre) */
    const ik_vec3 d = ik_vec3_normalize(v3(t_uniform(&r, -0.5, 0.5), -1, t_uniform(&r, -0.5, 0.5)));
    const ik_ray_hit hit = cast(o.g, ik_vec3_madd(target, d, -3), d, 10);
    assert_int_equal(hit.hit, 1);
    assert_vec3_near(hit.point, target, T_HIT * 1e3);
  }
  release(&o);
}

static void test_heightfield_and_mesh_of_same_heights_agree_on_random_rays(void **state) {
  enum { COLUMNS = 40, ROWS = 30 };
  ik_real heights[COLUMNS * ROWS];
  const ik_vec3 origin = v3(-7.3, 0.4, 2.1);
  const ik_real cell = (ik_real)0.5;
  t_rng r = t_rng_make(2024);
  owned_ground field, mesh;
  int i, hits = 0, vertical = 0;
  (void)state;
  for (i = 0; i < COLUMNS * ROWS; i++) heights[i] = (ik_real)t_uniform(&r, -1, 1.5);
  field = make_heightfield(origin, cell, COLUMNS, ROWS, heights);
  mesh = mesh_of_heightfield(origin, cell, COLUMNS, ROWS, heights);
  for (i = 0; i < 10000; i++) {
    /* Origins over and around the grid (x in [-7.3, 12.2], z in [2.1, 16.6]), some
     * under it; a third straight down, a third mostly down, a third anywhere. */
    const ik_vec3 o = v3(t_uniform(&r, -10, 15), t_uniform(&r, -3, 5), t_uniform(&r, 0, 19));
    const int kind = i % 3;
    const ik_vec3 d = kind == 0   ? down
                      : kind == 1 ? ik_vec3_normalize(v3(t_uniform(&r, -1, 1), -1.5, t_uniform(&r, -1, 1)))
                                  : t_unit_vector(&r);
    const ik_real max_distance = (ik_real)t_uniform(&r, 0, 40);
    const ik_ray_hit a = cast(field.g, o, d, max_distance);
    const ik_ray_hit b = cast(mesh.g, o, d, max_distance);
    if (a.hit != b.hit) {
      print_error("ray %d: heightfield %d, mesh %d (distances %g, %g)\n", i, a.hit, b.hit, (double)a.distance,
                  (double)b.distance);
      fail();
    }
    if (!a.hit) continue;
    hits++;
    vertical += kind == 0;
    assert_near(a.distance, b.distance, T_AGREE * (1 + (double)a.distance));
    assert_vec3_near(a.point, b.point, T_AGREE * (1 + (double)a.distance));
    /* The same triangle's normal, unless the hit is on an edge both triangles share. */
    if ((double)ik_vec3_dist(a.normal, b.normal) > T_AGREE * 100) {
      const double u = (double)((a.point.x - origin.x) / cell), v = (double)((a.point.z - origin.z) / cell);
      const double fu = u - floor(u), fv = v - floor(v);
      const double to_edge = fmin(fmin(fmin(fu, 1 - fu), fmin(fv, 1 - fv)), fabs(fu - fv));
      if (!(to_edge < T_AGREE * 10)) {
        print_error("ray %d: normals differ %g from any edge\n", i, to_edge);
        fail();
      }
    }
  }
  assert_true(hits > 2500 && vertical > 1000);
  release(&field);
  release(&mesh);
}

/* Random rays at a mesh: BVH and brute force give the same answer. Two rays in three
 * aim at a random point of a random triangle (the nearest hit may still be another
 * one), the rest go anywhere. */
static void check_against_brute_force(t_rng *r, const ik_vec3 *vertices, int vertex_count,
                                      const int *triangles, int triangle_count, int rays, double box) {
  owned_ground o = make_mesh(vertices, vertex_count, triangles, triangle_count);
  int i, hits = 0;
  for (i = 0; i < rays; i++) {
    const ik_vec3 origin = v3(t_uniform(r, -box, box), t_uniform(r, -box, box), t_uniform(r, -box, box));
    const int *tri = &triangles[3 * t_int(r, 0, triangle_count - 1)];
    const double a = t_uniform(r, 0, 1), b = t_uniform(r, 0, 1 - a);
    const ik_vec3 aim = ik_vec3_add(ik_vec3_scale(vertices[tri[0]], (ik_real)(1 - a - b)),
                                    ik_vec3_add(ik_vec3_scale(vertices[tri[1]], (ik_real)a),
                                                ik_vec3_scale(vertices[tri[2]], (ik_real)b)));
    const ik_vec3 d = i % 3 == 2 ? t_unit_vector(r)
                                 : ik_vec3_normalize_or(ik_vec3_sub(aim, origin), ik_vec3_make(0, -1, 0));
    const ik_real max_distance = (ik_real)t_uniform(r, 0, 4 * box);
    const ik_ray_hit hit = cast(o.g, origin, d, max_distance);
    assert_between_brute_forces(vertices, triangles, triangle_count, origin, d, max_distance, hit);
    hits += hit.hit;
  }
  assert_true(hits > rays / 3);
  release(&o);
}

static void test_bvh_equals_brute_force_on_random_meshes(void **state) {
  t_rng r = t_rng_make(77);
  int mesh;
  (void)state;
  for (mesh = 0; mesh < 6; mesh++) {
    const int triangle_count = t_int(&r, 1, 600);
    const int vertex_count = 3 * triangle_count;
    ik_vec3 *vertices = malloc(sizeof *vertices * (size_t)vertex_count);
    int *triangles = malloc(sizeof *triangles * (size_t)vertex_count);
    int i;
    assert_non_null(vertices);
    assert_non_null(triangles);
    /* Triangles of every size: some spanning the box, most small. */
    for (i = 0; i < triangle_count; i++) {
      const ik_vec3 c = v3(t_uniform(&r, -5, 5), t_uniform(&r, -5, 5), t_uniform(&r, -5, 5));
      const double size = t_int(&r, 0, 9) == 0 ? 4 : t_uniform(&r, 0.05, 1);
      int k;
      for (k = 0; k < 3; k++) {
        vertices[3 * i + k] = ik_vec3_madd(c, t_unit_vector(&r), (ik_real)(size * t_uniform(&r, 0.2, 1)));
        triangles[3 * i + k] = 3 * i + k;
      }
    }
    check_against_brute_force(&r, vertices, vertex_count, triangles, triangle_count, 1500, 6);
    free(vertices);
    free(triangles);
  }
}

static void test_bvh_equals_brute_force_on_a_terrain_grid(void **state) {
  enum { N = 60 };
  ik_real heights[N * N];
  t_rng r = t_rng_make(3);
  ik_vec3 *vertices = malloc(sizeof *vertices * N * N);
  int *triangles = malloc(sizeof *triangles * 6 * (N - 1) * (N - 1));
  int c, row, t = 0, i, hits = 0;
  owned_ground o;
  (void)state;
  assert_non_null(vertices);
  assert_non_null(triangles);
  for (i = 0; i < N * N; i++) heights[i] = (ik_real)(0.3 * sin(0.4 * (i % N)) * cos(0.3 * (i / N)));
  for (row = 0; row < N; row++) {
    for (c = 0; c < N; c++)
      vertices[row * N + c] = grid_vertex(v3(-15, 0, -15), (ik_real)0.5, N, heights, c, row);
  }
  for (row = 0; row + 1 < N; row++) {
    for (c = 0; c + 1 < N; c++) {
      const int v00 = row * N + c;
      triangles[t++] = v00;
      triangles[t++] = v00 + N;
      triangles[t++] = v00 + N + 1;
      triangles[t++] = v00;
      triangles[t++] = v00 + N + 1;
      triangles[t++] = v00 + 1;
    }
  }
  o = make_mesh(vertices, N * N, triangles, t / 3);
  for (i = 0; i < 2000; i++) {
    const ik_vec3 origin = v3(t_uniform(&r, -16, 16), t_uniform(&r, 0.5, 3), t_uniform(&r, -16, 16));
    const ik_vec3 d =
        ik_vec3_normalize(v3(t_uniform(&r, -1, 1), -t_uniform(&r, 0.05, 1), t_uniform(&r, -1, 1)));
    const ik_ray_hit hit = cast(o.g, origin, d, 50);
    assert_between_brute_forces(vertices, triangles, t / 3, origin, d, 50, hit);
    hits += hit.hit;
  }
  assert_true(hits > 1000);
  release(&o);
  free(vertices);
  free(triangles);
}

static void test_bvh_handles_coincident_and_lopsided_triangles(void **state) {
  /* 300 copies of one triangle (every centre the same: no split plane), then 120
   * triangles at exponentially growing distances (SAH alone would build a chain deeper
   * than the traversal stack; the median fallback bounds it). */
  enum { COPIES = 300, FAR = 120 };
  ik_vec3 vertices[3 * (COPIES + FAR)];
  int triangles[3 * (COPIES + FAR)];
  t_rng r = t_rng_make(8);
  int i;
  (void)state;
  for (i = 0; i < COPIES; i++) {
    vertices[3 * i] = v3(0, 0, 0);
    vertices[3 * i + 1] = v3(1, 0, 0);
    vertices[3 * i + 2] = v3(0, 0, 1);
  }
  for (i = COPIES; i < COPIES + FAR; i++) {
    const double x = pow(1.25, (double)(i - COPIES));
    vertices[3 * i] = v3(x, -1, 0);
    vertices[3 * i + 1] = v3(x * 1.1, -1, 0);
    vertices[3 * i + 2] = v3(x, -1, x * 0.1 + 0.1);
  }
  for (i = 0; i < 3 * (COPIES + FAR); i++) triangles[i] = i;
  check_against_brute_force(&r, vertices, 3 * COPIES, triangles, COPIES, 500, 2);
  check_against_brute_force(&r, vertices, 3 * (COPIES + FAR), triangles, COPIES + FAR, 500, 2);
  {
    /* Straight down onto each far triangle's corner region. */
    owned_ground o = make_mesh(vertices, 3 * (COPIES + FAR), triangles, COPIES + FAR);
    for (i = COPIES; i < COPIES + FAR; i++) {
      const ik_vec3 at = ik_vec3_add(vertices[3 * i], v3(0.01 * (double)vertices[3 * i].x, 0, 0.01));
      const ik_ray_hit hit = cast(o.g, ik_vec3_add(at, v3(0, 1, 0)), down, 5);
      assert_int_equal(hit.hit, 1);
      assert_near(hit.distance, 1, T_HIT * 1e3 * (1 + (double)at.x));
    }
    release(&o);
  }
}

static void test_mesh_with_degenerate_triangles_skips_them(void **state) {
  /* A zero-area triangle (collinear) and a point-triangle beside a real one. */
  ik_vec3 vertices[6];
  static const int triangles[9] = {0, 1, 2, 3, 3, 3, 0, 4, 5};
  owned_ground o;
  (void)state;
  vertices[0] = v3(0, 0, 0);
  vertices[1] = v3(1, 0, 0);
  vertices[2] = v3(2, 0, 0);
  vertices[3] = v3(0.5, 0.5, 0.5);
  vertices[4] = v3(0, 0, 1);
  vertices[5] = v3(1, 0, 1);
  o = make_mesh(vertices, 6, triangles, 3);
  assert_hit(cast(o.g, v3(0.5, 1, 0.75), down, 5), v3(0.5, 0, 0.75), up, 1);
  assert_miss(cast(o.g, v3(0.5, 1, -0.5), down, 5));
  release(&o);
}

/* ---- custom ---- */

typedef struct probe_record {
  int calls, answer;
  ik_vec3 origin, dir;
  ik_real max_dist;
  ik_real distance;
  ik_vec3 normal;
} probe_record;

static int record_and_answer(void *user, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_dist,
                             ik_ray_hit *hit) {
  probe_record *rec = user;
  rec->calls++;
  rec->origin = origin;
  rec->dir = dir_unit;
  rec->max_dist = max_dist;
  assert_int_equal(hit->hit, 0);
  hit->distance = rec->distance;
  hit->normal = rec->normal;
  hit->point = v3(1e9, 1e9, 1e9); /* ignored: recomputed from the distance */
  return rec->answer;
}

static owned_ground make_recording_ground(probe_record *rec) { return make_custom(record_and_answer, rec); }

static void test_custom_ground_gets_unit_direction_and_its_hit_is_cleaned_up(void **state) {
  probe_record rec;
  owned_ground o;
  ik_ray_hit hit;
  (void)state;
  memset(&rec, 0, sizeof rec);
  rec.answer = 1;
  rec.distance = 2;
  rec.normal = v3(0, -3, 0); /* unnormalised and facing along the ray */
  o = make_recording_ground(&rec);
  assert_int_equal(ik_ground_get_kind(o.g), IK_GROUND_CUSTOM);
  hit = cast(o.g, v3(1, 5, 2), v3(0, -4, 0), 7);
  assert_int_equal(rec.calls, 1);
  assert_vec3_near(rec.origin, v3(1, 5, 2), 0);
  assert_vec3_near(rec.dir, down, 0);
  assert_near(rec.max_dist, 7, 0);
  assert_hit(hit, v3(1, 3, 2), up, 2);
  /* A miss, and hits outside [0, max] which count as misses. */
  rec.answer = 0;
  assert_miss(cast(o.g, v3(1, 5, 2), down, 7));
  rec.answer = 1;
  rec.distance = (ik_real)7.5;
  assert_miss(cast(o.g, v3(1, 5, 2), down, 7));
  rec.distance = -1;
  assert_miss(cast(o.g, v3(1, 5, 2), down, 7));
  /* A hit outside the ray is a miss whatever its normal: zero, NaN or infinite. */
  rec.distance = (ik_real)7.5;
  rec.normal = ik_vec3_zero();
  assert_miss(cast(o.g, v3(1, 5, 2), down, 7));
  rec.normal = v3(0, (ik_real)NAN, 0);
  assert_miss(cast(o.g, v3(1, 5, 2), down, 7));
  rec.distance = -1;
  rec.normal = v3((ik_real)INFINITY, 0, 0);
  assert_miss(cast(o.g, v3(1, 5, 2), down, 7));
  release(&o);
}

static void test_custom_ground_failure_or_garbage_is_refused_and_hit_untouched(void **state) {
  probe_record rec;
  owned_ground o;
  ik_ray_hit hit, before;
  (void)state;
  memset(&rec, 0, sizeof rec);
  o = make_recording_ground(&rec);
  memset(&before, 0x3c, sizeof before);
  hit = before;
  rec.answer = -1;
  assert_int_equal(ik_ground_raycast(o.g, v3(0, 1, 0), down, 5, &hit), IK_E_PARAMETER);
  assert_memory_equal(&hit, &before, sizeof hit);
  rec.answer = 1;
  rec.distance = (ik_real)NAN;
  rec.normal = up;
  assert_int_equal(ik_ground_raycast(o.g, v3(0, 1, 0), down, 5, &hit), IK_E_NOT_FINITE);
  assert_memory_equal(&hit, &before, sizeof hit);
  rec.distance = 1;
  rec.normal = ik_vec3_zero();
  assert_int_equal(ik_ground_raycast(o.g, v3(0, 1, 0), down, 5, &hit), IK_E_PARAMETER);
  assert_memory_equal(&hit, &before, sizeof hit);
  release(&o);
}

/* ---- memory and validation ---- */

static void test_sizes_are_zero_for_counts_init_refuses(void **state) {
  (void)state;
  assert_true(ik_ground_plane_size() >= sizeof(void *));
  assert_true(ik_ground_custom_size() >= sizeof(void *));
  assert_int_equal(ik_ground_heightfield_size(1, 5), 0);
  assert_int_equal(ik_ground_heightfield_size(5, 1), 0);
  assert_int_equal(ik_ground_heightfield_size(0x10000, 0x10000), 0);
  assert_true(ik_ground_heightfield_size(2, 2) > 4 * sizeof(ik_real));
  assert_int_equal(ik_ground_mesh_size(2, 1), 0);
  assert_int_equal(ik_ground_mesh_size(3, 0), 0);
  assert_int_equal(ik_ground_mesh_size(3, IK_GROUND_MESH_MAX_TRIANGLES + 1), 0);
  assert_true(ik_ground_mesh_size(3, 1) > 0);
  assert_true(ik_ground_mesh_size(3, 1000) > ik_ground_mesh_size(3, 10));
}

static void test_init_works_in_unaligned_memory_and_refuses_too_little(void **state) {
  const size_t size = ik_ground_heightfield_size(3, 3);
  unsigned char *block = malloc(size + 8);
  ik_ground *g = NULL, *untouched = (ik_ground *)(void *)block;
  ik_error err;
  int shift;
  (void)state;
  assert_non_null(block);
  for (shift = 1; shift < 8; shift++) {
    assert_int_equal(
        ik_ground_heightfield_init(block + shift, size, v3(10, 1, 20), 1, 3, 3, small_heights, &g, NULL),
        IK_OK);
    assert_hit(cast(g, v3(10.25, 5, 20.75), down, 10), v3(10.25, 2.5, 20.75), unit3(0, 1, -2), 2.5);
  }
  g = untouched;
  assert_int_equal(
      ik_ground_heightfield_init(block, size - 1, v3(10, 1, 20), 1, 3, 3, small_heights, &g, &err),
      IK_E_PARAMETER);
  assert_string_equal(err.field, "mem_size");
  assert_ptr_equal(g, untouched);
  free(block);
}

static void test_plane_init_refusals(void **state) {
  unsigned char mem[512];
  ik_ground *g = NULL;
  ik_error err;
  (void)state;
  assert_true(sizeof mem >= ik_ground_plane_size());
  assert_int_equal(ik_ground_plane_init(mem, sizeof mem, v3(0, 0, 0), ik_vec3_zero(), &g, &err),
                   IK_E_PARAMETER);
  assert_string_equal(err.field, "normal");
  assert_int_equal(ik_ground_plane_init(mem, sizeof mem, v3(NAN, 0, 0), up, &g, &err), IK_E_NOT_FINITE);
  assert_string_equal(err.field, "point");
  assert_int_equal(ik_ground_plane_init(mem, sizeof mem, v3(0, 0, 0), v3(0, INFINITY, 0), &g, &err),
                   IK_E_NOT_FINITE);
  assert_int_equal(ik_ground_plane_init(mem, sizeof mem, v3(IK_REAL_MAX_COORD * 10, 0, 0), up, &g, &err),
                   IK_E_RANGE);
  assert_int_equal(ik_ground_plane_init(NULL, sizeof mem, v3(0, 0, 0), up, &g, &err), IK_E_NULL);
  assert_string_equal(err.field, "mem");
  assert_int_equal(ik_ground_plane_init(mem, sizeof mem, v3(0, 0, 0), up, NULL, &err), IK_E_NULL);
  assert_string_equal(err.field, "out");
  assert_ptr_equal(g, NULL);
  assert_int_equal(ik_ground_custom_init(mem, sizeof mem, NULL, NULL, &g, &err), IK_E_NULL);
  assert_string_equal(err.field, "raycast");
  assert_int_equal(ik_ground_plane_init(mem, sizeof mem, v3(0, 0, 0), up, &g, &err), IK_OK);
  assert_int_equal(err.status, IK_OK);
  assert_int_equal(ik_ground_get_kind(g), IK_GROUND_PLANE);
}

static void test_heightfield_init_refusals(void **state) {
  ik_real heights[9];
  unsigned char *mem = malloc(ik_ground_heightfield_size(3, 3));
  const size_t size = ik_ground_heightfield_size(3, 3);
  ik_ground *g = NULL;
  ik_error err;
  (void)state;
  assert_non_null(mem);
  memcpy(heights, small_heights, sizeof heights);
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), 1, 1, 3, heights, &g, &err),
                   IK_E_COUNT);
  assert_string_equal(err.field, "columns");
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), 1, 3, 0, heights, &g, &err),
                   IK_E_COUNT);
  assert_string_equal(err.field, "rows");
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), 0, 3, 3, heights, &g, &err),
                   IK_E_PARAMETER);
  assert_string_equal(err.field, "cell_size");
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), -1, 3, 3, heights, &g, &err),
                   IK_E_PARAMETER);
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), (ik_real)NAN, 3, 3, heights, &g, &err),
                   IK_E_NOT_FINITE);
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, NAN, 0), 1, 3, 3, heights, &g, &err),
                   IK_E_NOT_FINITE);
  assert_string_equal(err.field, "origin");
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), 1, 3, 3, NULL, &g, &err), IK_E_NULL);
  assert_string_equal(err.field, "heights");
  heights[7] = (ik_real)INFINITY;
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), 1, 3, 3, heights, &g, &err),
                   IK_E_NOT_FINITE);
  assert_string_equal(err.field, "heights");
  assert_int_equal(err.index, 7);
  heights[7] = IK_REAL_MAX_COORD * 10;
  assert_int_equal(ik_ground_heightfield_init(mem, size, v3(0, 0, 0), 1, 3, 3, heights, &g, &err),
                   IK_E_RANGE);
  assert_int_equal(err.index, 7);
  heights[7] = 0;
  /* A grid whose far corner is beyond the coordinate range. */
  assert_int_equal(
      ik_ground_heightfield_init(mem, size, v3(0, 0, 0), IK_REAL_MAX_COORD, 3, 3, heights, &g, &err),
      IK_E_RANGE);
  assert_string_equal(err.field, "cell_size");
  assert_ptr_equal(g, NULL);
  free(mem);
}

static void test_mesh_init_refusals(void **state) {
  ik_vec3 vertices[4];
  int triangles[6] = {0, 1, 2, 0, 2, 3};
  const size_t size = ik_ground_mesh_size(4, 2);
  unsigned char *mem = malloc(size);
  ik_ground *g = NULL;
  ik_error err;
  (void)state;
  assert_non_null(mem);
  vertices[0] = v3(0, 0, 0);
  vertices[1] = v3(1, 0, 0);
  vertices[2] = v3(1, 0, 1);
  vertices[3] = v3(0, 0, 1);
  assert_int_equal(ik_ground_mesh_init(mem, size, NULL, 4, triangles, 2, &g, &err), IK_E_NULL);
  assert_string_equal(err.field, "vertices");
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 4, NULL, 2, &g, &err), IK_E_NULL);
  assert_string_equal(err.field, "triangles");
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 2, triangles, 2, &g, &err), IK_E_COUNT);
  assert_string_equal(err.field, "vertex_count");
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 4, triangles, 0, &g, &err), IK_E_COUNT);
  assert_string_equal(err.field, "triangle_count");
  triangles[4] = 4;
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 4, triangles, 2, &g, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "triangles");
  assert_int_equal(err.index, 4);
  triangles[4] = -1;
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 4, triangles, 2, &g, &err), IK_E_PARAMETER);
  assert_int_equal(err.index, 4);
  triangles[4] = 2;
  vertices[2].y = (ik_real)NAN;
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 4, triangles, 2, &g, &err), IK_E_NOT_FINITE);
  assert_string_equal(err.field, "vertices");
  assert_int_equal(err.index, 2);
  vertices[2].y = IK_REAL_MAX_COORD * 10;
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 4, triangles, 2, &g, &err), IK_E_RANGE);
  vertices[2].y = 0;
  assert_int_equal(ik_ground_mesh_init(mem, size - 1, vertices, 4, triangles, 2, &g, &err), IK_E_PARAMETER);
  assert_string_equal(err.field, "mem_size");
  assert_ptr_equal(g, NULL);
  assert_int_equal(ik_ground_mesh_init(mem, size, vertices, 4, triangles, 2, &g, &err), IK_OK);
  assert_int_equal(ik_ground_get_kind(g), IK_GROUND_MESH);
  free(mem);
}

static void test_raycast_refusals_report_field_and_leave_hit_untouched(void **state) {
  owned_ground o = make_plane(v3(0, 0, 0), up);
  ik_ray_hit hit, before;
  ik_error err;
  struct {
    ik_vec3 origin, direction;
    ik_real max_distance;
    ik_status status;
    const char *field;
  } cases[] = {
      {{NAN, 0, 0}, {0, -1, 0}, 1, IK_E_NOT_FINITE, "origin"},
      {{0, INFINITY, 0}, {0, -1, 0}, 1, IK_E_NOT_FINITE, "origin"},
      {{0, IK_REAL_MAX_COORD * 10, 0}, {0, -1, 0}, 1, IK_E_RANGE, "origin"},
      {{0, 1, 0}, {0, NAN, 0}, 1, IK_E_NOT_FINITE, "direction"},
      {{0, 1, 0}, {0, 0, 0}, 1, IK_E_PARAMETER, "direction"},
      {{0, 1, 0}, {0, (ik_real)1e-20, 0}, 1, IK_E_PARAMETER, "direction"},
      {{0, 1, 0}, {0, -1, 0}, -1, IK_E_PARAMETER, "max_distance"},
      {{0, 1, 0}, {0, -1, 0}, (ik_real)NAN, IK_E_NOT_FINITE, "max_distance"},
      {{0, 1, 0}, {0, -1, 0}, (ik_real)INFINITY, IK_E_NOT_FINITE, "max_distance"},
  };
  size_t i;
  (void)state;
  memset(&before, 0x77, sizeof before);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hit = before;
    err.field = NULL;
    assert_int_equal(ik_ground_raycast_validate(o.g, cases[i].origin, cases[i].direction,
                                                cases[i].max_distance, &hit, &err),
                     cases[i].status);
    assert_string_equal(err.field, cases[i].field);
    assert_int_equal(ik_ground_raycast(o.g, cases[i].origin, cases[i].direction, cases[i].max_distance, &hit),
                     cases[i].status);
    assert_memory_equal(&hit, &before, sizeof hit);
  }
  assert_int_equal(ik_ground_raycast(NULL, v3(0, 1, 0), down, 1, &hit), IK_E_NULL);
  assert_int_equal(ik_ground_raycast_validate(o.g, v3(0, 1, 0), down, 1, NULL, &err), IK_E_NULL);
  assert_string_equal(err.field, "hit");
  assert_int_equal(ik_ground_raycast(o.g, v3(0, 1, 0), down, 1, NULL), IK_E_NULL);
  assert_int_equal(ik_ground_raycast_validate(o.g, v3(0, 1, 0), down, 1, &hit, &err), IK_OK);
  release(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plane_vertical_ray_hits_straight_below),
      cmocka_unit_test(test_plane_oblique_rays_hit_where_hand_computed),
      cmocka_unit_test(test_plane_ray_parallel_to_it_misses_even_inside_it),
      cmocka_unit_test(test_plane_ray_from_below_hits_back_face_with_flipped_normal),
      cmocka_unit_test(test_plane_hit_at_max_distance_counts_and_beyond_misses),
      cmocka_unit_test(test_plane_random_hits_lie_on_it_at_their_distance),
      cmocka_unit_test(test_heightfield_vertical_rays_hit_each_triangle_where_hand_computed),
      cmocka_unit_test(test_heightfield_vertical_rays_on_edges_and_vertices_hit),
      cmocka_unit_test(test_heightfield_oblique_ray_crosses_cells_to_the_hand_computed_hit),
      cmocka_unit_test(test_heightfield_ray_from_below_hits_back_face),
      cmocka_unit_test(test_heightfield_misses_outside_above_and_beyond_max_distance),
      cmocka_unit_test(test_heightfield_near_vertical_rays_agree_with_vertical),
      cmocka_unit_test(test_heightfield_of_huge_or_tiny_cells_reports_a_unit_normal),
      cmocka_unit_test(test_mesh_triangle_hits_inside_on_edges_and_on_vertices),
      cmocka_unit_test(test_mesh_back_face_reports_normal_facing_the_ray),
      cmocka_unit_test(test_mesh_parallel_beyond_and_behind_rays_miss),
      cmocka_unit_test(test_mesh_ray_through_shared_edge_or_vertex_never_slips_through),
      cmocka_unit_test(test_heightfield_and_mesh_of_same_heights_agree_on_random_rays),
      cmocka_unit_test(test_bvh_equals_brute_force_on_random_meshes),
      cmocka_unit_test(test_bvh_equals_brute_force_on_a_terrain_grid),
      cmocka_unit_test(test_bvh_handles_coincident_and_lopsided_triangles),
      cmocka_unit_test(test_mesh_with_degenerate_triangles_skips_them),
      cmocka_unit_test(test_custom_ground_gets_unit_direction_and_its_hit_is_cleaned_up),
      cmocka_unit_test(test_custom_ground_failure_or_garbage_is_refused_and_hit_untouched),
      cmocka_unit_test(test_sizes_are_zero_for_counts_init_refuses),
      cmocka_unit_test(test_init_works_in_unaligned_memory_and_refuses_too_little),
      cmocka_unit_test(test_plane_init_refusals),
      cmocka_unit_test(test_heightfield_init_refusals),
      cmocka_unit_test(test_mesh_init_refusals),
      cmocka_unit_test(test_raycast_refusals_report_field_and_leave_hit_untouched),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
