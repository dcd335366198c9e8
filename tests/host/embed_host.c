/*
 * embed_host: a small C host that owns its lua_State and embeds ikrig through
 * ikrig_embed.h, as an application would; run by the test command (ctest host_embed).
 *
 * Checks: ik.core is preloaded and ik loads; the built-in demo runs and its pose reads
 * back (skeleton, parents, roles, the hand on the target, chain reports, the ground);
 * the JSON line is complete; user scripts run in order, a script's runtime error comes
 * as an event with file:line while the other keeps running; a memory bomb under
 * ikrig_newstate's cap is stopped inside its script and the host goes on; a scene module
 * that does not exist gives NULL and a message.
 *
 * Exit status 0 when all pass, 1 on a failure, 77 (skipped) when ik.runtime is not
 * there to run.
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ikrig_embed.h"
#include "lauxlib.h"
#include "lualib.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static char dir[] = "/tmp/ikrig_embed_XXXXXX";

static const char *write_script(const char *name, const char *text) {
  static char paths[8][512];
  static int next = 0;
  char *path = paths[next++ % 8];
  FILE *f;
  snprintf(path, sizeof paths[0], "%s/%s", dir, name);
  f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  return path;
}

/* Events seen through ikrig_options.on_event ("error": a version that failed to load;
 * "paused": an error in update). */
typedef struct seen {
  int loads, errors;
  char last_error[512];
} seen;

static void on_event(void *ud, const ikrig_event *ev) {
  seen *s = (seen *)ud;
  if (strcmp(ev->kind, "load") == 0) s->loads++;
  if (strcmp(ev->kind, "error") == 0 || strcmp(ev->kind, "paused") == 0) {
    s->errors++;
    snprintf(s->last_error, sizeof s->last_error, "%s", ev->message ? ev->message : "");
  }
}

static const ikrig_transform *find(const ikrig_pose *p, const char *owner, const char *name) {
  int i;
  for (i = 0; i < p->n_transforms; i++) {
    const ikrig_transform *t = &p->transforms[i];
    if (((owner == NULL && t->owner == NULL) || (owner && t->owner && strcmp(owner, t->owner) == 0)) &&
        strcmp(t->name, name) == 0)
      return t;
  }
  return NULL;
}

static double dist(const double *a, const double *b) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static const ikrig_script *script_named(const ikrig_runtime *rt, const char *path) {
  int i;
  for (i = 0; i < ikrig_runtime_script_count(rt); i++)
    if (strcmp(ikrig_runtime_script(rt, i)->path, path) == 0) return ikrig_runtime_script(rt, i);
  return NULL;
}

