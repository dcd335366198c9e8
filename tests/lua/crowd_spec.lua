-- ik.crowd: a template's characters solved in one call, their inputs and outputs in
-- flat buffers. What matters: every character ends bit for bit where ik.skeleton,
-- ik.chain, ik.node and ik.foot solved in ik.batch calls leave it, at any thread count;
-- characters come and go; buffers move whole tables in one call and refuse bad ones
-- with nothing changed; a closed crowd's buffers raise; rig scripts have no crowds.
local ik = require("ik")
local crowd_views = require("ik.crowd").views
local h = require("spec_helper")

local sin, cos = math.sin, math.cos

local function hill(x, z) return 0.4 * sin(x * 0.21) * cos(z * 0.17) + 0.15 * sin(x * 0.53 + z * 0.41) end

local function make_ground()
  local heights = {}
  for r = 0, 39 do
    for c = 0, 39 do heights[r * 40 + c + 1] = hill(c * 0.5, r * 0.5) end
  end
  return ik.ground.heightfield{ origin = { -10, 0, -10 }, cell_size = 0.5, columns = 40, rows = 40,
                                heights = heights }
end

-- The bench's character (tests/bench/bench_crowd.lua), its offsets jittered by rnd.
local function bones_of(rnd)
  local function j(x) return x + (rnd() - 0.5) * 0.04 end
  return {
    { name = "hips", position = { 0, 1, 0 } },
    { name = "spine1", parent = "hips", position = { 0, j(0.1), 0 } },
    { name = "spine2", parent = "spine1", position = { 0, j(0.12), j(0.01) } },
    { name = "spine3", parent = "spine2", position = { 0, j(0.12), j(0.01) } },
    { name = "spine4", parent = "spine3", position = { j(0), j(0.12), 0 } },
    { name = "spine5", parent = "spine4", position = { 0, j(0.12), j(-0.01) } },
    { name = "l_shoulder", parent = "spine5", position = { j(0.18), 0, 0 } },
    { name = "l_elbow", parent = "l_shoulder", position = { j(0.05), j(-0.28), 0 } },
    { name = "l_hand", parent = "l_elbow", position = { 0, j(-0.25), j(0.05) } },
    { name = "r_shoulder", parent = "spine5", position = { j(-0.18), 0, 0 } },
    { name = "r_elbow", parent = "r_shoulder", position = { j(-0.05), j(-0.28), 0 } },
    { name = "r_hand", parent = "r_elbow", position = { 0, j(-0.25), j(0.05) } },
    { name = "l_thigh", parent = "hips", position = { j(0.1), -0.05, 0 } },
    { name = "l_knee", parent = "l_thigh", position = { 0, j(-0.43), 0.03 } },
    { name = "l_ankle", parent = "l_knee", position = { 0, j(-0.43), -0.03 } },
    { name = "r_thigh", parent = "hips", position = { j(-0.1), -0.05, 0 } },
    { name = "r_knee", parent = "r_thigh", position = { 0, j(-0.43), 0.03 } },
    { name = "r_ankle", parent = "r_knee", position = { 0, j(-0.43), -0.03 } },
  }
end

local LIMBS = {
  { "l_thigh", "l_knee", "l_ankle" }, { "r_thigh", "r_knee", "r_ankle" },
  { "l_shoulder", "l_elbow", "l_hand" }, { "r_shoulder", "r_elbow", "r_hand" },
}
local SPINE = { "spine1", "spine2", "spine3", "spine4", "spine5" }

-- A random rig: what the template and the per-object characters share.
local function make_rig(seed)
  local state = seed
  local function rnd() -- a small LCG: the same numbers on every Lua
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  end
  return {
    bones = bones_of(rnd),
    spine_target = { rnd() * 0.2 - 0.1, 0.35 + rnd() * 0.2, rnd() * 0.2 },
    iterations = 3 + math.floor(rnd() * 12),
    foot_offset = 0.05 + rnd() * 0.05,
    arm_target = { 0.25, 0.1 + rnd() * 0.2, 0.1 + rnd() * 0.2 },
  }
end

local function spec_chains(rig)
  local function mirror(p, side) return { p[1] * side, p[2], p[3] } end
  local chains = { { bones = SPINE, iterations = rig.iterations,
                     target = { bone = "hips", offset = rig.spine_target } } }
  for i = 1, 2 do
    local side = i == 1 and 1 or -1
    chains[#chains + 1] = { bones = LIMBS[i], pole = { bone = "hips", offset = { 0.1 * side, -0.4, 1 } },
                            foot = { foot_offset = rig.foot_offset } }
  end
  for i = 3, 4 do
    local side = i == 3 and 1 or -1
    chains[#chains + 1] = { bones = LIMBS[i],
                            target = { bone = "hips", offset = mirror(rig.arm_target, side) },
                            pole = { bone = "hips", offset = { 0.5 * side, 0.4, -1 } } }
  end
  return chains
