/*
 * ikrig_svg.h: a drawing of a run as one SVG picture (ikrig run --svg FILE.svg).
 *
 * Feed it every frame's pose; at the end it draws, from one view: the ground profile
 * (sampled through a callback), a light grid and a scale bar, the trails the scene asked
 * for (feet) and the targets' paths, a few faint earlier poses, then the last pose:
 * bones as lines, joints as dots, targets as crosshairs, poles as diamonds.
 */
#ifndef IKRIG_SVG_H
#define IKRIG_SVG_H

#include <stdio.h>

#include "ikrig_embed.h"

/* The views: side looks along -Z (x right, y up), front along -X (-z right, y up), top
 * down along -Y (x right, z towards the bottom). */
typedef enum ikrig_view { IKRIG_VIEW_SIDE, IKRIG_VIEW_TOP, IKRIG_VIEW_FRONT } ikrig_view;

/* "side", "top" or "front" into *view; 0, or -1 for another name. */
int ikrig_view_parse(const char *name, ikrig_view *view);
const char *ikrig_view_name(ikrig_view view);

/* The ground's height under (x, z): 1 and *y on a hit, 0 for none, -1 on failure. */
typedef int (*ikrig_ground_fn)(void *ud, double x, double z, double *y);

typedef struct ikrig_svg ikrig_svg;

ikrig_svg *ikrig_svg_new(ikrig_view view);
/* Takes one frame in (copies what it needs). 0, or -1 when out of memory. */
int ikrig_svg_add(ikrig_svg *svg, const ikrig_pose *pose);
/* Writes the picture; title goes in its header (may be NULL), ground may be NULL.
 * 0, or -1 when writing failed or the ground callback did. */
int ikrig_svg_write(ikrig_svg *svg, FILE *out, const char *title, ikrig_ground_fn ground, void *ud);
void ikrig_svg_free(ikrig_svg *svg);

#endif /* IKRIG_SVG_H */
