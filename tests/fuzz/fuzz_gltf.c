/*
 * fuzz_gltf.c: the glTF importer on arbitrary bytes (a .glb or the JSON of a .gltf).
 *
 * No input may crash, read out of bounds or leak. An input that loads must give a
 * consistent result: every node named, names unique, parents in range and acyclic,
 * humanoid nodes in range, inverse bind matrices finite, vertex boxes finite and not
 * inside out, and every skeleton the file
 * describes either built by ik_skeleton_init (finite world transforms) or refused by
 * ik_gltf_skeleton_descs with a message. External files are never opened (no base
 * directory). Seeds: tests/fuzz/corpus/fuzz_gltf (the test characters and malformed
 * files).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ik_gltf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "fuzz_gltf: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                              \
    }                                                                       \
  } while (0)

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void check_skeleton(const ik_gltf *g, int skin) {
  int n = ik_gltf_skeleton_bone_count(g, skin), i;
  ik_bone_desc *descs;
  int *nodes;
  ik_gltf_error err;
  void *mem;
  ik_skeleton *sk = NULL;
  ik_error ierr;
  if (n == 0) return;
  descs = (ik_bone_desc *)malloc(sizeof *descs * (size_t)n);
  nodes = (int *)malloc(sizeof(int) * (size_t)n);
  CHECK(descs && nodes);
  if (ik_gltf_skeleton_descs(g, skin, descs, nodes, n, &err) != IK_GLTF_OK) {
    CHECK(err.status == IK_GLTF_E_LIMIT && err.message[0]);
  } else {
    mem = malloc(ik_skeleton_size(n));
    CHECK(mem);
    CHECK(ik_skeleton_init(mem, ik_skeleton_size(n), descs, n, &sk, &ierr) == IK_OK);
    for (i = 0; i < n; i++) {
      ik_vec3 p;
      ik_quat q;
      CHECK(descs[i].parent < i);
      CHECK(nodes[i] >= 0 && nodes[i] < ik_gltf_node_count(g));
      CHECK(strcmp(descs[i].name, ik_gltf_node_name(g, nodes[i])) == 0);
      ik_skeleton_get_world(sk, i, &p, &q);
      CHECK(ik_vec3_is_finite(p) && ik_quat_is_finite(q));
    }
    free(mem);
  }
  free(descs);
  free(nodes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ik_gltf_options opt;
  ik_gltf *g = NULL;
  ik_gltf_error err;
  int n, i, s, j;
  const char **names;
  ik_gltf_options_init(&opt);
  opt.max_nodes = 4096; /* the fuzzer's time, not the importer's bound */
  opt.max_json_values = (size_t)1 << 18;
  if (ik_gltf_load_memory(data, size, NULL, &opt, &g, &err) != IK_GLTF_OK) {
    CHECK(g == NULL && err.status != IK_GLTF_OK && err.message[0]);
    return 0;
  }
  CHECK(g && err.status == IK_GLTF_OK);
  n = ik_gltf_node_count(g);
  CHECK(n >= 0 && n <= opt.max_nodes);
  names = (const char **)malloc(sizeof *names * (size_t)(n > 0 ? n : 1));
  CHECK(names);
  for (i = 0; i < n; i++) {
    int p = i, steps = 0;
    double m[16], lo[3], hi[3];
    names[i] = ik_gltf_node_name(g, i);
    CHECK(names[i] && names[i][0]);
    while ((p = ik_gltf_node_parent(g, p)) >= 0) CHECK(++steps < n);
    CHECK(ik_gltf_node_world(g, i, m) == IK_GLTF_OK);
    if (ik_gltf_node_vertex_bounds(g, i, lo, hi) > 0)
      for (j = 0; j < 3; j++) CHECK(isfinite(lo[j]) && isfinite(hi[j]) && lo[j] <= hi[j]);
  }
  qsort(names, (size_t)n, sizeof *names, by_name);
  for (i = 1; i < n; i++) CHECK(strcmp(names[i - 1], names[i]) != 0);
  free(names);
  for (i = 0; i < IK_HUMANOID_BONE_COUNT; i++)
    CHECK(ik_gltf_humanoid_node(g, i) >= -1 && ik_gltf_humanoid_node(g, i) < n);
  for (s = 0; s < ik_gltf_skin_count(g); s++) {
    for (j = 0; j < ik_gltf_skin_joint_count(g, s); j++) {
      double m[16];
      int k;
      CHECK(ik_gltf_skin_joint(g, s, j) >= 0 && ik_gltf_skin_joint(g, s, j) < n);
      CHECK(ik_gltf_skin_inverse_bind(g, s, j, m) == IK_GLTF_OK);
      for (k = 0; k < 16; k++) CHECK(isfinite(m[k]));
    }
    check_skeleton(g, s);
  }
  check_skeleton(g, IK_GLTF_ALL_JOINTS);
  ik_gltf_free(g);
  return 0;
}