/* The built-in demo on a state the host made itself. */
static void test_demo(lua_State *L) {
  ikrig_runtime *rt = ikrig_runtime_new(L, NULL, 0, NULL);
  const ikrig_pose *pose;
  const ikrig_transform *hips, *shoulder, *elbow, *hand, *target, *pole;
  const ikrig_script *s;
  double y = -1, tol;
  int f, top = lua_gettop(L);
  FILE *tmp;
  char line[16384];
  if (!rt) {
    fprintf(stderr, "demo: %s\n", lua_tostring(L, -1));
    failures++;
    lua_pop(L, 1);
    return;
  }
  pose = ikrig_runtime_pose(rt);
  CHECK(pose && pose->frame == -1 && pose->n_transforms > 0);
  for (f = 0; f < 120; f++) CHECK(ikrig_runtime_update(rt, 1.0 / 60) == 0);
  pose = ikrig_runtime_pose(rt);
  CHECK(pose != NULL);
  if (!pose) {
    fprintf(stderr, "pose: %s\n", ikrig_runtime_error(rt));
    ikrig_runtime_free(rt);
    return;
  }
  CHECK(pose->frame == 119);
  CHECK(fabs(pose->time - 2.0) < 1e-9);
  /* the demo (lua/ik/demo/scene.lua): a humanoid reaching with its right hand, a walker */
  hips = find(pose, "humanoid", "hips");
  shoulder = find(pose, "humanoid", "r_upper_arm");
  elbow = find(pose, "humanoid", "r_lower_arm");
  hand = find(pose, "humanoid", "r_hand");
  target = find(pose, NULL, "reach_target");
  pole = find(pose, NULL, "elbow_pole");
  CHECK(hips && shoulder && elbow && hand && target && pole && find(pose, "walker", "body"));
  if (hips && shoulder && elbow && hand && target && pole) {
    CHECK(hips->parent == -1);
    CHECK(elbow->parent == (int)(shoulder - pose->transforms));
    CHECK(target->role == IKRIG_TARGET && pole->role == IKRIG_POLE && hand->role == IKRIG_BONE);
    CHECK(hand->trail == 1 && hips->trail == 0);
    CHECK(dist(hand->position, target->position) < 1e-3); /* the rig holds the hand on the target */
    CHECK(fabs(hand->rotation[0] * hand->rotation[0] + hand->rotation[1] * hand->rotation[1] +
               hand->rotation[2] * hand->rotation[2] + hand->rotation[3] * hand->rotation[3] - 1) < 1e-6);
    CHECK(pose->transforms[0].owner != NULL); /* skeletons first, nodes after, sorted by name */
    CHECK(pole < target);
  }
  CHECK(pose->n_chains == 9); /* humanoid: arm, two legs, look; walker: four legs, tail */
  if (pose->n_chains == 9) {
    static const char *const tail[] = {"tail", "tail_2", "tail_3", "tail_4", "tail_tip"};
    const ikrig_chain *t = &pose->chains[8];
    CHECK(strcmp(pose->chains[0].name, "right_arm") == 0);
    CHECK(pose->chains[0].script != NULL && strstr(pose->chains[0].script, "humanoid.lua") != NULL);
    CHECK(pose->chains[0].reached);
    CHECK(pose->chains[7].script != NULL && strstr(pose->chains[7].script, "walker.lua") != NULL);
    for (f = 0; f < 8; f++) CHECK(pose->chains[f].n_constraints == -1 && pose->chains[f].constraints == NULL);
    /* the tail, reported with its chain: a cone on each of its four bones, at its joints */
    CHECK(strcmp(t->name, "tail") == 0 && t->script != NULL && strstr(t->script, "walker.lua") != NULL);
    CHECK(t->n_constraints == 4 && t->constraints != NULL);
    if (t->n_constraints == 4 && t->constraints) {
      for (f = 0; f < 4; f++) {
        const ikrig_constraint_shape *k = &t->constraints[f];
        const ikrig_transform *joint = find(pose, "walker", tail[f]),
                              *next = find(pose, "walker", tail[f + 1]);
        CHECK(k->bone == f + 1 && strcmp(k->kind, "cone") == 0);
        CHECK(fabs(k->angle - (f == 0 ? 35 : 25) * M_PI / 180) < 1e-6);
        CHECK(fabs(k->direction[0] * k->direction[0] + k->direction[1] * k->direction[1] +
                   k->direction[2] * k->direction[2] - 1) < 1e-6);
        CHECK(k->axis[0] == 0 && k->axis[1] == 0 && k->axis[2] == 0 && k->min == 0 && k->max == 0);
        CHECK(joint && next);
        if (joint && next) {
          CHECK(dist(k->apex, joint->position) < 1e-6);
          CHECK(fabs(k->length - dist(joint->position, next->position)) < 1e-6);
        }
      }
    }
  }
  CHECK(ikrig_runtime_script_count(rt) == 2);
  s = ikrig_runtime_script(rt, 0);
  CHECK(s && s->active && s->frames == 120 && s->reports == 480 && s->reached > 400);
  s = ikrig_runtime_script(rt, 1);
  CHECK(s && s->active && s->frames == 120 && s->reports == 600);
  /* Heights come from rays cast down from 1e4 above: exact to the scalar type's rounding
   * at that distance (1e-9 in double; about 1e-3 in float). */
#ifdef IK_REAL_FLOAT
  tol = 2e-3;
#else
  tol = 1e-9;
#endif
  CHECK(ikrig_runtime_ground(rt, -1, 0.1, &y) == 1 && fabs(y) < tol);         /* the floor */
  CHECK(ikrig_runtime_ground(rt, 0.3, 0.1, &y) == 1 && fabs(y - 0.12) < tol); /* the first step */
  /* the JSON line: one whole object */
  tmp = tmpfile();
  CHECK(tmp != NULL);
  if (tmp) {
    CHECK(ikrig_pose_write_json(pose, tmp) == 0);
    rewind(tmp);
    CHECK(fgets(line, sizeof line, tmp) != NULL);
    CHECK(strncmp(line, "{\"frame\":119,\"t\":2,\"skeletons\":{\"humanoid\":{\"hips\":[", 52) == 0);
    CHECK(strlen(line) > 2 && strcmp(line + strlen(line) - 2, "}\n") == 0);
    CHECK(strstr(line, "\"chains\":[{\"name\":\"right_arm\",") != NULL);
    /* only the tail has "constraints", last in its object */
    {
      const char *c = strstr(line, "\"constraints\":");
      CHECK(c != NULL && strstr(c + 1, "\"constraints\":") == NULL);
      CHECK(strstr(line, "\"name\":\"tail\",") != NULL && c > strstr(line, "\"name\":\"tail\","));
      CHECK(c && strncmp(c, "\"constraints\":[{\"bone\":1,\"kind\":\"cone\",\"apex\":[", 45) == 0);
    }
    fclose(tmp);
  }
  ikrig_runtime_free(rt);
  CHECK(lua_gettop(L) == top);
}

