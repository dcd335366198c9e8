/*
 * ik_ground.c: ray queries against planes, heightfields, triangle meshes and callbacks.
 *
 * Every kind lives in one block of caller memory: the ik_ground header first, then the
 * kind's arrays (heights; or BVH nodes, triangles and their original indices), each
 * aligned to GROUND_ALIGN. Triangles are intersected by Möller–Trumbore with relative
 * tolerances (PARALLEL_REL, BARY_EPS), the same routine for heightfield cells and mesh
 * triangles, so the two kinds agree on the same surface.
 */
#include "ik_ground.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

#include "ik_internal.h"
#include "ik_scene_internal.h"

/* Enough for every member of every block, and a cache line, so that each pair of
 * sibling BVH nodes shares one. */
#define GROUND_ALIGN 64

/* |det| at or below this fraction of |e1| |e2| is rounding noise: the ray runs along
 * the triangle's plane (or the triangle has no area) and misses. */
#define PARALLEL_REL ((ik_real)(8 * IK_REAL_EPSILON))
/* Barycentric slack: a ray through an edge or vertex shared by two triangles must hit
 * at least one of them whatever the rounding, so each triangle reaches this fraction
 * of its edges beyond itself. Far below any geometry a foot cares about. */
#define BARY_EPS ((ik_real)(1024 * IK_REAL_EPSILON))

/* Binned SAH: bins per axis, the largest leaf SAH may choose, and the depth after which
 * splits become object medians. Medians halve the count, so no node is deeper than
 * SAH_MAX_DEPTH + log2(IK_GROUND_MESH_MAX_TRIANGLES) < BVH_STACK. */
#define SAH_BINS 16
#define LEAF_MAX 8
#define SAH_MAX_DEPTH 32
#define BVH_STACK 64
/* SAH cost of visiting a node, relative to one triangle test. */
#define SAH_TRAVERSAL_COST ((ik_real)1)

/* 32 bytes, so that two siblings (stored side by side from an even index) fill one
 * cache line: a ray tests both children of a node and, on a big mesh, pays a cache
 * miss per level for it. Bounds are floats even when ik_real is double, rounded
 * outwards, so a box is never smaller than its triangles. */
typedef struct mesh_node {
  float bmin[3], bmax[3]; /* padded so that rounding never culls a hit (see pad_bounds) */
  int first;              /* leaf: first triangle; interior: left child (right is first + 1) */
  int count;              /* leaf: triangles, >= 1; interior: 0 */
} mesh_node;

/* A triangle as the ray test wants it: a corner, the two edges leaving it and the
 * parallel threshold (det_floor_of), kept so that a test takes no square root. */
typedef struct mesh_tri {
  ik_vec3 v0, e1, e2;
  ik_real det_floor;
} mesh_tri;

/* Build scratch, one per input triangle, in the slot its final mesh_tri takes later. */
typedef struct tri_bounds {
  ik_vec3 bmin, bmax, center;
} tri_bounds;

typedef union tri_slot {
  mesh_tri tri;
  tri_bounds bounds;
} tri_slot;

typedef struct plane_data {
  ik_vec3 point, normal; /* normal unit */
} plane_data;

typedef struct heightfield_data {
  ik_vec3 origin;
  ik_real cell_size;
  int columns, rows;
  ik_real min_y, max_y; /* world heights of the lowest and highest sample */
  const ik_real *heights;
} heightfield_data;

typedef struct mesh_data {
  const mesh_node *nodes;
  const mesh_tri *tris; /* in leaf order */
} mesh_data;

typedef struct custom_data {
  ik_ground_raycast_fn raycast;
  void *user;
} custom_data;

struct ik_ground {
  ik_ground_kind kind;
  union {
    plane_data plane;
    heightfield_data heightfield;
    mesh_data mesh;
    custom_data custom;
  } u;
};

/* |det| of a ray test below which the ray counts as parallel to the triangle e1, e2. */
static ik_real det_floor_of(ik_vec3 e1, ik_vec3 e2) {
  return PARALLEL_REL * ik_vec3_len(e1) * ik_vec3_len(e2);
}

/* ---- memory ---- */

static size_t align_size(size_t n) { return (n + (GROUND_ALIGN - 1)) & ~(size_t)(GROUND_ALIGN - 1); }

/* Bytes for a header plus blocks of the given sizes (each already aligned), with the
 * slack that lets init align an arbitrary `mem`. */
static size_t block_size(size_t blocks) {
  return (GROUND_ALIGN - 1) + align_size(sizeof(ik_ground)) + blocks;
}

static ik_ground *header_in(void *mem) {
  const uintptr_t addr = (uintptr_t)mem;
  return (ik_ground *)(void *)((char *)mem + ((GROUND_ALIGN - addr % GROUND_ALIGN) % GROUND_ALIGN));
}

/* The first byte after the header, where a kind's arrays start. */
static char *after_header(ik_ground *g) { return (char *)g + align_size(sizeof(ik_ground)); }

/* Common start of every init: the output pointer and the buffer. */
static ik_status check_buffer(void *mem, size_t mem_size, size_t need, ik_ground **out, ik_error *err) {
  if (out == NULL) return ik__fail(err, IK_E_NULL, "out", -1);
  if (mem == NULL) return ik__fail(err, IK_E_NULL, "mem", -1);
  if (mem_size < need) return ik__fail(err, IK_E_PARAMETER, "mem_size", -1);
  return IK_OK;
}

/* ---- plane ---- */

size_t ik_ground_plane_size(void) { return block_size(0); }

