/*
 * ikrig_json.c: a pose as one line of JSON (ikrig run --out FILE.jsonl).
 *
 * The schema, one object per frame, on one line, keys in this order:
 *
 *   {"frame": 0,                       integer, 0 for the first update
 *    "t": 0.0166666667,                seconds simulated after this frame (the dts summed)
 *    "skeletons": {                    by skeleton name, names sorted
 *      "arm": {                        by bone name, in the skeleton's order (parents first
 *        "base": [x, y, z, qx, qy, qz, qw],   as given): world position, world rotation
 *        ...}},
 *    "nodes": {"target": [x, y, z, qx, qy, qz, qw], ...},   by node name, sorted
 *    "chains": [                       what the scripts reported this frame (scene.report),
 *      {"name": "arm",                 in the order they reported
 *       "script": "rigs/arm.lua",      the reporting script, null when not known
 *       "reached": true,
 *       "distance": 0.00042,           tip to target; null when not given
 *       "iterations": 3,               null when not given
 *       "constraints": [               only when the script passed its chain to
 *         {"bone": 2,                  scene.report (5th argument): its
 *          "kind": "cone",             chain:constraint_shapes(), root first; the bone
 *          "apex": [x, y, z],          limited (1-based), "cone" or "hinge", its first
 *          "direction": [x, y, z],     joint, the parent's direction (unit),
 *          "angle": 0.6,               cone: the half-angle (radians);
 *          "axis": [x, y, z],          hinge, instead of angle: the carried axis (unit)
 *          "min": 0, "max": 2.1,       and the range about it from direction;
 *          "length": 0.12}]}],         the bone's length
 *    "events": [                       the runtime's events since the frame before (the
 *      {"kind": "load",                first frame has the loads): load, reload, error,
 *       "script": "rigs/arm.lua",      paused, resumed, removed
 *       "message": null}]}             "file:line: message" for errors, else null
 *
 * Numbers are written with 10 significant digits ("%.10g"), NaN and infinities as null.
 * Strings are escaped as JSON requires; bytes that are not UTF-8 become U+FFFD, so every
 * line is valid JSON whatever a script put in a name or an error message. The same run
 * writes the same bytes: nothing in a line depends on time or addresses.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ikrig_embed.h"

static void put_number(FILE *f, double v) {
  if (!isfinite(v)) {
    fputs("null", f);
    return;
  }
  if (v == 0) v = 0; /* no "-0" */
  fprintf(f, "%.10g", v);
}

/* The length of the UTF-8 sequence starting at s (n bytes left), or 0 when invalid. */
static size_t utf8_length(const unsigned char *s, size_t n) {
  size_t len, i;
  unsigned long c;
  if (s[0] < 0x80) return 1;
  if (s[0] >= 0xC2 && s[0] <= 0xDF) {
    len = 2;
    c = s[0] & 0x1Fu;
  } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
    len = 3;
    c = s[0] & 0x0Fu;
  } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
    len = 4;
    c = s[0] & 0x07u;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3Fu);
  }
  if ((len == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
      (len == 4 && (c < 0x10000 || c > 0x10FFFF)))
    return 0;
  return len;
}

static void put_string(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n;
  if (!s) {
    fputs("null", f);
    return;
  }
  n = strlen(s);
  fputc('"', f);
  while (n > 0) {
    size_t len = utf8_length(p, n);
    if (len == 0) {
      fputs("\\ufffd", f);
      len = 1;
    } else if (len > 1) {
      fwrite(p, 1, len, f);
    } else if (*p == '"' || *p == '\\') {
      fputc('\\', f);
      fputc(*p, f);
    } else if (*p == '\n') {
      fputs("\\n", f);
    } else if (*p == '\t') {
      fputs("\\t", f);
    } else if (*p < 0x20 || *p == 0x7F) {
      fprintf(f, "\\u%04x", *p);
    } else {
      fputc(*p, f);
    }
    p += len;
    n -= len;
  }
  fputc('"', f);
}

