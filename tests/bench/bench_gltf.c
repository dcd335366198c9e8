/*
 * bench_gltf: the price of importing a character's skeleton.
 *
 * Workload: tests/data/bench_160.glb (scripts/gen_characters.py): a 160-bone humanoid
 * in the Blender convention (bones along +Y, arbitrary roll) with a skinned mesh of one
 * triangle per bone, 54 KB. Figures, each the median over repetitions, in microseconds:
 * ik_gltf_load_memory on the bytes already read (GLB header, JSON parse, nodes, world
 * matrices, inverse bind matrices), ik_gltf_load_file (the same and the read), and
 * ik_gltf_skeleton_descs + ik_skeleton_init (the skeleton from the loaded file).
 * `--quick` runs a few repetitions (the test suite's smoke run); `--reps N`, `--file F`
 * override.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ik_gltf.h"

#define MAX_REPS 1001

static double t_load_memory[MAX_REPS], t_load_file[MAX_REPS], t_skeleton[MAX_REPS];

int main(int argc, char **argv) {
  const char *file = IK_BENCH_DATA_DIR "/bench_160.glb";
  int reps = 301, r, i, n = 0;
  FILE *f;
  long size;
  unsigned char *data;
  ik_gltf *g;
  ik_gltf_error err;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      reps = 3;
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
      file = argv[++i];
    else {
      fprintf(stderr, "usage: bench_gltf [--quick] [--reps N] [--file F]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS) reps = reps < 1 ? 1 : MAX_REPS;
  f = fopen(file, "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "bench_gltf: cannot read %s\n", file);
    return 1;
  }
  data = (unsigned char *)malloc((size_t)size);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  for (r = 0; r < reps; r++) {
    double t0 = bench_now_s(), t1, t2, t3;
    ik_bone_desc *descs;
    void *mem;
    ik_skeleton *sk;
    ik_error ierr;
    if (ik_gltf_load_memory(data, (size_t)size, NULL, NULL, &g, &err) != IK_GLTF_OK) {
      fprintf(stderr, "bench_gltf: %s\n", err.message);
      return 1;
    }
    t1 = bench_now_s();
    n = ik_gltf_skeleton_bone_count(g, IK_GLTF_ALL_JOINTS);
    descs = (ik_bone_desc *)malloc(sizeof *descs * (size_t)n);
    mem = malloc(ik_skeleton_size(n));
    if (!descs || !mem || ik_gltf_skeleton_descs(g, IK_GLTF_ALL_JOINTS, descs, NULL, n, &err) != IK_GLTF_OK ||
        ik_skeleton_init(mem, ik_skeleton_size(n), descs, n, &sk, &ierr) != IK_OK) {
      fprintf(stderr, "bench_gltf: no skeleton\n");
      return 1;
    }
    t2 = bench_now_s();
    free(descs);
    free(mem);
    ik_gltf_free(g);
    t3 = bench_now_s();
    if (ik_gltf_load_file(file, NULL, &g, &err) != IK_GLTF_OK) {
      fprintf(stderr, "bench_gltf: %s\n", err.message);
      return 1;
    }
    t_load_file[r] = (bench_now_s() - t3) * 1e6;
    ik_gltf_free(g);
    t_load_memory[r] = (t1 - t0) * 1e6;
    t_skeleton[r] = (t2 - t1) * 1e6;
  }
  printf("bench_gltf: %s, %ld bytes, %d bones, median of %d\n", file, size, n, reps);
  printf("  %-34s %10.1f us\n", "ik_gltf_load_memory", bench_median(t_load_memory, reps));
  printf("  %-34s %10.1f us\n", "ik_gltf_load_file", bench_median(t_load_file, reps));
  printf("  %-34s %10.1f us\n", "skeleton_descs + ik_skeleton_init", bench_median(t_skeleton, reps));
  free(data);
  return 0;
}