/* Scripts of the host's own: order, reports, an error in one while the other goes on. */
static void test_scripts(lua_State *L) {
  const char *good = write_script("good.lua",
                                  "-- a rig script that reports one chain per frame\n"
                                  "state.frames = state.frames or 0\n"
                                  "function update(dt)\n"
                                  "  state.frames = state.frames + 1\n"
                                  "  scene.report('good', state.frames % 2 == 0, 0.5 / state.frames, 3)\n"
                                  "end\n");
  const char *bad = write_script("bad.lua",
                                 "local n = 0\n"
                                 "function update(dt)\n"
                                 "  n = n + 1\n"
                                 "  if n == 3 then error('boom at frame ' .. n) end\n"
                                 "  scene.report('bad', true, 0)\n"
                                 "end\n");
  const char *scripts[2];
  ikrig_options opt;
  ikrig_runtime *rt;
  seen ev;
  const ikrig_script *g, *b;
  const ikrig_pose *pose;
  int f;
  scripts[0] = bad;
  scripts[1] = good;
  memset(&ev, 0, sizeof ev);
  ikrig_options_init(&opt);
  opt.on_event = on_event;
  opt.event_ud = &ev;
  rt = ikrig_runtime_new(L, scripts, 2, &opt);
  if (!rt) {
    fprintf(stderr, "scripts: %s\n", lua_tostring(L, -1));
    failures++;
    lua_pop(L, 1);
    return;
  }
  CHECK(ev.loads == 2);
  for (f = 0; f < 10; f++) CHECK(ikrig_runtime_update(rt, 0.01) == 0);
  CHECK(ev.errors >= 1);
  CHECK(strstr(ev.last_error, "bad.lua:4:") != NULL && strstr(ev.last_error, "boom at frame 3") != NULL);
  g = script_named(rt, good);
  b = script_named(rt, bad);
  CHECK(g && b);
  if (g && b) {
    CHECK(g->active && g->frames == 10 && g->reports == 10 && g->reached == 5);
    CHECK(fabs(g->worst_distance - 0.5) < 1e-12);
    CHECK(!b->active && b->reports == 2 && b->error != NULL);
  }
  pose = ikrig_runtime_pose(rt);
  CHECK(pose && pose->n_chains == 1);
  if (pose && pose->n_chains == 1) {
    CHECK(strcmp(pose->chains[0].script, good) == 0);
    CHECK(pose->chains[0].iterations == 3 && pose->chains[0].reached == 1);
    CHECK(fabs(pose->chains[0].distance - 0.05) < 1e-12);
  }
  ikrig_runtime_free(rt);
}

/* scene.report's 5th argument: the chain's constraint shapes go into the pose and the
 * JSON; a report without one is written as before; a value that is no chain is an error
 * in its script. */
