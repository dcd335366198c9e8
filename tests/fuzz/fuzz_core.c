/*
 * fuzz_core.c: libFuzzer target for the C API of the core and the scene layer.
 *
 * The input is decoded (fuzz_input.h) into one chain and then a sequence of jobs on it:
 * FABRIK in both modes, CCD, DLS, two-bone, pole, rotations, the constraint helpers,
 * the batch (when the core has it), ground queries, foot placement and trees of chains
 * (the chain cut into a trunk and branches). Chains have 0 to
 * 200 joints, bones of random and degenerate lengths (coincident joints, folded and
 * straight chains), and every field may hold NaN, infinities, denormals or huge values.
 *
 * What each job must do (a broken rule aborts, which libFuzzer reports as a crash):
 *   - validate and run return the same status, and a refusal names a field;
 *   - a refused job changes no byte of its job struct or of any array it points to;
 *   - a run on valid input leaves every output finite, the root where it was and each
 *     bone its length, within a tolerance relative to the chain's scale (coordinates
 *     near the range limit carry absolute rounding of that size);
 *   - results say what they mean: reached is distance <= tolerance, the distance is the
 *     tip's, iterations stay within the cap;
 *   - a constrained solve leaves no constraint broken by more than 1e-6 rad (double;
 *     where bone directions are known that well, see check_constraints);
 *   - pole, two-bone and blend keep what they promise to keep (ends, start, lengths);
 *     rotations come out finite and unit;
 *   - ray hits lie on the ray within [0, max_distance], with a unit normal; a miss is
 *     all zeros; feet and pelvis stay finite, and a refused update changes nothing;
 *   - a batch leaves every job bit for bit as its own run does.
 * FUZZ_VERBOSE=1 in the environment prints the exact values behind a failed check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "ik.h"
#include "ik_foot.h"
#include "ik_ground.h"
#ifdef IK_FUZZ_BATCH
#include "ik_batch.h"
#include "ik_pool.h" /* ik_batch_run over threads */
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_JOINTS 200
#define MAX_OPS 12
/* Iterations a decoded job may ask for: enough to converge, few enough that a long
 * chain stays fast. Invalid caps (0, negative) are drawn too. */
#define MAX_ITERATIONS 40

/* The operation running, for the message when a check fails. */
static const char *op_name = "decoding";

static void fail(const char *what, const char *file, int line) {
  fprintf(stderr, "fuzz_core: invariant broken in %s: %s (%s:%d)\n", op_name, what, file, line);
  abort();
}
#define CHECK(cond, what)                        \
  do {                                           \
    if (!(cond)) fail(what, __FILE__, __LINE__); \
  } while (0)

/* FUZZ_VERBOSE=1: values behind a failed check, exactly, to make a unit test of. */
static void dump_vec3(const char *what, int i, ik_vec3 v) {
  fprintf(stderr, "%s %d: (%a, %a, %a)\n", what, i, (double)v.x, (double)v.y, (double)v.z);
}

/* ---- the decoded scene ---- */

typedef struct scene {
  int count;
  ik_vec3 *positions; /* count (at least 1 allocated) */
  ik_real *lengths;   /* count - 1 */
  ik_constraint *constraints;
  ik_vec3 *rest;
  int consistent; /* lengths are the bones of positions (measured) */
  ik_chain chain;
} scene;

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) abort();
  return p;
}

static void *dup_bytes(const void *src, size_t n) {
  void *p = xmalloc(n);
  if (n) memcpy(p, src, n);
  return p;
}

static int decode_count(fz_input *in) {
  unsigned sel = fz_u8(in) % 16u;
  if (sel == 0) return fz_int(in, -2, 1);
  if (sel == 1) return fz_int(in, 100, MAX_JOINTS);
  if (sel == 2) return 3;
  return fz_int(in, 2, 33);
}

static ik_vec3 decode_direction(fz_input *in) {
  ik_vec3 d = fz_vec3(in);
  const ik_real len = ik_vec3_len(d);
  if (len > 0 && ik_real_is_finite(len)) return ik_vec3_scale(d, 1 / len);
  return ik_vec3_make(1, 0, 0);
}

static ik_constraint decode_constraint(fz_input *in) {
  ik_constraint c;
  memset(&c, 0, sizeof c);
  switch (fz_u8(in) % 5u) {
    case 0:
    case 1:
      c.type = IK_CONSTRAINT_NONE;
      break;
    case 2:
      c.type = IK_CONSTRAINT_CONE;
      c.angle = fz_bool(in) ? fz_unit(in) * IK_PI : fz_real(in);
      break;
    case 3:
      c.type = IK_CONSTRAINT_HINGE;
      c.axis = fz_bool(in) ? decode_direction(in) : fz_vec3(in);
      c.min = fz_bool(in) ? -fz_unit(in) * IK_PI : fz_real(in);
      c.max = fz_bool(in) ? fz_unit(in) * IK_PI : fz_real(in);
      break;
    default:
      c.type = (ik_constraint_type)fz_int(in, -1, 7);
      break;
  }
  return c;
}

static void decode_scene(fz_input *in, scene *s) {
  const int n = decode_count(in);
  const size_t alloc = (size_t)(n > 0 ? n : 1);
  const unsigned shape = fz_u8(in);
  ik_vec3 dir = decode_direction(in);
  int i;
  memset(s, 0, sizeof *s);
  s->count = n;
  s->positions = xmalloc(alloc * sizeof *s->positions);
  s->lengths = xmalloc(alloc * sizeof *s->lengths);
  s->positions[0] = fz_vec3(in);
  for (i = 1; i < n; i++) {
    switch (fz_u8(in) % 8u) {
      case 0:
        s->positions[i] = s->positions[i - 1];
        break; /* coincident */
      case 1:
        s->positions[i] = fz_vec3(in);
        break; /* anywhere */
      case 2:
        dir = ik_vec3_neg(dir); /* folded back */ /* fall through */
      case 3:
        s->positions[i] = ik_vec3_madd(s->positions[i - 1], dir, fz_len(in));
        break;
      default:
        if (shape & 1u) dir = decode_direction(in);
        s->positions[i] = ik_vec3_madd(s->positions[i - 1], dir, fz_len(in));
        break;
    }
  }
  s->consistent = fz_u8(in) % 4u != 0;
  if (s->consistent || n < 2) {
    ik_measure_lengths(s->positions, n, s->lengths);
  } else {
    for (i = 0; i + 1 < n; i++) s->lengths[i] = fz_len(in);
  }
  ik_chain_init(&s->chain, s->positions, n, s->lengths);
  s->chain.derive_lengths = s->consistent && (shape & 2u);
  if (shape & 4u) {
    s->constraints = xmalloc(alloc * sizeof *s->constraints);
    for (i = 0; i + 1 < n; i++) s->constraints[i] = decode_constraint(in);
    s->chain.constraints = s->constraints;
    s->chain.base_direction = fz_bool(in) ? decode_direction(in) : fz_vec3(in);
    s->chain.base_rotation = fz_quat(in);
    if (!(shape & 8u)) {
      s->rest = dup_bytes(s->positions, alloc * sizeof *s->rest);
      if (shape & 16u)
        for (i = 0; i < n; i++) s->rest[i] = fz_vec3(in);
      s->chain.rest_positions = s->rest;
    }
  }
  if (shape & 32u) {
    s->chain.has_pole = 1;
    s->chain.pole = fz_vec3(in);
    s->chain.pole_weight = fz_unit(in);
  }
  if (shape & 64u) {
    /* The refusals of a NULL array. */
    if (fz_bool(in))
      s->chain.positions = NULL;
    else
      s->chain.lengths = NULL;
  }
}

