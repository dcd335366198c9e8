/***
 * Foot placement: `ik.foot`, which keeps a foot on uneven ground, and `ik.pelvis`,
 * which lowers the hips so that a foot on a lower step can reach it.
 *
 * Each frame, after animation and before the leg solvers: a ray from `ray_height`
 * above the animated foot, straight down (along -up), reaching `ray_length` below it,
 * finds the ground. A foot at or below the ground (closer than `foot_offset` to the
 * surface, along its normal) is raised along up until it is exactly `foot_offset` from
 * it, and turned by the minimal rotation from up to the ground normal; a foot above
 * that (swinging) is left where the animation has it. The correction, not the foot,
 * is smoothed over `smooth_time` (a critically damped spring, exact at any frame rate),
 * so stepping off a stair edge does not snap the leg, while a foot the animation
 * moves is followed without lag; the smoothing never leaves a sole under the ground
 * (a foot climbing a step is on its tread at once).
 *
 * The frame order that keeps the pelvis free of feedback:
 *
 * 1. animation writes the pose (pelvis and feet at their animated places);
 * 2. `foot:deficit(animated_position)` for each planted foot, then
 *    `pelvis:update(dt, ...)` gives the pelvis offset (<= 0);
 * 3. move the pelvis, and each animated foot with it, by up * offset;
 * 4. `foot:update(...)` for each foot from its lowered position; solve the legs to the
 *    results.
 *
 * A foot's fields, read and write (a bad value raises and changes nothing): `ground`
 * (the ik.ground it stands on; the foot keeps it alive), `ray_height` (>= 0, default
 * 0.5), `ray_length` (>= 0, default 1), `foot_offset` (>= 0, default 0.08: from the
 * foot's position, the ankle, to the sole), `smooth_time` (seconds >= 0, default 0.05; 0
 * for no smoothing) and `up` (non-zero vec3, default {0, 1, 0}). All in the ground's
 * space and unit.
 * @classmod ik.foot
 */
#include <string.h>

#include "ik_bone_batch.h" /* ik_foot_link */
#include "ik_foot.h"
#include "ikl.h"

#define IKL_FOOT "ik.foot"
#define IKL_PELVIS "ik.pelvis"

typedef struct ikl_foot {
  ik_foot_params params;
  ik_foot_state state;
  ikl_foot_link link; /* closed points at `closed`; ground follows the field */
  int closed;
} ikl_foot;

typedef struct ikl_pelvis {
  ik_pelvis p;
  int closed;
} ikl_pelvis;

enum { F_GROUND, F_RAY_HEIGHT, F_RAY_LENGTH, F_FOOT_OFFSET, F_SMOOTH_TIME, F_UP };
static const char *const field_names[] = {"ground",      "ray_height", "ray_length", "foot_offset",
                                          "smooth_time", "up",         NULL};
#define FIELD_LIST "ground, ray_height, ray_length, foot_offset, smooth_time, up"

static ikl_foot *check_foot(lua_State *L, int arg) { return (ikl_foot *)luaL_checkudata(L, arg, IKL_FOOT); }

static ikl_foot *check_open_foot(lua_State *L, int arg) {
  ikl_foot *f = check_foot(L, arg);
  if (f->closed) luaL_error(L, "attempt to use a closed ik.foot");
  return f;
}

static ikl_pelvis *check_pelvis(lua_State *L, int arg) {
  return (ikl_pelvis *)luaL_checkudata(L, arg, IKL_PELVIS);
}

static ikl_pelvis *check_open_pelvis(lua_State *L, int arg) {
  ikl_pelvis *p = check_pelvis(L, arg);
  if (p->closed) luaL_error(L, "attempt to use a closed ik.pelvis");
  return p;
}

static int field_id(const char *key) {
  int i;
  for (i = 0; field_names[i]; i++)
    if (strcmp(key, field_names[i]) == 0) return i;
  return -1;
}

/* A non-negative, finite number argument. */
static ik_real check_non_negative(lua_State *L, int arg) {
  ik_real r = ikl_checkreal(L, arg);
  if (!(lua_tonumber(L, arg) >= 0))
    luaL_argerror(L, arg, lua_pushfstring(L, "non-negative number expected, got %s", ikl_describe(L, arg)));
  return r;
}