ik_status ik_ground_plane_init(void *mem, size_t mem_size, ik_vec3 point, ik_vec3 normal, ik_ground **out,
                               ik_error *err) {
  ik_status st;
  ik_ground *g;
  if ((st = ik__check_vec3(point, err, "point", -1)) != IK_OK) return st;
  if ((st = ik__check_vec3(normal, err, "normal", -1)) != IK_OK) return st;
  if (!(ik_vec3_len2(normal) > IK_TINY_LEN2)) return ik__fail(err, IK_E_PARAMETER, "normal", -1);
  if ((st = check_buffer(mem, mem_size, ik_ground_plane_size(), out, err)) != IK_OK) return st;
  g = header_in(mem);
  memset(g, 0, sizeof *g);
  g->kind = IK_GROUND_PLANE;
  g->u.plane.point = point;
  g->u.plane.normal = ik_vec3_normalize(normal);
  *out = g;
  return ik__fail(err, IK_OK, NULL, -1);
}

/* ---- custom ---- */

size_t ik_ground_custom_size(void) { return block_size(0); }

ik_status ik_ground_custom_init(void *mem, size_t mem_size, ik_ground_raycast_fn raycast, void *user,
                                ik_ground **out, ik_error *err) {
  ik_status st;
  ik_ground *g;
  if (raycast == NULL) return ik__fail(err, IK_E_NULL, "raycast", -1);
  if ((st = check_buffer(mem, mem_size, ik_ground_custom_size(), out, err)) != IK_OK) return st;
  g = header_in(mem);
  memset(g, 0, sizeof *g);
  g->kind = IK_GROUND_CUSTOM;
  g->u.custom.raycast = raycast;
  g->u.custom.user = user;
  *out = g;
  return ik__fail(err, IK_OK, NULL, -1);
}

/* ---- heightfield ---- */

/* Grids are capped so that rows * columns heights fit in an int and in size_t. */
static int heightfield_counts_ok(int columns, int rows) {
  if (columns < 2 || rows < 2) return 0;
  if (columns > INT32_MAX / rows) return 0;
  return (size_t)columns * (size_t)rows <= (SIZE_MAX / 2) / sizeof(ik_real);
}

size_t ik_ground_heightfield_size(int columns, int rows) {
  if (!heightfield_counts_ok(columns, rows)) return 0;
  return block_size(align_size((size_t)columns * (size_t)rows * sizeof(ik_real)));
}

ik_status ik_ground_heightfield_init(void *mem, size_t mem_size, ik_vec3 origin, ik_real cell_size,
                                     int columns, int rows, const ik_real *heights, ik_ground **out,
                                     ik_error *err) {
  ik_status st;
  ik_ground *g;
  heightfield_data *h;
  ik_real *heights_copy;
  ik_real min_h, max_h;
  int i, n;
  if ((st = ik__check_vec3(origin, err, "origin", -1)) != IK_OK) return st;
  if ((st = ik__check_real(cell_size, err, "cell_size", -1)) != IK_OK) return st;
  if (!(cell_size > 0)) return ik__fail(err, IK_E_PARAMETER, "cell_size", -1);
  if (columns < 2) return ik__fail(err, IK_E_COUNT, "columns", -1);
  if (rows < 2) return ik__fail(err, IK_E_COUNT, "rows", -1);
  if (!heightfield_counts_ok(columns, rows)) return ik__fail(err, IK_E_COUNT, "rows", -1);
  /* The far corner must be a usable coordinate too. */
  if ((st = ik__check_real(origin.x + cell_size * (ik_real)(columns - 1), err, "cell_size", -1)) != IK_OK)
    return st;
  if ((st = ik__check_real(origin.z + cell_size * (ik_real)(rows - 1), err, "cell_size", -1)) != IK_OK)
    return st;
  if (heights == NULL) return ik__fail(err, IK_E_NULL, "heights", -1);
  n = columns * rows;
  min_h = max_h = heights[0];
  for (i = 0; i < n; i++) {
    if ((st = ik__check_real(heights[i], err, "heights", i)) != IK_OK) return st;
    if ((st = ik__check_real(origin.y + heights[i], err, "heights", i)) != IK_OK) return st;
    if (heights[i] < min_h) min_h = heights[i];
    if (heights[i] > max_h) max_h = heights[i];
  }
  if ((st = check_buffer(mem, mem_size, ik_ground_heightfield_size(columns, rows), out, err)) != IK_OK)
    return st;

  g = header_in(mem);
  memset(g, 0, sizeof *g);
  heights_copy = (ik_real *)(void *)after_header(g);
  memcpy(heights_copy, heights, (size_t)n * sizeof *heights_copy);
  g->kind = IK_GROUND_HEIGHTFIELD;
  h = &g->u.heightfield;
  h->origin = origin;
  h->cell_size = cell_size;
  h->columns = columns;
  h->rows = rows;
  h->min_y = origin.y + min_h;
  h->max_y = origin.y + max_h;
  h->heights = heights_copy;
  *out = g;
  return ik__fail(err, IK_OK, NULL, -1);
}

/* ---- mesh: sizes and validation ---- */

static int mesh_counts_ok(int vertex_count, int triangle_count) {
  const size_t per_triangle = 2 * sizeof(mesh_node) + sizeof(tri_slot) + sizeof(int);
  if (vertex_count < 3 || triangle_count < 1 || triangle_count > IK_GROUND_MESH_MAX_TRIANGLES) return 0;
  /* Only 32-bit size_t can overflow: keep the total below half its range. */
  return (size_t)triangle_count <= (SIZE_MAX / 2 - 4096) / per_triangle;
}

/* Byte sizes of the mesh's arrays after the header. A tree of n leaves has 2n - 1
 * nodes; node 1 stays unused so that sibling pairs start at even indices. */
static size_t mesh_nodes_bytes(int triangle_count) {
  return align_size((size_t)(2 * triangle_count) * sizeof(mesh_node));
}
static size_t mesh_tris_bytes(int triangle_count) {
  return align_size((size_t)triangle_count * sizeof(tri_slot));
}
static size_t mesh_ids_bytes(int triangle_count) { return align_size((size_t)triangle_count * sizeof(int)); }

size_t ik_ground_mesh_size(int vertex_count, int triangle_count) {
  if (!mesh_counts_ok(vertex_count, triangle_count)) return 0;
  return block_size(mesh_nodes_bytes(triangle_count) + mesh_tris_bytes(triangle_count) +
                    mesh_ids_bytes(triangle_count));
}

