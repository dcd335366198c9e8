/*
 * bench_ground: cost of a ground ray query and of building a mesh ground.
 *
 * Workload: a bumpy terrain grid, 224 x 224 cells of 0.25 (two triangles each: 100,352
 * triangles over 56 x 56 units), heights a sum of sines (amplitude ~1.5) plus noise of
 * +-0.05 (fixed seed). Rays start 2 above the highest point at random x/z over the grid
 * and go straight down, or down within 30 degrees of vertical, max distance 20. The
 * same terrain is queried as a mesh (BVH), a heightfield (cell DDA) and, for scale, by
 * brute force over every triangle (a few rays only). Ray figures are the median, over
 * batches of 256 rays, of ns per ray; build figures the median of the builds. Feet: 256
 * feet walking over the heightfield at 60 Hz (default params), each checked and updated
 * alone (ik_foot_validate, ik__foot_update_valid: feet_each) or checked and updated
 * together (ik__foot_check_inputs, ik__foot_update_many: feet_many), ns per foot, the
 * median over frames; the two must leave the same bytes. `--quick`
 * runs a small version (the test suite uses it so this file cannot rot); `--rays N` and
 * `--reps N` override the counts.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "ik.h"
#include "ik_ground.h"
#include "ik_scene_internal.h"

#define BATCH 256
#define MAX_REPS 31

typedef struct terrain {
  int cells, samples; /* per side */
  ik_real cell_size;
  ik_vec3 origin;
  ik_real *heights;
  ik_vec3 *vertices;
  int *triangles;
  int vertex_count, triangle_count;
  ik_real top; /* highest point */
} terrain;

static void make_terrain(terrain *t, int cells) {
  unsigned long long seed = 0x9a3b21fedbaa9c55ull;
  int r, c, k = 0;
  t->cells = cells;
  t->samples = cells + 1;
  t->cell_size = (ik_real)0.25;
  t->origin = ik_vec3_make(-(ik_real)cells * t->cell_size / 2, 0, -(ik_real)cells * t->cell_size / 2);
  t->vertex_count = t->samples * t->samples;
  t->triangle_count = 2 * cells * cells;
  t->heights = malloc(sizeof *t->heights * (size_t)t->vertex_count);
  t->vertices = malloc(sizeof *t->vertices * (size_t)t->vertex_count);
  t->triangles = malloc(sizeof *t->triangles * 3 * (size_t)t->triangle_count);
  if (!t->heights || !t->vertices || !t->triangles) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  t->top = -1000;
  for (r = 0; r < t->samples; r++) {
    for (c = 0; c < t->samples; c++) {
      const double x = c * 0.25, z = r * 0.25;
      const double h = 0.8 * sin(0.31 * x) * cos(0.27 * z) + 0.5 * sin(1.3 * x + 0.7 * z) +
                       0.2 * cos(2.9 * z - 1.1 * x) + 0.1 * (bench_uniform(&seed) - 0.5);
      const int i = r * t->samples + c;
      t->heights[i] = (ik_real)h;
      t->vertices[i] = ik_vec3_make(t->origin.x + t->cell_size * (ik_real)c, t->origin.y + t->heights[i],
                                    t->origin.z + t->cell_size * (ik_real)r);
      if (t->heights[i] > t->top) t->top = t->heights[i];
    }
  }
  /* The heightfield's own split, so the mesh and the heightfield are one surface. */
  for (r = 0; r < cells; r++) {
    for (c = 0; c < cells; c++) {
      const int v00 = r * t->samples + c, v10 = v00 + 1, v01 = v00 + t->samples, v11 = v01 + 1;
      t->triangles[k++] = v00;
      t->triangles[k++] = v01;
      t->triangles[k++] = v11;
      t->triangles[k++] = v00;
      t->triangles[k++] = v11;
      t->triangles[k++] = v10;
    }
  }
}

static void free_terrain(terrain *t) {
  free(t->heights);
  free(t->vertices);
  free(t->triangles);
}

typedef struct ray_set {
  int count;
  ik_vec3 *origin, *direction;
} ray_set;

