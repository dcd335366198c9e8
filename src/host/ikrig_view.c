/*
 * ikrig_view.c: `ikrig view`, the scene live in the browser.
 *
 * The HTTP and WebSocket side is civetweb (Debian's libcivetweb-dev): it parses the
 * requests, serves the page's files and speaks the WebSocket protocol, on its own worker
 * threads. Only this file's main loop touches the runtime and its Lua state: the
 * handlers queue what the page sends (text, at most MAX_MESSAGE bytes) under a mutex, and
 * the loop parses it (cJSON) between frames. The loop also does every write to the
 * pages, holding the clients' mutex; civetweb's close handler takes the same mutex to
 * take its connection off the list, so no write goes to a connection that is gone.
 *
 * Messages to the page (text frames, JSON):
 *   {"type":"scene", "name":..., "transforms":[{"owner","name","parent","role","trail"}],
 *    "ground":{"vertices":[x,y,z,...],"triangles":[i,j,k,...]} | null,
 *    "scripts":[{"path","status","error"}]}        on connecting, and when the set of
 *                                                     transforms changes
 *   {"type":"frame", "paused":b, "speed":s, "pose":<one line of ikrig_pose_write_json>}
 * Messages from the page:
 *   {"type":"move","node":name,"position":[x,y,z]}   node:set_position, and the node
 *                                                     stays there (pinned) until
 *   {"type":"release","node":name}                   lets the scene move it again
 *   {"type":"pause","paused":b}  {"type":"step"}  {"type":"speed","value":s}
 */
#define _POSIX_C_SOURCE 200809L
#include "ikrig_view.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lauxlib.h"
#include "lualib.h"

#ifndef IKRIG_VIEW_SOURCE_DIR
#define IKRIG_VIEW_SOURCE_DIR "view"
#endif

#define MAX_MESSAGE 4096
#define MAX_QUEUE 256
#define MAX_CLIENTS 200

/* ---- the scene wrapper (Lua) ---- */

/* package.preload["ikrig.view.scene"]: the real scene module's new(), with advance()
 * wrapped so that dragged nodes stay where the page put them; the helpers the loop
 * calls are in package.loaded["ikrig.view"]. */
static const char WRAPPER[] =
    "local real_name = ...\n"
    "local real = require(real_name)\n"
    "local view = { pins = {} }\n"
    "package.loaded['ikrig.view'] = view\n"
    "local M = setmetatable({}, { __index = real })\n"
    "M.scripts = real.scripts\n"
    "function M.new(...)\n"
    "  local scene = real.new(...)\n"
    "  view.scene = scene\n"
    "  local advance = scene.advance\n"
    "  scene.advance = function(self, dt)\n"
    "    if advance then advance(self, dt) end\n"
    "    for name, p in pairs(view.pins) do\n"
    "      local n = self.nodes and self.nodes[name]\n"
    "      if n then n:set_position(p) end\n"
    "    end\n"
    "  end\n"
    "  return scene\n"
    "end\n"
    "function view.move(name, x, y, z)\n"
    "  local n = view.scene and view.scene.nodes and view.scene.nodes[name]\n"
    "  if not n then return false end\n"
    "  view.pins[name] = { x, y, z }\n"
    "  n:set_position({ x, y, z })\n"
    "  return true\n"
    "end\n"
    "function view.release(name) view.pins[name] = nil end\n"
    /* the ground as triangles: the scene's own `ground_mesh` ({vertices, triangles}), or the
     * built-in demo's terrain; nil: the host samples heights */
    "function view.ground_mesh()\n"
    "  local s = view.scene\n"
    "  if not s or not s.ground then return nil end\n"
    "  local m = s.ground_mesh\n"
    "  if not m and real_name == 'ik.demo.scene' then m = package.loaded['ik.demo.terrain'] end\n"
    "  if type(m) ~= 'table' or type(m.vertices) ~= 'table' or type(m.triangles) ~= 'table' then return nil end\n"
    "  local v, t = {}, {}\n"
    "  for _, p in ipairs(m.vertices) do\n"
    "    v[#v + 1] = string.format('%.4f,%.4f,%.4f', p[1] or p.x, p[2] or p.y, p[3] or p.z)\n"
    "  end\n"
    "  for _, tr in ipairs(m.triangles) do\n"
    "    t[#t + 1] = string.format('%d,%d,%d', tr[1] - 1, tr[2] - 1, tr[3] - 1)\n"
    "  end\n"
    "  return '{\"vertices\":[' .. table.concat(v, ',') .. '],\"triangles\":[' .. table.concat(t, ',') .. ']}'\n"
    "end\n"
    "return M\n";

