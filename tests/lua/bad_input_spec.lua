-- The bad-input matrix: every public function and method of `ik`, and every field a spec
-- table or an assignment takes, called with each kind of bad value. Each case expects
-- the exact message (location prefix included), then checks that the refused call
-- changed nothing (the object's state, and any ik.vec3 or ik.quat passed along) and that
-- the object still works: the known-good call succeeds and leaves it as it leaves a
-- fresh one.
--
-- The cases come from the one table ROWS below (the kinds of value and their messages
-- are in bad_input_matrix.lua). A completeness check walks the module table and every
-- ik metatable at run time and fails, naming them, on public functions that have no
-- row: a new function cannot be forgotten.
local ik = require("ik")
local h = require("spec_helper")
local M = require("bad_input_matrix")

local K, F, fresh = M.kinds, M.fields, M.fresh
local PREFIX = M.PREFIX
local PI = math.pi

-- ---- fixtures: objects to call methods on, and what their state is ----

local xyz, xyzw = h.xyz, h.xyzw

local function arm_skeleton()
  return ik.skeleton{
    { name = "a", position = { 0, 1, 0 } },
    { name = "b", parent = "a", position = { 1, 0, 0 } },
    { name = "c", parent = "b", position = { 1, 0, 0.1 } },
    { name = "d", parent = "c", position = { 1, 0, 0 } },
  }
end

local function skeleton_state(sk)
  local s = {}
  for i, b in ipairs(sk:bones()) do
    s[i] = { xyz(b:get_local_position()), xyzw(b:get_local_rotation()) }
  end
  return s
end

local function chain_state(c)
  local s = { #c, c.solver, c.iterations, c.tolerance, c.weight, tostring(c.pole), tostring(c.target), c.mode,
              c.deterministic, c.base_direction and xyz(c.base_direction) or false }
  for i = 1, #c do s[#s + 1] = xyz(c:joint(i)) end
  for i = 1, #c - 1 do s[#s + 1] = tostring(c:constraint(i)) end
  return s
end

local TREE_POSITIONS = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0.5, 2.5, 0 }, { 1, 3, 0 },
                         { -0.5, 2.5, 0 }, { -1, 3, 0 } }
local TREE_PARENTS = { 0, 1, 2, 3, 4, 3, 6 }
local function tree_spec() return { positions = TREE_POSITIONS, parents = TREE_PARENTS } end
local function tree_state(t)
  local s = { #t, t.iterations, t.tolerance, t.deterministic }
  for j = 1, #t do s[#s + 1] = xyz(t:joint(j)) end
  for j = 2, #t do s[#s + 1] = tostring(t:constraint(j)) end
  for e = 1, t.effectors do s[#s + 1], s[#s + 2] = xyz(t:target(e)), t:weight(e) end
  return s
end

local skeleton_of = setmetatable({}, { __mode = "k" })
local crowd_of = setmetatable({}, { __mode = "k" }) -- a buffer's crowd, to close it
local function crowd_template_spec()
  return { skeleton = arm_skeleton(), chains = { { bones = { "b", "c", "d" } } } }
end
local plane = ik.ground.plane()

local FIX = {
  vec3 = { make = function() return ik.vec3(1, 2, 3) end, state = xyz },
  quat = { make = function() return ik.quat.axis_angle({ 0, 1, 0 }, 0.5) end, state = xyzw },
  pole = {
    make = function() return ik.pole{ position = { 0, 1, 2 }, weight = 0.5 } end,
    state = function(p) return { xyz(p.position), p.weight } end,
  },
  tree = {
    make = function()
      local t = ik.tree(tree_spec())
      t:set_constraint(4, ik.cone{ angle = 1 })
      return t
    end,
    state = tree_state,
  },
  point_chain = {
    make = function()
      local c = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } } }
      c:set_constraint(2, ik.cone{ angle = 1 })
      return c
    end,
    state = chain_state,
  },
  bone_chain = {
    make = function()
      local sk = arm_skeleton()
      local c = ik.chain{ bones = sk:bones() }
      skeleton_of[c] = sk
      return c
    end,
    state = function(c) return { chain_state(c), skeleton_state(skeleton_of[c]) } end,
  },
  skeleton = { make = arm_skeleton, state = skeleton_state },
  bone = {
    make = function()
      local sk = arm_skeleton()
      local b = sk:bone("b")
      skeleton_of[b] = sk
      return b
    end,
    state = function(b) return skeleton_state(skeleton_of[b]) end,
    close = function(b) skeleton_of[b]:close() end,
    closed = "attempt to use a bone of a closed ik.skeleton",
  },
  node = {
    make = function() return ik.node{ position = { 1, 2, 3 }, rotation = ik.quat.axis_angle({ 0, 0, 1 },
        0.3) } end,
    state = function(n)
      return { xyz(n:get_local_position()), xyzw(n:get_local_rotation()), tostring(n.parent) }
    end,
  },
  ground = {
    make = function() return ik.ground.plane{ point = { 0, 1, 0 } } end,
    state = function(g) return { g.kind, g:raycast({ 0, 3, 0 }, { 0, -1, 0 }, 10) } end,
  },
  foot = {
    make = function()
      local f = ik.foot{ ground = plane, smooth_time = 0.1 }
      f:update({ 0, 0.05, 0 }, ik.quat(), 1 / 60)
      f:update({ 0.1, -0.2, 0 }, ik.quat(), 1 / 60) -- half-way: the smoothing has state
      return f
    end,
    state = function(f)
      local p, q, grounded = f:update({ 0.1, -0.2, 0 }, ik.quat(), 0) -- dt = 0 changes nothing
      return { xyz(p), xyzw(q), grounded, f.ray_height, f.ray_length, f.foot_offset, f.smooth_time, xyz(f.up),
               tostring(f.ground) }
    end,
  },
  pelvis = {
    make = function()
      local p = ik.pelvis{ smooth_time = 0.1 }
      p:update(1 / 60, -0.2)
      p:update(1 / 60, 0)
      return p
    end,
    state = function(p) return { p.offset, p.smooth_time } end,
  },
  crowd_template = {
    make = function() return ik.crowd_template(crowd_template_spec()) end,
    state = function(t) return { t.bones, t.chains, t.targets, t:bone_names() } end,
  },
  crowd = {
    make = function() return ik.crowd{ template = ik.crowd_template(crowd_template_spec()), count = 2,
                                       capacity = 3 } end,
    state = function(c) return { #c, c.capacity, c:buffer("positions"):get(), c:buffer("roots"):get() } end,
  },
  crowd_buffer = {
    make = function()
      local c = ik.crowd{ template = ik.crowd_template(crowd_template_spec()), count = 2 }
      local b = c:buffer("roots")
      crowd_of[b] = c
      return b
    end,
    state = function(b) return { b:get() } end,
    close = function(b) crowd_of[b]:close() end,
    closed = "attempt to use a buffer of a closed ik.crowd",
  },
  batch = {
    make = function()
      local chains = {}
      for i = 1, 2 do
        chains[i] = ik.chain{ positions = { { i, 0, 0 }, { i, 1, 0 }, { i, 2, 0 } }, target = { i + 1, 1,
            0 } }
      end
      local b = ik.batch{ chains = chains }
      b:solve()
      return b
    end,
    state = function(b)
      local s = { #b, b.threads }
      for i, c in ipairs(b:chains()) do s[#s + 1] = { chain_state(c), { b:result(i) } } end
      return s
    end,
  },
  sandbox = {
    make = function()
      local sb = ik.sandbox{ dir = ".", ik_path = "lua/?.lua;lua/?/init.lua", scene = {} }
      sb:load("state.n = 0 function update() state.n = state.n + 1 end", "=good")
      return sb
    end,
    state = function(sb) return { sb:state() } end,
  },
  watch = {
    make = function()
      local w = ik.watch{ backend = "poll" }
      w:add("no_such_dir/a.lua")
      return w
    end,
    state = function(w) return { w.backend, w:paths() } end,
  },
}
for name, fx in pairs(FIX) do
  fx.type = fx.type or (name:match("chain") and "ik.chain" or "ik." .. name)
  if not fx.close and name ~= "vec3" and name ~= "quat" and name ~= "bone" and name ~= "crowd_template" then
    fx.close = function(o) o:close() end
    fx.closed = "attempt to use a closed " .. fx.type
  end
end

-- ---- the table: every public function and method, and every field ----
--
-- A row is { name, ... }:
--   "ik.a.b" (a function of the module) or "type:method" (self: the fixture it is called
--   on), with `args` (one kind per argument, from bad_input_matrix: opt(k) for one that
--   may be left out) and `good` (a call that works; fresh(f) for an argument made anew
--   for each case; a function of the object for one made from it). Generated: each bad
--   value of each argument's kind with the others good, nil and (for the last) a
--   missing argument, no arguments at all, a wrong or missing self, a closed self.
--   `no_missing`, `no_empty`: leaving out the last argument, or all, is no error.
--   `only_extra`: just the `extra` cases, each { label, args, n, text in parentheses }
--   or { label, args, message = whole message } (`with`: the args, made from the
--   object; `code`: another way to call it);
--   operators: `code` (o + (...)), `op` (the metamethod) and `operand` (the number the
--   message gives the first argument);
--   "type.field" with `field` (a field kind) and `good` (a value): assignments;
--   "ik.x{field}" with `spec` (a good spec, made by a function) and `field`: the
--   constructor given that spec with the field bad.
-- MORE and FIELD_ROWS below are appended to ROWS.

local function opt(kind) return { kind = kind, optional = true } end
local OPTNUM = opt(K.number)
local OUTV, OUTQ = opt(K.out("ik.vec3")), opt(K.out("ik.quat"))
local NEW_V = fresh(function() return ik.vec3() end)
local NEW_Q = fresh(function() return ik.quat() end)

local POSITIONS = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } }
local function chain_spec() return { positions = POSITIONS } end
local function foot_spec() return { ground = plane } end
local function hinge_spec() return { axis = { 1, 0, 0 } } end
local function heightfield_spec()
  return { cell_size = 1, columns = 2, rows = 2, heights = { 0, 0, 0, 0 } }
