/* The glTF importer: world transforms of random node trees (TRS and matrix nodes, any
 * scale) against matrices composed here, the skeletons made from them, the test
 * characters against their inverse bind matrices, names, humanoid maps, and every class
 * of malformed file refused with its exact message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ik_gltf.h"
#include "test_util.h"

#ifdef IK_REAL_FLOAT
#define T_SK 2e-4 /* a skeleton's own float arithmetic, relative to the tree's size */
#else
#define T_SK 1e-6
#endif

/* ---- an independent matrix composition (row-major 3x4 affine, unlike the importer) ---- */

typedef struct aff {
  double m[3][4];
} aff;

static aff aff_trs(const double t[3], const double q[4], const double s[3]) {
  aff a;
  double x = q[0], y = q[1], z = q[2], w = q[3];
  double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                    {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                    {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
  int i, j;
  for (i = 0; i < 3; i++) {
    for (j = 0; j < 3; j++) a.m[i][j] = r[i][j] * s[j];
    a.m[i][3] = t[i];
  }
  return a;
}

static aff aff_mul(aff a, aff b) {
  aff c;
  int i, j;
  for (i = 0; i < 3; i++)
    for (j = 0; j < 4; j++) {
      c.m[i][j] =
          a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j] + (j == 3 ? a.m[i][3] : 0);
    }
  return c;
}

/* ---- building files ---- */

typedef struct sbuf {
  char *s;
  size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  for (;;) {
    va_start(ap, fmt);
    n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (b->s && (size_t)n < b->cap - b->len) break;
    b->cap = (b->cap + (size_t)n + 1) * 2;
    b->s = (char *)realloc(b->s, b->cap);
    assert_non_null(b->s);
  }
  b->len += (size_t)n;
}

static void put32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16),
  p[3] = (unsigned char)(v >> 24);
}

/* A GLB of json and (when bin_len > 0) a BIN chunk; *size gets its length. */
static unsigned char *glb(const char *json, const void *bin, size_t bin_len, size_t *size) {
  size_t jl = strlen(json), jp = (jl + 3) & ~(size_t)3, bp = (bin_len + 3) & ~(size_t)3;
  size_t total = 12 + 8 + jp + (bin_len ? 8 + bp : 0);
  unsigned char *d = (unsigned char *)calloc(1, total);
  assert_non_null(d);
  memcpy(d, "glTF", 4);
  put32(d + 4, 2);
  put32(d + 8, (uint32_t)total);
  put32(d + 12, (uint32_t)jp);
  put32(d + 16, 0x4E4F534Au);
  memcpy(d + 20, json, jl);
  memset(d + 20 + jl, ' ', jp - jl);
  if (bin_len) {
    put32(d + 20 + jp, (uint32_t)bp);
    put32(d + 24 + jp, 0x004E4942u);
    memcpy(d + 28 + jp, bin, bin_len);
  }
  *size = total;
  return d;
}

static ik_gltf *load_ok(const char *json) {
  ik_gltf *g = NULL;
  ik_gltf_error err;
  ik_gltf_status st = ik_gltf_load_memory(json, strlen(json), NULL, NULL, &g, &err);
  if (st != IK_GLTF_OK) fail_msg("refused: %s", err.message);
  assert_non_null(g);
  return g;
}

/* The skeleton of `skin` (through the public calls a host would make). */
static ik_skeleton *make_skeleton(const ik_gltf *g, int skin, int **nodes_out, void **mem) {
  int n = ik_gltf_skeleton_bone_count(g, skin);
  ik_bone_desc *descs = (ik_bone_desc *)malloc(sizeof *descs * (size_t)n);
  int *nodes = (int *)malloc(sizeof(int) * (size_t)n);
  ik_gltf_error gerr;
  ik_error err;
  ik_skeleton *sk = NULL;
  assert_true(n > 0);
  assert_non_null(descs);
  assert_non_null(nodes);
  if (ik_gltf_skeleton_descs(g, skin, descs, nodes, n, &gerr) != IK_GLTF_OK)
    fail_msg("descs: %s", gerr.message);
  *mem = malloc(ik_skeleton_size(n));
  assert_non_null(*mem);
  assert_int_equal(ik_skeleton_init(*mem, ik_skeleton_size(n), descs, n, &sk, &err), IK_OK);
  free(descs);
  *nodes_out = nodes;
  return sk;
}

/* ---- random trees ---- */

typedef struct tnode {
  int parent;
  int matrix;       /* written as a matrix */
  int uniform_path; /* every scale from the root down to here is uniform and positive */
  double t[3], q[4], s[3];
  aff world;
} tnode;

static double rel_err(double a, double b) { return fabs(a - b) / (1 + fabs(b)); }