/* A non-negative number for field `name` of `owner`, from the value at v. */
static ik_real field_non_negative(lua_State *L, int v, const char *owner, const char *name) {
  lua_Number n = lua_tonumber(L, v);
  if (lua_type(L, v) != LUA_TNUMBER || !ikl_is_usable(n) || !(n >= 0))
    ikl_fielderror(L, owner, name, "non-negative number", v);
  return (ik_real)n;
}

/* ---- ik.foot ---- */

/* Checks the value at v for field `id` and stores it; the foot is at fi. Raises,
 * changing nothing, when the value is bad. */
static void set_field(lua_State *L, ikl_foot *f, int fi, int id, int v) {
  ik_foot_params p = f->params;
  ik_error err;
  switch (id) {
    case F_GROUND:
      if (!luaL_testudata(L, v, IKL_GROUND)) ikl_fielderror(L, IKL_FOOT, "ground", "ik.ground", v);
      f->link.ground = ikl_checkground_ref(L, v, &f->link.ground_closed); /* raises when closed */
      ikl_getuservalue(L, fi);
      lua_pushvalue(L, v);
      lua_setfield(L, -2, "ground");
      lua_pop(L, 1);
      return;
    case F_RAY_HEIGHT:
      p.ray_height = field_non_negative(L, v, IKL_FOOT, "ray_height");
      break;
    case F_RAY_LENGTH:
      p.ray_length = field_non_negative(L, v, IKL_FOOT, "ray_length");
      break;
    case F_FOOT_OFFSET:
      p.foot_offset = field_non_negative(L, v, IKL_FOOT, "foot_offset");
      break;
    case F_SMOOTH_TIME:
      p.smooth_time = field_non_negative(L, v, IKL_FOOT, "smooth_time");
      break;
    default: /* F_UP */
      if (!ikl_tovec3(L, v, &p.up)) ikl_fielderror(L, IKL_FOOT, "up", "non-zero vec3", v);
      if (!ikl_vec3_usable(p.up))
        luaL_error(L, "ik.foot: bad field 'up' (finite vec3 expected, got NaN, inf or a huge component)");
      if (!(ik_vec3_len2(p.up) > IK_TINY_LEN2))
        luaL_error(L, "ik.foot: bad field 'up' (non-zero vec3 expected, got a zero vector)");
      break;
  }
  /* What is left: ray_height + ray_length must be a usable length too. */
  if (ik_foot_params_validate(&p, &err) != IK_OK)
    luaL_error(L, "ik.foot: bad field '%s' (%s)", err.field ? err.field : field_names[id],
               ik_status_message(err.status));
  f->params = p;
}

static int push_field(lua_State *L, const ikl_foot *f, int id) {
  switch (id) {
    case F_GROUND:
      ikl_getuservalue(L, 1);
      lua_getfield(L, -1, "ground");
      break;
    case F_RAY_HEIGHT:
      lua_pushnumber(L, (lua_Number)f->params.ray_height);
      break;
    case F_RAY_LENGTH:
      lua_pushnumber(L, (lua_Number)f->params.ray_length);
      break;
    case F_FOOT_OFFSET:
      lua_pushnumber(L, (lua_Number)f->params.foot_offset);
      break;
    case F_SMOOTH_TIME:
      lua_pushnumber(L, (lua_Number)f->params.smooth_time);
      break;
    default:
      ikl_pushvec3(L, f->params.up);
      break; /* F_UP */
  }
  return 1;
}

/***
 * Makes a foot.
 * @function ik.foot
 * @tparam table spec `ground` (ik.ground, required) and any of the fields above
 * @treturn ik.foot
 * @usage local foot = ik.foot{ ground = ik.ground.plane(), foot_offset = 0.1 }
 * -- the animated ankle has sunk 5 cm into the floor: the foot is raised onto it
 * local position, rotation, grounded = foot:update({0, 0.05, 0}, ik.quat(), 1 / 60)
 * assert(grounded and math.abs(position.y - 0.1) < 1e-6)
 */