end
local function mesh_spec()
  return { vertices = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }, triangles = { { 1, 2, 3 } } }
end
local function none() return {} end

-- A target: a transform or a vec3-like. A table that is neither is said to lack the
-- transform's first method.
local function target_bad(wrap)
  local list = {}
  for _, b in ipairs(K.vec3.bad) do
    local text = b[3]:gsub("^vec3 expected", "transform or vec3 expected"):gsub("got table$",
        "got table without get_position")
    list[#list + 1] = { b[1], b[2], wrap(text) }
  end
  list[#list + 1] = { "a table without get_rotation", { get_position = function() return ik.vec3() end },
                      wrap("transform or vec3 expected, got table without get_rotation") }
  return list
end
K.target = { expected = "transform or vec3", optional = true, bad = target_bad(function(t) return t end) }
local TARGET_FIELD = target_bad(function(t) return "(" .. t .. ")" end)

local TWO_PI_LIST = "number in [-pi, pi]"

local ROWS = {
  -- ik.vec3 and its methods
  { "ik.vec3", args = { OPTNUM, OPTNUM, OPTNUM }, good = { 1, 2, 3 } },
  { "ik.vec3", args = { K.vec3 }, good = { { 1, 2, 3 } }, no_missing = true, what = "one vec3-like" },
  { "vec3:length", self = "vec3", args = {}, good = {} },
  { "vec3:normalized", self = "vec3", args = { OUTV }, good = { NEW_V } },
  { "vec3:dot", self = "vec3", args = { K.vec3 }, good = { { 1, 0, 0 } } },
  { "vec3:cross", self = "vec3", args = { K.vec3, OUTV }, good = { { 1, 0, 0 }, NEW_V } },
  { "vec3:lerp", self = "vec3", args = { K.vec3, K.number, OUTV }, good = { { 1, 0, 0 }, 0.5, NEW_V } },
  { "vec3:distance", self = "vec3", args = { K.vec3 }, good = { { 1, 0, 0 } } },
  { "vec3:unpack", self = "vec3", args = {}, good = {} },
  { "vec3:set", self = "vec3", args = { OPTNUM, OPTNUM, OPTNUM }, good = { 4, 5, 6 } },
  { "vec3:set", self = "vec3", args = { K.vec3 }, good = { { 4, 5, 6 } }, no_missing = true,
    what = "one vec3-like" },
  { "vec3:add", self = "vec3", args = { K.vec3, OUTV }, good = { { 1, 0, 0 }, NEW_V } },
  { "vec3:sub", self = "vec3", args = { K.vec3, OUTV }, good = { { 1, 0, 0 }, NEW_V } },
  { "vec3:scale", self = "vec3", args = { K.number, OUTV }, good = { 2, NEW_V } },

  -- ik.quat and its methods
  { "ik.quat", args = { K.number, K.number, K.number, K.number }, good = { 0, 0, 0, 1 }, no_empty = true },
  { "ik.quat", args = { K.quat }, good = { { 0, 0, 0, 1 } }, no_missing = true, what = "one quat-like" },
  { "ik.quat.identity", args = {}, good = {} },
  { "ik.quat.axis_angle", args = { K.vec3, K.number, OUTQ }, good = { { 0, 1, 0 }, 1, NEW_Q } },
  { "ik.quat.from_to", args = { K.vec3, K.vec3, OUTQ }, good = { { 0, 1, 0 }, { 1, 0, 0 }, NEW_Q } },
  { "ik.quat.look_rotation", args = { K.vec3, opt(K.vec3), OUTQ }, good = { { 0, 0, 1 }, { 0, 1, 0 },
      NEW_Q } },
  { "ik.quat.euler", args = { K.number, K.number, K.number, OUTQ }, good = { 0.1, 0.2, 0.3, NEW_Q } },
  { "quat:inverse", self = "quat", args = { OUTQ }, good = { NEW_Q } },
  { "quat:normalized", self = "quat", args = { OUTQ }, good = { NEW_Q } },
  { "quat:slerp", self = "quat", args = { K.quat, K.number, OUTQ }, good = { { 0, 0, 0, 1 }, 0.5, NEW_Q } },
  { "quat:angle_to", self = "quat", args = { K.quat }, good = { { 0, 0, 0, 1 } } },
  { "quat:unpack", self = "quat", args = {}, good = {} },
  { "quat:set", self = "quat", args = { K.number, K.number, K.number, K.number }, good = { 0, 0, 0, 1 },
    no_empty = true },
  { "quat:set", self = "quat", args = { K.quat }, good = { { 0, 0, 0, 1 } }, no_missing = true,
    what = "one quat-like" },
  { "quat:mul", self = "quat", args = { K.quat, OUTQ }, good = { { 0, 0, 0, 1 }, NEW_Q } },
  { "quat:rotate", self = "quat", args = { K.vec3, OUTV }, good = { { 1, 0, 0 }, NEW_V } },

  -- poles and constraints
  { "ik.pole", args = { K.spec }, good = { { position = { 0, 1, 0 } } } },
  { "ik.pole{position}", spec = function() return { position = { 0, 1, 0 } } end,
      field = F.vec3{ expected = "vec3", required = true } },
  { "ik.pole{weight}", spec = function() return { position = { 0, 1, 0 } } end,
    field = F.number{ expected = "number in [0, 1]", lo = 0, hi = 1 } },
  { "pole.position", self = "pole", field = F.vec3{ expected = "vec3", required = true }, good = { 1, 1,
      1 } },
  { "pole.weight", self = "pole", field = F.number{ expected = "number in [0, 1]", lo = 0, hi = 1,
      required = true },
    good = 0.25 },
  { "pole:close", self = "pole", args = {}, good = {} },
  { "ik.cone", args = { K.spec }, good = { { angle = 1 } } },
  { "ik.cone{angle}", spec = function() return { angle = 1 } end,
    field = F.number{ expected = "number in [0, pi]", lo = 0, hi = PI, required = true } },
  { "ik.hinge", args = { K.spec }, good = { { axis = { 0, 0, 1 } } } },
  { "ik.hinge{axis}", spec = hinge_spec,
    field = F.vec3{ expected = "vec3", required = true,
                    nonzero = "non-zero vec3 expected, got the zero vector" } },
  { "ik.hinge{min}", spec = hinge_spec, field = F.number{ expected = TWO_PI_LIST, lo = -PI, hi = PI } },
  { "ik.hinge{max}", spec = hinge_spec, field = F.number{ expected = TWO_PI_LIST, lo = -PI, hi = PI } },

  -- chains
  { "ik.chain", args = { K.spec }, good = { chain_spec() } },
  { "chain:solve", self = "point_chain", args = { K.vec3 }, good = { { 1.5, 1.5, 0 } } },
  { "chain:joint", self = "point_chain", args = { K.index(4) }, good = { 2 } },
  { "chain:joint_xyz", self = "point_chain", args = { K.index(4) }, good = { 4 } },
  { "chain:positions", self = "point_chain", args = {}, good = {} },
  { "chain:set_positions", self = "point_chain", args = { K.spec }, good = { { { 0, 0, 0 }, { 0, 1, 0 },
      { 0, 2, 0 },
                                                                                { 0, 3, 0 } } } },
  { "chain:length", self = "point_chain", args = {}, good = {} },
  { "chain:bones", self = "bone_chain", args = {}, good = {} },
  { "chain:set_constraint", self = "point_chain", args = { K.index(3), K.constraint },
    good = { 1, fresh(function() return ik.cone{ angle = 0.5 } end) } },
  { "chain:constraint", self = "point_chain", args = { K.index(3) }, good = { 2 } },
  { "chain:constraint_shapes", self = "point_chain", args = {}, good = {} },
  { "chain:close", self = "point_chain", args = {}, good = {} },

  -- trees
  { "ik.tree", args = { K.spec }, good = { tree_spec() } },
  { "tree:set_target", self = "tree", args = { K.index(2), K.vec3 }, good = { 1, { 1, 2, 0 } } },
  { "tree:target", self = "tree", args = { K.index(2), OUTV }, good = { 2, NEW_V } },
  { "tree:set_weight", self = "tree", args = { K.index(2), K.number }, good = { 1, 0.5 } },
  { "tree:weight", self = "tree", args = { K.index(2) }, good = { 2 } },
  { "tree:solve", self = "tree", args = { opt(K.vec3), opt(K.vec3) },
    good = { { 1, 2.5, 0 }, { -1, 2.5, 0 } } },
  { "tree:result", self = "tree", args = { K.index(2) }, good = { 1 } },
  { "tree:effector_joint", self = "tree", args = { K.index(2) }, good = { 1 } },
  { "tree:joint", self = "tree", args = { K.index(7), OUTV }, good = { 3, NEW_V } },
  { "tree:positions", self = "tree", args = {}, good = {} },
  { "tree:lengths", self = "tree", args = {}, good = {} },
  { "tree:set_constraint", self = "tree", args = { K.index(7), K.constraint },
    good = { 5, fresh(function() return ik.cone{ angle = 0.5 } end) } },
  { "tree:constraint", self = "tree", args = { K.index(7) }, good = { 4 } },
  { "tree:pole", self = "tree", args = { K.index(7) }, good = { 5 } },
  { "tree:set_pole", self = "tree", args = { K.index(7) }, good = { 5, { 1, 2, 3 } }, extra = {
      { "a joint inside a branch", { 4, { 1, 2, 3 } }, 1,
        "joint 4 ends no branch (a branch ends at an effector or a joint with several children)" },
      { "a boolean pole", { 5, true }, 2, "ik.pole, vec3 or nil expected, got boolean" },
      { "a pole of NaN", { 5, { 0 / 0, 0, 0 } }, 2,
        "finite vec3 expected, got NaN, inf or a huge component" },
  } },
  { "tree:set_branch_iterations", self = "tree", args = { K.index(7), K.number }, good = { 5, 2 } },
  { "tree:close", self = "tree", args = {}, good = {} },

  -- skeletons, bones and nodes
  { "ik.skeleton", args = { K.spec }, good = { { { name = "root" } } } },
  { "skeleton:bone", self = "skeleton", args = { K.bone_ref(4) }, good = { "c" } },
  { "skeleton:bones", self = "skeleton", args = {}, good = {} },
  { "skeleton:reset", self = "skeleton", args = {}, good = {} },
  { "skeleton:close", self = "skeleton", args = {}, good = {} },
  { "bone:get_position", self = "bone", args = { OUTV }, good = { NEW_V } },
  { "bone:get_rotation", self = "bone", args = { OUTQ }, good = { NEW_Q } },
  { "bone:get_local_position", self = "bone", args = { OUTV }, good = { NEW_V } },
  { "bone:get_local_rotation", self = "bone", args = { OUTQ }, good = { NEW_Q } },
  { "bone:set_position", self = "bone", args = { K.vec3 }, good = { { 1, 1, 1 } } },
  { "bone:set_rotation", self = "bone", args = { K.rotation }, good = { { 0, 0, 1, 1 } } },
  { "bone:set_local_position", self = "bone", args = { K.vec3 }, good = { { 1, 1, 1 } } },
  { "bone:set_local_rotation", self = "bone", args = { K.rotation }, good = { { 0, 0, 1, 1 } } },
  { "ik.node", args = { K.opt_spec }, good = { { position = { 1, 2, 3 } } } },
  { "ik.node{position}", spec = none, field = F.vec3{ expected = "vec3" } },
  { "node:get_position", self = "node", args = { OUTV }, good = { NEW_V } },
  { "node:get_rotation", self = "node", args = { OUTQ }, good = { NEW_Q } },
  { "node:get_local_position", self = "node", args = { OUTV }, good = { NEW_V } },
  { "node:get_local_rotation", self = "node", args = { OUTQ }, good = { NEW_Q } },
  { "node:set_position", self = "node", args = { K.vec3 }, good = { { 1, 1, 1 } } },
  { "node:set_rotation", self = "node", args = { K.rotation }, good = { { 0, 0, 1, 1 } } },
  { "node:set_local_position", self = "node", args = { K.vec3 }, good = { { 1, 1, 1 } } },
  { "node:set_local_rotation", self = "node", args = { K.rotation }, good = { { 0, 0, 1, 1 } } },
  { "node:set_parent", self = "node", args = { K.parent },
    good = { fresh(function() return ik.node{ position = { 0, 1, 0 } } end) } },
  { "node:close", self = "node", args = {}, good = {} },

  -- grounds, feet and the pelvis
  { "ik.ground.plane", args = { K.opt_spec }, good = { { normal = { 0, 2, 0 } } } },
  { "ik.ground.plane{point}", spec = none, field = F.vec3{ expected = "vec3" } },
  { "ik.ground.plane{normal}", spec = none,
    field = F.vec3{ expected = "vec3", nonzero = "non-zero vec3 expected, got a zero vector" } },
  { "ik.ground.heightfield", args = { K.spec }, good = { heightfield_spec() } },
  { "ik.ground.heightfield{origin}", spec = heightfield_spec, field = F.vec3{ expected = "vec3" } },
  { "ik.ground.heightfield{cell_size}", spec = heightfield_spec,
    field = F.number{ expected = "positive number", lo = 0, open_lo = true, required = true } },
  { "ik.ground.heightfield{columns}", spec = heightfield_spec,
    field = F.number{ expected = "integer >= 2", lo = 2, integer = true, required = true } },
  { "ik.ground.heightfield{rows}", spec = heightfield_spec,
    field = F.number{ expected = "integer >= 2", lo = 2, integer = true, required = true } },
  { "ik.ground.mesh", args = { K.spec }, good = { mesh_spec() } },
  { "ik.ground.custom", args = { K.fn }, good = { function() return false end } },
  { "ground:raycast", self = "ground", args = { K.vec3, K.direction, K.non_negative, OUTV, OUTV },
    good = { { 0, 3, 0 }, { 0, -1, 0 }, 10, NEW_V, NEW_V } },
  { "ground:close", self = "ground", args = {}, good = {} },
  { "ik.foot", args = { K.spec }, good = { foot_spec() } },
  { "foot:update", self = "foot", args = { K.vec3, K.rotation, K.non_negative, OUTV, OUTQ },
    good = { { 0.1, -0.2, 0 }, { 0, 0, 0, 1 }, 1 / 60, NEW_V, NEW_Q } },
  { "foot:deficit", self = "foot", args = { K.vec3 }, good = { { 0, 0.1, 0 } } },
  { "foot:reset", self = "foot", args = {}, good = {} },
  { "foot:close", self = "foot", args = {}, good = {} },
  { "ik.pelvis", args = { K.opt_spec }, good = { { smooth_time = 0 } } },
  { "pelvis:update", self = "pelvis", args = { K.non_negative, K.number, K.number }, good = { 1 / 60, -0.1,
      0 },
    no_missing = true, extra = {
      { "no dt", {}, 1, "number expected, got no value" },
      { "a list with a string", { 0, { -0.1, "x" } }, 2, "number expected at index 2, got string" },
      { "a list with NaN", { 0, { 0 / 0 } }, 2, "finite number expected at index 1, got nan" },
      { "a list and a number", { 0, { -0.1 }, 0 }, 2, "number expected, got table" },
    } },
  { "pelvis:reset", self = "pelvis", args = {}, good = {} },
  { "pelvis:close", self = "pelvis", args = {}, good = {} },

  -- a rig script's own state (ik.runtime's)
  { "ik.sandbox", args = { K.spec },
    good = { { dir = ".", ik_path = "lua/?.lua", scene = {} } } },
  { "sandbox:load", self = "sandbox", args = { K.string, K.string },
    good = { "function update() end", "=x" } },
  { "sandbox:update", self = "sandbox", args = { K.non_negative }, good = { 0 } },
  { "sandbox:state", self = "sandbox", args = {}, good = {} },
  { "sandbox:reports", self = "sandbox", args = { K.fn }, good = { function() end } },
  { "sandbox:deps", self = "sandbox", args = {}, good = {} },
  { "sandbox:memory", self = "sandbox", args = {}, good = {} },
  { "sandbox:close", self = "sandbox", args = {}, good = {} },

  -- file watches
  { "ik.watch", args = { K.opt_spec }, good = { { backend = "poll" } } },
  { "watch:add", self = "watch", args = { K.path }, good = { "no_such_dir/b.lua" } },
  { "watch:remove", self = "watch", args = { K.string }, good = { "no_such_dir/a.lua" } },
  { "watch:poll", self = "watch", args = {}, good = {} },
  { "watch:paths", self = "watch", args = {}, good = {} },
  { "watch:close", self = "watch", args = {}, good = {} },

  -- import (a bad file is a return value, not an error: the good calls include one)
  { "ik.import", args = { K.path, K.opt_spec }, good = { "tests/data/characters/vrm1_tpose.vrm", {} } },
  { "ik.import_string", args = { K.string, K.opt_spec }, good = { "{}", { base_dir = "." } } },
}