static void random_trees_match_composed_matrices(void **state) {
  int seed;
  (void)state;
  for (seed = 1; seed <= 60; seed++) {
    t_rng rng = t_rng_make((uint64_t)seed);
    int n = t_int(&rng, 1, 40), i, k, *perm, *nodes;
    tnode *tn = (tnode *)calloc((size_t)n, sizeof *tn);
    sbuf js = {0};
    ik_gltf *g;
    ik_skeleton *sk;
    void *mem;
    double worst_world = 0, worst_pos = 0, worst_rot = 0;
    assert_non_null(tn);
    /* tree in creation order, written to the file in a shuffled order */
    perm = (int *)malloc(sizeof(int) * (size_t)n);
    assert_non_null(perm);
    for (i = 0; i < n; i++) perm[i] = i;
    for (i = n - 1; i > 0; i--) {
      int j = t_int(&rng, 0, i), tmp = perm[i];
      perm[i] = perm[j], perm[j] = tmp;
    }
    for (i = 0; i < n; i++) {
      ik_quat q = t_unit_quat(&rng);
      int kind = t_int(&rng, 0, 9);
      tn[i].parent = i == 0 || t_int(&rng, 0, 5) == 0 ? -1 : t_int(&rng, 0, i - 1);
      for (k = 0; k < 3; k++) tn[i].t[k] = t_uniform(&rng, -2, 2);
      tn[i].q[0] = q.x, tn[i].q[1] = q.y, tn[i].q[2] = q.z, tn[i].q[3] = q.w;
      { /* unit in double, as the importer makes it (a float build's t_unit_quat is unit to 1e-7) */
        double qn = sqrt(tn[i].q[0] * tn[i].q[0] + tn[i].q[1] * tn[i].q[1] + tn[i].q[2] * tn[i].q[2] +
                         tn[i].q[3] * tn[i].q[3]);
        for (k = 0; k < 4; k++) tn[i].q[k] /= qn;
      }
      tn[i].s[0] = tn[i].s[1] = tn[i].s[2] = kind < 6 ? 1 : t_uniform(&rng, 0.5, 2);
      if (kind == 9) /* non-uniform, sometimes mirrored */
        for (k = 0; k < 3; k++) tn[i].s[k] = t_uniform(&rng, 0.5, 2) * (t_int(&rng, 0, 3) == 0 ? -1 : 1);
      tn[i].matrix = t_int(&rng, 0, 2) == 0;
      tn[i].world = aff_trs(tn[i].t, tn[i].q, tn[i].s);
      tn[i].uniform_path = kind < 9;
      if (tn[i].parent >= 0) {
        tn[i].world = aff_mul(tn[tn[i].parent].world, tn[i].world);
        tn[i].uniform_path &= tn[tn[i].parent].uniform_path;
      }
    }
    sb_add(&js, "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[");
    for (k = 0; k < n; k++) { /* file index k holds tree node perm[k] */
      tnode *t = &tn[perm[k]];
      int c, first = 1;
      sb_add(&js, "%s{\"name\":\"n%d\"", k ? "," : "", perm[k]);
      if (t->matrix) {
        aff l = aff_trs(t->t, t->q, t->s);
        int r;
        sb_add(&js, ",\"matrix\":[");
        for (c = 0; c < 4; c++)
          for (r = 0; r < 4; r++)
            sb_add(&js, "%s%.17g", c || r ? "," : "", r < 3 ? l.m[r][c] : (c == 3 ? 1.0 : 0.0));
        sb_add(&js, "]");
      } else {
        sb_add(&js, ",\"translation\":[%.17g,%.17g,%.17g]", t->t[0], t->t[1], t->t[2]);
        sb_add(&js, ",\"rotation\":[%.17g,%.17g,%.17g,%.17g]", t->q[0], t->q[1], t->q[2], t->q[3]);
        if (t->s[0] != 1 || t->s[1] != 1 || t->s[2] != 1)
          sb_add(&js, ",\"scale\":[%.17g,%.17g,%.17g]", t->s[0], t->s[1], t->s[2]);
      }
      for (c = 0; c < n; c++) {
        if (tn[perm[c]].parent != perm[k]) continue;
        sb_add(&js, "%s%d", first ? ",\"children\":[" : ",", c);
        first = 0;
      }
      sb_add(&js, "%s}", first ? "" : "]");
    }
    sb_add(&js, "],\"skins\":[{\"joints\":[0"); /* a subset: the others are folded in */
    for (k = 1; k < n; k++)
      if (t_int(&rng, 0, 2)) sb_add(&js, ",%d", k);
    sb_add(&js, "]}]}");
    g = load_ok(js.s);
    assert_int_equal(ik_gltf_node_count(g), n);
    for (k = 0; k < n; k++) {
      double m[16];
      int r, c;
      const tnode *t = &tn[perm[k]];
      assert_int_equal(ik_gltf_node_world(g, k, m), IK_GLTF_OK);
      for (r = 0; r < 3; r++)
        for (c = 0; c < 4; c++) {
          double e = rel_err(m[c * 4 + r], t->world.m[r][c]);
          if (e > worst_world) worst_world = e;
        }
      for (c = 0; c < n && t->parent >= 0 && perm[c] != t->parent; c++) continue;
      assert_int_equal(ik_gltf_node_parent(g, k), t->parent < 0 ? -1 : c);
    }
    sk = make_skeleton(g, 0, &nodes, &mem);
    for (i = 0; i < ik_skeleton_count(sk); i++) {
      const tnode *t = &tn[perm[nodes[i]]];
      ik_vec3 p;
      ik_quat q;
      int c;
      ik_skeleton_get_world(sk, i, &p, &q);
      worst_pos = fmax(worst_pos, fmax(rel_err(p.x, t->world.m[0][3]),
                                       fmax(rel_err(p.y, t->world.m[1][3]), rel_err(p.z, t->world.m[2][3]))));
      if (!t->uniform_path) { /* the nearest rotation: R^T M (X negated when mirrored) is symmetric */
        double b[3][3], big = 0;
        int r2, c2, flags = ik_gltf_node_flags(g, nodes[i]);
        for (r2 = 0; r2 < 3; r2++)
          for (c2 = 0; c2 < 3; c2++) {
            ik_vec3 axis = ik_quat_rotate(q, ik_vec3_make(r2 == 0, r2 == 1, r2 == 2));
            double sign = c2 == 0 && (flags & IK_GLTF_NODE_MIRRORED) ? -1 : 1;
            b[r2][c2] = sign * ((double)axis.x * t->world.m[0][c2] + (double)axis.y * t->world.m[1][c2] +
                                (double)axis.z * t->world.m[2][c2]);
            big = fmax(big, fabs(b[r2][c2]));
          }
        for (r2 = 0; r2 < 3; r2++)
          for (c2 = 0; c2 < r2; c2++) worst_rot = fmax(worst_rot, fabs(b[r2][c2] - b[c2][r2]) / big);
      } else { /* the bone's axes are the matrix's columns, normalised */
        for (c = 0; c < 3; c++) {
          ik_vec3 axis = ik_quat_rotate(q, ik_vec3_make(c == 0, c == 1, c == 2));
          double len = sqrt(t->world.m[0][c] * t->world.m[0][c] + t->world.m[1][c] * t->world.m[1][c] +
                            t->world.m[2][c] * t->world.m[2][c]);
          worst_rot = fmax(worst_rot, fabs((double)axis.x - t->world.m[0][c] / len));
          worst_rot = fmax(worst_rot, fabs((double)axis.y - t->world.m[1][c] / len));
          worst_rot = fmax(worst_rot, fabs((double)axis.z - t->world.m[2][c] / len));
        }
      }
    }
    if (getenv("T_VERBOSE")) printf("seed %d: %g %g %g\n", seed, worst_world, worst_pos, worst_rot);
    if (worst_world > 1e-6 || worst_pos > T_SK || worst_rot > T_SK)
      fail_msg("seed %d: world %g, skeleton position %g, rotation %g", seed, worst_world, worst_pos,
               worst_rot);
    free(mem);
    free(nodes);
    ik_gltf_free(g);
    free(js.s);
    free(perm);
    free(tn);
  }
}

/* ---- the test characters ---- */

/* Each joint's world matrix times its inverse bind matrix (the generator wrote the
 * inverse of the joint's world transform) is the identity; the skeleton's bones sit at
 * the joints' world positions. */
