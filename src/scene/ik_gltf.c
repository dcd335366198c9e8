/*
 * ik_gltf.c: the glTF 2.0 / VRM skeleton importer (ik_gltf.h). cJSON parses the JSON;
 * everything kept is copied out of its tree, which is freed before the load returns.
 */
#include "ik_gltf.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gnode {
  const char *name; /* unique, in the string pool */
  int parent;
  int depth;
  int flags;
  double t[3], r[4], s[3]; /* local TRS (a matrix decomposed) */
  double local[16], world[16];
  double rot_ws[4];        /* world rotation, unit */
  double bmin[3], bmax[3]; /* rest extent of the vertices that follow this node most */
  int vertices;
} gnode;

typedef struct gskin {
  const char *name;
  int joint_count;
  int *joints;
  double *ibm; /* 16 per joint, or NULL */
} gskin;

struct ik_gltf {
  int node_count, skin_count;
  gnode *nodes;
  gskin *skins;
  ik_gltf_vrm vrm;
  int humanoid[IK_HUMANOID_BONE_COUNT];
  int look_node;         /* the node the eye offset is from, -1: none given */
  double look_offset[3]; /* in that node's space */
  char *pool;            /* names */
};

/* ---- the load's working state ---- */

typedef struct buffer_data {
  const unsigned char *bytes; /* NULL until loaded */
  unsigned char *owned;
  size_t size; /* declared byteLength */
} buffer_data;

typedef struct loader {
  ik_gltf_options opt;
  ik_gltf_error *err;
  const char *base_dir;
  const unsigned char *bin; /* a GLB's BIN chunk */
  size_t bin_size;
  int has_bin;
  cJSON *root;
  int view_count, buffer_count, accessor_count;
  buffer_data *buffers;
  /* the entries of "buffers", "bufferViews" and "accessors", for O(1) lookups */
  cJSON **buffer_items, **view_items, **accessor_items, **mesh_items;
  ik_gltf *g;
  size_t pool_used, pool_cap;
} loader;

static const char *const humanoid_names[IK_HUMANOID_BONE_COUNT] = {
    "hips",          "spine",         "chest",         "upperChest",    "neck",         "head",
    "leftEye",       "rightEye",      "leftShoulder",  "leftUpperArm",  "leftLowerArm", "leftHand",
    "rightShoulder", "rightUpperArm", "rightLowerArm", "rightHand",     "leftUpperLeg", "leftLowerLeg",
    "leftFoot",      "leftToes",      "rightUpperLeg", "rightLowerLeg", "rightFoot",    "rightToes"};

const char *ik_humanoid_bone_name(int role) {
  return role >= 0 && role < IK_HUMANOID_BONE_COUNT ? humanoid_names[role] : NULL;
}

int ik_humanoid_bone_from_name(const char *name) {
  int i;
  if (!name) return -1;
  for (i = 0; i < IK_HUMANOID_BONE_COUNT; i++)
    if (strcmp(name, humanoid_names[i]) == 0) return i;
  return -1;
}