static int foot_new(lua_State *L) {
  ikl_foot *f;
  int id;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  ikl_check_keys(L, 1, IKL_FOOT, field_names, FIELD_LIST);
  lua_getfield(L, 1, "ground");
  if (lua_isnil(L, -1)) return ikl_fielderror(L, IKL_FOOT, "ground", "ik.ground", -1);
  lua_pop(L, 1);
  f = (ikl_foot *)ikl_newuserdata(L, sizeof *f); /* 2 */
  memset(f, 0, sizeof *f);
  f->link.closed = &f->closed;
  ik_foot_params_init(&f->params);
  ik_foot_state_init(&f->state);
  lua_createtable(L, 0, 1);
  ikl_setuservalue(L, 2);
  for (id = 0; field_names[id]; id++) {
    lua_getfield(L, 1, field_names[id]);
    if (!lua_isnil(L, -1)) set_field(L, f, 2, id, lua_gettop(L));
    lua_pop(L, 1);
  }
  luaL_setmetatable(L, IKL_FOOT); /* last: a foot that failed half-made is never seen */
  return 1;
}

int ikl_tofoot(lua_State *L, int idx, ik_foot_params **params, ik_foot_state **state) {
  ikl_foot *f = (ikl_foot *)luaL_testudata(L, idx, IKL_FOOT);
  if (!f) return 0;
  if (f->closed) luaL_error(L, "attempt to use a closed ik.foot");
  *params = &f->params;
  *state = &f->state;
  return 1;
}

const ikl_foot_link *ikl_foot_link_of(lua_State *L, int idx) {
  ikl_foot *f = (ikl_foot *)luaL_testudata(L, idx, IKL_FOOT);
  return f ? &f->link : NULL;
}

/* Pushes the foot's ground (foot at 1) and returns it, raising when it is closed. */
static const ik_ground *push_ground(lua_State *L) {
  ikl_getuservalue(L, 1);
  lua_getfield(L, -1, "ground");
  lua_replace(L, -2);
  return ikl_checkground(L, -1);
}

/* Raises for a refused update or deficit (what ikl_check* let through). */
static int refused(lua_State *L, const ik_error *err) {
  if (err->field && strcmp(err->field, "animated_position") == 0)
    return luaL_argerror(L, 2, "vec3 too large: the ray from ray_height above it would start out of range");
  return luaL_error(L, "ik.foot: %s (%s)", ik_status_message(err->status), err->field ? err->field : "?");
}

typedef struct update_job {
  ik_foot_params *params;
  ik_foot_state *state;
  ik_vec3 position;
  ik_quat rotation;
  ik_real dt;
  ik_foot_result out;
  ik_real deficit;
} update_job;

static ik_status run_update(const ik_ground *g, void *ud) {
  update_job *job = (update_job *)ud;
  return ik_foot_update(job->params, job->state, g, job->position, job->rotation, job->dt, &job->out);
}

static ik_status run_deficit(const ik_ground *g, void *ud) {
  update_job *job = (update_job *)ud;
  return ik_foot_deficit(job->params, g, job->position, &job->deficit);
}

/***
 * One frame for the foot, dt seconds after the previous one. The first update (and
 * the first after `reset`) snaps to its goal, whatever dt is; later ones spring towards
 * it, and for them dt = 0 gives the current correction on the new animated pose and
 * changes nothing.
 * @function update
 * @tparam vec3 animated_position where the animation has the foot (the ankle)
 * @tparam quat animated_rotation its rotation (need not be unit)
 * @tparam number dt seconds since the previous update, >= 0
 * @tparam[opt] ik.vec3 position_out written with the position and returned instead of a
 * new vector
 * @tparam[opt] ik.quat rotation_out the same for the rotation
 * @treturn ik.vec3 position, the leg IK's target: animated position + smoothed correction
 * @treturn ik.quat rotation: smoothed correction * animated rotation
 * @treturn boolean grounded: this frame's goal plants the foot (ground was hit and the
 * animated foot is at or below `foot_offset` from it)
 * @usage -- a 20 degree slope rising along +X, through the origin
 * local a = math.rad(20)
 * local slope = ik.ground.plane{ normal = {-math.sin(a), math.cos(a), 0} }
 * local foot = ik.foot{ ground = slope, foot_offset = 0.08, smooth_time = 0 }
 * local position, rotation, grounded = foot:update({1, 0, 0}, ik.quat(), 1 / 60)
 * local n = ik.vec3(-math.sin(a), math.cos(a), 0)
 * assert(grounded and math.abs(position:dot(n) - 0.08) < 1e-5)  -- 8 cm above the slope
 * assert((rotation * ik.vec3(0, 1, 0)):distance(n) < 1e-5)      -- sole along it
 * -- a foot in the air is left alone
 * position, rotation, grounded = foot:update({1, 2, 0}, ik.quat(), 1 / 60)
 * assert(not grounded and position == ik.vec3(1, 2, 0))
 */