static void characters_match_their_bind_matrices(void **state) {
  static const char *const files[] = {"blender_tpose.glb",  "blender_apose.gltf", "vrm1_tpose.vrm",
                                      "vrm1_apose_min.vrm", "vrm0_tpose.vrm",     "mixamo_tpose.gltf",
                                      "mixamo_apose.glb"};
  size_t f;
  (void)state;
  for (f = 0; f < sizeof files / sizeof *files; f++) {
    char path[512];
    ik_gltf *g = NULL;
    ik_gltf_error err;
    int j, n, *nodes;
    void *mem;
    ik_skeleton *sk;
    double worst = 0;
    snprintf(path, sizeof path, "%s/characters/%s", IK_TEST_DATA_DIR, files[f]);
    if (ik_gltf_load_file(path, NULL, &g, &err) != IK_GLTF_OK) fail_msg("%s: %s", files[f], err.message);
    assert_int_equal(ik_gltf_skin_count(g), 1);
    n = ik_gltf_skin_joint_count(g, 0);
    for (j = 0; j < n; j++) {
      double w[16], ibm[16];
      int r, c, k;
      assert_int_equal(ik_gltf_node_world(g, ik_gltf_skin_joint(g, 0, j), w), IK_GLTF_OK);
      assert_int_equal(ik_gltf_skin_inverse_bind(g, 0, j, ibm), IK_GLTF_OK);
      for (c = 0; c < 4; c++)
        for (r = 0; r < 4; r++) {
          double v = 0;
          for (k = 0; k < 4; k++) v += w[k * 4 + r] * ibm[c * 4 + k];
          worst = fmax(worst, fabs(v - (r == c)));
        }
    }
    if (worst > 1e-5)
      fail_msg("%s: world * inverse bind is %g from identity", files[f], worst); /* float32 IBMs */
    sk = make_skeleton(g, 0, &nodes, &mem);
    assert_int_equal(ik_skeleton_count(sk), n);
    for (j = 0; j < n; j++) {
      double w[16];
      ik_vec3 p;
      ik_gltf_node_world(g, nodes[j], w);
      ik_skeleton_get_world(sk, j, &p, NULL);
      assert_vec3_near(p, ik_vec3_make((ik_real)w[12], (ik_real)w[13], (ik_real)w[14]), T_SK);
    }
    free(mem);
    free(nodes);
    ik_gltf_free(g);
  }
}

static void vrm_maps_name_the_humanoid_bones(void **state) {
  char path[512];
  ik_gltf *g = NULL;
  ik_gltf_error err;
  int r;
  (void)state;
  snprintf(path, sizeof path, "%s/characters/vrm1_tpose.vrm", IK_TEST_DATA_DIR);
  assert_int_equal(ik_gltf_load_file(path, NULL, &g, &err), IK_GLTF_OK);
  assert_int_equal(ik_gltf_vrm_version(g), IK_GLTF_VRM_1);
  assert_string_equal(ik_gltf_node_name(g, ik_gltf_humanoid_node(g, IK_HUMANOID_HIPS)), "Hips");
  assert_string_equal(ik_gltf_node_name(g, ik_gltf_humanoid_node(g, IK_HUMANOID_UPPER_CHEST)), "UpperChest");
  assert_string_equal(ik_gltf_node_name(g, ik_gltf_humanoid_node(g, IK_HUMANOID_LEFT_TOES)), "LeftToes");
  assert_string_equal(ik_gltf_node_name(g, ik_gltf_humanoid_node(g, IK_HUMANOID_RIGHT_EYE)), "RightEye");
  for (r = 0; r < IK_HUMANOID_BONE_COUNT; r++) assert_true(ik_gltf_humanoid_node(g, r) >= 0);
  ik_gltf_free(g);
  snprintf(path, sizeof path, "%s/characters/vrm1_apose_min.vrm", IK_TEST_DATA_DIR);
  assert_int_equal(ik_gltf_load_file(path, NULL, &g, &err), IK_GLTF_OK);
  assert_int_equal(ik_gltf_humanoid_node(g, IK_HUMANOID_UPPER_CHEST), -1);
  assert_int_equal(ik_gltf_humanoid_node(g, IK_HUMANOID_LEFT_TOES), -1);
  assert_string_equal(ik_gltf_node_name(g, ik_gltf_humanoid_node(g, IK_HUMANOID_NECK)), "Neck");
  ik_gltf_free(g);
  snprintf(path, sizeof path, "%s/characters/vrm0_tpose.vrm", IK_TEST_DATA_DIR);
  assert_int_equal(ik_gltf_load_file(path, NULL, &g, &err), IK_GLTF_OK);
  assert_int_equal(ik_gltf_vrm_version(g), IK_GLTF_VRM_0);
  assert_string_equal(ik_gltf_node_name(g, ik_gltf_humanoid_node(g, IK_HUMANOID_LEFT_HAND)), "LeftHand");
  ik_gltf_free(g);
  snprintf(path, sizeof path, "%s/characters/blender_tpose.glb", IK_TEST_DATA_DIR);
  assert_int_equal(ik_gltf_load_file(path, NULL, &g, &err), IK_GLTF_OK);
  assert_int_equal(ik_gltf_vrm_version(g), IK_GLTF_VRM_NONE);
  assert_int_equal(ik_gltf_humanoid_node(g, IK_HUMANOID_HIPS), -1);
  ik_gltf_free(g);
  assert_string_equal(ik_humanoid_bone_name(IK_HUMANOID_LEFT_UPPER_ARM), "leftUpperArm");
  assert_int_equal(ik_humanoid_bone_from_name("rightToes"), IK_HUMANOID_RIGHT_TOES);
  assert_int_equal(ik_humanoid_bone_from_name("leftThumbProximal"), -1);
  assert_null(ik_humanoid_bone_name(IK_HUMANOID_BONE_COUNT));
}

/* Missing and repeated names are made unique; the file's own are kept. */
static void names_are_kept_and_made_unique(void **state) {
  ik_gltf *g = load_ok(
      "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"name\":\"a\"},{\"name\":\"a\"},{},"
      "{\"name\":\"node2\"},{\"name\":\"\"}]}");
  (void)state;
  assert_string_equal(ik_gltf_node_name(g, 0), "a");
  assert_string_equal(ik_gltf_node_name(g, 1), "a#1");
  assert_string_equal(ik_gltf_node_name(g, 2), "node2");
  assert_string_equal(ik_gltf_node_name(g, 3), "node2#3");
  assert_string_equal(ik_gltf_node_name(g, 4), "node4");
  assert_null(ik_gltf_node_name(g, 5));
  /* no skins: the whole-file skeleton is every node */
  assert_int_equal(ik_gltf_skeleton_bone_count(g, IK_GLTF_ALL_JOINTS), 5);
  assert_int_equal(ik_gltf_skeleton_bone_count(g, 0), 0);
  ik_gltf_free(g);
}

