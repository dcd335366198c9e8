/* The chain description: validation, lengths, results and the helpers every solver
 * shares. Constraint geometry is in ik_constraint.c. */
#include <stddef.h>

#include "ik_internal.h"

static const char *const status_messages[IK_STATUS_COUNT] = {
    "ok",
    "required array is NULL",
    "wrong joint count",
    "NaN or infinity in input",
    "bone length must be positive",
    "tolerance must not be negative",
    "iterations must be at least 1",
    "weight must be in [0, 1]",
    "unknown constraint type",
    "cone angle must be in [0, pi]",
    "hinge axis must not be zero",
    "hinge range must satisfy -pi <= min <= max <= pi",
    "twist limit must not be negative",
    "parameter out of range",
    "value too large",
};

const char *ik_status_message(ik_status status) {
  if ((int)status < 0 || status >= IK_STATUS_COUNT) return "unknown status";
  return status_messages[status];
}

ik_status ik__fail(ik_error *err, ik_status status, const char *field, int index) {
  if (err) {
    err->status = status;
    err->field = field;
    err->index = index;
  }
  return status;
}

ik_status ik__check_real(ik_real r, ik_error *err, const char *field, int index) {
  /* One comparison in the common case: false for NaN, infinities and huge values. */
  if (ik_fabs(r) <= IK_REAL_MAX_COORD) return IK_OK;
  return ik__fail(err, ik_real_is_finite(r) ? IK_E_RANGE : IK_E_NOT_FINITE, field, index);
}

ik_status ik__check_vec3(ik_vec3 v, ik_error *err, const char *field, int index) {
  ik_status st;
  if (ik__vec3_in_range(v)) return IK_OK; /* the common case, one test a component */
  st = ik__check_real(v.x, err, field, index);
  if (st == IK_OK) st = ik__check_real(v.y, err, field, index);
  if (st == IK_OK) st = ik__check_real(v.z, err, field, index);
  return st;
}

ik_status ik__check_quat(ik_quat q, ik_error *err, const char *field, int index) {
  ik_status st;
  if (ik__real_in_range(q.x) && ik__real_in_range(q.y) && ik__real_in_range(q.z) && ik__real_in_range(q.w))
    return IK_OK;
  st = ik__check_real(q.x, err, field, index);
  if (st == IK_OK) st = ik__check_real(q.y, err, field, index);
  if (st == IK_OK) st = ik__check_real(q.z, err, field, index);
  if (st == IK_OK) st = ik__check_real(q.w, err, field, index);
  return st;
}

void ik__result_init(ik_result *result) {
  result->reached = 0;
  result->iterations = 0;
  result->distance = 0;
}

ik_status ik__check_reach(ik_vec3 root, ik_real total_len, ik_error *err, const char *field) {
  if (ik__reach_ok(root, total_len)) return IK_OK;
  return ik__fail(err, ik_real_is_finite(total_len) ? IK_E_RANGE : IK_E_NOT_FINITE, field, -1);
}

void ik_chain_init(ik_chain *chain, ik_vec3 *positions, int count, ik_real *lengths) {
  chain->positions = positions;
  chain->count = count;
  chain->lengths = lengths;
  chain->derive_lengths = 0;
  chain->constraints = NULL;
  chain->rest_positions = NULL;
  chain->base_direction = ik_vec3_zero();
  chain->base_rotation = ik_quat_identity();
  chain->has_pole = 0;
  chain->pole = ik_vec3_zero();
  chain->pole_weight = 1;
}

ik_real ik_measure_lengths(const ik_vec3 *positions, int count, ik_real *lengths_out) {
  ik_real total = 0;
  int i;
  for (i = 0; i + 1 < count; i++) {
    ik_real len = ik_vec3_dist(positions[i], positions[i + 1]);
    if (lengths_out) lengths_out[i] = len;
    total += len;
  }
  return total;
}

/* Each length, given or measured, positive; then the chain's reach, with lengths given
 * or measured alike (positions already checked). */