static void test_report_chain(lua_State *L) {
  const char *shapes =
      write_script("shapes.lua",
                   "local c = ik.chain{ positions = { {0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {3, 1, 0} } }\n"
                   "c:set_constraint(2, ik.hinge{ axis = {0, 0, 1}, min = -0.5, max = 1.5 })\n"
                   "c:set_constraint(3, ik.cone{ angle = 0.4 })\n"
                   "function update(dt)\n"
                   "  local reached, distance, iterations = c:solve({1.5, 2.5, 0})\n"
                   "  scene.report('shaped', reached, distance, iterations, c)\n"
                   "  scene.report('plain', reached, distance, iterations)\n"
                   "end\n");
  const char *notchain = write_script("notchain.lua",
                                      "function update(dt)\n"
                                      "  scene.report('odd', true, 0, 1, 42)\n"
                                      "end\n");
  const char *scripts[2];
  ikrig_options opt;
  ikrig_runtime *rt;
  seen ev;
  const ikrig_pose *pose;
  FILE *tmp;
  char line[16384];
  scripts[0] = shapes;
  scripts[1] = notchain;
  memset(&ev, 0, sizeof ev);
  ikrig_options_init(&opt);
  opt.on_event = on_event;
  opt.event_ud = &ev;
  rt = ikrig_runtime_new(L, scripts, 2, &opt);
  if (!rt) {
    fprintf(stderr, "report chain: %s\n", lua_tostring(L, -1));
    failures++;
    lua_pop(L, 1);
    return;
  }
  CHECK(ikrig_runtime_update(rt, 0.01) == 0);
  CHECK(ev.errors >= 1 && strstr(ev.last_error, "notchain.lua:2:") != NULL &&
        strstr(ev.last_error, "scene.report: chain (ik.chain) expected, got number") != NULL);
  pose = ikrig_runtime_pose(rt);
  CHECK(pose && pose->n_chains == 2);
  if (pose && pose->n_chains == 2) {
    const ikrig_chain *c = &pose->chains[0];
    CHECK(strcmp(c->name, "shaped") == 0 && c->n_constraints == 2 && c->constraints != NULL);
    CHECK(pose->chains[1].n_constraints == -1 && pose->chains[1].constraints == NULL);
    if (c->n_constraints == 2 && c->constraints) {
      const ikrig_constraint_shape *h = &c->constraints[0], *k = &c->constraints[1];
      CHECK(h->bone == 2 && strcmp(h->kind, "hinge") == 0 && h->min == -0.5 && h->max == 1.5 &&
            h->angle == 0);
      CHECK(fabs(h->axis[2] - 1) < 1e-9 && fabs(h->axis[0]) < 1e-9 && fabs(h->axis[1]) < 1e-9);
      CHECK(k->bone == 3 && strcmp(k->kind, "cone") == 0 && fabs(k->angle - 0.4) < 1e-6);
      {
        const double root[3] = {0, 1, 0};
        CHECK(fabs(dist(h->apex, root) - 1) < 1e-5 && fabs(h->length - 1) < 1e-5 &&
              fabs(k->length - 1) < 1e-5);
      }
    }
    tmp = tmpfile();
    CHECK(tmp != NULL);
    if (tmp) {
      CHECK(ikrig_pose_write_json(pose, tmp) == 0);
      rewind(tmp);
      CHECK(fgets(line, sizeof line, tmp) != NULL);
      CHECK(strlen(line) > 2 && strcmp(line + strlen(line) - 2, "}\n") == 0); /* the whole line */
      CHECK(strstr(line, ",\"constraints\":[{\"bone\":2,\"kind\":\"hinge\",\"apex\":[") != NULL);
      CHECK(strstr(line, "],\"min\":-0.5,\"max\":1.5,\"length\":") != NULL);
      CHECK(strstr(line, "\"kind\":\"cone\"") != NULL && strstr(line, "\"angle\":0.4") != NULL);
      CHECK(strstr(line, "{\"name\":\"plain\",") != NULL &&
            strchr(strstr(line, "{\"name\":\"plain\","), '}') != NULL);
      {
        const char *plain = strstr(line, "{\"name\":\"plain\",");
        CHECK(plain && strstr(plain, "\"constraints\"") == NULL);
      }
      fclose(tmp);
    }
  }
  ikrig_runtime_free(rt);
}

