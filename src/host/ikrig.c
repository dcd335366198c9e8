/*
 * ikrig: runs rig scripts on a scene, headless or live, with hot reload.
 *
 *   ikrig run [SCRIPT...] [--frames N] [--dt S] [--out FILE.jsonl] [--svg FILE.svg] [--view side|top|front]
 *   ikrig watch [SCRIPT...] [--frames N] [--dt S]
 *   ikrig view [SCRIPT...] [--port P] [--host H] [--model FILE]   (ikrig_view.c: live in the browser)
 *
 * With no SCRIPT, the built-in demo (the scene module's own scripts). Lua 5.4 is embedded
 * with the ik module linked in; the state's memory is capped (--memory-limit) so a
 * script's memory bomb fails inside the script. This file is the command line only:
 * the embedding is ikrig_embed.c (the API any host can use), the JSON lines
 * ikrig_json.c, the picture ikrig_svg.c.
 *
 * Exit status: 0; 1 when the host failed, or (run) a script failed to load or was
 * stopped; 2 for bad usage (unknown option, bad value, missing script file).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ikrig_embed.h"
#include "ikrig_svg.h"
#include "ikrig_view.h"

#ifndef IKRIG_VERSION
#define IKRIG_VERSION "0"
#endif

static const char USAGE[] =
    "usage: ikrig <command> [SCRIPT...] [options]\n"
    "\n"
    "Runs rig scripts (Lua files defining update(dt)) on a scene with the ik module.\n"
    "With no SCRIPT, the built-in demo.\n"
    "\n"
    "commands:\n"
    "  run     headless, as fast as it goes: poses as JSON lines, a drawing as SVG,\n"
    "          a summary line per script\n"
    "  watch   in real time, reloading each script when it is saved; Ctrl-C stops\n"
    "  view    like watch, live in the browser: drag targets and poles, see reloads\n"
    "  help    this text; 'ikrig help run' or 'ikrig run --help' for a command's options\n"
    "\n"
    "  --version   prints the version\n";

static const char RUN_USAGE[] =
    "usage: ikrig run [SCRIPT...] [options]\n"
    "\n"
    "Runs the scripts (with none, the built-in demo) for a number of frames, headless,\n"
    "then prints one line per script: frames it ran, chains reached (% of the results it\n"
    "reported with scene.report), worst tip error, time per frame.\n"
    "\n"
    "  --frames N          frames to run (default 240)\n"
    "  --dt S              seconds per frame (default 0.0166667, 60 per second)\n"
    "  --out FILE          every frame's pose as a line of JSON ('-': standard output)\n"
    "  --svg FILE          a drawing of the run: ground, trails, earlier poses, the last pose\n"
    "  --view VIEW         the drawing's view: side (default), top or front\n"
    "  --scene MODULE      the scene module (default ik.demo.scene)\n"
    "  --model FILE        your own character (.glb, .gltf, .vrm): the scene ik.demo.model\n"
    "  --budget N          instructions per script update before it is paused (default 1e7)\n"
    "  --memory-limit MB   memory cap of the Lua state, 0 for none (default 256)\n"
    "  -q, --quiet         no summary\n"
    "  -h, --help          this text\n"
    "\n"
    "Same scripts, same options: the same JSON lines, byte for byte.\n"
    "Exit status: 0; 1 when a script failed or was stopped, or the host failed; 2 for bad usage.\n";

static const char WATCH_USAGE[] =
    "usage: ikrig watch [SCRIPT...] [options]\n"
    "\n"
    "Runs the scripts (with none, the built-in demo) in real time and reloads each one\n"
    "when its file is saved: prints every reload and every error (file:line: message).\n"
    "A script that fails keeps its last good version running. Stops on Ctrl-C (SIGINT)\n"
    "or SIGTERM, or after --frames, and prints a summary line per script.\n"
    "\n"
    "  --frames N          stop after N frames (default 0: run until stopped)\n"
    "  --dt S              seconds per frame (default 0.0166667, 60 per second)\n"
    "  --debounce S        seconds a changed file must stay quiet before reloading (default 0.03)\n"
    "  --scene MODULE      the scene module (default ik.demo.scene)\n"
    "  --model FILE        your own character (.glb, .gltf, .vrm): the scene ik.demo.model\n"
    "  --budget N          instructions per script update before it is paused (default 1e7)\n"
    "  --memory-limit MB   memory cap of the Lua state, 0 for none (default 256)\n"
    "  -q, --quiet         no summary\n"
    "  -h, --help          this text\n";

static const char VIEW_USAGE[] =
    "usage: ikrig view [SCRIPT...] [options]\n"
    "\n"
    "Runs the scripts (with none, the built-in demo) in real time, reloading each one when\n"
    "it is saved, and serves a page that draws the scene live in 3D (three.js): drag the\n"
    "targets and poles, pause, step, change the speed; reloads and errors show on it.\n"
    "Prints the page's address; Ctrl-C (SIGINT) or SIGTERM stops.\n"
    "\n"
    "  --port P            the port (default 7878; 0: any free one, printed)\n"
    "  --host H            the address to listen on (default 127.0.0.1, and only clients on\n"
    "                      this machine get in); given, any client that reaches it does,\n"
    "                      by the name H or a number (docs/live-view-security.md)\n"
    "  --frames N          stop after N frames (default 0: run until stopped)\n"
    "  --dt S              seconds per frame (default 0.0166667, 60 per second)\n"
    "  --debounce S        seconds a changed file must stay quiet before reloading (default 0.03)\n"
    "  --scene MODULE      the scene module (default ik.demo.scene)\n"
    "  --model FILE        your own character (.glb, .gltf, .vrm with a skinned mesh): its\n"
    "                      skeleton, driven by the humanoid rig from its bone map (scene\n"
    "                      ik.demo.model), drawn skinned; the page loads only this file\n"
    "  --budget N          instructions per script update before it is paused (default 1e7)\n"
    "  --memory-limit MB   memory cap of the Lua state, 0 for none (default 256)\n"
    "  -q, --quiet         no summary\n"
    "  -h, --help          this text\n"
    "\n"
    "The page's files: $" IKRIG_VIEW_DIR_ENV
    ", or beside the program: <prefix>/share/ikrig/view\n"
    "installed, the source tree's src/host/view in the build tree (three.js: the build runs\n"
    "'npm ci' into the build tree).\n";

#define MODEL_SCENE "ik.demo.model" /* the scene of --model */

