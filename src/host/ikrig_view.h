/*
 * ikrig_view.h: `ikrig view`, the live view in the browser (ikrig_view.c).
 *
 * An HTTP/WebSocket server (civetweb, Debian's libcivetweb-dev) serves the page
 * (src/host/view/: index.html, main.js, three.js from its node_modules) and streams the
 * scene at the frame rate over a WebSocket at /ws. Messages from the page (JSON, parsed
 * with cJSON) move targets and poles, pause, step and set the speed.
 */
#ifndef IKRIG_VIEW_H
#define IKRIG_VIEW_H

#include <signal.h>

#include "ikrig_embed.h"

#define IKRIG_VIEW_DEFAULT_PORT 7878
/* The environment variable naming the page's folder (index.html, main.js, node_modules). */
#define IKRIG_VIEW_DIR_ENV "IKRIG_VIEW_DIR"

typedef struct ikrig_view_options {
  const char *host;  /* NULL: 127.0.0.1, and only loopback peers are let in */
  int port;          /* 0: any free one */
  double dt;         /* seconds per frame */
  long frames;       /* stop after this many frames, 0: run until stopped */
  const char *model; /* a glTF/GLB/VRM file the page loads from /model (NULL: none); only it */
} ikrig_view_options;

/* Registers, in L's package.preload, a scene module wrapping `scene` (NULL: the built-in
 * demo's) that lets the view pin dragged nodes and read the ground; returns its name,
 * for ikrig_options.scene. */
const char *ikrig_view_scene(lua_State *L, const char *scene);

/* Serves the view and runs the runtime in real time until *stop is set (SIGINT,
 * SIGTERM) or opt->frames have run. Returns 0, or 1 when the server could not start or
 * the runtime failed. */
int ikrig_view_run(ikrig_runtime *rt, lua_State *L, const ikrig_view_options *opt,
                   volatile sig_atomic_t *stop);

/* Whether a peer at `addr` (numeric, as the server sees it) may connect: any peer when
 * the user chose the address to bind (--host), else loopback ones only (127.0.0.0/8,
 * ::1, ::ffff:127.x.y.z). */
int ikrig_view_peer_allowed(const char *addr, int host_given);

/* Whether a request's Host header names this server: 127.0.0.1, localhost, [::1] or the
 * --host name (`host`, NULL when not given), with `port` (bare only for port 80); bound
 * to every address (0.0.0.0, ::), any numeric address too. A DNS name of someone else's
 * that resolves here (DNS rebinding) is refused. */
int ikrig_view_host_allowed(const char *value, const char *host, int port);

/* Whether a WebSocket upgrade's Origin header is the page's own: "http://" and a Host
 * that ikrig_view_host_allowed takes. */
int ikrig_view_origin_allowed(const char *origin, const char *host, int port);

#endif /* IKRIG_VIEW_H */