static ik_status validate_mesh(const ik_vec3 *vertices, int vertex_count, const int *triangles,
                               int triangle_count, ik_error *err) {
  ik_status st;
  int i;
  if (vertices == NULL) return ik__fail(err, IK_E_NULL, "vertices", -1);
  if (triangles == NULL) return ik__fail(err, IK_E_NULL, "triangles", -1);
  if (vertex_count < 3) return ik__fail(err, IK_E_COUNT, "vertex_count", -1);
  if (triangle_count < 1 || triangle_count > IK_GROUND_MESH_MAX_TRIANGLES ||
      !mesh_counts_ok(vertex_count, triangle_count))
    return ik__fail(err, IK_E_COUNT, "triangle_count", -1);
  for (i = 0; i < vertex_count; i++) {
    if ((st = ik__check_vec3(vertices[i], err, "vertices", i)) != IK_OK) return st;
  }
  for (i = 0; i < 3 * triangle_count; i++) {
    if (triangles[i] < 0 || triangles[i] >= vertex_count)
      return ik__fail(err, IK_E_PARAMETER, "triangles", i);
  }
  return IK_OK;
}

/* ---- mesh: BVH build ---- */

static ik_vec3 vec3_min(ik_vec3 a, ik_vec3 b) {
  return ik_vec3_make(a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z);
}
static ik_vec3 vec3_max(ik_vec3 a, ik_vec3 b) {
  return ik_vec3_make(a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z);
}
static ik_real vec3_axis(ik_vec3 v, int axis) { return axis == 0 ? v.x : (axis == 1 ? v.y : v.z); }

/* Half the surface area of a box (SAH only compares ratios). */
static ik_real half_area(ik_vec3 bmin, ik_vec3 bmax) {
  const ik_vec3 e = ik_vec3_sub(bmax, bmin);
  return e.x * e.y + e.y * e.z + e.z * e.x;
}

/* Widens a box so the slab test cannot cull a hit its triangles report: the
 * barycentric slack lets a hit lie up to BARY_EPS of an edge outside its triangle, and
 * rounding the box corners costs a few ulps of the coordinates. */
static void pad_bounds(ik_vec3 *bmin, ik_vec3 *bmax) {
  const ik_real slack = 2 * BARY_EPS * ik_vec3_len(ik_vec3_sub(*bmax, *bmin));
  const ik_real rel = 8 * IK_REAL_EPSILON;
  bmin->x -= slack + rel * ik_fabs(bmin->x);
  bmin->y -= slack + rel * ik_fabs(bmin->y);
  bmin->z -= slack + rel * ik_fabs(bmin->z);
  bmax->x += slack + rel * ik_fabs(bmax->x);
  bmax->y += slack + rel * ik_fabs(bmax->y);
  bmax->z += slack + rel * ik_fabs(bmax->z);
}

/* The float at or below x (at or above, for float_up): bounds stay conservative. */
static float float_down(ik_real x) {
  float f;
  if (!(x <= (ik_real)FLT_MAX)) return FLT_MAX;
  if (!(x >= (ik_real)-FLT_MAX)) return -(float)INFINITY;
  f = (float)x;
  return (ik_real)f > x ? nextafterf(f, -(float)INFINITY) : f;
}
static float float_up(ik_real x) {
  float f;
  if (!(x >= (ik_real)-FLT_MAX)) return -FLT_MAX;
  if (!(x <= (ik_real)FLT_MAX)) return (float)INFINITY;
  f = (float)x;
  return (ik_real)f < x ? nextafterf(f, (float)INFINITY) : f;
}

static void set_node_bounds(mesh_node *node, ik_vec3 bmin, ik_vec3 bmax) {
  pad_bounds(&bmin, &bmax);
  node->bmin[0] = float_down(bmin.x);
  node->bmin[1] = float_down(bmin.y);
  node->bmin[2] = float_down(bmin.z);
  node->bmax[0] = float_up(bmax.x);
  node->bmax[1] = float_up(bmax.y);
  node->bmax[2] = float_up(bmax.z);
}

typedef struct build_item {
  int node, first, count, depth;
} build_item;

typedef struct sah_bin {
  ik_vec3 bmin, bmax;
  int count;
} sah_bin;

static int bin_of(ik_real center, ik_real cmin, ik_real scale) {
  /* Clamped before the conversion: a denormal extent makes scale infinite, and 0 * inf
   * is NaN, which (like inf) has no int to convert to (found by fuzz_core). */
  const ik_real b = (center - cmin) * scale;
  if (!(b > 0)) return 0;
  return b < (ik_real)SAH_BINS ? (int)b : SAH_BINS - 1;
}

/* Best binned-SAH split of ids[0, count) over the three axes, binned in one pass.
 * Returns 0 when no axis has any centroid spread; else the axis and the bin the left
 * side ends before, with the split's cost. */