static void free_scene(scene *s) {
  free(s->positions);
  free(s->lengths);
  free(s->constraints);
  free(s->rest);
}

/* ---- what a job may change, kept to compare a refused job with ---- */

typedef struct snapshot {
  ik_vec3 *positions;
  ik_real *lengths;
  size_t n_positions, n_lengths;
} snapshot;

static void take(snapshot *sn, const ik_vec3 *positions, int n_positions, const ik_real *lengths,
                 int n_lengths) {
  sn->n_positions = positions && n_positions > 0 ? (size_t)n_positions : 0;
  sn->n_lengths = lengths && n_lengths > 0 ? (size_t)n_lengths : 0;
  sn->positions = dup_bytes(positions, sn->n_positions * sizeof *positions);
  sn->lengths = dup_bytes(lengths, sn->n_lengths * sizeof *lengths);
}

/* (The NULL tests are for the compiler: a snapshot with entries was taken of arrays that
 * have them, but an optimised build cannot see that and warns of memcmp on NULL.) */
static int same(const snapshot *sn, const ik_vec3 *positions, const ik_real *lengths) {
  return (!sn->n_positions ||
          (positions && memcmp(sn->positions, positions, sn->n_positions * sizeof *positions) == 0)) &&
         (!sn->n_lengths || (lengths && memcmp(sn->lengths, lengths, sn->n_lengths * sizeof *lengths) == 0));
}

static void drop(snapshot *sn) {
  free(sn->positions);
  free(sn->lengths);
}

/* ---- checks on a solved chain ---- */

static ik_real max_abs3(ik_vec3 v) {
  ik_real m = ik_fabs(v.x);
  if (ik_fabs(v.y) > m) m = ik_fabs(v.y);
  if (ik_fabs(v.z) > m) m = ik_fabs(v.z);
  return m;
}

/* Absolute rounding a pose of this root and reach may carry: a few thousand ulps of its
 * largest coordinate, however many iterations and joints (errors do not compound: every
 * joint is placed from its neighbour at its exact length). */
static ik_real tolerance_for(ik_vec3 root, ik_real total_len) {
  return (max_abs3(root) + total_len) * (ik_real)1e4 * IK_REAL_EPSILON;
}

static void check_finite(const ik_vec3 *p, int n) {
  int i;
  for (i = 0; i < n; i++) CHECK(ik_vec3_is_finite(p[i]), "finite input gave a non-finite joint");
}

static void check_lengths(const ik_vec3 *p, const ik_real *want, int n, ik_real tol) {
  int i;
  for (i = 0; i + 1 < n; i++) {
    const ik_real got = ik_vec3_dist(p[i], p[i + 1]);
    if (!(ik_fabs(got - want[i]) <= tol)) {
      fprintf(stderr, "bone %d of %d: length %.17g, want %.17g (tolerance %.3g)\n", i, n, (double)got,
              (double)want[i], (double)tol);
      fail("a bone changed its length", __FILE__, __LINE__);
    }
  }
}

static void check_result(const ik_result *r, const ik_chain *c, ik_vec3 target, ik_real tolerance,
                         int max_iterations, ik_real tol) {
  const ik_vec3 tip = c->positions[c->count - 1];
  CHECK(ik_real_is_finite(r->distance), "distance not finite");
  CHECK(r->reached == (r->distance <= tolerance), "reached is not distance <= tolerance");
  CHECK(r->iterations >= 0 && r->iterations <= max_iterations, "iterations outside [0, max]");
  CHECK(ik_fabs(r->distance - ik_vec3_dist(tip, target)) <= tol + tol, "distance is not the tip's");
}

/* The largest absolute coordinate error a solved pose may carry. */
static ik_real pose_tolerance(const ik_vec3 *in, const ik_real *lengths, int n) {
  ik_real total = 0;
  int i;
  for (i = 0; i + 1 < n; i++) total += lengths[i];
  return tolerance_for(in[0], total);
}

/* After a solve that validation accepted. in: the input positions. */
static void check_solved(const scene *s, const ik_chain *c, const ik_vec3 *in, ik_vec3 target,
                         const ik_result *r, ik_real tolerance, int max_iterations) {
  const ik_real tol = pose_tolerance(in, c->lengths, c->count);
  check_finite(c->positions, c->count);
  CHECK(memcmp(&c->positions[0], &in[0], sizeof in[0]) == 0, "the root moved");
  if (s->consistent) check_lengths(c->positions, c->lengths, c->count, tol);
  check_result(r, c, target, tolerance, max_iterations, tol + r->distance * 64 * IK_REAL_EPSILON);
}

typedef struct solve_params {
  ik_vec3 target;
  ik_real tolerance;
  int max_iterations;
} solve_params;

static void decode_solve(fz_input *in, const scene *s, solve_params *sp) {
  const int n = s->count;
  switch (fz_u8(in) % 6u) {
    case 0:
      sp->target = fz_vec3(in);
      break;
    case 1:
      sp->target = n > 0 ? s->positions[n - 1] : fz_vec3(in);
      break; /* already there */
    case 2:
      sp->target = n > 0 ? s->positions[0] : fz_vec3(in);
      break; /* at the root */
    default:
      /* Within reach, mostly: a fraction of the length from the root. */
      if (n >= 2) {
        const ik_real reach = ik_measure_lengths(s->positions, n, NULL);
        sp->target = ik_vec3_madd(s->positions[0], decode_direction(in), reach * fz_unit(in));
      } else {
        sp->target = fz_vec3(in);
      }
      break;
  }
  sp->tolerance = fz_u8(in) < 200u ? (ik_real)1e-3 * (ik_real)(1 + fz_u8(in) % 16u) : fz_real(in);
  sp->max_iterations = fz_u8(in) < 240u ? fz_int(in, 1, MAX_ITERATIONS) : fz_int(in, -3, 0);
  if (sp->max_iterations == -3) sp->max_iterations = -2147483647 - 1;
}

