/*
 * fuzz_lua.c: libFuzzer target for the Lua binding. The input is a sequence of calls on
 * `ik` objects, decoded and checked by fuzz_lua.lua (what is called, with what, and the
 * invariants are described there). A fresh state per input, so one input cannot leave
 * anything behind for the next.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_lua_host.h"
#include "ikrig_embed.h"
#include "lauxlib.h"

/* fuzz_pattern is this program with another driver. */
#ifndef FUZZ_DRIVER
#define FUZZ_DRIVER "fuzz_lua.lua"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lua_State *L = fuzz_lua_state();
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ik");
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    fprintf(stderr, "fuzz_lua: require('ik'): %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_pushlstring(L, (const char *)data, size);
  lua_pushcfunction(L, fuzz_lua_fail);
  fuzz_lua_run(L, FUZZ_DRIVER, 3);
  ikrig_closestate(L);
  return 0;
}