typedef enum command { CMD_RUN, CMD_WATCH, CMD_VIEW } command;

typedef struct config {
  command cmd;
  long frames;
  double dt, debounce, budget;
  long memory_mb;
  const char *out, *svg, *scene;
  ikrig_view view;
  const char *host;  /* view: --host, NULL when not given */
  const char *model; /* view: --model, NULL when not given */
  long port;         /* view: --port */
  int quiet;
  const char **scripts;
  int n_scripts;
} config;

typedef struct context {
  command cmd;
  long errors; /* error events */
} context;

static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* SIGINT and SIGTERM set stop_requested, which the frame loops read between frames and
 * the scripts' sandboxes at every instruction. No SA_RESTART: a frame's sleep wakes up. */
static void install_stop(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

/* "ikrig: ..." on stderr; returns 2 (bad usage). */
static int usage_error(const char *fmt, ...) {
  va_list ap;
  fputs("ikrig: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi)) return -1;
  *out = v;
  return 0;
}

/* Parses argv[first...] into c. 0, 1 when help was printed, or 2 after a usage error. */
static int parse_options(int argc, char **argv, int first, config *c) {
  int i, options_done = 0;
  const char *usage = c->cmd == CMD_RUN ? RUN_USAGE : c->cmd == CMD_VIEW ? VIEW_USAGE : WATCH_USAGE;
  const char *cmd = c->cmd == CMD_RUN ? "run" : c->cmd == CMD_VIEW ? "view" : "watch";
  for (i = first; i < argc; i++) {
    const char *arg = argv[i], *value = NULL, *eq;
    char name[64];
    if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
      c->scripts[c->n_scripts++] = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      options_done = 1;
      continue;
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      fputs(usage, stdout);
      return 1;
    }
    if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
      c->quiet = 1;
      continue;
    }
    /* --name value or --name=value */
    eq = strchr(arg, '=');
    if (eq && (size_t)(eq - arg) < sizeof name) {
      memcpy(name, arg, (size_t)(eq - arg));
      name[eq - arg] = '\0';
      value = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", arg);
    }
#define IS(opt) (strcmp(name, opt) == 0)
    if (!(IS("--frames") || IS("--dt") || IS("--scene") || IS("--model") || IS("--budget") ||
          IS("--memory-limit") || (c->cmd == CMD_RUN && (IS("--out") || IS("--svg") || IS("--view"))) ||
          (c->cmd != CMD_RUN && IS("--debounce")) || (c->cmd == CMD_VIEW && (IS("--port") || IS("--host")))))
      return usage_error("unknown option '%s' for '%s' (see 'ikrig %s --help')", arg, cmd, cmd);
    if (!value) {
      if (i + 1 >= argc) return usage_error("option '%s' needs a value (see 'ikrig %s --help')", name, cmd);
      value = argv[++i];
    }
    if (IS("--frames")) {
      if (parse_long(value, c->cmd == CMD_RUN ? 1 : 0, 1000000000L, &c->frames) != 0)
        return usage_error("--frames: a whole number %s expected, got '%s'",
                           c->cmd == CMD_RUN ? ">= 1" : ">= 0", value);
    } else if (IS("--dt")) {
      if (parse_double(value, 1e-6, 10, &c->dt) != 0)
        return usage_error("--dt: seconds in (0, 10] expected, got '%s'", value);
    } else if (IS("--debounce")) {
      if (parse_double(value, 0, 10, &c->debounce) != 0)
        return usage_error("--debounce: seconds in [0, 10] expected, got '%s'", value);
    } else if (IS("--budget")) {
      if (parse_double(value, 1000, 1e15, &c->budget) != 0)
        return usage_error("--budget: a number of instructions >= 1000 expected, got '%s'", value);
    } else if (IS("--memory-limit")) {
      if (parse_long(value, 0, 1L << 20, &c->memory_mb) != 0 || (c->memory_mb > 0 && c->memory_mb < 8))
        return usage_error("--memory-limit: megabytes (0 for none, else at least 8) expected, got '%s'",
                           value);
    } else if (IS("--scene")) {
      if (!*value) return usage_error("--scene: a module name expected");
      c->scene = value;
    } else if (IS("--port")) {
      if (parse_long(value, 0, 65535, &c->port) != 0)
        return usage_error("--port: a port number in [0, 65535] expected, got '%s'", value);
    } else if (IS("--model")) {
      if (!*value) return usage_error("--model: a .glb, .gltf or .vrm file expected");
      c->model = value;
    } else if (IS("--host")) {
      if (!*value) return usage_error("--host: an address expected");
      c->host = value;
    } else if (IS("--out")) {
      c->out = value;
    } else if (IS("--svg")) {
      c->svg = value;
    } else if (IS("--view")) {
      if (ikrig_view_parse(value, &c->view) != 0)
        return usage_error("--view: side, top or front expected, got '%s'", value);
    }
#undef IS
  }
  if (c->model && c->scene)
    return usage_error("--model and --scene: --model is its own scene (ik.demo.model)");
  for (i = 0; i < c->n_scripts; i++) {
    struct stat st;
    int j;
    if (stat(c->scripts[i], &st) != 0) return usage_error("%s: %s", c->scripts[i], strerror(errno));
    if (S_ISDIR(st.st_mode)) return usage_error("%s: is a directory, not a script", c->scripts[i]);
    for (j = 0; j < i; j++)
      if (strcmp(c->scripts[i], c->scripts[j]) == 0) return usage_error("%s: given twice", c->scripts[i]);
  }
  return 0;
}