/* Rays over the grid from 2 above its top; tilt_deg 0 is straight down. */
static void make_rays(ray_set *rays, const terrain *t, int count, double tilt_deg, unsigned long long seed) {
  const double extent = (double)t->cell_size * t->cells;
  const double max_tilt = tilt_deg * 3.14159265358979 / 180;
  int i;
  rays->count = count;
  rays->origin = malloc(sizeof *rays->origin * (size_t)count);
  rays->direction = malloc(sizeof *rays->direction * (size_t)count);
  if (!rays->origin || !rays->direction) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (i = 0; i < count; i++) {
    /* Uniform over the spherical cap within max_tilt of straight down. */
    const double cos_tilt = 1 - bench_uniform(&seed) * (1 - cos(max_tilt));
    const double sin_tilt = sqrt(1 - cos_tilt * cos_tilt),
                 heading = 2 * 3.14159265358979 * bench_uniform(&seed);
    rays->origin[i] =
        ik_vec3_make((ik_real)((double)t->origin.x + extent * (0.1 + 0.8 * bench_uniform(&seed))), t->top + 2,
                     (ik_real)((double)t->origin.z + extent * (0.1 + 0.8 * bench_uniform(&seed))));
    rays->direction[i] = ik_vec3_make((ik_real)(sin_tilt * cos(heading)), (ik_real)-cos_tilt,
                                      (ik_real)(sin_tilt * sin(heading)));
  }
}

static void free_rays(ray_set *rays) {
  free(rays->origin);
  free(rays->direction);
}

/* Median ns per ray over batches; *hits counts the hits of one pass, *checksum sums
 * their distances (and keeps the compiler from dropping the queries). */
static double time_rays(const ik_ground *g, const ray_set *rays, int reps, int *hits, double *checksum) {
  const int batches = (rays->count + BATCH - 1) / BATCH;
  double *ns = malloc(sizeof *ns * (size_t)batches * (size_t)reps);
  double result;
  int rep, b, n = 0;
  if (!ns) exit(1);
  for (rep = 0; rep < reps; rep++) {
    *hits = 0;
    *checksum = 0;
    for (b = 0; b < batches; b++) {
      const int first = b * BATCH, last = first + BATCH < rays->count ? first + BATCH : rays->count;
      double t0;
      int i;
      t0 = bench_now_s();
      for (i = first; i < last; i++) {
        ik_ray_hit hit;
        ik_ground_raycast(g, rays->origin[i], rays->direction[i], 20, &hit);
        *hits += hit.hit;
        *checksum += (double)hit.distance;
      }
      ns[n++] = (bench_now_s() - t0) * 1e9 / (last - first);
    }
  }
  result = bench_median(ns, n);
  free(ns);
  return result;
}

/* Every triangle, for scale: what the BVH saves. */
static int brute_force(const terrain *t, ik_vec3 o, ik_vec3 d, double *t_best) {
  int i, found = 0;
  double best = 20;
  for (i = 0; i < t->triangle_count; i++) {
    const ik_vec3 a = t->vertices[t->triangles[3 * i]];
    const ik_vec3 e1 = ik_vec3_sub(t->vertices[t->triangles[3 * i + 1]], a);
    const ik_vec3 e2 = ik_vec3_sub(t->vertices[t->triangles[3 * i + 2]], a);
    const ik_vec3 p = ik_vec3_cross(d, e2), s = ik_vec3_sub(o, a), q = ik_vec3_cross(s, e1);
    const double det = (double)ik_vec3_dot(e1, p);
    double u, v, tt;
    if (det == 0) continue;
    u = (double)ik_vec3_dot(s, p) / det;
    v = (double)ik_vec3_dot(d, q) / det;
    tt = (double)ik_vec3_dot(e2, q) / det;
    if (u < 0 || v < 0 || u + v > 1 || tt < 0 || tt > best) continue;
    best = tt;
    found = 1;
  }
  *t_best = best;
  return found;
}

/* ---- feet ---- */

#define FEET 256

typedef struct feet_set {
  ik_foot_state state[FEET];
  ik_foot_state *ptr[FEET];
  ik_vec3 pos[FEET], vel[FEET];
  ik_quat rot[FEET];
  ik_foot_result out[FEET];
  ik_status status[FEET];
} feet_set;

static void make_feet(feet_set *f, const terrain *t) {
  unsigned long long seed = 0x2545f4914f6cdd1dull;
  const double extent = (double)t->cell_size * t->cells;
  int i;
  memset(f, 0, sizeof *f);
  for (i = 0; i < FEET; i++) {
    ik_foot_state_init(&f->state[i]);
    f->ptr[i] = &f->state[i];
    f->pos[i] = ik_vec3_make((ik_real)((double)t->origin.x + extent * (0.2 + 0.6 * bench_uniform(&seed))), 0,
                             (ik_real)((double)t->origin.z + extent * (0.2 + 0.6 * bench_uniform(&seed))));
    f->vel[i] =
        ik_vec3_make((ik_real)(3 * bench_uniform(&seed) - 1.5), 0, (ik_real)(3 * bench_uniform(&seed) - 1.5));
    f->rot[i] = ik_quat_identity();
  }
}