#ifndef IK_REAL_FLOAT
/* FUZZ_VERBOSE=1: the chain a check failed on. */
static void dump_chain(const ik_chain *c, const ik_vec3 *in) {
  int i;
  if (!getenv("FUZZ_VERBOSE")) return;
  for (i = 0; i < c->count; i++) {
    dump_vec3("input joint", i, in[i]);
    dump_vec3("solved joint", i, c->positions[i]);
    if (c->rest_positions) dump_vec3("rest joint", i, c->rest_positions[i]);
  }
  for (i = 0; i + 1 < c->count; i++) fprintf(stderr, "length %d: %a\n", i, (double)c->lengths[i]);
  fprintf(stderr, "derive_lengths %d\n", c->derive_lengths);
  for (i = 0; c->constraints && i + 1 < c->count; i++)
    fprintf(stderr, "constraint %d: type %d angle %.17g axis (%.17g, %.17g, %.17g) min %.17g max %.17g\n", i,
            (int)c->constraints[i].type, (double)c->constraints[i].angle, (double)c->constraints[i].axis.x,
            (double)c->constraints[i].axis.y, (double)c->constraints[i].axis.z, (double)c->constraints[i].min,
            (double)c->constraints[i].max);
  dump_vec3("base_direction", -1, c->base_direction);
  fprintf(stderr, "base_rotation (%.17g, %.17g, %.17g, %.17g), has_pole %d\n", (double)c->base_rotation.x,
          (double)c->base_rotation.y, (double)c->base_rotation.z, (double)c->base_rotation.w, c->has_pole);
}
#endif

/* "A constrained solve never leaves a constraint broken by more than 1e-6 rad
 * (double)": for a solve that moved the chain, or one that started inside its limits
 * (a 0-iteration return keeps whatever pose it was given). No pole: it bends after.
 * Only where every bone is long enough for its direction to be known to well under
 * 1e-6 rad: a bone of length l at coordinates of size s has its direction to about
 * eps * s / l (far from the origin, a short bone's direction is mostly rounding). */
static void check_constraints(const ik_chain *c, const ik_vec3 *in, ik_vec3 target, const ik_result *r) {
  ik_chain before;
  ik_real v, total = 0, shortest = 0;
  int i;
  if (!c->constraints || c->has_pole) return;
  v = ik_chain_constraint_violation(c, NULL);
  CHECK(ik_real_is_finite(v) && v >= 0, "constraint violation not finite");
  for (i = 0; i + 1 < c->count; i++) {
    total += c->lengths[i];
    if (i == 0 || c->lengths[i] < shortest) shortest = c->lengths[i];
  }
  /* (+ 1: a bone below IK_REAL_EPSILON has no direction at all, by ik_vec3_normalize_or's
   * design, wherever it is.) */
  if (shortest < (max_abs3(in[0]) + total + 1) * (ik_real)1e7 * IK_REAL_EPSILON) return;
#ifndef IK_REAL_FLOAT
  before = *c;
  before.positions = (ik_vec3 *)in;
  if ((r->iterations >= 1 || ik_chain_constraint_violation(&before, NULL) <= 1e-9) && !(v <= 1e-6)) {
    int worst = -1;
    ik_chain_constraint_violation(c, &worst);
    fprintf(stderr, "violation %.3g rad at bone %d after %d iterations, distance %a\n", (double)v, worst,
            r->iterations, (double)r->distance);
    dump_chain(c, in);
    if (getenv("FUZZ_VERBOSE")) dump_vec3("target", -1, target);
    fail("a solve left a constraint broken by more than 1e-6 rad", __FILE__, __LINE__);
  }
#else
  (void)before;
  (void)target;
  (void)r;
#endif
}

/* FABRIK's mode from one byte: plain or refined, and now and then a value that is
 * neither (validate must refuse it). */
static ik_fabrik_mode decode_mode(unsigned byte) {
  return (ik_fabrik_mode)(byte < 250u ? (int)(byte & 1u) : (int)byte - 252);
}

#define SOLVE_OP(name, job_t, init, validate, run, extra)                                                 \
  static void name(fz_input *in, scene *s) {                                                              \
    job_t job, before;                                                                                    \
    solve_params sp;                                                                                      \
    snapshot sn;                                                                                          \
    ik_error err;                                                                                         \
    ik_status sv, sr;                                                                                     \
    decode_solve(in, s, &sp);                                                                             \
    init(&job, &s->chain, sp.target);                                                                     \
    job.tolerance = sp.tolerance;                                                                         \
    job.max_iterations = sp.max_iterations;                                                               \
    extra;                                                                                                \
    take(&sn, s->chain.positions, s->count, s->chain.lengths, s->count - 1);                              \
    memcpy(&before, &job, sizeof job);                                                                    \
    err.status = IK_OK;                                                                                   \
    err.field = NULL;                                                                                     \
    sv = validate(&job, &err);                                                                            \
    sr = run(&job);                                                                                       \
    CHECK(sv == sr, "validate and run disagree");                                                         \
    if (sv != IK_OK) {                                                                                    \
      CHECK(err.status == sv && err.field != NULL, "a refusal without its field");                        \
      CHECK(memcmp(&job, &before, sizeof job) == 0, "a refused job changed its struct");                  \
      CHECK(same(&sn, s->chain.positions, s->chain.lengths), "a refused job changed its arrays");         \
    } else {                                                                                              \
      check_solved(s, &job.chain, sn.positions, sp.target, &job.result, sp.tolerance, sp.max_iterations); \
      if (getenv("FUZZ_VERBOSE"))                                                                         \
        fprintf(stderr, "%s: tolerance %a, max_iterations %d\n", op_name, (double)sp.tolerance,           \
                sp.max_iterations);                                                                       \
      check_constraints(&job.chain, sn.positions, sp.target, &job.result);                                \
    }                                                                                                     \
    drop(&sn);                                                                                            \
  }

SOLVE_OP(op_fabrik, ik_fabrik_job, ik_fabrik_job_init, ik_fabrik_validate, ik_fabrik_run,
         job.mode = decode_mode(fz_u8(in)))
SOLVE_OP(op_ccd, ik_ccd_job, ik_ccd_job_init, ik_ccd_validate, ik_ccd_run, (void)0)
SOLVE_OP(op_dls, ik_dls_job, ik_dls_job_init, ik_dls_validate, ik_dls_run,
         if (fz_u8(in) > 200u) job.damping = fz_real(in))

