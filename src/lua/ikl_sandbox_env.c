/*
 * ikl_sandbox_env.c: the globals a rig script gets in its own state.
 *
 * Lua's safe libraries, with C versions of what could escape the budget or the script's
 * folder: pcall, xpcall and coroutine.resume pass a spent budget on (a message handler
 * is not called then: it would run with hooks off); the pattern functions count their
 * steps; string.rep, table.move and table.sort charge their work before doing it;
 * load, loadfile, dofile and require take text only, and files of the script's folder
 * or of the ik modules. They live in the child as C functions, so a script can drop
 * them from its globals but not change what they do.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ikl_sandbox.h"
#include "lualib.h"

#define MAX_FILE ((long)16 << 20)
#define MAX_PATH_LEN 1024
#define MAX_DEPS 256
#define MAX_PRINT 65536

static const char TEMPLATE_KEY = 0, DIR_KEY = 0, IKPATH_KEY = 0, CORE_KEY = 0, DEPS_LIST_KEY = 0;

int luaopen_ik_core(lua_State *L);

static ikl_sandbox *sandbox(lua_State *C) {
  ikl_sandbox *sb = ikl_sandbox_of(C);
  if (!sb) luaL_error(C, "not a sandbox");
  return sb;
}

/* ---- protected calls ---- */

/* Results of a protected call made by pcall or xpcall (from the 1st slot after the
 * `extra` slots the call kept below its function): true and its results, or false and
 * the error; a spent budget raised again instead. */
static int finish_pcall(lua_State *C, int st, int extra) {
  ikl_sandbox_reraise(C, sandbox(C));
  lua_pushboolean(C, st == 0 || st == LUA_YIELD);
  lua_replace(C, extra);
  return lua_gettop(C) - extra + 1;
}

#if LUA_VERSION_NUM >= 502
/* After a yield inside the protected call (5.4 lets a coroutine yield across pcall). */
static int pcall_done(lua_State *C, int st, lua_KContext extra) { return finish_pcall(C, st, (int)extra); }
#define PCALL(C, n, extra, msgh) \
  finish_pcall(C, lua_pcallk(C, n, LUA_MULTRET, msgh, (lua_KContext)(extra), pcall_done), extra)
#else
#define PCALL(C, n, extra, msgh) finish_pcall(C, lua_pcall(C, n, LUA_MULTRET, msgh), extra)
#endif

/* pcall(f, ...): a slot for the boolean below f. */
static int sb_pcall(lua_State *C) {
  luaL_checkany(C, 1);
  lua_pushnil(C);
  lua_insert(C, 1);
  return PCALL(C, lua_gettop(C) - 2, 1, 0);
}

/* The script's message handler, unless the budget is spent (hooks are off while a
 * handler runs for an error raised from the hook). */
static int handler(lua_State *C) {
  if (sandbox(C)->exceeded) return 1;
  lua_pushvalue(C, lua_upvalueindex(1));
  lua_insert(C, 1);
  lua_call(C, lua_gettop(C) - 1, 1);
  return 1;
}

/* xpcall(f, h, ...): the guarded handler at 1, the boolean's slot at 2, then f. */
static int sb_xpcall(lua_State *C) {
  int n = lua_gettop(C);
  luaL_checktype(C, 2, LUA_TFUNCTION);
  lua_pushvalue(C, 2);
  lua_pushcclosure(C, handler, 1); /* f, h, args, handler */
  lua_replace(C, 2);               /* f, handler, args */
  lua_pushvalue(C, 1);
  lua_insert(C, 3); /* f, handler, f, args */
  lua_pushvalue(C, 2);
  lua_replace(C, 1); /* handler, handler, f, args: the 2nd becomes the boolean */
  return PCALL(C, n - 2, 2, 1);
}

/* coroutine.resume (and close): the library's own (upvalue 1), then what it caught of a
 * spent budget raised again. */
