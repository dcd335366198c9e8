/***
 * Ground for foot placement: `ik.ground`, what a ray can hit. Four kinds, made by the
 * functions of the table `ik.ground`: a plane, a heightfield, a triangle mesh, or a Lua
 * function (a host's physics). All have `raycast`, and all are what an `ik.foot`
 * stands on.
 *
 * A ground is one userdata holding everything it needs (a mesh's bounding volume
 * hierarchy too), copied from the tables it was made from: change or drop those
 * afterwards as you like. Grounds cannot be changed once made; make a new one.
 *
 * Positions and directions are in one space of your choosing (usually world space),
 * the same as the feet's. Fields: `kind` ("plane", "heightfield", "mesh" or "custom"),
 * read only.
 * @classmod ik.ground
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "ik_ground.h"
#include "ikl.h"

/* A query of a custom ground in progress: where its Lua function is on the stack of L,
 * the ray, and what became of the call. Lives on the C stack of ikl_ground_run. */
typedef struct ground_call {
  lua_State *L;
  int err_slot;  /* stack slot that receives the function's error */
  int call_slot; /* call_function, pushed beforehand so that calling it allocates nothing */
  int fn_slot;   /* the Lua function */
  int failed;
  /* the ray, for call_function, and its answer */
  ik_vec3 origin, direction;
  ik_real max_distance;
  ik_ray_hit *hit;
  int result;
} ground_call;

/* The header of a ground's userdata; the C ground's block follows it. */
typedef struct ikl_ground {
  const ik_ground *g; /* inside the block after this header */
  ground_call *call;  /* custom: the query in progress (user pointer of the callback) */
  int kind;
  int columns, rows, triangles; /* for tostring */
  int closed;
  int view; /* a view of another state's ground: g and closed_at are its */
  const int *closed_at;
} ikl_ground;

/* Where the C block starts: after the header, rounded up (ik_ground_*_init aligns
 * within the block anyway). */
#define HEADER_SIZE ((sizeof(ikl_ground) + 15) & ~(size_t)15)

static const char *const kind_names[] = {"plane", "heightfield", "mesh", "custom"};

static ikl_ground *check(lua_State *L, int arg) { return (ikl_ground *)luaL_checkudata(L, arg, IKL_GROUND); }

static ikl_ground *check_open(lua_State *L, int arg) {
  ikl_ground *gd = check(L, arg);
  if (*gd->closed_at) luaL_error(L, "attempt to use a closed ik.ground");
  return gd;
}

const ik_ground *ikl_checkground(lua_State *L, int arg) { return check_open(L, arg)->g; }

const ik_ground *ikl_checkground_ref(lua_State *L, int arg, const int **closed) {
  ikl_ground *gd = check_open(L, arg);
  *closed = gd->closed_at;
  return gd->g;
}

/* A new ground userdata with room for `size` bytes of C ground, closed (and without
 * its metatable) until made: a failed build leaves nothing usable behind. */
static ikl_ground *new_ground(lua_State *L, int kind, size_t size) {
  ikl_ground *gd;
  if (size == 0 || size > (size_t)INT_MAX - HEADER_SIZE)
    luaL_error(L, "ik.ground.%s: too large", kind_names[kind]);
  gd = (ikl_ground *)ikl_newuserdata(L, HEADER_SIZE + size);
  memset(gd, 0, sizeof *gd);
  gd->kind = kind;
  gd->closed = 1;
  gd->closed_at = &gd->closed;
  return gd;
}

static void *block_of(ikl_ground *gd) { return (char *)gd + HEADER_SIZE; }

/* Opens a ground built by its init. */
static void finish(lua_State *L, ikl_ground *gd, const ik_ground *g) {
  gd->g = g;
  gd->closed = 0;
  luaL_setmetatable(L, IKL_GROUND);
}