/* Two-bone on the chain's first three joints (or three decoded ones). */
static void op_two_bone(fz_input *in, scene *s) {
  ik_vec3 limb[3];
  ik_vec3 before_pos[3];
  ik_two_bone_job job, before;
  ik_error err = {IK_OK, NULL, -1};
  ik_status sv, sr;
  solve_params sp;
  int i;
  for (i = 0; i < 3; i++) limb[i] = i < s->count ? s->positions[i] : fz_vec3(in);
  decode_solve(in, s, &sp);
  ik_two_bone_job_init(&job, limb, sp.target);
  job.tolerance = sp.tolerance;
  if (fz_bool(in)) {
    job.has_pole = 1;
    job.pole = fz_vec3(in);
  }
  if (fz_bool(in)) job.weight = fz_unit(in);
  if (fz_bool(in)) job.softness = fz_unit(in);
  if (fz_u8(in) == 255u) job.positions = NULL;
  memcpy(before_pos, limb, sizeof limb);
  memcpy(&before, &job, sizeof job);
  sv = ik_two_bone_validate(&job, &err);
  sr = ik_two_bone_run(&job);
  CHECK(sv == sr, "two-bone: validate and run disagree");
  if (sv != IK_OK) {
    CHECK(err.status == sv && err.field != NULL, "two-bone: a refusal without its field");
    CHECK(memcmp(&job, &before, sizeof job) == 0, "two-bone: a refused job changed its struct");
    CHECK(memcmp(limb, before_pos, sizeof limb) == 0, "two-bone: a refused job moved a joint");
  } else {
    ik_real lengths[2];
    const ik_real total = ik_measure_lengths(before_pos, 3, lengths);
    const ik_real tol = tolerance_for(before_pos[0], total);
    if (getenv("FUZZ_VERBOSE")) {
      for (i = 0; i < 3; i++)
        fprintf(stderr, "joint %d: (%.17g, %.17g, %.17g) -> (%.17g, %.17g, %.17g)\n", i,
                (double)before_pos[i].x, (double)before_pos[i].y, (double)before_pos[i].z, (double)limb[i].x,
                (double)limb[i].y, (double)limb[i].z);
      fprintf(stderr,
              "target (%.17g, %.17g, %.17g), pole %d (%.17g, %.17g, %.17g), weight %.17g, softness %.17g\n",
              (double)job.target.x, (double)job.target.y, (double)job.target.z, job.has_pole,
              (double)job.pole.x, (double)job.pole.y, (double)job.pole.z, (double)job.weight,
              (double)job.softness);
    }
    check_finite(limb, 3);
    CHECK(memcmp(&limb[0], &before_pos[0], sizeof limb[0]) == 0, "two-bone: the start moved");
    check_lengths(limb, lengths, 3, tol);
    CHECK(ik_real_is_finite(job.result.distance), "two-bone: distance not finite");
    CHECK(job.result.reached == (job.result.distance <= job.tolerance), "two-bone: reached is wrong");
    CHECK(job.result.iterations == 0 || job.result.iterations == 1, "two-bone: iterations");
  }
}

static void op_pole(fz_input *in, scene *s) {
  ik_pole_job job, before;
  snapshot sn;
  ik_error err = {IK_OK, NULL, -1};
  ik_status sv, sr;
  ik_pole_job_init(&job, s->positions, s->count, fz_vec3(in));
  if (fz_bool(in)) job.weight = fz_unit(in);
  take(&sn, s->positions, s->count, NULL, 0);
  memcpy(&before, &job, sizeof job);
  sv = ik_pole_validate(&job, &err);
  sr = ik_pole_run(&job);
  CHECK(sv == sr, "pole: validate and run disagree");
  if (sv != IK_OK) {
    CHECK(err.status == sv && err.field != NULL, "pole: a refusal without its field");
    CHECK(memcmp(&job, &before, sizeof job) == 0, "pole: a refused job changed its struct");
    CHECK(same(&sn, s->positions, NULL), "pole: a refused job moved a joint");
  } else {
    const int n = s->count;
    ik_real *lengths = xmalloc((size_t)n * sizeof *lengths);
    const ik_real total = ik_measure_lengths(sn.positions, n, lengths);
    if (getenv("FUZZ_VERBOSE")) {
      int i;
      for (i = 0; i < n; i++)
        fprintf(stderr, "joint %d: (%.17g, %.17g, %.17g) -> (%.17g, %.17g, %.17g)\n", i,
                (double)sn.positions[i].x, (double)sn.positions[i].y, (double)sn.positions[i].z,
                (double)s->positions[i].x, (double)s->positions[i].y, (double)s->positions[i].z);
      fprintf(stderr, "pole (%.17g, %.17g, %.17g), weight %.17g\n", (double)job.pole.x, (double)job.pole.y,
              (double)job.pole.z, (double)job.weight);
    }
    check_finite(s->positions, n);
    CHECK(memcmp(&s->positions[0], &sn.positions[0], sizeof s->positions[0]) == 0, "pole: the root moved");
    CHECK(memcmp(&s->positions[n - 1], &sn.positions[n - 1], sizeof s->positions[0]) == 0,
          "pole: the tip moved");
    check_lengths(s->positions, lengths, n, tolerance_for(sn.positions[0], total));
    CHECK(job.turned >= 0 && job.turned <= n - 2, "pole: turned more joints than it has");
    free(lengths);
  }
  drop(&sn);
}

static int quat_unit(ik_quat q) {
  const ik_real len2 = ik_quat_dot(q, q);
  return ik_fabs(len2 - 1) <= (ik_real)1e3 * IK_REAL_EPSILON;
}

/* Rotations from the chain's input pose (before) to its current one (solved). */
static void op_rotations(fz_input *in, scene *s, const ik_vec3 *before_positions) {
  const int n = s->count;
  const size_t alloc = (size_t)(n > 0 ? n : 1);
  ik_quat *rot = xmalloc(alloc * sizeof *rot);
  ik_quat *rot_before = xmalloc(alloc * sizeof *rot);
  ik_real *twist = NULL;
  ik_rotations_job job, before;
  ik_error err = {IK_OK, NULL, -1};
  ik_status sv, sr;
  const int unit = fz_bool(in);
  int i;
  for (i = 0; i < n; i++) {
    rot[i] = fz_quat(in);
    if (unit) rot[i] = ik_quat_normalize(rot[i]);
  }
  ik_rotations_job_init(&job, n, before_positions, s->positions, rot);
  if (fz_bool(in)) job.weight = fz_unit(in);
  if (fz_bool(in)) {
    job.match_tip_rotation = 1;
    job.tip_rotation = fz_quat(in);
  }
  if (fz_bool(in)) {
    twist = xmalloc(alloc * sizeof *twist);
    for (i = 0; i < n; i++) twist[i] = fz_bool(in) ? fz_unit(in) * IK_PI : fz_real(in);
    job.twist_limits = twist;
  }
  if (fz_bool(in)) {
    job.base_rotation_before = fz_quat(in);
    job.base_rotation = fz_quat(in);
  }
  memcpy(rot_before, rot, alloc * sizeof *rot);
  memcpy(&before, &job, sizeof job);
  sv = ik_rotations_validate(&job, &err);
  sr = ik_rotations_run(&job);
  CHECK(sv == sr, "rotations: validate and run disagree");
  if (sv != IK_OK) {
    CHECK(err.status == sv && err.field != NULL, "rotations: a refusal without its field");
    CHECK(memcmp(&job, &before, sizeof job) == 0, "rotations: a refused job changed its struct");
    CHECK(n <= 0 || memcmp(rot, rot_before, (size_t)n * sizeof *rot) == 0, "rotations: a refused job wrote");
  } else {
    for (i = 0; i < n; i++) {
      CHECK(ik_quat_is_finite(rot[i]), "rotations: finite input gave a non-finite rotation");
      /* Rotations it leaves alone keep whatever length they had. */
      CHECK(memcmp(&rot[i], &rot_before[i], sizeof rot[i]) == 0 || quat_unit(rot[i]),
            "rotations: a written rotation is not unit");
    }
  }
  free(rot);
  free(rot_before);
  free(twist);
}

/* The constraint helpers read any chain without validation: they must not crash or
 * read out of bounds on one validation accepts, and must give finite answers. */