static void on_event(void *ud, const ikrig_event *ev) {
  const context *ctx = (const context *)ud;
  FILE *f = ctx->cmd == CMD_WATCH ? stdout : stderr;
  const char *script = ev->script ? ev->script : "?";
  if (strcmp(ev->kind, "error") == 0) { /* a version that failed to load: the last good one runs on */
    ((context *)ud)->errors++;
    fprintf(f, "%s\n", ev->message ? ev->message : script);
  } else if (strcmp(ev->kind, "paused") == 0) { /* an error in update, the budget, the memory */
    ((context *)ud)->errors++;
    if (ev->message) fprintf(f, "%s\n", ev->message);
    fprintf(f, "ikrig: paused %s until it is saved again\n", script);
  } else if (strcmp(ev->kind, "load") == 0) {
    if (ctx->cmd == CMD_WATCH) fprintf(f, "ikrig: loaded %s\n", script);
  } else if (strcmp(ev->kind, "reload") == 0) {
    fprintf(f, "ikrig: reloaded %s\n", script);
  } else if (strcmp(ev->kind, "removed") == 0) {
    fprintf(f, "ikrig: %s was removed; its last version keeps running\n", script);
  } else if (ev->message) {
    fprintf(f, "ikrig: %s %s: %s\n", ev->kind, script, ev->message);
  } else {
    fprintf(f, "ikrig: %s %s\n", ev->kind, script);
  }
  fflush(f);
}

