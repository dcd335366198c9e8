/*
 * ikrig_view.c: `ikrig view`, the scene live in the browser.
 *
 * The HTTP and WebSocket side is civetweb (Debian's libcivetweb-dev): it parses the
 * requests, serves the page's files and speaks the WebSocket protocol, on its own worker
 * threads. Only this file's main loop touches the runtime and its Lua state: the
 * handlers queue what the page sends (text, at most MAX_MESSAGE bytes) under a mutex, and
 * the loop parses it (cJSON) between frames. The loop writes to no socket: it hands each
 * client the newest messages, and the client's own writer thread sends them, so a client
 * that does not read loses frames and stalls nothing else. What the server lets in (peer,
 * Host, Origin, how many, how big) is in docs/live-view-security.md.
 *
 * Messages to the page (text frames, JSON):
 *   {"type":"scene", "name":..., "transforms":[{"owner","name","parent","role","trail"}],
 *    "ground":{"vertices":[x,y,z,...],"triangles":[i,j,k,...]} | null,
 *    "model":{"skeleton":name,"url":u} | null}       the skinned mesh drawn for a skeleton:
 *                                                     the --model file (at /model) or the
 *                                                     scene's view_model asset
 *                                                     on connecting, and when the set of
 *                                                     transforms changes
 *   {"type":"scripts", "scripts":[{"path","status","error"}]}
 *                                                     on connecting, and when a script's
 *                                                     status or error changes
 *   {"type":"frame", "paused":b, "speed":s, "updated":b,
 *    "pose":<one line of ikrig_pose_write_json>}     the events only in updated frames
 * Error texts longer than MAX_ERROR_TEXT bytes are cut, with a note of their length.
 * Messages from the page:
 *   {"type":"move","node":name,"position":[x,y,z]}   node:set_position, and the node
 *                                                     stays there (pinned) until
 *   {"type":"release","node":name}                   lets the scene move it again
 *   {"type":"pause","paused":b}  {"type":"step"}  {"type":"speed","value":s}
 */
#define _POSIX_C_SOURCE 200809L
#include "ikrig_view.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <civetweb.h>
#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "ikrig_paths.h"
#include "lauxlib.h"
#include "lualib.h"

#ifndef IKRIG_INSTALL_VIEW_REL
#define IKRIG_INSTALL_VIEW_REL "../share/ikrig/view"
#endif

#define MAX_MESSAGE 4096 /* a message from the page: its moves are under 200 bytes */
#define MAX_QUEUE 256
#define MAX_CLIENTS 16   /* open WebSockets; each holds one of civetweb's workers */
#define NUM_THREADS "40" /* MAX_CLIENTS, and 24 left for the page's requests */
#define MAX_ERROR_TEXT 4096
#define CLIP_SIZE (MAX_ERROR_TEXT + 64) /* and the note of the length */
/* Bytes a client may have sent past its last whole frame before the guard cuts it: a
 * message's worth, and room for the pongs civetweb answers pings with. */
#define MAX_PENDING (MAX_MESSAGE + (1 << 20))
#define GUARD_TICK_NS 2000000L
#define SEND_BUFFER (64 * 1024) /* the kernel's send buffer of a WebSocket (it doubles it) */

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
    /* the skinned mesh the page draws for a skeleton: the skeleton's name, and a file among
     * the page's own (nil: the host's --model, or none) */
    "function view.model()\n"
    "  local m = view.scene and view.scene.view_model\n"
    "  if type(m) ~= 'table' or type(m.skeleton) ~= 'string' then return nil end\n"
    "  return m.skeleton, type(m.asset) == 'string' and m.asset or nil\n"
    "end\n"
    /* the ground as triangles: the scene's own `ground_mesh` ({vertices, triangles}), or the
     * built-in demo's terrain; nil: the host samples heights */
    "function view.ground_mesh()\n"
    "  local s = view.scene\n"
    "  if not s or not s.ground then return nil end\n"
    "  local m = s.ground_mesh\n"
    "  if not m and real_name == 'ik.demo.scene' then m = package.loaded['ik.demo.terrain'] end\n"
    "  if type(m) ~= 'table' or type(m.vertices) ~= 'table' or type(m.triangles) ~= 'table' then return nil "
    "end\n"
    "  local v, t = {}, {}\n"
    "  for _, p in ipairs(m.vertices) do\n"
    "    v[#v + 1] = string.format('%.4f,%.4f,%.4f', p[1] or p.x, p[2] or p.y, p[3] or p.z)\n"
    "  end\n"
    "  for _, tr in ipairs(m.triangles) do\n"
    "    t[#t + 1] = string.format('%d,%d,%d', tr[1] - 1, tr[2] - 1, tr[3] - 1)\n"
    "  end\n"
    "  return '{\"vertices\":[' .. table.concat(v, ',') .. '],\"triangles\":[' .. table.concat(t, ',') .. "
    "']}'\n"
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