/* A node between two joints is folded in; flags say what the decomposition met. */
static void folded_nodes_and_decomposition_flags(void **state) {
  ik_gltf *g = load_ok(
      "{\"asset\":{\"version\":\"2.0\"},\"nodes\":["
      "{\"name\":\"root\",\"children\":[1],\"scale\":[2,2,2]},"
      "{\"name\":\"between\",\"children\":[2],\"translation\":[0,1,0],\"rotation\":[0,0,0.7071067811865476,0."
      "7071067811865476]},"
      "{\"name\":\"tip\",\"translation\":[1,0,0],\"children\":[3,4,5]},"
      "{\"name\":\"squash\",\"scale\":[1,2,3]},{\"name\":\"mirror\",\"scale\":[-1,1,1]},{\"name\":\"flat\","
      "\"scale\":[0,1,1]}],"
      "\"skins\":[{\"joints\":[0,2]}]}");
  int *nodes;
  void *mem;
  ik_skeleton *sk;
  ik_vec3 p;
  ik_quat q;
  double t[3], r[4], s[3];
  (void)state;
  sk = make_skeleton(g, 0, &nodes, &mem);
  assert_int_equal(ik_skeleton_count(sk), 2);
  assert_int_equal(nodes[0], 0);
  assert_int_equal(nodes[1], 2);
  assert_int_equal(ik_skeleton_parent(sk, 1), 0);
  ik_skeleton_get_world(sk, 1, &p, &q);
  /* root scales by 2: between at (0, 2, 0), turned 90 degrees about Z; tip 1 along its X, times 2 */
  assert_vec3_near(p, ik_vec3_make(0, 4, 0), T_EPS);
  assert_vec3_near(ik_quat_rotate(q, ik_vec3_make(1, 0, 0)), ik_vec3_make(0, 1, 0), T_EPS);
  assert_int_equal(ik_gltf_node_flags(g, 0), 0);
  assert_int_equal(ik_gltf_node_flags(g, 3), IK_GLTF_NODE_NONUNIFORM);
  assert_int_equal(ik_gltf_node_flags(g, 4), IK_GLTF_NODE_MIRRORED);
  assert_int_equal(ik_gltf_node_flags(g, 5), IK_GLTF_NODE_SINGULAR);
  assert_int_equal(ik_gltf_node_local(g, 1, t, r, s), IK_GLTF_OK);
  assert_near(t[1], 1, 0);
  assert_near(r[2], 0.7071067811865476, 1e-15);
  assert_near(s[0], 1, 0);
  assert_int_equal(ik_gltf_node_local(g, 6, t, r, s), IK_GLTF_E_ARGUMENT);
  free(mem);
  free(nodes);
  ik_gltf_free(g);
}

/* ---- malformed files ---- */

static void expect_error(const void *data, size_t size, const char *base_dir, const ik_gltf_options *opt,
                         ik_gltf_status status, const char *message) {
  ik_gltf *g = (ik_gltf *)(uintptr_t)1;
  ik_gltf_error err;
  ik_gltf_status st = ik_gltf_load_memory(data, size, base_dir, opt, &g, &err);
  if (st != status || strcmp(err.message, message) != 0)
    fail_msg("expected %d '%s', got %d '%s'", (int)status, message, (int)st, err.message);
  assert_null(g);
}

static void expect_json_error(const char *json, const char *message) {
  expect_error(json, strlen(json), NULL, NULL, IK_GLTF_E_FORMAT, message);
}

#define HEAD "{\"asset\":{\"version\":\"2.0\"},"

/* ---- skinned vertices ---- */

/* Two joints: root at (0, 1, 0), arm 1 along X from it and turned 90 degrees about Z at
 * rest, but bound unturned (its inverse bind matrix is the inverse of translate(1, 1, 0)).
 * Vertex A (2, 1, 0) follows the arm: at rest it is at (1, 2, 0). Vertex B (0.5, 1, 0) is
 * 153/255 root and 102/255 arm: 0.6 (0.5, 1, 0) + 0.4 (1, 0.5, 0) = (0.7, 0.8, 0). */
typedef struct skin_bin {
  float pos[6];
  unsigned char joints[8], weights[8];
  float ibm[32];
} skin_bin;

static unsigned char *skinned_glb(const char *attributes, const char *extra_accessor, size_t *size) {
  static const skin_bin bin = {
      {2, 1, 0, 0.5f, 1, 0},
      {1, 0, 0, 0, 0, 1, 0, 0},
      {255, 0, 0, 0, 153, 102, 0, 0},
      {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -1, -1, 0, 1}};
  char json[2048];
  snprintf(
      json, sizeof json,
      HEAD
      "\"buffers\":[{\"byteLength\":%zu}],\"bufferViews\":[{\"buffer\":0,\"byteLength\":%zu}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"VEC3\",\"count\":2},"
      "{\"bufferView\":0,\"byteOffset\":24,\"componentType\":5121,\"type\":\"VEC4\",\"count\":2},"
      "{\"bufferView\":0,\"byteOffset\":32,\"componentType\":5121,\"normalized\":true,\"type\":\"VEC4\","
      "\"count\":2},"
      "{\"bufferView\":0,\"byteOffset\":40,\"componentType\":5126,\"type\":\"MAT4\",\"count\":2}%s],"
      "\"nodes\":[{\"name\":\"root\",\"translation\":[0,1,0],\"children\":[1]},"
      "{\"name\":\"arm\",\"translation\":[1,0,0],\"rotation\":[0,0,0.7071067811865476,0.7071067811865476]},"
      "{\"mesh\":0,\"skin\":0}],"
      "\"meshes\":[{\"primitives\":[{\"attributes\":{%s}}]}],"
      "\"skins\":[{\"joints\":[0,1],\"inverseBindMatrices\":3}]}",
      sizeof bin, sizeof bin, extra_accessor, attributes);
  return glb(json, &bin, sizeof bin, size);
}

static void skinned_vertices_are_measured_at_rest(void **state) {
  size_t size;
  unsigned char *d = skinned_glb("\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2", "", &size);
  ik_gltf *g = NULL;
  ik_gltf_error err;
  double lo[3], hi[3];
  (void)state;
  if (ik_gltf_load_memory(d, size, NULL, NULL, &g, &err) != IK_GLTF_OK) fail_msg("%s", err.message);
  assert_int_equal(ik_gltf_node_vertex_bounds(g, 1, lo, hi), 1);
  assert_near(lo[0], 1, 1e-6);
  assert_near(lo[1], 2, 1e-6);
  assert_near(hi[2], 0, 1e-6);
  assert_int_equal(ik_gltf_node_vertex_bounds(g, 0, lo, hi), 1);
  assert_near(lo[0], 0.7, 1e-6);
  assert_near(hi[1], 0.8, 1e-6);
  assert_int_equal(ik_gltf_node_vertex_bounds(g, 2, lo, hi), 0); /* the mesh node: no joint */
  assert_int_equal(ik_gltf_node_vertex_bounds(g, 3, NULL, NULL), 0);
  ik_gltf_free(g);
  free(d);
  /* no JOINTS_0: not skinned, nothing measured, no error */
  d = skinned_glb("\"POSITION\":0", "", &size);
  assert_int_equal(ik_gltf_load_memory(d, size, NULL, NULL, &g, &err), IK_GLTF_OK);
  assert_int_equal(ik_gltf_node_vertex_bounds(g, 1, NULL, NULL), 0);
  ik_gltf_free(g);
  free(d);
}