void ik_gltf_options_init(ik_gltf_options *opt) {
  opt->max_file_bytes = (size_t)256 << 20;
  opt->max_json_bytes = (size_t)64 << 20;
  opt->max_json_values = (size_t)1 << 21;
  opt->max_nodes = 65536;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(loader *ld, ik_gltf_status st, const char *fmt, ...) {
  va_list ap;
  if (ld->err && ld->err->status == IK_GLTF_OK) {
    ld->err->status = st;
    va_start(ap, fmt);
    vsnprintf(ld->err->message, sizeof ld->err->message, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* "<prefix>[<i>]" into buf (cap >= strlen(prefix) + 14): a path for messages, built for
 * every node and joint, so without snprintf's cost (17% of a load). */
static void path_index(char *buf, size_t cap, const char *prefix, long i) {
  char digits[24];
  int n = 0;
  size_t len = strlen(prefix);
  unsigned long u = i < 0 ? 0 : (unsigned long)i;
  if (len + 14 > cap) len = cap - 14; /* not reached: callers size their buffers */
  memcpy(buf, prefix, len);
  do digits[n++] = (char)('0' + u % 10);
  while ((u /= 10) > 0);
  buf[len++] = '[';
  while (n > 0) buf[len++] = digits[--n];
  buf[len++] = ']';
  buf[len] = 0;
}

/* ---- JSON helpers: each names the path it reads in its errors ---- */

static cJSON *field(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

/* An optional array field: NULL and *n = 0 when absent; -1 when not an array or too long. */
static int opt_array(loader *ld, const cJSON *obj, const char *path, const char *key, cJSON **out, int *n) {
  cJSON *a = field(obj, key);
  int len;
  *out = NULL;
  *n = 0;
  if (!a) return 0;
  if (!cJSON_IsArray(a))
    return fail(ld, IK_GLTF_E_FORMAT, "%s%s%s: expected an array", path, *path ? "." : "", key);
  len = cJSON_GetArraySize(a);
  if (len > ld->opt.max_nodes)
    return fail(ld, IK_GLTF_E_LIMIT, "%s%s%s: %d entries, more than the limit of %d", path, *path ? "." : "",
                key, len, ld->opt.max_nodes);
  *out = a;
  *n = len;
  return 0;
}

/* get_int's def for a field that must be there. */
#define REQUIRED LONG_MIN

/* An integer in [lo, hi]; def when absent (REQUIRED: refused when absent). */
static int get_int(loader *ld, const cJSON *obj, const char *path, const char *key, long lo, long hi,
                   long def, long *out) {
  cJSON *v = field(obj, key);
  double d;
  if (!v) {
    if (def == REQUIRED) return fail(ld, IK_GLTF_E_FORMAT, "%s.%s: missing", path, key);
    *out = def;
    return 0;
  }
  d = cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
  if (!(d >= (double)lo && d <= (double)hi) || d != floor(d)) {
    if (hi < lo) return fail(ld, IK_GLTF_E_FORMAT, "%s.%s: no such entry (the array is empty)", path, key);
    return fail(ld, IK_GLTF_E_FORMAT, "%s.%s: expected an integer in %ld..%ld", path, key, lo, hi);
  }
  *out = (long)d;
  return 0;
}

/* An index into an array of count entries, named `what` in the message. */
static int get_index(loader *ld, const cJSON *v, const char *path, int count, const char *what, int *out) {
  double d = cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
  if (!(d >= 0 && d < (double)count) || d != floor(d)) {
    if (count == 0)
      return fail(ld, IK_GLTF_E_FORMAT, "%s: expected a %s index, and there are none", path, what);
    return fail(ld, IK_GLTF_E_FORMAT, "%s: expected a %s index in 0..%d", path, what, count - 1);
  }
  *out = (int)d;
  return 0;
}

/* Exactly n finite numbers, or def (n of them) when absent. */
static int get_numbers(loader *ld, const cJSON *obj, const char *path, const char *key, int n, double *out,
                       const double *def, int *present) {
  cJSON *a = field(obj, key), *e;
  int i = 0;
  if (present) *present = a != NULL;
  if (!a) {
    if (def) memcpy(out, def, sizeof(double) * (size_t)n);
    return 0;
  }
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
    return fail(ld, IK_GLTF_E_FORMAT, "%s.%s: expected %d numbers", path, key, n);
  cJSON_ArrayForEach(e, a) {
    if (!cJSON_IsNumber(e)) return fail(ld, IK_GLTF_E_FORMAT, "%s.%s: expected %d numbers", path, key, n);
    if (!isfinite(e->valuedouble))
      return fail(ld, IK_GLTF_E_FORMAT, "%s.%s[%d]: not a finite number", path, key, i);
    out[i++] = e->valuedouble;
  }
  return 0;
}

/* An optional string (NULL when absent); -1 when not a string. */
static int get_string(loader *ld, const cJSON *obj, const char *path, const char *key, const char **out) {
  cJSON *v = field(obj, key);
  *out = NULL;
  if (!v) return 0;
  if (!cJSON_IsString(v) || !v->valuestring)
    return fail(ld, IK_GLTF_E_FORMAT, "%s.%s: expected a string", path, key);
  *out = v->valuestring;
  return 0;
}

/* ---- maths (double, column-major 4x4) ---- */

static void mat_mul(const double *a, const double *b, double *out) {
  double r[16];
  int i, j, k;
  for (j = 0; j < 4; j++)
    for (i = 0; i < 4; i++) {
      double s = 0;
      for (k = 0; k < 4; k++) s += a[k * 4 + i] * b[j * 4 + k];
      r[j * 4 + i] = s;
    }
  memcpy(out, r, sizeof r);
}

static void mat_from_trs(const double *t, const double *q, const double *s, double *m) {
  double x = q[0], y = q[1], z = q[2], w = q[3];
  double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
                 2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
                 2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)};
  int c, i;
  for (c = 0; c < 3; c++) {
    for (i = 0; i < 3; i++) m[c * 4 + i] = r[c * 3 + i] * s[c];
    m[c * 4 + 3] = 0;
  }
  for (i = 0; i < 3; i++) m[12 + i] = t[i];
  m[15] = 1;
}

static double det3(const double *a) { /* 3x3 column-major */
  return a[0] * (a[4] * a[8] - a[7] * a[5]) - a[3] * (a[1] * a[8] - a[7] * a[2]) +
         a[6] * (a[1] * a[5] - a[4] * a[2]);
}

/* Unit quaternion of a rotation matrix (3x3 column-major). */
static void quat_from_rot(const double *m, double *q) {
  double tr = m[0] + m[4] + m[8], s, n;
  if (tr > 0) {
    s = 2 * sqrt(tr + 1);
    q[3] = s / 4, q[0] = (m[5] - m[7]) / s, q[1] = (m[6] - m[2]) / s, q[2] = (m[1] - m[3]) / s;
  } else if (m[0] > m[4] && m[0] > m[8]) {
    s = 2 * sqrt(1 + m[0] - m[4] - m[8]);
    q[3] = (m[5] - m[7]) / s, q[0] = s / 4, q[1] = (m[3] + m[1]) / s, q[2] = (m[6] + m[2]) / s;
  } else if (m[4] > m[8]) {
    s = 2 * sqrt(1 + m[4] - m[0] - m[8]);
    q[3] = (m[6] - m[2]) / s, q[0] = (m[3] + m[1]) / s, q[1] = s / 4, q[2] = (m[7] + m[5]) / s;
  } else {
    s = 2 * sqrt(1 + m[8] - m[0] - m[4]);
    q[3] = (m[1] - m[3]) / s, q[0] = (m[6] + m[2]) / s, q[1] = (m[7] + m[5]) / s, q[2] = s / 4;
  }
  n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(n > 0) || !isfinite(n)) { /* not reached from a finite invertible matrix */
    q[0] = q[1] = q[2] = 0, q[3] = 1;
    return;
  }
  q[0] /= n, q[1] /= n, q[2] /= n, q[3] /= n;
  if (q[3] < 0) q[0] = -q[0], q[1] = -q[1], q[2] = -q[2], q[3] = -q[3];
}

static void quat_mul(const double *a, const double *b, double *out) {
  double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                 a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                 a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                 a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
  memcpy(out, r, sizeof r);
}

/* Rotates v by the inverse of unit q. */
static void quat_unrotate(const double *q, const double *v, double *out) {
  double c[4] = {-q[0], -q[1], -q[2], q[3]}, p[4] = {v[0], v[1], v[2], 0}, t[4];
  quat_mul(c, p, t);
  quat_mul(t, q, p);
  out[0] = p[0], out[1] = p[1], out[2] = p[2];
}

/* Splits the 3x3 part of m into the nearest rotation (as a quaternion) and flags (see
 * ik_gltf.h); col_len gets the column lengths (X negated when mirrored). Returns 0, or -1
 * when the matrix is singular (q untouched). */
static int decompose(const double *m, double *q, double *col_len, int *flags) {
  double a[9], len[3], d, scale;
  int c, i, it;
  *flags = 0;
  for (c = 0; c < 3; c++) {
    for (i = 0; i < 3; i++) a[c * 3 + i] = m[c * 4 + i];
    len[c] = sqrt(a[c * 3] * a[c * 3] + a[c * 3 + 1] * a[c * 3 + 1] + a[c * 3 + 2] * a[c * 3 + 2]);
  }
  d = det3(a);
  scale = len[0] * len[1] * len[2];
  if (!(scale > 0) || !(fabs(d) > 1e-12 * scale)) {
    *flags = IK_GLTF_NODE_SINGULAR;
    if (col_len) memcpy(col_len, len, sizeof len);
    return -1;
  }
  if (d < 0) {
    *flags |= IK_GLTF_NODE_MIRRORED;
    for (i = 0; i < 3; i++) a[i] = -a[i];
  }
  for (c = 0; c < 3; c++) {
    double dot = a[((c + 1) % 3) * 3] * a[c * 3] + a[((c + 1) % 3) * 3 + 1] * a[c * 3 + 1] +
                 a[((c + 1) % 3) * 3 + 2] * a[c * 3 + 2];
    if (fabs(len[c] - len[0]) > 1e-9 * len[0] || fabs(dot) > 1e-9 * len[c] * len[(c + 1) % 3])
      *flags |= IK_GLTF_NODE_NONUNIFORM;
  }
  if (!(*flags & IK_GLTF_NODE_NONUNIFORM)) { /* a scaled rotation: its columns, normalised */
    for (c = 0; c < 3; c++)
      for (i = 0; i < 3; i++) a[c * 3 + i] /= len[c];
    it = 64;
  } else { /* Polar decomposition by Newton's iteration X <- (X + X^-T) / 2, from X / mean length. */
    double mean = cbrt(fabs(d));
    for (i = 0; i < 9; i++) a[i] /= mean;
    it = 0;
  }
  for (; it < 64; it++) {
    double inv_t[9], dd = det3(a), change = 0, na = 0, ni = 0, gamma;
    /* X^-T = cofactor matrix / det */
    inv_t[0] = (a[4] * a[8] - a[5] * a[7]) / dd;
    inv_t[1] = (a[5] * a[6] - a[3] * a[8]) / dd;
    inv_t[2] = (a[3] * a[7] - a[4] * a[6]) / dd;
    inv_t[3] = (a[2] * a[7] - a[1] * a[8]) / dd;
    inv_t[4] = (a[0] * a[8] - a[2] * a[6]) / dd;
    inv_t[5] = (a[1] * a[6] - a[0] * a[7]) / dd;
    inv_t[6] = (a[1] * a[5] - a[2] * a[4]) / dd;
    inv_t[7] = (a[2] * a[3] - a[0] * a[5]) / dd;
    inv_t[8] = (a[0] * a[4] - a[1] * a[3]) / dd;
    /* Higham's Frobenius scaling: a few iterations even for a badly conditioned matrix */
    for (i = 0; i < 9; i++) na += a[i] * a[i], ni += inv_t[i] * inv_t[i];
    gamma = sqrt(sqrt(ni / na));
    if (!isfinite(gamma) || !(gamma > 0)) break;
    for (i = 0; i < 9; i++) {
      double next = (gamma * a[i] + inv_t[i] / gamma) / 2;
      change += fabs(next - a[i]);
      a[i] = next;
    }
    if (change < 1e-13) break; /* quadratic convergence: the next step would be at rounding level */
  }
  quat_from_rot(a, q);
  if (col_len) {
    memcpy(col_len, len, sizeof len);
    if (d < 0) col_len[0] = -col_len[0];
  }
  return 0;
}

/* ---- strings ---- */

static const char *pool_add(loader *ld, const char *s, size_t n) {
  char *p;
  if (ld->pool_used + n + 1 > ld->pool_cap) return NULL; /* sized up front: not reached */
  p = ld->g->pool + ld->pool_used;
  memcpy(p, s, n);
  p[n] = 0;
  ld->pool_used += n + 1;
  return p;
}

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

/* Unique node names (ik_gltf_node_name), over an open-addressing table of the names
 * given so far. Each node's pool share (its name and 40 bytes) holds any suffix. */
static int name_nodes(loader *ld, cJSON *nodes) {
  ik_gltf *g = ld->g;
  int n = g->node_count, cap = 16, i = 0;
  const char **table;
  size_t pool = 0, longest = 0;
  char *cand;
  cJSON *e;
  while (cap < 2 * n) cap *= 2;
  cJSON_ArrayForEach(e, nodes) {
    const char *name;
    char path[32];
    size_t len;
    path_index(path, sizeof path, "nodes", i++);
    if (get_string(ld, e, path, "name", &name)) return -1;
    len = name ? strlen(name) : 0;
    pool += len + 41;
    if (len > longest) longest = len;
  }
  g->pool = (char *)malloc(pool + 1);
  table = (const char **)calloc((size_t)cap, sizeof *table);
  cand = (char *)malloc(longest + 41);
  if (!g->pool || !table || !cand) {
    free(table);
    free(cand);
    return fail(ld, IK_GLTF_E_MEMORY, "out of memory for %d node names", n);
  }
  ld->pool_cap = pool + 1;
  i = 0;
  cJSON_ArrayForEach(e, nodes) {
    cJSON *nm = field(e, "name");
    const char *raw = nm && nm->valuestring && *nm->valuestring ? nm->valuestring : NULL;
    int attempt;
    for (attempt = 0;; attempt++) {
      uint32_t h;
      if (attempt == 0 && raw)
        snprintf(cand, longest + 41, "%s", raw);
      else if (attempt == 0)
        snprintf(cand, longest + 41, "node%d", i);
      else if (attempt == 1)
        snprintf(cand, longest + 41, "%s#%d", raw ? raw : "node", i);
      else
        snprintf(cand, longest + 41, "%s#%d.%d", raw ? raw : "node", i, attempt);
      h = hash_str(cand) & (uint32_t)(cap - 1);
      while (table[h] && strcmp(table[h], cand) != 0) h = (h + 1) & (uint32_t)(cap - 1);
      if (!table[h]) {
        g->nodes[i].name = table[h] = pool_add(ld, cand, strlen(cand));
        if (!table[h]) { /* the pool is sized for the longest suffix: not reached */
          free(table);
          free(cand);
          return fail(ld, IK_GLTF_E_MEMORY, "nodes[%d].name: no room", i);
        }
        break;
      }
    }
    i++;
  }
  free(table);
  free(cand);
  return 0;
}

/* ---- buffers ---- */

static int b64_value(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

/* Decodes base64 (padding optional) into a new block of at least `need` bytes. */
static int decode_base64(loader *ld, const char *path, const char *s, size_t need, unsigned char **out) {
  size_t n = strlen(s), cap = n / 4 * 3 + 3, len = 0, i;
  unsigned acc = 0;
  int bits = 0;
  unsigned char *p;
  while (n > 0 && s[n - 1] == '=') n--;
  if (cap < need)
    return fail(ld, IK_GLTF_E_FORMAT, "%s: data URI holds fewer than the %zu bytes of byteLength", path,
                need);
  p = (unsigned char *)malloc(cap);
  if (!p) return fail(ld, IK_GLTF_E_MEMORY, "%s: out of memory for %zu bytes", path, cap);
  for (i = 0; i < n; i++) {
    int v = b64_value((unsigned char)s[i]);
    if (v < 0) {
      free(p);
      return fail(ld, IK_GLTF_E_FORMAT, "%s: bad base64 character at %zu", path, i);
    }
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      p[len++] = (unsigned char)(acc >> bits);
    }
  }
  if (len < need) {
    free(p);
    return fail(ld, IK_GLTF_E_FORMAT, "%s: data URI holds %zu bytes, fewer than byteLength %zu", path, len,
                need);
  }
  *out = p;
  return 0;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Reads `need` bytes of the file the relative URI names. */
static int read_external(loader *ld, const char *path, const char *uri, size_t need, unsigned char **out) {
  size_t dl, ul = strlen(uri), i, j;
  char *file;
  FILE *f;
  unsigned char *p;
  const char *colon = strchr(uri, ':'), *slash = strchr(uri, '/');
  if (!ld->base_dir)
    return fail(ld, IK_GLTF_E_IO, "%s: external file '%s' and no base directory to find it in", path, uri);
  if (uri[0] == '/' || (colon && (!slash || colon < slash)))
    return fail(ld, IK_GLTF_E_FORMAT, "%s: only relative paths and data: URIs are read, got '%s'", path, uri);
  if (need > ld->opt.max_file_bytes)
    return fail(ld, IK_GLTF_E_LIMIT, "%s: byteLength %zu is beyond the limit of %zu bytes", path, need,
                ld->opt.max_file_bytes);
  dl = strlen(ld->base_dir);
  file = (char *)malloc(dl + ul + 2);
  if (!file) return fail(ld, IK_GLTF_E_MEMORY, "%s: out of memory", path);
  memcpy(file, ld->base_dir, dl);
  if (dl > 0 && file[dl - 1] != '/') file[dl++] = '/';
  for (i = 0, j = dl; i < ul; i++) { /* percent-decoding (a URI's %20) */
    int h1, h2;
    if (uri[i] == '%' && i + 2 < ul && (h1 = hexval(uri[i + 1])) >= 0 && (h2 = hexval(uri[i + 2])) >= 0) {
      file[j++] = (char)(h1 * 16 + h2);
      i += 2;
    } else {
      file[j++] = uri[i];
    }
  }
  file[j] = 0;
  f = fopen(file, "rb");
  if (!f) {
    fail(ld, IK_GLTF_E_IO, "%s: cannot open '%s' (%s)", path, uri, strerror(errno));
    free(file);
    return -1;
  }
  free(file);
  p = (unsigned char *)malloc(need ? need : 1);
  if (!p) {
    fclose(f);
    return fail(ld, IK_GLTF_E_MEMORY, "%s: out of memory for %zu bytes", path, need);
  }
  errno = 0;
  if (fread(p, 1, need, f) != need) {
    int io = ferror(f), e = errno;
    fclose(f);
    free(p);
    if (io)
      return fail(ld, IK_GLTF_E_IO, "%s: cannot read '%s' (%s)", path, uri, e ? strerror(e) : "read error");
    return fail(ld, IK_GLTF_E_FORMAT, "%s: '%s' is shorter than byteLength %zu", path, uri, need);
  }
  fclose(f);
  *out = p;
  return 0;
}

/* The bytes of buffer b (loaded on first use). */
static int buffer_bytes(loader *ld, int b, const unsigned char **out) {
  buffer_data *bd = &ld->buffers[b];
  char path[32];
  cJSON *buf;
  const char *uri;
  if (bd->bytes) {
    *out = bd->bytes;
    return 0;
  }
  snprintf(path, sizeof path, "buffers[%d]", b);
  buf = ld->buffer_items[b];
  if (get_string(ld, buf, path, "uri", &uri)) return -1;
  if (!uri) {
    if (b != 0 || !ld->has_bin)
      return fail(
          ld, IK_GLTF_E_FORMAT, "%s: no uri, and %s", path,
          b != 0 ? "only buffers[0] may be a GLB's binary chunk" : "the file has no GLB binary chunk");
    if (ld->bin_size < bd->size)
      return fail(ld, IK_GLTF_E_FORMAT, "%s.byteLength: %zu, beyond the GLB binary chunk's %zu bytes", path,
                  bd->size, ld->bin_size);
    bd->bytes = ld->bin;
  } else {
    char upath[40];
    snprintf(upath, sizeof upath, "%s.uri", path);
    if (strncmp(uri, "data:", 5) == 0) {
      const char *comma = strchr(uri, ',');
      if (!comma || comma - uri < 7 || strncmp(comma - 7, ";base64", 7) != 0)
        return fail(ld, IK_GLTF_E_FORMAT, "%s: data URI is not base64", upath);
      if (decode_base64(ld, upath, comma + 1, bd->size, &bd->owned)) return -1;
    } else if (read_external(ld, upath, uri, bd->size, &bd->owned)) {
      return -1;
    }
    bd->bytes = bd->owned;
  }
  *out = bd->bytes;
  return 0;
}

/* ---- accessors and buffer views: ranges checked for all, data read for the skins ---- */

static int component_size(long type) {
  switch (type) {
    case 5120:
    case 5121:
      return 1;
    case 5122:
    case 5123:
      return 2;
    case 5125:
    case 5126:
      return 4;
    default:
      return 0;
  }
}

static int type_components(const char *t) {
  static const char *const names[] = {"SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"};
  static const int n[] = {1, 2, 3, 4, 4, 9, 16};
  int i;
  for (i = 0; i < 7; i++)
    if (t && strcmp(t, names[i]) == 0) return n[i];
  return 0;
}

static int check_views(loader *ld, cJSON *views) {
  cJSON *v;
  int i = 0;
  cJSON_ArrayForEach(v, views) {
    char path[32];
    long buffer, offset, length, stride;
    snprintf(path, sizeof path, "bufferViews[%d]", i);
    if (!cJSON_IsObject(v)) return fail(ld, IK_GLTF_E_FORMAT, "%s: expected an object", path);
    if (get_int(ld, v, path, "buffer", 0, ld->buffer_count - 1, REQUIRED, &buffer) ||
        get_int(ld, v, path, "byteOffset", 0, LONG_MAX / 4, 0, &offset) ||
        get_int(ld, v, path, "byteLength", 1, LONG_MAX / 4, REQUIRED, &length) ||
        get_int(ld, v, path, "byteStride", 4, 252, 4, &stride))
      return -1;
    if (stride % 4) return fail(ld, IK_GLTF_E_FORMAT, "%s.byteStride: expected a multiple of 4", path);
    if ((size_t)offset + (size_t)length > ld->buffers[buffer].size)
      return fail(ld, IK_GLTF_E_FORMAT, "%s: bytes %ld..%ld run past the end of buffers[%ld] (%zu bytes)",
                  path, offset, offset + length, buffer, ld->buffers[buffer].size);
    i++;
  }
  return 0;
}

/* Checks accessor a's range; its view, offset, stride and element size when it has a view
 * (view -1 when it has none: zeros, or sparse). */
static int check_accessor(loader *ld, int a, int *view_out, size_t *offset_out, size_t *stride_out,
                          size_t *elem_out, long *count_out, long *ctype_out, const char **type_out) {
  cJSON *acc = ld->accessor_items[a];
  char path[32];
  long view, offset, count, ctype, vstride = 0, vlength = 0;
  const char *type;
  int csize, ncomp;
  size_t elem, stride;
  snprintf(path, sizeof path, "accessors[%d]", a);
  if (!cJSON_IsObject(acc)) return fail(ld, IK_GLTF_E_FORMAT, "%s: expected an object", path);
  if (get_int(ld, acc, path, "bufferView", 0, ld->view_count - 1, -2, &view) ||
      get_int(ld, acc, path, "byteOffset", 0, LONG_MAX / 4, 0, &offset) ||
      get_int(ld, acc, path, "count", 1, LONG_MAX / 4, REQUIRED, &count) ||
      get_int(ld, acc, path, "componentType", 0, 99999, REQUIRED, &ctype) ||
      get_string(ld, acc, path, "type", &type))
    return -1;
  csize = component_size(ctype);
  if (!csize)
    return fail(ld, IK_GLTF_E_FORMAT, "%s.componentType: %ld is not a glTF component type", path, ctype);
  ncomp = type_components(type);
  if (!ncomp) return fail(ld, IK_GLTF_E_FORMAT, "%s.type: expected SCALAR, VEC2..4 or MAT2..4", path);
  elem = (size_t)csize * (size_t)ncomp;
  if (view_out) *view_out = (int)view;
  if (count_out) *count_out = count;
  if (ctype_out) *ctype_out = ctype;
  if (type_out) *type_out = type;
  if (elem_out) *elem_out = elem;
  if (view == -2) {
    if (view_out) *view_out = -1;
    return 0;
  }
  {
    cJSON *bv = ld->view_items[view];
    long dummy;
    char vpath[32];
    snprintf(vpath, sizeof vpath, "bufferViews[%ld]", view);
    if (get_int(ld, bv, vpath, "byteLength", 1, LONG_MAX / 4, REQUIRED, &vlength) ||
        get_int(ld, bv, vpath, "byteStride", 0, 252, 0, &vstride) ||
        get_int(ld, bv, vpath, "byteOffset", 0, LONG_MAX / 4, 0, &dummy))
      return -1;
    if (offset_out) *offset_out = (size_t)dummy + (size_t)offset;
  }
  stride = vstride ? (size_t)vstride : elem;
  if (stride_out) *stride_out = stride;
  if (vstride && (size_t)vstride < elem)
    return fail(ld, IK_GLTF_E_FORMAT, "%s: bufferViews[%ld].byteStride %ld is less than the %zu-byte element",
                path, view, vstride, elem);
  /* count <= LONG_MAX / 4 and stride <= 252: the product fits a 64-bit size_t */
  if ((size_t)offset + stride * (size_t)(count - 1) + elem > (size_t)vlength)
    return fail(
        ld, IK_GLTF_E_FORMAT,
        "%s: %ld elements of %zu bytes from byte %ld run past the end of bufferViews[%ld] (%ld bytes)", path,
        count, elem, offset, view, vlength);
  return 0;
}

static float read_f32le(const unsigned char *p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static int read_ibm(loader *ld, int skin, int a, gskin *sk) {
  int view, i, k;
  size_t offset = 0, stride = 0, elem = 0;
  long count, ctype, buffer;
  const char *type;
  const unsigned char *bytes = NULL;
  char path[48], vpath[32];
  snprintf(path, sizeof path, "skins[%d].inverseBindMatrices", skin);
  if (check_accessor(ld, a, &view, &offset, &stride, &elem, &count, &ctype, &type)) return -1;
  if (strcmp(type, "MAT4") != 0 || ctype != 5126)
    return fail(ld, IK_GLTF_E_FORMAT, "%s: accessors[%d] is not MAT4 of FLOAT", path, a);
  if (count < sk->joint_count)
    return fail(ld, IK_GLTF_E_FORMAT, "%s: accessors[%d] has %ld matrices for %d joints", path, a, count,
                sk->joint_count);
  sk->ibm = (double *)malloc(sizeof(double) * 16 * (size_t)sk->joint_count);
  if (!sk->ibm) return fail(ld, IK_GLTF_E_MEMORY, "%s: out of memory", path);
  if (view < 0) { /* no view: zeros (a sparse accessor's base); sparse values are not read */
    if (field(ld->accessor_items[a], "sparse"))
      return fail(ld, IK_GLTF_E_FORMAT, "%s: sparse inverse bind matrices are not supported", path);
    return fail(ld, IK_GLTF_E_FORMAT, "%s: accessors[%d] has no bufferView", path, a);
  }
  snprintf(vpath, sizeof vpath, "bufferViews[%d]", view);
  if (get_int(ld, ld->view_items[view], vpath, "buffer", 0, ld->buffer_count - 1, REQUIRED, &buffer) ||
      buffer_bytes(ld, (int)buffer, &bytes))
    return -1;
  for (i = 0; i < sk->joint_count; i++)
    for (k = 0; k < 16; k++) {
      double v = (double)read_f32le(bytes + offset + stride * (size_t)i + 4 * (size_t)k);
      if (!isfinite(v))
        return fail(ld, IK_GLTF_E_FORMAT, "%s: matrix %d element %d is not a finite number", path, i, k);
      sk->ibm[i * 16 + k] = v;
    }
  return 0;
}

/* ---- nodes ---- */

static int read_node(loader *ld, cJSON *e, int i, gnode *nd) {
  static const double zero[3] = {0, 0, 0}, one[3] = {1, 1, 1}, ident[4] = {0, 0, 0, 1};
  char path[32];
  int has_m, has_t, has_r, has_s;
  double m[16], qn;
  path_index(path, sizeof path, "nodes", i);
  if (!cJSON_IsObject(e)) return fail(ld, IK_GLTF_E_FORMAT, "%s: expected an object", path);
  if (get_numbers(ld, e, path, "matrix", 16, m, NULL, &has_m) ||
      get_numbers(ld, e, path, "translation", 3, nd->t, zero, &has_t) ||
      get_numbers(ld, e, path, "rotation", 4, nd->r, ident, &has_r) ||
      get_numbers(ld, e, path, "scale", 3, nd->s, one, &has_s))
    return -1;
  if (has_m && (has_t || has_r || has_s))
    return fail(ld, IK_GLTF_E_FORMAT, "%s: both matrix and translation/rotation/scale", path);
  if (has_m) {
    int flags;
    if (m[3] != 0 || m[7] != 0 || m[11] != 0 || m[15] != 1)
      return fail(ld, IK_GLTF_E_FORMAT, "%s.matrix: last row must be 0, 0, 0, 1", path);
    memcpy(nd->local, m, sizeof m);
    memcpy(nd->t, m + 12, sizeof nd->t);
    if (decompose(m, nd->r, nd->s, &flags)) memcpy(nd->r, ident, sizeof ident);
  } else {
    qn = sqrt(nd->r[0] * nd->r[0] + nd->r[1] * nd->r[1] + nd->r[2] * nd->r[2] + nd->r[3] * nd->r[3]);
    if (!(qn > 1e-6)) return fail(ld, IK_GLTF_E_FORMAT, "%s.rotation: zero quaternion", path);
    nd->r[0] /= qn, nd->r[1] /= qn, nd->r[2] /= qn, nd->r[3] /= qn;
    mat_from_trs(nd->t, nd->r, nd->s, nd->local);
  }
  nd->parent = -1;
  return 0;
}

static int link_children(loader *ld, cJSON *nodes) {
  ik_gltf *g = ld->g;
  cJSON *e;
  int i = 0, k;
  cJSON_ArrayForEach(e, nodes) {
    cJSON *children, *c;
    int n;
    char path[32], prefix[48];
    path_index(path, sizeof path, "nodes", i);
    if (opt_array(ld, e, path, "children", &children, &n)) return -1;
    k = 0;
    if (n > 0) snprintf(prefix, sizeof prefix, "%s.children", path);
    cJSON_ArrayForEach(c, children) {
      char cpath[80];
      int child;
      path_index(cpath, sizeof cpath, prefix, k++);
      if (get_index(ld, c, cpath, g->node_count, "node", &child)) return -1;
      if (child == i) return fail(ld, IK_GLTF_E_FORMAT, "%s: node %d is its own child", cpath, i);
      if (g->nodes[child].parent >= 0)
        return fail(ld, IK_GLTF_E_FORMAT, "%s: node %d already has parent %d", cpath, child,
                    g->nodes[child].parent);
      g->nodes[child].parent = i;
    }
    i++;
  }
  /* Cycles: each node's walk up stops at a node whose depth is known, or comes back round
   * (depth -2 marks the walk in progress). */
  for (i = 0; i < g->node_count; i++) g->nodes[i].depth = -1;
  for (i = 0; i < g->node_count; i++) {
    int b = i, d;
    while (b >= 0 && g->nodes[b].depth == -1) {
      g->nodes[b].depth = -2;
      b = g->nodes[b].parent;
    }
    if (b >= 0 && g->nodes[b].depth == -2)
      return fail(ld, IK_GLTF_E_FORMAT, "nodes[%d].children: node %d is its own ancestor (a cycle)",
                  g->nodes[b].parent, b);
    d = b < 0 ? 0 : g->nodes[b].depth + 1;
    /* second pass: depths from the top down; count the walk's length first */
    {
      int len = 0, c = i, j;
      while (c != b) len++, c = g->nodes[c].parent;
      c = i;
      for (j = 0; j < len; j++) {
        g->nodes[c].depth = d + len - 1 - j;
        c = g->nodes[c].parent;
      }
    }
  }
  return 0;
}

/* World matrices, parents before children (by depth). */
static void world_transforms(ik_gltf *g, const int *order) {
  int k;
  for (k = 0; k < g->node_count; k++) {
    gnode *nd = &g->nodes[order[k]];
    int flags;
    if (nd->parent < 0)
      memcpy(nd->world, nd->local, sizeof nd->world);
    else
      mat_mul(g->nodes[nd->parent].world, nd->local, nd->world);
    if (decompose(nd->world, nd->rot_ws, NULL, &flags)) {
      static const double ident[4] = {0, 0, 0, 1};
      quat_mul(nd->parent < 0 ? ident : g->nodes[nd->parent].rot_ws, nd->r, nd->rot_ws);
    }
    nd->flags = flags;
  }
}

/* Node indices sorted by depth (stable: by index within a depth). */
static int *depth_order(const ik_gltf *g, const int *set, int n) {
  int *out = (int *)malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), *count;
  int max_depth = 0, i;
  if (!out) return NULL;
  for (i = 0; i < n; i++)
    if (g->nodes[set[i]].depth > max_depth) max_depth = g->nodes[set[i]].depth;
  count = (int *)calloc((size_t)max_depth + 2, sizeof(int));
  if (!count) {
    free(out);
    return NULL;
  }
  for (i = 0; i < n; i++) count[g->nodes[set[i]].depth + 1]++;
  for (i = 1; i <= max_depth + 1; i++) count[i] += count[i - 1];
  for (i = 0; i < n; i++) out[count[g->nodes[set[i]].depth]++] = set[i];
  free(count);
  return out;
}

/* ---- skins and humanoid ---- */

static int read_skins(loader *ld, cJSON *skins) {
  ik_gltf *g = ld->g;
  cJSON *e;
  int i = 0;
  unsigned char *seen = (unsigned char *)calloc((size_t)g->node_count + 1, 1);
  if (!seen) return fail(ld, IK_GLTF_E_MEMORY, "out of memory");
  cJSON_ArrayForEach(e, skins) {
    gskin *sk = &g->skins[i];
    cJSON *joints, *j;
    int n, k = 0;
    long ibm;
    char path[32], prefix[48];
    const char *name;
    snprintf(path, sizeof path, "skins[%d]", i);
    if (!cJSON_IsObject(e)) goto bad_object;
    if (get_string(ld, e, path, "name", &name) || opt_array(ld, e, path, "joints", &joints, &n)) goto out;
    if (n < 1) {
      fail(ld, IK_GLTF_E_FORMAT, "%s.joints: expected at least one joint", path);
      goto out;
    }
    if (name && !(sk->name = pool_add(ld, name, strlen(name)))) {
      fail(ld, IK_GLTF_E_MEMORY, "out of memory");
      goto out;
    }
    sk->joints = (int *)malloc(sizeof(int) * (size_t)n);
    if (!sk->joints) {
      fail(ld, IK_GLTF_E_MEMORY, "out of memory");
      goto out;
    }
    sk->joint_count = n;
    snprintf(prefix, sizeof prefix, "%s.joints", path);
    cJSON_ArrayForEach(j, joints) {
      char jpath[80];
      path_index(jpath, sizeof jpath, prefix, k);
      if (get_index(ld, j, jpath, g->node_count, "node", &sk->joints[k])) goto out;
      if (seen[sk->joints[k]]) {
        fail(ld, IK_GLTF_E_FORMAT, "%s: node %d is listed twice", jpath, sk->joints[k]);
        goto out;
      }
      seen[sk->joints[k++]] = 1;
    }
    for (k = 0; k < n; k++) seen[sk->joints[k]] = 0;
    if (get_int(ld, e, path, "inverseBindMatrices", 0, ld->accessor_count - 1, -2, &ibm)) goto out;
    if (ibm >= 0 && read_ibm(ld, i, (int)ibm, sk)) goto out;
    i++;
  }
  free(seen);
  return 0;
bad_object:
  fail(ld, IK_GLTF_E_FORMAT, "skins[%d]: expected an object", i);
out:
  free(seen);
  return -1;
}

static int map_bone(loader *ld, const char *path, const char *bone, const cJSON *node) {
  ik_gltf *g = ld->g;
  int role = ik_humanoid_bone_from_name(bone), idx;
  if (get_index(ld, node, path, g->node_count, "node", &idx)) return -1;
  if (role < 0) return 0; /* fingers, jaw, and names from later versions */
  if (g->humanoid[role] >= 0) return fail(ld, IK_GLTF_E_FORMAT, "%s: bone '%s' is mapped twice", path, bone);
  g->humanoid[role] = idx;
  return 0;
}

/* The eye point: VRM 1.0's lookAt.offsetFromHeadBone (from the head), VRM 0.x's
 * firstPerson.firstPersonBoneOffset (an {x, y, z} object, from firstPersonBone, else the
 * head). Read after the bone map. */
static int read_look_offset(loader *ld, const cJSON *vrm) {
  ik_gltf *g = ld->g;
  if (g->vrm == IK_GLTF_VRM_1) {
    const cJSON *look = field(vrm, "lookAt");
    int present;
    if (look && !cJSON_IsObject(look))
      return fail(ld, IK_GLTF_E_FORMAT, "extensions.VRMC_vrm.lookAt: expected an object");
    if (get_numbers(ld, look, "extensions.VRMC_vrm.lookAt", "offsetFromHeadBone", 3, g->look_offset, NULL,
                    &present))
      return -1;
    if (present) g->look_node = g->humanoid[IK_HUMANOID_HEAD];
  } else {
    const cJSON *fp = field(vrm, "firstPerson"), *off, *bone;
    static const char *const axes[3] = {"x", "y", "z"};
    int i, node = g->humanoid[IK_HUMANOID_HEAD];
    if (!fp) return 0;
    if (!cJSON_IsObject(fp))
      return fail(ld, IK_GLTF_E_FORMAT, "extensions.VRM.firstPerson: expected an object");
    if ((bone = field(fp, "firstPersonBone")) != NULL && !(cJSON_IsNumber(bone) && bone->valuedouble == -1) &&
        get_index(ld, bone, "extensions.VRM.firstPerson.firstPersonBone", g->node_count, "node", &node))
      return -1;
    if (!(off = field(fp, "firstPersonBoneOffset"))) return 0;
    if (!cJSON_IsObject(off))
      return fail(ld, IK_GLTF_E_FORMAT,
                  "extensions.VRM.firstPerson.firstPersonBoneOffset: expected an object");
    for (i = 0; i < 3; i++) {
      const cJSON *v = field(off, axes[i]);
      g->look_offset[i] = 0;
      if (!v) continue;
      if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return fail(ld, IK_GLTF_E_FORMAT,
                    "extensions.VRM.firstPerson.firstPersonBoneOffset.%s: not a finite number", axes[i]);
      g->look_offset[i] = v->valuedouble;
    }
    g->look_node = node;
  }
  return 0;
}

static int read_humanoid(loader *ld) {
  cJSON *ext = field(ld->root, "extensions"), *vrm, *bones, *b;
  int k = 0;
  if (!ext) return 0;
  if ((vrm = field(ext, "VRMC_vrm")) != NULL) {
    ld->g->vrm = IK_GLTF_VRM_1;
    bones = field(field(vrm, "humanoid"), "humanBones");
    if (!cJSON_IsObject(bones))
      return fail(ld, IK_GLTF_E_FORMAT, "extensions.VRMC_vrm.humanoid.humanBones: expected an object");
    cJSON_ArrayForEach(b, bones) {
      char path[128];
      snprintf(path, sizeof path, "extensions.VRMC_vrm.humanoid.humanBones.%.40s.node", b->string);
      if (!cJSON_IsObject(b)) return fail(ld, IK_GLTF_E_FORMAT, "%s: expected an object with a node", path);
      if (map_bone(ld, path, b->string, field(b, "node"))) return -1;
    }
    return read_look_offset(ld, vrm);
  } else if ((vrm = field(ext, "VRM")) != NULL) {
    ld->g->vrm = IK_GLTF_VRM_0;
    bones = field(field(vrm, "humanoid"), "humanBones");
    if (!cJSON_IsArray(bones))
      return fail(ld, IK_GLTF_E_FORMAT, "extensions.VRM.humanoid.humanBones: expected an array");
    cJSON_ArrayForEach(b, bones) {
      char path[96];
      cJSON *name = field(b, "bone");
      snprintf(path, sizeof path, "extensions.VRM.humanoid.humanBones[%d]", k++);
      if (!cJSON_IsString(name)) return fail(ld, IK_GLTF_E_FORMAT, "%s.bone: expected a string", path);
      strcat(path, ".node");
      if (map_bone(ld, path, name->valuestring, field(b, "node"))) return -1;
    }
    return read_look_offset(ld, vrm);
  }
  return 0;
}

/* ---- skinned vertices: each joint's rest extent ---- */

/* An accessor's elements, for reading component by component. */
typedef struct acc_view {
  const unsigned char *base;
  size_t stride;
  long count, ctype;
  int normalized;
} acc_view;

/* Opens accessor a (path names the attribute) as `ncomp` components of one of `ctypes`
 * (0-terminated). 1 when it has no buffer view (zeros, or compressed data: nothing to
 * read), 0 when opened, -1 when refused. */
static int open_accessor(loader *ld, int a, const char *path, const char *type_want, const long *ctypes,
                         acc_view *out) {
  int view, k;
  size_t offset = 0, stride = 0, elem = 0;
  long buffer;
  const char *type;
  const unsigned char *bytes = NULL;
  char vpath[32];
  cJSON *norm;
  if (check_accessor(ld, a, &view, &offset, &stride, &elem, &out->count, &out->ctype, &type)) return -1;
  for (k = 0; ctypes[k] && ctypes[k] != out->ctype; k++) continue;
  if (strcmp(type, type_want) != 0 || !ctypes[k])
    return fail(ld, IK_GLTF_E_FORMAT, "%s: accessors[%d] is %s of component type %ld, not a %s this reads",
                path, a, type, out->ctype, type_want);
  if (view < 0) return 1;
  norm = field(ld->accessor_items[a], "normalized");
  out->normalized = cJSON_IsTrue(norm);
  snprintf(vpath, sizeof vpath, "bufferViews[%d]", view);
  if (get_int(ld, ld->view_items[view], vpath, "buffer", 0, ld->buffer_count - 1, REQUIRED, &buffer) ||
      buffer_bytes(ld, (int)buffer, &bytes))
    return -1;
  out->base = bytes + offset;
  out->stride = stride;
  return 0;
}

static double acc_get(const acc_view *v, long i, int c) {
  const unsigned char *p = v->base + v->stride * (size_t)i;
  switch (v->ctype) {
    case 5121:
      return v->normalized ? p[c] / 255.0 : p[c];
    case 5123: {
      unsigned u = (unsigned)p[2 * c] | (unsigned)p[2 * c + 1] << 8;
      return v->normalized ? u / 65535.0 : u;
    }
    default:
      return (double)read_f32le(p + 4 * c);
  }
}

/* One skinned primitive: each vertex at rest (the sum over its joints of weight * joint
 * world * inverse bind * position) widens the box of the joint it follows most. */
static int skin_primitive(loader *ld, const cJSON *prim, const char *path, int skin,
                          const double *joint_mats) {
  static const long f32[] = {5126, 0}, joint_types[] = {5121, 5123, 0},
                    weight_types[] = {5126, 5121, 5123, 0};
  ik_gltf *g = ld->g;
  const gskin *sk = &g->skins[skin];
  cJSON *attrs = field(prim, "attributes");
  long pos_a, joints_a, weights_a, i;
  acc_view pos, joints, weights;
  char apath[160];
  int k, rc;
  if (!cJSON_IsObject(attrs)) return fail(ld, IK_GLTF_E_FORMAT, "%s.attributes: expected an object", path);
  snprintf(apath, sizeof apath, "%s.attributes", path);
  if (get_int(ld, attrs, apath, "POSITION", 0, ld->accessor_count - 1, -1, &pos_a) ||
      get_int(ld, attrs, apath, "JOINTS_0", 0, ld->accessor_count - 1, -1, &joints_a) ||
      get_int(ld, attrs, apath, "WEIGHTS_0", 0, ld->accessor_count - 1, -1, &weights_a))
    return -1;
  if (pos_a < 0 || joints_a < 0 || weights_a < 0) return 0; /* not skinned */
  snprintf(apath, sizeof apath, "%s.attributes.POSITION", path);
  if ((rc = open_accessor(ld, (int)pos_a, apath, "VEC3", f32, &pos)) != 0) return rc < 0 ? -1 : 0;
  snprintf(apath, sizeof apath, "%s.attributes.JOINTS_0", path);
  if ((rc = open_accessor(ld, (int)joints_a, apath, "VEC4", joint_types, &joints)) != 0)
    return rc < 0 ? -1 : 0;
  snprintf(apath, sizeof apath, "%s.attributes.WEIGHTS_0", path);
  if ((rc = open_accessor(ld, (int)weights_a, apath, "VEC4", weight_types, &weights)) != 0)
    return rc < 0 ? -1 : 0;
  if (joints.count != pos.count || weights.count != pos.count)
    return fail(ld, IK_GLTF_E_FORMAT, "%s.attributes: POSITION has %ld elements, JOINTS_0 %ld, WEIGHTS_0 %ld",
                path, pos.count, joints.count, weights.count);
  for (i = 0; i < pos.count; i++) {
    double v[3], out[3] = {0, 0, 0}, best = 0;
    int best_joint = -1;
    for (k = 0; k < 3; k++) v[k] = acc_get(&pos, i, k);
    if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
      return fail(ld, IK_GLTF_E_FORMAT, "%s.attributes.POSITION: vertex %ld is not finite", path, i);
    for (k = 0; k < 4; k++) {
      double w = acc_get(&weights, i, k), j = acc_get(&joints, i, k);
      const double *m;
      int c;
      if (!(w >= 0) || !isfinite(w))
        return fail(ld, IK_GLTF_E_FORMAT,
                    "%s.attributes.WEIGHTS_0: vertex %ld has a weight that is not a finite number >= 0", path,
                    i);
      if (w == 0) continue;
      if (j >= sk->joint_count)
        return fail(ld, IK_GLTF_E_FORMAT,
                    "%s.attributes.JOINTS_0: vertex %ld names joint %.0f, skins[%d] has %d", path, i, j, skin,
                    sk->joint_count);
      m = joint_mats + 16 * (int)j;
      for (c = 0; c < 3; c++) out[c] += w * (m[c] * v[0] + m[4 + c] * v[1] + m[8 + c] * v[2] + m[12 + c]);
      if (w > best) best = w, best_joint = (int)j;
    }
    if (best_joint >= 0) {
      gnode *nd = &g->nodes[sk->joints[best_joint]];
      double total = 0;
      for (k = 0; k < 4; k++) total += acc_get(&weights, i, k);
      for (k = 0; k < 3; k++)
        if (!isfinite(out[k] / total))
          return fail(ld, IK_GLTF_E_FORMAT,
                      "%s.attributes.POSITION: vertex %ld is at no finite point at rest", path, i);
      for (k = 0; k < 3; k++) {
        double c = out[k] / total; /* weights need not sum to one exactly */
        if (nd->vertices == 0 || c < nd->bmin[k]) nd->bmin[k] = c;
        if (nd->vertices == 0 || c > nd->bmax[k]) nd->bmax[k] = c;
      }
      nd->vertices++;
    }
  }
  return 0;
}

/* Every node with both a mesh and a skin: its primitives' vertices. */
static int read_vertex_bounds(loader *ld, cJSON *nodes) {
  ik_gltf *g = ld->g;
  cJSON *meshes, *e;
  int mesh_count, i = 0;
  double *mats = NULL;
  if (opt_array(ld, ld->root, "", "meshes", &meshes, &mesh_count)) return -1;
  cJSON_ArrayForEach(e, nodes) {
    char path[32];
    long mesh, skin;
    cJSON *prims, *prim;
    int n, k = 0, j;
    const gskin *sk;
    path_index(path, sizeof path, "nodes", i++);
    if (get_int(ld, e, path, "mesh", 0, mesh_count - 1, -1, &mesh) ||
        get_int(ld, e, path, "skin", 0, g->skin_count - 1, -1, &skin))
      goto fail;
    if (mesh < 0 || skin < 0) continue;
    sk = &g->skins[skin];
    free(mats);
    mats = (double *)malloc(sizeof(double) * 16 * (size_t)sk->joint_count);
    if (!mats) {
      fail(ld, IK_GLTF_E_MEMORY, "out of memory");
      goto fail;
    }
    for (j = 0; j < sk->joint_count; j++) {
      static const double ident[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
      mat_mul(g->nodes[sk->joints[j]].world, sk->ibm ? sk->ibm + 16 * j : ident, mats + 16 * j);
    }
    snprintf(path, sizeof path, "meshes[%ld]", mesh);
    if (opt_array(ld, ld->mesh_items[mesh], path, "primitives", &prims, &n)) goto fail;
    cJSON_ArrayForEach(prim, prims) {
      char ppath[64];
      snprintf(ppath, sizeof ppath, "%s.primitives[%d]", path, k++);
      if (!cJSON_IsObject(prim)) {
        fail(ld, IK_GLTF_E_FORMAT, "%s: expected an object", ppath);
        goto fail;
      }
      if (skin_primitive(ld, prim, ppath, (int)skin, mats)) goto fail;
    }
  }
  free(mats);
  return 0;
fail:
  free(mats);
  return -1;
}

/* ---- the load ---- */

/* Counts JSON values without building anything: at most one per ',', '[', '{' or ':'
 * outside strings, plus one. */
static size_t count_json_values(const char *s, size_t n) {
  size_t count = 1, i;
  int in_string = 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = 0;
    } else if (c == '"') {
      in_string = 1;
    } else if (c == ',' || c == '[' || c == '{' || c == ':') {
      count++;
    }
  }
  return count;
}

static uint32_t u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Finds the JSON (and BIN) chunks of a GLB. */
static int parse_glb(loader *ld, const unsigned char *d, size_t size, const char **json, size_t *json_len) {
  uint32_t version, length, clen, ctype;
  size_t pos;
  if (size < 12) return fail(ld, IK_GLTF_E_FORMAT, "GLB: %zu bytes, shorter than the 12-byte header", size);
  version = u32le(d + 4);
  length = u32le(d + 8);
  if (version != 2) return fail(ld, IK_GLTF_E_FORMAT, "GLB: version %u, expected 2", (unsigned)version);
  if (length > size)
    return fail(ld, IK_GLTF_E_FORMAT, "GLB: header says %u bytes, the file has %zu (truncated)",
                (unsigned)length, size);
  if (length < 20)
    return fail(ld, IK_GLTF_E_FORMAT, "GLB: header length %u leaves no room for a chunk", (unsigned)length);
  clen = u32le(d + 12);
  ctype = u32le(d + 16);
  if (ctype != 0x4E4F534Au) return fail(ld, IK_GLTF_E_FORMAT, "GLB: chunk 0 is not JSON");
  if (clen > length - 20)
    return fail(ld, IK_GLTF_E_FORMAT, "GLB: chunk 0 (JSON) length %u runs past the end of the file",
                (unsigned)clen);
  *json = (const char *)d + 20;
  *json_len = clen;
  pos = 20 + (size_t)clen;
  if (pos + 8 <= length) {
    clen = u32le(d + pos);
    ctype = u32le(d + pos + 4);
    if (clen > length - pos - 8)
      return fail(ld, IK_GLTF_E_FORMAT, "GLB: chunk 1 length %u runs past the end of the file",
                  (unsigned)clen);
    if (ctype == 0x004E4942u) {
      ld->bin = d + pos + 8;
      ld->bin_size = clen;
      ld->has_bin = 1;
    }
  } else if (pos != length) {
    return fail(ld, IK_GLTF_E_FORMAT, "GLB: %zu stray bytes after chunk 0", (size_t)length - pos);
  }
  return 0;
}

/* The entries of array a (n of them), for lookups by index; NULL on failure. */
static cJSON **index_array(loader *ld, const cJSON *a, int n) {
  cJSON **items = (cJSON **)malloc(sizeof(cJSON *) * (size_t)(n > 0 ? n : 1)), *e;
  int i = 0;
  if (!items) {
    fail(ld, IK_GLTF_E_MEMORY, "out of memory");
    return NULL;
  }
  cJSON_ArrayForEach(e, a) items[i++] = e;
  return items;
}

static int read_buffers(loader *ld) {
  cJSON *buffers, *b;
  int n, i = 0;
  if (opt_array(ld, ld->root, "", "buffers", &buffers, &n)) return -1;
  ld->buffer_count = n;
  ld->buffers = (buffer_data *)calloc((size_t)(n > 0 ? n : 1), sizeof *ld->buffers);
  if (!ld->buffers) return fail(ld, IK_GLTF_E_MEMORY, "out of memory");
  if (!(ld->buffer_items = index_array(ld, buffers, n))) return -1;
  cJSON_ArrayForEach(b, buffers) {
    char path[32];
    long len;
    const char *uri;
    snprintf(path, sizeof path, "buffers[%d]", i);
    if (!cJSON_IsObject(b)) return fail(ld, IK_GLTF_E_FORMAT, "%s: expected an object", path);
    if (get_int(ld, b, path, "byteLength", 1, LONG_MAX / 4, REQUIRED, &len) ||
        get_string(ld, b, path, "uri", &uri))
      return -1;
    ld->buffers[i++].size = (size_t)len;
  }
  return 0;
}

static int load_json(loader *ld, const char *json, size_t len) {
  const char *end = NULL;
  cJSON *nodes, *skins, *views, *accessors, *e, *asset;
  ik_gltf *g;
  int n, i, *order, *all;
  if (len > ld->opt.max_json_bytes)
    return fail(ld, IK_GLTF_E_LIMIT, "JSON: %zu bytes, beyond the limit of %zu", len, ld->opt.max_json_bytes);
  if (count_json_values(json, len) > ld->opt.max_json_values)
    return fail(ld, IK_GLTF_E_LIMIT, "JSON: more than the limit of %zu values", ld->opt.max_json_values);
  ld->root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!ld->root) {
    size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
    size_t line = 1, col = 1, k;
    for (k = 0; k < at; k++) /* a .gltf is edited by hand: say where as an editor would */
      if (json[k] == '\n')
        line++, col = 1;
      else
        col++;
    return fail(ld, IK_GLTF_E_FORMAT, "JSON: syntax error at line %zu, column %zu (byte %zu)", line, col, at);
  }
  if (!cJSON_IsObject(ld->root)) return fail(ld, IK_GLTF_E_FORMAT, "JSON: the top level is not an object");
  asset = field(ld->root, "asset");
  if (!cJSON_IsObject(asset)) return fail(ld, IK_GLTF_E_FORMAT, "asset: missing (not a glTF file)");
  {
    const char *version;
    if (get_string(ld, asset, "asset", "version", &version)) return -1;
    if (!version || strncmp(version, "2.", 2) != 0)
      return fail(ld, IK_GLTF_E_FORMAT, "asset.version: expected \"2.x\", got %s%.16s%s", version ? "\"" : "",
                  version ? version : "none", version ? "\"" : "");
  }
  if (opt_array(ld, ld->root, "", "nodes", &nodes, &n) || read_buffers(ld) ||
      opt_array(ld, ld->root, "", "bufferViews", &views, &ld->view_count) ||
      opt_array(ld, ld->root, "", "accessors", &accessors, &ld->accessor_count) ||
      !(ld->view_items = index_array(ld, views, ld->view_count)) ||
      !(ld->accessor_items = index_array(ld, accessors, ld->accessor_count)) || check_views(ld, views))
    return -1;
  for (i = 0; i < ld->accessor_count; i++)
    if (check_accessor(ld, i, NULL, NULL, NULL, NULL, NULL, NULL, NULL)) return -1;
  g = ld->g = (ik_gltf *)calloc(1, sizeof *g);
  if (!g) return fail(ld, IK_GLTF_E_MEMORY, "out of memory");
  for (i = 0; i < IK_HUMANOID_BONE_COUNT; i++) g->humanoid[i] = -1;
  g->look_node = -1;
  g->node_count = n;
  g->nodes = (gnode *)calloc((size_t)(n > 0 ? n : 1), sizeof *g->nodes);
  if (!g->nodes) return fail(ld, IK_GLTF_E_MEMORY, "out of memory for %d nodes", n);
  i = 0;
  cJSON_ArrayForEach(e, nodes) {
    if (read_node(ld, e, i, &g->nodes[i])) return -1;
    i++;
  }
  if (link_children(ld, nodes)) return -1;
  {
    /* skin names share the pool: make room by counting them in with the node names */
    cJSON *s;
    if (opt_array(ld, ld->root, "", "skins", &skins, &g->skin_count)) return -1;
    if (name_nodes(ld, nodes)) return -1;
    {
      size_t extra = 0;
      char *grown;
      cJSON_ArrayForEach(s, skins) {
        cJSON *nm = field(s, "name");
        if (cJSON_IsString(nm)) extra += strlen(nm->valuestring) + 1;
      }
      /* names point into the pool: grow it by copying to a new block and rebasing */
      grown = (char *)malloc(ld->pool_cap + extra);
      if (!grown) return fail(ld, IK_GLTF_E_MEMORY, "out of memory");
      memcpy(grown, g->pool, ld->pool_used);
      for (i = 0; i < n; i++) g->nodes[i].name = grown + (g->nodes[i].name - g->pool);
      free(g->pool);
      g->pool = grown;
      ld->pool_cap += extra;
    }
  }
  all = (int *)malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!all) return fail(ld, IK_GLTF_E_MEMORY, "out of memory");
  for (i = 0; i < n; i++) all[i] = i;
  order = depth_order(g, all, n);
  free(all);
  if (!order) return fail(ld, IK_GLTF_E_MEMORY, "out of memory");
  world_transforms(g, order);
  free(order);
  g->skins = (gskin *)calloc((size_t)(g->skin_count > 0 ? g->skin_count : 1), sizeof *g->skins);
  if (!g->skins) return fail(ld, IK_GLTF_E_MEMORY, "out of memory");
  {
    cJSON *meshes;
    int mesh_count;
    if (opt_array(ld, ld->root, "", "meshes", &meshes, &mesh_count) ||
        !(ld->mesh_items = index_array(ld, meshes, mesh_count)))
      return -1;
  }
  if (read_skins(ld, skins) || read_humanoid(ld) || read_vertex_bounds(ld, nodes)) return -1;
  return 0;
}