/* The animation: each foot walks on, its height at the nearest sample plus a swing. */
static void walk_feet(feet_set *f, const terrain *t, int frame, ik_real dt) {
  int i;
  for (i = 0; i < FEET; i++) {
    int c, r;
    f->pos[i] = ik_vec3_madd(f->pos[i], f->vel[i], dt);
    c = (int)((f->pos[i].x - t->origin.x) / t->cell_size + (ik_real)0.5);
    r = (int)((f->pos[i].z - t->origin.z) / t->cell_size + (ik_real)0.5);
    if (c < 0 || c >= t->samples || r < 0 || r >= t->samples) continue;
    f->pos[i].y = t->origin.y + t->heights[r * t->samples + c] + (ik_real)(0.15 * sin(0.3 * (frame + i)));
  }
}

static __attribute__((noinline)) void feet_each(feet_set *f, const ik_foot_params *p, const ik_ground *g,
                                                ik_real dt) {
  int i;
  for (i = 0; i < FEET; i++) {
    f->status[i] = ik_foot_validate(p, &f->state[i], g, f->pos[i], f->rot[i], dt, &f->out[i], NULL);
    if (f->status[i] == IK_OK)
      f->status[i] = ik__foot_update_valid(p, &f->state[i], g, f->pos[i], f->rot[i], dt, &f->out[i]);
  }
}

/* (Every foot here passes its check; a caller would leave out those that do not.) */
static __attribute__((noinline)) void feet_many(feet_set *f, const ik_foot_params *p, const ik_ground *g,
                                                ik_real dt) {
  int i, ok = 1;
  for (i = 0; i < FEET; i++) ok &= ik__foot_check_inputs(p, &f->state[i], f->pos[i], f->rot[i], dt) == IK_OK;
  if (ok) ik__foot_update_many(p, g, dt, FEET, f->ptr, f->pos, f->rot, f->out, f->status);
}

/* Median ns per foot of each way over `frames` frames, run side by side; 1 when the two
 * left the same bytes in every state and result. */
static int time_feet(const terrain *t, const ik_ground *g, int frames, double *each_ns, double *many_ns) {
  static feet_set a, b;
  const ik_real dt = (ik_real)(1.0 / 60);
  double *ns_a = malloc(sizeof *ns_a * (size_t)frames), *ns_b = malloc(sizeof *ns_b * (size_t)frames);
  ik_foot_params p;
  int frame, same = 1;
  if (!ns_a || !ns_b) exit(1);
  ik_foot_params_init(&p);
  make_feet(&a, t);
  make_feet(&b, t);
  for (frame = 0; frame < frames; frame++) {
    double t0;
    walk_feet(&a, t, frame, dt);
    walk_feet(&b, t, frame, dt);
    t0 = bench_now_s();
    feet_each(&a, &p, g, dt);
    ns_a[frame] = (bench_now_s() - t0) * 1e9 / FEET;
    t0 = bench_now_s();
    feet_many(&b, &p, g, dt);
    ns_b[frame] = (bench_now_s() - t0) * 1e9 / FEET;
    same &= memcmp(a.state, b.state, sizeof a.state) == 0 && memcmp(a.out, b.out, sizeof a.out) == 0;
  }
  *each_ns = bench_median(ns_a, frames);
  *many_ns = bench_median(ns_b, frames);
  free(ns_a);
  free(ns_b);
  return same;
}

