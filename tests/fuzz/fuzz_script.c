/*
 * fuzz_script.c: libFuzzer target for the script loader. The input is a rig script's
 * text (random bytes, or mutations of the seed scripts), written to a scratch folder and
 * run by ik.runtime next to a script known to be good; fuzz_script.lua runs the frames
 * and checks the invariants (described there).
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, P_tmpdir */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_lua_host.h"
#include "ikrig_embed.h"
#include "lauxlib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FRAMES 4

static const char canary[] =
    "-- Counts its frames: the fuzzer checks it ran every one.\n"
    "function update() state.frames = (state.frames or 0) + 1 end\n";

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    fprintf(stderr, "fuzz_script: cannot write %s\n", path);
    abort();
  }
}

static char scratch_dir[512];

static void remove_scratch(void) {
  char path[600];
  snprintf(path, sizeof path, "%s/rig.lua", scratch_dir);
  remove(path);
  snprintf(path, sizeof path, "%s/canary.lua", scratch_dir);
  remove(path);
  remove(scratch_dir);
}

/* The scratch folder, made once per process under $TMPDIR, removed at exit. */
static const char *scratch(void) {
  const char *tmp = getenv("TMPDIR");
  char path[600];
  if (scratch_dir[0]) return scratch_dir;
  snprintf(scratch_dir, sizeof scratch_dir, "%s/ikrig-fuzz-script-XXXXXX", tmp && tmp[0] ? tmp : P_tmpdir);
  if (!mkdtemp(scratch_dir)) {
    fprintf(stderr, "fuzz_script: cannot make a scratch folder\n");
    abort();
  }
  atexit(remove_scratch);
  snprintf(path, sizeof path, "%s/canary.lua", scratch_dir);
  write_file(path, canary, sizeof canary - 1);
  return scratch_dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *dir = scratch();
  char path[600];
  lua_State *L;
  snprintf(path, sizeof path, "%s/rig.lua", dir);
  write_file(path, data, size);
  L = fuzz_lua_state();
  lua_pushstring(L, dir);
  lua_pushcfunction(L, fuzz_lua_fail);
  lua_pushinteger(L, FRAMES);
  fuzz_lua_run(L, "fuzz_script.lua", 3);
  ikrig_closestate(L);
  return 0;
}