void ik_gltf_free(ik_gltf *g) {
  int i;
  if (!g) return;
  if (g->skins)
    for (i = 0; i < g->skin_count; i++) {
      free(g->skins[i].joints);
      free(g->skins[i].ibm);
    }
  free(g->skins);
  free(g->nodes);
  free(g->pool);
  free(g);
}

ik_gltf_status ik_gltf_load_memory(const void *data, size_t size, const char *base_dir,
                                   const ik_gltf_options *opt, ik_gltf **out, ik_gltf_error *err) {
  loader ld;
  ik_gltf_error local;
  const unsigned char *d = (const unsigned char *)data;
  const char *json = NULL;
  size_t json_len = 0;
  int rc, i;
  memset(&ld, 0, sizeof ld);
  ik_gltf_options_init(&ld.opt);
  if (opt) {
    if (opt->max_file_bytes) ld.opt.max_file_bytes = opt->max_file_bytes;
    if (opt->max_json_bytes) ld.opt.max_json_bytes = opt->max_json_bytes;
    if (opt->max_json_values) ld.opt.max_json_values = opt->max_json_values;
    if (opt->max_nodes > 0) ld.opt.max_nodes = opt->max_nodes;
  }
  ld.err = err ? err : &local;
  ld.err->status = IK_GLTF_OK;
  ld.err->message[0] = 0;
  ld.base_dir = base_dir;
  if (!out) return IK_GLTF_E_ARGUMENT;
  *out = NULL;
  if (!data && size) {
    fail(&ld, IK_GLTF_E_ARGUMENT, "no data");
    return IK_GLTF_E_ARGUMENT;
  }
  if (size > ld.opt.max_file_bytes) {
    fail(&ld, IK_GLTF_E_LIMIT, "file: %zu bytes, beyond the limit of %zu", size, ld.opt.max_file_bytes);
    return IK_GLTF_E_LIMIT;
  }
  if (size == 0) {
    fail(&ld, IK_GLTF_E_FORMAT, "file: empty");
    return IK_GLTF_E_FORMAT;
  }
  if (size >= 4 && memcmp(d, "glTF", 4) == 0) {
    rc = parse_glb(&ld, d, size, &json, &json_len);
  } else {
    json = (const char *)d, json_len = size;
    if (json_len >= 3 && memcmp(json, "\xEF\xBB\xBF", 3) == 0) json += 3, json_len -= 3; /* a UTF-8 BOM */
    rc = 0;
  }
  if (rc == 0) rc = load_json(&ld, json, json_len);
  cJSON_Delete(ld.root);
  for (i = 0; i < ld.buffer_count; i++) free(ld.buffers[i].owned);
  free(ld.buffers);
  free(ld.buffer_items);
  free(ld.view_items);
  free(ld.accessor_items);
  free(ld.mesh_items);
  if (rc) {
    ik_gltf_free(ld.g);
    return ld.err->status;
  }
  *out = ld.g;
  return IK_GLTF_OK;
}