/* ---- who may connect: the peer, the Host it names, the Origin of an upgrade ---- */

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

static int is_wildcard(const char *host) {
  return host && (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0 || strcmp(host, "[::]") == 0);
}

/* Whether name[0..n) is a numeric address, "1.2.3.4" or "[::1]": no DNS name, so no
 * rebinding through it. */
static int is_ip_literal(const char *name, size_t n) {
  char buf[64];
  unsigned char a[16];
  if (n < 2 || n >= sizeof buf) return 0;
  if (name[0] == '[') {
    if (name[n - 1] != ']') return 0;
    memcpy(buf, name + 1, n - 2);
    buf[n - 2] = '\0';
    return inet_pton(AF_INET6, buf, a) == 1;
  }
  memcpy(buf, name, n);
  buf[n] = '\0';
  return inet_pton(AF_INET, buf, a) == 1;
}

static int name_is(const char *name, size_t n, const char *want) {
  return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

int ikrig_view_host_allowed(const char *value, const char *host, int port) {
  const char *end, *colon;
  size_t n;
  if (!value || !*value) return 0;
  if (value[0] == '[') {
    if (!(end = strchr(value, ']'))) return 0;
    end++;
  } else {
    end = value + strcspn(value, ":");
  }
  n = (size_t)(end - value);
  colon = end;
  if (*colon == '\0') {
    if (port != 80) return 0;
  } else {
    char *stop;
    long p;
    if (*colon != ':' || !(colon[1] >= '0' && colon[1] <= '9')) return 0;
    p = strtol(colon + 1, &stop, 10);
    if (*stop != '\0' || p != port) return 0;
  }
  if (name_is(value, n, "127.0.0.1") || name_is(value, n, "localhost") || name_is(value, n, "[::1]"))
    return 1;
  if (host && !is_wildcard(host)) {
    if (strchr(host, ':') && host[0] != '[')
      return n == strlen(host) + 2 && value[0] == '[' && strncasecmp(value + 1, host, n - 2) == 0;
    return name_is(value, n, host);
  }
  /* bound to every address: the machine's own numbers are its names */
  return is_wildcard(host) && is_ip_literal(value, n);
}

int ikrig_view_origin_allowed(const char *origin, const char *host, int port) {
  if (!origin || strncasecmp(origin, "http://", 7) != 0) return 0;
  return ikrig_view_host_allowed(origin + 7, host, port);
}

/* ---- the server's state, shared with civetweb's threads ---- */

/* A message to the pages, shared by every client it goes to; refs under the server's lock. */
typedef struct blob {
  int refs;
  size_t len;
  char text[];
} blob;

typedef struct server server;

/* One open WebSocket: its writer thread sends the newest of each kind of message (the
 * scene, the scripts, a frame) that it has not sent yet; the frame loop only replaces
 * them, so a client that does not read loses frames and holds up no one. */
typedef struct client {
  server *s;
  struct mg_connection *conn;
  pthread_t writer;
  pthread_cond_t wake;
  blob *scene, *scripts, *frame; /* not sent yet */
  int closing, failed, cut;
  int fd;                    /* the connection's socket, -1 when not found */
  long long rx_mark;         /* bytes received that were whole frames (or before the upgrade) */
  char message[MAX_MESSAGE]; /* a fragmented message so far */
  size_t message_len;
  int in_message, message_text;
} client;

struct server {
  struct mg_context *ctx;
  const char *host; /* --host, or NULL */
  int port;
  char three_dir[1100];
  const char *model;    /* --model: the one file served at /model, or NULL */
  pthread_mutex_t lock; /* everything below */
  client *clients[MAX_CLIENTS];
  int n_clients;
  int reserved; /* upgrades between begin_request and end_request */
  char *queue[MAX_QUEUE];
  int n_queue;
  blob *scene, *scripts; /* the newest, for clients that join */
  int guard_stop;
  pthread_t guard;
  pthread_cond_t guard_wake; /* a client came, or the guard is to stop */
};

static blob *blob_of(const char *text, size_t len) {
  blob *b = (blob *)malloc(sizeof *b + len + 1);
  if (!b) return NULL;
  b->refs = 1;
  b->len = len;
  memcpy(b->text, text, len);
  b->text[len] = '\0';
  return b;
}

static blob *blob_ref(blob *b) {
  if (b) b->refs++;
  return b;
}

static void blob_unref(blob *b) {
  if (b && --b->refs == 0) free(b);
}

/* Puts b in *slot, in place of what was there and not sent. */
static void blob_set(blob **slot, blob *b) {
  blob_unref(*slot);
  *slot = blob_ref(b);
}

/* Bytes the kernel has received on fd (Linux's TCP_INFO), or -1. */
static long long rx_bytes(int fd) {
  struct tcp_info ti;
  socklen_t n = sizeof ti;
  memset(&ti, 0, sizeof ti);
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &n) != 0 ||
      n < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received)
    return -1;
  return (long long)ti.tcpi_bytes_received;
}