static ik_status validate_lengths(const ik_chain *chain, ik_error *err) {
  const char *field = chain->derive_lengths ? "positions" : "lengths";
  ik_real total = 0;
  ik_status st;
  int i;
  if (!chain->derive_lengths) { /* the common case first: one test for every length */
    int ok = 1;
    for (i = 0; i + 1 < chain->count; i++) {
      ok &= ik__real_in_range(chain->lengths[i]) & (chain->lengths[i] > 0);
      total += chain->lengths[i];
    }
    if (ok) return ik__check_reach(chain->positions[0], total, err, field);
    total = 0;
  }
  for (i = 0; i + 1 < chain->count; i++) {
    ik_real len;
    if (chain->derive_lengths) {
      len = ik_vec3_dist(chain->positions[i], chain->positions[i + 1]);
    } else {
      len = chain->lengths[i];
      if (!ik__real_in_range(len) && (st = ik__check_real(len, err, field, i)) != IK_OK) return st;
    }
    if (!(len > 0)) return ik__fail(err, IK_E_BONE_LENGTH, field, i);
    total += len;
  }
  return ik__check_reach(chain->positions[0], total, err, field);
}

static ik_status validate_constraints(const ik_chain *chain, ik_error *err) {
  int i, has_hinge = 0;
  ik_status st;
  if (!chain->constraints) return IK_OK;
  for (i = 0; i + 1 < chain->count; i++) {
    st = ik_constraint_validate(&chain->constraints[i]);
    if (st != IK_OK) return ik__fail(err, st, "constraints", i);
    has_hinge |= chain->constraints[i].type == IK_CONSTRAINT_HINGE;
  }
  if (!has_hinge) return IK_OK;
  if (!chain->rest_positions) return ik__fail(err, IK_E_NULL, "rest_positions", -1);
  for (i = 0; i < chain->count; i++)
    if ((st = ik__check_vec3(chain->rest_positions[i], err, "rest_positions", i)) != IK_OK) return st;
  return IK_OK;
}

/* After the positions and lengths: base direction and rotation, constraints, pole. */
static ik_status validate_chain_settings(const ik_chain *chain, ik_error *err) {
  ik_status st;
  if (ik__chain_settings_ok(chain)) return IK_OK;
  if ((st = ik__check_vec3(chain->base_direction, err, "base_direction", -1)) != IK_OK) return st;
  if (!ik_quat_is_finite(chain->base_rotation)) return ik__fail(err, IK_E_NOT_FINITE, "base_rotation", -1);
  if ((st = validate_constraints(chain, err)) != IK_OK) return st;
  if (chain->has_pole) {
    if ((st = ik__check_vec3(chain->pole, err, "pole", -1)) != IK_OK) return st;
    if (!ik_real_is_finite(chain->pole_weight)) return ik__fail(err, IK_E_NOT_FINITE, "pole_weight", -1);
    if (!(chain->pole_weight >= 0 && chain->pole_weight <= 1))
      return ik__fail(err, IK_E_WEIGHT, "pole_weight", -1);
  }
  return IK_OK;
}

ik_status ik_chain_validate(const ik_chain *chain, ik_error *err) {
  ik_status st;
  int i, ok;
  if (!chain || !chain->positions) return ik__fail(err, IK_E_NULL, "positions", -1);
  if (chain->count < 2) return ik__fail(err, IK_E_COUNT, "count", -1);
  if (!chain->lengths) return ik__fail(err, IK_E_NULL, "lengths", -1);
  for (i = 0, ok = 1; i < chain->count; i++) ok &= ik__vec3_in_range(chain->positions[i]);
  for (i = 0; !ok && i < chain->count; i++) /* only to name the fault */
    if ((st = ik__check_vec3(chain->positions[i], err, "positions", i)) != IK_OK) return st;
  if ((st = validate_lengths(chain, err)) != IK_OK) return st;
  return validate_chain_settings(chain, err);
}

/* The target, the tolerance and the iteration cap. */
static ik_status validate_solve_settings(ik_vec3 target, ik_real tolerance, int max_iterations,
                                         ik_error *err) {
  ik_status st;
  if (ik__solve_settings_ok(target, tolerance, max_iterations)) return IK_OK;
  if ((st = ik__check_vec3(target, err, "target", -1)) != IK_OK) return st;
  if (!ik_real_is_finite(tolerance)) return ik__fail(err, IK_E_NOT_FINITE, "tolerance", -1);
  if (!(tolerance >= 0)) return ik__fail(err, IK_E_TOLERANCE, "tolerance", -1);
  if (max_iterations < 1) return ik__fail(err, IK_E_ITERATIONS, "max_iterations", -1);
  return IK_OK;
}

