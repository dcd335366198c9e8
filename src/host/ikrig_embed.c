/*
 * ikrig_embed.c: the embedding API (ikrig_embed.h): ik.core into a host's lua_State,
 * a runtime over a scene, frames in, poses and chain results out.
 *
 * Every call into Lua goes through protect(): a scene or runtime that raises, or memory
 * that runs out, becomes a -1 and a message, never a longjmp through the host. The
 * Lua-side objects (the runtime, the scene) live in one registry table per runtime; the
 * C closures given to Lua (scene.report, the runtime's on_event) reach the C runtime
 * through a box userdata that ikrig_runtime_free empties, so a scene that outlives its
 * runtime calls into nothing.
 */
#define _XOPEN_SOURCE 700
#include "ikrig_embed.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ikrig_paths.h"
#include "lauxlib.h"
#include "lualib.h"

/* The native module, compiled into this program from src/lua (ikl_module.c). */
int luaopen_ik_core(lua_State *L);

#ifndef IKRIG_INSTALL_LUA_REL
#define IKRIG_INSTALL_LUA_REL "../share/ikrig/lua"
#endif

#define DEFAULT_SCENE "ik.demo.scene"

/* ---- small owned things ---- */

/* Strings owned until the list is cleared. */
typedef struct strlist {
  char **s;
  int n, cap;
} strlist;

static const char *keep(strlist *l, const char *s, size_t len) {
  char *copy;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 32;
    char **grown = (char **)realloc(l->s, (size_t)cap * sizeof *grown);
    if (!grown) return NULL;
    l->s = grown;
    l->cap = cap;
  }
  copy = (char *)malloc(len + 1);
  if (!copy) return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  l->s[l->n++] = copy;
  return copy;
}

static void strlist_clear(strlist *l) {
  int i;
  for (i = 0; i < l->n; i++) free(l->s[i]);
  l->n = 0;
}

static void strlist_free(strlist *l) {
  strlist_clear(l);
  free(l->s);
  l->s = NULL;
  l->cap = 0;
}

/* Room for one more element in a growable array; 0 when out of memory. */
static int reserve(void **p, int *cap, int n, size_t size) {
  void *grown;
  int c;
  if (n < *cap) return 1;
  c = *cap ? 2 * *cap : 16;
  grown = realloc(*p, (size_t)c * size);
  if (!grown) return 0;
  *p = grown;
  *cap = c;
  return 1;
}

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = (char *)malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the runtime's C side ---- */

typedef struct script_slot {
  ikrig_script pub;
  char *path;   /* as the runtime names it */
  char *status; /* owned copies behind pub.status and pub.error */
  char *error;
} script_slot;

#define MAX_NAMES 4096  /* distinct chain names kept (the rest share one) */
#define NAME_SLOTS 8192 /* their hash table: a power of two, twice MAX_NAMES */
#define MAX_SHAPES 256  /* constraint shapes read of one report */

struct ikrig_runtime {
  lua_State *L;
  int ref;             /* registry: { runtime =, scene =, box = } */
  ikrig_runtime **box; /* what the Lua closures see; emptied at free */
  ikrig_event_fn on_event;
  void *event_ud;
  char *error;
  char *scene_name;
  long frame;
  double time, seconds;
  int pose_fresh, events_done;
  int constraint_shapes; /* ikrig_options.constraint_shapes */
  ikrig_pose pose;
  ikrig_transform *tf;
  int n_tf, cap_tf;
  ikrig_chain *chains;
  int n_chains, cap_chains;
  ikrig_constraint_shape *shapes; /* every chain's, in the order of the chains */
  int n_shapes, cap_shapes;
  ikrig_event *events;
  int n_events, cap_events;
  strlist pose_strs, chain_strs, event_strs;
  script_slot *scripts;
  int n_scripts, cap_scripts;
  const char **names; /* NAME_SLOTS slots into chain_strs (chain_name) */
};

static void set_error(ikrig_runtime *rt, const char *msg) {
  free(rt->error);
  rt->error = dup_string(msg ? msg : "unknown error");
}

typedef int (*step_fn)(lua_State *L, ikrig_runtime *rt, void *arg);

typedef struct step_call {
  step_fn fn;
  ikrig_runtime *rt;
  void *arg;
} step_call;

static int trampoline(lua_State *L) {
  step_call *c = (step_call *)lua_touserdata(L, 1);
  return c->fn(L, c->rt, c->arg);
}

/* Runs fn in protected mode, the stack put back after. 0, or -1 with rt->error set (or
 * the message left on the stack when leave_message). */
static int protect_ex(lua_State *L, ikrig_runtime *rt, step_fn fn, void *arg, int leave_message) {
  int top = lua_gettop(L), status;
  step_call c;
  c.fn = fn;
  c.rt = rt;
  c.arg = arg;
  if (!lua_checkstack(L, 4)) {
    if (leave_message) return -1;
    set_error(rt, "Lua stack overflow");
    return -1;
  }
  lua_pushcfunction(L, trampoline);
  lua_pushlightuserdata(L, &c);
  status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    if (leave_message) {
      if (!msg) {
        lua_pop(L, 1);
        lua_pushstring(L, status == LUA_ERRMEM ? "not enough memory" : "(error object is not a string)");
      }
      return -1; /* the message is at top + 1 */
    }
    set_error(rt,
              msg ? msg : (status == LUA_ERRMEM ? "not enough memory" : "(error object is not a string)"));
    lua_settop(L, top);
    return -1;
  }
  lua_settop(L, top);
  return 0;
}