/* Raises for an init the binding's own checks let through (the C layer's limits). */
static int init_error(lua_State *L, const char *owner, const ik_error *err) {
  const char *field = err->field ? err->field : "?";
  if (err->index >= 0)
    return luaL_error(L, "%s: bad field '%s' (%s, at index %d)", owner, field, ik_status_message(err->status),
                      err->index + 1);
  return luaL_error(L, "%s: bad field '%s' (%s)", owner, field, ik_status_message(err->status));
}

/* A required number field: finite, and within [lo, hi] (or > lo when open_lo). */
static lua_Number need_number(lua_State *L, int t, const char *owner, const char *name, lua_Number lo,
                              int open_lo, lua_Number hi, const char *expected) {
  lua_Number n;
  lua_getfield(L, t, name);
  n = lua_tonumber(L, -1);
  if (lua_type(L, -1) != LUA_TNUMBER || !ikl_is_usable(n) || n < lo || (open_lo && n == lo) || n > hi)
    ikl_fielderror(L, owner, name, expected, -1);
  lua_pop(L, 1);
  return n;
}

/* A required integer field in [lo, INT_MAX]. */
static int need_int(lua_State *L, int t, const char *owner, const char *name, int lo, const char *expected) {
  lua_Number n = need_number(L, t, owner, name, lo, 0, INT_MAX, expected);
  if (n != floor(n)) {
    lua_getfield(L, t, name);
    ikl_fielderror(L, owner, name, expected, -1);
  }
  return (int)n;
}

/* A required table field, left on the stack. */
static int need_table(lua_State *L, int t, const char *owner, const char *name, const char *expected) {
  lua_getfield(L, t, name);
  if (!lua_istable(L, -1)) ikl_fielderror(L, owner, name, expected, -1);
  return lua_gettop(L);
}