static void op_constraint_helpers(scene *s) {
  ik_error err;
  if (ik_chain_validate(&s->chain, &err) == IK_OK) {
    ik_constraint_frame *frames = xmalloc((size_t)s->count * sizeof *frames);
    int worst = -2, k, i;
    const ik_real v = ik_chain_constraint_violation(&s->chain, &worst);
    CHECK(ik_real_is_finite(v) && v >= 0, "violation not finite or negative");
    CHECK(worst >= -1 && worst < s->count - 1, "worst bone out of range");
    k = ik_chain_constraint_frames(&s->chain, frames);
    CHECK(k >= 0 && k <= s->count - 1, "frame count out of range");
    for (i = 0; i < k; i++) {
      CHECK(frames[i].bone >= 0 && frames[i].bone < s->count - 1, "frame bone out of range");
      CHECK(ik_vec3_is_finite(frames[i].direction) && ik_vec3_is_finite(frames[i].axis), "frame not finite");
    }
    free(frames);
  }
}

static void op_blend(fz_input *in, scene *s, const ik_vec3 *from) {
  const int n = s->count;
  const ik_real w = fz_unit(in);
  ik_error err;
  if (n >= 2 && ik_chain_validate(&s->chain, &err) == IK_OK && ik_real_is_finite(w)) {
    ik_real *lengths = xmalloc((size_t)n * sizeof *lengths);
    ik_vec3 root = s->positions[0];
    const ik_real total = ik_measure_lengths(s->positions, n, lengths);
    ik_blend_chain(from, s->positions, n, w);
    if (!(w > 0)) {
      /* Weight 0 (or less) is documented to copy `from`, lengths and all. */
      CHECK(memcmp(s->positions, from, (size_t)n * sizeof *from) == 0, "blend at weight 0 is not `from`");
      free(lengths);
      return;
    }
    check_finite(s->positions, n);
    CHECK(memcmp(&root, &s->positions[0], sizeof root) == 0, "blend moved the root");
    check_lengths(s->positions, lengths, n, tolerance_for(root, total));
    free(lengths);
  }
}

/* ---- ground and feet ---- */

/* A custom ground answers from the input too, and checks what the C side passes it. */
static int custom_raycast(void *user, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_dist, ik_ray_hit *hit) {
  fz_input *in = user;
  const int ret = fz_int(in, -1, 2);
  CHECK(ik_vec3_is_finite(origin), "custom ground: origin not finite");
  CHECK(ik_fabs(ik_vec3_len(dir_unit) - 1) <= (ik_real)1e3 * IK_REAL_EPSILON,
        "custom ground: direction not unit");
  CHECK(ik_real_is_finite(max_dist) && max_dist >= 0, "custom ground: bad max_dist");
  CHECK(hit->hit == 0 && hit->distance == 0, "custom ground: hit not zeroed");
  hit->distance = fz_bool(in) ? fz_unit(in) * max_dist : fz_real(in);
  hit->normal = fz_bool(in) ? decode_direction(in) : fz_vec3(in);
  return ret;
}

typedef struct ground_ctx {
  void *mem;
  ik_ground *g;
  int custom;
} ground_ctx;

static void decode_ground(fz_input *in, ground_ctx *gc) {
  ik_ground *const sentinel = (ik_ground *)&gc->custom;
  ik_ground *out = sentinel;
  ik_error err = {IK_OK, NULL, -1};
  ik_status st = IK_OK;
  size_t size = 0, mem_size;
  const int short_mem = fz_u8(in) == 255u;
  gc->custom = 0;
  switch (fz_u8(in) % 4u) {
    case 0: {
      const ik_vec3 point = fz_vec3(in);
      const ik_vec3 normal = fz_bool(in) ? ik_vec3_make(0, 1, 0) : fz_vec3(in);
      size = ik_ground_plane_size();
      mem_size = short_mem && size ? size - 1 : size;
      gc->mem = xmalloc(size);
      st = ik_ground_plane_init(gc->mem, mem_size, point, normal, &out, &err);
      break;
    }
    case 1: {
      const int columns = fz_int(in, -1, 12), rows = fz_int(in, -1, 12);
      const ik_vec3 origin = fz_vec3(in);
      const ik_real cell = fz_len(in);
      const size_t n = columns > 0 && rows > 0 ? (size_t)columns * (size_t)rows : 0;
      ik_real *heights = xmalloc(n * sizeof *heights);
      size_t i;
      for (i = 0; i < n; i++) heights[i] = fz_u8(in) < 240u ? (ik_real)fz_int(in, -64, 64) / 16 : fz_real(in);
      if (getenv("FUZZ_VERBOSE")) {
        fprintf(stderr, "heightfield %d x %d, cell %a\n", columns, rows, (double)cell);
        dump_vec3("origin", -1, origin);
        for (i = 0; i < n; i++) fprintf(stderr, "height %d: %a\n", (int)i, (double)heights[i]);
      }
      size = ik_ground_heightfield_size(columns, rows);
      mem_size = short_mem && size ? size - 1 : size;
      gc->mem = xmalloc(size);
      st = ik_ground_heightfield_init(gc->mem, mem_size, origin, cell, columns, rows, heights, &out, &err);
      free(heights);
      break;
    }
    case 2: {
      const int vcount = fz_int(in, 0, 24), tcount = fz_int(in, 0, 32);
      ik_vec3 *v = xmalloc((size_t)vcount * sizeof *v);
      int *tri = xmalloc((size_t)tcount * 3 * sizeof *tri);
      int i;
      for (i = 0; i < vcount; i++)
        v[i] = fz_u8(in) < 240u
                   ? ik_vec3_make((ik_real)fz_int(in, -32, 32) / 8, (ik_real)fz_int(in, -32, 32) / 8,
                                  (ik_real)fz_int(in, -32, 32) / 8)
                   : fz_vec3(in);
      for (i = 0; i < tcount * 3; i++)
        tri[i] =
            fz_u8(in) < 250u && vcount > 0 ? (int)(fz_u8(in) % (unsigned)vcount) : fz_int(in, -2, vcount + 1);
      size = ik_ground_mesh_size(vcount, tcount);
      mem_size = short_mem && size ? size - 1 : size;
      gc->mem = xmalloc(size);
      st = ik_ground_mesh_init(gc->mem, mem_size, v, vcount, tri, tcount, &out, &err);
      free(v);
      free(tri);
      break;
    }
    default:
      size = ik_ground_custom_size();
      mem_size = short_mem && size ? size - 1 : size;
      gc->mem = xmalloc(size);
      st = ik_ground_custom_init(gc->mem, mem_size, custom_raycast, in, &out, &err);
      gc->custom = 1;
      break;
  }
  if (st != IK_OK) {
    CHECK(out == sentinel, "ground: a refused init wrote *out");
    CHECK(err.status == st && err.field != NULL, "ground: a refusal without its field");
    gc->g = NULL;
  } else {
    CHECK(out != sentinel && out != NULL, "ground: init said yes and gave nothing");
    gc->g = out;
  }
}