static int find_sah_split(const tri_slot *slots, const int *ids, int count, ik_vec3 cmin, ik_vec3 cmax,
                          int *axis_out, int *split_out, ik_real *cost_out) {
  sah_bin bins[3][SAH_BINS];
  ik_real lo[3], scale[3];
  int axis, i, found = 0, any = 0;
  for (axis = 0; axis < 3; axis++) {
    const ik_real extent = vec3_axis(cmax, axis) - vec3_axis(cmin, axis);
    lo[axis] = vec3_axis(cmin, axis);
    scale[axis] = extent > 0 ? (ik_real)SAH_BINS / extent : 0; /* 0: all in bin 0, skipped below */
    any |= extent > 0;
    for (i = 0; i < SAH_BINS; i++) bins[axis][i].count = 0;
  }
  if (!any) return 0;
  for (i = 0; i < count; i++) {
    const tri_bounds *tb = &slots[ids[i]].bounds;
    for (axis = 0; axis < 3; axis++) {
      sah_bin *bin = &bins[axis][bin_of(vec3_axis(tb->center, axis), lo[axis], scale[axis])];
      if (bin->count++ == 0) {
        bin->bmin = tb->bmin;
        bin->bmax = tb->bmax;
      } else {
        bin->bmin = vec3_min(bin->bmin, tb->bmin);
        bin->bmax = vec3_max(bin->bmax, tb->bmax);
      }
    }
  }
  for (axis = 0; axis < 3; axis++) {
    const sah_bin *b = bins[axis];
    ik_real right_cost[SAH_BINS];
    ik_vec3 acc_min = ik_vec3_zero(), acc_max = ik_vec3_zero();
    int acc_count = 0;
    if (!(scale[axis] > 0)) continue;
    /* Right-to-left sweep: cost of the right side for a split before bin i. */
    for (i = SAH_BINS - 1; i > 0; i--) {
      if (b[i].count > 0) {
        acc_min = acc_count ? vec3_min(acc_min, b[i].bmin) : b[i].bmin;
        acc_max = acc_count ? vec3_max(acc_max, b[i].bmax) : b[i].bmax;
        acc_count += b[i].count;
      }
      right_cost[i] = acc_count ? half_area(acc_min, acc_max) * (ik_real)acc_count : -1;
    }
    /* Left-to-right sweep, combining. */
    acc_count = 0;
    for (i = 0; i + 1 < SAH_BINS; i++) {
      ik_real cost;
      if (b[i].count > 0) {
        acc_min = acc_count ? vec3_min(acc_min, b[i].bmin) : b[i].bmin;
        acc_max = acc_count ? vec3_max(acc_max, b[i].bmax) : b[i].bmax;
        acc_count += b[i].count;
      }
      if (acc_count == 0 || right_cost[i + 1] < 0) continue;
      cost = half_area(acc_min, acc_max) * (ik_real)acc_count + right_cost[i + 1];
      if (!found || cost < *cost_out) {
        found = 1;
        *cost_out = cost;
        *axis_out = axis;
        *split_out = i + 1;
      }
    }
  }
  return found;
}

/* Reorders ids so that the k-th smallest centre along `axis` is at ids[k], smaller ones
 * before it and larger ones after (quickselect, iterative). */