static void bad_skinned_vertices_are_refused(void **state) {
  static const struct {
    const char *attributes, *extra, *message;
  } cases[] = {
      {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":0", "",
       "meshes[0].primitives[0].attributes.WEIGHTS_0: accessors[0] is VEC3 of component type 5126, not a "
       "VEC4 this "
       "reads"},
      {"\"POSITION\":1,\"JOINTS_0\":1,\"WEIGHTS_0\":2", "",
       "meshes[0].primitives[0].attributes.POSITION: accessors[1] is VEC4 of component type 5121, not a VEC3 "
       "this "
       "reads"},
      {"\"POSITION\":0,\"JOINTS_0\":4,\"WEIGHTS_0\":2",
       ",{\"bufferView\":0,\"byteOffset\":42,\"componentType\":5121,\"type\":\"VEC4\",\"count\":2}",
       "meshes[0].primitives[0].attributes.JOINTS_0: vertex 0 names joint 128, skins[0] has 2"},
      {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":4",
       ",{\"bufferView\":0,\"byteOffset\":32,\"componentType\":5121,\"normalized\":true,\"type\":\"VEC4\","
       "\"count\":1}",
       "meshes[0].primitives[0].attributes: POSITION has 2 elements, JOINTS_0 2, WEIGHTS_0 1"},
      {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":4",
       ",{\"bufferView\":0,\"byteOffset\":88,\"componentType\":5126,\"type\":\"VEC4\",\"count\":2}",
       "meshes[0].primitives[0].attributes.WEIGHTS_0: vertex 0 has a weight that is not a finite number >= "
       "0"},
      {"\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":9", "",
       "meshes[0].primitives[0].attributes.WEIGHTS_0: expected an integer in 0..3"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t size;
    unsigned char *d = skinned_glb(cases[i].attributes, cases[i].extra, &size);
    expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT, cases[i].message);
    free(d);
  }
}

static void malformed_json_is_refused_by_path(void **state) {
  (void)state;
  expect_json_error("{\"asset\":{\"version\":\"2.0\"},\"nodes\":[}",
                    "JSON: syntax error at line 1, column 37 (byte 36)");
  expect_json_error("{\n \"asset\": {\n  \"version\": \"2.0\",\n }\n}",
                    "JSON: syntax error at line 4, column 3 (byte 36)");
  expect_json_error("[1,2]", "JSON: the top level is not an object");
  expect_json_error("", "file: empty");
  expect_json_error("{\"nodes\":[]}", "asset: missing (not a glTF file)");
  expect_json_error("{\"asset\":{\"version\":\"1.0\"}}", "asset.version: expected \"2.x\", got \"1.0\"");
  expect_json_error(HEAD "\"nodes\":{}}", "nodes: expected an array");
  expect_json_error(HEAD "\"nodes\":[{},{\"rotation\":[0,0,1]}]}", "nodes[1].rotation: expected 4 numbers");
  expect_json_error(HEAD "\"nodes\":[{\"rotation\":[0,0,\"1\",0]}]}",
                    "nodes[0].rotation: expected 4 numbers");
  expect_json_error(HEAD "\"nodes\":[{\"rotation\":[0,0,0,0]}]}", "nodes[0].rotation: zero quaternion");
  expect_json_error(HEAD "\"nodes\":[{\"translation\":[0,1e999,0]}]}",
                    "nodes[0].translation[1]: not a finite number");
  expect_json_error(HEAD "\"nodes\":[{\"scale\":[1,1,-1e400]}]}", "nodes[0].scale[2]: not a finite number");
  expect_json_error(HEAD "\"nodes\":[{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],\"scale\":[1,1,1]}]}",
                    "nodes[0]: both matrix and translation/rotation/scale");
  expect_json_error(HEAD "\"nodes\":[{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0]}]}",
                    "nodes[0].matrix: expected 16 numbers");
  expect_json_error(HEAD "\"nodes\":[{\"matrix\":[1,0,0,1,0,1,0,0,0,0,1,0,0,0,0,1]}]}",
                    "nodes[0].matrix: last row must be 0, 0, 0, 1");
  expect_json_error(HEAD "\"nodes\":[{\"name\":3}]}", "nodes[0].name: expected a string");
  expect_json_error(HEAD "\"nodes\":[7]}", "nodes[0]: expected an object");
}

static void bad_hierarchies_are_refused(void **state) {
  (void)state;
  expect_json_error(HEAD "\"nodes\":[{\"children\":[2]},{}]}",
                    "nodes[0].children[0]: expected a node index in 0..1");
  expect_json_error(HEAD "\"nodes\":[{\"children\":[1.5]},{}]}",
                    "nodes[0].children[0]: expected a node index in 0..1");
  expect_json_error(HEAD "\"nodes\":[{\"children\":[0]}]}", "nodes[0].children[0]: node 0 is its own child");
  expect_json_error(HEAD "\"nodes\":[{\"children\":[1]},{\"children\":[2]},{\"children\":[0]}]}",
                    "nodes[2].children: node 0 is its own ancestor (a cycle)");
  expect_json_error(HEAD "\"nodes\":[{},{\"children\":[2]},{\"children\":[1]}]}",
                    "nodes[2].children: node 1 is its own ancestor (a cycle)");
  expect_json_error(HEAD "\"nodes\":[{\"children\":[2]},{\"children\":[2]},{}]}",
                    "nodes[1].children[0]: node 2 already has parent 0");
  expect_json_error(HEAD "\"nodes\":[{}],\"skins\":[{\"joints\":[]}]}",
                    "skins[0].joints: expected at least one joint");
  expect_json_error(HEAD "\"nodes\":[{}],\"skins\":[{\"joints\":[0,1]}]}",
                    "skins[0].joints[1]: expected a node index in 0..0");
  expect_json_error(HEAD "\"nodes\":[{},{}],\"skins\":[{\"joints\":[1,0,1]}]}",
                    "skins[0].joints[2]: node 1 is listed twice");
  expect_json_error(HEAD "\"skins\":[{\"joints\":[0]}]}",
                    "skins[0].joints[0]: expected a node index, and there are none");
}

/* Accessors, views and buffers: a 64-byte buffer of one identity matrix. */
#define BUF64                                                   \
  "\"buffers\":[{\"byteLength\":64,\"uri\":\"data:application/" \
  "octet-stream;base64,AACAPwAAAAAAAAAAAAAAAAAAAAAAAIA/"        \
  "AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAACAPw==\"}]"

