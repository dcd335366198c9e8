/*
 * ikrig_embed.h: running ikrig's rig scripts inside your own program.
 *
 * For a host that owns its lua_State (Lua 5.4) and wants the ik module, the runtime
 * (ik.runtime: rig scripts, hot reload, sandbox) and a scene, driven from its own frame
 * loop, with the poses read back in C. The ikrig program is built on exactly this.
 *
 *   lua_State *L = ikrig_newstate(256u << 20);      // or your own: luaL_newstate + luaL_openlibs
 *   ikrig_runtime *rt;
 *   ikrig_options opt;
 *   const char *scripts[] = {"rigs/arm.lua"};
 *   if (ikrig_open(L) != 0) ...                      // ik.core into package.preload, lua/ on package.path
 *   ikrig_options_init(&opt);
 *   opt.watch = 1;                                   // hot-reload the scripts on save
 *   rt = ikrig_runtime_new(L, scripts, 1, &opt);     // NULL: the message is on L's stack
 *   for (;;) {
 *     const ikrig_pose *pose;
 *     if (ikrig_runtime_update(rt, 1.0 / 60) != 0) fprintf(stderr, "%s\n", ikrig_runtime_error(rt));
 *     pose = ikrig_runtime_pose(rt);                 // bones and nodes, world space
 *     ...                                            // copy pose->transforms into your scene
 *   }
 *   ikrig_runtime_free(rt);
 *   ikrig_closestate(L);                             // lua_close for a state of your own
 *
 * Errors in rig scripts are not errors of these calls: the runtime reports them as events
 * (ikrig_options.on_event, ikrig_pose.events) and keeps the last good version running.
 * These calls fail (return -1 or NULL) only when the host side cannot go on: the scene
 * module or ik.runtime cannot be loaded, the scene's own code raised, memory ran out
 * outside any script.
 *
 * Everything runs on the calling thread; one ikrig_runtime belongs to one lua_State, and
 * a lua_State may hold several. Strings and arrays handed out (poses, scripts, events)
 * belong to the runtime and stay valid until its next update, pose or free call.
 */
#ifndef IKRIG_EMBED_H
#define IKRIG_EMBED_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "lua.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a Lua state with a memory cap (ikrig_alloc.c) ---- */

/* A new Lua state with the standard libraries open whose allocator refuses to grow past
 * `limit` bytes in total (0: no cap). A script that allocates past it gets Lua's "not
 * enough memory" error inside the script, which the runtime reports and pauses; the
 * host is not taken down. NULL when even the state cannot be made. Close it with
 * ikrig_closestate. */
lua_State *ikrig_newstate(size_t limit);
/* Closes a state made by ikrig_newstate (lua_close, then the allocator's bookkeeping). */
void ikrig_closestate(lua_State *L);
/* The bytes in use, the most ever in use and the cap of a state made by
 * ikrig_newstate (any pointer may be NULL). Returns 0, or -1 for another state. */
int ikrig_memory(lua_State *L, size_t *used, size_t *peak, size_t *limit);

/* ---- opening the module (ikrig_embed.c) ---- */

/* The environment variable naming where ikrig's Lua files are (the directory holding
 * ik/init.lua): one directory, or several separated by ';', searched before the
 * built-in location. */
#define IKRIG_LUA_PATH_ENV "IKRIG_LUA_PATH"

/* Makes `require("ik")`, `require("ik.runtime")` and the demo scene work in L: registers
 * the statically linked ik.core in package.preload, and puts ikrig's Lua directories on
 * front of package.path: those of $IKRIG_LUA_PATH, then the first that holds
 * ik/init.lua of <executable's directory>/../share/ikrig/lua (an installed ikrig), the
 * source tree's lua/ (a program inside the build tree only) and the share/ikrig/lua of
 * the prefix configured at build time. Needs the package library (luaL_openlibs).
 * Returns 0, or -1 when no Lua directory was found (ik.core is registered all the same,
 * and package.path is left as it was). Leaves the stack as it found it. */
int ikrig_open(lua_State *L);
/* ikrig_open with the directories given (';'-separated; NULL: none), for a host that
 * knows where they are: IKRIG_LUA_DIR, which the CMake package ikrig::embed defines as
 * <prefix>/share/ikrig/lua, or pkg-config's `pkg-config --variable=luadir ikrig`. */
int ikrig_open_dirs(lua_State *L, const char *dirs);