static int protect(ikrig_runtime *rt, step_fn fn, void *arg) { return protect_ex(rt->L, rt, fn, arg, 0); }

/* Pushes the runtime's registry table. */
static int push_home(lua_State *L, const ikrig_runtime *rt) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, rt->ref);
  return lua_gettop(L);
}

static ikrig_runtime *from_box(lua_State *L) {
  ikrig_runtime **box = (ikrig_runtime **)lua_touserdata(L, lua_upvalueindex(1));
  return box ? *box : NULL;
}

/* Raised from inside Lua when the C side could not keep something. */
static int oom(lua_State *L) { return luaL_error(L, "not enough memory"); }

/* ---- scripts ---- */

static int add_script(ikrig_runtime *rt, const char *path) {
  script_slot *s;
  if (!reserve((void **)&rt->scripts, &rt->cap_scripts, rt->n_scripts, sizeof *rt->scripts)) return -1;
  s = &rt->scripts[rt->n_scripts];
  memset(s, 0, sizeof *s);
  s->path = dup_string(path);
  if (!s->path) return -1;
  s->pub.path = s->path;
  s->pub.status = "new";
  s->pub.seconds = -1;
  rt->n_scripts++;
  return rt->n_scripts - 1;
}

static int find_script(const ikrig_runtime *rt, const char *path) {
  int i;
  for (i = 0; i < rt->n_scripts; i++)
    if (strcmp(rt->scripts[i].path, path) == 0) return i;
  return -1;
}

/* ---- closures given to Lua ---- */

/* Reads the vec3 (ik.vec3, {x =, y =, z =} or {x, y, z}) in field `field` of the table
 * at idx into out. */