static void check_hit(const ik_ray_hit *hit, ik_vec3 origin, ik_vec3 direction, ik_real max_distance) {
  if (!hit->hit) {
    static const ik_ray_hit zero;
    CHECK(hit->hit == 0 && memcmp(&hit->point, &zero.point, sizeof zero.point) == 0 &&
              memcmp(&hit->normal, &zero.normal, sizeof zero.normal) == 0 && hit->distance == 0,
          "ground: a miss with fields set");
    return;
  }
  CHECK(hit->hit == 1, "ground: hit is neither 0 nor 1");
  if (getenv("FUZZ_VERBOSE")) {
    dump_vec3("ray origin", -1, origin);
    dump_vec3("ray direction", -1, direction);
    fprintf(stderr, "max_distance %a, hit distance %a, normal length %.17g\n", (double)max_distance,
            (double)hit->distance, (double)ik_vec3_len(hit->normal));
    dump_vec3("hit point", -1, hit->point);
    dump_vec3("hit normal", -1, hit->normal);
  }
  CHECK(hit->distance >= 0 && hit->distance <= max_distance, "ground: hit distance outside [0, max]");
  CHECK(ik_vec3_is_finite(hit->point) && ik_vec3_is_finite(hit->normal), "ground: hit not finite");
  CHECK(ik_fabs(ik_vec3_len(hit->normal) - 1) <= (ik_real)1e3 * IK_REAL_EPSILON, "ground: normal not unit");
  {
    const ik_vec3 want = ik_vec3_madd(origin, ik_vec3_normalize(direction), hit->distance);
    const ik_real tol = (max_abs3(origin) + hit->distance + 1) * (ik_real)1e3 * IK_REAL_EPSILON;
    CHECK(ik_vec3_dist(want, hit->point) <= tol, "ground: point is not origin + dir * distance");
  }
}

static void op_raycast(fz_input *in, const ground_ctx *gc) {
  ik_vec3 origin, direction;
  ik_real max_distance;
  ik_ray_hit hit, before;
  ik_error err = {IK_OK, NULL, -1};
  ik_status sv, sr;
  if (!gc->g) return;
  origin = fz_vec3(in);
  direction = fz_bool(in) ? ik_vec3_make(0, -1, 0) : fz_vec3(in);
  max_distance = fz_bool(in) ? (ik_real)100 : fz_real(in);
  memset(&hit, 0x5a, sizeof hit);
  memcpy(&before, &hit, sizeof hit);
  sv = ik_ground_raycast_validate(gc->g, origin, direction, max_distance, &hit, &err);
  CHECK(memcmp(&hit, &before, sizeof hit) == 0, "ground: validate wrote the hit");
  sr = ik_ground_raycast(gc->g, origin, direction, max_distance, &hit);
  /* A custom ground's answer can still be refused after validation accepted the query. */
  CHECK(sv == sr || (gc->custom && sv == IK_OK), "ground: validate and raycast disagree");
  if (sr != IK_OK) {
    if (sv != IK_OK) CHECK(err.status == sv && err.field != NULL, "ground: a refusal without its field");
    CHECK(memcmp(&hit, &before, sizeof hit) == 0, "ground: a refused query wrote the hit");
  } else {
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "ground kind %d\n", (int)ik_ground_get_kind(gc->g));
    check_hit(&hit, origin, direction, max_distance);
  }
}

static void check_foot_state(const ik_foot_state *st) {
  CHECK(ik_vec3_is_finite(st->offset) && ik_vec3_is_finite(st->velocity) && ik_vec3_is_finite(st->goal) &&
            ik_quat_is_finite(st->rotation),
        "foot: state not finite");
}

static void op_foot(fz_input *in, const ground_ctx *gc) {
  ik_foot_params params;
  ik_foot_state state, state_before;
  ik_foot_result out, out_before;
  ik_error err = {IK_OK, NULL, -1};
  ik_real deficits[4];
  ik_pelvis pelvis;
  int steps = fz_int(in, 1, 6), k;
  ik_foot_params_init(&params);
  if (fz_bool(in)) {
    params.ray_height = fz_len(in);
    params.ray_length = fz_len(in);
    params.foot_offset = fz_bool(in) ? fz_unit(in) : fz_real(in);
    params.smooth_time = fz_bool(in) ? fz_unit(in) : fz_real(in);
    if (fz_bool(in)) params.up = fz_vec3(in);
  }
  ik_foot_state_init(&state);
  if (fz_u8(in) > 240u) {
    state.offset = fz_vec3(in);
    state.velocity = fz_vec3(in);
    state.rotation = fz_quat(in);
    state.initialised = 1;
  }
  ik_pelvis_init(&pelvis);
  if (fz_bool(in)) pelvis.smooth_time = fz_unit(in);
  for (k = 0; k < steps; k++) {
    const ik_vec3 pos = fz_vec3(in);
    const ik_quat rot = fz_bool(in) ? ik_quat_identity() : fz_quat(in);
    const ik_real dt = fz_bool(in) ? (ik_real)1 / 60 : fz_real(in);
    ik_status sv, sr;
    ik_real deficit = 12345, pelvis_offset = 12345;
    memset(&out, 0x5a, sizeof out);
    memcpy(&out_before, &out, sizeof out);
    memcpy(&state_before, &state, sizeof state);
    sv = ik_foot_validate(&params, &state, gc->g, pos, rot, dt, &out, &err);
    sr = ik_foot_update(&params, &state, gc->g, pos, rot, dt, &out);
    CHECK(sv == sr || (gc->custom && sv == IK_OK), "foot: validate and update disagree");
    if (sr != IK_OK) {
      if (sv != IK_OK) CHECK(err.status == sv && err.field != NULL, "foot: a refusal without its field");
      CHECK(memcmp(&state, &state_before, sizeof state) == 0, "foot: a refused update changed the state");
      CHECK(memcmp(&out, &out_before, sizeof out) == 0, "foot: a refused update wrote the result");
    } else {
      check_foot_state(&state);
      CHECK(ik_vec3_is_finite(out.position) && ik_quat_is_finite(out.rotation) &&
                ik_real_is_finite(out.deficit),
            "foot: finite input gave a non-finite result");
      CHECK(!out.grounded || out.ground_hit, "foot: grounded without ground");
      CHECK(quat_unit(out.rotation), "foot: rotation not unit");
      if (out.ground_hit)
        CHECK(ik_fabs(ik_vec3_len(out.ground_normal) - 1) <= (ik_real)1e3 * IK_REAL_EPSILON,
              "foot: normal not unit");
    }
    if (gc->g && ik_foot_deficit(&params, gc->g, pos, &deficit) == IK_OK)
      CHECK(ik_real_is_finite(deficit), "foot: deficit not finite");
    else
      CHECK(deficit == 12345, "foot: a refused deficit was written");
    deficits[k % 4] = fz_bool(in) ? deficit : fz_real(in);
    {
      ik_pelvis pb;
      const int count = fz_int(in, -1, k < 4 ? k + 1 : 4);
      memcpy(&pb, &pelvis, sizeof pb);
      sv = ik_pelvis_validate(&pelvis, count > 0 ? deficits : NULL, count, dt, &err);
      sr = ik_pelvis_update(&pelvis, count > 0 ? deficits : NULL, count, dt, &pelvis_offset);
      CHECK(sv == sr, "pelvis: validate and update disagree");
      if (sr != IK_OK) {
        CHECK(memcmp(&pb, &pelvis, sizeof pb) == 0 && pelvis_offset == 12345,
              "pelvis: a refused update wrote");
      } else {
        CHECK(ik_real_is_finite(pelvis_offset) && ik_real_is_finite(pelvis.velocity), "pelvis: not finite");
      }
    }
  }
}

