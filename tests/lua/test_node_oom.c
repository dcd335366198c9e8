/*
 * test_node_oom.c: ik.node's set_parent when memory runs out.
 *
 * A node's C parent pointer must never name an object its Lua uservalue does not keep
 * alive. set_parent stores the reference, which may need memory, and moves the pointer;
 * with the pointer moved first, an allocation failure while storing left the node
 * hanging from an object nothing referenced. This runs a:set_parent(b) with the
 * allocator failing after 0, 1, 2, ... allocations, until it succeeds, and after each
 * attempt checks that the C side (where the node is) and the Lua side (its `parent`
 * field) agree. Lua 5.4 only: the allocator is the state's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

int luaopen_ik_core(lua_State *L);

static int limited;
static long budget;

static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  /* For a new block osize is a type tag, not a size: any new block is a growth. */
  if (limited && (ptr == NULL || nsize > osize)) {
    if (budget == 0) return NULL;
    budget--;
  }
  return realloc(ptr, nsize);
}

/* Returns attempt, check: attempt hangs a from b; check(ok) says what is wrong, or nil. */
static const char *const scenario =
    "local ik = ...\n"
    "local a = ik.node{ position = { 1, 0, 0 } }\n"
    "local b = ik.node{ position = { 10, 0, 0 } }\n"
    "local function attempt() a:set_parent(b) end\n"
    "local function check(ok)\n"
    "  collectgarbage()\n"
    "  local p = a:get_position()\n"
    "  if a.parent == b then\n"
    "    if p.x ~= 11 then return 'a.parent is b, but a is at ' .. tostring(p) end\n"
    "  elseif a.parent == nil then\n"
    "    if p.x ~= 1 then return 'a.parent is nil, but a is at ' .. tostring(p) end\n"
    "    if ok then return 'set_parent returned, but a.parent is nil' end\n"
    "  else\n"
    "    return 'a.parent is ' .. tostring(a.parent)\n"
    "  end\n"
    "end\n"
    "return attempt, check\n";

int main(void) {
  long n;
  int failures = 0, refused = 0;
  for (n = 0;; n++) {
    lua_State *L = lua_newstate(alloc, NULL);
    int ok;
    if (!L) return 1;
    luaL_openlibs(L);
    luaL_requiref(L, "ik.core", luaopen_ik_core, 0);
    if (luaL_loadstring(L, scenario) != LUA_OK || (lua_insert(L, -2), lua_pcall(L, 1, 2, 0)) != LUA_OK) {
      fprintf(stderr, "setup failed: %s\n", lua_tostring(L, -1));
      return 1;
    }
    /* check, attempt on the stack */
    lua_pushvalue(L, -2);
    budget = n;
    limited = 1;
    ok = lua_pcall(L, 0, 0, 0) == LUA_OK;
    limited = 0;
    if (!ok) {
      refused++;
      lua_pop(L, 1); /* the error */
    }
    lua_pushboolean(L, ok);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_isnil(L, -1)) {
      fprintf(stderr, "after %ld allocations allowed (%s): %s\n", n, ok ? "succeeded" : "ran out of memory",
              lua_tostring(L, -1));
      failures++;
    }
    lua_close(L);
    if (ok) break;
    if (n > 10000) {
      fprintf(stderr, "set_parent never succeeded\n");
      return 1;
    }
  }
  printf("set_parent ran out of memory %d times before it succeeded; %d inconsistent\n", refused, failures);
  return failures != 0 || refused == 0;
}