static int sb_resume(lua_State *C) {
  lua_pushvalue(C, lua_upvalueindex(1));
  lua_insert(C, 1);
  lua_call(C, lua_gettop(C) - 1, LUA_MULTRET);
  ikl_sandbox_reraise(C, sandbox(C));
  return lua_gettop(C);
}

/* coroutine.yield, with the script's line when there is no coroutine to yield from. */
static int sb_yield(lua_State *C) {
  int main_thread = lua_pushthread(C);
  lua_pop(C, 1);
  if (main_thread) return luaL_error(C, "attempt to yield from outside a coroutine");
  return lua_yield(C, lua_gettop(C));
}

/* ---- C work charged before it is done ---- */

static lua_Number check_count(lua_State *C, int arg) {
  lua_Number n = luaL_checknumber(C, arg);
  luaL_argcheck(C, n == n, arg, "number has no integer representation");
  return n;
}

static int sb_rep(lua_State *C) {
  size_t l, lsep = 0;
  lua_Number n, total;
  ikl_sandbox *sb = sandbox(C);
  luaL_checklstring(C, 1, &l);
  n = check_count(C, 2);
  if (!lua_isnoneornil(C, 3)) luaL_checklstring(C, 3, &lsep);
  if (n <= 0 || (l == 0 && lsep == 0)) {
    lua_pushliteral(C, "");
    return 1;
  }
  total = (lua_Number)l * n + (lua_Number)lsep * (n - 1);
  if (total > (lua_Number)sb->heap.limit)
    return luaL_error(C, "memory limit exceeded (%d bytes)", (int)sb->heap.limit);
  ikl_sandbox_charge(C, sb, n + total / 64);
  lua_pushvalue(C, lua_upvalueindex(1));
  lua_insert(C, 1);
  lua_call(C, lua_gettop(C) - 1, 1);
  return 1;
}

static int sb_move(lua_State *C) {
  lua_Number f = check_count(C, 2), e = check_count(C, 3);
  if (e >= f) ikl_sandbox_charge(C, sandbox(C), e - f + 1);
  lua_pushvalue(C, lua_upvalueindex(1));
  lua_insert(C, 1);
  lua_call(C, lua_gettop(C) - 1, 1);
  return 1;
}

static int sb_sort(lua_State *C) {
  double n, log2n = 1;
  luaL_checktype(C, 1, LUA_TTABLE);
  n = (double)lua_rawlen(C, 1);
  while (n > 1 && (double)((long long)1 << (int)log2n) < n && log2n < 62) log2n++;
  ikl_sandbox_charge(C, sandbox(C), n * log2n);
  lua_pushvalue(C, lua_upvalueindex(1));
  lua_insert(C, 1);
  lua_call(C, lua_gettop(C) - 1, 0);
  return 0;
}

/* ---- metatables ---- */

static int refuse_meta_write(lua_State *C) {
  return luaL_error(C, "attempt to change a protected metatable");
}

/* getmetatable: tables as usual; a string's or userdata's gives a copy without __gc, to
 * which no field can be added (the real one would let a script put a finaliser on the
 * module's types, which lua_close would run outside any budget). */
static int sb_getmetatable(lua_State *C) {
  luaL_checkany(C, 1);
  if (!lua_getmetatable(C, 1)) {
    lua_pushnil(C);
    return 1;
  }
  lua_getfield(C, -1, "__metatable");
  if (!lua_isnil(C, -1)) return 1;
  lua_pop(C, 1);
  if (lua_type(C, 1) == LUA_TTABLE) return 1;
  lua_newtable(C);
  lua_pushnil(C);
  while (lua_next(C, -3)) {
    const char *k = lua_type(C, -2) == LUA_TSTRING ? lua_tostring(C, -2) : "";
    if (strcmp(k, "__gc") == 0) {
      lua_pop(C, 1);
      continue;
    }
    lua_pushvalue(C, -2);
    lua_insert(C, -2);
    lua_rawset(C, -4);
  }
  lua_createtable(C, 0, 2);
  lua_pushcfunction(C, refuse_meta_write);
  lua_setfield(C, -2, "__newindex");
  lua_pushboolean(C, 0);
  lua_setfield(C, -2, "__metatable");
  lua_setmetatable(C, -2);
  return 1;
}