#ifdef IK_FUZZ_BATCH
/* ---- the batch: each job as its own run leaves it ---- */

#define BATCH_MAX 4

typedef struct batch_copy {
  ik_vec3 *positions[2];
  ik_real *lengths[2];
} batch_copy;

static void copy_chain(const scene *s, ik_chain *c, batch_copy *bc, int which) {
  const size_t alloc = (size_t)(s->count > 0 ? s->count : 1);
  *c = s->chain;
  bc->positions[which] = dup_bytes(s->positions, alloc * sizeof *s->positions);
  bc->lengths[which] = dup_bytes(s->lengths, alloc * sizeof *s->lengths);
  if (s->chain.positions) c->positions = bc->positions[which];
  if (s->chain.lengths) c->lengths = bc->lengths[which];
}

static ik_pool *batch_pool(void) {
  /* One pool for the whole run: threads are made once, as a host makes them. */
  static ik_pool *pool;
  static int made;
  if (!made) {
    made = 1;
    pool = ik_pool_new(2);
  }
  return pool;
}

static void op_batch(fz_input *in, scene *s) {
  ik_fabrik_job fab[2][BATCH_MAX];
  ik_ccd_job ccd[2][BATCH_MAX];
  ik_dls_job dls[2][BATCH_MAX];
  ik_two_bone_job two[2][BATCH_MAX];
  ik_vec3 limbs[2][BATCH_MAX][3];
  batch_copy copies[3][BATCH_MAX];
  ik_status st[4][BATCH_MAX];
  ik_batch batch;
  const int nf = fz_int(in, 0, BATCH_MAX), nc = fz_int(in, 0, BATCH_MAX);
  const int nd = fz_int(in, 0, BATCH_MAX), nt = fz_int(in, 0, BATCH_MAX);
  int i, w, k;
  memset(copies, 0, sizeof copies);
  for (i = 0; i < nf + nc + nd + nt; i++) {
    solve_params sp;
    decode_solve(in, s, &sp);
    for (w = 0; w < 2; w++) {
      if (i < nf) {
        ik_chain c;
        copy_chain(s, &c, &copies[0][i], w);
        ik_fabrik_job_init(&fab[w][i], &c, sp.target);
        fab[w][i].tolerance = sp.tolerance;
        fab[w][i].max_iterations = sp.max_iterations;
        fab[w][i].mode = (ik_fabrik_mode)(sp.max_iterations & 1);
      } else if (i < nf + nc) {
        ik_chain c;
        copy_chain(s, &c, &copies[1][i - nf], w);
        ik_ccd_job_init(&ccd[w][i - nf], &c, sp.target);
        ccd[w][i - nf].tolerance = sp.tolerance;
        ccd[w][i - nf].max_iterations = sp.max_iterations;
      } else if (i < nf + nc + nd) {
        ik_chain c;
        copy_chain(s, &c, &copies[2][i - nf - nc], w);
        ik_dls_job_init(&dls[w][i - nf - nc], &c, sp.target);
        dls[w][i - nf - nc].tolerance = sp.tolerance;
        dls[w][i - nf - nc].max_iterations = sp.max_iterations;
      } else {
        int j;
        k = i - nf - nc - nd;
        for (j = 0; j < 3; j++)
          limbs[w][k][j] = j < s->count ? s->positions[j] : ik_vec3_make((ik_real)j, 0, 0);
        ik_two_bone_job_init(&two[w][k], limbs[w][k], sp.target);
        two[w][k].tolerance = sp.tolerance;
      }
    }
  }
  ik_batch_init(&batch);
  batch.fabrik = fab[0];
  batch.fabrik_count = nf;
  batch.ccd = ccd[0];
  batch.ccd_count = nc;
  batch.dls = dls[0];
  batch.dls_count = nd;
  batch.two_bone = two[0];
  batch.two_bone_count = nt;
  batch.fabrik_status = st[0];
  batch.ccd_status = st[1];
  batch.dls_status = st[2];
  batch.two_bone_status = st[3];
  CHECK(ik_batch_run(&batch, fz_bool(in) ? batch_pool() : NULL) == IK_OK,
        "batch: a well-formed batch refused");
  for (i = 0; i < nf; i++) {
    CHECK(st[0][i] == ik_fabrik_run(&fab[1][i]), "batch: fabrik status differs from its run");
    CHECK(memcmp(&fab[0][i].result, &fab[1][i].result, sizeof fab[0][i].result) == 0,
          "batch: fabrik result differs");
  }
  for (i = 0; i < nc; i++) {
    CHECK(st[1][i] == ik_ccd_run(&ccd[1][i]), "batch: ccd status differs from its run");
    CHECK(memcmp(&ccd[0][i].result, &ccd[1][i].result, sizeof ccd[0][i].result) == 0,
          "batch: ccd result differs");
  }
  for (i = 0; i < nd; i++) {
    CHECK(st[2][i] == ik_dls_run(&dls[1][i]), "batch: dls status differs from its run");
    CHECK(memcmp(&dls[0][i].result, &dls[1][i].result, sizeof dls[0][i].result) == 0,
          "batch: dls result differs");
  }
  for (i = 0; i < nt; i++) {
    CHECK(st[3][i] == ik_two_bone_run(&two[1][i]), "batch: two-bone status differs from its run");
    CHECK(memcmp(limbs[0][i], limbs[1][i], sizeof limbs[0][i]) == 0, "batch: two-bone joints differ");
    CHECK(memcmp(&two[0][i].result, &two[1][i].result, sizeof two[0][i].result) == 0,
          "batch: two-bone result differs");
  }
  for (k = 0; k < 3; k++)
    for (i = 0; i < BATCH_MAX; i++) {
      if (copies[k][i].positions[0]) {
        const size_t n = (size_t)(s->count > 0 ? s->count : 1);
        CHECK(memcmp(copies[k][i].positions[0], copies[k][i].positions[1], n * sizeof(ik_vec3)) == 0,
              "batch: joints differ from the job's own run");
        CHECK(memcmp(copies[k][i].lengths[0], copies[k][i].lengths[1], n * sizeof(ik_real)) == 0,
              "batch: lengths differ from the job's own run");
      }
      for (w = 0; w < 2; w++) {
        free(copies[k][i].positions[w]);
        free(copies[k][i].lengths[w]);
      }
    }
}
#endif

/* ---- trees ---- */

static ik_real tree_total_length(const ik_chain *c) {
  ik_real total = 0;
  int i;
  for (i = 0; i + 1 < c->count; i++) total += c->lengths[i];
  return total;
}

#define TREE_MAX 4

/* The scene's chain cut at a joint into a trunk and up to three branches from its tip
 * (copies of the chain's rest beyond the cut, each with its own storage), then a tree
 * job on them with fuzzed targets, weights, budgets and rigid bases. Checked as chains
 * are: validate and run agree, a refusal changes nothing; a run keeps the root, every
 * length, the branches joined, and says what it means per effector and overall. */