/* The spec table at arg 1, or an empty one when arg 1 is none or nil (allow_none). */
static void spec_table(lua_State *L, int allow_none) {
  if (allow_none && lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
}

/***
 * A plane, two-sided: rays from either side hit it, and one parallel to it misses
 * (even one lying in it).
 * @function ik.ground.plane
 * @tparam[opt] table spec `point` (vec3, any point of the plane, default zero) and
 * `normal` (non-zero vec3 of any length, default {0, 1, 0})
 * @treturn ik.ground
 * @usage local floor = ik.ground.plane()   -- y = 0
 * local ramp = ik.ground.plane{ point = {0, 1, 0}, normal = {-1, 1, 0} }
 * local hit, point, normal, distance = ramp:raycast({0, 3, 0}, {0, -1, 0}, 10)
 * assert(hit and math.abs(point.y - 1) < 1e-6 and math.abs(distance - 2) < 1e-6)
 * assert(math.abs(normal.x + math.sqrt(0.5)) < 1e-6)
 * assert(floor:raycast({0, 1, 0}, {0, 1, 0}, 10) == false) -- pointing away
 */
static int ground_plane(lua_State *L) {
  static const char *const names[] = {"point", "normal", NULL};
  const char *owner = "ik.ground.plane";
  ik_vec3 point = ik_vec3_zero(), normal = ik_vec3_make(0, 1, 0);
  ik_ground *g = NULL;
  ik_error err;
  ikl_ground *gd;
  spec_table(L, 1);
  ikl_check_keys(L, 1, owner, names, "point, normal");
  ikl_optfield_vec3(L, 1, owner, "point", &point);
  if (ikl_optfield_vec3(L, 1, owner, "normal", &normal) && !(ik_vec3_len2(normal) > IK_TINY_LEN2))
    return luaL_error(L, "%s: bad field 'normal' (non-zero vec3 expected, got a zero vector)", owner);
  gd = new_ground(L, IK_GROUND_PLANE, ik_ground_plane_size());
  if (ik_ground_plane_init(block_of(gd), ik_ground_plane_size(), point, normal, &g, &err) != IK_OK)
    return init_error(L, owner, &err);
  finish(L, gd, g);
  return 1;
}

/***
 * A heightfield: a regular grid of heights over the x/z plane (y up). Sample (c, r),
 * counted from 0, is the point `(origin.x + c * cell_size, origin.y + h, origin.z + r *
 * cell_size)` with `h = heights[r * columns + c + 1]`: columns run along +X, rows along
 * +Z, and heights are listed row by row (row-major), `rows * columns` of them. Each
 * cell is two triangles, split along the diagonal from sample (c, r) to (c + 1, r + 1).
 * Outside the grid's x/z extent there is no ground.
 * @function ik.ground.heightfield
 * @tparam table spec `origin` (vec3, the grid's (min x, min z) corner and its base
 * height; default zero), `cell_size` (> 0), `columns` and `rows` (integers >= 2) and
 * `heights` (list of rows * columns numbers); all but origin required
 * @treturn ik.ground
 * @usage -- 3 x 2 samples, 1 m apart: a step up from 0 to 0.5 along +X
 * local g = ik.ground.heightfield{ origin = {0, 0, 0}, cell_size = 1, columns = 3, rows = 2,
 *                                  heights = { 0, 0, 0.5,     -- row 0 (z = 0)
 *                                              0, 0, 0.5 } }  -- row 1 (z = 1)
 * local hit, point = g:raycast({0.5, 2, 0.5}, {0, -1, 0}, 5)
 * assert(hit and math.abs(point.y) < 1e-6)
 * hit, point = g:raycast({1.5, 2, 0.5}, {0, -1, 0}, 5)
 * assert(hit and math.abs(point.y - 0.25) < 1e-6)      -- halfway up the slope
 * assert(g:raycast({5, 2, 0.5}, {0, -1, 0}, 5) == false) -- off the grid
 */
static int ground_heightfield(lua_State *L) {
  static const char *const names[] = {"origin", "cell_size", "columns", "rows", "heights", NULL};
  const char *owner = "ik.ground.heightfield";
  ik_vec3 origin = ik_vec3_zero();
  ik_real cell_size, *heights;
  ik_ground *g = NULL;
  ik_error err;
  ikl_ground *gd;
  size_t size, len;
  int columns, rows, n, i, ht;
  spec_table(L, 0);
  ikl_check_keys(L, 1, owner, names, "origin, cell_size, columns, rows, heights");
  ikl_optfield_vec3(L, 1, owner, "origin", &origin);
  cell_size = (ik_real)need_number(L, 1, owner, "cell_size", 0, 1, HUGE_VAL, "positive number");
  columns = need_int(L, 1, owner, "columns", 2, "integer >= 2");
  rows = need_int(L, 1, owner, "rows", 2, "integer >= 2");
  size = ik_ground_heightfield_size(columns, rows);
  if (size == 0) return luaL_error(L, "%s: too large (%d columns x %d rows)", owner, columns, rows);
  n = columns * rows; /* fits: the size is not 0 */
  ht = need_table(L, 1, owner, "heights", "table");
  len = lua_rawlen(L, ht);
  if (len != (size_t)n)
    return luaL_error(L, "%s: bad field 'heights' (%d numbers expected, got %s)", owner, n,
                      ikl_pushnumstr(L, (lua_Number)len));
  heights = (ik_real *)ikl_newuserdata0(L, (size_t)n * sizeof *heights); /* scratch */
  for (i = 0; i < n; i++) {
    lua_Number h;
    lua_rawgeti(L, ht, i + 1);
    h = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER)
      return luaL_error(L, "%s: bad field 'heights' (number expected at index %d, got %s)", owner, i + 1,
                        ikl_describe(L, -1));
    if (!ikl_is_usable(h))
      return luaL_error(L, "%s: bad field 'heights' (finite number expected at index %d, got %s)", owner,
                        i + 1, ikl_describe(L, -1));
    heights[i] = (ik_real)h;
    lua_pop(L, 1);
  }
  gd = new_ground(L, IK_GROUND_HEIGHTFIELD, size);
  if (ik_ground_heightfield_init(block_of(gd), size, origin, cell_size, columns, rows, heights, &g, &err) !=
      IK_OK)
    return init_error(L, owner, &err);
  gd->columns = columns;
  gd->rows = rows;
  finish(L, gd, g);
  return 1;
}