/* The first line of s, at most n bytes, into buf. */
static const char *first_line(const char *s, char *buf, size_t n) {
  size_t len = strcspn(s, "\n");
  if (len >= n) len = n - 1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  return buf;
}

static void print_summary(FILE *f, const ikrig_runtime *rt, long frames) {
  int i, n = ikrig_runtime_script_count(rt);
  double all = frames > 0 ? ikrig_runtime_seconds(rt) / (double)frames * 1e6 : 0;
  for (i = 0; i < n; i++) {
    const ikrig_script *s = ikrig_runtime_script(rt, i);
    char line[240];
    fprintf(f, "%s: %ld frame%s", s->path, s->frames, s->frames == 1 ? "" : "s");
    if (s->reports > 0)
      fprintf(f, ", reached %.1f%% of %ld chain solves, worst tip error %.4g",
              100.0 * (double)s->reached / (double)s->reports, s->reports, s->worst_distance);
    else
      fputs(", no chain reported", f);
    if (s->seconds >= 0)
      fprintf(f, ", %.1f us per frame", s->frames > 0 ? s->seconds / (double)s->frames * 1e6 : 0.0);
    else
      fprintf(f, ", %.1f us per frame (all scripts)", all);
    if (!s->active)
      fprintf(f, "; stopped (%s)%s%s", s->status, s->error ? ": " : "",
              s->error ? first_line(s->error, line, sizeof line) : "");
    fputc('\n', f);
  }
}

typedef struct ground_ctx {
  ikrig_runtime *rt;
} ground_ctx;

static int ground_height(void *ud, double x, double z, double *y) {
  return ikrig_runtime_ground(((ground_ctx *)ud)->rt, x, z, y);
}

static double monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
  /* interrupted by a signal: the caller looks at stop_requested */
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int run_frames(const config *c, ikrig_runtime *rt, context *ctx) {
  FILE *out = NULL;
  ikrig_svg *svg = NULL;
  long f;
  int status = 0, out_is_stdout = c->out && strcmp(c->out, "-") == 0;
  (void)ctx;
  if (c->out) {
    out = out_is_stdout ? stdout : fopen(c->out, "w");
    if (!out) {
      fprintf(stderr, "ikrig: %s: %s\n", c->out, strerror(errno));
      return 2;
    }
  }
  if (c->svg && !(svg = ikrig_svg_new(c->view))) {
    fprintf(stderr, "ikrig: out of memory\n");
    status = 1;
  }
  for (f = 0; f < c->frames && status == 0 && !stop_requested; f++) {
    const ikrig_pose *pose;
    if (ikrig_runtime_update(rt, c->dt) != 0) {
      fprintf(stderr, "ikrig: frame %ld: %s\n", f, ikrig_runtime_error(rt));
      status = 1;
      break;
    }
    if (!out && !svg) continue;
    if (!(pose = ikrig_runtime_pose(rt))) {
      fprintf(stderr, "ikrig: frame %ld: %s\n", f, ikrig_runtime_error(rt));
      status = 1;
      break;
    }
    if (out && ikrig_pose_write_json(pose, out) != 0) {
      fprintf(stderr, "ikrig: %s: %s\n", c->out, strerror(errno));
      status = 1;
    }
    if (svg && ikrig_svg_add(svg, pose) != 0) {
      fprintf(stderr, "ikrig: out of memory\n");
      status = 1;
    }
  }
  if (out && !out_is_stdout && fclose(out) != 0 && status == 0) {
    fprintf(stderr, "ikrig: %s: %s\n", c->out, strerror(errno));
    status = 1;
  } else if (out_is_stdout) {
    fflush(stdout);
  }
  if (svg && status == 0) {
    FILE *sf = fopen(c->svg, "w");
    ground_ctx g;
    char title[300];
    g.rt = rt;
    snprintf(title, sizeof title, "ikrig: %s", ikrig_runtime_scene_name(rt));
    if (!sf) {
      fprintf(stderr, "ikrig: %s: %s\n", c->svg, strerror(errno));
      status = 1;
    } else {
      int wrote = ikrig_svg_write(svg, sf, title, ground_height, &g);
      if (fclose(sf) != 0 || wrote != 0) {
        const char *why = ikrig_runtime_error(rt);
        fprintf(stderr, "ikrig: %s: %s\n", c->svg, wrote != 0 && why ? why : strerror(errno));
        status = 1;
      }
    }
  }
  ikrig_svg_free(svg);
  if (!c->quiet) print_summary(out_is_stdout ? stderr : stdout, rt, f);
  return status;
}