static void op_tree(fz_input *in, scene *s) {
  ik_tree_branch br[TREE_MAX], before[TREE_MAX];
  ik_vec3 *pos[TREE_MAX], *start[TREE_MAX];
  ik_real *len[TREE_MAX];
  ik_tree_job job, job_before;
  ik_error err = {IK_OK, NULL, -1};
  ik_status sv, sr;
  const int n = s->count;
  int cut, count, b;
  if (n < 3 || !s->lengths) return;
  cut = fz_int(in, 1, n - 2);
  count = fz_int(in, 1, TREE_MAX);
  for (b = 0; b < count; b++) {
    const int first = b == 0 ? 0 : cut, joints = b == 0 ? (count == 1 ? n : cut + 1) : n - cut;
    ik_chain c = s->chain;
    pos[b] = dup_bytes(s->positions + first, (size_t)joints * sizeof(ik_vec3));
    start[b] = dup_bytes(pos[b], (size_t)joints * sizeof(ik_vec3));
    len[b] = dup_bytes(s->lengths + first, (size_t)(joints - 1) * sizeof(ik_real));
    c.positions = pos[b];
    c.count = joints;
    c.lengths = len[b];
    c.constraints = s->chain.constraints ? s->chain.constraints + first : NULL;
    c.rest_positions = s->chain.rest_positions ? s->chain.rest_positions + first : NULL;
    ik_tree_branch_init(&br[b], &c, b == 0 ? -1 : 0, fz_vec3(in));
    if (fz_u8(in) < 64)
      br[b].weight = fz_real(in);
    else if (fz_bool(in))
      br[b].weight = fz_unit(in);
    if (fz_u8(in) < 32) br[b].max_iterations = fz_int(in, -2, 8);
    br[b].rigid_base = fz_u8(in) < 32;
    if (fz_u8(in) < 16) br[b].parent = fz_int(in, -3, 3);
  }
  ik_tree_job_init(&job, br, count);
  if (fz_bool(in)) job.tolerance = fz_real(in);
  job.max_iterations = fz_int(in, -1, MAX_ITERATIONS);
  memcpy(before, br, sizeof br);
  memcpy(&job_before, &job, sizeof job);
  sv = ik_tree_job_validate(&job, &err);
  sr = ik_tree_job_run(&job);
  CHECK(sv == sr, "tree: validate and run disagree");
  if (sv != IK_OK) {
    CHECK(err.status == sv && err.field != NULL, "tree: a refusal without its field");
    CHECK(memcmp(&job, &job_before, sizeof job) == 0, "tree: a refused job changed its struct");
    CHECK(memcmp(br, before, sizeof(ik_tree_branch) * (size_t)count) == 0,
          "tree: a refused job changed a branch");
    for (b = 0; b < count; b++)
      CHECK(memcmp(pos[b], start[b], (size_t)br[b].chain.count * sizeof(ik_vec3)) == 0,
            "tree: a refused job moved a joint");
  } else {
    ik_real total = 0, worst = 0;
    int reached = 1;
    for (b = 0; b < count; b++) total += tree_total_length(&br[b].chain);
    for (b = 0; b < count; b++) {
      const ik_chain *c = &br[b].chain;
      const ik_real tol = tolerance_for(start[0][0], total);
      int leaf = 1, k;
      check_finite(c->positions, c->count);
      if (s->consistent && !c->derive_lengths) check_lengths(c->positions, c->lengths, c->count, tol);
      if (br[b].parent >= 0) {
        const ik_chain *pc = &br[br[b].parent].chain;
        CHECK(memcmp(&c->positions[0], &pc->positions[pc->count - 1], sizeof(ik_vec3)) == 0,
              "tree: a branch came off its parent's tip");
      } else {
        CHECK(memcmp(&c->positions[0], &start[b][0], sizeof(ik_vec3)) == 0, "tree: a root moved");
      }
      for (k = b + 1; k < count; k++) leaf &= br[k].parent != b;
      if (!leaf) continue;
      CHECK(br[b].result.reached == (br[b].result.distance <= job.tolerance),
            "tree: reached is not distance <= tolerance");
      CHECK(br[b].result.iterations >= 0 && br[b].result.iterations <= job.iterations,
            "tree: effector sweeps beyond the job's");
      CHECK(ik_fabs(br[b].result.distance - ik_vec3_dist(c->positions[c->count - 1], br[b].target)) <=
                tol + tol,
            "tree: distance is not the tip's");
      if (br[b].weight > 0) {
        reached &= br[b].result.reached;
        if (br[b].result.distance > worst) worst = br[b].result.distance;
      }
    }
    CHECK(job.iterations >= 0 && job.iterations <= job.max_iterations, "tree: sweeps outside [0, max]");
    CHECK(job.reached == reached, "tree: reached is not every weighted effector's");
    CHECK(job.distance == worst, "tree: distance is not the largest weighted one");
  }
  for (b = 0; b < count; b++) {
    free(pos[b]);
    free(start[b]);
    free(len[b]);
  }
}

/* ---- the entry point ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_input in;
  scene s;
  ground_ctx gc = {NULL, NULL, 0};
  ik_vec3 *input_pose;
  int ops;
  fz_init(&in, data, size);
  decode_scene(&in, &s);
  input_pose = dup_bytes(s.positions, (size_t)(s.count > 0 ? s.count : 1) * sizeof *input_pose);
  for (ops = 0; ops < MAX_OPS && !fz_empty(&in); ops++) {
    static const char *const names[] = {
        "fabrik", "ccd",    "dls",     "two-bone", "pole",  "rotations", "constraint helpers",
        "blend",  "ground", "raycast", "foot",     "batch", "tree"};
    /* The tree is 255 then 'T' (which no input of the corpus holds): every other input
     * decodes as it did before the tree was added. */
    const unsigned byte = fz_u8(&in);
    const int tree = byte == 255u && in.n > 0 && in.p[0] == 'T';
    const unsigned op = tree ? (fz_u8(&in), 12u) : byte % 12u;
    op_name = names[op];
    switch (op) {
      case 0:
        op_fabrik(&in, &s);
        break;
      case 1:
        op_ccd(&in, &s);
        break;
      case 2:
        op_dls(&in, &s);
        break;
      case 3:
        op_two_bone(&in, &s);
        break;
      case 4:
        op_pole(&in, &s);
        break;
      case 5:
        op_rotations(&in, &s, input_pose);
        break;
      case 6:
        op_constraint_helpers(&s);
        break;
      case 7:
        op_blend(&in, &s, input_pose);
        break;
      case 8:
        free(gc.mem);
        decode_ground(&in, &gc);
        break;
      case 9:
        if (!gc.mem) decode_ground(&in, &gc);
        op_raycast(&in, &gc);
        break;
      case 10:
        if (!gc.mem) decode_ground(&in, &gc);
        op_foot(&in, &gc);
        break;
      case 12:
        op_tree(&in, &s);
        break;
      default:
#ifdef IK_FUZZ_BATCH
        op_batch(&in, &s);
#else
        op_name = "fabrik";
        op_fabrik(&in, &s);
#endif
        break;
    }
  }
  free(gc.mem);
  free(input_pose);
  free_scene(&s);
  return 0;
}