/* Reads the vertex list at vt (n >= 3 of them) into a new scratch array. */
static ik_vec3 *read_vertices(lua_State *L, int vt, int n, const char *owner) {
  ik_vec3 *v = (ik_vec3 *)ikl_newuserdata0(L, (size_t)n * sizeof *v);
  int i;
  for (i = 0; i < n; i++) {
    lua_rawgeti(L, vt, i + 1);
    if (!ikl_tovec3(L, -1, &v[i]))
      luaL_error(L, "%s: bad field 'vertices' (vec3 expected at index %d, got %s)", owner, i + 1,
                 ikl_typename(L, -1));
    if (!ikl_vec3_usable(v[i]))
      luaL_error(
          L, "%s: bad field 'vertices' (finite vec3 expected at index %d, got NaN, inf or a huge component)",
          owner, i + 1);
    lua_pop(L, 1);
  }
  return v;
}

/* One vertex index (the value on top, popped), 1-based in Lua, stored 0-based. */
static void read_index(lua_State *L, int *out, int vertex_count, int triangle, const char *owner) {
  lua_Number x = lua_tonumber(L, -1);
  if (lua_type(L, -1) != LUA_TNUMBER || x != floor(x))
    luaL_error(L, "%s: bad field 'triangles' (integer vertex index expected in triangle %d, got %s)", owner,
               triangle, ikl_describe(L, -1));
  if (x < 1 || x > vertex_count)
    luaL_error(L, "%s: bad field 'triangles' (vertex index %s out of range 1..%d, in triangle %d)", owner,
               ikl_describe(L, -1), vertex_count, triangle);
  *out = (int)x - 1;
  lua_pop(L, 1);
}

/* Reads the triangle list at tt, nested ({ {1, 2, 3}, ... }) or flat ({1, 2, 3, ...}),
 * into a new scratch array of 3 * *count 0-based indices. */
static int *read_triangles(lua_State *L, int tt, int vertex_count, int *count, const char *owner) {
  size_t len = lua_rawlen(L, tt);
  int nested, n, i, j, *tri;
  lua_rawgeti(L, tt, 1);
  nested = lua_istable(L, -1);
  if (len == 0 || (!nested && lua_type(L, -1) != LUA_TNUMBER)) {
    if (len == 0) luaL_error(L, "%s: bad field 'triangles' (at least 1 triangle expected, got 0)", owner);
    luaL_error(L, "%s: bad field 'triangles' ({i, j, k} or vertex index expected at index 1, got %s)", owner,
               ikl_typename(L, -1));
  }
  lua_pop(L, 1);
  if (!nested && len % 3 != 0)
    luaL_error(L, "%s: bad field 'triangles' (a multiple of 3 vertex indices expected, got %s)", owner,
               ikl_pushnumstr(L, (lua_Number)len));
  if ((nested ? len : len / 3) > (size_t)IK_GROUND_MESH_MAX_TRIANGLES)
    luaL_error(L, "%s: bad field 'triangles' (too many triangles)", owner);
  n = (int)(nested ? len : len / 3);
  tri = (int *)ikl_newuserdata0(L, 3 * (size_t)n * sizeof *tri);
  for (i = 0; i < n; i++) {
    if (nested) {
      lua_rawgeti(L, tt, i + 1);
      if (!lua_istable(L, -1))
        luaL_error(L, "%s: bad field 'triangles' ({i, j, k} expected at index %d, got %s)", owner, i + 1,
                   ikl_typename(L, -1));
      if (lua_rawlen(L, -1) != 3)
        luaL_error(L, "%s: bad field 'triangles' (3 vertex indices expected in triangle %d, got %s)", owner,
                   i + 1, ikl_pushnumstr(L, (lua_Number)lua_rawlen(L, -1)));
      for (j = 0; j < 3; j++) {
        lua_rawgeti(L, -1, j + 1);
        read_index(L, &tri[3 * i + j], vertex_count, i + 1, owner);
      }
      lua_pop(L, 1);
    } else {
      for (j = 0; j < 3; j++) {
        lua_rawgeti(L, tt, 3 * i + j + 1);
        read_index(L, &tri[3 * i + j], vertex_count, i + 1, owner);
      }
    }
  }
  *count = n;
  return tri;
}