/* Reads all of f (any file: pipes and devices too) into a new block, up to max bytes:
 * IK_GLTF_OK, IK_GLTF_E_LIMIT beyond max, IK_GLTF_E_IO (errno says why) or
 * IK_GLTF_E_MEMORY. */
static ik_gltf_status read_all(FILE *f, size_t max, unsigned char **out, size_t *size) {
  size_t cap = 16384, len = 0;
  unsigned char *p = (unsigned char *)malloc(cap), *grown;
  if (!p) return IK_GLTF_E_MEMORY;
  for (;;) {
    len += fread(p + len, 1, cap - len, f);
    if (ferror(f)) {
      free(p);
      return IK_GLTF_E_IO;
    }
    if (len > max) {
      free(p);
      return IK_GLTF_E_LIMIT;
    }
    if (len < cap) break; /* end of file */
    grown = (unsigned char *)realloc(p, cap * 2);
    if (!grown) {
      free(p);
      return IK_GLTF_E_MEMORY;
    }
    p = grown, cap *= 2;
  }
  *out = p;
  *size = len;
  return IK_GLTF_OK;
}

ik_gltf_status ik_gltf_load_file(const char *path, const ik_gltf_options *opt, ik_gltf **out,
                                 ik_gltf_error *err) {
  ik_gltf_options o;
  ik_gltf_error local;
  ik_gltf_status st;
  FILE *f;
  size_t size = 0;
  unsigned char *data = NULL;
  char *dir;
  const char *slash;
  if (!err) err = &local;
  err->status = IK_GLTF_OK;
  err->message[0] = 0;
  if (out) *out = NULL;
  if (!path || !out) {
    err->status = IK_GLTF_E_ARGUMENT;
    snprintf(err->message, sizeof err->message, "no path");
    return err->status;
  }
  ik_gltf_options_init(&o);
  if (opt && opt->max_file_bytes) o.max_file_bytes = opt->max_file_bytes;
  f = fopen(path, "rb");
  if (!f) {
    err->status = IK_GLTF_E_IO;
    snprintf(err->message, sizeof err->message, "cannot open '%.200s' (%s)", path, strerror(errno));
    return err->status;
  }
  errno = 0;
  st = read_all(f, o.max_file_bytes, &data, &size);
  fclose(f);
  if (st != IK_GLTF_OK) {
    err->status = st;
    if (st == IK_GLTF_E_LIMIT)
      snprintf(err->message, sizeof err->message, "file: more than the limit of %zu bytes", o.max_file_bytes);
    else if (st == IK_GLTF_E_IO)
      snprintf(err->message, sizeof err->message, "cannot read '%.200s' (%s)", path,
               errno ? strerror(errno) : "read error");
    else
      snprintf(err->message, sizeof err->message, "out of memory reading '%.200s'", path);
    return st;
  }
  slash = strrchr(path, '/');
  dir = (char *)malloc(slash ? (size_t)(slash - path) + 2 : 2);
  if (!dir) {
    free(data);
    err->status = IK_GLTF_E_MEMORY;
    snprintf(err->message, sizeof err->message, "out of memory");
    return err->status;
  }
  if (slash) {
    memcpy(dir, path, (size_t)(slash - path) + 1);
    dir[slash - path + 1] = 0;
  } else {
    strcpy(dir, ".");
  }
  st = ik_gltf_load_memory(data, size, dir, opt, out, err);
  free(dir);
  free(data);
  return st;
}