static int watch_frames(const config *c, ikrig_runtime *rt) {
  double next;
  long f = 0;
  int status = 0;
  next = monotonic();
  while (!stop_requested && (c->frames == 0 || f < c->frames)) {
    double now;
    if (ikrig_runtime_update(rt, c->dt) != 0) {
      fprintf(stderr, "ikrig: frame %ld: %s\n", f, ikrig_runtime_error(rt));
      status = 1;
      break;
    }
    f++;
    next += c->dt;
    now = monotonic();
    if (next < now - c->dt) next = now; /* fell behind: go on from here, not catch up */
    while (!stop_requested && now < next) {
      sleep_until(next);
      now = monotonic();
    }
  }
  printf("ikrig: stopped after %ld frame%s\n", f, f == 1 ? "" : "s");
  if (!c->quiet) print_summary(stdout, rt, f);
  return status;
}

static int view_frames(const config *c, ikrig_runtime *rt, lua_State *L) {
#ifdef IKRIG_NO_VIEW
  (void)c, (void)rt, (void)L;
  fprintf(stderr, "ikrig: built without the view (IK_VIEW=OFF)\n");
  return 1;
#else
  ikrig_view_options vo;
  int status;
  setvbuf(stdout, NULL, _IOLBF, 0);
  vo.host = c->host;
  vo.port = (int)c->port;
  vo.dt = c->dt;
  vo.frames = c->frames;
  vo.model = c->model;
  status = ikrig_view_run(rt, L, &vo, &stop_requested);
  if (!c->quiet) print_summary(stdout, rt, 0);
  return status;
#endif
}

/* --model: the scene ik.demo.model, given the file once it has checked it (a file that
 * cannot be imported, has no skin or no humanoid bones is bad usage: 2). */
static int use_model(lua_State *L, config *c) {
  int ok;
  lua_getglobal(L, "require");
  lua_pushstring(L, MODEL_SCENE);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    fprintf(stderr, "ikrig: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
  }
  lua_getfield(L, -1, "check");
  lua_pushstring(L, c->model);
  if (lua_pcall(L, 1, 2, 0) != LUA_OK) {
    fprintf(stderr, "ikrig: --model %s: %s\n", c->model, lua_tostring(L, -1));
    lua_pop(L, 2);
    return 1;
  }
  ok = lua_toboolean(L, -2);
  if (!ok) fprintf(stderr, "ikrig: --model %s: %s\n", c->model, lua_tostring(L, -1));
  lua_pop(L, 2);
  if (ok) {
    lua_pushstring(L, c->model);
    lua_setfield(L, -2, "file");
    c->scene = MODEL_SCENE;
  }
  lua_pop(L, 1);
  return !ok;
}

