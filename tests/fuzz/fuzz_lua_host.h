/*
 * fuzz_lua_host.h: what the Lua fuzzers share: a fresh Lua 5.4 state per input, capped
 * by ikrig's allocator, with ik.core linked in (ikrig_open), and a driver script that
 * does the work in Lua, read once from the source tree.
 */
#ifndef FUZZ_LUA_HOST_H
#define FUZZ_LUA_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "lua.h"

/* Memory one input's Lua state may use: far above what a driver needs, so "not enough
 * memory" is a script's own doing. */
#define FUZZ_LUA_MEMORY ((size_t)256 << 20)

/* A fresh state with the standard libraries and ikrig's module and Lua paths open, or
 * aborts. */
lua_State *fuzz_lua_state(void);

/* Loads the driver `name` (a file of tests/fuzz, cached after the first call) and calls
 * it with the values pushed (nargs). Aborts with the message when the driver itself
 * raises: it must not (every call it makes is protected), so that is a bug in the
 * driver or an error that escaped a pcall. "not enough memory" is let through. */
void fuzz_lua_run(lua_State *L, const char *name, int nargs);

/* A Lua function fail(message): prints "<who>: invariant broken: message" and aborts. */
int fuzz_lua_fail(lua_State *L);

#endif /* FUZZ_LUA_HOST_H */