int main(int argc, char **argv) {
  int cells = 224, ray_count = 100000, reps = 5, brute_rays = 200, i;
  terrain t;
  ray_set down, tilted;
  size_t mesh_size, field_size;
  void *mesh_mem, *field_mem;
  ik_ground *mesh = NULL, *field = NULL;
  double build_s[MAX_REPS], build_ms, brute_ns, checksum;
  int hits, disagree = 0;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      cells = 40;
      ray_count = 2000;
      reps = 1;
      brute_rays = 20;
    } else if (!strcmp(argv[i], "--rays") && i + 1 < argc) {
      ray_count = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--rays N] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS || ray_count < 1) {
    fprintf(stderr, "%s: reps must be 1..%d and rays at least 1\n", argv[0], MAX_REPS);
    return 2;
  }

  make_terrain(&t, cells);
  mesh_size = ik_ground_mesh_size(t.vertex_count, t.triangle_count);
  field_size = ik_ground_heightfield_size(t.samples, t.samples);
  mesh_mem = malloc(mesh_size);
  field_mem = malloc(field_size);
  if (!mesh_mem || !field_mem) return 1;

  for (i = 0; i < reps; i++) {
    const double t0 = bench_now_s();
    if (ik_ground_mesh_init(mesh_mem, mesh_size, t.vertices, t.vertex_count, t.triangles, t.triangle_count,
                            &mesh, NULL) != IK_OK) {
      fprintf(stderr, "mesh init failed\n");
      return 1;
    }
    build_s[i] = bench_now_s() - t0;
  }
  build_ms = bench_median(build_s, reps) * 1e3;
  if (ik_ground_heightfield_init(field_mem, field_size, t.origin, t.cell_size, t.samples, t.samples,
                                 t.heights, &field, NULL) != IK_OK) {
    fprintf(stderr, "heightfield init failed\n");
    return 1;
  }

  printf("ik_real = %s; terrain %d x %d cells, %d triangles; %d rays; median of %d\n\n",
         sizeof(ik_real) == sizeof(double) ? "double" : "float", cells, cells, t.triangle_count, ray_count,
         reps);
  printf("mesh build (binned SAH BVH): %.2f ms; buffer %.1f MB (heightfield %.2f MB)\n\n", build_ms,
         (double)mesh_size / 1e6, (double)field_size / 1e6);

  make_rays(&down, &t, ray_count, 0, 0x51d4dd0fe0414b10ull);
  make_rays(&tilted, &t, ray_count, 30, 0x391af700138658b5ull);
  printf("%-12s %-22s %12s %8s\n", "ground", "rays", "ns/ray", "hit");
  {
    const ik_ground *grounds[2];
    const char *names[2] = {"mesh", "heightfield"};
    const ray_set *sets[2];
    const char *set_names[2] = {"straight down", "within 30 deg of down"};
    int gi, si;
    grounds[0] = mesh;
    grounds[1] = field;
    sets[0] = &down;
    sets[1] = &tilted;
    for (gi = 0; gi < 2; gi++) {
      for (si = 0; si < 2; si++) {
        const double ns = time_rays(grounds[gi], sets[si], reps, &hits, &checksum);
        printf("%-12s %-22s %12.0f %7.1f%%\n", names[gi], set_names[si], ns, 100.0 * hits / sets[si]->count);
      }
    }
  }

  /* The two kinds are one surface: they must agree on every ray. */
  for (i = 0; i < tilted.count; i++) {
    ik_ray_hit a, b;
    ik_ground_raycast(mesh, tilted.origin[i], tilted.direction[i], 20, &a);
    ik_ground_raycast(field, tilted.origin[i], tilted.direction[i], 20, &b);
    if (a.hit != b.hit || (a.hit && fabs((double)(a.distance - b.distance)) > 1e-3)) disagree++;
  }
  {
    const double t0 = bench_now_s();
    double sum = 0, best;
    for (i = 0; i < brute_rays; i++)
      sum += brute_force(&t, tilted.origin[i], tilted.direction[i], &best) ? best : 0;
    brute_ns = (bench_now_s() - t0) * 1e9 / brute_rays;
    printf("%-12s %-22s %12.0f   (%d rays; checksum %.3f)\n", "brute force", "within 30 deg of down",
           brute_ns, brute_rays, sum);
  }
  printf("\nmesh and heightfield disagree on %d of %d rays\n", disagree, tilted.count);
  {
    double each_ns, many_ns;
    const int same = time_feet(&t, field, reps * 60, &each_ns, &many_ns);
    printf(
        "\nfeet on the heightfield (%d, 60 Hz): each alone %.0f ns/foot, many at once %.0f ns/foot "
        "(%.2fx); same bytes: %s\n",
        FEET, each_ns, many_ns, each_ns / many_ns, same ? "yes" : "NO");
    if (!same) disagree++;
  }

  free_rays(&down);
  free_rays(&tilted);
  free(mesh_mem);
  free(field_mem);
  free_terrain(&t);
  return disagree == 0 ? 0 : 1;
}