static const char *real_scene = "ik.demo.scene";

static int wrapper_loader(lua_State *L) {
  if (luaL_loadbuffer(L, WRAPPER, sizeof WRAPPER - 1, "=ikrig.view.scene") != LUA_OK) return lua_error(L);
  lua_pushstring(L, real_scene);
  lua_call(L, 1, 1);
  return 1;
}

const char *ikrig_view_scene(lua_State *L, const char *scene) {
  if (scene) real_scene = scene;
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, wrapper_loader);
  lua_setfield(L, -2, "ikrig.view.scene");
  lua_pop(L, 1);
  return "ikrig.view.scene";
}

/* Pushes package.loaded["ikrig.view"][fname] (a function), or returns 0 with nothing
 * pushed. */
static int push_view_fn(lua_State *L, const char *fname) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "ikrig.view") != LUA_TTABLE) {
    lua_pop(L, 2);
    return 0;
  }
  if (lua_getfield(L, -1, fname) != LUA_TFUNCTION) {
    lua_pop(L, 3);
    return 0;
  }
  lua_remove(L, -2);
  lua_remove(L, -2);
  return 1;
}

/* ---- the peer check ---- */

int ikrig_view_peer_allowed(const char *addr, int host_given) {
  struct in_addr a4;
  struct in6_addr a6;
  if (host_given) return 1;
  if (!addr) return 0;
  if (inet_pton(AF_INET, addr, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, addr, &a6) == 1) {
    static const unsigned char loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a6.s6_addr, loop6, 16) == 0) return 1;
    return memcmp(a6.s6_addr, mapped, 12) == 0 && a6.s6_addr[12] == 127;
  }
  return 0;
}

/* ---- the server's state, shared with civetweb's threads ---- */

typedef struct client {
  struct mg_connection *conn;
  int has_scene; /* the scene message went out */
} client;

typedef struct server {
  struct mg_context *ctx;
  int host_given;
  char three_dir[1100];
  pthread_mutex_t lock; /* clients and queue */
  client clients[MAX_CLIENTS];
  int n_clients;
  char *queue[MAX_QUEUE];
  int n_queue;
  long refused; /* connections refused by the peer check */
} server;

static int begin_request(struct mg_connection *conn) {
  server *s = (server *)mg_get_user_data(mg_get_context(conn));
  const struct mg_request_info *ri = mg_get_request_info(conn);
  if (ikrig_view_peer_allowed(ri->remote_addr, s->host_given)) return 0;
  pthread_mutex_lock(&s->lock);
  s->refused++;
  pthread_mutex_unlock(&s->lock);
  mg_send_http_error(conn, 403, "%s", "ikrig view: only loopback clients (start it with --host to allow others)");
  return 1;
}

static int ws_connect(const struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  const struct mg_request_info *ri = mg_get_request_info(conn);
  int full;
  if (!ikrig_view_peer_allowed(ri->remote_addr, s->host_given)) return 1;
  pthread_mutex_lock(&s->lock);
  full = s->n_clients >= MAX_CLIENTS;
  pthread_mutex_unlock(&s->lock);
  return full;
}

static void ws_ready(struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  pthread_mutex_lock(&s->lock);
  if (s->n_clients < MAX_CLIENTS) {
    s->clients[s->n_clients].conn = conn;
    s->clients[s->n_clients].has_scene = 0;
    s->n_clients++;
  }
  pthread_mutex_unlock(&s->lock);
}

static int ws_data(struct mg_connection *conn, int bits, char *data, size_t len, void *ud) {
  server *s = (server *)ud;
  int opcode = bits & 0x0f;
  (void)conn;
  if (opcode == MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE) return 0;
  if (opcode != MG_WEBSOCKET_OPCODE_TEXT || len == 0 || len > MAX_MESSAGE) return 1; /* ignored */
  pthread_mutex_lock(&s->lock);
  if (s->n_queue < MAX_QUEUE) {
    char *m = (char *)malloc(len + 1);
    if (m) {
      memcpy(m, data, len);
      m[len] = '\0';
      s->queue[s->n_queue++] = m;
    }
  }
  pthread_mutex_unlock(&s->lock);
  return 1;
}