ik_status ik__validate_solve(const ik_chain *chain, ik_vec3 target, ik_real tolerance, int max_iterations,
                             ik_error *err) {
  ik_status st = ik_chain_validate(chain, err);
  if (st != IK_OK) return st;
  return validate_solve_settings(target, tolerance, max_iterations, err);
}

void ik__prepare_lengths(const ik_chain *chain) {
  if (chain->derive_lengths) ik_measure_lengths(chain->positions, chain->count, chain->lengths);
}

ik_real ik__total_length(const ik_chain *chain) {
  ik_real total = 0;
  int i;
  for (i = 0; i + 1 < chain->count; i++) total += chain->lengths[i];
  return total;
}

ik_vec3 ik__root_fallback_rest(const ik_chain *chain) {
  const ik_vec3 *p = chain->positions;
  ik_vec3 dir = ik_vec3_normalize(ik_vec3_sub(p[1], p[0]));
  ik_vec3 base_ws;
  if (ik_vec3_len2(dir) > 0) return dir;
  base_ws = ik_quat_rotate(ik_quat_normalize(chain->base_rotation), chain->base_direction);
  return ik_vec3_normalize_or(base_ws, ik_vec3_make(0, 1, 0));
}

void ik__lay_straight(const ik_chain *chain, ik_vec3 target, int kinds) {
  ik_vec3 *p = chain->positions;
  ik_vec3 dir = ik__root_fallback(chain, target);
  int i;
  for (i = 0; i + 1 < chain->count; i++) p[i + 1] = ik_vec3_madd(p[i], dir, chain->lengths[i]);
  if (kinds) ik__constrained_pass(chain, dir, kinds);
}

void ik_blend_chain(const ik_vec3 *from, ik_vec3 *to, int count, ik_real weight) {
  ik_vec3 to_prev;
  int i;
  if (weight >= 1 || count < 1) return;
  if (!(weight > 0)) {
    for (i = 0; i < count; i++) to[i] = from[i];
    return;
  }
  /* `to` is rewritten in place, so remember each solved joint before overwriting it.
   * The root stays where `to` has it. */
  to_prev = to[0];
  for (i = 0; i + 1 < count; i++) {
    ik_vec3 to_next = to[i + 1];
    ik_vec3 bone_old = ik_vec3_sub(from[i + 1], from[i]);
    ik_vec3 bone_new = ik_vec3_sub(to_next, to_prev);
    ik_real len = ik_vec3_len(bone_new);
    ik_quat turn = ik_quat_slerp(ik_quat_identity(), ik_quat_from_to(bone_old, bone_new), weight);
    ik_vec3 dir = ik_vec3_normalize_or(ik_quat_rotate(turn, bone_old), ik_vec3_normalize(bone_new));
    /* A bone too short for either direction to be normalised (a valid length, below
     * IK_REAL_EPSILON) would collapse to nothing: it is kept as solved instead. */
    to[i + 1] = ik_vec3_len2(dir) > 0 ? ik_vec3_madd(to[i], dir, len) : ik_vec3_add(to[i], bone_new);
    to_prev = to_next;
  }
}