static int sb_setmetatable(lua_State *C) {
  luaL_checktype(C, 1, LUA_TTABLE);
  if (!lua_isnil(C, 2)) luaL_checktype(C, 2, LUA_TTABLE);
  if (lua_istable(C, 2)) {
    lua_getfield(C, 2, "__gc");
    if (!lua_isnil(C, -1)) return luaL_error(C, "setmetatable: __gc is not available to rig scripts");
    lua_pop(C, 1);
  }
  if (luaL_getmetafield(C, 1, "__metatable")) return luaL_error(C, "cannot change a protected metatable");
  lua_settop(C, 2);
  lua_setmetatable(C, 1);
  return 1;
}

static int sb_collectgarbage(lua_State *C) {
  const char *opt = luaL_optstring(C, 1, "collect");
  if (strcmp(opt, "count") != 0)
    return luaL_error(C, "collectgarbage: only collectgarbage(\"count\") is available to rig scripts");
  lua_pushnumber(C, (lua_Number)lua_gc(C, LUA_GCCOUNT, 0) + (lua_Number)lua_gc(C, LUA_GCCOUNTB, 0) / 1024);
  return 1;
}

/* ---- output ---- */

static int sb_print(lua_State *C) {
  int i, n = lua_gettop(C);
  luaL_Buffer b;
  luaL_buffinit(C, &b);
  for (i = 1; i <= n; i++) {
    size_t len;
    const char *s;
    lua_getglobal(C, "tostring"); /* the script's own: it runs in its budget */
    if (lua_type(C, -1) != LUA_TFUNCTION) {
      lua_pop(C, 1);
      s = luaL_typename(C, i);
      len = strlen(s);
      lua_pushlstring(C, s, len);
    } else {
      lua_pushvalue(C, i);
      lua_call(C, 1, 1);
    }
    s = lua_tolstring(C, -1, &len);
    if (!s) return luaL_error(C, "'tostring' must return a string to 'print'");
    lua_pop(C, 1);
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_addlstring(&b, s, len);
  }
  luaL_addchar(&b, '\n');
  luaL_pushresult(&b);
  {
    size_t len;
    const char *s = lua_tolstring(C, -1, &len);
    if (len > MAX_PRINT) len = MAX_PRINT;
    ikl_sandbox_charge(C, sandbox(C), (double)len / 16);
    fwrite(s, 1, len, stdout);
    fflush(stdout);
  }
  return 0;
}

/* ---- code ---- */

/* Compiles text (never bytecode) as chunkname, with the table at env as its globals;
 * pushes the function, or nil and the message. Returns whether it compiled. */