static void ws_close(const struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  int i;
  pthread_mutex_lock(&s->lock);
  for (i = 0; i < s->n_clients; i++)
    if (s->clients[i].conn == conn) {
      s->clients[i] = s->clients[--s->n_clients];
      break;
    }
  pthread_mutex_unlock(&s->lock);
}

/* /three/...: three.js, from the page's node_modules. */
static int three_handler(struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  const struct mg_request_info *ri = mg_get_request_info(conn);
  const char *rest = ri->local_uri + strlen("/three/");
  char path[2300];
  size_t i;
  if (strstr(rest, "..") || strchr(rest, '\\')) {
    mg_send_http_error(conn, 400, "%s", "bad path");
    return 400;
  }
  for (i = 0; rest[i]; i++)
    if (!((rest[i] >= 'a' && rest[i] <= 'z') || (rest[i] >= 'A' && rest[i] <= 'Z') || (rest[i] >= '0' && rest[i] <= '9') ||
          strchr("/._-", rest[i]))) {
      mg_send_http_error(conn, 400, "%s", "bad path");
      return 400;
    }
  if ((size_t)snprintf(path, sizeof path, "%s/%s", s->three_dir, rest) >= sizeof path) {
    mg_send_http_error(conn, 414, "%s", "path too long");
    return 414;
  }
  mg_send_file(conn, path);
  return 200;
}

/* ---- messages ---- */

static double monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct loop_state {
  int paused, step;
  double speed;
} loop_state;

static void handle_message(lua_State *L, loop_state *ls, const char *text) {
  cJSON *m = cJSON_Parse(text);
  const cJSON *type;
  if (!m) return;
  type = cJSON_GetObjectItemCaseSensitive(m, "type");
  if (cJSON_IsString(type)) {
    const char *t = type->valuestring;
    if (strcmp(t, "move") == 0) {
      const cJSON *node = cJSON_GetObjectItemCaseSensitive(m, "node");
      const cJSON *pos = cJSON_GetObjectItemCaseSensitive(m, "position");
      if (cJSON_IsString(node) && cJSON_IsArray(pos) && cJSON_GetArraySize(pos) == 3) {
        int i, ok = 1;
        double p[3];
        for (i = 0; i < 3; i++) {
          const cJSON *v = cJSON_GetArrayItem(pos, i);
          if (!cJSON_IsNumber(v) || !(v->valuedouble > -1e6 && v->valuedouble < 1e6)) ok = 0;
          else p[i] = v->valuedouble;
        }
        if (ok && push_view_fn(L, "move")) {
          lua_pushstring(L, node->valuestring);
          lua_pushnumber(L, p[0]);
          lua_pushnumber(L, p[1]);
          lua_pushnumber(L, p[2]);
          if (lua_pcall(L, 4, 0, 0) != LUA_OK) {
            fprintf(stderr, "ikrig: move %s: %s\n", node->valuestring, lua_tostring(L, -1));
            lua_pop(L, 1);
          }
        }
      }
    } else if (strcmp(t, "release") == 0) {
      const cJSON *node = cJSON_GetObjectItemCaseSensitive(m, "node");
      if (cJSON_IsString(node) && push_view_fn(L, "release")) {
        lua_pushstring(L, node->valuestring);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
      }
    } else if (strcmp(t, "pause") == 0) {
      const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "paused");
      ls->paused = p ? cJSON_IsTrue(p) : !ls->paused;
    } else if (strcmp(t, "step") == 0) {
      ls->paused = 1;
      ls->step = 1;
    } else if (strcmp(t, "speed") == 0) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "value");
      if (cJSON_IsNumber(v) && v->valuedouble >= 0.05 && v->valuedouble <= 8) ls->speed = v->valuedouble;
    }
  }
  cJSON_Delete(m);
}

/* A signature of the set of transforms (names, owners, parents, roles): a new scene
 * message goes out when it changes. */
