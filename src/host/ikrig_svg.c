/*
 * ikrig_svg.c: see ikrig_svg.h.
 *
 * What is kept while frames come in stays bounded however long the run: every frame
 * extends the picture's bounds; trails keep one point per frame until they hold
 * TRAIL_MAX, then every other point and half as many from then on; earlier poses
 * ("ghosts") are kept every `stride` frames, the stride doubling whenever more than
 * GHOST_MAX would be kept. The output depends only on the poses: same run, same bytes.
 */
#include "ikrig_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRAIL_MAX 2048
#define GHOST_MAX 10
#define MAX_W 860.0
#define MAX_H 620.0
#define MIN_W 560.0
#define MARGIN 24.0
#define HEADER 40.0
#define FOOTER 28.0

/* A transform as drawn: its identity (an index into svg->ids) and where it projects. */
typedef struct item {
  int id;
  int parent; /* index into the same frame's items, or -1 */
  double u, v;
} item;

typedef struct frame {
  long number;
  item *items;
  int n;
} frame;

typedef struct ident {
  char *owner; /* NULL for a node */
  char *name;
  int group; /* skeleton number (colour), -1 for nodes */
  int role;
  int trail; /* index into svg->trails, or -1 */
} ident;

typedef struct trail {
  int id;
  int target; /* a target's path (dashed) rather than a scene trail */
  double *uv;
  int n, cap, stride;
  long seen;
} trail;

struct ikrig_svg {
  ikrig_view view;
  ident *ids;
  int n_ids, cap_ids, n_groups;
  trail *trails;
  int n_trails, cap_trails;
  frame last;
  frame ghosts[GHOST_MAX + 1];
  int n_ghosts;
  long stride, frames_seen, first_frame;
  double last_time;
  double u0, u1, v0, v1, depth_sum;
  long depth_n;
};

int ikrig_view_parse(const char *name, ikrig_view *view) {
  if (strcmp(name, "side") == 0)
    *view = IKRIG_VIEW_SIDE;
  else if (strcmp(name, "top") == 0)
    *view = IKRIG_VIEW_TOP;
  else if (strcmp(name, "front") == 0)
    *view = IKRIG_VIEW_FRONT;
  else
    return -1;
  return 0;
}

const char *ikrig_view_name(ikrig_view view) {
  return view == IKRIG_VIEW_TOP ? "top" : view == IKRIG_VIEW_FRONT ? "front" : "side";
}

/* World to the picture's plane: u to the right, v up; depth along the line of sight. */
static void project(ikrig_view view, const double p[3], double *u, double *v, double *depth) {
  switch (view) {
    case IKRIG_VIEW_TOP:
      *u = p[0];
      *v = -p[2];
      *depth = p[1];
      break;
    case IKRIG_VIEW_FRONT:
      *u = -p[2];
      *v = p[1];
      *depth = p[0];
      break;
    default:
      *u = p[0];
      *v = p[1];
      *depth = p[2];
      break;
  }
}

ikrig_svg *ikrig_svg_new(ikrig_view view) {
  ikrig_svg *s = (ikrig_svg *)calloc(1, sizeof *s);
  if (!s) return NULL;
  s->view = view;
  s->stride = 1;
  s->first_frame = -1;
  s->u0 = s->v0 = HUGE_VAL;
  s->u1 = s->v1 = -HUGE_VAL;
  return s;
}

static void frame_free(frame *f) {
  free(f->items);
  f->items = NULL;
  f->n = 0;
}

void ikrig_svg_free(ikrig_svg *s) {
  int i;
  if (!s) return;
  for (i = 0; i < s->n_ids; i++) {
    free(s->ids[i].owner);
    free(s->ids[i].name);
  }
  free(s->ids);
  for (i = 0; i < s->n_trails; i++) free(s->trails[i].uv);
  free(s->trails);
  frame_free(&s->last);
  for (i = 0; i < s->n_ghosts; i++) frame_free(&s->ghosts[i]);
  free(s);
}