static int foot_update(lua_State *L) {
  ikl_foot *f = check_open_foot(L, 1);
  update_job job;
  const ik_ground *g;
  ik_error err;
  ik_status st;
  job.position = ikl_checkvec3(L, 2);
  job.rotation = ikl_checkrotation(L, 3); /* need not be unit, but a rotation: not zero */
  job.dt = check_non_negative(L, 4);
  if (!lua_isnoneornil(L, 5) && !luaL_testudata(L, 5, IKL_VEC3)) ikl_typeerror(L, 5, "ik.vec3");
  if (!lua_isnoneornil(L, 6) && !luaL_testudata(L, 6, IKL_QUAT)) ikl_typeerror(L, 6, "ik.quat");
  lua_settop(L, 6);
  g = push_ground(L); /* 7 */
  job.params = &f->params;
  job.state = &f->state;
  if (ik_foot_validate(&f->params, &f->state, g, job.position, job.rotation, job.dt, &job.out, &err) != IK_OK)
    return refused(L, &err);
  st = ikl_ground_run(L, 7, run_update, &job);
  if (st != IK_OK) return luaL_error(L, "ik.foot: update failed (%s)", ik_status_message(st));
  *ikl_outvec3(L, 5) = job.out.position;
  *ikl_outquat(L, 6) = job.out.rotation;
  lua_pushboolean(L, job.out.grounded);
  return 3;
}

/***
 * How far the ground is from where this animated foot would stand on it, along up,
 * with no state and no smoothing: > 0 the foot has sunk in by that much (update raises
 * it), < 0 the ground is that far below it (what the pelvis drops by), 0 when the ray
 * finds no ground. For the pelvis: measure before moving it.
 * @function deficit
 * @tparam vec3 animated_position
 * @treturn number
 * @usage local foot = ik.foot{ ground = ik.ground.plane{ point = {0, -0.3, 0} },
 *                        foot_offset = 0.1 }
 * -- the ankle at y = 0.1 would stand on y = 0; the ground is 0.3 lower
 * assert(math.abs(foot:deficit({0, 0.1, 0}) + 0.3) < 1e-6)
 */
static int foot_deficit(lua_State *L) {
  ikl_foot *f = check_open_foot(L, 1);
  update_job job;
  ik_status st;
  job.position = ikl_checkvec3(L, 2);
  job.params = &f->params;
  job.deficit = 0;
  lua_settop(L, 1);
  push_ground(L); /* 2 */
  st = ikl_ground_run(L, 2, run_deficit, &job);
  if (st != IK_OK) {
    ik_error err;
    err.status = st;
    err.field = "animated_position"; /* the only input left to refuse */
    err.index = -1;
    return refused(L, &err);
  }
  lua_pushnumber(L, (lua_Number)job.deficit);
  return 1;
}

/***
 * Forgets the smoothing: the next update snaps to its goal (after a teleport, say).
 * @function reset
 */
static int foot_reset(lua_State *L) {
  ik_foot_state_init(&check_open_foot(L, 1)->state);
  return 0;
}

/***
 * Closes the foot: later use raises. It lets go of its ground.
 * @function close
 */
static int foot_close(lua_State *L) {
  ikl_foot *f = check_foot(L, 1);
  if (!f->closed) {
    ikl_getuservalue(L, 1);
    if (lua_istable(L, -1)) {
      lua_pushnil(L);
      lua_setfield(L, -2, "ground");
    }
  }
  f->closed = 1;
  return 0;
}

static int foot_gc(lua_State *L) {
  check_foot(L, 1)->closed = 1;
  return 0;
}