static void bad_ranges_are_refused(void **state) {
  (void)state;
  expect_json_error(HEAD BUF64 ",\"bufferViews\":[{\"buffer\":0,\"byteOffset\":8,\"byteLength\":64}]}",
                    "bufferViews[0]: bytes 8..72 run past the end of buffers[0] (64 bytes)");
  expect_json_error(HEAD BUF64 ",\"bufferViews\":[{\"buffer\":1,\"byteLength\":64}]}",
                    "bufferViews[0].buffer: expected an integer in 0..0");
  expect_json_error(HEAD BUF64 ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64,\"byteStride\":6}]}",
                    "bufferViews[0].byteStride: expected a multiple of 4");
  expect_json_error(
      HEAD BUF64
      ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"MAT4\",\"count\":2}]}",
      "accessors[0]: 2 elements of 64 bytes from byte 0 run past the end of bufferViews[0] (64 bytes)");
  expect_json_error(
      HEAD BUF64
      ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"VEC3\",\"count\":1e30}]}",
      "accessors[0].count: expected an integer in 1..2305843009213693951");
  expect_json_error(
      HEAD BUF64
      ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"VEC3\",\"count\":1000000000}]}",
      "accessors[0]: 1000000000 elements of 12 bytes from byte 0 run past the end of bufferViews[0] (64 "
      "bytes)");
  expect_json_error(
      HEAD BUF64
      ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5127,\"type\":\"VEC3\",\"count\":1}]}",
      "accessors[0].componentType: 5127 is not a glTF component type");
  expect_json_error(
      HEAD BUF64
      ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"VEC5\",\"count\":1}]}",
      "accessors[0].type: expected SCALAR, VEC2..4 or MAT2..4");
  expect_json_error(HEAD BUF64
                    ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
                    "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"VEC4\"}]}",
                    "accessors[0].count: missing");
  expect_json_error(HEAD BUF64
                    ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
                    "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"VEC4\",\"count\":1}],"
                    "\"nodes\":[{},{}],\"skins\":[{\"joints\":[0,1],\"inverseBindMatrices\":0}]}",
                    "skins[0].inverseBindMatrices: accessors[0] is not MAT4 of FLOAT");
  expect_json_error(HEAD BUF64
                    ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
                    "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"MAT4\",\"count\":1}],"
                    "\"nodes\":[{},{}],\"skins\":[{\"joints\":[0,1],\"inverseBindMatrices\":0}]}",
                    "skins[0].inverseBindMatrices: accessors[0] has 1 matrices for 2 joints");
  expect_json_error(HEAD BUF64 ",\"nodes\":[{}],\"skins\":[{\"joints\":[0],\"inverseBindMatrices\":0}]}",
                    "skins[0].inverseBindMatrices: no such entry (the array is empty)");
}

static void missing_buffers_are_refused(void **state) {
  static const char ibm_skin[] =
      ",\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"MAT4\",\"count\":1}],"
      "\"nodes\":[{}],\"skins\":[{\"joints\":[0],\"inverseBindMatrices\":0}]}";
  char json[1024];
  (void)state;
  snprintf(json, sizeof json, HEAD "\"buffers\":[{\"byteLength\":64,\"uri\":\"missing.bin\"}]%s", ibm_skin);
  expect_error(json, strlen(json), IK_TEST_DATA_DIR, NULL, IK_GLTF_E_IO,
               "buffers[0].uri: cannot open 'missing.bin' (No such file or directory)");
  expect_error(json, strlen(json), NULL, NULL, IK_GLTF_E_IO,
               "buffers[0].uri: external file 'missing.bin' and no base directory to find it in");
  snprintf(json, sizeof json, HEAD "\"buffers\":[{\"byteLength\":64,\"uri\":\"/etc/passwd\"}]%s", ibm_skin);
  expect_error(json, strlen(json), IK_TEST_DATA_DIR, NULL, IK_GLTF_E_FORMAT,
               "buffers[0].uri: only relative paths and data: URIs are read, got '/etc/passwd'");
  snprintf(json, sizeof json,
           HEAD "\"buffers\":[{\"byteLength\":999999,\"uri\":\"characters/mixamo%%5Ftpose.bin\"}]%s",
           ibm_skin); /* %5F: URIs are percent-decoded */
  expect_error(json, strlen(json), IK_TEST_DATA_DIR, NULL, IK_GLTF_E_FORMAT,
               "buffers[0].uri: 'characters/mixamo%5Ftpose.bin' is shorter than byteLength 999999");
  snprintf(json, sizeof json, HEAD "\"buffers\":[{\"byteLength\":64}]%s", ibm_skin);
  expect_error(json, strlen(json), NULL, NULL, IK_GLTF_E_FORMAT,
               "buffers[0]: no uri, and the file has no GLB binary chunk");
  snprintf(json, sizeof json,
           HEAD "\"buffers\":[{\"byteLength\":64,\"uri\":\"data:application/octet-stream;base64,AAAA\"}]%s",
           ibm_skin);
  expect_error(json, strlen(json), NULL, NULL, IK_GLTF_E_FORMAT,
               "buffers[0].uri: data URI holds fewer than the 64 bytes of byteLength");
  snprintf(json, sizeof json, HEAD "\"buffers\":[{\"byteLength\":64,\"uri\":\"data:text/plain,hello\"}]%s",
           ibm_skin);
  expect_error(json, strlen(json), NULL, NULL, IK_GLTF_E_FORMAT, "buffers[0].uri: data URI is not base64");
  snprintf(json, sizeof json, HEAD "\"buffers\":[{\"uri\":\"x.bin\"}]}");
  expect_error(json, strlen(json), NULL, NULL, IK_GLTF_E_FORMAT, "buffers[0].byteLength: missing");
}

static void bad_glb_containers_are_refused(void **state) {
  static const char json[] = HEAD
      "\"buffers\":[{\"byteLength\":64}],\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],"
      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"MAT4\",\"count\":1}],"
      "\"nodes\":[{}],\"skins\":[{\"joints\":[0],\"inverseBindMatrices\":0}]}";
  float ibm[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  size_t size, cut;
  unsigned char *d = glb(json, ibm, sizeof ibm, &size);
  ik_gltf *g = NULL;
  ik_gltf_error err;
  char msg[128];
  (void)state;
  assert_int_equal(ik_gltf_load_memory(d, size, NULL, NULL, &g, &err), IK_GLTF_OK);
  ik_gltf_free(g);
  /* every truncation is refused, never read past */
  for (cut = 0; cut < size; cut++) {
    assert_int_not_equal(ik_gltf_load_memory(d, cut, NULL, NULL, &g, &err), IK_GLTF_OK);
    assert_null(g);
  }
  expect_error(d, 8, NULL, NULL, IK_GLTF_E_FORMAT, "GLB: 8 bytes, shorter than the 12-byte header");
  snprintf(msg, sizeof msg, "GLB: header says %zu bytes, the file has %zu (truncated)", size, size - 10);
  expect_error(d, size - 10, NULL, NULL, IK_GLTF_E_FORMAT, msg);
  put32(d + 4, 1);
  expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT, "GLB: version 1, expected 2");
  put32(d + 4, 2);
  put32(d + 12, 100000);
  expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT,
               "GLB: chunk 0 (JSON) length 100000 runs past the end of the file");
  put32(d + 12, (uint32_t)((sizeof json - 1 + 3) & ~(size_t)3));
  put32(d + 16, 0x004E4942u);
  expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT, "GLB: chunk 0 is not JSON");
  put32(d + 16, 0x4E4F534Au);
  put32(d + size - 64 - 8, 65);
  expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT, "GLB: chunk 1 length 65 runs past the end of the file");
  put32(d + size - 64 - 8, 60);
  expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT,
               "buffers[0].byteLength: 64, beyond the GLB binary chunk's 60 bytes");
  put32(d + size - 64 - 8, 64);
  memcpy(d + size - 64 + 20, "\x00\x00\xc0\x7f", 4); /* a NaN */
  expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT,
               "skins[0].inverseBindMatrices: matrix 0 element 5 is not a finite number");
  free(d);
  /* no BIN chunk at all */
  d = glb(json, NULL, 0, &size);
  expect_error(d, size, NULL, NULL, IK_GLTF_E_FORMAT,
               "buffers[0]: no uri, and the file has no GLB binary chunk");
  free(d);
}