/* The directories ikrig_open puts on package.path, ';'-separated, written into buf;
 * returns buf, or NULL when none was found or buf is too small. */
const char *ikrig_lua_dirs(char *buf, size_t size);

/* ---- the runtime ---- */

typedef struct ikrig_runtime ikrig_runtime;

/* What the runtime reports about a script: kind is "load", "reload", "error", "paused",
 * "resumed" or "removed"; message (NULL when there is none) reads "file:line: message"
 * for errors. */
typedef struct ikrig_event {
  const char *kind;
  const char *script;
  const char *message;
} ikrig_event;

/* Called as each event happens, from inside ikrig_runtime_new or ikrig_runtime_update;
 * must not call back into the runtime. */
typedef void (*ikrig_event_fn)(void *ud, const ikrig_event *ev);

typedef struct ikrig_options {
  /* The scene module (see lua/ik/demo/scene.lua for the contract): its new() makes the
   * scene every script runs in, and its `scripts` are the scripts run when none are
   * given. Default "ik.demo.scene", the built-in demo. */
  const char *scene;
  /* Watch the script files and reload them when they change (default 0). */
  int watch;
  /* Instructions one update call of one script may take before it is paused (default
   * 1e7). */
  double budget;
  /* Seconds a changed file must stay quiet before it is reloaded (default 0.03). */
  double debounce;
  /* Bytes each script's own Lua state may hold over its lifetime (its memory_limit;
   * default 0: the runtime's, 64 MiB). Past it the script is paused; the host's state
   * (ikrig_newstate's cap) is apart. */
  double memory_limit;
  /* A flag that, once non-zero, stops the script running at its next instruction (the
   * runtime reports it as paused): a signal handler sets it (default NULL). */
  const volatile sig_atomic_t *interrupt;
  /* Events as they happen (default none: read them from ikrig_pose.events). */
  ikrig_event_fn on_event;
  void *event_ud;
  /* Read the constraint shapes of chains reported with their chain (ikrig_chain's
   * constraints, for drawing them: JSON lines, the live view); default 1. Reading them
   * makes a few Lua tables per chain and frame: 0 skips them (n_constraints is then -1)
   * and leaves a frame allocation-free. */
  int constraint_shapes;
} ikrig_options;

/* Fills in the defaults. */
void ikrig_options_init(ikrig_options *opt);

/* Makes the scene and a runtime running the scripts given (file paths, run in that
 * order each frame; n = 0 runs the scene's own scripts). opt may be NULL (defaults).
 * The scripts are loaded here: errors in them come as events, not as failure. Returns
 * NULL when the scene or the runtime could not be made, with the message pushed on L's
 * stack. */
ikrig_runtime *ikrig_runtime_new(lua_State *L, const char *const *scripts, int n, const ikrig_options *opt);

/* One frame: the scene advances by dt seconds (scene:advance(dt)), then every script's
 * update(dt) runs, in order. Returns 0, or -1 when the host side failed (the message:
 * ikrig_runtime_error); the runtime is still usable after a failure. */
int ikrig_runtime_update(ikrig_runtime *rt, double dt);

/* The message of the last failure, or NULL. */
const char *ikrig_runtime_error(const ikrig_runtime *rt);

/* The scene's name (its `name` field, else the scene module's name). */
const char *ikrig_runtime_scene_name(const ikrig_runtime *rt);

/* Seconds spent in the runtime's update (all scripts) over every update so far. */
double ikrig_runtime_seconds(const ikrig_runtime *rt);

/* What the scene can draw a transform as. */
enum { IKRIG_BONE = 0, IKRIG_NODE = 1, IKRIG_TARGET = 2, IKRIG_POLE = 3 };

/* A bone of a skeleton, or a node of the scene, in world space. */
typedef struct ikrig_transform {
  const char *owner;  /* the skeleton's name; NULL for a node */
  const char *name;   /* the bone's or node's name */
  int parent;         /* index in ikrig_pose.transforms of the parent bone, or -1 */
  int role;           /* IKRIG_BONE, IKRIG_NODE, IKRIG_TARGET or IKRIG_POLE */
  int trail;          /* 1 when the scene asks for its trail to be drawn (feet) */
  double position[3]; /* x, y, z */
  double rotation[4]; /* quaternion x, y, z, w */
} ikrig_transform;

/* One constraint of a reported chain, as its chain:constraint_shapes() gave it in the
 * pose of the report (see ik.chain): a cone, or a hinge's arc. */