/***
 * A triangle mesh: any triangles, two-sided (winding does not matter), with a bounding
 * volume hierarchy built once here, so a ray costs about log(triangles). Triangles
 * with no area are kept but never hit.
 * @function ik.ground.mesh
 * @tparam table spec `vertices` (list of at least 3 vec3) and `triangles` (1-based
 * vertex indices: a list of {i, j, k}, or a flat list of 3 per triangle), both required
 * @treturn ik.ground
 * @usage -- two steps: a tread at y = 0 for x in [0, 1], one at y = 0.2 for x in [1, 2]
 * local g = ik.ground.mesh{
 *   vertices = { {0, 0, -1}, {1, 0, -1}, {1, 0, 1}, {0, 0, 1},
 *                {1, 0.2, -1}, {2, 0.2, -1}, {2, 0.2, 1}, {1, 0.2, 1} },
 *   triangles = { {1, 2, 3}, {1, 3, 4}, {5, 6, 7}, {5, 7, 8} } }
 * local hit, point = g:raycast({1.5, 1, 0}, {0, -1, 0}, 2)
 * assert(hit and math.abs(point.y - 0.2) < 1e-6)
 * local flat = ik.ground.mesh{ vertices = { {0, 0, 0}, {1, 0, 0}, {0, 0, 1} },
 *                              triangles = { 1, 2, 3 } }
 * assert(flat:raycast({0.2, 1, 0.2}, {0, -1, 0}, 2))
 */
static int ground_mesh(lua_State *L) {
  static const char *const names[] = {"vertices", "triangles", NULL};
  const char *owner = "ik.ground.mesh";
  ik_ground *g = NULL;
  ik_error err;
  ikl_ground *gd;
  const ik_vec3 *vertices;
  const int *triangles;
  size_t len, size;
  int vt, tt, vertex_count, triangle_count;
  spec_table(L, 0);
  ikl_check_keys(L, 1, owner, names, "vertices, triangles");
  vt = need_table(L, 1, owner, "vertices", "table");
  len = lua_rawlen(L, vt);
  if (len < 3)
    return luaL_error(L, "%s: bad field 'vertices' (at least 3 vertices expected, got %d)", owner, (int)len);
  if (len > (size_t)INT_MAX / 2) return luaL_error(L, "%s: bad field 'vertices' (too many vertices)", owner);
  vertex_count = (int)len;
  vertices = read_vertices(L, vt, vertex_count, owner);
  tt = need_table(L, 1, owner, "triangles", "table");
  triangles = read_triangles(L, tt, vertex_count, &triangle_count, owner);
  size = ik_ground_mesh_size(vertex_count, triangle_count);
  if (size == 0) return luaL_error(L, "%s: too large (%d triangles)", owner, triangle_count);
  gd = new_ground(L, IK_GROUND_MESH, size);
  if (ik_ground_mesh_init(block_of(gd), size, vertices, vertex_count, triangles, triangle_count, &g, &err) !=
      IK_OK)
    return init_error(L, owner, &err);
  gd->triangles = triangle_count;
  finish(L, gd, g);
  return 1;
}

/* ---- custom grounds ---- */

static const char *const custom_field = "raycast"; /* the function, in the uservalue */

/* Raises "bad result #n from the raycast function (what)". */
static int bad_result(lua_State *L, int n, const char *what) {
  return luaL_error(L, "ik.ground.custom: bad result #%d from the raycast function (%s)", n, what);
}

/* Called in protected mode by custom_raycast with (call, function): calls the Lua
 * function and checks what it answers. Any error here becomes the query's error. */