static void shape_vec3(lua_State *L, int idx, const char *field, double out[3]) {
  static const char *const xyz[] = {"x", "y", "z"};
  int k, v;
  lua_getfield(L, idx, field);
  v = lua_gettop(L);
  for (k = 0; k < 3; k++) {
    if (lua_istable(L, v))
      lua_rawgeti(L, v, k + 1);
    else
      lua_pushnil(L);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      if (lua_isnil(L, v))
        lua_pushnil(L);
      else
        lua_getfield(L, v, xyz[k]);
    }
    out[k] = lua_isnumber(L, -1) ? (double)lua_tonumber(L, -1) : (double)NAN;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static double shape_number(lua_State *L, int idx, const char *field) {
  double v;
  lua_getfield(L, idx, field);
  v = lua_isnumber(L, -1) ? (double)lua_tonumber(L, -1) : (double)NAN;
  lua_pop(L, 1);
  return v;
}

/* The constraint shapes (a list, as chain:constraint_shapes() gives them) at arg, read
 * into rt->shapes after the ones kept (not counted yet: the caller keeps them with the
 * report). Returns how many. The list is the runtime's copy: plain tables. */
static int read_shapes(lua_State *L, ikrig_runtime *rt, int list) {
  int n, i;
  if (!lua_istable(L, list))
    return luaL_error(L, "scene.report: shapes (a list) expected, got %s", luaL_typename(L, list));
  n = (int)lua_rawlen(L, list);
  if (n > MAX_SHAPES) n = MAX_SHAPES;
  for (i = 0; i < n; i++) {
    ikrig_constraint_shape *sh;
    const char *kind;
    if (!reserve((void **)&rt->shapes, &rt->cap_shapes, rt->n_shapes + i, sizeof *rt->shapes)) return oom(L);
    sh = &rt->shapes[rt->n_shapes + i];
    memset(sh, 0, sizeof *sh);
    lua_rawgeti(L, list, i + 1);
    if (!lua_istable(L, -1))
      return luaL_error(L, "scene.report: constraint shape %d is %s, not a table", i + 1,
                        luaL_typename(L, -1));
    lua_getfield(L, -1, "kind");
    kind = lua_tostring(L, -1);
    sh->kind = kind && strcmp(kind, "hinge") == 0 ? "hinge" : "cone";
    lua_pop(L, 1);
    sh->bone = (int)shape_number(L, -1, "bone");
    shape_vec3(L, lua_gettop(L), "apex", sh->apex);
    shape_vec3(L, lua_gettop(L), "direction", sh->direction);
    sh->length = shape_number(L, -1, "length");
    if (sh->kind[0] == 'h') {
      shape_vec3(L, lua_gettop(L), "axis", sh->axis);
      sh->min = shape_number(L, -1, "min");
      sh->max = shape_number(L, -1, "max");
    } else {
      sh->angle = shape_number(L, -1, "angle");
    }
    lua_pop(L, 1);
  }
  return n;
}

/* A chain's name, kept across frames: scripts report the same few names every frame,
 * which are copied once (a frame allocates nothing) and found by hash. Past MAX_NAMES
 * names, the rest share one. */
static unsigned name_hash(const char *s, size_t len) {
  unsigned h = 2166136261u;
  size_t i;
  for (i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static const char *chain_name(ikrig_runtime *rt, const char *s, size_t len) {
  unsigned h = name_hash(s, len), i;
  if (!rt->names) {
    rt->names = (const char **)calloc(NAME_SLOTS, sizeof *rt->names);
    if (!rt->names) return NULL;
  }
  for (i = h & (NAME_SLOTS - 1);; i = (i + 1) & (NAME_SLOTS - 1)) {
    const char *kept = rt->names[i];
    if (!kept) break;
    if (strlen(kept) == len && memcmp(kept, s, len) == 0) return kept;
  }
  if (rt->chain_strs.n >= MAX_NAMES) return "(other chains)";
  return rt->names[i] = keep(&rt->chain_strs, s, len);
}

/* scene.report(name, reached, distance, iterations, shapes, script), as the runtime
 * hands on what a script reported (checked copies). */
static int report_fn(lua_State *L) {
  ikrig_runtime *rt = from_box(L);
  ikrig_chain *c;
  const char *name;
  size_t len;
  int script, n_shapes;
  if (!rt) return 0;
  lua_settop(L, 6);
  if (lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "scene.report: chain name (string) expected, got %s", luaL_typename(L, 1));
  if (!lua_isnil(L, 3) && lua_type(L, 3) != LUA_TNUMBER)
    return luaL_error(L, "scene.report: distance (number) expected, got %s", luaL_typename(L, 3));
  if (!lua_isnil(L, 4) && lua_type(L, 4) != LUA_TNUMBER)
    return luaL_error(L, "scene.report: iterations (number) expected, got %s", luaL_typename(L, 4));
  n_shapes = lua_isnil(L, 5) || !rt->constraint_shapes ? -1 : read_shapes(L, rt, 5);
  if (!reserve((void **)&rt->chains, &rt->cap_chains, rt->n_chains, sizeof *rt->chains)) return oom(L);
  name = lua_tolstring(L, 1, &len);
  c = &rt->chains[rt->n_chains];
  c->name = chain_name(rt, name, len);
  if (!c->name) return oom(L);
  c->reached = lua_toboolean(L, 2);
  c->distance = lua_isnil(L, 3) ? (double)NAN : (double)lua_tonumber(L, 3);
  if (lua_isnil(L, 4)) {
    c->iterations = -1;
  } else {
    lua_Number it = lua_tonumber(L, 4);
    c->iterations = it >= 0 && it < 1e9 ? (int)it : -1;
  }
  script = lua_type(L, 6) == LUA_TSTRING ? find_script(rt, lua_tostring(L, 6)) : -1;
  c->script = script >= 0 ? rt->scripts[script].path : NULL;
  c->constraints = NULL; /* pointed into rt->shapes by ikrig_runtime_pose */
  c->n_constraints = n_shapes;
  if (n_shapes > 0) rt->n_shapes += n_shapes;
  rt->n_chains++;
  if (script >= 0) {
    ikrig_script *s = &rt->scripts[script].pub;
    s->reports++;
    s->reached += c->reached != 0;
    if (c->distance == c->distance && c->distance > s->worst_distance) s->worst_distance = c->distance;
  }
  return 0;
}

/* A field of the table at idx as a kept string, or NULL when absent. */
static const char *keep_field(lua_State *L, int idx, const char *field, strlist *l) {
  const char *s = NULL;
  size_t len;
  lua_getfield(L, idx, field);
  if (!lua_isnil(L, -1)) {
    const char *v = luaL_tolstring(L, -1, &len);
    s = keep(l, v, len);
    if (!s) oom(L);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return s;
}

/* The runtime's on_event(ev). */
static int event_fn(lua_State *L) {
  ikrig_runtime *rt = from_box(L);
  ikrig_event *e;
  if (!rt || lua_type(L, 1) != LUA_TTABLE) return 0;
  if (rt->events_done) { /* the first event after an update: the last frame's are read */
    rt->n_events = 0;
    strlist_clear(&rt->event_strs);
    rt->events_done = 0;
  }
  if (!reserve((void **)&rt->events, &rt->cap_events, rt->n_events, sizeof *rt->events)) return oom(L);
  e = &rt->events[rt->n_events];
  e->kind = keep_field(L, 1, "kind", &rt->event_strs);
  e->script = keep_field(L, 1, "script", &rt->event_strs);
  e->message = keep_field(L, 1, "message", &rt->event_strs);
  if (!e->kind) e->kind = "event";
  rt->n_events++;
  if (rt->on_event) rt->on_event(rt->event_ud, e);
  return 0;
}

/* The clock the runtime debounces with when watching: wall time (os.clock is CPU time,
 * which hardly moves while the host sleeps between frames). */
static int clock_fn(lua_State *L) {
  lua_pushnumber(L, (lua_Number)now_seconds());
  return 1;
}

/* ---- opening ---- */

static int has_ik(const char *dir) {
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s/ik/init.lua", dir);
  return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

static int append_dir(char *buf, size_t size, const char *dir) {
  size_t used = strlen(buf), n = strlen(dir);
  if (used + n + 2 > size) return -1;
  if (used) buf[used++] = ';';
  memcpy(buf + used, dir, n + 1);
  return 0;
}

int ikrig_exe_dir(char *buf, size_t size) {
  ssize_t n;
  char *slash;
  if (size < 2) return -1;
  n = readlink("/proc/self/exe", buf, size - 1);
  if (n <= 0 || (size_t)n >= size - 1) return -1;
  buf[n] = '\0';
  slash = strrchr(buf, '/');
  if (!slash) return -1;
  *slash = '\0';
  return 0;
}

int ikrig_in_build_tree(void) {
#ifdef IKRIG_BUILD_DIR
  char exe[PATH_MAX], build[PATH_MAX];
  size_t n;
  if (ikrig_exe_dir(exe, sizeof exe) != 0 || !realpath(IKRIG_BUILD_DIR, build)) return 0;
  n = strlen(build);
  return strncmp(exe, build, n) == 0 && (exe[n] == '\0' || exe[n] == '/');
#else
  return 0;
#endif
}

const char *ikrig_lua_dirs(char *buf, size_t size) {
  const char *env = getenv(IKRIG_LUA_PATH_ENV);
  char exe[PATH_MAX], dir[PATH_MAX];
  int found = 0;
  if (!buf || size == 0) return NULL;
  buf[0] = '\0';
  if (env && *env && append_dir(buf, size, env) != 0) return NULL;
  if (ikrig_exe_dir(exe, sizeof exe) == 0 &&
      snprintf(dir, sizeof dir, "%s/%s", exe, IKRIG_INSTALL_LUA_REL) < (int)sizeof dir && has_ik(dir)) {
    char resolved[PATH_MAX]; /* "/usr/bin/../share/..." reads better as "/usr/share/..." */
    if (append_dir(buf, size, realpath(dir, resolved) ? resolved : dir) != 0) return NULL;
    found = 1;
  }
#ifdef IKRIG_SOURCE_LUA_DIR
  if (!found && ikrig_in_build_tree() && has_ik(IKRIG_SOURCE_LUA_DIR)) {
    if (append_dir(buf, size, IKRIG_SOURCE_LUA_DIR) != 0) return NULL;
    found = 1;
  }
#endif
#ifdef IKRIG_INSTALL_LUA_DIR
  /* a host of its own, installed elsewhere than bin/ of the prefix */
  if (!found && has_ik(IKRIG_INSTALL_LUA_DIR)) {
    if (append_dir(buf, size, IKRIG_INSTALL_LUA_DIR) != 0) return NULL;
  }
#endif
  return buf[0] ? buf : NULL;
}

static int open_step(lua_State *L, ikrig_runtime *rt, void *arg) {
  const char *dirs = (const char *)arg, *p;
  luaL_Buffer b;
  (void)rt;
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_ik_core);
  lua_setfield(L, -2, "ik.core");
  lua_pop(L, 1);
  if (!dirs) return 0;
  if (lua_getglobal(L, "package") != LUA_TTABLE) return luaL_error(L, "ikrig_open: no package library");
  luaL_buffinit(L, &b);
  for (p = dirs; *p;) {
    const char *end = strchr(p, ';');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len) {
      luaL_addlstring(&b, p, len);
      luaL_addstring(&b, "/?.lua;");
      luaL_addlstring(&b, p, len);
      luaL_addstring(&b, "/?/init.lua;");
    }
    p += len;
    if (*p == ';') p++;
  }
  lua_getfield(L, -2, "path");
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  lua_setfield(L, -2, "path");
  return 0;
}

int ikrig_open_dirs(lua_State *L, const char *dirs) {
  int top = lua_gettop(L);
  if (protect_ex(L, NULL, open_step, (void *)dirs, 1) != 0) {
    lua_settop(L, top);
    return -1;
  }
  return dirs && *dirs ? 0 : -1;
}

int ikrig_open(lua_State *L) {
  char dirs[4 * PATH_MAX];
  return ikrig_open_dirs(L, ikrig_lua_dirs(dirs, sizeof dirs));
}

/* ---- making a runtime ---- */

void ikrig_options_init(ikrig_options *opt) {
  memset(opt, 0, sizeof *opt);
  opt->scene = DEFAULT_SCENE;
  opt->budget = 1e7;
  opt->debounce = 0.03;
  opt->constraint_shapes = 1;
}

typedef struct new_args {
  const char *const *scripts;
  int n;
  const ikrig_options *opt;
} new_args;

/* require(name) on top of the stack. */
static void require_module(lua_State *L, const char *name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
}

static int new_step(lua_State *L, ikrig_runtime *rt, void *arg) {
  const new_args *a = (const new_args *)arg;
  const char *scene_name = a->opt->scene ? a->opt->scene : DEFAULT_SCENE;
  int module, scene, list, options, i;

  require_module(L, scene_name);
  module = lua_gettop(L);
  if (!lua_istable(L, module)) return luaL_error(L, "scene module '%s' is not a table", scene_name);
  if (lua_getfield(L, module, "new") != LUA_TFUNCTION)
    return luaL_error(L, "scene module '%s' has no new()", scene_name);
  lua_call(L, 0, 1);
  scene = lua_gettop(L);
  if (!lua_istable(L, scene))
    return luaL_error(L, "%s.new() returned %s, not a scene table", scene_name, luaL_typename(L, scene));
  if (lua_getfield(L, scene, "name") == LUA_TSTRING && !(rt->scene_name = dup_string(lua_tostring(L, -1))))
    return oom(L);
  lua_pop(L, 1);
  if (!rt->scene_name && !(rt->scene_name = dup_string(scene_name))) return oom(L);

  /* The scripts: those given, or the scene module's own (module names). */
  lua_newtable(L);
  list = lua_gettop(L);
  if (a->n > 0) {
    for (i = 0; i < a->n; i++) {
      lua_pushstring(L, a->scripts[i]);
      lua_rawseti(L, list, i + 1);
    }
  } else {
    int k, n;
    if (lua_getfield(L, module, "scripts") != LUA_TTABLE)
      return luaL_error(L, "scene module '%s' has no list of scripts", scene_name);
    n = (int)lua_rawlen(L, -1);
    for (k = 1; k <= n; k++) {
      lua_rawgeti(L, -1, k);
      if (lua_type(L, -1) != LUA_TSTRING)
        return luaL_error(L, "%s.scripts[%d] is not a module name", scene_name, k);
      lua_getglobal(L, "package");
      lua_getfield(L, -1, "searchpath");
      lua_pushvalue(L, -3);
      lua_getfield(L, -3, "path");
      lua_call(L, 2, 2);
      if (lua_isnil(L, -2))
        return luaL_error(L, "demo script '%s' not found:%s", lua_tostring(L, -4), lua_tostring(L, -1));
      lua_pop(L, 1);
      lua_rawseti(L, list, (int)lua_rawlen(L, list) + 1);
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  }
  for (i = 1; i <= (int)lua_rawlen(L, list); i++) {
    lua_rawgeti(L, list, i);
    if (add_script(rt, lua_tostring(L, -1)) < 0) return oom(L);
    lua_pop(L, 1);
  }

  /* The box the closures reach the runtime through, then scene.report. */
  rt->box = (ikrig_runtime **)lua_newuserdatauv(L, sizeof *rt->box, 0);
  *rt->box = rt;
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, report_fn, 1);
  lua_setfield(L, scene, "report");

  /* require("ik.runtime").new{...} */
  lua_createtable(L, 0, 8);
  options = lua_gettop(L);
  lua_pushvalue(L, scene);
  lua_setfield(L, options, "scene");
  lua_pushvalue(L, list);
  lua_setfield(L, options, "scripts");
  lua_pushboolean(L, a->opt->watch);
  lua_setfield(L, options, "watch");
  lua_pushnumber(L, (lua_Number)(a->opt->budget > 0 ? a->opt->budget : 1e7));
  lua_setfield(L, options, "budget");
  lua_pushnumber(L, (lua_Number)(a->opt->debounce >= 0 ? a->opt->debounce : 0.03));
  lua_setfield(L, options, "debounce");
  if (a->opt->memory_limit > 0) {
    lua_pushnumber(L, (lua_Number)a->opt->memory_limit);
    lua_setfield(L, options, "memory_limit");
  }
  lua_pushboolean(L, a->opt->constraint_shapes);
  lua_setfield(L, options, "report_shapes");
  if (a->opt->interrupt) {
    lua_pushlightuserdata(L, (void *)(size_t)a->opt->interrupt);
    lua_setfield(L, options, "interrupt");
  }
  if (a->opt->watch) {
    lua_pushcfunction(L, clock_fn);
    lua_setfield(L, options, "clock");
  }
  lua_pushvalue(L, -2); /* the box */
  lua_pushcclosure(L, event_fn, 1);
  lua_setfield(L, options, "on_event");
  require_module(L, "ik.runtime");
  if (!lua_istable(L, -1) || lua_getfield(L, -1, "new") != LUA_TFUNCTION)
    return luaL_error(L, "ik.runtime has no new()");
  lua_pushvalue(L, options);
  lua_call(L, 1, 1);
  if (!lua_istable(L, -1) && !lua_isuserdata(L, -1))
    return luaL_error(L, "ik.runtime.new returned %s, not a runtime", luaL_typename(L, -1));

  /* home = { runtime =, scene =, box = } */
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "runtime");
  lua_pushvalue(L, scene);
  lua_setfield(L, -2, "scene");
  lua_pushvalue(L, options - 1);
  lua_setfield(L, -2, "box");
  rt->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

static void free_c_side(ikrig_runtime *rt) {
  int i;
  for (i = 0; i < rt->n_scripts; i++) {
    free(rt->scripts[i].path);
    free(rt->scripts[i].status);
    free(rt->scripts[i].error);
  }
  free(rt->scripts);
  free(rt->names);
  strlist_free(&rt->pose_strs);
  strlist_free(&rt->chain_strs);
  strlist_free(&rt->event_strs);
  free(rt->tf);
  free(rt->chains);
  free(rt->shapes);
  free(rt->events);
  free(rt->error);
  free(rt->scene_name);
  free(rt);
}

ikrig_runtime *ikrig_runtime_new(lua_State *L, const char *const *scripts, int n, const ikrig_options *opt) {
  ikrig_options defaults;
  ikrig_runtime *rt;
  new_args a;
  int top = lua_gettop(L);
  if (!opt) {
    ikrig_options_init(&defaults);
    opt = &defaults;
  }
  rt = (ikrig_runtime *)calloc(1, sizeof *rt);
  if (!rt) {
    lua_pushliteral(L, "not enough memory");
    return NULL;
  }
  rt->L = L;
  rt->ref = LUA_NOREF;
  rt->frame = -1;
  rt->on_event = opt->on_event;
  rt->event_ud = opt->event_ud;
  rt->constraint_shapes = opt->constraint_shapes;
  a.scripts = scripts;
  a.n = n < 0 ? 0 : n;
  a.opt = opt;
  if (protect_ex(L, rt, new_step, &a, 1) != 0) {
    if (lua_gettop(L) == top) lua_pushliteral(L, "Lua stack overflow");
    if (rt->box) *rt->box = NULL;
    free_c_side(rt);
    return NULL;
  }
  return rt;
}

static int close_step(lua_State *L, ikrig_runtime *rt, void *arg) {
  int home = push_home(L, rt);
  (void)arg;
  lua_getfield(L, home, "runtime");
  if (lua_getfield(L, -1, "close") == LUA_TFUNCTION) {
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
  }
  return 0;
}

void ikrig_runtime_free(ikrig_runtime *rt) {
  if (!rt) return;
  if (rt->ref != LUA_NOREF) {
    protect(rt, close_step, NULL); /* a runtime that fails to close is let go all the same */
    luaL_unref(rt->L, LUA_REGISTRYINDEX, rt->ref);
  }
  if (rt->box) *rt->box = NULL;
  free_c_side(rt);
}

const char *ikrig_runtime_error(const ikrig_runtime *rt) { return rt->error; }

const char *ikrig_runtime_scene_name(const ikrig_runtime *rt) { return rt->scene_name; }

double ikrig_runtime_seconds(const ikrig_runtime *rt) { return rt->seconds; }

int ikrig_runtime_script_count(const ikrig_runtime *rt) { return rt->n_scripts; }

const ikrig_script *ikrig_runtime_script(const ikrig_runtime *rt, int i) {
  return i >= 0 && i < rt->n_scripts ? &rt->scripts[i].pub : NULL;
}

/* ---- a frame ---- */

/* Replaces an owned string when it changed; 0 when out of memory. */
static int update_string(char **slot, const char *s) {
  char *copy;
  if (!s) {
    free(*slot);
    *slot = NULL;
    return 1;
  }
  if (*slot && strcmp(*slot, s) == 0) return 1;
  copy = dup_string(s);
  if (!copy) return 0;
  free(*slot);
  *slot = copy;
  return 1;
}

/* Whether a runtime status word means the script ran. */
static int is_active(const char *status) {
  static const char *const idle[] = {"paused", "error", "failed", "stopped", "closed", "new"};
  size_t i;
  if (!status) return 1;
  for (i = 0; i < sizeof idle / sizeof idle[0]; i++)
    if (strcmp(status, idle[i]) == 0) return 0;
  return 1;
}

/* A field (or, failing that, an array slot) of the table at idx as a string, or NULL;
 * the value stays on the stack. */
static const char *entry_string(lua_State *L, int idx, const char *field, int slot) {
  lua_getfield(L, idx, field);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_rawgeti(L, idx, slot);
  }
  if (lua_isnil(L, -1)) return NULL;
  return luaL_tolstring(L, -1, NULL); /* pushes the string over the value */
}

/* One script's status, error and time (at time_idx) into its slot. */
static void refresh_script(lua_State *L, ikrig_runtime *rt, const char *path, const char *status,
                           const char *error, int time_idx) {
  script_slot *s;
  int k = find_script(rt, path);
  if (k < 0 && (k = add_script(rt, path)) < 0) oom(L);
  s = &rt->scripts[k];
  if (!update_string(&s->status, status) || !update_string(&s->error, error)) oom(L);
  s->pub.status = s->status ? s->status : "?";
  s->pub.error = s->error;
  s->pub.active = is_active(status) && !(status == NULL && error != NULL);
  if (s->pub.active) s->pub.frames++;
  if (lua_type(L, time_idx) == LUA_TNUMBER) s->pub.seconds = (double)lua_tonumber(L, time_idx);
}

/* The same through rt:script_info(i), which gives values rather than tables: a frame
 * then allocates nothing. 0 when the runtime has no script_info. */
static int refresh_by_info(lua_State *L, ikrig_runtime *rt, int runtime) {
  int i, fn;
  if (lua_getfield(L, runtime, "script_info") != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return 0;
  }
  fn = lua_gettop(L);
  for (i = 1;; i++) {
    lua_pushvalue(L, fn);
    lua_pushvalue(L, runtime);
    lua_pushinteger(L, i);
    lua_call(L, 2, 4);
    if (lua_type(L, fn + 1) != LUA_TSTRING) break;
    refresh_script(L, rt, lua_tostring(L, fn + 1), lua_isstring(L, fn + 2) ? lua_tostring(L, fn + 2) : NULL,
                   lua_isstring(L, fn + 3) ? lua_tostring(L, fn + 3) : NULL, fn + 4);
    lua_settop(L, fn);
  }
  lua_settop(L, fn - 1);
  return 1;
}

/* rt:scripts() into the script slots: statuses, errors, frames run. */
static void refresh_scripts(lua_State *L, ikrig_runtime *rt, int runtime) {
  int list, i, n;
  if (refresh_by_info(L, rt, runtime)) return;
  if (lua_getfield(L, runtime, "scripts") != LUA_TFUNCTION) { /* no list: all count as running */
    lua_pop(L, 1);
    for (i = 0; i < rt->n_scripts; i++) {
      rt->scripts[i].pub.active = 1;
      rt->scripts[i].pub.frames++;
    }
    return;
  }
  lua_pushvalue(L, runtime);
  lua_call(L, 1, 1);
  list = lua_gettop(L);
  if (!lua_istable(L, list))
    luaL_error(L, "ik.runtime: scripts() returned %s, not a list", luaL_typename(L, list));
  n = (int)lua_rawlen(L, list);
  for (i = 1; i <= n; i++) {
    int entry, top = lua_gettop(L);
    const char *path, *status, *error;
    lua_rawgeti(L, list, i);
    entry = lua_gettop(L);
    if (!lua_istable(L, entry)) {
      lua_settop(L, top);
      continue;
    }
    path = entry_string(L, entry, "path", 1);
    if (!path) {
      lua_settop(L, top);
      continue;
    }
    status = entry_string(L, entry, "status", 2);
    error = entry_string(L, entry, "error", 3);
    lua_getfield(L, entry, "time");
    refresh_script(L, rt, path, status, error, lua_gettop(L));
    lua_settop(L, top);
  }
  lua_settop(L, list - 1);
}

static int update_step(lua_State *L, ikrig_runtime *rt, void *arg) {
  double dt = *(const double *)arg, t0;
  int home = push_home(L, rt), runtime;
  lua_getfield(L, home, "scene");
  if (lua_getfield(L, -1, "advance") == LUA_TFUNCTION) {
    lua_pushvalue(L, -2);
    lua_pushnumber(L, (lua_Number)dt);
    lua_call(L, 2, 0);
  } else {
    lua_pop(L, 1);
  }
  lua_getfield(L, home, "runtime");
  runtime = lua_gettop(L);
  lua_getfield(L, runtime, "update");
  lua_pushvalue(L, runtime);
  lua_pushnumber(L, (lua_Number)dt);
  t0 = now_seconds();
  lua_call(L, 2, 0);
  rt->seconds += now_seconds() - t0;
  refresh_scripts(L, rt, runtime);
  return 0;
}

int ikrig_runtime_update(ikrig_runtime *rt, double dt) {
  int status;
  if (!(dt >= 0) || dt > 1e6) {
    set_error(rt, "ikrig_runtime_update: dt must be a number of seconds >= 0");
    return -1;
  }
  rt->n_chains = 0;
  rt->n_shapes = 0;
  if (rt->events_done) {
    rt->n_events = 0;
    strlist_clear(&rt->event_strs);
    rt->events_done = 0;
  }
  rt->frame++;
  rt->time += dt;
  rt->pose_fresh = 0;
  status = protect(rt, update_step, &dt);
  rt->events_done = 1;
  return status;
}

/* ---- reading the pose ---- */

/* n numbers from a vec3 or quat: an ik.vec3/ik.quat, {x, y, z(, w)} or a table or
 * userdata with fields x, y, z(, w). 0 when it is none of those. */
static int read_numbers(lua_State *L, int idx, double *out, int n) {
  static const char *const names[4] = {"x", "y", "z", "w"};
  int i, array = 0;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_rawgeti(L, idx, 1);
    array = lua_type(L, -1) == LUA_TNUMBER;
    lua_pop(L, 1);
  } else if (lua_type(L, idx) != LUA_TUSERDATA) {
    return 0;
  }
  for (i = 0; i < n; i++) {
    int ok;
    if (array)
      lua_rawgeti(L, idx, i + 1);
    else
      lua_getfield(L, idx, names[i]);
    ok = lua_type(L, -1) == LUA_TNUMBER;
    out[i] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!ok) return 0;
  }
  return 1;
}