static void limits_bound_what_is_allocated(void **state) {
  ik_gltf_options opt;
  const char *json = HEAD "\"nodes\":[{},{},{},{},{}]}";
  char *big;
  size_t i, n = 3000000;
  (void)state;
  ik_gltf_options_init(&opt);
  opt.max_nodes = 4;
  expect_error(json, strlen(json), NULL, &opt, IK_GLTF_E_LIMIT, "nodes: 5 entries, more than the limit of 4");
  ik_gltf_options_init(&opt);
  opt.max_json_bytes = 10;
  expect_error(json, strlen(json), NULL, &opt, IK_GLTF_E_LIMIT, "JSON: 52 bytes, beyond the limit of 10");
  opt.max_json_bytes = 0;
  opt.max_file_bytes = 10;
  expect_error(json, strlen(json), NULL, &opt, IK_GLTF_E_LIMIT, "file: 52 bytes, beyond the limit of 10");
  {
    char path[512];
    ik_gltf *g = NULL;
    ik_gltf_error err;
    snprintf(path, sizeof path, "%s/bench_160.glb", IK_TEST_DATA_DIR);
    assert_int_equal(ik_gltf_load_file(path, &opt, &g, &err), IK_GLTF_E_LIMIT);
    assert_string_equal(err.message, "file: more than the limit of 10 bytes");
    opt.max_file_bytes = 54276; /* its size, read in growing blocks (16, 32, 64 KiB) */
    assert_int_equal(ik_gltf_load_file(path, &opt, &g, &err), IK_GLTF_OK);
    ik_gltf_free(g);
    opt.max_file_bytes = 54275;
    assert_int_equal(ik_gltf_load_file(path, &opt, &g, &err), IK_GLTF_E_LIMIT);
  }
  /* a huge array of tiny values: refused before cJSON builds its tree */
  big = (char *)malloc(n * 2 + 64);
  assert_non_null(big);
  strcpy(big, HEAD "\"extras\":[");
  for (i = strlen(big); i < n * 2; i += 2) big[i] = '0', big[i + 1] = ',';
  strcpy(big + n * 2, "0]}");
  expect_error(big, strlen(big), NULL, NULL, IK_GLTF_E_LIMIT, "JSON: more than the limit of 2097152 values");
  free(big);
}

/* The eye point: VRM 1.0 lookAt.offsetFromHeadBone, VRM 0.x firstPerson.firstPersonBoneOffset
 * (the generator puts it between the eyes, 1 cm ahead: (0, 0.08, 0.085), -Z for VRM 0.x). */
static void vrm_eye_offsets_are_read(void **state) {
  static const struct {
    const char *file;
    double z;
  } files[] = {{"vrm1_tpose.vrm", 0.085}, {"vrm1_apose_min.vrm", 0.085}, {"vrm0_tpose.vrm", -0.085}};
  char path[512];
  ik_gltf *g;
  ik_gltf_error err;
  double off[3];
  size_t f;
  (void)state;
  for (f = 0; f < sizeof files / sizeof *files; f++) {
    snprintf(path, sizeof path, "%s/characters/%s", IK_TEST_DATA_DIR, files[f].file);
    assert_int_equal(ik_gltf_load_file(path, NULL, &g, &err), IK_GLTF_OK);
    assert_int_equal(ik_gltf_look_offset(g, off), ik_gltf_humanoid_node(g, IK_HUMANOID_HEAD));
    assert_true(fabs(off[0]) < 1e-12 && fabs(off[1] - 0.08) < 1e-12 && fabs(off[2] - files[f].z) < 1e-12);
    assert_int_equal(ik_gltf_look_offset(g, NULL), ik_gltf_humanoid_node(g, IK_HUMANOID_HEAD));
    ik_gltf_free(g);
  }
  snprintf(path, sizeof path, "%s/characters/blender_tpose.glb", IK_TEST_DATA_DIR);
  assert_int_equal(ik_gltf_load_file(path, NULL, &g, &err), IK_GLTF_OK);
  assert_int_equal(ik_gltf_look_offset(g, off), -1);
  ik_gltf_free(g);
  assert_int_equal(ik_gltf_look_offset(NULL, off), -1);
  /* VRM 0.x: from firstPersonBone (-1: the head), missing axes 0 */
  g = load_ok(HEAD
              "\"nodes\":[{},{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":"
              "[{\"bone\":\"head\",\"node\":0}]},\"firstPerson\":{\"firstPersonBone\":1,"
              "\"firstPersonBoneOffset\":{\"y\":0.25}}}}}");
  assert_int_equal(ik_gltf_look_offset(g, off), 1);
  assert_true(off[0] == 0 && off[1] == 0.25 && off[2] == 0);
  ik_gltf_free(g);
  g = load_ok(HEAD
              "\"nodes\":[{},{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":"
              "[{\"bone\":\"head\",\"node\":1}]},\"firstPerson\":{\"firstPersonBone\":-1,"
              "\"firstPersonBoneOffset\":{\"x\":0.5,\"y\":0,\"z\":-1}}}}}");
  assert_int_equal(ik_gltf_look_offset(g, off), 1);
  assert_true(off[0] == 0.5 && off[1] == 0 && off[2] == -1);
  ik_gltf_free(g);
  /* VRM 1.0 with no head mapped: no eye point */
  g = load_ok(HEAD
              "\"nodes\":[{}],\"extensions\":{\"VRMC_vrm\":{\"humanoid\":{\"humanBones\":"
              "{\"hips\":{\"node\":0}}},\"lookAt\":{\"offsetFromHeadBone\":[0,1,0]}}}}");
  assert_int_equal(ik_gltf_look_offset(g, off), -1);
  ik_gltf_free(g);
  expect_json_error(HEAD
                    "\"nodes\":[{}],\"extensions\":{\"VRMC_vrm\":{\"humanoid\":{\"humanBones\":"
                    "{\"head\":{\"node\":0}}},\"lookAt\":{\"offsetFromHeadBone\":[0,1]}}}}",
                    "extensions.VRMC_vrm.lookAt.offsetFromHeadBone: expected 3 numbers");
  expect_json_error(HEAD
                    "\"nodes\":[{}],\"extensions\":{\"VRMC_vrm\":{\"humanoid\":{\"humanBones\":"
                    "{\"head\":{\"node\":0}}},\"lookAt\":7}}}",
                    "extensions.VRMC_vrm.lookAt: expected an object");
  expect_json_error(HEAD
                    "\"nodes\":[{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":[]},"
                    "\"firstPerson\":{\"firstPersonBoneOffset\":{\"x\":\"a\"}}}}}",
                    "extensions.VRM.firstPerson.firstPersonBoneOffset.x: not a finite number");
  expect_json_error(HEAD
                    "\"nodes\":[{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":[]},"
                    "\"firstPerson\":{\"firstPersonBoneOffset\":[0,1,0]}}}}",
                    "extensions.VRM.firstPerson.firstPersonBoneOffset: expected an object");
  expect_json_error(HEAD
                    "\"nodes\":[{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":[]},"
                    "\"firstPerson\":{\"firstPersonBone\":4}}}}",
                    "extensions.VRM.firstPerson.firstPersonBone: expected a node index in 0..0");
}