static int call_function(lua_State *L) {
  ground_call *c = (ground_call *)lua_touserdata(L, 1);
  ik_vec3 point, normal;
  ik_real distance;
  lua_settop(L, 2);
  ikl_pushvec3(L, c->origin);
  ikl_pushvec3(L, c->direction);
  lua_pushnumber(L, (lua_Number)c->max_distance);
  lua_call(L, 3, 3); /* 2..4: hit, point, normal */
  if (!lua_toboolean(L, 2)) {
    c->result = 0;
    return 0;
  }
  if (!ikl_tovec3(L, 3, &point))
    return bad_result(L, 2, lua_pushfstring(L, "vec3 expected, got %s", ikl_typename(L, 3)));
  if (!ikl_vec3_usable(point))
    return bad_result(L, 2, "finite vec3 expected, got NaN, inf or a huge component");
  /* The point is taken as its distance along the ray: ikrig puts it back on the ray. A
   * point outside the ray is a miss, whatever the normal (as the C layer has it). */
  distance = ik_vec3_dot(ik_vec3_sub(point, c->origin), c->direction);
  if (!(distance >= 0 && distance <= c->max_distance)) {
    c->result = 0;
    return 0;
  }
  if (!ikl_tovec3(L, 4, &normal))
    return bad_result(L, 3, lua_pushfstring(L, "vec3 expected, got %s", ikl_typename(L, 4)));
  if (!ikl_vec3_usable(normal))
    return bad_result(L, 3, "finite vec3 expected, got NaN, inf or a huge component");
  if (!(ik_vec3_len2(normal) > IK_TINY_LEN2))
    return bad_result(L, 3, "non-zero vec3 expected, got a zero vector");
  c->hit->distance = distance;
  c->hit->normal = normal;
  c->result = 1;
  return 0;
}

/* The C callback of every custom ground: user is its header. Only ever called from
 * inside ikl_ground_run, which set up gd->call; never raises. */
static int custom_raycast(void *user, ik_vec3 origin, ik_vec3 dir_unit, ik_real max_dist, ik_ray_hit *hit) {
  ground_call *c = ((ikl_ground *)user)->call;
  lua_State *L;
  if (c == NULL || c->failed) return -1;
  L = c->L;
  c->origin = origin;
  c->direction = dir_unit;
  c->max_distance = max_dist;
  c->hit = hit;
  c->result = 0;
  lua_pushvalue(L, c->call_slot);
  lua_pushlightuserdata(L, c);
  lua_pushvalue(L, c->fn_slot);
  if (lua_pcall(L, 2, 0, 0) != 0) {
    lua_replace(L, c->err_slot);
    c->failed = 1;
    return -1;
  }
  return c->result;
}

ik_status ikl_ground_run(lua_State *L, int gidx, ikl_ground_query query, void *ud) {
  ikl_ground *gd = check_open(L, gidx);
  ground_call call, *outer;
  ik_status st;
  int top;
  if (gd->kind != IK_GROUND_CUSTOM) return query(gd->g, ud);
  gidx = lua_absindex(L, gidx);
  luaL_checkstack(L, 8, "ik.ground");
  top = lua_gettop(L);
  memset(&call, 0, sizeof call);
  call.L = L;
  lua_pushnil(L);
  call.err_slot = top + 1;
  lua_pushcfunction(L, call_function);
  call.call_slot = top + 2;
  ikl_getuservalue(L, gidx);
  lua_getfield(L, -1, custom_field);
  lua_replace(L, -2);
  call.fn_slot = top + 3;
  /* A query from inside the function (the same ground, maybe another coroutine) nests:
   * the outer one's call is put back after. */
  outer = gd->call;
  gd->call = &call;
  st = query(gd->g, ud);
  gd->call = outer;
  if (call.failed) {
    lua_pushvalue(L, call.err_slot);
    lua_error(L);
  }
  lua_settop(L, top);
  return st;
}