/* obj:method() read as n numbers into out. */
static void call_read(lua_State *L, int obj, const char *method, double *out, int n, const char *what) {
  if (lua_getfield(L, obj, method) != LUA_TFUNCTION) luaL_error(L, "%s has no %s()", what, method);
  lua_pushvalue(L, obj);
  lua_call(L, 1, 1);
  if (!read_numbers(L, -1, out, n)) luaL_error(L, "%s:%s() returned %s", what, method, luaL_typename(L, -1));
  lua_pop(L, 1);
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The string keys of the table at idx, sorted, in a userdata left on the stack (so an
 * error on the way loses nothing); the strings are kept in rt->pose_strs. */
static const char **sorted_keys(lua_State *L, ikrig_runtime *rt, int idx, int *count) {
  const char **keys;
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    n += lua_type(L, -2) == LUA_TSTRING;
    lua_pop(L, 1);
  }
  keys = (const char **)lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *keys, 0);
  n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      size_t len;
      const char *k = lua_tolstring(L, -2, &len);
      if (!(keys[n++] = keep(&rt->pose_strs, k, len))) oom(L);
    }
    lua_pop(L, 1);
  }
  if (n > 1) qsort(keys, (size_t)n, sizeof *keys, compare_strings);
  *count = n;
  return keys;
}