static int run_command(config *c) {
  lua_State *L;
  ikrig_runtime *rt;
  ikrig_options opt;
  context ctx;
  int status, i;
  L = ikrig_newstate((size_t)c->memory_mb << 20);
  if (!L) {
    fprintf(stderr, "ikrig: cannot make a Lua state (out of memory)\n");
    return 1;
  }
  if (ikrig_open(L) != 0) {
    fprintf(stderr,
            "ikrig: cannot find ikrig's Lua files (ik/init.lua); set %s to the directory holding ik/\n",
            IKRIG_LUA_PATH_ENV);
    ikrig_closestate(L);
    return 1;
  }
  if (c->model && use_model(L, c) != 0) {
    ikrig_closestate(L);
    return 2;
  }
  ikrig_options_init(&opt);
  if (c->scene) opt.scene = c->scene;
  opt.watch = c->cmd != CMD_RUN;
#ifndef IKRIG_NO_VIEW
  if (c->cmd == CMD_VIEW) opt.scene = ikrig_view_scene(L, c->scene); /* wraps it: drags stay put */
#endif
  /* Only the JSON lines and the view draw constraint shapes; reading them costs the frame
   * about 2 KB of Lua garbage, which a run that writes neither should not pay. */
  opt.constraint_shapes = c->cmd == CMD_VIEW || (c->cmd == CMD_RUN && c->out);
  opt.budget = c->budget;
  opt.debounce = c->debounce;
  /* the runtime's own check, per call into a script: a quarter of the state's cap */
  opt.memory_limit = (double)((size_t)c->memory_mb << 20) / 4;
  opt.interrupt = &stop_requested;
  install_stop();
  ctx.cmd = c->cmd;
  ctx.errors = 0;
  opt.on_event = on_event;
  opt.event_ud = &ctx;
  if (c->cmd == CMD_WATCH) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ikrig: watching %s at %.0f frames per second; Ctrl-C stops\n",
           c->n_scripts == 0   ? "the built-in demo"
           : c->n_scripts == 1 ? "1 script"
                               : "the scripts",
           1.0 / c->dt);
  }
  rt = ikrig_runtime_new(L, c->scripts, c->n_scripts, &opt);
  if (!rt) {
    fprintf(stderr, "ikrig: %s\n", lua_tostring(L, -1));
    ikrig_closestate(L);
    return 1;
  }
  if (c->cmd == CMD_RUN) {
    status = run_frames(c, rt, &ctx);
    /* a script that failed or was stopped fails the run */
    for (i = 0; i < ikrig_runtime_script_count(rt) && status == 0; i++)
      if (!ikrig_runtime_script(rt, i)->active) status = 1;
    if (ctx.errors > 0 && status == 0) status = 1;
  } else if (c->cmd == CMD_VIEW) {
    status = view_frames(c, rt, L);
  } else {
    status = watch_frames(c, rt);
  }
  ikrig_runtime_free(rt);
  ikrig_closestate(L);
  return status;
}

int main(int argc, char **argv) {
  config c;
  const char *cmd;
  int r;
  if (argc < 2) {
    fputs(USAGE, stderr);
    return 2;
  }
  cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || (strcmp(cmd, "help") == 0 && argc == 2)) {
    fputs(USAGE, stdout);
    return 0;
  }
  if (strcmp(cmd, "help") == 0) {
    if (strcmp(argv[2], "run") == 0)
      fputs(RUN_USAGE, stdout);
    else if (strcmp(argv[2], "watch") == 0)
      fputs(WATCH_USAGE, stdout);
    else if (strcmp(argv[2], "view") == 0)
      fputs(VIEW_USAGE, stdout);
    else
      return usage_error("no command '%s' (see 'ikrig --help')", argv[2]);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("ikrig %s (%s)\n", IKRIG_VERSION, LUA_RELEASE);
    return 0;
  }
  memset(&c, 0, sizeof c);
  if (strcmp(cmd, "run") == 0) {
    c.cmd = CMD_RUN;
    c.frames = 240;
  } else if (strcmp(cmd, "watch") == 0) {
    c.cmd = CMD_WATCH;
    c.frames = 0;
  } else if (strcmp(cmd, "view") == 0) {
    c.cmd = CMD_VIEW;
    c.frames = 0;
    c.port = IKRIG_VIEW_DEFAULT_PORT;
  } else if (cmd[0] == '-') {
    return usage_error("unknown option '%s' (see 'ikrig --help')", cmd);
  } else {
    return usage_error("no command '%s' (see 'ikrig --help')", cmd);
  }
  c.dt = 1.0 / 60;
  c.debounce = 0.03;
  c.budget = 1e7;
  c.memory_mb = 256;
  c.view = IKRIG_VIEW_SIDE;
  c.scripts = (const char **)calloc((size_t)argc, sizeof *c.scripts);
  if (!c.scripts) return 1;
  r = parse_options(argc, argv, 2, &c);
  if (r == 0)
    r = run_command(&c);
  else if (r == 1)
    r = 0; /* help */
  free(c.scripts);
  return r;
}