end

-- The per-object character: skeleton, chains with nodes, feet, in two batches.
local function object(rig, ground)
  local sk = ik.skeleton(rig.bones)
  local hips = sk:bone("hips")
  local o = { sk = sk, hips = hips, host = {}, chains = {}, feet = {}, results = {} }
  for i, spec in ipairs(spec_chains(rig)) do
    local bones = {}
    for k, name in ipairs(spec.bones) do bones[k] = sk:bone(name) end
    local target
    if spec.target then
      target = ik.node{ position = spec.target.offset, parent = hips }
    else
      target = ik.node{ position = bones[#bones]:get_position() }
      o.host[#o.host + 1] = target
    end
    o.chains[i] = ik.chain{ bones = bones, target = target, iterations = spec.iterations,
                            pole = spec.pole and ik.node{ position = spec.pole.offset, parent = hips } }
    if spec.foot then o.feet[i] = ik.foot{ ground = ground, foot_offset = spec.foot.foot_offset } end
  end
  return o
end

-- Frame f's inputs of character k: roots (7 numbers) and host targets (6).
local function inputs(k, f)
  local t = f / 60
  local a = 0.3 * sin(t + k)
  local root = { k * 0.7 - 4, 0.9 + 0.03 * cos(5 * t), t * 1.4, 0, sin(a / 2), 0, cos(a / 2) }
  local targets = {}
  for j = 0, 1 do
    local s = 5 * t + k + j * 3.14159
    targets[3 * j + 1] = root[1] + (j == 0 and 0.1 or -0.1)
    targets[3 * j + 2] = 0.05 + 0.12 * math.max(0, sin(s))
    targets[3 * j + 3] = root[3] + 0.25 * cos(s) + 0.1 * sin(7 * s)
  end
  return root, targets
end

local function objects_frame(objs, f)
  local body, arms = ik.batch{}, ik.batch{}
  for k, o in ipairs(objs) do
    local root, targets = inputs(k, f)
    o.hips:set_local_position({ root[1], root[2], root[3] })
    o.hips:set_local_rotation(ik.quat(root[4], root[5], root[6], root[7]))
    for j, node in ipairs(o.host) do
      node:set_position({ targets[3 * j - 2], targets[3 * j - 1], targets[3 * j] })
    end
    for i = 1, 3 do body:add(o.chains[i], o.feet[i]) end
    for i = 4, 5 do arms:add(o.chains[i]) end
  end
  body:solve(1 / 60)
  arms:solve(1 / 60)
  for k, o in ipairs(objs) do
    for i = 1, 5 do
      local b, at = i <= 3 and body or arms, i <= 3 and 3 * (k - 1) + i or 2 * (k - 1) + i - 3
      o.results[i] = { b:result(at) }
    end
  end
  body:close()
  arms:close()
end

local function crowd_frame(c, views, f)
  local sr, st = views.stride.roots, views.stride.targets
  for k = 1, #c do
    local root, targets = inputs(k, f)
    for i = 1, 7 do views.roots[(k - 1) * sr + i] = root[i] end
    for i = 1, 6 do views.targets[(k - 1) * st + i] = targets[i] end
  end
  views.push()
  c:solve(1 / 60)
  views.pull()
end

-- Every bone of every character, crowd against objects, bit for bit.
local function assert_same(t, c, views, objs)
  local names = t:bone_names()
  for k, o in ipairs(objs) do
    for b, name in ipairs(names) do
      local p = o.sk:bone(name):get_position()
      local q = o.sk:bone(name):get_local_rotation()
      local base_p, base_q = (k - 1) * views.stride.positions + 3 * (b - 1),
                             (k - 1) * views.stride.rotations + 4 * (b - 1)
      local got_p = { views.positions[base_p + 1], views.positions[base_p + 2], views.positions[base_p + 3] }
      local got_q = { views.rotations[base_q + 1], views.rotations[base_q + 2], views.rotations[base_q + 3],
                      views.rotations[base_q + 4] }
      if got_p[1] ~= p.x or got_p[2] ~= p.y or got_p[3] ~= p.z or got_q[1] ~= q.x or got_q[2] ~= q.y
          or got_q[3] ~= q.z or got_q[4] ~= q.w then
        error(string.format("character %d bone %s: crowd (%.17g %.17g %.17g) objects (%.17g %.17g %.17g)", k,
          name, got_p[1], got_p[2], got_p[3], p.x, p.y, p.z))
      end
    end
    for i = 1, 5 do
      local reached, distance, planted = c:result(k, i)
      local r = o.results[i]
      assert.are.equal(r[2], distance)
      assert.are.equal(r[1], reached)
      assert.are.equal(r[4] or false, planted)
    end
  end
end

describe("ik.crowd", function()
  local ground
  before_each(function() ground = make_ground() end)

  for _, threads in ipairs({ 1, 2, 4 }) do
    for _, tables in ipairs({ true, false }) do
      it(string.format("ends bit for bit where ik.batch leaves the same characters (%d threads, %s)", threads,
        tables and "tables" or "views as the Lua has them"), function()
        for seed = 1, 3 do
          local rig = make_rig(seed * 7 + threads)
          local t = ik.crowd_template{ skeleton = ik.skeleton(rig.bones), chains = spec_chains(rig) }
          assert.are.equal(2, t.passes)
          assert.are.equal(2, t.targets)
          local n = 7
          local c = ik.crowd{ template = t, count = n, threads = threads, ground = ground }
          local views = crowd_views(c, tables)
          local objs = {}
          for k = 1, n do objs[k] = object(rig, ground) end
          for f = 0, 14 do
            crowd_frame(c, views, f)
            objects_frame(objs, f)
            assert_same(t, c, views, objs)
          end
          c:close()
        end
      end)
    end
  end

  it("adds and removes characters between frames", function()
    local rig = make_rig(3)
    local t = ik.crowd_template{ skeleton = ik.skeleton(rig.bones), chains = spec_chains(rig) }
    local c = ik.crowd{ template = t, count = 3, capacity = 4, ground = ground }
    assert.are.equal(3, #c)
    assert.are.equal(4, c:add())
    assert.is_nil(c:add())
    c:remove(2)
    assert.is_false(c:used(2))
    assert.are.equal(3, #c)
    assert.has_error(function() c:remove(2) end,
      "bad argument #1 to 'remove' (instance 2 is not in the crowd)")
    assert.has_error(function() c:result(2, 1) end,
      "bad argument #1 to 'result' (instance 2 is not in the crowd)")
    assert.has_error(function() c:used(5) end, "bad argument #1 to 'used' (index out of range: 1..4)")
    assert.are.equal(2, c:add())
    assert.is_true(c:used(2))
    c:solve(1 / 60)
  end)

  it("moves whole tables in and out, and refuses bad ones with nothing changed", function()
    local rig = make_rig(5)
    local t = ik.crowd_template{ skeleton = ik.skeleton(rig.bones), chains = spec_chains(rig) }
    local c = ik.crowd{ template = t, count = 2, ground = ground }
    local roots, targets, positions = c:buffer("roots"), c:buffer("targets"), c:buffer("positions")
    assert.are.equal(7, roots.stride)
    assert.are.equal(6, targets.stride)
    assert.are.equal(3 * 18, positions.stride)
    assert.are.equal(14, #roots)
    assert.are.equal(ik.real == "float" and "float" or "double", roots.type)
    local r = roots:get()
    assert.are.same({ 0, 1, 0, 0, 0, 0, 1 }, { r[1], r[2], r[3], r[4], r[5], r[6], r[7] })
    assert.has_error(function() targets:set({ 1, 2 }) end,
      "bad argument #1 to 'set' (a multiple of 6 numbers, at most 12 from instance 1, expected, got 2)")
    assert.has_error(function() targets:set({ 1, 2, 3, 4, 5, 6 }, 3) end,
      "bad argument #2 to 'set' (index out of range: 1..2)")
    assert.has_error(function() targets:set({ 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6 }, 2) end,
      "bad argument #1 to 'set' (a multiple of 6 numbers, at most 6 from instance 2, expected, got 12)")
    assert.has_error(function() roots:set({ 1, 2, 3, 0 / 0, 0, 0, 1 }) end,
      "bad argument #1 to 'set' (finite number expected at [4], got nan)")
    assert.has_error(function() roots:set({ 1, 2, 3, "x", 0, 0, 1 }) end,
      "bad argument #1 to 'set' (finite number expected at [4], got string)")
    assert.has_error(function() positions:set({}) end,
      "ik.crowd_buffer: 'positions' is the solve's output: only roots and targets are written")
    assert.has_error(function() c:buffer("poses") end)
    assert.are.same(r, roots:get()) -- nothing written
    roots:set({ 1, 1, 2, 0, 0, 0, 1 }, 2)
    assert.are.same({ 1, 1, 2, 0, 0, 0, 1 }, roots:get(nil, 2, 1))
    roots:set({ 1, 1, 2, 0, 0, 0, 0 }, 2)
    assert.has_error(function() c:solve(1 / 60) end, "ik.crowd: roots of instance 2: a zero rotation")
    roots:set({ 1, 1, 2, 0, 0, 0, 1 }, 2)
    assert.has_error(function() c:solve(-1) end,
      "bad argument #1 to 'solve' (non-negative number expected, got -1)")
    assert.is_number(c:solve(1 / 60))
    c:close()
    assert.has_error(function() roots:get() end, "attempt to use a buffer of a closed ik.crowd")
    assert.has_error(function() c:solve() end, "attempt to use a closed ik.crowd")
  end)

  it("reads each value of a table once, raw, and says which one is bad wherever it is", function()
    local rig = make_rig(6)
    local t = ik.crowd_template{ skeleton = ik.skeleton(rig.bones), chains = spec_chains(rig) }
    local c = ik.crowd{ template = t, count = 6, ground = ground }
    local roots, rotations = c:buffer("roots"), c:buffer("rotations")
    local good = {}
    for k = 1, 6 do
      for j, x in ipairs({ k, 1, 2 * k, 0, 0, 0, 1 }) do good[(k - 1) * 7 + j] = x end
    end
    local function with(i, x)
      local r = {}
      for j = 1, #good do r[j] = good[j] end
      r[i] = x
      return r
    end
    local before = roots:get()
    -- 42 numbers: past the values the binding keeps on the stack at once.
    assert.has_error(function() roots:set(with(42, 1 / 0)) end,
      "bad argument #1 to 'set' (finite number expected at [42], got inf)")
    assert.has_error(function() roots:set(with(33, false)) end,
      "bad argument #1 to 'set' (finite number expected at [33], got boolean)")
    assert.has_error(function() roots:set(with(1, "1")) end,
      "bad argument #1 to 'set' (finite number expected at [1], got string)")
    assert.has_error(function() roots:set(with(40, -1e300)) end,
      "bad argument #1 to 'set' (finite number expected at [40], got -1e+300)")
    assert.has_error(function() roots:set(with(35, 0 / 0), 1) end,
      "bad argument #1 to 'set' (finite number expected at [35], got nan)")
    local short = with(1, 1)
    short[42] = nil
    assert.has_error(function() roots:set(short) end,
      "bad argument #1 to 'set' (a multiple of 7 numbers, at most 42 from instance 1, expected, got 41)")
    assert.has_error(function() roots:set(good, 2) end,
      "bad argument #1 to 'set' (a multiple of 7 numbers, at most 35 from instance 2, expected, got 42)")
    assert.has_error(function() roots:set(good, 0) end, "bad argument #2 to 'set' (index out of range: 1..6)")
    assert.are.same(before, roots:get()) -- nothing written by any of them
    -- A metatable is never consulted: the table's own values are read and written.
    local guarded = { __index = function() error("read through __index") end,
                      __newindex = function() error("written through __newindex") end }
    roots:set(setmetatable(with(1, 3), guarded))
    assert.are.same(with(1, 3), roots:get())
    local out = roots:get(setmetatable({}, guarded), 2, 1)
    assert.are.same({ 2, 1, 4, 0, 0, 0, 1 }, { out[1], out[2], out[3], out[4], out[5], out[6], out[7] })
    assert.are.equal(7, #out)
    -- Ranges: only first .. first + count - 1 is read; t keeps what lies past it.
    local keep = { 9, 9, 9, 9, 9, 9, 9, "kept" }
    roots:get(keep, 6)
    assert.are.same({ 6, 1, 12, 0, 0, 0, 1, "kept" }, keep)
    assert.are.same({ 5, 1, 10, 0, 0, 0, 1, 6, 1, 12, 0, 0, 0, 1 }, roots:get(nil, 5))
    assert.are.equal(4 * 18, #rotations:get(nil, 3, 1))
    assert.has_error(function() roots:get(nil, 7) end, "bad argument #2 to 'get' (index out of range: 1..6)")
    assert.has_error(function() roots:get(nil, 5, 3) end,
      "bad argument #3 to 'get' (index out of range: 1..2)")
    assert.has_error(function() roots:get(nil, 1, 0) end,
      "bad argument #3 to 'get' (index out of range: 1..6)")
    assert.has_error(function() roots:get(nil, 1.5) end)
    assert.has_error(function() roots:get(1) end, "bad argument #1 to 'get' (table expected, got number)")
    -- Integers are numbers; a set of fewer instances from first leaves the others.
    roots:set({ 1, 2, 3, 0, 0, 0, 1 }, 4)
    assert.are.same({ 1, 2, 3, 0, 0, 0, 1 }, roots:get(nil, 4, 1))
    assert.are.same({ 5, 1, 10, 0, 0, 0, 1 }, roots:get(nil, 5, 1))
    c:close()
    assert.has_error(function() roots:set(good) end, "attempt to use a buffer of a closed ik.crowd")
  end)

  it("refuses bad templates and crowds with the field named", function()
    local rig = make_rig(2)
    local sk = ik.skeleton(rig.bones)
    local chains = spec_chains(rig)
    chains[4].target = { bone = "l_elbow" }
    assert.has_error(function() ik.crowd_template{ skeleton = sk, chains = chains } end,
      "ik.crowd_template: chain 4: bad field 'target' (it would move with the chain's bones)")
    assert.has_error(function()
      ik.crowd_template{ skeleton = sk, chains = { { bones = { "hips", "nope" } } } }
    end, "ik.crowd_template: bones: no bone named 'nope'")
    assert.has_error(function() ik.crowd_template{ skeleton = sk, chains = {}, extra = 1 } end)
    local t = ik.crowd_template{ skeleton = sk, chains = spec_chains(rig) }
    assert.has_error(function() ik.crowd{ template = t, count = 2 } end,
      "ik.crowd: bad field 'ground' (ik.ground expected: the template has feet, got nil)")
    assert.has_error(function() ik.crowd{ template = t, count = 3, capacity = 2, ground = ground } end,
      "ik.crowd: count 3 is more than the capacity 2")
    assert.has_error(function() ik.crowd{ template = t, count = 1.5, ground = ground } end,
      "ik.crowd: bad field 'count' (integer in 0..1048576 expected, got 1.5)")
    assert.has_error(function() ik.crowd{ template = t, count = 2, threads = 100, ground = ground } end,
      "ik.crowd: bad field 'threads' (integer in 1..64 expected, got 100)")
    assert.are.equal(1, ik.crowd{ template = t, ground = ground }.capacity)
    assert.are.equal(18, t.bones)
    assert.are.equal(15, t:bone("l_ankle") and #t:bone_names() - 3)
  end)

  it("allocates nothing in a steady-state frame from tables", function()
    local rig = make_rig(9)
    local t = ik.crowd_template{ skeleton = ik.skeleton(rig.bones), chains = spec_chains(rig) }
    local c = ik.crowd{ template = t, count = 10, threads = 2, ground = ground }
    local views = crowd_views(c, true)
    local roots, targets = c:buffer("roots"), c:buffer("targets")
    local rotations, positions = c:buffer("rotations"), c:buffer("positions")
    local r, tg, ro, po = views.roots, views.targets, views.rotations, views.positions
    local grown = h.allocated(function()
      roots:set(r)
      targets:set(tg)
      c:solve(1 / 60)
      rotations:get(ro)
      positions:get(po)
    end)
    assert.are.equal(0, grown)
  end)

  it("drives the demo's crowd scene, whose skeletons read the crowd's buffers", function()
    local scene = require("ik.demo.crowd_scene").new()
    for _ = 1, 20 do scene:advance(1 / 60) end
    local sk = scene.skeletons.c1
    local by_name = {}
    for _, b in ipairs(sk:bones()) do by_name[b.name] = b end
    local hips, ankle = by_name.hips:get_position(), by_name.l_ankle:get_position()
    assert.is_true(hips[2] - ankle[2] > 0.6) -- standing
    assert.are.equal("hips", by_name.l_thigh.parent.name)
    local q = by_name.l_knee:get_rotation()
    assert.are.near(1, q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2, 1e-6)
    assert.is_true(scene.reached > 0.9 * 5 * 400)
    assert.are.same({}, require("ik.demo.crowd_scene").scripts)
    scene.crowd:close()
  end)

  it("is not there for rig scripts", function()
    local sb = ik.sandbox{ dir = ".", ik_path = "lua/?.lua;lua/?/init.lua", scene = {} }
    sb:load("state.crowd, state.template = type(ik.crowd), type(ik.crowd_template) function update() end",
      "=probe")
    local state = sb:state()
    assert.are.same({ "nil", "nil" }, { state.crowd, state.template })
    sb:close()
  end)
end)