static int port_of(const struct sockaddr_storage *a) {
  if (a->ss_family == AF_INET) return ntohs(((const struct sockaddr_in *)a)->sin_port);
  if (a->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
  return -1;
}

/* The socket of the connection ri describes, found by its two ends (civetweb has no call
 * for it): the guard reads what the kernel received on it, and cuts it. */
static int find_socket(const struct mg_request_info *ri) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int found = -1;
  if (!d) return -1;
  while (found < 0 && (e = readdir(d)) != NULL) {
    struct sockaddr_storage peer, self;
    socklen_t pn = sizeof peer, sn = sizeof self;
    char addr[INET6_ADDRSTRLEN];
    const void *raw;
    int fd = atoi(e->d_name);
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d)) continue;
    if (getpeername(fd, (struct sockaddr *)&peer, &pn) != 0 ||
        getsockname(fd, (struct sockaddr *)&self, &sn) != 0)
      continue;
    if (port_of(&peer) != ri->remote_port || port_of(&self) != ri->server_port) continue;
    raw = peer.ss_family == AF_INET ? (const void *)&((struct sockaddr_in *)&peer)->sin_addr
                                    : (const void *)&((struct sockaddr_in6 *)&peer)->sin6_addr;
    if (inet_ntop(peer.ss_family, raw, addr, sizeof addr) && strcmp(addr, ri->remote_addr) == 0) found = fd;
  }
  closedir(d);
  return found;
}

/* Ends a connection civetweb is reading: its read fails, it closes and calls ws_close. */
static void cut(client *c) {
  if (c->fd >= 0 && !c->cut) shutdown(c->fd, SHUT_RDWR);
  c->cut = 1;
}

/* The guard: civetweb reads a frame whole before its data handler sees it, so a client
 * whose unfinished frame passes the cap is cut here, from the bytes the kernel counted. */