static int grow(void **p, int *cap, int n, size_t size) {
  void *g;
  int c;
  if (n < *cap) return 0;
  c = *cap ? 2 * *cap : 16;
  g = realloc(*p, (size_t)c * size);
  if (!g) return -1;
  *p = g;
  *cap = c;
  return 0;
}

static char *dup_or_null(const char *s) {
  char *d;
  size_t n;
  if (!s) return NULL;
  n = strlen(s) + 1;
  d = (char *)malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* The identity of a transform, made on first sight; -1 when out of memory. */
static int ident_of(ikrig_svg *s, const ikrig_transform *t) {
  int i, group = -1;
  ident *d;
  for (i = 0; i < s->n_ids; i++)
    if (same(s->ids[i].owner, t->owner) && same(s->ids[i].name, t->name)) return i;
  if (t->owner) {
    for (i = 0; i < s->n_ids && group < 0; i++)
      if (same(s->ids[i].owner, t->owner)) group = s->ids[i].group;
    if (group < 0) group = s->n_groups++;
  }
  if (grow((void **)&s->ids, &s->cap_ids, s->n_ids, sizeof *s->ids) != 0) return -1;
  d = &s->ids[s->n_ids];
  d->owner = dup_or_null(t->owner);
  d->name = dup_or_null(t->name ? t->name : "");
  if ((t->owner && !d->owner) || !d->name) {
    free(d->owner);
    free(d->name);
    return -1;
  }
  d->group = group;
  d->role = t->role;
  d->trail = -1;
  if (t->trail || t->role == IKRIG_TARGET) {
    trail *tr;
    if (grow((void **)&s->trails, &s->cap_trails, s->n_trails, sizeof *s->trails) != 0) {
      free(d->owner);
      free(d->name);
      return -1;
    }
    tr = &s->trails[s->n_trails];
    memset(tr, 0, sizeof *tr);
    tr->id = s->n_ids;
    tr->target = !t->trail;
    tr->stride = 1;
    d->trail = s->n_trails++;
  }
  return s->n_ids++;
}

static int trail_add(trail *tr, double u, double v) {
  if (tr->seen++ % tr->stride != 0) return 0;
  if (tr->n == TRAIL_MAX) { /* keep every other point, and half as many from now on */
    int i;
    for (i = 0; i < tr->n / 2; i++) {
      tr->uv[2 * i] = tr->uv[4 * i];
      tr->uv[2 * i + 1] = tr->uv[4 * i + 1];
    }
    tr->n /= 2;
    tr->stride *= 2;
  }
  if (tr->n == tr->cap) {
    int cap = tr->cap ? 2 * tr->cap : 64;
    double *g = (double *)realloc(tr->uv, (size_t)cap * 2 * sizeof *g);
    if (!g) return -1;
    tr->uv = g;
    tr->cap = cap;
  }
  tr->uv[2 * tr->n] = u;
  tr->uv[2 * tr->n + 1] = v;
  tr->n++;
  return 0;
}

static void extend(ikrig_svg *s, double u, double v) {
  if (!isfinite(u) || !isfinite(v)) return;
  if (u < s->u0) s->u0 = u;
  if (u > s->u1) s->u1 = u;
  if (v < s->v0) s->v0 = v;
  if (v > s->v1) s->v1 = v;
}

static int frame_copy(frame *dst, const frame *src) {
  item *items = (item *)malloc((size_t)(src->n > 0 ? src->n : 1) * sizeof *items);
  if (!items) return -1;
  if (src->n) memcpy(items, src->items, (size_t)src->n * sizeof *items);
  free(dst->items);
  dst->items = items;
  dst->n = src->n;
  dst->number = src->number;
  return 0;
}

int ikrig_svg_add(ikrig_svg *s, const ikrig_pose *pose) {
  frame f;
  int i;
  long k = s->frames_seen;
  f.number = pose->frame;
  f.n = pose->n_transforms;
  f.items = (item *)malloc((size_t)(f.n > 0 ? f.n : 1) * sizeof *f.items);
  if (!f.items) return -1;
  for (i = 0; i < f.n; i++) {
    const ikrig_transform *t = &pose->transforms[i];
    double depth;
    int id = ident_of(s, t);
    if (id < 0) {
      free(f.items);
      return -1;
    }
    f.items[i].id = id;
    f.items[i].parent = t->parent >= 0 && t->parent < f.n ? t->parent : -1;
    project(s->view, t->position, &f.items[i].u, &f.items[i].v, &depth);
    extend(s, f.items[i].u, f.items[i].v);
    if (isfinite(depth)) {
      s->depth_sum += depth;
      s->depth_n++;
    }
    if (s->ids[id].trail >= 0 && trail_add(&s->trails[s->ids[id].trail], f.items[i].u, f.items[i].v) != 0) {
      free(f.items);
      return -1;
    }
  }
  if (s->first_frame < 0) s->first_frame = pose->frame;
  s->last_time = pose->time;
  s->frames_seen++;
  if (k % s->stride == 0) {
    if (frame_copy(&s->ghosts[s->n_ghosts], &f) != 0) {
      free(f.items);
      return -1;
    }
    s->ghosts[s->n_ghosts].number = k; /* by arrival, for thinning */
    s->n_ghosts++;
    if (s->n_ghosts > GHOST_MAX) { /* keep those on the doubled stride */
      int j, kept = 0;
      s->stride *= 2;
      for (j = 0; j < s->n_ghosts; j++) {
        if (s->ghosts[j].number % s->stride == 0)
          s->ghosts[kept++] = s->ghosts[j];
        else
          frame_free(&s->ghosts[j]);
      }
      for (j = kept; j < s->n_ghosts; j++) s->ghosts[j].items = NULL;
      s->n_ghosts = kept;
    }
  }
  free(s->last.items);
  s->last = f;
  return 0;
}

/* ---- writing ---- */

typedef struct layout {
  double u0, v1, scale, ox, oy, width, height;
} layout;

static double sx(const layout *l, double u) { return l->ox + (u - l->u0) * l->scale; }
static double sy(const layout *l, double v) { return l->oy + (l->v1 - v) * l->scale; }

static const char *const PALETTE[] = {"#2b5797", "#2d7d46", "#8e3b9e", "#b5462d", "#1f7f8c", "#6b5b2a"};
#define N_PALETTE (sizeof PALETTE / sizeof PALETTE[0])

static const char *colour(int group) { return group < 0 ? "#555555" : PALETTE[(size_t)group % N_PALETTE]; }

/* Text content or an attribute value: XML-escaped; bytes that are not UTF-8 and
 * characters XML forbids become '?'. */
static void put_text(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    int len = *p < 0x80                    ? 1
              : (*p >= 0xC2 && *p <= 0xDF) ? 2
              : (*p >= 0xE0 && *p <= 0xEF) ? 3
              : (*p >= 0xF0 && *p <= 0xF4) ? 4
                                           : 0;
    int i, ok = len > 0;
    for (i = 1; i < len && ok; i++) ok = (p[i] & 0xC0) == 0x80;
    if (ok && len == 3) {
      unsigned c = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
      ok = c >= 0x800 && !(c >= 0xD800 && c <= 0xDFFF) && c != 0xFFFE && c != 0xFFFF;
    } else if (ok && len == 4) {
      unsigned long c =
          ((p[0] & 0x07ul) << 18) | ((p[1] & 0x3Ful) << 12) | ((p[2] & 0x3Ful) << 6) | (p[3] & 0x3Ful);
      ok = c >= 0x10000 && c <= 0x10FFFF;
    }
    if (!ok) {
      fputc('?', f);
      p++;
      continue;
    }
    if (len > 1) {
      fwrite(p, 1, (size_t)len, f);
    } else if (*p == '&') {
      fputs("&amp;", f);
    } else if (*p == '<') {
      fputs("&lt;", f);
    } else if (*p == '>') {
      fputs("&gt;", f);
    } else if (*p == '"') {
      fputs("&quot;", f);
    } else if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') {
      fputc('?', f);
    } else {
      fputc(*p, f);
    }
    p += len;
  }
}