/* Whether the list scene[field] holds the string s. */
static int listed(lua_State *L, int scene, const char *field, const char *s) {
  int i, n, found = 0;
  if (lua_getfield(L, scene, field) != LUA_TTABLE) {
    lua_pop(L, 1);
    return 0;
  }
  n = (int)lua_rawlen(L, -1);
  for (i = 1; i <= n && !found; i++) {
    lua_rawgeti(L, -1, i);
    found = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), s) == 0;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return found;
}

static ikrig_transform *new_transform(lua_State *L, ikrig_runtime *rt) {
  ikrig_transform *t;
  if (!reserve((void **)&rt->tf, &rt->cap_tf, rt->n_tf, sizeof *rt->tf)) oom(L);
  t = &rt->tf[rt->n_tf++];
  memset(t, 0, sizeof *t);
  t->parent = -1;
  return t;
}

static void snapshot_skeleton(lua_State *L, ikrig_runtime *rt, int scene, const char *owner, int sk) {
  int bones, i, n, first = rt->n_tf;
  char what[160];
  const char **parents = NULL;
  snprintf(what, sizeof what, "scene.skeletons.%s", owner);
  if (lua_getfield(L, sk, "bones") != LUA_TFUNCTION) luaL_error(L, "%s has no bones()", what);
  lua_pushvalue(L, sk);
  lua_call(L, 1, 1);
  bones = lua_gettop(L);
  if (!lua_istable(L, bones)) luaL_error(L, "%s:bones() returned %s", what, luaL_typename(L, bones));
  n = (int)lua_rawlen(L, bones);
  /* parents' names, resolved once the skeleton's bones are all in */
  parents = (const char **)lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *parents, 0);
  for (i = 1; i <= n; i++) {
    ikrig_transform *t = new_transform(L, rt);
    int b;
    size_t len;
    const char *name;
    char trail[256];
    lua_rawgeti(L, bones, i);
    b = lua_gettop(L);
    t->owner = owner;
    lua_getfield(L, b, "name");
    name = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (!name) luaL_error(L, "%s: bone #%d has no name", what, i);
    if (!(t->name = keep(&rt->pose_strs, name, len))) oom(L);
    lua_pop(L, 1);
    parents[i - 1] = NULL;
    lua_getfield(L, b, "parent");
    if (!lua_isnil(L, -1)) {
      lua_getfield(L, -1, "name");
      if (lua_type(L, -1) == LUA_TSTRING) {
        name = lua_tolstring(L, -1, &len);
        if (!(parents[i - 1] = keep(&rt->pose_strs, name, len))) oom(L);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    t->role = IKRIG_BONE;
    snprintf(trail, sizeof trail, "%s.%s", owner, t->name);
    t->trail = listed(L, scene, "trails", trail);
    call_read(L, b, "get_position", t->position, 3, what);
    call_read(L, b, "get_rotation", t->rotation, 4, what);
    lua_pop(L, 1);
  }
  for (i = 0; i < n; i++) {
    int j;
    if (!parents[i]) continue;
    for (j = first; j < rt->n_tf; j++)
      if (strcmp(rt->tf[j].name, parents[i]) == 0) rt->tf[first + i].parent = j;
  }
  lua_settop(L, bones - 1);
}

static int pose_step(lua_State *L, ikrig_runtime *rt, void *arg) {
  int home = push_home(L, rt), scene, group, i, n;
  const char **keys;
  (void)arg;
  rt->n_tf = 0;
  strlist_clear(&rt->pose_strs);
  lua_getfield(L, home, "scene");
  scene = lua_gettop(L);
  if (lua_getfield(L, scene, "skeletons") == LUA_TTABLE) {
    group = lua_gettop(L);
    keys = sorted_keys(L, rt, group, &n);
    for (i = 0; i < n; i++) {
      lua_getfield(L, group, keys[i]);
      snapshot_skeleton(L, rt, scene, keys[i], lua_gettop(L));
      lua_pop(L, 1);
    }
  }
  lua_settop(L, scene);
  if (lua_getfield(L, scene, "nodes") == LUA_TTABLE) {
    group = lua_gettop(L);
    keys = sorted_keys(L, rt, group, &n);
    for (i = 0; i < n; i++) {
      ikrig_transform *t = new_transform(L, rt);
      char what[160];
      snprintf(what, sizeof what, "scene.nodes.%s", keys[i]);
      t->name = keys[i];
      t->role = listed(L, scene, "targets", keys[i]) ? IKRIG_TARGET
                : listed(L, scene, "poles", keys[i]) ? IKRIG_POLE
                                                     : IKRIG_NODE;
      t->trail = listed(L, scene, "trails", keys[i]);
      lua_getfield(L, group, keys[i]);
      call_read(L, lua_gettop(L), "get_position", t->position, 3, what);
      call_read(L, lua_gettop(L), "get_rotation", t->rotation, 4, what);
      lua_pop(L, 1);
    }
  }
  return 0;
}

const ikrig_pose *ikrig_runtime_pose(ikrig_runtime *rt) {
  if (!rt->pose_fresh) {
    if (protect(rt, pose_step, NULL) != 0) return NULL;
    rt->pose_fresh = 1;
  }
  rt->pose.frame = rt->frame;
  rt->pose.time = rt->time;
  rt->pose.transforms = rt->tf;
  rt->pose.n_transforms = rt->n_tf;
  {
    int i, at = 0; /* each chain's shapes follow the ones before, in the order of the chains */
    for (i = 0; i < rt->n_chains; i++) {
      rt->chains[i].constraints = rt->chains[i].n_constraints > 0 ? rt->shapes + at : NULL;
      if (rt->chains[i].n_constraints > 0) at += rt->chains[i].n_constraints;
    }
  }
  rt->pose.chains = rt->chains;
  rt->pose.n_chains = rt->n_chains;
  rt->pose.events = rt->events;
  rt->pose.n_events = rt->n_events;
  return &rt->pose;
}

/* ---- the ground ---- */

typedef struct ground_args {
  double x, z, y;
  int hit;
} ground_args;

static void push_point(lua_State *L, double x, double y, double z) {
  lua_createtable(L, 3, 0);
  lua_pushnumber(L, (lua_Number)x);
  lua_rawseti(L, -2, 1);
  lua_pushnumber(L, (lua_Number)y);
  lua_rawseti(L, -2, 2);
  lua_pushnumber(L, (lua_Number)z);
  lua_rawseti(L, -2, 3);
}

static int ground_step(lua_State *L, ikrig_runtime *rt, void *arg) {
  ground_args *g = (ground_args *)arg;
  int home = push_home(L, rt), ground;
  double p[3];
  g->hit = 0;
  lua_getfield(L, home, "scene");
  if (lua_getfield(L, -1, "ground") == LUA_TNIL) return 0;
  ground = lua_gettop(L);
  if (lua_getfield(L, ground, "raycast") != LUA_TFUNCTION)
    return luaL_error(L, "scene.ground has no raycast()");
  lua_pushvalue(L, ground);
  push_point(L, g->x, 1e4, g->z);
  push_point(L, 0, -1, 0);
  lua_pushnumber(L, (lua_Number)2e4);
  lua_call(L, 4, 2);
  if (!lua_toboolean(L, -2)) return 0;
  if (!read_numbers(L, -1, p, 3)) return luaL_error(L, "scene.ground:raycast() returned no point");
  g->hit = 1;
  g->y = p[1];
  return 0;
}

int ikrig_runtime_ground(ikrig_runtime *rt, double x, double z, double *y) {
  ground_args g;
  g.x = x;
  g.z = z;
  g.y = 0;
  g.hit = 0;
  if (protect(rt, ground_step, &g) != 0) return -1;
  if (g.hit && y) *y = g.y;
  return g.hit;
}