int ik__break_collinear(const ik_chain *chain, ik_vec3 target, ik_vec3 line_dir, ik_real total_len) {
  ik_vec3 *p = chain->positions;
  const int count = chain->count;
  ik_vec3 root_ws = p[0], bend_dir, up = ik_vec3_make(0, 1, 0);
  ik_real reach_len, height;
  int i;
  if (count < 3) return 0;
  for (i = 1; i < count; i++)
    if (ik__off_line(p, i, line_dir, total_len)) return 0;
  bend_dir = ik_vec3_normalize(ik_vec3_project_on_plane(up, line_dir));
  if (ik_vec3_len2(bend_dir) == 0) bend_dir = ik_vec3_any_perpendicular(line_dir);
  if (chain->has_pole)
    bend_dir =
        ik_vec3_normalize_or(ik_vec3_project_on_plane(ik_vec3_sub(chain->pole, root_ws), line_dir), bend_dir);
  /* A hinge decides over pole and up: bent any other way, the chain would be clamped
   * straight again by the first constraint pass (a one-sided knee bends one way only).
   * Every inner joint of the arc turns the same way: the first hinge says which. */
  for (i = 1; i + 1 < count; i++)
    if (ik__hinge_bulge(chain, i, line_dir, &bend_dir)) break;
  /* Peak height of a chain folded once at its middle with its ends |target - root|
   * apart: an arc about that tall is close to the answer, so few sweeps remain. */
  reach_len = ik_vec3_dist(target, root_ws);
  height = (ik_real)0.5 * ik_sqrt(total_len * total_len - reach_len * reach_len) + (ik_real)0.01 * total_len;
  for (i = 1; i + 1 < count; i++) {
    ik_real s = ik_sin(IK_PI * (ik_real)i / (ik_real)(count - 1));
    p[i] = ik_vec3_madd(p[i], bend_dir, height * s);
  }
  return 1;
}

/* The radius of the circle through the root on which the bones, as chords laid end to
 * end, close the loop (their angles at the centre summing to a full turn), found by
 * halving; a chain that cannot close (one bone longer than the rest together) gets the
 * circle its longest bone spans. */
#define LOOP_HALVINGS 48

/* Half the angle a chord of length len takes at the centre of a circle of radius r. */
static ik_real chord_half_angle(ik_real len, ik_real r) {
  const ik_real x = len / (2 * r);
  return x >= 1 ? IK_PI / 2 : ik_atan2(x, ik_sqrt(1 - x * x));
}

ik_real ik__loop_radius(const ik_real *len, int count) {
  ik_real longest = 0, total = 0, lo, hi, turn;
  int i, k;
  for (i = 0; i + 1 < count; i++) {
    if (len[i] > longest) longest = len[i];
    total += len[i];
  }
  lo = longest / 2;
  hi = total; /* a circle this large takes the chords round less than a turn */
  for (i = 0, turn = 0; i + 1 < count; i++) turn += 2 * chord_half_angle(len[i], lo);
  if (turn < 2 * IK_PI) return lo;
  for (k = 0; k < LOOP_HALVINGS; k++) {
    const ik_real mid = (lo + hi) / 2;
    for (i = 0, turn = 0; i + 1 < count; i++) turn += 2 * chord_half_angle(len[i], mid);
    if (turn > 2 * IK_PI)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

void ik__fold_start(ik_vec3 *p, const ik_real *len, int count, ik_vec3 side_ws, ik_real s,
                    ik_real loop_radius) {
  const ik_vec3 root_ws = p[0];
  const ik_vec3 e = ik_vec3_normalize_or(ik_vec3_sub(p[1], p[0]), ik_vec3_make(1, 0, 0));
  ik_vec3 n = ik_vec3_normalize(ik_vec3_project_on_plane(side_ws, e)), prev_ws = root_ws, given_prev_ws;
  ik_real radius, phi;
  int i;
  if (!(s > 0) || count < 3) return;
  if (ik_vec3_len2(n) == 0) n = ik_vec3_any_perpendicular(e);
  radius = loop_radius;
  /* The circle's centre is radius along n from the root; the loop sets out from the
   * root a quarter turn round from e, towards n, and goes on that way. */
  phi = -IK_PI / 2;
  given_prev_ws = p[0];
  for (i = 0; i + 1 < count; i++) {
    const ik_real half = chord_half_angle(len[i], radius);
    const ik_real mid = phi + half;
    /* the chord's direction: across the radius at its middle */
    const ik_vec3 loop_dir = ik_vec3_add(ik_vec3_scale(e, -ik_sin(mid)), ik_vec3_scale(n, ik_cos(mid)));
    const ik_vec3 given_dir = ik_vec3_normalize_or(ik_vec3_sub(p[i + 1], given_prev_ws), loop_dir);
    const ik_vec3 blend = ik_vec3_add(ik_vec3_scale(given_dir, 1 - s), ik_vec3_scale(loop_dir, s));
    given_prev_ws = p[i + 1];
    prev_ws = ik_vec3_madd(prev_ws, ik_vec3_normalize_or(blend, loop_dir), len[i]);
    p[i + 1] = prev_ws;
    phi += 2 * half;
  }
}