static int compile(lua_State *C, const char *text, size_t len, const char *chunkname, int env) {
  env = lua_absindex(C, env);
  if (len > 0 && text[0] == LUA_SIGNATURE[0]) {
    lua_pushnil(C);
    lua_pushliteral(C, "attempt to load a binary chunk (mode is 't')");
    return 0;
  }
  ikl_sandbox_charge(C, sandbox(C), (double)len / 16);
#if LUA_VERSION_NUM >= 502 || defined(LUA_JITLIBNAME)
  if (luaL_loadbufferx(C, text, len, chunkname, "t") != 0) {
#else
  if (luaL_loadbuffer(C, text, len, chunkname) != 0) {
#endif
    lua_pushnil(C);
    lua_insert(C, -2);
    return 0;
  }
  lua_pushvalue(C, env);
#if LUA_VERSION_NUM == 501
  lua_setfenv(C, -2);
#else
  if (!lua_setupvalue(C, -2, 1)) lua_pop(C, 1);
#endif
  return 1;
}

/* load(chunk [, chunkname [, mode [, env]]]): upvalue 1 is the version's globals. */
static int sb_load(lua_State *C) {
  size_t len;
  const char *text, *chunkname;
  int env = lua_isnoneornil(C, 4) ? lua_upvalueindex(1) : 4;
  if (lua_type(C, 1) == LUA_TFUNCTION) {
    luaL_Buffer b;
    chunkname = luaL_optstring(C, 2, "=(load)");
    lua_settop(C, 4);
    luaL_buffinit(C, &b);
    for (;;) {
      lua_pushvalue(C, 1);
      lua_call(C, 0, 1);
      if (lua_isnil(C, -1) || (lua_type(C, -1) == LUA_TSTRING && lua_rawlen(C, -1) == 0)) {
        lua_pop(C, 1);
        break;
      }
      if (lua_type(C, -1) != LUA_TSTRING) {
        lua_pushnil(C);
        lua_pushliteral(C, "reader function must return a string");
        return 2;
      }
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    text = lua_tolstring(C, -1, &len);
  } else {
    text = luaL_checklstring(C, 1, &len);
    chunkname = luaL_optstring(C, 2, text);
  }
  return compile(C, text, len, chunkname, env) ? 1 : 2;
}

/* Whether name is a path inside the script's folder: relative, no "..", no NUL. */
static int inside_folder(const char *name, size_t len) {
  const char *p = name;
  if (len == 0 || len > MAX_PATH_LEN || strlen(name) != len || name[0] == '/' || strchr(name, '\\') ||
      (len >= 2 && name[1] == ':'))
    return 0;
  while (*p) {
    const char *end = strchr(p, '/');
    size_t seg = end ? (size_t)(end - p) : strlen(p);
    if (seg == 2 && p[0] == '.' && p[1] == '.') return 0;
    if (!end) break;
    p = end + 1;
  }
  return 1;
}

static void add_dep(lua_State *C, const char *path) {
  ikl_sandbox *sb = sandbox(C);
  if (sb->n_deps >= MAX_DEPS) return;
  ikl_getreg(C, &DEPS_LIST_KEY);
  lua_pushstring(C, path);
  lua_rawseti(C, -2, ++sb->n_deps);
  lua_pop(C, 1);
}

void ikl_sandbox_take_deps(lua_State *C) {
  ikl_getreg(C, &DEPS_LIST_KEY);
  lua_newtable(C);
  ikl_setreg(C, &DEPS_LIST_KEY);
  sandbox(C)->n_deps = 0;
}

/* Pushes the text of the file at path, or returns 0 with the message pushed. */
static int read_file(lua_State *C, const char *path) {
  FILE *f = fopen(path, "rb");
  luaL_Buffer b;
  size_t n;
  long total = 0;
  if (!f) {
    lua_pushfstring(C, "cannot open %s", path);
    return 0;
  }
  luaL_buffinit(C, &b);
  do {
    char *p = luaL_prepbuffer(&b);
    n = fread(p, 1, LUAL_BUFFERSIZE, f);
    luaL_addsize(&b, n);
    total += (long)n;
  } while (n == LUAL_BUFFERSIZE && total <= MAX_FILE);
  fclose(f);
  if (total > MAX_FILE) {
    luaL_pushresult(&b);
    lua_pop(C, 1);
    lua_pushfstring(C, "%s: file too large for a rig script", path);
    return 0;
  }
  luaL_pushresult(&b);
  return 1;
}

/* Compiles the file at path (a "#!" first line skipped) with the globals at env. */
static int compile_file(lua_State *C, const char *path, int env) {
  size_t len;
  const char *text;
  env = lua_absindex(C, env);
  add_dep(C, path);
  if (!read_file(C, path)) {
    lua_pushnil(C);
    lua_insert(C, -2);
    return 0;
  }
  text = lua_tolstring(C, -1, &len);
  if (len > 0 && text[0] == '#')
    while (len > 0 && *text != '\n') text++, len--;
  lua_pushfstring(C, "@%s", path);
  return compile(C, text, len, lua_tostring(C, -1), env);
}

/* dir/name into the buffer b's result (pushed). */
static void push_in_folder(lua_State *C, const char *name) {
  ikl_getreg(C, &DIR_KEY);
  if (strcmp(lua_tostring(C, -1), ".") == 0) {
    lua_pop(C, 1);
    lua_pushstring(C, name);
  } else {
    lua_pushliteral(C, "/");
    lua_pushstring(C, name);
    lua_concat(C, 3);
  }
}

static const char FOLDER_ONLY[] = "rig scripts can only load files of their own folder";

/* loadfile(name [, mode [, env]]): upvalue 1 is the version's globals. */
static int sb_loadfile(lua_State *C) {
  size_t len;
  const char *name = luaL_checklstring(C, 1, &len);
  int env = lua_isnoneornil(C, 3) ? lua_upvalueindex(1) : 3;
  if (!inside_folder(name, len)) {
    lua_pushnil(C);
    lua_pushfstring(C, "%s: %s", name, FOLDER_ONLY);
    return 2;
  }
  push_in_folder(C, name);
  if (!compile_file(C, lua_tostring(C, -1), env)) return 2;
  return 1;
}

static int sb_dofile(lua_State *C) {
  size_t len;
  int n;
  const char *name = luaL_checklstring(C, 1, &len);
  lua_settop(C, 1);
  if (!inside_folder(name, len)) return luaL_error(C, "%s: %s", name, FOLDER_ONLY);
  push_in_folder(C, name);
  if (!compile_file(C, lua_tostring(C, -1), lua_upvalueindex(1))) return lua_error(C);
  n = lua_gettop(C) - 1; /* below the chunk */
  lua_call(C, 0, LUA_MULTRET);
  return lua_gettop(C) - n;
}

/* ---- require ---- */

/* Whether name is a module name: words of [A-Za-z0-9_] joined by single dots. */
static int module_name(const char *name, size_t len) {
  size_t i;
  if (len == 0 || len > 200 || strlen(name) != len || name[0] == '.' || name[len - 1] == '.') return 0;
  for (i = 0; i < len; i++) {
    char c = name[i];
    if (c == '.') {
      if (name[i + 1] == '.') return 0;
    } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return 0;
    }
  }
  return 1;
}

static int is_ik(const char *name) { return strcmp(name, "ik") == 0 || strncmp(name, "ik.", 3) == 0; }

static int blocked_ik(const char *name) {
  return strcmp(name, "ik.runtime") == 0 || strncmp(name, "ik.runtime.", 11) == 0;
}

/* The standard and interpreter modules a script has no part of, so that none is looked
 * for as a file of its folder either. */
static int blocked_library(const char *name) {
  static const char *const names[] = {"io", "os", "debug", "package", "ffi", "jit", "_G", NULL};
  size_t i, len = strcspn(name, ".");
  for (i = 0; names[i]; i++)
    if (strlen(names[i]) == len && strncmp(name, names[i], len) == 0) return 1;
  return 0;
}

/* Pushes the first existing file for an ik module along the ik path, or nil. */
static void search_ik(lua_State *C, const char *name) {
  const char *tpl;
  luaL_Buffer b;
  ikl_getreg(C, &IKPATH_KEY);
  tpl = lua_tostring(C, -1);
  while (*tpl) {
    const char *end = strchr(tpl, ';');
    size_t n = end ? (size_t)(end - tpl) : strlen(tpl), i;
    FILE *f;
    luaL_buffinit(C, &b);
    for (i = 0; i < n; i++) {
      if (tpl[i] == '?') {
        const char *c;
        for (c = name; *c; c++) luaL_addchar(&b, *c == '.' ? '/' : *c);
      } else {
        luaL_addchar(&b, tpl[i]);
      }
    }
    luaL_pushresult(&b);
    if (n > 0 && (f = fopen(lua_tostring(C, -1), "rb")) != NULL) {
      fclose(f);
      lua_remove(C, -2);
      return;
    }
    lua_pop(C, 1);
    tpl += n;
    if (*tpl == ';') tpl++;
  }
  lua_pop(C, 1);
  lua_pushnil(C);
}

static const char *const LIBRARIES[] = {"string", "table", "math", "coroutine", "utf8", "bit", NULL};

/* require(name): upvalue 1 the version's globals, 2 its loaded modules. */
static int sb_require(lua_State *C) {
  size_t len;
  const char *name = luaL_checklstring(C, 1, &len);
  int i;
  lua_settop(C, 1);
  lua_pushvalue(C, 1);
  lua_rawget(C, lua_upvalueindex(2)); /* 2 */
  if (lua_type(C, 2) == LUA_TLIGHTUSERDATA)
    return luaL_error(C, "loop or previous error loading module '%s'", name);
  if (!lua_isnil(C, 2)) return 1;
  if (strcmp(name, "ik.core") == 0) {
    ikl_getreg(C, &CORE_KEY);
    return 1;
  }
  for (i = 0; LIBRARIES[i]; i++)
    if (strcmp(name, LIBRARIES[i]) == 0) {
      lua_getfield(C, lua_upvalueindex(1), name);
      if (!lua_isnil(C, -1)) return 1;
    }
  if (!module_name(name, len) || (is_ik(name) && blocked_ik(name)) || blocked_library(name))
    return luaL_error(C,
                      "module '%s' is not available to rig scripts (they can require the ik modules and "
                      "files of their own folder)",
                      name);
  if (is_ik(name)) {
    search_ik(C, name); /* 3 */
    if (lua_isnil(C, 3)) return luaL_error(C, "module '%s' not found", name);
  } else {
    luaL_Buffer b;
    const char *c;
    luaL_buffinit(C, &b);
    for (c = name; *c; c++) luaL_addchar(&b, *c == '.' ? '/' : *c);
    luaL_addstring(&b, ".lua");
    luaL_pushresult(&b);
    push_in_folder(C, lua_tostring(C, -1));
    lua_remove(C, -2); /* 3 */
    {
      FILE *f = fopen(lua_tostring(C, 3), "rb");
      if (!f) return luaL_error(C, "module '%s' not found (no file %s)", name, lua_tostring(C, 3));
      fclose(f);
    }
  }
  if (!compile_file(C, lua_tostring(C, 3), lua_upvalueindex(1)))
    return luaL_error(C, "error loading module '%s' from file '%s':\n\t%s", name, lua_tostring(C, 3),
                      lua_tostring(C, -1));
  lua_pushvalue(C, 1);
  lua_pushlightuserdata(C, (void *)&TEMPLATE_KEY); /* loading */
  lua_rawset(C, lua_upvalueindex(2));
  lua_pushvalue(C, 1);
  lua_pushvalue(C, 3);
  lua_call(C, 2, 1);
  if (lua_isnil(C, -1)) {
    lua_pop(C, 1);
    lua_pushvalue(C, 1);
    lua_rawget(C, lua_upvalueindex(2));
    if (lua_type(C, -1) == LUA_TLIGHTUSERDATA) {
      lua_pop(C, 1);
      lua_pushboolean(C, 1);
    }
  }
  lua_pushvalue(C, 1);
  lua_pushvalue(C, -2);
  lua_rawset(C, lua_upvalueindex(2));
  return 1;
}

static int os_clock(lua_State *C) {
  lua_pushnumber(C, (lua_Number)clock() / (lua_Number)CLOCKS_PER_SEC);
  return 1;
}

/* ---- the template ---- */

static void open_lib(lua_State *C, const char *name, lua_CFunction open) {
#if LUA_VERSION_NUM == 501
  lua_pushcfunction(C, open);
  lua_pushstring(C, name);
  lua_call(C, 1, 1);
#else
  luaL_requiref(C, name, open, 0);
#endif
}

/* Replaces t[name] (t at -1) by the C closure fn with the old value as its upvalue. */
static void wrap(lua_State *C, const char *name, lua_CFunction fn) {
  lua_getfield(C, -1, name);
  lua_pushcclosure(C, fn, 1);
  lua_setfield(C, -2, name);
}

/* Copies the library on top into a new table without `except`; replaces it. */
static void copy_lib(lua_State *C, const char *except) {
  lua_newtable(C);
  lua_pushnil(C);
  while (lua_next(C, -3)) {
    if (except && lua_type(C, -2) == LUA_TSTRING && strcmp(lua_tostring(C, -2), except) == 0) {
      lua_pop(C, 1);
      continue;
    }
    lua_pushvalue(C, -2);
    lua_insert(C, -2);
    lua_rawset(C, -4);
  }
  lua_remove(C, -2);
}

static const char *const SAFE_GLOBALS[] = {"assert", "error",  "ipairs",   "next",   "pairs",    "rawequal",
                                           "rawget", "rawlen", "rawset",   "select", "tonumber", "tostring",
                                           "type",   "unpack", "_VERSION", NULL};

void ikl_sandbox_open_env(lua_State *C, const char *ik_path, const char *dir) {
  int g, t, i;
  lua_pushstring(C, dir);
  ikl_setreg(C, &DIR_KEY);
  lua_pushstring(C, ik_path);
  ikl_setreg(C, &IKPATH_KEY);
  lua_newtable(C);
  ikl_setreg(C, &DEPS_LIST_KEY);
  open_lib(C, "_G", luaopen_base); /* g */
  g = lua_gettop(C);
  lua_newtable(C); /* t: the template */
  t = lua_gettop(C);
  for (i = 0; SAFE_GLOBALS[i]; i++) {
    lua_getfield(C, g, SAFE_GLOBALS[i]);
    lua_setfield(C, t, SAFE_GLOBALS[i]);
  }
  lua_pushcfunction(C, sb_pcall);
  lua_setfield(C, t, "pcall");
  lua_pushcfunction(C, sb_xpcall);
  lua_setfield(C, t, "xpcall");
  lua_pushcfunction(C, sb_getmetatable);
  lua_setfield(C, t, "getmetatable");
  lua_pushcfunction(C, sb_setmetatable);
  lua_setfield(C, t, "setmetatable");
  lua_pushcfunction(C, sb_collectgarbage);
  lua_setfield(C, t, "collectgarbage");
  lua_pushcfunction(C, sb_print);
  lua_setfield(C, t, "print");

  open_lib(C, "string", luaopen_string);
  copy_lib(C, "dump");
  wrap(C, "rep", sb_rep);
  ikl_pattern_setfuncs(C, &sandbox(C)->steps);
  lua_pushvalue(C, -1);
  lua_setfield(C, t, "string");
  lua_pushliteral(C, ""); /* strings' methods: the budgeted ones */
  if (lua_getmetatable(C, -1)) {
    lua_pushvalue(C, -3);
    lua_setfield(C, -2, "__index");
    lua_pop(C, 1);
  }
  lua_pop(C, 2);

  open_lib(C, "table", luaopen_table);
  copy_lib(C, NULL);
  wrap(C, "sort", sb_sort);
  lua_getfield(C, -1, "move");
  if (!lua_isnil(C, -1)) {
    lua_pop(C, 1);
    wrap(C, "move", sb_move);
  } else {
    lua_pop(C, 1);
  }
  lua_setfield(C, t, "table");

  open_lib(C, "math", luaopen_math);
  copy_lib(C, NULL);
  lua_setfield(C, t, "math");

#if LUA_VERSION_NUM == 501
  lua_getfield(C, g, "coroutine");
#else
  open_lib(C, "coroutine", luaopen_coroutine);
#endif
  copy_lib(C, NULL);
  wrap(C, "resume", sb_resume);
  lua_pushcfunction(C, sb_yield);
  lua_setfield(C, -2, "yield");
  lua_getfield(C, -1, "close");
  if (!lua_isnil(C, -1)) {
    lua_pop(C, 1);
    wrap(C, "close", sb_resume);
  } else {
    lua_pop(C, 1);
  }
  lua_setfield(C, t, "coroutine");

#if LUA_VERSION_NUM >= 503
  open_lib(C, "utf8", luaopen_utf8);
  copy_lib(C, NULL);
  lua_setfield(C, t, "utf8");
#endif
#if defined(LUA_BITLIBNAME)
  open_lib(C, LUA_BITLIBNAME, luaopen_bit);
  copy_lib(C, NULL);
  lua_setfield(C, t, "bit");
#endif
  lua_createtable(C, 0, 1);
  lua_pushcfunction(C, os_clock);
  lua_setfield(C, -2, "clock");
  lua_setfield(C, t, "os");

  lua_pushcfunction(C, luaopen_ik_core);
  lua_call(C, 0, 1);
  lua_pushnil(C); /* files are not the scripts' business, nor are states of their own */
  lua_setfield(C, -2, "watch");
  lua_pushnil(C);
  lua_setfield(C, -2, "sandbox");
  lua_pushnil(C); /* patterns with a budget of their own choosing */
  lua_setfield(C, -2, "_sandbox_patterns");
  lua_pushnil(C); /* chain addresses, for LuaJIT's ffi, which scripts never have */
  lua_setfield(C, -2, "_chain_ffi");
  lua_pushnil(C); /* reads files (import_string too: external buffers) */
  lua_setfield(C, -2, "import");
  lua_pushnil(C);
  lua_setfield(C, -2, "import_string");
  lua_pushnil(C); /* crowds: uncharged C memory and threads, the host's to own */
  lua_setfield(C, -2, "crowd");
  lua_pushnil(C);
  lua_setfield(C, -2, "crowd_template");
  ikl_setreg(C, &CORE_KEY);

  lua_pushvalue(C, t);
  ikl_setreg(C, &TEMPLATE_KEY);
  lua_settop(C, g - 1);
}

void ikl_sandbox_new_env(lua_State *C) {
  int env, t;
  ikl_getreg(C, &TEMPLATE_KEY);
  t = lua_gettop(C);
  lua_newtable(C);
  env = lua_gettop(C);
  lua_pushnil(C);
  while (lua_next(C, t)) { /* libraries as copies: a version's changes stay its own */
    lua_pushvalue(C, -2);
    lua_insert(C, -2);
    if (lua_istable(C, -1)) copy_lib(C, NULL);
    lua_rawset(C, env);
  }
  lua_pushvalue(C, env);
  lua_setfield(C, env, "_G");
  ikl_sandbox_push_scene(C);
  lua_setfield(C, env, "scene");
  ikl_sandbox_push_state(C);
  lua_setfield(C, env, "state");
  lua_pushvalue(C, env);
  lua_pushcclosure(C, sb_load, 1);
  lua_pushvalue(C, -1);
  lua_setfield(C, env, "load");
#if LUA_VERSION_NUM == 501
  lua_setfield(C, env, "loadstring");
#else
  lua_pop(C, 1);
#endif
  lua_pushvalue(C, env);
  lua_pushcclosure(C, sb_loadfile, 1);
  lua_setfield(C, env, "loadfile");
  lua_pushvalue(C, env);
  lua_pushcclosure(C, sb_dofile, 1);
  lua_setfield(C, env, "dofile");
  lua_pushvalue(C, env);
  lua_newtable(C);
  lua_pushcclosure(C, sb_require, 2);
  lua_pushvalue(C, -1);
  lua_setfield(C, env, "require");
  lua_pushliteral(C, "ik"); /* ik, as the script's first require loads it */
  lua_call(C, 1, 1);
  lua_setfield(C, env, "ik");
  lua_remove(C, t);
}