/* A round step near span / 8: 1, 2 or 5 times a power of ten. */
static double grid_step(double span) {
  double raw = span / 8, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

#define GROUND_SAMPLES 200
#define TOP_CELLS 48

/* The ground under the picture: a filled profile (side, front) or height-shaded cells
 * (top). Returns -1 when the ground callback failed. */
static int draw_ground(FILE *f, const ikrig_svg *s, const layout *l, const double *gy, const int *hit,
                       double bottom, ikrig_ground_fn ground, void *ud) {
  int k;
  if (!ground) return 0;
  if (s->view != IKRIG_VIEW_TOP) {
    double du = (s->u1 - s->u0) / GROUND_SAMPLES;
    fputs("<g id=\"ground\">\n", f);
    for (k = 0; k <= GROUND_SAMPLES;) { /* one filled run per stretch of hits */
      int a, b;
      while (k <= GROUND_SAMPLES && !hit[k]) k++;
      if (k > GROUND_SAMPLES) break;
      a = k;
      while (k <= GROUND_SAMPLES && hit[k]) k++;
      b = k - 1;
      fprintf(f, "<polygon fill=\"#efe6d2\" stroke=\"none\" points=\"%.1f,%.1f", sx(l, s->u0 + a * du),
              bottom);
      for (k = a; k <= b; k++) fprintf(f, " %.1f,%.1f", sx(l, s->u0 + k * du), sy(l, gy[k]));
      fprintf(f, " %.1f,%.1f\"/>\n", sx(l, s->u0 + b * du), bottom);
      fputs("<polyline fill=\"none\" stroke=\"#8d7b57\" stroke-width=\"2\" points=\"", f);
      for (k = a; k <= b; k++)
        fprintf(f, "%s%.1f,%.1f", k > a ? " " : "", sx(l, s->u0 + k * du), sy(l, gy[k]));
      fputs("\"/>\n", f);
      k = b + 1;
    }
    fputs("</g>\n", f);
    return 0;
  } else {
    double du = (s->u1 - s->u0) / TOP_CELLS, dv = (s->v1 - s->v0) / TOP_CELLS, lo = HUGE_VAL, hi = -HUGE_VAL;
    double *h = (double *)malloc(sizeof(double) * TOP_CELLS * TOP_CELLS);
    int *got = (int *)malloc(sizeof(int) * TOP_CELLS * TOP_CELLS), i, j, status = 0;
    if (!h || !got) {
      free(h);
      free(got);
      return -1;
    }
    for (j = 0; j < TOP_CELLS && status == 0; j++)
      for (i = 0; i < TOP_CELLS && status == 0; i++) {
        double u = s->u0 + (i + 0.5) * du, v = s->v0 + (j + 0.5) * dv;
        int r = ground(ud, u, -v, &h[j * TOP_CELLS + i]);
        if (r < 0) status = -1;
        got[j * TOP_CELLS + i] = r == 1;
        if (r == 1) {
          if (h[j * TOP_CELLS + i] < lo) lo = h[j * TOP_CELLS + i];
          if (h[j * TOP_CELLS + i] > hi) hi = h[j * TOP_CELLS + i];
        }
      }
    if (status == 0 && hi == lo) { /* flat: one colour, one rectangle where it was hit */
      int i0 = TOP_CELLS, i1 = -1, j0 = TOP_CELLS, j1 = -1;
      for (j = 0; j < TOP_CELLS; j++)
        for (i = 0; i < TOP_CELLS; i++)
          if (got[j * TOP_CELLS + i]) {
            if (i < i0) i0 = i;
            if (i > i1) i1 = i;
            if (j < j0) j0 = j;
            if (j > j1) j1 = j;
          }
      fputs("<g id=\"ground\" stroke=\"none\">\n", f);
      if (i1 >= 0)
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#efe6d2\"/>\n",
                sx(l, s->u0 + i0 * du), sy(l, s->v0 + (j1 + 1) * dv), (i1 - i0 + 1) * du * l->scale,
                (j1 - j0 + 1) * dv * l->scale);
      fputs("</g>\n", f);
    } else if (status == 0) {
      fputs("<g id=\"ground\" stroke=\"none\">\n", f);
      for (j = 0; j < TOP_CELLS; j++)
        for (i = 0; i < TOP_CELLS; i++) {
          double w = hi > lo ? (h[j * TOP_CELLS + i] - lo) / (hi - lo) : 0;
          if (!got[j * TOP_CELLS + i]) continue;
          /* light sand for the lowest ground, darker with height */
          fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\"/>\n",
                  sx(l, s->u0 + i * du), sy(l, s->v0 + (j + 1) * dv), du * l->scale + 0.3,
                  dv * l->scale + 0.3, (int)(239 - 70 * w), (int)(230 - 80 * w), (int)(210 - 110 * w));
        }
      fputs("</g>\n", f);
    }
    free(h);
    free(got);
    return status;
  }
}

