/*
 * ikrig_alloc.c: a Lua state whose allocator keeps to a memory cap.
 *
 * The cap is on the whole state: when an allocation would take the bytes in use past
 * it, the allocator refuses (returns NULL), Lua runs an emergency collection and tries
 * again, and if that is not enough raises "not enough memory" in whatever code asked:
 * a rig script's memory bomb fails inside the script's protected call, the runtime
 * pauses it, and its garbage goes at the next collection. Shrinking and freeing never
 * fail, as Lua requires.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ikrig_embed.h"
#include "lauxlib.h"
#include "lualib.h"

typedef struct ikrig_alloc_state {
  size_t used;
  size_t peak;
  size_t limit; /* 0: none */
} ikrig_alloc_state;

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  ikrig_alloc_state *a = (ikrig_alloc_state *)ud;
  size_t old = ptr ? osize : 0; /* with no block, osize is a type tag */
  void *p;
  if (nsize == 0) {
    if (ptr) {
      a->used -= old;
      free(ptr);
    }
    return NULL;
  }
  if (a->limit && nsize > old && (a->used >= a->limit || nsize - old > a->limit - a->used)) return NULL;
  p = realloc(ptr, nsize);
  if (!p) return NULL;
  a->used = a->used - old + nsize;
  if (a->used > a->peak) a->peak = a->used;
  return p;
}

/* Outside any protected call: nothing to unwind to, so say what happened and stop. */
static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "ikrig: unprotected Lua error: %s\n", msg ? msg : "(not a string)");
  fflush(stderr);
  abort();
}

lua_State *ikrig_newstate(size_t limit) {
  ikrig_alloc_state *a = (ikrig_alloc_state *)calloc(1, sizeof *a);
  lua_State *L;
  if (!a) return NULL;
  a->limit = limit;
  L = lua_newstate(capped_alloc, a);
  if (!L) {
    free(a);
    return NULL;
  }
  lua_atpanic(L, panic);
  luaL_openlibs(L);
  return L;
}

void ikrig_closestate(lua_State *L) {
  void *ud = NULL;
  lua_Alloc f;
  if (!L) return;
  f = lua_getallocf(L, &ud);
  lua_close(L);
  if (f == capped_alloc) free(ud);
}

int ikrig_memory(lua_State *L, size_t *used, size_t *peak, size_t *limit) {
  void *ud = NULL;
  const ikrig_alloc_state *a;
  if (lua_getallocf(L, &ud) != capped_alloc) return -1;
  a = (const ikrig_alloc_state *)ud;
  if (used) *used = a->used;
  if (peak) *peak = a->peak;
  if (limit) *limit = a->limit;
  return 0;
}