-- Whole specs and lists: what no single argument kind says.
local function bad_spec(name, label, spec, message)
  return { label, { spec }, message = name .. ": " .. message }
end
local function skeleton_with(bone) return { { name = "a" }, bone } end
local CHAIN_FIELDS = "solver, iterations, tolerance, weight, pole, base_direction, target, deterministic, "
  .. "mode"
local FOOT_FIELDS = "ground, ray_height, ray_length, foot_offset, smooth_time, up"
local function closed(make) return function() local o = make(); o:close(); return o end end
local function new_chain() return ik.chain{ positions = POSITIONS, target = { 1, 1, 0 } } end
local MORE = {
  { "ik.chain", only_extra = true, args = { K.spec }, good = { chain_spec() }, what = "whole specs", extra = {
    bad_spec("ik.chain", "misspelt field", { positions = POSITIONS, tolerence = 1 },
             "no field 'tolerence' (fields: positions, " .. CHAIN_FIELDS .. ")"),
    bad_spec("ik.chain", "no pose", {}, "bad field 'positions' (at least 2 vec3 expected, got nil)"),
    bad_spec("ik.chain", "one joint", { positions = { { 0, 0, 0 } } },
             "bad field 'positions' (at least 2 vec3 expected, got 1)"),
    bad_spec("ik.chain", "positions not a list", { positions = 5 },
             "bad field 'positions' (at least 2 vec3 expected, got 5)"),
    bad_spec("ik.chain", "a joint not a vec3", { positions = { { 0, 0, 0 }, true } },
             "bad field 'positions' (vec3 expected at index 2, got boolean)"),
    bad_spec("ik.chain", "a NaN joint", { positions = { { 0, 0, 0 }, { 0 / 0, 1, 0 } } },
             "bad field 'positions' (finite vec3 expected at index 2, got NaN, inf or a huge component)"),
    bad_spec("ik.chain", "coincident joints", { positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 1, 0, 0 } } },
             "bad field 'positions' (bone 2 has zero length: joints 2 and 3 coincide)"),
    bad_spec("ik.chain", "positions and bones", { positions = POSITIONS, bones = {} },
             "bad field 'bones' (a chain is made from positions or from bones, not both)"),
    bad_spec("ik.chain", "one bone", { bones = { ik.node() } },
             "bad field 'bones' (at least 2 transforms expected, got 1)"),
    bad_spec("ik.chain", "a bone not a transform", { bones = { ik.node(), 5 } },
             "bad field 'bones' (transform expected at index 2, got number)"),
    bad_spec("ik.chain", "a bone without set_rotation",
             { bones = { ik.node(), { get_position = function() return ik.vec3() end,
                                      get_rotation = function() return ik.quat() end } } },
             "bad field 'bones' (transform expected at index 2, got table without set_rotation)"),
    bad_spec("ik.chain", "two_bone on 4 joints",
             { positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } }, solver = "two_bone" },
             "solver 'two_bone' needs exactly 3 joints (this chain has 4)"),
  } },
  { "chain:set_positions", self = "point_chain", only_extra = true, args = {},
    good = { { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 } } }, what = "lists", extra = {
      { "too short", { { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } } }, 1, "4 positions expected, got 3" },
      { "too long", { { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 }, { 4, 0, 0 } } }, 1,
        "4 positions expected, got 5" },
      { "a joint not a vec3", { { { 0, 0, 0 }, true, { 2, 0, 0 }, { 3, 0, 0 } } }, 1,
        "vec3 expected at index 2, got boolean" },
      { "a NaN joint", { { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0 / 0, 0 }, { 3, 0, 0 } } }, 1,
        "finite vec3 expected at index 3, got NaN, inf or a huge component" },
      { "coincident joints", { { { 0, 0, 0 }, { 1, 0, 0 }, { 1, 0, 0 }, { 3, 0, 0 } } }, 1,
        "bone 2 has zero length: joints 2 and 3 coincide" },
    } },
  { "chain:solve", self = "bone_chain", args = { K.target }, good = { { 2, 1, 0 } }, what = "bone chain",
      extra = {
      { "no target at all", {}, 1, "transform or vec3 expected, got no value: the chain has no target" },
      { "a closed node", {}, nil, nil, message = "attempt to use a closed ik.node", with = closed(ik.node) },
      { "a bone of a closed skeleton", {}, nil, nil,
        message = "attempt to use a bone of a closed ik.skeleton", with = function()
          local sk = arm_skeleton()
          local b = sk:bone("d")
          sk:close()
          return b
        end },
      { "a target hung from the chain's tip", {}, 1,
        "the target hangs from bone 4 of this chain: it would move with every solve",
        with = function(c) return ik.node{ parent = c:bones()[4] } end },
  } },
  { "ik.skeleton", only_extra = true, args = { K.spec }, good = { { { name = "a" } } }, what = "bone lists",
    extra = {
      bad_spec("ik.skeleton", "no bones", {}, "at least one bone expected, got none"),
      bad_spec("ik.skeleton", "a bone not a table", { true }, "bone #1: table expected, got boolean"),
      bad_spec("ik.skeleton", "a bone without a name", { {} },
          "bone #1: bad field 'name' (string expected, got nil)"),
      bad_spec("ik.skeleton", "a duplicate name", skeleton_with({ name = "a" }), "duplicate bone name 'a'"),
      bad_spec("ik.skeleton", "an unknown parent", skeleton_with({ name = "b", parent = "zz" }),
               "bone 'b' has unknown parent 'zz'"),
      bad_spec("ik.skeleton", "a parent not a name", skeleton_with({ name = "b", parent = 1 }),
               "bone 'b': bad field 'parent' (bone name expected, got number)"),
      bad_spec("ik.skeleton", "a cycle", { { name = "a", parent = "b" }, { name = "b", parent = "a" } },
               "bone 'a' is its own ancestor (a parent cycle)"),
      bad_spec("ik.skeleton", "a bad position", skeleton_with({ name = "b", position = true }),
               "bone 'b': bad field 'position' (vec3 expected, got boolean)"),
      bad_spec("ik.skeleton", "a NaN position", skeleton_with({ name = "b", position = { 0 / 0, 0, 0 } }),
               "bone 'b': bad field 'position' (finite vec3 expected, got NaN, inf or a huge component)"),
      bad_spec("ik.skeleton", "a zero rotation", skeleton_with({ name = "b", rotation = { 0, 0, 0, 0 } }),
               "bone 'b': bad field 'rotation' (non-zero finite quat expected, got table)"),
      bad_spec("ik.skeleton", "a misspelt field", skeleton_with({ name = "b", parnet = "a" }),
               "bone 'b': no field 'parnet' (fields: name, parent, position, rotation)"),
  } },
  { "ik.pole", only_extra = true, args = { K.spec }, good = { { position = { 0, 1, 0 } } },
      what = "whole specs",
    extra = {
      bad_spec("ik.pole", "misspelt field", { position = { 0, 1, 0 }, wieght = 1 },
               "no field 'wieght' (fields: position, weight)"),
  } },
  { "ik.cone", only_extra = true, args = { K.spec }, good = { { angle = 1 } }, what = "whole specs", extra = {
      bad_spec("ik.cone", "misspelt field", { angel = 1 }, "no field 'angel' (fields: angle)"),
  } },
  { "ik.hinge", only_extra = true, args = { K.spec }, good = { hinge_spec() }, what = "whole specs", extra = {
      bad_spec("ik.hinge", "misspelt field", { axis = { 1, 0, 0 }, maximum = 1 },
               "no field 'maximum' (fields: axis, min, max)"),
      bad_spec("ik.hinge", "min above max", { axis = { 1, 0, 0 }, min = 1, max = 0.5 },
               "bad field 'min' (at most max expected, got 1 > 0.5)"),
  } },
  { "ik.node", only_extra = true, args = { K.spec }, good = { {} }, what = "whole specs", extra = {
      bad_spec("ik.node", "misspelt field", { postion = { 1, 0, 0 } },
               "no field 'postion' (fields: position, rotation, parent)"),
      bad_spec("ik.node", "a rotation not a quat", { rotation = true },
               "bad field 'rotation' (non-zero finite quat expected, got boolean)"),
      bad_spec("ik.node", "a zero rotation", { rotation = { 0, 0, 0, 0 } },
               "bad field 'rotation' (non-zero finite quat expected, got table)"),
      bad_spec("ik.node", "a parent not a transform", { parent = true },
               "bad field 'parent' (ik.bone or ik.node expected, got boolean)"),
      { "a closed parent", { { parent = closed(ik.node)() } }, message = "attempt to use a closed ik.node" },
  } },
  { "node:set_parent", self = "node", only_extra = true, args = {}, good = {}, what = "cycles", extra = {
      { "itself", {}, 1, "a node cannot hang from itself or its own descendant",
          with = function(n) return n end },
      { "its child", {}, 1, "a node cannot hang from itself or its own descendant",
        with = function(n) return ik.node{ parent = n } end },
      { "a closed node", {}, 1, nil, message = "attempt to use a closed ik.node", with = closed(ik.node) },
  } },
  { "ik.ground.plane", only_extra = true, args = { K.spec }, good = { {} }, what = "whole specs", extra = {
      bad_spec("ik.ground.plane", "misspelt field", { normall = { 0, 1, 0 } },
               "no field 'normall' (fields: point, normal)"),
  } },
  { "ik.ground.heightfield", only_extra = true, args = { K.spec }, good = { heightfield_spec() },
    what = "heights", extra = {
      bad_spec("ik.ground.heightfield", "no heights", { cell_size = 1, columns = 2, rows = 2 },
               "bad field 'heights' (table expected, got nil)"),
      bad_spec("ik.ground.heightfield", "too few heights", { cell_size = 1, columns = 2, rows = 2,
          heights = { 0, 0, 0 } },
               "bad field 'heights' (4 numbers expected, got 3)"),
      bad_spec("ik.ground.heightfield", "a height not a number",
               { cell_size = 1, columns = 2, rows = 2, heights = { 0, "x", 0, 0 } },
               "bad field 'heights' (number expected at index 2, got string)"),
      bad_spec("ik.ground.heightfield", "a NaN height",
               { cell_size = 1, columns = 2, rows = 2, heights = { 0, 0, 0, 0 / 0 } },
               "bad field 'heights' (finite number expected at index 4, got nan)"),
      bad_spec("ik.ground.heightfield", "misspelt field", { cell_size = 1, columns = 2, rows = 2,
          height = {} },
               "no field 'height' (fields: origin, cell_size, columns, rows, heights)"),
  } },
  { "ik.ground.mesh", only_extra = true, args = { K.spec }, good = { mesh_spec() }, what = "lists", extra = {
      bad_spec("ik.ground.mesh", "no vertices", { triangles = { 1, 2, 3 } },
               "bad field 'vertices' (table expected, got nil)"),
      bad_spec("ik.ground.mesh", "two vertices", { vertices = { { 0, 0, 0 }, { 1, 0, 0 } }, triangles = { 1,
          2, 3 } },
               "bad field 'vertices' (at least 3 vertices expected, got 2)"),
      bad_spec("ik.ground.mesh", "a vertex not a vec3",
               { vertices = { { 0, 0, 0 }, { 1, 0, 0 }, true }, triangles = { 1, 2, 3 } },
               "bad field 'vertices' (vec3 expected at index 3, got boolean)"),
      bad_spec("ik.ground.mesh", "a NaN vertex",
               { vertices = { { 0, 0, 0 }, { 1, 0 / 0, 0 }, { 0, 0, 1 } }, triangles = { 1, 2, 3 } },
               "bad field 'vertices' (finite vec3 expected at index 2, got NaN, inf or a huge component)"),
      bad_spec("ik.ground.mesh", "no triangles", { vertices = mesh_spec().vertices, triangles = {} },
               "bad field 'triangles' (at least 1 triangle expected, got 0)"),
      bad_spec("ik.ground.mesh", "an index out of range", { vertices = mesh_spec().vertices,
          triangles = { 1, 2, 4 } },
               "bad field 'triangles' (vertex index 4 out of range 1..3, in triangle 1)"),
      bad_spec("ik.ground.mesh", "a fractional index", { vertices = mesh_spec().vertices, triangles = { 1,
          2, 2.5 } },
               "bad field 'triangles' (integer vertex index expected in triangle 1, got 2.5)"),
      bad_spec("ik.ground.mesh", "a NaN index", { vertices = mesh_spec().vertices, triangles = { { 1, 2,
          0 / 0 } } },
               "bad field 'triangles' (integer vertex index expected in triangle 1, got nan)"),
      bad_spec("ik.ground.mesh", "a flat list not of threes", { vertices = mesh_spec().vertices,
          triangles = { 1, 2 } },
               "bad field 'triangles' (a multiple of 3 vertex indices expected, got 2)"),
      bad_spec("ik.ground.mesh", "a triangle of two", { vertices = mesh_spec().vertices, triangles = { { 1,
          2 } } },
               "bad field 'triangles' (3 vertex indices expected in triangle 1, got 2)"),
      bad_spec("ik.ground.mesh", "misspelt field", { vertices = mesh_spec().vertices, triangles = { 1, 2,
          3 }, tris = 1 },
               "no field 'tris' (fields: vertices, triangles)"),
  } },
  { "ik.foot", only_extra = true, args = { K.spec }, good = { foot_spec() }, what = "whole specs", extra = {
      bad_spec("ik.foot", "no ground", {}, "bad field 'ground' (ik.ground expected, got nil)"),
      bad_spec("ik.foot", "a ground not a ground", { ground = ik.vec3() },
               "bad field 'ground' (ik.ground expected, got ik.vec3)"),
      { "a closed ground", { { ground = closed(ik.ground.plane)() } },
          message = "attempt to use a closed ik.ground" },
      bad_spec("ik.foot", "misspelt field", { ground = plane, offset = 1 },
               "no field 'offset' (fields: " .. FOOT_FIELDS .. ")"),
  } },
  { "ik.pelvis", only_extra = true, args = { K.spec }, good = { {} }, what = "whole specs", extra = {
      bad_spec("ik.pelvis", "misspelt field", { smoothtime = 1 },
          "no field 'smoothtime' (fields: smooth_time)"),
  } },
  { "ik.watch{backend}", spec = none, field = F.custom{
      { "unknown", "fast", [[("auto", "inotify" or "poll" expected, got 'fast')]] },
      { "boolean", true, [[("auto", "inotify" or "poll" expected, got boolean)]] },
  } },
  { "ik.watch", only_extra = true, args = { K.spec }, good = { {} }, what = "whole specs", extra = {
      bad_spec("ik.watch", "misspelt field", { backnd = "poll" }, "no field 'backnd' (fields: backend)"),
  } },

  { "ik.clock", args = {}, good = {} },

  -- operators: the metamethod's own name in every message
  { "vec3 + w", self = "vec3", code = "o + (...)", op = "__add", operand = 2, args = { K.vec3 },
    good = { { 1, 0, 0 } }, extra = {
      { "a boolean on the left", { true }, nil, nil,
        message = "bad argument #1 to '__add' (vec3 expected, got boolean)", code = "(...) + o" },
  } },
  { "vec3 - w", self = "vec3", code = "o - (...)", op = "__sub", operand = 2, args = { K.vec3 },
    good = { { 1, 0, 0 } } },
  { "vec3 * s", self = "vec3", code = "o * (...)", op = "__mul", operand = 2, args = { K.number },
      good = { 2 },
    extra = {
      { "a NaN on the left", { 0 / 0 }, nil, nil,
        message = "bad argument #1 to '__mul' (finite number expected, got nan)", code = "(...) * o" },
  } },
  { "vec3 / s", self = "vec3", code = "o / (...)", op = "__div", operand = 2, args = { K.number },
      good = { 2 },
    extra = {
      { "zero", { 0 }, 2, "division by zero" },
      { "a number over a vec3", { 2 }, nil, nil,
        message = "bad argument #2 to '__div' (number expected, got ik.vec3)", code = "(...) / o" },
  } },
  { "quat * r", self = "quat", code = "o * (...)", op = "__mul", operand = 2, args = { K.quat_or_vec3 },
    good = { { 1, 0, 0 } }, extra = {
      { "a table on the left", { {} }, nil, nil,
        message = "bad argument #1 to '__mul' (ik.quat expected, got table)", code = "(...) * o" },
  } },

  -- field names: strings (numbers read as their text, and found in no list)
  { "chain[key] = v", self = "point_chain", code = "o[v] = 1", op = "__newindex", operand = 2,
    args = { K.key }, good = { "tolerance" } },
  { "pole[key] = v", self = "pole", code = "o[v] = 1", op = "__newindex", operand = 2, args = { K.key },
    good = { "weight" } },
  { "foot[key] = v", self = "foot", code = "o[v] = 1", op = "__newindex", operand = 2, args = { K.key },
    good = { "smooth_time" } },
  { "pelvis[key] = v", self = "pelvis", code = "o[v] = 1", op = "__newindex", operand = 2, args = { K.key },
    good = { "smooth_time" } },

  -- batches
  { "ik.batch", args = { K.opt_spec }, good = { { threads = 2 } } },
  { "ik.batch{threads}", spec = none, field = F.number{ expected = "integer in 1..64", lo = 1, hi = 64,
      integer = true } },
  { "ik.batch{chains}", spec = none, field = F.custom{
      { "boolean", true, "(list of ik.chain expected, got boolean)" },
      { "a list with a vec3", { ik.vec3() }, "(ik.chain expected at index 1, got ik.vec3)" },
      { "a closed chain", { closed(new_chain)() }, "(chain 1 is closed)" },
  } },
  { "ik.batch", only_extra = true, args = { K.spec }, good = { {} }, what = "whole specs", extra = {
      bad_spec("ik.batch", "misspelt field", { thread = 2 }, "no field 'thread' (fields: chains, threads)"),
      { "a chain twice", {}, message = "ik.batch: bad field 'chains' (chain 2 is in the list twice)",
        with = function() local c = new_chain(); return { chains = { c, c } } end },
  } },
  { "batch:add", self = "batch", args = { K.chain, opt(K.foot) }, good = { fresh(new_chain), fresh(function()
      return ik.foot{ ground = plane } end) }, extra = {
      { "a chain in the batch", {}, 1, "the chain is in this batch already",
        with = function(b) return b:chains()[2] end },
      { "a closed chain", {}, 1, "attempt to use a closed ik.chain", with = closed(new_chain) },
  } },
  { "batch:remove", self = "batch", args = { K.chain }, good = { fresh(new_chain) } },
  { "batch:solve", self = "batch", args = { opt(K.non_negative) }, good = { 1 / 60 } },
  { "batch:result", self = "batch", args = { K.index(2) }, good = { 2 } },
  { "batch:results", self = "batch", args = { K.chain }, good = function(b) return b:chains()[1] end,
      extra = {
      { "a chain not in the batch", { fresh(new_chain) }, 1, "the chain is not in this batch" },
  } },
  { "batch:chains", self = "batch", args = {}, good = {} },
  { "batch:close", self = "batch", args = {}, good = {} },

  -- crowds
  { "ik.crowd_template", args = { K.spec }, good = { fresh(crowd_template_spec) } },
  { "crowd_template:bone", self = "crowd_template", args = { K.string }, good = { "c" }, extra = {
      { "no such bone", { "z" }, 1, "no bone named 'z'" } } },
  { "crowd_template:bone_names", self = "crowd_template", args = {}, good = {} },
  { "ik.crowd", args = { K.spec }, good = { fresh(function()
      return { template = ik.crowd_template(crowd_template_spec()), count = 1 } end) } },
  { "crowd:solve", self = "crowd", args = { opt(K.non_negative) }, good = { 1 / 60 } },
  { "crowd:add", self = "crowd", args = {}, good = {} },
  { "crowd:remove", self = "crowd", args = { K.index(3) }, good = { 2 }, extra = {
      { "a free slot", { 3 }, 1, "instance 3 is not in the crowd" } } },
  { "crowd:used", self = "crowd", args = { K.index(3) }, good = { 3 } },
  { "crowd:result", self = "crowd", args = { K.index(3), K.index(1) }, good = { 1, 1 } },
  { "crowd:buffer", self = "crowd", args = { K.string }, good = { "roots" }, extra = {
      { "no such buffer", { "poses" }, 1, "invalid option 'poses'" } } },
  { "crowd:close", self = "crowd", args = {}, good = {} },
  { "crowd_buffer:set", self = "crowd_buffer", args = { K.spec, opt(K.index(2)) },
    good = { fresh(function() return { 0, 1, 0, 0, 0, 0, 1 } end), 2 }, extra = {
      { "a short table", { { 1, 2 } }, 1,
        "a multiple of 7 numbers, at most 14 from instance 1, expected, got 2" },
      { "a NaN", { { 0, 0 / 0, 0, 0, 0, 0, 1 } }, 1, "finite number expected at [2], got nan" } } },
  { "crowd_buffer:get", self = "crowd_buffer", args = { K.opt_spec, opt(K.index(2)), opt(K.index(2)) },
    good = { fresh(function() return {} end), 1, 2 } },
  { "crowd_buffer:address", self = "crowd_buffer", args = {}, good = {} },
}
for _, row in ipairs(MORE) do ROWS[#ROWS + 1] = row end

-- Fields of the objects made from spec tables, as both a spec field and an assignment.
local function number_field(expected, lo, hi, extra)
  local o = { expected = expected, lo = lo, hi = hi }
  for k, v in pairs(extra or {}) do o[k] = v end
  return F.number(o)
end
local FIELD_ROWS = {
  { "chain", "point_chain", chain_spec, {
    { "iterations", number_field("integer in 1..10000", 1, 10000, { integer = true }), 5 },
    { "tolerance", number_field("positive number", 0, nil, { open_lo = true }), 0.01 },
    { "weight", number_field("number in [0, 1]", 0, 1), 0.5 },
    { "base_direction", F.vec3{ expected = "vec3" }, { 1, 0, 0 } },
    { "pole", F.vec3{ expected = "ik.pole or vec3" }, { 0, 1, 0 } },
    { "target", F.custom(TARGET_FIELD), { 1, 1, 0 } },
    { "solver", F.custom{
      { "unknown", "newton", "('fabrik', 'ccd', 'two_bone' or 'dls' expected, got 'newton')" },
      { "boolean", true, "('fabrik', 'ccd', 'two_bone' or 'dls' expected, got boolean)" },
      { "number", 1, "('fabrik', 'ccd', 'two_bone' or 'dls' expected, got 1)" },
    }, "ccd" },
    { "deterministic", F.custom{
      { "number", 1, "(boolean expected, got 1)" },
      { "string", "yes", "(boolean expected, got string)" },
    }, true },
    { "mode", F.custom{
      { "unknown", "fast", "('plain' or 'refined' expected, got 'fast')" },
      { "boolean", true, "('plain' or 'refined' expected, got boolean)" },
    }, "refined" },
  } },
  { "chain", "bone_chain", function() return { bones = arm_skeleton():bones() } end, {
    { "pole", F.vec3{ expected = "transform, ik.pole or vec3" }, { 0, 1, 1 } },
    { "match_rotation", F.custom{
      { "number", 1, "(boolean expected, got 1)" },
      { "string", "yes", "(boolean expected, got string)" },
    }, true },
  } },
  { "tree", "tree", tree_spec, {
    { "iterations", number_field("integer in 1..10000", 1, 10000, { integer = true }), 5 },
    { "tolerance", number_field("non-negative number", 0), 0.01 },
    { "deterministic", F.custom{
      { "number", 1, "(boolean expected, got 1)" },
      { "string", "yes", "(boolean expected, got string)" },
    }, false },
  } },
  { "foot", "foot", foot_spec, {
    { "ground", F.custom{
      { "boolean", true, "(ik.ground expected, got boolean)" },
      { "ik.vec3", ik.vec3(), "(ik.ground expected, got ik.vec3)" },
    }, ik.ground.plane{ point = { 0, -1, 0 } } },
    { "ray_height", number_field("non-negative number", 0), 0.4 },
    { "ray_length", number_field("non-negative number", 0), 0.7 },
    { "foot_offset", number_field("non-negative number", 0), 0.1 },
    { "smooth_time", number_field("non-negative number", 0), 0.2 },
    { "up", F.vec3{ expected = "non-zero vec3", nonzero = "non-zero vec3 expected, got a zero vector" },
      { 0, 2, 0 } },
  } },
  { "pelvis", "pelvis", none, {
    { "smooth_time", number_field("non-negative number", 0), 0.2 },
  } },
}
for _, group in ipairs(FIELD_ROWS) do
  local short, fixture, spec, fields = group[1], group[2], group[3], group[4]
  for _, f in ipairs(fields) do
    ROWS[#ROWS + 1] = { "ik." .. short .. "{" .. f[1] .. "}", spec = spec, field = f[2] }
    ROWS[#ROWS + 1] = { short .. "." .. f[1], self = fixture, field = f[2], good = f[3] }
  end
end

-- ---- generating the cases ----

local function short_name(name) return name:match("[%.:]([%w_]+)$") or name end

local function kind_of(a)
  if a.kind then return a.kind, a.optional end
  return a, a.optional
end

local function argerror(fname, n, text)
  return PREFIX .. "bad argument #" .. n .. " to '" .. fname .. "' (" .. text .. ")"
end

-- Cases of one row: { label, code, args (a packed list), message, self: false for none,
-- closed: call on a closed object }.
local function cases_of(row)
  local out = {}
  local fname = row.op or short_name(row[1])
  local owner = row.self and FIX[row.self].type
  if row.field then
    local field = row[1]:match("{(.-)}$") or short_name(row[1])
    local ctor = row[1]:match("^(.-){")
    for _, b in ipairs(row.field.bad) do
      local label, value, text = b[1], b[2], b[3]
      local message = PREFIX .. (ctor or owner) .. ": bad field '" .. field .. "' " .. text
      if ctor then
        local spec = row.spec()
        spec[field] = value
        out[#out + 1] = { label, ctor .. "(...)", M.pack(spec), message, self = false }
      else
        out[#out + 1] = { label, "o." .. field .. " = v", M.pack(value), message }
      end
    end
    return out
  end
  local code = row.code or (row.self and ("o:" .. fname .. "(...)") or (row[1] .. "(...)"))
  local n = #row.args
  local at = row.operand or 1 -- the message's number for argument 1
  local good = row.good
  if type(good) == "function" then good = { n = n } end -- made from the object: see good_call
  for p, a in ipairs(row.only_extra and {} or row.args) do
    local kind, optional = kind_of(a)
    if not optional then
      out[#out + 1] = { "nil as argument " .. p, code, M.args(good, p, nil),
                        argerror(fname, p + at - 1, kind.expected .. " expected, got nil") }
      if p == n and not row.no_missing and not row.code then
        out[#out + 1] = { "argument " .. p .. " missing", code, M.args(good, p, nil, true),
                          argerror(fname, p, kind.expected .. " expected, got no value") }
      end
    end
    for _, b in ipairs(kind.bad) do
      out[#out + 1] = { b[1] .. " as argument " .. p, code, M.args(good, p, b[2]),
                        argerror(fname, p + at - 1, b[3]) }
    end
  end
  local first = row.args[1] and kind_of(row.args[1])
  if first and not select(2, kind_of(row.args[1])) and not row.no_empty and not row.only_extra and n > 1 then
    out[#out + 1] = { "no arguments", code, M.pack(),
                      argerror(fname, 1, first.expected .. " expected, got no value") }
  end
  for _, e in ipairs(row.extra or {}) do
    local args = M.args(e[2])
    out[#out + 1] = { e[1], e.code or code, args,
                      e.message and PREFIX .. e.message or argerror(fname, e[3], e[4]), with = e.with }
  end
  if row.self and not row.only_extra and not row.code then
    local other = owner == "ik.vec3" and "ik.quat" or "ik.vec3"
    local wrong = { { "nil", nil, "nil" }, { "a table", {}, "table" }, { "a string", "x", "string" },
                    { "another ik type", ik[other:sub(4)](), other } }
    for _, w in ipairs(wrong) do
      local g = M.args(good)
      local args = { n = g.n + 1, w[2] }
      for i = 1, g.n do args[i + 1] = g[i] end
      out[#out + 1] = { "self " .. w[1], "o." .. fname .. "(...)", args,
                        argerror(fname, 1, owner .. " expected, got " .. w[3]) }
    end
    out[#out + 1] = { "no self", "o." .. fname .. "(...)", M.pack(),
                      argerror(fname, 1, owner .. " expected, got no value") }
    if FIX[row.self].close and fname ~= "close" then
      out[#out + 1] = { "closed", code, M.args(good), PREFIX .. FIX[row.self].closed, closed = true }
    end
  end
  return out
end

-- The state of the row's object, or nil.
local function state(row, o) return row.self and FIX[row.self].state(o) or nil end

local function good_call(row, o)
  if row.field then
    local field = row[1]:match("{(.-)}$") or short_name(row[1])
    local ctor = row[1]:match("^(.-){")
    if ctor then return M.call(ctor .. "(...)", nil, M.pack(row.spec())) end
    local value = row.good
    return M.call("o." .. field .. " = v", o, M.pack(value))
  end
  local code = row.code or (row.self and ("o:" .. short_name(row[1]) .. "(...)") or (row[1] .. "(...)"))
  local good = row.good
  if type(good) == "function" then good = M.pack(good(o)) end
  return M.call(code, o, M.args(good))
end

local function show(args)
  local parts = {}
  for i = 1, args.n do
    parts[i] = type(args[i]) == "string" and string.format("%q", args[i]) or tostring(args[i])
  end
  return "(" .. table.concat(parts, ", ") .. ")"
end

local function run(row, case)
  local label, code, args, message = case[1], case[2], case[3], case[4]
  local fx = row.self and FIX[row.self]
  local o = fx and fx.make()
  if case.closed then fx.close(o) end
  local before = (fx and not case.closed) and state(row, o)
  if case.with then args = M.pack(case.with(o)) end
  local values_before = M.values_state(args)
  local ok, err = M.call(code, o, args)
  assert(not ok, row[1] .. ": " .. label .. ": accepted " .. show(args))
  assert.are.equal(message, tostring(err))
  assert.are.same(values_before, M.values_state(args)) -- no out argument written
  if case.closed then return end
  if fx then assert.are.same(before, state(row, o)) end
  local ok2, err2 = good_call(row, o)
  assert(ok2, err2)
  if fx and short_name(row[1]) ~= "close" then -- it works as a fresh one does
    local ref = fx.make()
    assert(good_call(row, ref))
    assert.are.same(state(row, ref), state(row, o))
  end
end

local total = 0
describe("bad input", function()
  for _, row in ipairs(ROWS) do
    describe(row[1] .. (row.what and " (" .. row.what .. ")" or ""), function()
      it("works with its known-good call", function()
        local o = row.self and FIX[row.self].make()
        assert(good_call(row, o))
      end)
      for _, case in ipairs(cases_of(row)) do
        total = total + 1
        it(case[1], function() run(row, case) end)
      end
    end)
  end

  it("has generated cases for every row", function() assert.is_true(total > #ROWS) end)
end)

-- Arguments after the last one a function takes are ignored, as Lua's own functions
-- ignore them: its known-good call still works with a table, an ik.node and a string
-- after them, and leaves them alone (a constructor that counted on fixed stack slots
-- once set the uservalue of whatever came second).
-- Not for those whose arguments are counted: the form of ik.vec3/ik.quat and set (one
-- value or components) goes by the count, and pelvis:update takes any number of deficits.
local COUNTED = { ["ik.vec3"] = true, ["vec3:set"] = true, ["ik.quat"] = true, ["quat:set"] = true,
                  ["pelvis:update"] = true }
describe("extra arguments", function()
  for _, row in ipairs(ROWS) do
    if not row.field and not row.code and not row.op and not row.only_extra and type(row.good) ~= "function"
        and not COUNTED[row[1]] then
      it(row[1] .. (row.what and " (" .. row.what .. ")" or ""), function()
        local o = row.self and FIX[row.self].make()
        local args = M.args(row.good)
        local n = math.max(args.n, #row.args)
        local parent = ik.node()
        local node = ik.node{ position = { 0, 1, 0 }, parent = parent }
        local extra = { {}, node, "x" }
        for i = args.n + 1, n do args[i] = nil end
        for i, v in ipairs(extra) do args[n + i] = v end
        args.n = n + #extra
        local code = row.self and ("o:" .. short_name(row[1]) .. "(...)") or (row[1] .. "(...)")
        local ok, results = M.call(code, o, args)
        assert(ok, results)
        -- what came back is whole: an object it made reads as one of ours
        local made = results[1]
        if type(made) == "userdata" then
          assert.are.equal("ik.", tostring(debug.getmetatable(made).__name):sub(1, 3))
          assert.is_string(tostring(made))
        end
        assert.are.same({ 0, 1, 0 }, xyz(node:get_position()))
        assert.is_true(rawequal(parent, node.parent))
        assert.is_nil(next(extra[1]))
      end)
    end
  end
end)

-- ---- completeness: every public function has a row ----

-- Methods tables are the upvalue of a C __index, which 5.1's debug.getupvalue does not
-- show: there the check covers the module table only (the binding is one source: 5.4
-- and LuaJIT check its methods).
local METHODS_VISIBLE = select("#", debug.getupvalue(getmetatable(ik.vec3()).__index, 1)) > 0

-- The public functions of the module: "ik.x.y" for functions (and callable tables) in
-- the module table and its sub-tables, "type:method" for every method of an ik metatable.
local function public_functions()
  local found = {}
  local function walk(t, prefix, seen)
    if seen[t] then return end
    seen[t] = true
    for k, v in pairs(t) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" then
        local name = prefix .. "." .. k
        local mt = type(v) == "table" and getmetatable(v)
        if type(v) == "function" or (mt and mt.__call) then found[#found + 1] = name end
        if type(v) == "table" then walk(v, name, seen) end
      end
    end
  end
  walk(ik, "ik", {})
  for key, mt in pairs(debug.getregistry()) do
    if type(key) == "string" and key:sub(1, 3) == "ik." and type(mt) == "table" and mt.__name == key then
      local methods = mt.__index
      if type(methods) == "function" then methods = select(2, debug.getupvalue(methods, 1)) end
      for k, v in pairs(type(methods) == "table" and methods or {}) do
        if type(v) == "function" then found[#found + 1] = key:sub(4) .. ":" .. k end
      end
    end
  end
  table.sort(found)
  return found
end

describe("the bad-input matrix", function()
  it("has a row for every public function and method", function()
    local covered = {}
    for _, row in ipairs(ROWS) do covered[row[1]] = true end
    local missing = {}
    for _, name in ipairs(public_functions()) do
      if not covered[name] then missing[#missing + 1] = name end
    end
    assert(#missing == 0, "no row in bad_input_spec.lua for: " .. table.concat(missing, ", "))
  end)

  it("finds the module's functions and methods", function()
    local n = #public_functions()
    assert(n >= (METHODS_VISIBLE and 90 or 20), "only " .. n .. " public functions found")
  end)
end)