static unsigned long pose_signature(const ikrig_pose *p) {
  unsigned long h = 5381u + (unsigned long)p->n_transforms;
  int i;
  for (i = 0; i < p->n_transforms; i++) {
    const ikrig_transform *t = &p->transforms[i];
    const char *c;
    for (c = t->owner ? t->owner : "."; *c; c++) h = h * 33u + (unsigned char)*c;
    for (c = t->name; c && *c; c++) h = h * 33u + (unsigned char)*c;
    h = h * 33u + (unsigned long)(t->parent + 7) * 131u + (unsigned long)t->role * 7u + (unsigned long)t->trail;
  }
  return h;
}

static cJSON *scripts_json(const ikrig_runtime *rt) {
  cJSON *a = cJSON_CreateArray();
  int i, n = ikrig_runtime_script_count(rt);
  for (i = 0; a && i < n; i++) {
    const ikrig_script *sc = ikrig_runtime_script(rt, i);
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddStringToObject(o, "path", sc->path ? sc->path : "?");
    cJSON_AddStringToObject(o, "status", sc->status ? sc->status : "?");
    if (sc->error) cJSON_AddStringToObject(o, "error", sc->error);
    else cJSON_AddNullToObject(o, "error");
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

/* The ground when the scene has no mesh to give: heights sampled on a grid around the
 * transforms, as triangles. */
static cJSON *sampled_ground(ikrig_runtime *rt, const ikrig_pose *p) {
  enum { N = 48 };
  double lo[2] = {-3, -3}, hi[2] = {3, 3}, h[N + 1][N + 1];
  int hit[N + 1][N + 1], i, j, any = 0;
  cJSON *g, *v, *t;
  for (i = 0; i < p->n_transforms; i++) {
    const double *q = p->transforms[i].position;
    if (q[0] - 2 < lo[0]) lo[0] = q[0] - 2;
    if (q[0] + 2 > hi[0]) hi[0] = q[0] + 2;
    if (q[2] - 2 < lo[1]) lo[1] = q[2] - 2;
    if (q[2] + 2 > hi[1]) hi[1] = q[2] + 2;
  }
  for (i = 0; i <= N; i++)
    for (j = 0; j <= N; j++) {
      double x = lo[0] + (hi[0] - lo[0]) * i / N, z = lo[1] + (hi[1] - lo[1]) * j / N;
      hit[i][j] = ikrig_runtime_ground(rt, x, z, &h[i][j]) == 1;
      any |= hit[i][j];
    }
  if (!any) return cJSON_CreateNull();
  g = cJSON_CreateObject();
  v = cJSON_AddArrayToObject(g, "vertices");
  t = cJSON_AddArrayToObject(g, "triangles");
  for (i = 0; i <= N; i++)
    for (j = 0; j <= N; j++) {
      cJSON_AddItemToArray(v, cJSON_CreateNumber(lo[0] + (hi[0] - lo[0]) * i / N));
      cJSON_AddItemToArray(v, cJSON_CreateNumber(hit[i][j] ? h[i][j] : 0));
      cJSON_AddItemToArray(v, cJSON_CreateNumber(lo[1] + (hi[1] - lo[1]) * j / N));
    }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      int a = i * (N + 1) + j, b = a + N + 1;
      if (!(hit[i][j] && hit[i + 1][j] && hit[i][j + 1] && hit[i + 1][j + 1])) continue;
      cJSON_AddItemToArray(t, cJSON_CreateNumber(a));
      cJSON_AddItemToArray(t, cJSON_CreateNumber(b));
      cJSON_AddItemToArray(t, cJSON_CreateNumber(a + 1));
      cJSON_AddItemToArray(t, cJSON_CreateNumber(a + 1));
      cJSON_AddItemToArray(t, cJSON_CreateNumber(b));
      cJSON_AddItemToArray(t, cJSON_CreateNumber(b + 1));
    }
  return g;
}

/* The ground, as JSON text (made once: it does not move). */
static char *ground_json(ikrig_runtime *rt, lua_State *L, const ikrig_pose *p) {
  char *out = NULL;
  if (push_view_fn(L, "ground_mesh")) {
    if (lua_pcall(L, 0, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) out = strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  if (!out) {
    cJSON *g = sampled_ground(rt, p);
    out = g ? cJSON_PrintUnformatted(g) : NULL;
    cJSON_Delete(g);
  }
  return out;
}

static char *scene_message(ikrig_runtime *rt, const ikrig_pose *p, const char *ground) {
  cJSON *m = cJSON_CreateObject(), *ts;
  char *text, *out;
  size_t n;
  int i;
  if (!m) return NULL;
  cJSON_AddStringToObject(m, "type", "scene");
  cJSON_AddStringToObject(m, "name", ikrig_runtime_scene_name(rt));
  ts = cJSON_AddArrayToObject(m, "transforms");
  for (i = 0; i < p->n_transforms; i++) {
    const ikrig_transform *t = &p->transforms[i];
    cJSON *o = cJSON_CreateObject();
    static const char *roles[] = {"bone", "node", "target", "pole"};
    if (t->owner) cJSON_AddStringToObject(o, "owner", t->owner);
    else cJSON_AddNullToObject(o, "owner");
    cJSON_AddStringToObject(o, "name", t->name ? t->name : "?");
    cJSON_AddNumberToObject(o, "parent", t->parent);
    cJSON_AddStringToObject(o, "role", t->role >= 0 && t->role <= 3 ? roles[t->role] : "node");
    cJSON_AddBoolToObject(o, "trail", t->trail);
    cJSON_AddItemToArray(ts, o);
  }
  cJSON_AddItemToObject(m, "scripts", scripts_json(rt));
  text = cJSON_PrintUnformatted(m);
  cJSON_Delete(m);
  if (!text) return NULL;
  /* the ground goes in as it is: text already */
  n = strlen(text) + strlen(ground ? ground : "null") + 16;
  out = (char *)malloc(n);
  if (out) snprintf(out, n, "%.*s,\"ground\":%s}", (int)strlen(text) - 1, text, ground ? ground : "null");
  cJSON_free(text);
  return out;
}

static char *frame_message(ikrig_runtime *rt, const ikrig_pose *p, const loop_state *ls, int updated) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  fprintf(f, "{\"type\":\"frame\",\"paused\":%s,\"speed\":%g,\"updated\":%s,\"scripts\":", ls->paused ? "true" : "false",
          ls->speed, updated ? "true" : "false");
  {
    cJSON *s = scripts_json(rt);
    char *t = s ? cJSON_PrintUnformatted(s) : NULL;
    fputs(t ? t : "[]", f);
    cJSON_free(t);
    cJSON_Delete(s);
  }
  fputs(",\"pose\":", f);
  ikrig_pose_write_json(p, f);
  fputs("}", f);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  /* the pose line ends in a newline: JSON does not mind */
  return buf;
}

/* Sends the frame (and the scene, first, to those that have not had it). */
static void broadcast(server *s, const char *scene, int scene_changed, const char *frame) {
  int i;
  pthread_mutex_lock(&s->lock);
  for (i = 0; i < s->n_clients; i++) {
    client *c = &s->clients[i];
    if (scene_changed) c->has_scene = 0;
    if (!c->has_scene && scene) {
      if (mg_websocket_write(c->conn, MG_WEBSOCKET_OPCODE_TEXT, scene, strlen(scene)) <= 0) continue;
      c->has_scene = 1;
    }
    if (frame && c->has_scene) mg_websocket_write(c->conn, MG_WEBSOCKET_OPCODE_TEXT, frame, strlen(frame));
    /* a write that failed: the peer went away; civetweb's close handler takes it off */
  }
  pthread_mutex_unlock(&s->lock);
}

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void view_dir(char *buf, size_t n) {
  const char *env = getenv(IKRIG_VIEW_DIR_ENV);
  snprintf(buf, n, "%s", env && *env ? env : IKRIG_VIEW_SOURCE_DIR);
}

int ikrig_view_run(ikrig_runtime *rt, lua_State *L, const ikrig_view_options *opt, volatile sig_atomic_t *stop) {
  static server s; /* civetweb's threads may still look at it while mg_stop runs */
  struct mg_callbacks cb;
  char ports[300], dir[1024];
  const char *options[32];
  struct mg_server_port sp[4];
  int n = 0, status = 0, nports;
  long frames = 0;
  unsigned long sig = 0;
  char *ground = NULL, *scene = NULL;
  loop_state ls;
  double next;
  const char *host = opt->host ? opt->host : "127.0.0.1";

  memset(&s, 0, sizeof s);
  pthread_mutex_init(&s.lock, NULL);
  s.host_given = opt->host != NULL;
  view_dir(dir, sizeof dir);
  snprintf(s.three_dir, sizeof s.three_dir, "%s/node_modules/three", dir);
  if (strchr(host, ':')) snprintf(ports, sizeof ports, "[%s]:%d", host, opt->port);
  else snprintf(ports, sizeof ports, "%s:%d", host, opt->port);
  signal(SIGPIPE, SIG_IGN);
  options[n++] = "listening_ports";
  options[n++] = ports;
  options[n++] = "document_root";
  options[n++] = dir;
  options[n++] = "num_threads";
  options[n++] = "96"; /* a worker per open WebSocket */
  options[n++] = "enable_directory_listing";
  options[n++] = "no";
  options[n++] = "static_file_max_age";
  options[n++] = "0";
  options[n++] = "enable_websocket_ping_pong";
  options[n++] = "yes";
  options[n++] = "websocket_timeout_ms";
  options[n++] = "5000";
  options[n++] = "request_timeout_ms";
  options[n++] = "5000";
  options[n++] = NULL;
  memset(&cb, 0, sizeof cb);
  cb.begin_request = begin_request;
  mg_init_library(MG_FEATURES_WEBSOCKET);
  s.ctx = mg_start(&cb, &s, options);
  if (!s.ctx) {
    fprintf(stderr, "ikrig: cannot serve on %s (is the port taken?)\n", ports);
    mg_exit_library();
    return 1;
  }
  mg_set_websocket_handler(s.ctx, "/ws", ws_connect, ws_ready, ws_data, ws_close, &s);
  mg_set_request_handler(s.ctx, "/three/", three_handler, &s);
  nports = mg_get_server_ports(s.ctx, 4, sp);
  {
    FILE *probe;
    char idx[1200];
    snprintf(idx, sizeof idx, "%s/node_modules/three/build/three.module.js", dir);
    if (!(probe = fopen(idx, "r")))
      fprintf(stderr, "ikrig: %s not found: run 'npm ci' in %s (three.js for the page)\n", idx, dir);
    else
      fclose(probe);
  }
  printf("ikrig: view at http://%s%s%s:%d/ (Ctrl-C stops)\n", strchr(host, ':') ? "[" : "", host,
         strchr(host, ':') ? "]" : "", nports > 0 ? sp[0].port : opt->port);
  fflush(stdout);

  ls.paused = 0;
  ls.step = 0;
  ls.speed = 1;
  next = monotonic();
  while (!*stop && (opt->frames == 0 || frames < opt->frames)) {
    char *queue[MAX_QUEUE], *frame;
    int nq, i, updated = 0, changed = 0;
    const ikrig_pose *p;
    double now;
    pthread_mutex_lock(&s.lock);
    nq = s.n_queue;
    memcpy(queue, s.queue, (size_t)nq * sizeof *queue);
    s.n_queue = 0;
    pthread_mutex_unlock(&s.lock);
    for (i = 0; i < nq; i++) {
      handle_message(L, &ls, queue[i]);
      free(queue[i]);
    }
    if (!ls.paused || ls.step) {
      if (ikrig_runtime_update(rt, opt->dt * ls.speed) != 0) {
        fprintf(stderr, "ikrig: frame %ld: %s\n", frames, ikrig_runtime_error(rt));
        status = 1;
        break;
      }
      frames++;
      updated = 1;
      ls.step = 0;
    }
    if (!(p = ikrig_runtime_pose(rt))) {
      fprintf(stderr, "ikrig: %s\n", ikrig_runtime_error(rt));
      status = 1;
      break;
    }
    if (!ground) ground = ground_json(rt, L, p);
    if (!scene || pose_signature(p) != sig) {
      free(scene);
      scene = scene_message(rt, p, ground);
      sig = pose_signature(p);
      changed = 1;
    }
    frame = frame_message(rt, p, &ls, updated);
    broadcast(&s, scene, changed, frame);
    free(frame);
    next += opt->dt;
    now = monotonic();
    if (next < now - opt->dt) next = now;
    while (!*stop && now < next) {
      sleep_until(next);
      now = monotonic();
    }
  }
  printf("ikrig: stopped after %ld frame%s\n", frames, frames == 1 ? "" : "s");
  mg_stop(s.ctx);
  mg_exit_library();
  {
    int i;
    for (i = 0; i < s.n_queue; i++) free(s.queue[i]);
    s.n_queue = 0;
  }
  free(scene);
  free(ground);
  pthread_mutex_destroy(&s.lock);
  return status;
}
