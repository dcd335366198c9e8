/* The Lua fuzzers' shared host (fuzz_lua_host.h). */
#include "fuzz_lua_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ikrig_embed.h"
#include "lauxlib.h"

#ifndef FUZZ_SOURCE_DIR
#error "FUZZ_SOURCE_DIR must name tests/fuzz"
#endif

lua_State *fuzz_lua_state(void) {
  lua_State *L = ikrig_newstate(FUZZ_LUA_MEMORY);
  if (!L) {
    fprintf(stderr, "fuzz: cannot make a Lua state\n");
    abort();
  }
  if (ikrig_open(L) != 0) {
    fprintf(stderr, "fuzz: ikrig's Lua files not found\n");
    abort();
  }
  return L;
}

typedef struct driver {
  const char *name;
  char *text;
  size_t size;
} driver;

static const driver *load_driver(const char *name) {
  /* Each driver read once per process: the fuzzers run millions of inputs. */
  static driver cache[4];
  char path[1024];
  FILE *f;
  long len;
  int i;
  for (i = 0; i < 4 && cache[i].name; i++)
    if (strcmp(cache[i].name, name) == 0) return &cache[i];
  if (i == 4) abort();
  snprintf(path, sizeof path, "%s/%s", FUZZ_SOURCE_DIR, name);
  f = fopen(path, "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "fuzz: cannot read %s\n", path);
    abort();
  }
  cache[i].text = malloc((size_t)len + 1);
  if (!cache[i].text || fread(cache[i].text, 1, (size_t)len, f) != (size_t)len) abort();
  fclose(f);
  cache[i].size = (size_t)len;
  cache[i].name = name;
  return &cache[i];
}

void fuzz_lua_run(lua_State *L, const char *name, int nargs) {
  const driver *d = load_driver(name);
  int st;
  char chunk[256];
  snprintf(chunk, sizeof chunk, "@%s", name);
  if (luaL_loadbuffer(L, d->text, d->size, chunk) != LUA_OK) {
    fprintf(stderr, "fuzz: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_insert(L, -(nargs + 1));
  st = lua_pcall(L, nargs, 0, 0);
  if (st == LUA_ERRMEM) return;
  if (st != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "fuzz: the driver %s raised: %s\n", name, msg ? msg : luaL_typename(L, -1));
    abort();
  }
}

int fuzz_lua_fail(lua_State *L) {
  const char *msg = luaL_checkstring(L, 1);
  luaL_traceback(L, L, NULL, 1);
  fprintf(stderr, "fuzz: invariant broken: %s\n%s\n", msg, lua_tostring(L, -1));
  abort();
  return 0;
}