static void *guard_main(void *arg) {
  server *s = (server *)arg;
  const struct timespec tick = {0, GUARD_TICK_NS};
  pthread_mutex_lock(&s->lock);
  while (!s->guard_stop) {
    int i;
    if (s->n_clients == 0) {
      pthread_cond_wait(&s->guard_wake, &s->lock);
      continue;
    }
    for (i = 0; i < s->n_clients; i++) {
      client *c = s->clients[i];
      long long rx = rx_bytes(c->fd);
      if (rx >= 0 && !c->cut && rx - c->rx_mark > MAX_PENDING) {
        fprintf(stderr, "ikrig: view: a client sent over %d bytes in one message: disconnected\n",
                MAX_MESSAGE);
        cut(c);
      }
    }
    pthread_mutex_unlock(&s->lock);
    nanosleep(&tick, NULL);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

static void *writer_main(void *arg) {
  client *c = (client *)arg;
  server *s = c->s;
  pthread_mutex_lock(&s->lock);
  while (!c->closing) {
    blob **slot = c->scene ? &c->scene : c->scripts ? &c->scripts : c->frame ? &c->frame : NULL;
    blob *b;
    int r, whole;
    if (!slot || c->failed) {
      pthread_cond_wait(&c->wake, &s->lock);
      continue;
    }
    b = *slot;
    *slot = NULL;
    pthread_mutex_unlock(&s->lock);
    r = mg_websocket_write(c->conn, MG_WEBSOCKET_OPCODE_TEXT, b->text, b->len);
    whole = r >= 0 && (size_t)r == b->len;
    pthread_mutex_lock(&s->lock);
    blob_unref(b);
    if (!whole) {
      /* gone, or stuck past request_timeout_ms: the frame is cut short, so is the connection */
      c->failed = 1;
      cut(c);
    }
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* Answers status with a plain-text reason, what (a format taking one %s: value, made
 * printable and short). Written by hand: civetweb 1.15's mg_send_http_error writes no
 * status line on a request that asks for a WebSocket. */
static int refuse(struct mg_connection *conn, int status, const char *what, const char *value) {
  char shown[121], body[600];
  const char *reason = status == 403   ? "Forbidden"
                       : status == 421 ? "Misdirected Request"
                                       : "Service Unavailable";
  size_t i;
  int n;
  for (i = 0; value && value[i] && i + 1 < sizeof shown; i++)
    shown[i] = value[i] >= 32 && value[i] < 127 ? value[i] : '?';
  shown[i] = '\0';
  n = snprintf(body, sizeof body, what, value ? shown : "(none)");
  if (n < 0 || (size_t)n >= sizeof body - 1) n = (int)strlen(body);
  body[n++] = '\n';
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            status, reason, n);
  mg_write(conn, body, (size_t)n);
  return status;
}

/* A WebSocket upgrade, or a request to the WebSocket's path (civetweb's handler takes
 * /ws and /ws/...): the Origin is checked and a slot reserved for it. */
static int is_upgrade(const struct mg_connection *conn, const struct mg_request_info *ri) {
  return mg_get_header(conn, "Upgrade") != NULL ||
         (strncmp(ri->local_uri, "/ws", 3) == 0 && (ri->local_uri[3] == '\0' || ri->local_uri[3] == '/'));
}

static int begin_request(struct mg_connection *conn) {
  server *s = (server *)mg_get_user_data(mg_get_context(conn));
  const struct mg_request_info *ri = mg_get_request_info(conn);
  const char *origin;
  int full;
  if (!ikrig_view_peer_allowed(ri->remote_addr, s->host != NULL))
    return refuse(conn, 403,
                  "ikrig view: only loopback clients (start it with --host to allow others); not %s",
                  ri->remote_addr);
  if (!ikrig_view_host_allowed(mg_get_header(conn, "Host"), s->host, s->port))
    return refuse(
        conn, 421,
        "ikrig view: Host %s is not a name of this server (127.0.0.1, localhost or the --host name, "
        "with its port)",
        mg_get_header(conn, "Host"));
  if (!is_upgrade(conn, ri)) return 0;
  origin = mg_get_header(conn, "Origin");
  if (!ikrig_view_origin_allowed(origin, s->host, s->port))
    return refuse(conn, 403, "ikrig view: a WebSocket from origin %s: only the page's own origin may connect",
                  origin);
  pthread_mutex_lock(&s->lock);
  full = s->reserved >= MAX_CLIENTS;
  if (!full) s->reserved++;
  pthread_mutex_unlock(&s->lock);
  if (full) {
    char why[160];
    snprintf(why, sizeof why,
             "ikrig view: %d live views are open, the most it serves at once; close one and reload",
             MAX_CLIENTS);
    return refuse(conn, 503, "%s", why);
  }
  mg_set_user_connection_data(conn, &s->reserved); /* end_request gives the slot back */
  return 0;
}

static void end_request(const struct mg_connection *conn, int status) {
  server *s = (server *)mg_get_user_data(mg_get_context(conn));
  (void)status;
  if (mg_get_user_connection_data(conn) == NULL) return;
  pthread_mutex_lock(&s->lock);
  s->reserved--;
  pthread_mutex_unlock(&s->lock);
  mg_set_user_connection_data(conn, NULL);
}

static int ws_connect(const struct mg_connection *conn, void *ud) {
  /* begin_request let it this far only with a slot reserved */
  return mg_get_user_connection_data(conn) == NULL || ud == NULL;
}

static void ws_ready(struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  client *c = (client *)calloc(1, sizeof *c);
  if (!c) return;
  c->s = s;
  c->conn = conn;
  c->fd = find_socket(mg_get_request_info(conn));
  c->rx_mark = rx_bytes(c->fd);
  if (c->fd >= 0) {
    /* frames wait here, where the newest replaces the rest, rather than in the kernel */
    int sndbuf = SEND_BUFFER;
    setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  }
  pthread_cond_init(&c->wake, NULL);
  pthread_mutex_lock(&s->lock);
  if (pthread_create(&c->writer, NULL, writer_main, c) != 0) {
    pthread_mutex_unlock(&s->lock);
    pthread_cond_destroy(&c->wake);
    free(c);
    return;
  }
  blob_set(&c->scene, s->scene);
  blob_set(&c->scripts, s->scripts);
  s->clients[s->n_clients++] = c; /* n_clients <= reserved <= MAX_CLIENTS */
  mg_set_user_connection_data(conn, c);
  pthread_cond_signal(&c->wake);
  pthread_cond_signal(&s->guard_wake);
  pthread_mutex_unlock(&s->lock);
}

/* The bytes a client frame of len bytes took on the wire (masked, as clients send them). */
static long long frame_bytes(size_t len) {
  return (long long)len + 6 + (len >= 126 ? 2 : 0) + (len >= 65536 ? 6 : 0);
}

static void queue_message(server *s, const char *text, size_t len) {
  char *m;
  if (len == 0 || s->n_queue >= MAX_QUEUE || !(m = (char *)malloc(len + 1))) return;
  memcpy(m, text, len);
  m[len] = '\0';
  s->queue[s->n_queue++] = m;
}

/* Returns 0 (civetweb closes) after a close frame, a message over MAX_MESSAGE, or
 * continuation frames out of order. */
static int ws_data(struct mg_connection *conn, int bits, char *data, size_t len, void *ud) {
  server *s = (server *)ud;
  client *c = (client *)mg_get_user_connection_data(conn);
  int opcode = bits & 0x0f, fin = (bits & 0x80) != 0, keep = 1;
  if (!c || (void *)c == (void *)&s->reserved) return 0;
  pthread_mutex_lock(&s->lock);
  {
    long long rx = rx_bytes(c->fd);
    c->rx_mark += frame_bytes(len);
    if (rx >= 0 && c->rx_mark > rx) c->rx_mark = rx;
  }
  if (opcode == MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE) {
    keep = 0;
  } else if (opcode == MG_WEBSOCKET_OPCODE_TEXT || opcode == MG_WEBSOCKET_OPCODE_BINARY ||
             opcode == MG_WEBSOCKET_OPCODE_CONTINUATION) {
    int first = opcode != MG_WEBSOCKET_OPCODE_CONTINUATION;
    /* a new message inside one, a continuation of none, or past the cap */
    if (first == c->in_message || (first ? 0 : c->message_len) + len > MAX_MESSAGE) {
      keep = 0;
    } else {
      if (first) {
        c->message_len = 0;
        c->message_text = opcode == MG_WEBSOCKET_OPCODE_TEXT;
      }
      memcpy(c->message + c->message_len, data, len);
      c->message_len += len;
      c->in_message = !fin;
      if (fin && c->message_text) queue_message(s, c->message, c->message_len);
    }
  }
  pthread_mutex_unlock(&s->lock);
  if (!keep && opcode != MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE) {
    static const char too_big[] = "\x03\xf1message too big or out of order";
    mg_websocket_write(conn, MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, too_big, sizeof too_big - 1);
  }
  return keep;
}

static void ws_close(const struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  client *c = (client *)mg_get_user_connection_data(conn);
  int i;
  if (!c || (void *)c == (void *)&s->reserved) return;
  pthread_mutex_lock(&s->lock);
  for (i = 0; i < s->n_clients; i++)
    if (s->clients[i] == c) {
      s->clients[i] = s->clients[--s->n_clients];
      break;
    }
  c->closing = 1;
  pthread_cond_signal(&c->wake);
  pthread_mutex_unlock(&s->lock);
  pthread_join(c->writer, NULL);
  pthread_mutex_lock(&s->lock);
  blob_unref(c->scene);
  blob_unref(c->scripts);
  blob_unref(c->frame);
  pthread_mutex_unlock(&s->lock);
  pthread_cond_destroy(&c->wake);
  free(c);
  mg_set_user_connection_data(conn, &s->reserved); /* still reserved: end_request frees it */
}

/* The file `rest` (letters, digits, "/._-", no "..") under dir. */
static int serve_under(struct mg_connection *conn, const char *dir, const char *rest) {
  char path[2300];
  size_t i;
  if (strstr(rest, "..") || strchr(rest, '\\')) {
    mg_send_http_error(conn, 400, "%s", "bad path");
    return 400;
  }
  for (i = 0; rest[i]; i++)
    if (!((rest[i] >= 'a' && rest[i] <= 'z') || (rest[i] >= 'A' && rest[i] <= 'Z') ||
          (rest[i] >= '0' && rest[i] <= '9') || strchr("/._-", rest[i]))) {
      mg_send_http_error(conn, 400, "%s", "bad path");
      return 400;
    }
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, rest) >= sizeof path) {
    mg_send_http_error(conn, 414, "%s", "path too long");
    return 414;
  }
  mg_send_file(conn, path);
  return 200;
}

/* /three/...: three.js, from the page's node_modules. */
static int three_handler(struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  return serve_under(conn, s->three_dir, mg_get_request_info(conn)->local_uri + strlen("/three/"));
}

/* /three-vrm/...: three-vrm, beside three.js in the page's node_modules. */
static int three_vrm_handler(struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  char dir[1200];
  snprintf(dir, sizeof dir, "%s/../@pixiv/three-vrm", s->three_dir);
  return serve_under(conn, dir, mg_get_request_info(conn)->local_uri + strlen("/three-vrm/"));
}

/* /model: the --model file, read-only; nothing of the request names a file. */
static int model_handler(struct mg_connection *conn, void *ud) {
  server *s = (server *)ud;
  if (!s->model || strcmp(mg_get_request_info(conn)->local_uri, "/model") != 0) {
    mg_send_http_error(conn, 404, "%s", "not found");
    return 404;
  }
  mg_send_mime_file(conn, s->model, "application/octet-stream");
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
          if (!cJSON_IsNumber(v) || !(v->valuedouble > -1e6 && v->valuedouble < 1e6))
            ok = 0;
          else
            p[i] = v->valuedouble;
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
    h = h * 33u + (unsigned long)(t->parent + 7) * 131u + (unsigned long)t->role * 7u +
        (unsigned long)t->trail;
  }
  return h;
}