static int foot_index(lua_State *L) {
  const ikl_foot *f = check_open_foot(L, 1);
  const char *key = lua_tostring(L, 2);
  int id = key ? field_id(key) : -1;
  if (id >= 0) return push_field(L, f, id);
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int foot_newindex(lua_State *L) {
  ikl_foot *f = check_open_foot(L, 1);
  const char *key = ikl_opstring(L, 2, "__newindex");
  int id = field_id(key);
  if (id < 0) return luaL_error(L, "ik.foot: no field '%s' (fields: " FIELD_LIST ")", key);
  if (lua_isnil(L, 3)) return luaL_error(L, "ik.foot: field '%s' cannot be nil", key);
  set_field(L, f, 1, id, 3);
  return 0;
}

static int foot_tostring(lua_State *L) {
  ikl_foot *f = check_foot(L, 1);
  if (f->closed) {
    lua_pushliteral(L, "ik.foot (closed)");
  } else {
    lua_pushfstring(L, "ik.foot(foot_offset = %s, smooth_time = %s)",
                    ikl_pushnumstr(L, (lua_Number)f->params.foot_offset),
                    ikl_pushnumstr(L, (lua_Number)f->params.smooth_time));
  }
  return 1;
}

/* ---- ik.pelvis ---- */

/***
 * The pelvis drop: `ik.pelvis`, a spring for how far to lower the hips so that every
 * planted foot can reach its ground (see the frame order above).
 * @type pelvis
 */

static const char *const pelvis_keys[] = {"smooth_time", NULL};

/***
 * Makes a pelvis spring: how far to lower the hips, smoothed.
 *
 * Fields: `smooth_time` (seconds >= 0, default 0.05; 0 for no smoothing), read and
 * write; `offset` (the last offset given), read only.
 * @function ik.pelvis
 * @tparam[opt] table spec `smooth_time`
 * @treturn ik.pelvis
 * @usage local pelvis = ik.pelvis{ smooth_time = 0.05 }
 * -- the left foot's ground is 0.2 below it, the right one stands on its own
 * local offset = pelvis:update(1 / 60, -0.2, 0)
 * assert(math.abs(offset + 0.2) < 1e-6)  -- the first update snaps
 * for _ = 1, 60 do offset = pelvis:update(1 / 60, { 0, 0 }) end
 * assert(math.abs(offset) < 1e-6)  -- back up, smoothly, in a second
 */
static int pelvis_new(lua_State *L) {
  ikl_pelvis *p;
  ik_real smooth_time = (ik_real)0.05;
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    ikl_check_keys(L, 1, IKL_PELVIS, pelvis_keys, "smooth_time");
    lua_getfield(L, 1, "smooth_time");
    if (!lua_isnil(L, -1)) smooth_time = field_non_negative(L, -1, IKL_PELVIS, "smooth_time");
    lua_pop(L, 1);
  }
  p = (ikl_pelvis *)ikl_newuserdata0(L, sizeof *p);
  memset(p, 0, sizeof *p);
  ik_pelvis_init(&p->p);
  p->p.smooth_time = smooth_time;
  luaL_setmetatable(L, IKL_PELVIS);
  return 1;
}

/* Deficits at most this many go on the C stack; more in a scratch userdata. */
#define PELVIS_STACK_DEFICITS 16

/* Reads a deficit: the value at idx, argument arg of update (item `item` of its table
 * when item > 0). */
static ik_real read_deficit(lua_State *L, int idx, int arg, int item) {
  lua_Number n = lua_tonumber(L, idx);
  const char *what =
      lua_type(L, idx) != LUA_TNUMBER ? "number" : (!ikl_is_usable(n) ? "finite number" : NULL);
  if (what) {
    if (item > 0)
      luaL_argerror(L, arg,
                    lua_pushfstring(L, "%s expected at index %d, got %s", what, item, ikl_describe(L, idx)));
    luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", what, ikl_describe(L, idx)));
  }
  return (ik_real)n;
}

/***
 * Springs the offset towards the lowest (most negative) of the feet's deficits, or
 * 0 when none is negative, over dt seconds. The first update (and the first after
 * `reset`) snaps.
 * @function pelvis:update
 * @tparam number dt seconds since the previous update, >= 0
 * @param ... the feet's deficits (from `ik.foot:deficit`), as numbers or as one list
 * @treturn number the offset, <= 0 once settled: move the pelvis by up * offset
 */