static void bad_humanoid_maps_are_refused(void **state) {
  (void)state;
  expect_json_error(HEAD "\"nodes\":[{}],\"extensions\":{\"VRMC_vrm\":{\"humanoid\":{\"humanBones\":[]}}}}",
                    "extensions.VRMC_vrm.humanoid.humanBones: expected an object");
  expect_json_error(
      HEAD
      "\"nodes\":[{}],\"extensions\":{\"VRMC_vrm\":{\"humanoid\":{\"humanBones\":{\"hips\":{\"node\":3}}}}}}",
      "extensions.VRMC_vrm.humanoid.humanBones.hips.node: expected a node index in 0..0");
  expect_json_error(
      HEAD "\"nodes\":[{}],\"extensions\":{\"VRMC_vrm\":{\"humanoid\":{\"humanBones\":{\"hips\":3}}}}}",
      "extensions.VRMC_vrm.humanoid.humanBones.hips.node: expected an object with a node");
  expect_json_error(HEAD
                    "\"nodes\":[{},{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":"
                    "[{\"bone\":\"hips\",\"node\":0},{\"bone\":\"hips\",\"node\":1}]}}}}",
                    "extensions.VRM.humanoid.humanBones[1].node: bone 'hips' is mapped twice");
  expect_json_error(HEAD
                    "\"nodes\":[{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":[{\"node\":0}]}}}}",
                    "extensions.VRM.humanoid.humanBones[0].bone: expected a string");
  expect_json_error(HEAD "\"nodes\":[{}],\"extensions\":{\"VRM\":{\"humanoid\":{}}}}",
                    "extensions.VRM.humanoid.humanBones: expected an array");
  {
    /* fingers and unknown names are skipped; VRMC_vrm wins over VRM */
    ik_gltf *g =
        load_ok(HEAD
                "\"nodes\":[{},{}],\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":"
                "[{\"bone\":\"hips\",\"node\":1}]}},\"VRMC_vrm\":{\"humanoid\":{\"humanBones\":"
                "{\"hips\":{\"node\":0},\"leftThumbMetacarpal\":{\"node\":1},\"tail\":{\"node\":1}}}}}}");
    assert_int_equal(ik_gltf_vrm_version(g), IK_GLTF_VRM_1);
    assert_int_equal(ik_gltf_humanoid_node(g, IK_HUMANOID_HIPS), 0);
    assert_int_equal(ik_gltf_humanoid_node(g, IK_HUMANOID_SPINE), -1);
    assert_int_equal(ik_gltf_skeleton_bone_count(g, IK_GLTF_ALL_JOINTS), 1);
    ik_gltf_free(g);
  }
}

static void arguments_are_checked(void **state) {
  ik_gltf *g = NULL;
  ik_gltf_error err;
  ik_bone_desc d[2];
  double m[16];
  (void)state;
  assert_int_equal(ik_gltf_load_file(NULL, NULL, &g, &err), IK_GLTF_E_ARGUMENT);
  assert_int_equal(ik_gltf_load_file("/nonexistent/x.glb", NULL, &g, &err), IK_GLTF_E_IO);
  assert_string_equal(err.message, "cannot open '/nonexistent/x.glb' (No such file or directory)");
  assert_int_equal(ik_gltf_load_file(IK_TEST_DATA_DIR, NULL, &g, &err), IK_GLTF_E_IO);
  assert_string_equal(err.message + strlen(err.message) - 16, "(Is a directory)");
  assert_int_equal(ik_gltf_load_file("/dev/null", NULL, &g, &err), IK_GLTF_E_FORMAT);
  assert_string_equal(err.message, "file: empty");
  assert_int_equal(ik_gltf_load_memory("{}", 2, NULL, NULL, NULL, &err), IK_GLTF_E_ARGUMENT);
  g = load_ok(HEAD "\"nodes\":[{}]}");
  assert_int_equal(ik_gltf_skeleton_descs(g, 0, d, NULL, 1, &err), IK_GLTF_E_ARGUMENT);
  assert_int_equal(ik_gltf_skeleton_descs(g, IK_GLTF_ALL_JOINTS, d, NULL, 2, &err), IK_GLTF_E_ARGUMENT);
  assert_string_equal(err.message, "count 2, the skeleton has 1 bones");
  assert_int_equal(ik_gltf_skeleton_descs(g, IK_GLTF_ALL_JOINTS, d, NULL, 1, &err), IK_GLTF_OK);
  assert_int_equal(ik_gltf_node_world(g, -1, m), IK_GLTF_E_ARGUMENT);
  assert_int_equal(ik_gltf_skin_inverse_bind(g, 0, 0, m), IK_GLTF_E_ARGUMENT);
  assert_int_equal(ik_gltf_skin_joint(g, 0, 0), -1);
  assert_int_equal(ik_gltf_humanoid_node(g, -1), -1);
  assert_int_equal(ik_gltf_node_count(NULL), 0);
  ik_gltf_free(g);
  /* loads (the world matrix is finite), but no skeleton takes a coordinate that large */
  g = load_ok(HEAD "\"nodes\":[{\"translation\":[1e200,0,0]}]}");
  assert_int_equal(ik_gltf_skeleton_descs(g, IK_GLTF_ALL_JOINTS, d, NULL, 1, &err), IK_GLTF_E_LIMIT);
  assert_memory_equal(err.message, "nodes[0]: position beyond ", 26);
  ik_gltf_free(g);
  ik_gltf_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_trees_match_composed_matrices),
      cmocka_unit_test(characters_match_their_bind_matrices),
      cmocka_unit_test(vrm_maps_name_the_humanoid_bones),
      cmocka_unit_test(names_are_kept_and_made_unique),
      cmocka_unit_test(folded_nodes_and_decomposition_flags),
      cmocka_unit_test(skinned_vertices_are_measured_at_rest),
      cmocka_unit_test(bad_skinned_vertices_are_refused),
      cmocka_unit_test(malformed_json_is_refused_by_path),
      cmocka_unit_test(bad_hierarchies_are_refused),
      cmocka_unit_test(bad_ranges_are_refused),
      cmocka_unit_test(missing_buffers_are_refused),
      cmocka_unit_test(bad_glb_containers_are_refused),
      cmocka_unit_test(limits_bound_what_is_allocated),
      cmocka_unit_test(bad_humanoid_maps_are_refused),
      cmocka_unit_test(vrm_eye_offsets_are_read),
      cmocka_unit_test(arguments_are_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