/***
 * A ground answered by a Lua function: your physics engine's ray cast, say. The
 * function is called as `fn(origin, direction, max_distance)` with ik.vec3s (direction
 * of unit length) and a number, and returns `hit, point, normal`: a false or nil hit
 * for no ground, else the point where the ray meets it and the surface normal there
 * (any non-zero length, either side). The point is taken as its distance along the
 * ray (a hit outside `[0, max_distance]` counts as none, whatever normal comes with
 * it), and the normal is made unit and turned to face the ray.
 *
 * The function is called only from within `raycast`, `ik.foot`'s `update` and
 * `deficit`, on the calling coroutine. An error it raises comes out of that call as it
 * is, and the call then changes nothing (a foot's smoothing state stays as it was).
 * @function ik.ground.custom
 * @tparam function fn the ray cast
 * @treturn ik.ground
 * @usage -- a floor at y = 0, answered by hand
 * local g = ik.ground.custom(function(origin, direction, max_distance)
 *   if direction.y >= 0 then return false end
 *   local t = -origin.y / direction.y
 *   if t < 0 or t > max_distance then return false end
 *   return true, origin + direction * t, {0, 1, 0}
 * end)
 * local hit, point = g:raycast({1, 2, 3}, {0, -1, 0}, 5)
 * assert(hit and point == ik.vec3(1, 0, 3))
 */
static int ground_custom(lua_State *L) {
  ik_ground *g = NULL;
  ikl_ground *gd;
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  gd = new_ground(L, IK_GROUND_CUSTOM, ik_ground_custom_size()); /* 2 */
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, custom_field);
  ikl_setuservalue(L, 2);
  if (ik_ground_custom_init(block_of(gd), ik_ground_custom_size(), custom_raycast, gd, &g, NULL) != IK_OK)
    return luaL_error(L, "ik.ground.custom: cannot make the ground");
  finish(L, gd, g);
  return 1;
}

/* ---- methods ---- */

typedef struct raycast_job {
  ik_vec3 origin, direction;
  ik_real max_distance;
  ik_ray_hit hit;
} raycast_job;

static ik_status run_raycast(const ik_ground *g, void *ud) {
  raycast_job *job = (raycast_job *)ud;
  return ik_ground_raycast(g, job->origin, job->direction, job->max_distance, &job->hit);
}

/***
 * The nearest point where a ray meets the ground: origin + t * unit(direction) for t
 * in `[0, max_distance]` (a hit exactly at either end counts).
 * @function raycast
 * @tparam vec3 origin where the ray starts
 * @tparam vec3 direction any non-zero length
 * @tparam number max_distance >= 0, how far the ray reaches
 * @tparam[opt] ik.vec3 point_out written with the point hit and returned instead of a
 * new vector (left alone on a miss)
 * @tparam[opt] ik.vec3 normal_out the same for the normal
 * @treturn boolean whether it hit
 * @treturn ?ik.vec3 the point hit (nil on a miss)
 * @treturn ?ik.vec3 the unit surface normal there, facing against the ray (nil on a miss)
 * @treturn ?number the distance from origin to the point (nil on a miss)
 * @usage local g = ik.ground.plane{ point = {0, 1, 0} }
 * local hit, point, normal, distance = g:raycast({2, 5, 0}, {0, -2, 0}, 10)
 * assert(hit and point == ik.vec3(2, 1, 0) and normal == ik.vec3(0, 1, 0) and distance == 4)
 * assert(g:raycast({2, 5, 0}, {0, -1, 0}, 3) == false)  -- too short
 */