static void draw_pose(FILE *f, const ikrig_svg *s, const layout *l, const frame *fr, int ghost) {
  int i;
  fprintf(f, "<g class=\"%s\"%s stroke-linecap=\"round\">\n", ghost ? "ghost" : "pose",
          ghost ? " opacity=\"0.16\"" : "");
  for (i = 0; i < fr->n; i++) { /* bones */
    const item *it = &fr->items[i];
    const ident *d = &s->ids[it->id];
    if (it->parent < 0 || d->group < 0) continue;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>\n",
            sx(l, fr->items[it->parent].u), sy(l, fr->items[it->parent].v), sx(l, it->u), sy(l, it->v),
            colour(d->group), ghost ? "3" : "5");
  }
  if (ghost) {
    fputs("</g>\n", f);
    return;
  }
  for (i = 0; i < fr->n; i++) { /* joints, then the nodes on top */
    const item *it = &fr->items[i];
    const ident *d = &s->ids[it->id];
    if (d->group < 0) continue;
    fprintf(f,
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"2\"/>\n",
            sx(l, it->u), sy(l, it->v), colour(d->group));
  }
  for (i = 0; i < fr->n; i++) {
    const item *it = &fr->items[i];
    const ident *d = &s->ids[it->id];
    double x = sx(l, it->u), y = sy(l, it->v);
    if (d->group >= 0) continue;
    if (d->role == IKRIG_TARGET) {
      fprintf(f,
              "<g class=\"target\" stroke=\"#d62728\" stroke-width=\"2\" fill=\"none\"><circle cx=\"%.1f\" "
              "cy=\"%.1f\" r=\"8\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" "
              "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
              x, y, x - 12, y, x + 12, y, x, y - 12, x, y + 12);
    } else if (d->role == IKRIG_POLE) {
      fprintf(f,
              "<polygon class=\"pole\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#c9a3e0\" "
              "stroke=\"#7b3fa0\" stroke-width=\"2\"/>\n",
              x, y - 8, x + 8, y, x, y + 8, x - 8, y);
    } else {
      fprintf(f, "<rect class=\"node\" x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"#888888\"/>\n",
              x - 3.5, y - 3.5);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#444444\" font-size=\"11\">", x + 11, y - 9);
    put_text(f, d->name);
    fputs("</text>\n", f);
  }
  fputs("</g>\n", f);
}