static void select_nth(const tri_slot *slots, int *ids, int count, int k, int axis) {
  int lo = 0, hi = count - 1;
  while (hi > lo) {
    const ik_real pivot = vec3_axis(slots[ids[lo + (hi - lo) / 2]].bounds.center, axis);
    int i = lo, j = hi;
    while (i <= j) {
      while (vec3_axis(slots[ids[i]].bounds.center, axis) < pivot) i++;
      while (vec3_axis(slots[ids[j]].bounds.center, axis) > pivot) j--;
      if (i <= j) {
        const int tmp = ids[i];
        ids[i] = ids[j];
        ids[j] = tmp;
        i++;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      break;
  }
}

/* Splits ids[0, count), whose bounds are bmin/bmax and whose centres span cmin/cmax,
 * for an interior node; returns the size of the left part, in [1, count - 1], or 0 when
 * the node should stay a leaf. */
static int split_node(const tri_slot *slots, int *ids, int count, int depth, ik_vec3 bmin, ik_vec3 bmax,
                      ik_vec3 cmin, ik_vec3 cmax) {
  int i, axis = 0, split = 0, left;
  ik_real cost = 0;
  if (count <= 2) return 0;
  if (depth < SAH_MAX_DEPTH && find_sah_split(slots, ids, count, cmin, cmax, &axis, &split, &cost)) {
    const ik_real leaf_cost = half_area(bmin, bmax) * (ik_real)count;
    const ik_real lo = vec3_axis(cmin, axis);
    const ik_real scale = (ik_real)SAH_BINS / (vec3_axis(cmax, axis) - lo);
    int j;
    if (count <= LEAF_MAX && leaf_cost <= SAH_TRAVERSAL_COST * half_area(bmin, bmax) + cost) return 0;
    /* Partition by the same bin function the costs were counted with. */
    i = 0;
    j = count - 1;
    while (i <= j) {
      if (bin_of(vec3_axis(slots[ids[i]].bounds.center, axis), lo, scale) < split) {
        i++;
      } else {
        const int tmp = ids[i];
        ids[i] = ids[j];
        ids[j] = tmp;
        j--;
      }
    }
    return i; /* both sides non-empty: the split has triangles on each */
  }
  /* Deep in the tree, or every centre in one point: an object median always halves. */
  {
    const ik_vec3 spread = ik_vec3_sub(cmax, cmin);
    axis = spread.x >= spread.y && spread.x >= spread.z ? 0 : (spread.y >= spread.z ? 1 : 2);
  }
  left = count / 2;
  if (vec3_axis(cmax, axis) > vec3_axis(cmin, axis)) select_nth(slots, ids, count, left, axis);
  return left;
}

static void build_bvh(mesh_node *nodes, tri_slot *slots, int *ids, int triangle_count) {
  build_item stack[BVH_STACK];
  int sp = 0, node_count = 2; /* root, then the unused slot that evens the pairs */
  memset(&nodes[1], 0, sizeof nodes[1]);
  stack[sp].node = 0;
  stack[sp].first = 0;
  stack[sp].count = triangle_count;
  stack[sp].depth = 0;
  sp++;
  while (sp > 0) {
    const build_item item = stack[--sp];
    mesh_node *node = &nodes[item.node];
    int *item_ids = ids + item.first;
    ik_vec3 bmin = slots[item_ids[0]].bounds.bmin, bmax = slots[item_ids[0]].bounds.bmax;
    ik_vec3 cmin = slots[item_ids[0]].bounds.center, cmax = cmin;
    int i, left;
    for (i = 1; i < item.count; i++) {
      const tri_bounds *tb = &slots[item_ids[i]].bounds;
      bmin = vec3_min(bmin, tb->bmin);
      bmax = vec3_max(bmax, tb->bmax);
      cmin = vec3_min(cmin, tb->center);
      cmax = vec3_max(cmax, tb->center);
    }
    left = split_node(slots, item_ids, item.count, item.depth, bmin, bmax, cmin, cmax);
    set_node_bounds(node, bmin, bmax);
    if (left == 0) {
      node->first = item.first;
      node->count = item.count;
    } else {
      /* Children side by side; the larger is pushed first so the smaller is built next,
       * which keeps this stack within log2(n) entries. */
      build_item l, r;
      node->first = node_count;
      node->count = 0;
      l.node = node_count;
      r.node = node_count + 1;
      node_count += 2;
      l.first = item.first;
      l.count = left;
      r.first = item.first + left;
      r.count = item.count - left;
      l.depth = r.depth = item.depth + 1;
      if (l.count >= r.count) {
        stack[sp++] = l;
        stack[sp++] = r;
      } else {
        stack[sp++] = r;
        stack[sp++] = l;
      }
    }
  }
}

ik_status ik_ground_mesh_init(void *mem, size_t mem_size, const ik_vec3 *vertices, int vertex_count,
                              const int *triangles, int triangle_count, ik_ground **out, ik_error *err) {
  ik_status st;
  ik_ground *g;
  mesh_node *nodes;
  tri_slot *slots;
  int *ids; /* build scratch: input triangle indices, put in leaf order by the build */
  int i;
  if ((st = validate_mesh(vertices, vertex_count, triangles, triangle_count, err)) != IK_OK) return st;
  if ((st = check_buffer(mem, mem_size, ik_ground_mesh_size(vertex_count, triangle_count), out, err)) !=
      IK_OK)
    return st;

  g = header_in(mem);
  memset(g, 0, sizeof *g);
  nodes = (mesh_node *)(void *)after_header(g);
  slots = (tri_slot *)(void *)((char *)nodes + mesh_nodes_bytes(triangle_count));
  ids = (int *)(void *)((char *)slots + mesh_tris_bytes(triangle_count));

  /* Build scratch: each triangle's bounds and centre, in its own slot. */
  for (i = 0; i < triangle_count; i++) {
    const ik_vec3 a = vertices[triangles[3 * i]];
    const ik_vec3 b = vertices[triangles[3 * i + 1]];
    const ik_vec3 c = vertices[triangles[3 * i + 2]];
    tri_bounds *tb = &slots[i].bounds;
    tb->bmin = vec3_min(a, vec3_min(b, c));
    tb->bmax = vec3_max(a, vec3_max(b, c));
    tb->center = ik_vec3_scale(ik_vec3_add(tb->bmin, tb->bmax), (ik_real)0.5);
    ids[i] = i;
  }
  build_bvh(nodes, slots, ids, triangle_count);
  /* The scratch is spent: slot i now takes the i-th triangle in leaf order, read again
   * from the caller's arrays (never from another slot). */
  for (i = 0; i < triangle_count; i++) {
    const int *t = &triangles[3 * ids[i]];
    mesh_tri *tri = &slots[i].tri;
    tri->v0 = vertices[t[0]];
    tri->e1 = ik_vec3_sub(vertices[t[1]], tri->v0);
    tri->e2 = ik_vec3_sub(vertices[t[2]], tri->v0);
    tri->det_floor = det_floor_of(tri->e1, tri->e2);
  }

  g->kind = IK_GROUND_MESH;
  g->u.mesh.nodes = nodes;
  g->u.mesh.tris = &slots[0].tri;
  *out = g;
  return ik__fail(err, IK_OK, NULL, -1);
}

/* ---- ray tests ---- */

/* Möller–Trumbore: 1 and *t when the ray o + t d (d unit) meets the triangle v0, v0 + e1,
 * v0 + e2 with 0 <= t <= t_max. `det_floor` is PARALLEL_REL * |e1| |e2|. The
 * barycentric tests run on numerators scaled by |det| (the sign folded in), so a
 * rejected triangle costs no division. */
static int ray_triangle(ik_vec3 o, ik_vec3 d, ik_vec3 v0, ik_vec3 e1, ik_vec3 e2, ik_real det_floor,
                        ik_real t_max, ik_real *t_out) {
  const ik_vec3 pvec = ik_vec3_cross(d, e2);
  const ik_real det = ik_vec3_dot(e1, pvec);
  const ik_real abs_det = ik_fabs(det), sign = det < 0 ? -1 : 1;
  const ik_real lo = -BARY_EPS * abs_det, hi = (1 + BARY_EPS) * abs_det;
  ik_real u, v, t;
  ik_vec3 s, q;
  if (!(abs_det > det_floor)) return 0;
  s = ik_vec3_sub(o, v0);
  u = ik_vec3_dot(s, pvec) * sign;
  if (u < lo || u > hi) return 0;
  q = ik_vec3_cross(s, e1);
  v = ik_vec3_dot(d, q) * sign;
  if (v < lo || u + v > hi) return 0;
  t = ik_vec3_dot(e2, q) * sign;
  if (!(t >= 0)) return 0;
  t /= abs_det;
  if (!(t <= t_max)) return 0;
  *t_out = t;
  return 1;
}

/* Unit normal of the surface spanned by e1, e2, facing against d. */
/* e divided by its largest component (in magnitude): the cross product of two of these
 * neither overflows nor underflows, whatever the ground's scale (edges near
 * IK_REAL_MAX_COORD have a cross product whose square is infinite, tiny ones one whose
 * square is zero, and either normalised to the zero vector). */
static ik_vec3 scaled_edge(ik_vec3 e) {
  ik_real m = ik_fabs(e.x);
  if (ik_fabs(e.y) > m) m = ik_fabs(e.y);
  if (ik_fabs(e.z) > m) m = ik_fabs(e.z);
  return m > 0 ? ik_vec3_make(e.x / m, e.y / m, e.z / m) : e;
}

static ik_vec3 facing_normal(ik_vec3 e1, ik_vec3 e2, ik_vec3 d) {
  const ik_vec3 n = ik_vec3_normalize(ik_vec3_cross(scaled_edge(e1), scaled_edge(e2)));
  return ik_vec3_dot(n, d) > 0 ? ik_vec3_neg(n) : n;
}

static int raycast_plane(const plane_data *p, ik_vec3 o, ik_vec3 d, ik_real t_max, ik_real *t_out,
                         ik_vec3 *normal_out) {
  const ik_real cos_in = ik_vec3_dot(p->normal, d);
  ik_real t;
  /* Parallel to rounding: no single point to report, even for a ray lying in the plane. */
  if (!(ik_fabs(cos_in) > 4 * IK_REAL_EPSILON)) return 0;
  t = ik_vec3_dot(p->normal, ik_vec3_sub(p->point, o)) / cos_in;
  if (!(t >= 0 && t <= t_max)) return 0;
  *t_out = t;
  *normal_out = cos_in > 0 ? ik_vec3_neg(p->normal) : p->normal;
  return 1;
}

/* Narrows [*t0, *t1] to where o + t d lies within [lo, hi] on one axis; 0 when empty. */
static int clip_slab(ik_real o, ik_real d, ik_real lo, ik_real hi, ik_real *t0, ik_real *t1) {
  ik_real ta, tb;
  if (d == 0) return lo <= o && o <= hi;
  ta = (lo - o) / d;
  tb = (hi - o) / d;
  if (ta > tb) {
    const ik_real tmp = ta;
    ta = tb;
    tb = tmp;
  }
  if (ta > *t0) *t0 = ta;
  if (tb < *t1) *t1 = tb;
  return *t0 <= *t1;
}

static ik_vec3 heightfield_vertex(const heightfield_data *h, int c, int r) {
  return ik_vec3_make(h->origin.x + h->cell_size * (ik_real)c, h->origin.y + h->heights[r * h->columns + c],
                      h->origin.z + h->cell_size * (ik_real)r);
}

/* Both triangles of cell (c, r); the nearer hit, its normal worked out for it alone. */
static int heightfield_cell(const heightfield_data *h, int c, int r, ik_vec3 o, ik_vec3 d, ik_real t_max,
                            ik_real *t_out, ik_vec3 *normal_out) {
  const ik_vec3 p00 = heightfield_vertex(h, c, r);
  const ik_vec3 diag = ik_vec3_sub(heightfield_vertex(h, c + 1, r + 1), p00);
  const ik_vec3 along_z = ik_vec3_sub(heightfield_vertex(h, c, r + 1), p00);
  const ik_vec3 along_x = ik_vec3_sub(heightfield_vertex(h, c + 1, r), p00);
  ik_real t;
  int found = 0;
  if (ray_triangle(o, d, p00, along_z, diag, det_floor_of(along_z, diag), t_max, &t)) {
    t_max = *t_out = t;
    found = 1;
  }
  if (ray_triangle(o, d, p00, diag, along_x, det_floor_of(diag, along_x), t_max, &t)) {
    *t_out = t;
    found = 2;
  }
  if (found) *normal_out = found == 1 ? facing_normal(along_z, diag, d) : facing_normal(diag, along_x, d);
  return found != 0;
}

/* t at which the ray crosses grid line `line` (a multiple of cell_size from `start`). */
static ik_real line_crossing(ik_real start, ik_real cell_size, int line, ik_real o, ik_real d) {
  return (start + cell_size * (ik_real)line - o) / d;
}

/* floor(u) clamped to [0, last]. */
static int cell_index(ik_real u, int last) {
  if (!(u > 0)) return 0;
  if (u >= (ik_real)last) return last;
  return (int)u;
}

/* 2D DDA over the cells the ray's x/z projection crosses, nearest first: the first cell
 * with a hit holds the nearest hit, since a hit in a cell lies on the ray's stretch over
 * that cell. Cells are entered in order of t, so one ray costs O(cells crossed). */
static int raycast_heightfield(const heightfield_data *h, ik_vec3 o, ik_vec3 d, ik_real t_max, ik_real *t_out,
                               ik_vec3 *normal_out) {
  const ik_real cs = h->cell_size;
  const ik_real x_lo = h->origin.x, z_lo = h->origin.z;
  const ik_real x_hi = x_lo + cs * (ik_real)(h->columns - 1), z_hi = z_lo + cs * (ik_real)(h->rows - 1);
  const ik_real inf = (ik_real)INFINITY;
  const int last_c = h->columns - 2, last_r = h->rows - 2;
  const int step_c = d.x > 0 ? 1 : -1, step_r = d.z > 0 ? 1 : -1;
  ik_real t_enter = 0, t_leave = t_max, pad, tx, tz;
  int c, r;
  /* The grid's box, widened by a few ulps so that rounding at its faces drops no hit
   * (cells are clamped to the grid below, so the margin visits nothing extra). */
  pad = 16 * IK_REAL_EPSILON * (ik_fabs(x_lo) + ik_fabs(x_hi));
  if (!clip_slab(o.x, d.x, x_lo - pad, x_hi + pad, &t_enter, &t_leave)) return 0;
  pad = 16 * IK_REAL_EPSILON * (ik_fabs(z_lo) + ik_fabs(z_hi));
  if (!clip_slab(o.z, d.z, z_lo - pad, z_hi + pad, &t_enter, &t_leave)) return 0;
  pad = 16 * IK_REAL_EPSILON * (ik_fabs(h->min_y) + ik_fabs(h->max_y));
  if (!clip_slab(o.y, d.y, h->min_y - pad, h->max_y + pad, &t_enter, &t_leave)) return 0;

  /* The cell under the entry point; a point on a grid line starts in the cell on its +
   * side, and the one on its - side is visited next when the ray heads that way. */
  c = cell_index((o.x + d.x * t_enter - x_lo) / cs, last_c);
  r = cell_index((o.z + d.z * t_enter - z_lo) / cs, last_r);
  tx = d.x != 0 ? line_crossing(x_lo, cs, c + (step_c > 0), o.x, d.x) : inf;
  tz = d.z != 0 ? line_crossing(z_lo, cs, r + (step_r > 0), o.z, d.z) : inf;
  for (;;) {
    int cross_c, cross_r;
    if (heightfield_cell(h, c, r, o, d, t_max, t_out, normal_out)) return 1;
    if ((tx < tz ? tx : tz) > t_leave) return 0;
    /* Through a corner exactly: step both ways (the ray only touches the side cells). */
    cross_c = tx <= tz;
    cross_r = tz <= tx;
    if (cross_c) {
      c += step_c;
      if (c < 0 || c > last_c) return 0;
      tx = line_crossing(x_lo, cs, c + (step_c > 0), o.x, d.x);
    }
    if (cross_r) {
      r += step_r;
      if (r < 0 || r > last_r) return 0;
      tz = line_crossing(z_lo, cs, r + (step_r > 0), o.z, d.z);
    }
  }
}

/* raycast_heightfield for a ray straight up or down (d.x and d.z zeros of either sign),
 * step for step: its x/z projection is a point, so the walk's first cell is its only
 * one (the crossings it would step to lie at infinity) and nothing else is set up. */
static int raycast_heightfield_vertical(const heightfield_data *h, ik_vec3 o, ik_vec3 d, ik_real t_max,
                                        ik_real *t_out, ik_vec3 *normal_out) {
  const ik_real cs = h->cell_size;
  const ik_real x_lo = h->origin.x, z_lo = h->origin.z;
  const ik_real x_hi = x_lo + cs * (ik_real)(h->columns - 1), z_hi = z_lo + cs * (ik_real)(h->rows - 1);
  ik_real t_enter = 0, t_leave = t_max, pad;
  pad = 16 * IK_REAL_EPSILON * (ik_fabs(x_lo) + ik_fabs(x_hi));
  if (!(x_lo - pad <= o.x && o.x <= x_hi + pad)) return 0;
  pad = 16 * IK_REAL_EPSILON * (ik_fabs(z_lo) + ik_fabs(z_hi));
  if (!(z_lo - pad <= o.z && o.z <= z_hi + pad)) return 0;
  pad = 16 * IK_REAL_EPSILON * (ik_fabs(h->min_y) + ik_fabs(h->max_y));
  if (!clip_slab(o.y, d.y, h->min_y - pad, h->max_y + pad, &t_enter, &t_leave)) return 0;
  return heightfield_cell(h, cell_index((o.x + d.x * t_enter - x_lo) / cs, h->columns - 2),
                          cell_index((o.z + d.z * t_enter - z_lo) / cs, h->rows - 2), o, d, t_max, t_out,
                          normal_out);
}

/* 1 / a, with a zero (or denormal) component replaced by a tiny one of the same sign:
 * the slab test then never meets 0 * inf, and a ray that barely moves along an axis
 * moves by nothing measurable either way. */
static ik_real slab_inverse(ik_real a) {
  const ik_real tiny = (ik_real)1e-30;
  if (ik_fabs(a) < tiny) a = a < 0 ? -tiny : tiny;
  return 1 / a;
}

/* Whether the ray meets the node's box within [0, t_max]; *t_near is where it enters.
 * The far end is stretched by a few ulps so that rounding in the slab distances cannot
 * cull a box the ray grazes (Ize, "Robust BVH ray traversal"). */
/* Narrows [*t0, *t1] by one axis of a box; no branch on the ray's sign. */
static inline void slab_narrow(ik_real lo, ik_real hi, ik_real o, ik_real inv_d, ik_real *t0, ik_real *t1) {
  const ik_real ta = (lo - o) * inv_d, tb = (hi - o) * inv_d;
  const ik_real t_in = ta < tb ? ta : tb, t_out = ta < tb ? tb : ta;
  if (t_in > *t0) *t0 = t_in;
  if (t_out < *t1) *t1 = t_out;
}

static inline int ray_box(const mesh_node *n, ik_vec3 o, ik_vec3 inv_d, ik_real t_max, ik_real *t_near) {
  ik_real t0 = 0, t1 = t_max;
  slab_narrow((ik_real)n->bmin[0], (ik_real)n->bmax[0], o.x, inv_d.x, &t0, &t1);
  slab_narrow((ik_real)n->bmin[1], (ik_real)n->bmax[1], o.y, inv_d.y, &t0, &t1);
  slab_narrow((ik_real)n->bmin[2], (ik_real)n->bmax[2], o.z, inv_d.z, &t0, &t1);
  if (!(t0 <= t1 * (1 + 8 * IK_REAL_EPSILON))) return 0;
  *t_near = t0;
  return 1;
}

/* Nearest hit by an iterative traversal, nearer child first; a far child waits on a
 * fixed stack with its entry distance and is dropped once a nearer hit is known. The
 * build bounds the depth, hence the stack (see SAH_MAX_DEPTH). */
static int raycast_mesh(const mesh_data *m, ik_vec3 o, ik_vec3 d, ik_real t_max, ik_real *t_out,
                        ik_vec3 *normal_out) {
  const ik_vec3 inv_d = ik_vec3_make(slab_inverse(d.x), slab_inverse(d.y), slab_inverse(d.z));
  int stack_node[BVH_STACK];
  ik_real stack_t[BVH_STACK];
  int sp = 0, node = 0, best = -1;
  ik_real best_t = t_max, t_near;
  if (!ray_box(&m->nodes[0], o, inv_d, best_t, &t_near)) return 0;
  for (;;) {
    const mesh_node *n = &m->nodes[node];
    if (n->count > 0) {
      int i;
      for (i = n->first; i < n->first + n->count; i++) {
        const mesh_tri *tri = &m->tris[i];
        ik_real t;
        if (ray_triangle(o, d, tri->v0, tri->e1, tri->e2, tri->det_floor, best_t, &t)) {
          best_t = t;
          best = i;
        }
      }
    } else {
      const int left = n->first, right = n->first + 1;
      ik_real t_left, t_right;
      const int hit_left = ray_box(&m->nodes[left], o, inv_d, best_t, &t_left);
      const int hit_right = ray_box(&m->nodes[right], o, inv_d, best_t, &t_right);
      if (hit_left && hit_right) {
        const int left_first = t_left <= t_right;
        stack_node[sp] = left_first ? right : left;
        stack_t[sp] = left_first ? t_right : t_left;
        sp++;
        node = left_first ? left : right;
        continue;
      }
      if (hit_left || hit_right) {
        node = hit_left ? left : right;
        continue;
      }
    }
    while (sp > 0 && stack_t[sp - 1] > best_t) sp--;
    if (sp == 0) break;
    node = stack_node[--sp];
  }
  if (best < 0) return 0;
  *t_out = best_t;
  *normal_out = facing_normal(m->tris[best].e1, m->tris[best].e2, d);
  return 1;
}

/* The callback's answer, checked: a failure aborts, a hit outside [0, t_max] is a miss,
 * garbage in a hit is refused, the normal is made unit and to face the ray. */
static ik_status raycast_custom(const custom_data *c, ik_vec3 o, ik_vec3 d, ik_real t_max, int *found,
                                ik_real *t_out, ik_vec3 *normal_out) {
  ik_ray_hit answer;
  int r;
  ik_vec3 n;
  memset(&answer, 0, sizeof answer);
  r = c->raycast(c->user, o, d, t_max, &answer);
  *found = 0;
  if (r < 0) return IK_E_PARAMETER;
  if (r == 0) return IK_OK;
  /* The distance first: a hit outside the ray is a miss, whatever normal came with it. */
  if (!ik_real_is_finite(answer.distance)) return IK_E_NOT_FINITE;
  if (!(answer.distance >= 0 && answer.distance <= t_max)) return IK_OK;
  if (!ik_vec3_is_finite(answer.normal)) return IK_E_NOT_FINITE;
  n = ik_vec3_normalize(answer.normal);
  if (ik_vec3_len2(n) == 0) return IK_E_PARAMETER;
  *found = 1;
  *t_out = answer.distance;
  *normal_out = ik_vec3_dot(n, d) > 0 ? ik_vec3_neg(n) : n;
  return IK_OK;
}

/* ---- queries ---- */

ik_ground_kind ik_ground_get_kind(const ik_ground *g) { return g->kind; }

ik_status ik_ground_raycast_validate(const ik_ground *g, ik_vec3 origin, ik_vec3 direction,
                                     ik_real max_distance, const ik_ray_hit *hit, ik_error *err) {
  ik_status st;
  if (g == NULL) return ik__fail(err, IK_E_NULL, "ground", -1);
  if (hit == NULL) return ik__fail(err, IK_E_NULL, "hit", -1);
  if ((unsigned)g->kind > (unsigned)IK_GROUND_CUSTOM) return ik__fail(err, IK_E_PARAMETER, "ground", -1);
  if ((st = ik__check_vec3(origin, err, "origin", -1)) != IK_OK) return st;
  if ((st = ik__check_vec3(direction, err, "direction", -1)) != IK_OK) return st;
  if (!(ik_vec3_len2(direction) > IK_TINY_LEN2)) return ik__fail(err, IK_E_PARAMETER, "direction", -1);
  if ((st = ik__check_real(max_distance, err, "max_distance", -1)) != IK_OK) return st;
  if (max_distance < 0) return ik__fail(err, IK_E_PARAMETER, "max_distance", -1);
  return ik__fail(err, IK_OK, NULL, -1);
}

/* The query for valid inputs and a unit direction; `vertical_ok`: a ray along y may take
 * raycast_heightfield_vertical. */
static ik_status raycast_unit(const ik_ground *g, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_distance,
                              int vertical_ok, ik_ray_hit *hit) {
  ik_vec3 normal = ik_vec3_zero();
  ik_real t = 0;
  int found = 0;
  switch (g->kind) {
    case IK_GROUND_PLANE:
      found = raycast_plane(&g->u.plane, origin, dir_unit, max_distance, &t, &normal);
      break;
    case IK_GROUND_HEIGHTFIELD:
      found =
          vertical_ok && dir_unit.x == 0 && dir_unit.z == 0
              ? raycast_heightfield_vertical(&g->u.heightfield, origin, dir_unit, max_distance, &t, &normal)
              : raycast_heightfield(&g->u.heightfield, origin, dir_unit, max_distance, &t, &normal);
      break;
    case IK_GROUND_MESH:
      found = raycast_mesh(&g->u.mesh, origin, dir_unit, max_distance, &t, &normal);
      break;
    case IK_GROUND_CUSTOM: {
      const ik_status cst = raycast_custom(&g->u.custom, origin, dir_unit, max_distance, &found, &t, &normal);
      if (cst != IK_OK) return cst;
      break;
    }
    default: /* what ik_ground_raycast_validate refuses */
      return IK_E_PARAMETER;
  }
  memset(hit, 0, sizeof *hit);
  if (found) {
    hit->hit = 1;
    hit->distance = t;
    hit->point = ik_vec3_madd(origin, dir_unit, t);
    hit->normal = normal;
  }
  return IK_OK;
}

ik_status ik_ground_raycast(const ik_ground *g, ik_vec3 origin, ik_vec3 direction, ik_real max_distance,
                            ik_ray_hit *hit) {
  const ik_status st = ik_ground_raycast_validate(g, origin, direction, max_distance, hit, NULL);
  if (st != IK_OK) return st;
  return raycast_unit(g, origin, ik_vec3_normalize(direction), max_distance, 0, hit);
}

ik_status ik__ground_raycast_unit(const ik_ground *g, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_distance,
                                  ik_ray_hit *hit) {
  return raycast_unit(g, origin, dir_unit, max_distance, 1, hit);
}