/* ---- queries ---- */

static int node_ok(const ik_gltf *g, int node) { return g && node >= 0 && node < g->node_count; }

int ik_gltf_node_count(const ik_gltf *g) { return g ? g->node_count : 0; }
const char *ik_gltf_node_name(const ik_gltf *g, int node) {
  return node_ok(g, node) ? g->nodes[node].name : NULL;
}
int ik_gltf_node_parent(const ik_gltf *g, int node) { return node_ok(g, node) ? g->nodes[node].parent : -1; }
int ik_gltf_node_flags(const ik_gltf *g, int node) { return node_ok(g, node) ? g->nodes[node].flags : 0; }

ik_gltf_status ik_gltf_node_local(const ik_gltf *g, int node, double translation[3], double rotation[4],
                                  double scale[3]) {
  if (!node_ok(g, node)) return IK_GLTF_E_ARGUMENT;
  if (translation) memcpy(translation, g->nodes[node].t, sizeof g->nodes[node].t);
  if (rotation) memcpy(rotation, g->nodes[node].r, sizeof g->nodes[node].r);
  if (scale) memcpy(scale, g->nodes[node].s, sizeof g->nodes[node].s);
  return IK_GLTF_OK;
}

ik_gltf_status ik_gltf_node_world(const ik_gltf *g, int node, double matrix[16]) {
  if (!node_ok(g, node) || !matrix) return IK_GLTF_E_ARGUMENT;
  memcpy(matrix, g->nodes[node].world, sizeof g->nodes[node].world);
  return IK_GLTF_OK;
}