static int ground_raycast(lua_State *L) {
  raycast_job job;
  ik_status st;
  lua_Number max;
  check_open(L, 1);
  job.origin = ikl_checkvec3(L, 2);
  job.direction = ikl_checkvec3(L, 3);
  if (!(ik_vec3_len2(job.direction) > IK_TINY_LEN2)) luaL_argerror(L, 3, "non-zero vec3 expected");
  job.max_distance = ikl_checkreal(L, 4);
  max = lua_tonumber(L, 4);
  if (!(max >= 0))
    luaL_argerror(L, 4, lua_pushfstring(L, "non-negative number expected, got %s", ikl_describe(L, 4)));
  if (!lua_isnoneornil(L, 5) && !luaL_testudata(L, 5, IKL_VEC3)) ikl_typeerror(L, 5, "ik.vec3");
  if (!lua_isnoneornil(L, 6) && !luaL_testudata(L, 6, IKL_VEC3)) ikl_typeerror(L, 6, "ik.vec3");
  memset(&job.hit, 0, sizeof job.hit);
  lua_settop(L, 6); /* the outs stay at 5 and 6 (a custom ground's call goes above them) */
  st = ikl_ground_run(L, 1, run_raycast, &job);
  if (st != IK_OK) return luaL_error(L, "ik.ground: raycast failed (%s)", ik_status_message(st));
  if (!job.hit.hit) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, 1);
  *ikl_outvec3(L, 5) = job.hit.point;
  *ikl_outvec3(L, 6) = job.hit.normal;
  lua_pushnumber(L, (lua_Number)job.hit.distance);
  return 4;
}

/***
 * Closes the ground: later use raises, here and in the feet standing on it. A custom
 * ground lets go of its function.
 * @function close
 */
static int ground_close(lua_State *L) {
  ikl_ground *gd = check(L, 1);
  if (gd->view) return luaL_error(L, IKL_HOST_OBJECT);
  if (!gd->closed && gd->kind == IK_GROUND_CUSTOM) {
    ikl_getuservalue(L, 1);
    if (lua_istable(L, -1)) {
      lua_pushnil(L);
      lua_setfield(L, -2, custom_field);
    }
  }
  gd->closed = 1;
  return 0;
}

static int ground_gc(lua_State *L) {
  check(L, 1)->closed = 1;
  return 0;
}

static int ground_index(lua_State *L) {
  ikl_ground *gd = check_open(L, 1);
  const char *key = lua_tostring(L, 2);
  if (key && strcmp(key, "kind") == 0) {
    lua_pushstring(L, kind_names[gd->kind]);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int ground_tostring(lua_State *L) {
  ikl_ground *gd = check(L, 1);
  if (*gd->closed_at)
    lua_pushliteral(L, "ik.ground (closed)");
  else if (gd->kind == IK_GROUND_HEIGHTFIELD)
    lua_pushfstring(L, "ik.ground(heightfield, %d columns x %d rows)", gd->columns, gd->rows);
  else if (gd->kind == IK_GROUND_MESH)
    lua_pushfstring(L, "ik.ground(mesh, %d triangles)", gd->triangles);
  else
    lua_pushfstring(L, "ik.ground(%s)", kind_names[gd->kind]);
  return 1;
}

int ikl_ground_view(lua_State *from, int idx, lua_State *to) {
  ikl_ground *h = (ikl_ground *)luaL_testudata(from, idx, IKL_GROUND), *gd;
  if (!h) return 0;
  if (h->kind == IK_GROUND_CUSTOM) return -1; /* its function lives in the other state */
  gd = (ikl_ground *)ikl_newuserdata(to, sizeof *gd);
  *gd = *h;
  gd->call = NULL;
  gd->view = 1;
  gd->closed = 0;
  gd->closed_at = h->closed_at;
  luaL_setmetatable(to, IKL_GROUND);
  return 1;
}

static const luaL_Reg meth[] = {{"raycast", ground_raycast}, {"close", ground_close}, {NULL, NULL}};

static const luaL_Reg metameth[] = {{"__index", ground_index},
                                    {"__tostring", ground_tostring},
                                    {"__gc", ground_gc},
                                    {"__close", ground_close},
                                    {NULL, NULL}};

static const luaL_Reg makers[] = {{"plane", ground_plane},
                                  {"heightfield", ground_heightfield},
                                  {"mesh", ground_mesh},
                                  {"custom", ground_custom},
                                  {NULL, NULL}};

void ikl_open_ground(lua_State *L) {
  ikl_createmeta(L, IKL_GROUND, meth, metameth);
  lua_pop(L, 1);
  luaL_newlib(L, makers);
  lua_setfield(L, -2, "ground");
}