static int pelvis_update(lua_State *L) {
  ikl_pelvis *p = check_open_pelvis(L, 1);
  ik_real dt = check_non_negative(L, 2);
  ik_real small[PELVIS_STACK_DEFICITS], *deficits = small, offset = 0;
  size_t len;
  int n, i, table = lua_gettop(L) == 3 && lua_istable(L, 3);
  len = table ? lua_rawlen(L, 3) : (size_t)(lua_gettop(L) > 2 ? lua_gettop(L) - 2 : 0);
  if (len > (size_t)(0x7fffffff / sizeof(ik_real))) return luaL_argerror(L, 3, "too many deficits");
  n = (int)len;
  if (n > PELVIS_STACK_DEFICITS) deficits = (ik_real *)ikl_newuserdata0(L, (size_t)n * sizeof *deficits);
  for (i = 0; i < n; i++) {
    if (table) {
      lua_rawgeti(L, 3, i + 1);
      deficits[i] = read_deficit(L, -1, 3, i + 1);
      lua_pop(L, 1);
    } else {
      deficits[i] = read_deficit(L, 3 + i, 3 + i, 0);
    }
  }
  if (ik_pelvis_update(&p->p, deficits, n, dt, &offset) != IK_OK)
    return luaL_error(L, "ik.pelvis: update refused");
  lua_pushnumber(L, (lua_Number)offset);
  return 1;
}

/***
 * Forgets the smoothing: the next update snaps.
 * @function pelvis:reset
 */
static int pelvis_reset(lua_State *L) {
  ikl_pelvis *p = check_open_pelvis(L, 1);
  const ik_real smooth_time = p->p.smooth_time;
  ik_pelvis_init(&p->p);
  p->p.smooth_time = smooth_time;
  return 0;
}

/***
 * Closes the pelvis: later use raises.
 * @function pelvis:close
 */
static int pelvis_close(lua_State *L) {
  check_pelvis(L, 1)->closed = 1;
  return 0;
}

static int pelvis_index(lua_State *L) {
  const ikl_pelvis *p = check_open_pelvis(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "smooth_time") == 0) {
    lua_pushnumber(L, (lua_Number)p->p.smooth_time);
  } else if (key && strcmp(key, "offset") == 0) {
    lua_pushnumber(L, (lua_Number)p->p.offset);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int pelvis_newindex(lua_State *L) {
  ikl_pelvis *p = check_open_pelvis(L, 1);
  const char *key = ikl_opstring(L, 2, "__newindex");
  if (strcmp(key, "smooth_time") == 0) {
    p->p.smooth_time = field_non_negative(L, 3, IKL_PELVIS, "smooth_time");
  } else if (strcmp(key, "offset") == 0) {
    return luaL_error(L, "ik.pelvis: field 'offset' is read only");
  } else {
    return luaL_error(L, "ik.pelvis: no field '%s' (fields: smooth_time, offset)", key);
  }
  return 0;
}

static int pelvis_tostring(lua_State *L) {
  ikl_pelvis *p = check_pelvis(L, 1);
  if (p->closed) {
    lua_pushliteral(L, "ik.pelvis (closed)");
  } else {
    lua_pushfstring(L, "ik.pelvis(offset = %s, smooth_time = %s)", ikl_pushnumstr(L, (lua_Number)p->p.offset),
                    ikl_pushnumstr(L, (lua_Number)p->p.smooth_time));
  }
  return 1;
}

static const luaL_Reg foot_meth[] = {{"update", foot_update},
                                     {"deficit", foot_deficit},
                                     {"reset", foot_reset},
                                     {"close", foot_close},
                                     {NULL, NULL}};

static const luaL_Reg foot_metameth[] = {{"__index", foot_index},       {"__newindex", foot_newindex},
                                         {"__tostring", foot_tostring}, {"__gc", foot_gc},
                                         {"__close", foot_close},       {NULL, NULL}};

static const luaL_Reg pelvis_meth[] = {
    {"update", pelvis_update}, {"reset", pelvis_reset}, {"close", pelvis_close}, {NULL, NULL}};

static const luaL_Reg pelvis_metameth[] = {{"__index", pelvis_index},       {"__newindex", pelvis_newindex},
                                           {"__tostring", pelvis_tostring}, {"__gc", pelvis_close},
                                           {"__close", pelvis_close},       {NULL, NULL}};

void ikl_open_foot(lua_State *L) {
  ikl_createmeta(L, IKL_FOOT, foot_meth, foot_metameth);
  ikl_createmeta(L, IKL_PELVIS, pelvis_meth, pelvis_metameth);
  lua_pop(L, 2);
  lua_pushcfunction(L, foot_new);
  lua_setfield(L, -2, "foot");
  lua_pushcfunction(L, pelvis_new);
  lua_setfield(L, -2, "pelvis");
}