/* A memory bomb under the capped allocator: stopped in its script, the host goes on. */
static void test_memory_cap(void) {
  const size_t limit = (size_t)48 << 20;
  lua_State *L = ikrig_newstate(limit);
  const char *bomb =
      write_script("bomb.lua",
                   "local hoard = {}\n"
                   "function update(dt)\n"
                   "  for i = 1, 1e6 do hoard[#hoard + 1] = string.rep('x', 1 << 20) .. i end\n"
                   "end\n");
  const char *good = write_script("steady.lua", "function update(dt) scene.report('steady', true, 0) end\n");
  const char *scripts[2];
  ikrig_runtime *rt;
  seen ev;
  ikrig_options opt;
  size_t used = 0, peak = 0, cap = 0;
  int f;
  CHECK(L != NULL);
  if (!L) return;
  CHECK(ikrig_open(L) == 0);
  scripts[0] = bomb;
  scripts[1] = good;
  memset(&ev, 0, sizeof ev);
  ikrig_options_init(&opt);
  opt.budget = 1e9; /* the memory runs out first */
  opt.on_event = on_event;
  opt.event_ud = &ev;
  rt = ikrig_runtime_new(L, scripts, 2, &opt);
  CHECK(rt != NULL);
  if (rt) {
    const ikrig_script *s;
    for (f = 0; f < 30; f++) CHECK(ikrig_runtime_update(rt, 0.01) == 0);
    CHECK(ev.errors >= 1);
    s = script_named(rt, good);
    CHECK(s && s->active && s->frames == 30 && s->reports == 30);
    s = script_named(rt, bomb);
    CHECK(s && !s->active);
    CHECK(ikrig_runtime_pose(rt) != NULL);
    ikrig_runtime_free(rt);
  } else {
    fprintf(stderr, "memory: %s\n", lua_tostring(L, -1));
  }
  CHECK(ikrig_memory(L, &used, &peak, &cap) == 0);
  CHECK(cap == limit && peak <= limit && used <= limit);
  ikrig_closestate(L);
}

int main(void) {
  lua_State *L;
  const char *scripts[1];
  int skip;
  char dirs[8192];
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  /* the host's own state, standard allocator */
  L = luaL_newstate();
  luaL_openlibs(L);
  CHECK(ikrig_open(L) == 0);
  CHECK(ikrig_lua_dirs(dirs, sizeof dirs) != NULL);
  CHECK(luaL_dostring(L,
                      "assert(type(package.preload['ik.core']) == 'function')\n"
                      "local ik = require('ik'); assert(ik.vec3(1, 2, 3).y == 2)") == LUA_OK);
  lua_settop(L, 0);
  (void)luaL_dostring(L, "return package.searchpath('ik.runtime', package.path) ~= nil");
  skip = !lua_toboolean(L, -1);
  lua_settop(L, 0);
  if (skip) {
    printf("embed_host: ik.runtime (lua/ik/runtime/init.lua) is not there: skipped\n");
    lua_close(L);
    rmdir(dir);
    return 77;
  }

  test_demo(L);
  test_scripts(L);
  test_report_chain(L);
  /* a scene module that does not exist */
  {
    ikrig_options opt;
    ikrig_options_init(&opt);
    opt.scene = "no.such.scene";
    scripts[0] = write_script("idle.lua", "function update() end\n");
    CHECK(ikrig_runtime_new(L, scripts, 1, &opt) == NULL);
    CHECK(lua_isstring(L, -1) && strstr(lua_tostring(L, -1), "no.such.scene") != NULL);
    lua_settop(L, 0);
  }
  lua_close(L);
  test_memory_cap();

  {
    static const char *const names[] = {"good.lua", "bad.lua",    "bomb.lua",    "steady.lua",
                                        "idle.lua", "shapes.lua", "notchain.lua"};
    size_t i;
    char path[600];
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      remove(path);
    }
    rmdir(dir);
  }
  if (failures) {
    fprintf(stderr, "embed_host: %d check%s failed\n", failures, failures == 1 ? "" : "s");
    return 1;
  }
  printf("embed_host: all checks passed\n");
  return 0;
}