int ik_gltf_skin_count(const ik_gltf *g) { return g ? g->skin_count : 0; }
static int skin_ok(const ik_gltf *g, int skin) { return g && skin >= 0 && skin < g->skin_count; }
const char *ik_gltf_skin_name(const ik_gltf *g, int skin) {
  return skin_ok(g, skin) ? g->skins[skin].name : NULL;
}
int ik_gltf_skin_joint_count(const ik_gltf *g, int skin) {
  return skin_ok(g, skin) ? g->skins[skin].joint_count : 0;
}
int ik_gltf_skin_joint(const ik_gltf *g, int skin, int joint) {
  return skin_ok(g, skin) && joint >= 0 && joint < g->skins[skin].joint_count ? g->skins[skin].joints[joint]
                                                                              : -1;
}

ik_gltf_status ik_gltf_skin_inverse_bind(const ik_gltf *g, int skin, int joint, double matrix[16]) {
  static const double ident[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  if (!skin_ok(g, skin) || joint < 0 || joint >= g->skins[skin].joint_count || !matrix)
    return IK_GLTF_E_ARGUMENT;
  memcpy(matrix, g->skins[skin].ibm ? g->skins[skin].ibm + 16 * joint : ident, sizeof ident);
  return IK_GLTF_OK;
}

int ik_gltf_node_vertex_bounds(const ik_gltf *g, int node, double min[3], double max[3]) {
  if (!node_ok(g, node) || g->nodes[node].vertices == 0) return 0;
  if (min) memcpy(min, g->nodes[node].bmin, sizeof g->nodes[node].bmin);
  if (max) memcpy(max, g->nodes[node].bmax, sizeof g->nodes[node].bmax);
  return g->nodes[node].vertices;
}

ik_gltf_vrm ik_gltf_vrm_version(const ik_gltf *g) { return g ? g->vrm : IK_GLTF_VRM_NONE; }

int ik_gltf_look_offset(const ik_gltf *g, double offset[3]) {
  if (!g || g->look_node < 0) return -1;
  if (offset) memcpy(offset, g->look_offset, sizeof g->look_offset);
  return g->look_node;
}

int ik_gltf_humanoid_node(const ik_gltf *g, int role) {
  return g && role >= 0 && role < IK_HUMANOID_BONE_COUNT ? g->humanoid[role] : -1;
}

/* The skeleton's node set, unsorted, as a membership mask (1 = in); its size. */
static int skeleton_set(const ik_gltf *g, int skin, unsigned char *in) {
  int n = 0, i, k;
  if (skin >= 0) {
    for (k = 0; k < g->skins[skin].joint_count; k++) in[g->skins[skin].joints[k]] = 1;
  } else {
    for (i = 0; i < g->skin_count; i++)
      for (k = 0; k < g->skins[i].joint_count; k++) in[g->skins[i].joints[k]] = 1;
    for (i = 0; i < IK_HUMANOID_BONE_COUNT; i++)
      if (g->humanoid[i] >= 0) in[g->humanoid[i]] = 1;
  }
  for (i = 0; i < g->node_count; i++) n += in[i];
  if (n == 0 && skin < 0) {
    memset(in, 1, (size_t)g->node_count);
    n = g->node_count;
  }
  return n;
}

int ik_gltf_skeleton_bone_count(const ik_gltf *g, int skin) {
  unsigned char *in;
  int n;
  if (!g || skin < IK_GLTF_ALL_JOINTS || skin >= g->skin_count || g->node_count == 0) return 0;
  in = (unsigned char *)calloc((size_t)g->node_count, 1);
  if (!in) return 0;
  n = skeleton_set(g, skin, in);
  free(in);
  return n;
}

ik_gltf_status ik_gltf_skeleton_descs(const ik_gltf *g, int skin, ik_bone_desc *descs, int *nodes, int count,
                                      ik_gltf_error *err) {
  unsigned char *in;
  int *set, *order, *bone_of, n, i, k;
  ik_gltf_status st = IK_GLTF_OK;
  ik_gltf_error local;
  if (!err) err = &local;
  err->status = IK_GLTF_OK;
  err->message[0] = 0;
  if (!g || !descs || skin < IK_GLTF_ALL_JOINTS || skin >= g->skin_count || g->node_count == 0) {
    err->status = IK_GLTF_E_ARGUMENT;
    snprintf(err->message, sizeof err->message, "no skin %d", skin);
    return err->status;
  }
  in = (unsigned char *)calloc((size_t)g->node_count, 1);
  set = (int *)malloc(sizeof(int) * (size_t)g->node_count);
  bone_of = (int *)malloc(sizeof(int) * (size_t)g->node_count);
  if (!in || !set || !bone_of) {
    free(in), free(set), free(bone_of);
    err->status = IK_GLTF_E_MEMORY;
    snprintf(err->message, sizeof err->message, "out of memory");
    return err->status;
  }
  n = skeleton_set(g, skin, in);
  if (n != count) {
    free(in), free(set), free(bone_of);
    err->status = IK_GLTF_E_ARGUMENT;
    snprintf(err->message, sizeof err->message, "count %d, the skeleton has %d bones", count, n);
    return err->status;
  }
  for (i = 0, k = 0; i < g->node_count; i++)
    if (in[i]) set[k++] = i;
  order = depth_order(g, set, n);
  if (!order) {
    free(in), free(set), free(bone_of);
    err->status = IK_GLTF_E_MEMORY;
    snprintf(err->message, sizeof err->message, "out of memory");
    return err->status;
  }
  for (k = 0; k < n; k++) bone_of[order[k]] = k;
  for (k = 0; k < n && st == IK_GLTF_OK; k++) {
    const gnode *nd = &g->nodes[order[k]];
    int p = nd->parent;
    double pos[3], rot[4];
    while (p >= 0 && !in[p]) p = g->nodes[p].parent;
    if (p < 0) {
      memcpy(pos, nd->world + 12, sizeof pos);
      memcpy(rot, nd->rot_ws, sizeof rot);
    } else {
      const gnode *pn = &g->nodes[p];
      double d[3] = {nd->world[12] - pn->world[12], nd->world[13] - pn->world[13],
                     nd->world[14] - pn->world[14]};
      double inv[4] = {-pn->rot_ws[0], -pn->rot_ws[1], -pn->rot_ws[2], pn->rot_ws[3]};
      quat_unrotate(pn->rot_ws, d, pos);
      quat_mul(inv, nd->rot_ws, rot);
    }
    for (i = 0; i < 3; i++)
      if (!(fabs(pos[i]) <= (double)IK_REAL_MAX_COORD)) {
        st = err->status = IK_GLTF_E_LIMIT;
        snprintf(err->message, sizeof err->message, "nodes[%d]: position beyond %g", order[k],
                 (double)IK_REAL_MAX_COORD);
      }
    ik_bone_desc_init(&descs[k]);
    descs[k].name = nd->name;
    descs[k].parent = p < 0 ? -1 : bone_of[p];
    descs[k].position = ik_vec3_make((ik_real)pos[0], (ik_real)pos[1], (ik_real)pos[2]);
    descs[k].rotation = ik_quat_make((ik_real)rot[0], (ik_real)rot[1], (ik_real)rot[2], (ik_real)rot[3]);
    if (nodes) nodes[k] = order[k];
  }
  free(order), free(in), free(set), free(bone_of);
  return st;
}