typedef struct ikrig_constraint_shape {
  int bone;            /* the bone it limits, 1-based (joint bone to bone + 1) */
  const char *kind;    /* "cone" or "hinge" (static strings) */
  double apex[3];      /* the bone's first joint */
  double direction[3]; /* unit: the parent bone's direction (bone 1: the base direction) */
  double axis[3];      /* hinge: the carried axis, unit; cone: zeros */
  double angle;        /* cone: half-angle about direction, radians; hinge: 0 */
  double min, max;     /* hinge: range about axis from direction, radians; cone: 0 */
  double length;       /* the bone's length (how far to draw) */
} ikrig_constraint_shape;

/* One chain's result for the frame, as a script reported it with scene.report. */
typedef struct ikrig_chain {
  const char *name;
  const char *script; /* the reporting script's path, or NULL when not known */
  int reached;
  double distance; /* tip to target; NaN when not given */
  int iterations;  /* -1 when not given */
  /* scene.report's optional 5th argument, the chain (anything with a
   * constraint_shapes() method, as ik.chain has): its shapes, read at the report.
   * n_constraints is -1 when no chain was given. */
  const ikrig_constraint_shape *constraints;
  int n_constraints;
} ikrig_chain;

/* The scene after the last update. */
typedef struct ikrig_pose {
  long frame;  /* 0 for the first update */
  double time; /* seconds simulated, the dts summed, after this frame */
  /* The skeletons in order of name, each one's bones in the order it lists them, then
   * the nodes in order of name. */
  const ikrig_transform *transforms;
  int n_transforms;
  const ikrig_chain *chains; /* reported during this update, in order */
  int n_chains;
  const ikrig_event *events; /* since the update before (the first has the loads) */
  int n_events;
} ikrig_pose;

/* The pose after the last update (read from the scene on the first call after each
 * update), or NULL on failure (ikrig_runtime_error). Before any update: frame -1. */
const ikrig_pose *ikrig_runtime_pose(ikrig_runtime *rt);

/* A script as the runtime runs it, with what it reported so far. */
typedef struct ikrig_script {
  const char *path;
  const char *status;    /* the runtime's word for it: "running", "paused", ... */
  const char *error;     /* its last error, "file:line: message", or NULL */
  int active;            /* whether it ran in the last update (not paused or failed) */
  long frames;           /* updates in which it ran */
  long reports;          /* scene.report calls */
  long reached;          /* of which reached */
  double worst_distance; /* the largest distance reported (0 when none) */
  double seconds;        /* time in its updates, when the runtime tells; -1 when not */
} ikrig_script;

/* The scripts, in the order they run (valid until the next update or free). */
int ikrig_runtime_script_count(const ikrig_runtime *rt);
const ikrig_script *ikrig_runtime_script(const ikrig_runtime *rt, int i);

/* The ground's height under (x, z): casts a ray straight down onto the scene's ground.
 * Returns 1 and sets *y on a hit, 0 when there is no ground there (or no ground at
 * all), -1 on failure. */
int ikrig_runtime_ground(ikrig_runtime *rt, double x, double z, double *y);

/* Closes the runtime (rt:close()) and lets go of the scene. The lua_State stays yours. */
void ikrig_runtime_free(ikrig_runtime *rt);

/* ---- poses as JSON lines (ikrig_json.c) ---- */

/* Writes the pose as one line of JSON (the schema is in ikrig_json.c and docs/json-schema.md):
 *   {"frame":0,"t":0.0166667,"skeletons":{"arm":{"base":[x,y,z,qx,qy,qz,qw],...}},
 *    "nodes":{"target":[x,y,z,qx,qy,qz,qw]},
 *    "chains":[{"name":"arm","script":"rig.lua","reached":true,"distance":0.0004,
 *               "iterations":null}],
 *    (a chain reported with its chain object also has, last, "constraints":[{"bone":2,
 *     "kind":"cone","apex":[x,y,z],"direction":[x,y,z],"angle":a,"length":l}, {"bone":3,
 *     "kind":"hinge","apex":..,"direction":..,"axis":[x,y,z],"min":a,"max":b,
 *     "length":l}]; a chain reported without one is written exactly as before)
 *    "events":[{"kind":"load","script":"rig.lua","message":null}]}
 * Returns 0, or -1 when writing failed (errno says why). */
int ikrig_pose_write_json(const ikrig_pose *pose, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* IKRIG_EMBED_H */