/* The ground's profile along the view's horizontal at the scene's mean depth (side and
 * front views; nothing for top). -1 when the callback failed. */
static int sample_ground(const ikrig_svg *s, ikrig_ground_fn ground, void *ud, double depth, double *gy,
                         int *hit, double *gmin) {
  int k;
  *gmin = HUGE_VAL;
  memset(hit, 0, sizeof(int) * (GROUND_SAMPLES + 1));
  if (!ground || s->view == IKRIG_VIEW_TOP) return 0;
  for (k = 0; k <= GROUND_SAMPLES; k++) {
    double u = s->u0 + (s->u1 - s->u0) * k / GROUND_SAMPLES;
    int r = s->view == IKRIG_VIEW_SIDE ? ground(ud, u, depth, &gy[k]) : ground(ud, depth, -u, &gy[k]);
    if (r < 0) return -1;
    hit[k] = r == 1 && isfinite(gy[k]);
    if (hit[k] && gy[k] < *gmin) *gmin = gy[k];
  }
  return 0;
}

static int write_svg(ikrig_svg *s, FILE *f, const char *title, ikrig_ground_fn ground, void *ud) {
  layout l;
  double du, dv, pad, depth, step, bottom, g, gmin = HUGE_VAL;
  double gy[GROUND_SAMPLES + 1];
  int hit[GROUND_SAMPLES + 1], k, i;
  if (!(s->u1 >= s->u0)) { /* nothing drawn: a unit square at the origin */
    s->u0 = s->v0 = -1;
    s->u1 = s->v1 = 1;
  }
  du = s->u1 - s->u0;
  dv = s->v1 - s->v0;
  pad = 0.12 * (du > dv ? du : dv) + 0.1;
  s->u0 -= pad;
  s->u1 += pad;
  s->v0 -= pad;
  s->v1 += pad;
  depth = s->depth_n ? s->depth_sum / (double)s->depth_n : 0;
  /* the ground profile, and room for a band of it below the scene */
  if (sample_ground(s, ground, ud, depth, gy, hit, &gmin) != 0) return -1;
  if (gmin < HUGE_VAL && gmin - pad < s->v0 && gmin > s->v0 - 2 * (s->v1 - s->v0)) s->v0 = gmin - pad;
  du = s->u1 - s->u0;
  dv = s->v1 - s->v0;
  l.scale = (MAX_W - 2 * MARGIN) / du;
  if ((MAX_H - 2 * MARGIN) / dv < l.scale) l.scale = (MAX_H - 2 * MARGIN) / dv;
  if (du * l.scale + 2 * MARGIN < MIN_W) { /* room for the header and the legend: show more */
    double more = (MIN_W - 2 * MARGIN) / l.scale - du;
    s->u0 -= more / 2;
    s->u1 += more / 2;
    du = s->u1 - s->u0;
    if (sample_ground(s, ground, ud, depth, gy, hit, &gmin) != 0) return -1;
  }
  l.u0 = s->u0;
  l.v1 = s->v1;
  l.ox = MARGIN;
  l.oy = HEADER + MARGIN;
  l.width = du * l.scale + 2 * MARGIN;
  l.height = HEADER + dv * l.scale + 2 * MARGIN + FOOTER;
  bottom = sy(&l, s->v0);

  fprintf(
      f,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n",
      l.width, l.height, l.width, l.height);
  fputs("<title>", f);
  put_text(f, title ? title : "ikrig");
  fputs("</title>\n", f);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fbfbf8\"/>\n", l.width, l.height);

  if (draw_ground(f, s, &l, gy, hit, bottom, ground, ud) != 0) return -1;

  /* a light grid over the ground, under the rest */
  step = grid_step(du > dv ? du : dv);
  fputs("<g id=\"grid\" stroke=\"#e6e6e0\" stroke-width=\"1\">\n", f);
  for (g = ceil(s->u0 / step) * step; g <= s->u1; g += step)
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", sx(&l, g), sy(&l, s->v1),
            sx(&l, g), bottom);
  for (g = ceil(s->v0 / step) * step; g <= s->v1; g += step)
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", sx(&l, s->u0), sy(&l, g),
            sx(&l, s->u1), sy(&l, g));
  fputs("</g>\n", f);

  /* trails: targets' paths dashed, the scene's trails (feet) solid */
  fputs("<g id=\"trails\" fill=\"none\" stroke-linejoin=\"round\">\n", f);
  for (i = 0; i < s->n_trails; i++) {
    const trail *tr = &s->trails[i];
    if (tr->n < 2) continue;
    fprintf(f, "<polyline %s points=\"",
            tr->target
                ? "stroke=\"#d62728\" stroke-opacity=\"0.45\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\""
                : "stroke=\"#e08a1e\" stroke-width=\"1.8\"");
    for (k = 0; k < tr->n; k++)
      fprintf(f, "%s%.1f,%.1f", k ? " " : "", sx(&l, tr->uv[2 * k]), sy(&l, tr->uv[2 * k + 1]));
    fputs("\"/>\n", f);
  }
  fputs("</g>\n", f);

  for (i = 0; i < s->n_ghosts; i++) draw_pose(f, s, &l, &s->ghosts[i], 1);
  if (s->last.items) draw_pose(f, s, &l, &s->last, 0);

  /* header, scale bar, legend */
  fprintf(f, "<text x=\"%.1f\" y=\"20\" font-size=\"15\" font-weight=\"bold\" fill=\"#222222\">", MARGIN);
  put_text(f, title ? title : "ikrig");
  fputs("</text>\n", f);
  fprintf(f,
          "<text x=\"%.1f\" y=\"36\" fill=\"#555555\">%s view (%s); frames %ld to %ld, t = %.2f s</text>\n",
          MARGIN, ikrig_view_name(s->view),
          s->view == IKRIG_VIEW_TOP     ? "x right, z down"
          : s->view == IKRIG_VIEW_FRONT ? "-z right, y up"
                                        : "x right, y up",
          s->first_frame < 0 ? 0L : s->first_frame, s->last.items ? s->last.number : 0L, s->last_time);
  {
    double x0 = sx(&l, s->u0) + 10, y0 = bottom - 12, len = step * l.scale;
    fprintf(
        f,
        "<g id=\"scale\" stroke=\"#333333\" stroke-width=\"2\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
        "y2=\"%.1f\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" y1=\"%.1f\" "
        "x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
        x0, y0, x0 + len, y0, x0, y0 - 4, x0, y0 + 4, x0 + len, y0 - 4, x0 + len, y0 + 4);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#333333\">%g m</text>\n", x0 + len + 6, y0 + 4, step);
  }
  {
    double y = l.height - 10, x = MARGIN;
    fprintf(f, "<g id=\"legend\" fill=\"#444444\" font-size=\"11\">\n");
    fprintf(
        f,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"5\" "
        "stroke-linecap=\"round\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#ffffff\" stroke=\"%s\" "
        "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\">bones, joints</text>\n",
        x, y - 4, x + 22, y - 4, PALETTE[0], x + 22, y - 4, PALETTE[0], x + 32, y);
    x += 120;
    fprintf(f,
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>"
            "<text x=\"%.1f\" y=\"%.1f\">target (dashed: its path)</text>\n",
            x + 6, y - 4, x + 18, y);
    x += 170;
    fprintf(f,
            "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#c9a3e0\" stroke=\"#7b3fa0\" "
            "stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\">pole</text>\n",
            x + 6, y - 10, x + 12, y - 4, x + 6, y + 2, x, y - 4, x + 18, y);
    x += 60;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e08a1e\" stroke-width=\"2\"/>"
            "<text x=\"%.1f\" y=\"%.1f\">trail</text>\n",
            x, y - 4, x + 20, y - 4, x + 26, y);
    x += 70;
    if (ground)
      fprintf(f,
              "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"9\" fill=\"#efe6d2\" stroke=\"#8d7b57\"/>"
              "<text x=\"%.1f\" y=\"%.1f\">ground</text>\n",
              x, y - 9, x + 24, y);
    fputs("</g>\n", f);
  }
  fputs("</svg>\n", f);
  return ferror(f) ? -1 : 0;
}

int ikrig_svg_write(ikrig_svg *s, FILE *f, const char *title, ikrig_ground_fn ground, void *ud) {
  /* writing pads the bounds: put them back after, so a second write draws the same */
  double u0 = s->u0, u1 = s->u1, v0 = s->v0, v1 = s->v1;
  int status = write_svg(s, f, title, ground, ud);
  s->u0 = u0;
  s->u1 = u1;
  s->v0 = v0;
  s->v1 = v1;
  return status;
}