static void put_transform(FILE *f, const ikrig_transform *t) {
  int i;
  put_string(f, t->name);
  fputs(":[", f);
  for (i = 0; i < 3; i++) {
    put_number(f, t->position[i]);
    fputc(',', f);
  }
  for (i = 0; i < 4; i++) {
    put_number(f, t->rotation[i]);
    if (i < 3) fputc(',', f);
  }
  fputc(']', f);
}

static void put_vec3(FILE *f, const char *key, const double v[3]) {
  int k;
  fprintf(f, ",\"%s\":[", key);
  for (k = 0; k < 3; k++) {
    if (k) fputc(',', f);
    put_number(f, v[k]);
  }
  fputc(']', f);
}

static void put_key_number(FILE *f, const char *key, double v) {
  fprintf(f, ",\"%s\":", key);
  put_number(f, v);
}

/* The chain's "constraints" (when it was reported with its chain). */
static void put_shapes(FILE *f, const ikrig_chain *c) {
  int j;
  fputs(",\"constraints\":[", f);
  for (j = 0; j < c->n_constraints && c->constraints; j++) {
    const ikrig_constraint_shape *s = &c->constraints[j];
    const int hinge = strcmp(s->kind, "hinge") == 0;
    if (j) fputc(',', f);
    fprintf(f, "{\"bone\":%d,\"kind\":\"%s\"", s->bone, hinge ? "hinge" : "cone");
    put_vec3(f, "apex", s->apex);
    put_vec3(f, "direction", s->direction);
    if (hinge) {
      put_vec3(f, "axis", s->axis);
      put_key_number(f, "min", s->min);
      put_key_number(f, "max", s->max);
    } else {
      put_key_number(f, "angle", s->angle);
    }
    put_key_number(f, "length", s->length);
    fputc('}', f);
  }
  fputc(']', f);
}

int ikrig_pose_write_json(const ikrig_pose *pose, FILE *f) {
  int i, first;
  const char *owner = NULL;
  fprintf(f, "{\"frame\":%ld,\"t\":", pose->frame);
  put_number(f, pose->time);
  fputs(",\"skeletons\":{", f);
  for (i = 0; i < pose->n_transforms; i++) {
    const ikrig_transform *t = &pose->transforms[i];
    if (!t->owner) continue;
    if (!owner || strcmp(owner, t->owner) != 0) {
      if (owner) fputs("},", f);
      put_string(f, t->owner);
      fputs(":{", f);
      owner = t->owner;
    } else {
      fputc(',', f);
    }
    put_transform(f, t);
  }
  if (owner) fputc('}', f);
  fputs("},\"nodes\":{", f);
  for (i = 0, first = 1; i < pose->n_transforms; i++) {
    if (pose->transforms[i].owner) continue;
    if (!first) fputc(',', f);
    put_transform(f, &pose->transforms[i]);
    first = 0;
  }
  fputs("},\"chains\":[", f);
  for (i = 0; i < pose->n_chains; i++) {
    const ikrig_chain *c = &pose->chains[i];
    if (i) fputc(',', f);
    fputs("{\"name\":", f);
    put_string(f, c->name);
    fputs(",\"script\":", f);
    put_string(f, c->script);
    fprintf(f, ",\"reached\":%s,\"distance\":", c->reached ? "true" : "false");
    put_number(f, c->distance);
    if (c->iterations >= 0)
      fprintf(f, ",\"iterations\":%d", c->iterations);
    else
      fputs(",\"iterations\":null", f);
    if (c->n_constraints >= 0) put_shapes(f, c);
    fputc('}', f);
  }
  fputs("],\"events\":[", f);
  for (i = 0; i < pose->n_events; i++) {
    const ikrig_event *e = &pose->events[i];
    if (i) fputc(',', f);
    fputs("{\"kind\":", f);
    put_string(f, e->kind);
    fputs(",\"script\":", f);
    put_string(f, e->script);
    fputs(",\"message\":", f);
    put_string(f, e->message);
    fputc('}', f);
  }
  fputs("]}\n", f);
  return ferror(f) ? -1 : 0;
}