/* text, or text cut to MAX_ERROR_TEXT bytes (on a UTF-8 boundary) in buf, with a note
 * of its length. */
static const char *clip(const char *text, char buf[CLIP_SIZE]) {
  size_t cut = MAX_ERROR_TEXT;
  if (strnlen(text, MAX_ERROR_TEXT + 1) <= MAX_ERROR_TEXT) return text;
  while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80) cut--;
  snprintf(buf, CLIP_SIZE, "%.*s... [cut: %zu bytes in all]", (int)cut, text, strlen(text));
  return buf;
}

static cJSON *scripts_json(const ikrig_runtime *rt) {
  char buf[CLIP_SIZE];
  cJSON *a = cJSON_CreateArray();
  int i, n = ikrig_runtime_script_count(rt);
  for (i = 0; a && i < n; i++) {
    const ikrig_script *sc = ikrig_runtime_script(rt, i);
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddStringToObject(o, "path", sc->path ? sc->path : "?");
    cJSON_AddStringToObject(o, "status", sc->status ? sc->status : "?");
    if (sc->error)
      cJSON_AddStringToObject(o, "error", clip(sc->error, buf));
    else
      cJSON_AddNullToObject(o, "error");
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

/* {"type":"scripts",...} as text. */
static char *scripts_message(const ikrig_runtime *rt) {
  cJSON *m = cJSON_CreateObject();
  char *text;
  if (!m) return NULL;
  cJSON_AddStringToObject(m, "type", "scripts");
  cJSON_AddItemToObject(m, "scripts", scripts_json(rt));
  text = cJSON_PrintUnformatted(m);
  cJSON_Delete(m);
  return text;
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

/* The skinned mesh to draw: {"skeleton","url"} (the --model file, or the scene's asset,
 * a plain name among the page's files), or NULL. */
static cJSON *model_json(lua_State *L, const char *model_file) {
  cJSON *m = NULL;
  if (push_view_fn(L, "model")) {
    if (lua_pcall(L, 0, 2, 0) == LUA_OK) {
      const char *skeleton = lua_tostring(L, -2), *asset = lua_tostring(L, -1);
      size_t i, ok = asset && *asset && !strstr(asset, "..");
      for (i = 0; ok && asset[i]; i++)
        ok = (asset[i] >= 'a' && asset[i] <= 'z') || (asset[i] >= 'A' && asset[i] <= 'Z') ||
             (asset[i] >= '0' && asset[i] <= '9') || strchr("._-", asset[i]);
      if (skeleton && (model_file || ok) && (m = cJSON_CreateObject()) != NULL) {
        char url[300];
        snprintf(url, sizeof url, "/%s", model_file ? "model" : asset);
        cJSON_AddStringToObject(m, "skeleton", skeleton);
        cJSON_AddStringToObject(m, "url", url);
      }
      lua_pop(L, 2);
    } else {
      lua_pop(L, 1);
    }
  }
  return m;
}

static char *scene_message(ikrig_runtime *rt, const ikrig_pose *p, const char *ground, lua_State *L,
                           const char *model_file) {
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
    if (t->owner)
      cJSON_AddStringToObject(o, "owner", t->owner);
    else
      cJSON_AddNullToObject(o, "owner");
    cJSON_AddStringToObject(o, "name", t->name ? t->name : "?");
    cJSON_AddNumberToObject(o, "parent", t->parent);
    cJSON_AddStringToObject(o, "role", t->role >= 0 && t->role <= 3 ? roles[t->role] : "node");
    cJSON_AddBoolToObject(o, "trail", t->trail);
    cJSON_AddItemToArray(ts, o);
  }
  {
    cJSON *model = model_json(L, model_file);
    if (model)
      cJSON_AddItemToObject(m, "model", model);
    else
      cJSON_AddNullToObject(m, "model");
  }
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

/* The frame: the events (errors among them) only when the runtime updated, so a paused
 * view does not send them again each frame, and their texts clipped. */
static char *frame_message(const ikrig_pose *p, const loop_state *ls, int updated) {
  char *buf = NULL;
  size_t len = 0;
  ikrig_pose q = *p;
  ikrig_event *events = NULL;
  char *clipped;
  int i;
  FILE *f;
  q.n_events = updated ? p->n_events : 0;
  if (q.n_events > 0) {
    /* the events, then a clip buffer for each */
    size_t n = (size_t)q.n_events;
    if (!(events = (ikrig_event *)malloc(n * (sizeof *events + CLIP_SIZE)))) return NULL;
    clipped = (char *)(events + n);
    for (i = 0; i < q.n_events; i++) {
      events[i] = p->events[i];
      if (p->events[i].message)
        events[i].message = clip(p->events[i].message, clipped + (size_t)i * CLIP_SIZE);
    }
    q.events = events;
  }
  if ((f = open_memstream(&buf, &len)) != NULL) {
    fprintf(f, "{\"type\":\"frame\",\"paused\":%s,\"speed\":%g,\"updated\":%s,\"pose\":",
            ls->paused ? "true" : "false", ls->speed, updated ? "true" : "false");
    ikrig_pose_write_json(&q, f);
    fputs("}", f);
    if (fclose(f) != 0) {
      free(buf);
      buf = NULL;
    }
  }
  free(events);
  /* the pose line ends in a newline: JSON does not mind */
  return buf;
}

typedef enum kind { SCENE, SCRIPTS, FRAME } kind;

static blob **slot_of(client *c, kind k) {
  return k == SCENE ? &c->scene : k == SCRIPTS ? &c->scripts : &c->frame;
}

/* Makes text (NULL: nothing to send) the newest message of its kind for every client, in
 * place of one they have not sent; the scene and the scripts also for clients that join. */
static void publish(server *s, kind k, const char *text) {
  blob *b = text ? blob_of(text, strlen(text)) : NULL;
  int i;
  if (!b) return;
  pthread_mutex_lock(&s->lock);
  for (i = 0; i < s->n_clients; i++) {
    blob_set(slot_of(s->clients[i], k), b);
    pthread_cond_signal(&s->clients[i]->wake);
  }
  if (k == SCENE)
    blob_set(&s->scene, b);
  else if (k == SCRIPTS)
    blob_set(&s->scripts, b);
  blob_unref(b);
  pthread_mutex_unlock(&s->lock);
}

/* A signature of text's first bytes and its length: what a clipped error shows. */
static unsigned long text_signature(unsigned long h, const char *t) {
  size_t i, n;
  if (!t) return h * 33u + 1u;
  n = strnlen(t, MAX_ERROR_TEXT + 1);
  for (i = 0; i < n; i++) h = h * 33u + (unsigned char)t[i];
  return h * 33u + (n > MAX_ERROR_TEXT ? (unsigned long)strlen(t) : n);
}

static unsigned long scripts_signature(const ikrig_runtime *rt) {
  int i, n = ikrig_runtime_script_count(rt);
  unsigned long h = 5381u + (unsigned long)n;
  for (i = 0; i < n; i++) {
    const ikrig_script *sc = ikrig_runtime_script(rt, i);
    h = text_signature(text_signature(text_signature(h, sc->path), sc->status), sc->error);
  }
  return h;
}

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

#if defined(IKRIG_VIEW_SOURCE_DIR) && defined(IKRIG_VIEW_THREE_DIR)
static int has_page(const char *dir) {
  char path[1200];
  FILE *f;
  if ((size_t)snprintf(path, sizeof path, "%s/index.html", dir) >= sizeof path || !(f = fopen(path, "r")))
    return 0;
  fclose(f);
  return 1;
}
#endif

/* The page's directory and three.js's: $IKRIG_VIEW_DIR (three.js in its node_modules),
 * else the prefix's beside the executable (bin/../share/ikrig/view), else, for a program
 * inside the build tree, the source tree's page and the build's three.js. */
static void view_dirs(char *page, size_t n, char *three, size_t m) {
  const char *env = getenv(IKRIG_VIEW_DIR_ENV);
  char exe[700];
  if (env && *env)
    snprintf(page, n, "%s", env);
  else if (ikrig_exe_dir(exe, sizeof exe) == 0)
    snprintf(page, n, "%s/%s", exe, IKRIG_INSTALL_VIEW_REL);
  else
    snprintf(page, n, "%s", "view");
#if defined(IKRIG_VIEW_SOURCE_DIR) && defined(IKRIG_VIEW_THREE_DIR)
  if (!(env && *env) && !has_page(page) && ikrig_in_build_tree()) {
    snprintf(page, n, "%s", IKRIG_VIEW_SOURCE_DIR);
    snprintf(three, m, "%s", IKRIG_VIEW_THREE_DIR);
    return;
  }
#endif
  snprintf(three, m, "%s/node_modules/three", page);
}

int ikrig_view_run(ikrig_runtime *rt, lua_State *L, const ikrig_view_options *opt,
                   volatile sig_atomic_t *stop) {
  static server s; /* civetweb's threads may still look at it while mg_stop runs */
  int guard_started = 0;
  struct mg_callbacks cb;
  char ports[300], dir[1024];
  const char *options[32];
  struct mg_server_port sp[4];
  int n = 0, status = 0, nports;
  long frames = 0;
  unsigned long sig = 0, script_sig = 0;
  char *ground = NULL;
  int have_scene = 0, have_scripts = 0;
  loop_state ls;
  double next;
  const char *host = opt->host ? opt->host : "127.0.0.1";

  memset(&s, 0, sizeof s);
  pthread_mutex_init(&s.lock, NULL);
  pthread_cond_init(&s.guard_wake, NULL);
  s.host = opt->host;
  s.model = opt->model;
  view_dirs(dir, sizeof dir, s.three_dir, sizeof s.three_dir);
  if (strchr(host, ':'))
    snprintf(ports, sizeof ports, "[%s]:%d", host, opt->port);
  else
    snprintf(ports, sizeof ports, "%s:%d", host, opt->port);
  signal(SIGPIPE, SIG_IGN);
  options[n++] = "listening_ports";
  options[n++] = ports;
  options[n++] = "document_root";
  options[n++] = dir;
  options[n++] = "num_threads";
  options[n++] = NUM_THREADS;
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
  cb.end_request = end_request;
  mg_init_library(MG_FEATURES_WEBSOCKET);
  s.ctx = mg_start(&cb, &s, options);
  if (!s.ctx) {
    fprintf(stderr, "ikrig: cannot serve on %s (is the port taken?)\n", ports);
    mg_exit_library();
    pthread_cond_destroy(&s.guard_wake);
    pthread_mutex_destroy(&s.lock);
    return 1;
  }
  nports = mg_get_server_ports(s.ctx, 4, sp);
  s.port = nports > 0 ? sp[0].port : opt->port; /* begin_request refuses every Host until it is set */
  guard_started = pthread_create(&s.guard, NULL, guard_main, &s) == 0;
  mg_set_websocket_handler(s.ctx, "/ws", ws_connect, ws_ready, ws_data, ws_close, &s);
  mg_set_request_handler(s.ctx, "/three/", three_handler, &s);
  mg_set_request_handler(s.ctx, "/three-vrm/", three_vrm_handler, &s);
  mg_set_request_handler(s.ctx, "/model", model_handler, &s);
  {
    FILE *probe;
    char idx[1200];
    snprintf(idx, sizeof idx, "%s/build/three.module.js", s.three_dir);
    if (!(probe = fopen(idx, "r")))
      fprintf(stderr, "ikrig: %s not found (three.js for the page: the build runs 'npm ci')\n", idx);
    else
      fclose(probe);
  }
  printf("ikrig: view at http://%s%s%s:%d/ (Ctrl-C stops)\n", strchr(host, ':') ? "[" : "", host,
         strchr(host, ':') ? "]" : "", s.port);
  fflush(stdout);

  ls.paused = 0;
  ls.step = 0;
  ls.speed = 1;
  next = monotonic();
  while (!*stop && (opt->frames == 0 || frames < opt->frames)) {
    char *queue[MAX_QUEUE], *frame;
    int nq, i, updated = 0;
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
    if (!have_scene || pose_signature(p) != sig) {
      char *scene = scene_message(rt, p, ground, L, opt->model);
      publish(&s, SCENE, scene);
      free(scene);
      sig = pose_signature(p);
      have_scene = 1;
    }
    if (!have_scripts || scripts_signature(rt) != script_sig) {
      char *scripts = scripts_message(rt);
      publish(&s, SCRIPTS, scripts);
      cJSON_free(scripts);
      script_sig = scripts_signature(rt);
      have_scripts = 1;
    }
    frame = frame_message(p, &ls, updated);
    publish(&s, FRAME, frame);
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
  if (guard_started) {
    pthread_mutex_lock(&s.lock);
    s.guard_stop = 1;
    pthread_cond_signal(&s.guard_wake);
    pthread_mutex_unlock(&s.lock);
    pthread_join(s.guard, NULL);
  }
  {
    int i;
    for (i = 0; i < s.n_queue; i++) free(s.queue[i]);
    s.n_queue = 0;
  }
  blob_unref(s.scene);
  blob_unref(s.scripts);
  free(ground);
  pthread_cond_destroy(&s.guard_wake);
  pthread_mutex_destroy(&s.lock);
  return status;
}
