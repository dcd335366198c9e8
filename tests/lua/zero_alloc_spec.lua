-- A steady-state frame allocates nothing: the demo through ik.runtime, each rig on its
-- own, and the `out` arguments of the binding that make that possible.
--
-- Allocation is measured as Lua sees it, collectgarbage("count") before and after with
-- the collector stopped. Under LuaJIT the JIT compiler is turned off while measuring,
-- and its traces flushed: traces are garbage-collected objects, so compiling one shows
-- in the count (a few hundred bytes now and then, fewer as the traces settle), and a
-- trace compiled before jit.off() still runs, and may leave it through an exit that
-- materialises what it had sunk (564 bytes to 9.9 KB in 1,000 frames, in about half the
-- runs, depending on where the heap lies). That is the compiler's memory, not the
-- frame's; with it off and flushed the count is exact.
local ik = require("ik")
local h = require("spec_helper")

package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local runtime = require("ik.runtime")
local scene_mod = require("ik.demo.scene")
local rigs = require("ik.rigs")

local jit = rawget(_G, "jit")
local DT = 1 / 60

-- Calls itself n deep: grows the running thread's Lua stack.
local function deep(n)
  if n > 0 then
    return 1 + deep(n - 1)
  end
  return 0
end

-- Bytes allocated by `frames` calls of step. A collection shrinks Lua 5.4's list of call
-- records, and LuaJIT's stack of the running thread, which a deeper call grows back:
-- Lua's bookkeeping, not the frame's, so one frame runs between the collection and the
-- count, after the stack is grown past any frame's depth.
local function allocated(frames, step)
  collectgarbage("collect")
  collectgarbage("stop")
  deep(2000)
  step()
  local before = collectgarbage("count")
  for _ = 1, frames do step() end
  local after = collectgarbage("count")
  collectgarbage("restart")
  return (after - before) * 1024
end

-- Runs step `warm` times, then measures `frames` more.
local function steady(warm, frames, step)
  h.jit_off()
  for _ = 1, warm do step() end
  local ok, bytes = pcall(allocated, frames, step)
  if jit then jit.on() end
  collectgarbage("restart")
  assert(ok, bytes)
  return bytes
end

local function script_path(module)
  return (module:gsub("%.", "/")) .. ".lua"
end

describe("a steady-state frame", function()
  it("of the demo (humanoid and walker scripts through ik.runtime) allocates 0 bytes", function()
    local sc = scene_mod.new()
    local reports = 0
    sc.report = function() reports = reports + 1 end
    local scripts = {}
    for i, m in ipairs(scene_mod.scripts) do scripts[i] = "lua/" .. script_path(m) end
    -- shapes left out: they are new tables each frame, by design (report_shapes)
    local rt = runtime.new{ scene = sc, scripts = scripts, watch = false, report_shapes = false }
    local frames = 0
    local function frame()
      frames = frames + 1
      sc:advance(DT)
      rt:update(DT)
    end
    assert.are.equal(0, steady(200, 1000, frame))
    for _, ev in ipairs(rt:events()) do assert.are.equal("load", ev.kind, ev.message) end
    assert.are.equal(frames * 9, reports) -- both scripts ran every frame: 4 chains + 5
    rt:close()
  end)

  describe("of each rig on its own allocates 0 bytes:", function()
    local sc, sk, nodes
    before_each(function()
      sc = scene_mod.new()
      sk, nodes = sc.skeletons.humanoid, sc.nodes
    end)
    local function bone(name) return sk:bone(name) end
    local function run(rig)
      return steady(100, 500, function()
        sc:advance(DT)
        rig:update(DT)
      end)
    end

    it("arm", function()
      local rig = rigs.arm.new{ upper = bone("r_upper_arm"), lower = bone("r_lower_arm"),
                                hand = bone("r_hand"),
                                target = nodes.reach_target, pole = nodes.elbow_pole, reset_pose = true }
      assert.are.equal(0, run(rig))
      assert.is_true(rig.distance < 0.05) -- reaching (the legs would bring the hips down the rest)
    end)

    it("arm with a vec3 target and pole", function()
      local target, pole = ik.vec3(), ik.vec3(-2, 0.6, -1)
      local rig = rigs.arm.new{ upper = bone("r_upper_arm"), lower = bone("r_lower_arm"),
                                hand = bone("r_hand"),
                                target = target, pole = pole, reset_pose = true }
      rig.target = { x = 0, y = 0, z = 0 } -- a host's vector, read in place
      local step = rigs.set{ rig }
      local at = ik.vec3()
      assert.are.equal(0, steady(100, 500, function()
        sc:advance(DT)
        local p = nodes.reach_target:get_position(at)
        rig.target.x, rig.target.y, rig.target.z = p.x, p.y, p.z
        step:update(DT)
      end))
      assert.is_true(rig.distance < 0.05)
    end)

    it("legs on the ground, and the pelvis", function()
      local function leg(side)
        return rigs.leg.new{ upper = bone(side .. "_upper_leg"), lower = bone(side .. "_lower_leg"),
                             foot = bone(side .. "_foot"), ground = sc.ground, foot_offset = 0.08,
                             pole = nodes.knee_pole, reset_pose = true }
      end
      local left, right = leg("l"), leg("r")
      local pelvis = rigs.leg.pelvis{ hips = bone("hips"), legs = { left, right }, reset_pose = true }
      assert.are.equal(0, run(rigs.set{ left, right, pelvis }))
      assert.is_true(left.grounded and right.grounded and pelvis.offset < 0)
    end)

    it("leg with a target node", function()
      local rig = rigs.leg.new{ upper = bone("r_upper_leg"), lower = bone("r_lower_leg"),
                                foot = bone("r_foot"),
                                target = nodes.knee_pole, reset_pose = true }
      assert.are.equal(0, run(rig))
    end)

    it("look", function()
      local rig = rigs.look.new{ neck = bone("neck"), head = bone("head"), spine = { bone("chest") },
                                 target = nodes.look_target, reset_pose = true, smooth_time = 0.1 }
      assert.are.equal(0, run(rig))
      assert.is_true(rig.iterations >= 1)
    end)

    it("look at part weight", function()
      local rig = rigs.look.new{ neck = bone("neck"), head = bone("head"), target = nodes.look_target,
                                 reset_pose = true, weight = 0.5 }
      assert.are.equal(0, run(rig))
    end)

    it("chest", function()
      local rig = rigs.chest.new{ spine = { bone("spine"), bone("chest") }, target = nodes.reach_target,
                                  reset_pose = true }
      assert.are.equal(0, run(rig))
      assert.is_true(rig.angle > 0)
    end)

    it("root, with offsets and a part weight", function()
      local rig = rigs.root.new{ hips = bone("hips"), target = nodes.look_target, offset = { 0, -1, 0 },
                                 rotation_offset = ik.quat.axis_angle({ 0, 1, 0 }, 0.3), weight = 0.7 }
      assert.are.equal(0, run(rig))
    end)

    it("walker", function()
      local w = sc.skeletons.walker
      local legs = {}
      for i, l in ipairs(sc.params.walker.legs) do
        legs[i] = { name = l.name, hip = w:bone("hip_" .. l.name), knee = w:bone("knee_" .. l.name),
                    foot = w:bone("foot_" .. l.name), pole_offset = { 0, 0, -0.5 } }
      end
      local rig = rigs.walker.new{ body = w:bone("body"), legs = legs, ground = sc.ground,
                                   body_height = sc.params.walker.body_height, step_time = 0.45,
                                   foot_offset = sc.params.walker.foot_offset, step_distance = 0.14 }
      assert.are.equal(0, run(rig))
      assert.is_true(rig:step_count() > 8) -- it walked: steps start and land allocation-free too
    end)

    it("body, walking round a circle and crouching", function()
      local bsk = require("ik.demo.body_scene").new().skeletons.humanoid
      local map = { hips = "hips", spine = "spine", chest = "chest", neck = "neck", head = "head" }
      for _, s in ipairs({ { "left", "l" }, { "right", "r" } }) do
        local side, p = s[1], s[2]
        map[side .. "Shoulder"], map[side .. "UpperArm"] = p .. "_shoulder", p .. "_upper_arm"
        map[side .. "LowerArm"], map[side .. "Hand"] = p .. "_lower_arm", p .. "_hand"
        map[side .. "UpperLeg"], map[side .. "LowerLeg"] = p .. "_upper_leg", p .. "_lower_leg"
        map[side .. "Foot"] = p .. "_foot"
      end
      local head, left, right = ik.node{}, ik.node{}, ik.node{}
      local body = rigs.body{ skeleton = bsk, map = map, foot_offset = 0.08, reset_pose = true,
                              targets = { head = head, left_hand = { target = left, rotation_weight = 0.5 },
                                          right_hand = right } }
      local at, q, up, t = ik.vec3(), ik.quat(), ik.vec3(0, 1, 0), 0
      local function frame()
        t = t + DT
        local a = 0.4 * t
        local y = 1.4 - 0.3 * (0.5 - 0.5 * math.cos(0.7 * t))
        head:set_position(at:set(math.cos(a), y, math.sin(a)))
        head:set_rotation(ik.quat.axis_angle(up, -a, q))
        left:set_position(at:set(1.3 * math.cos(a + 0.2), y - 0.4, 1.3 * math.sin(a + 0.2)))
        right:set_position(at:set(0.7 * math.cos(a + 0.2), y - 0.4, 0.7 * math.sin(a + 0.2)))
        body:update(DT)
      end
      assert.are.equal(0, steady(200, 1000, frame))
      assert.is_true(body:step_count() > 8)
    end)
  end)
end)

describe("out arguments", function()
  local function same(a, b) return rawequal(a, b) end

  it("vec3: set, add, sub, scale, normalized, cross, lerp fill and return out", function()
    local v, out = ik.vec3(1, 2, 3), ik.vec3()
    assert.is_true(same(v, v:set(4, 5, 6)) and v == ik.vec3(4, 5, 6))
    assert.is_true(same(v, v:set({ 1, 2, 3 })) and v == ik.vec3(1, 2, 3))
    assert.is_true(same(v, v:set{ x = 7, y = 8, z = 9 }) and v == ik.vec3(7, 8, 9))
    assert.is_true(v:set(1) == ik.vec3(1, 0, 0) and v:set() == ik.vec3())
    v:set(1, 2, 3)
    local w = ik.vec3(-1, 0.5, 2)
    assert.is_true(same(out, v:add(w, out)) and out == v + w)
    assert.is_true(same(out, v:sub(w, out)) and out == v - w)
    assert.is_true(same(out, v:scale(2.5, out)) and out == v * 2.5)
    assert.is_true(same(out, v:normalized(out)) and out == v:normalized())
    assert.is_true(same(out, v:cross(w, out)) and out == v:cross(w))
    assert.is_true(same(out, v:lerp(w, 0.25, out)) and out == v:lerp(w, 0.25))
    -- without out: a new vector, the operands untouched
    assert.is_false(same(v, v:add(w)) or same(w, v:add(w)))
    assert.is_true(v:add(w) == v + w and v:sub(w) == v - w and v:scale(3) == v * 3)
    assert.is_true(v == ik.vec3(1, 2, 3))
  end)

  it("vec3: out may be an operand", function()
    local v, w = ik.vec3(1, 2, 3), ik.vec3(0, 0, 1)
    v:add(w, v)
    assert.is_true(v == ik.vec3(1, 2, 4))
    v:cross(w, w) -- (1, 2, 4) x (0, 0, 1)
    assert.is_true(w == ik.vec3(2, -1, 0))
    v:normalized(v)
    assert(h.near(v:length(), 1))
  end)

  it("quat: set, mul, rotate, inverse, normalized, slerp and the constructors fill out", function()
    local q, r = ik.quat.axis_angle({ 0, 1, 0 }, 0.4), ik.quat.axis_angle({ 1, 0, 0 }, -0.7)
    local out, vout = ik.quat(), ik.vec3()
    assert.is_true(same(out, out:set(q)) and out == q)
    assert.is_true(same(out, out:set(0, 0, 0, 2)) and out == ik.quat())
    assert.is_true(out:set(q:unpack()) == q and out:set() == ik.quat())
    assert.is_true(same(out, q:mul(r, out)) and out == q * r)
    assert.is_true(q:mul(r) == q * r and q:mul({ r:unpack() }) == q * r)
    local v = ik.vec3(1, 2, 3)
    assert.is_true(same(vout, q:rotate(v, vout)) and vout == q * v and q:rotate(v) == q * v)
    assert.is_true(same(out, q:inverse(out)) and out == q:inverse())
    assert.is_true(same(out, q:normalized(out)) and out == q)
    assert.is_true(same(out, q:slerp(r, 0.3, out)) and out == q:slerp(r, 0.3))
    assert.is_true(same(out, ik.quat.axis_angle({ 0, 0, 1 }, 1, out))
      and out == ik.quat.axis_angle({ 0, 0, 1 }, 1))
    assert.is_true(same(out, ik.quat.from_to({ 1, 0, 0 }, { 0, 1, 0 }, out))
      and out == ik.quat.from_to({ 1, 0, 0 }, { 0, 1, 0 }))
    assert.is_true(same(out, ik.quat.euler(0.1, 0.2, 0.3, out)) and out == ik.quat.euler(0.1, 0.2, 0.3))
    assert.is_true(same(out, ik.quat.look_rotation({ 1, 0, 1 }, nil, out))
      and out == ik.quat.look_rotation({ 1, 0, 1 }))
    q:mul(q, q) -- out may be an operand
    assert(h.near(q:angle_to(ik.quat()), 0.8))
  end)

  it("bone and node getters fill out", function()
    local turned = ik.quat.axis_angle({ 0, 1, 0 }, 1)
    local sk = ik.skeleton{ { name = "a", position = { 1, 2, 3 }, rotation = turned },
                            { name = "b", parent = "a", position = { 0, 1, 0 } } }
    local n = ik.node{ position = { 0, 0, 1 }, parent = sk:bone("b") }
    local v, q = ik.vec3(), ik.quat()
    for _, t in ipairs{ sk:bone("b"), n } do
      for _, get in ipairs{ "get_position", "get_local_position" } do
        assert.is_true(same(v, t[get](t, v)) and v == t[get](t))
      end
      for _, get in ipairs{ "get_rotation", "get_local_rotation" } do
        assert.is_true(same(q, t[get](t, q)) and q == t[get](t))
      end
    end
  end)

  it("ground:raycast fills point_out and normal_out on a hit, leaves them on a miss", function()
    local g = ik.ground.plane{ point = { 0, 1, 0 } }
    local p, nrm = ik.vec3(9, 9, 9), ik.vec3(9, 9, 9)
    local hit, point, normal, distance = g:raycast({ 2, 5, 0 }, { 0, -1, 0 }, 10, p, nrm)
    assert.is_true(hit and same(point, p) and same(normal, nrm) and distance == 4)
    assert.is_true(p == ik.vec3(2, 1, 0) and nrm == ik.vec3(0, 1, 0))
    assert.is_false(g:raycast({ 2, 5, 0 }, { 0, 1, 0 }, 10, p, nrm))
    assert.is_true(p == ik.vec3(2, 1, 0))
    hit, point = g:raycast({ 2, 5, 0 }, { 0, -1, 0 }, 10, nil, nrm) -- either may be left out
    assert.is_true(hit and not same(point, p) and point == p)
  end)

  it("foot:update fills position_out and rotation_out", function()
    local foot = ik.foot{ ground = ik.ground.plane(), foot_offset = 0.1, smooth_time = 0 }
    local p, q = ik.vec3(), ik.quat()
    local position, rotation, grounded = foot:update({ 0, 0.05, 0 }, ik.quat(), DT, p, q)
    assert.is_true(grounded and same(position, p) and same(rotation, q))
    assert(h.near(p.y, 0.1))
  end)

  it("tree:solve, tree:joint and tree:target allocate nothing", function()
    local tree = ik.tree{
      positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0.3, 1.5, 0 }, { 0.3, 2, 0 }, { -0.3, 1.5, 0 },
                    { -0.3, 2, 0 } },
      parents = { 0, 1, 2, 3, 2, 5 }, deterministic = false,
    }
    local a, b, out = ik.vec3(0.6, 1.8, 0.2), ik.vec3(-0.5, 1.7, -0.2), ik.vec3()
    local n = 0
    assert.are.equal(0, steady(10, 200, function()
      n = n + 1
      a:set(0.6 + 0.1 * math.sin(n * 0.1), 1.8, 0.2)
      tree:solve(a, b)
      tree:joint(4, out)
      tree:target(1, out)
      tree:result(2)
    end))
    assert.is_true(tree:solve(a, b))
  end)

  it("allocate nothing", function()
    local v, w, out = ik.vec3(1, 2, 3), ik.vec3(0, 1, 0), ik.vec3()
    local q, qout = ik.quat.axis_angle({ 0, 1, 0 }, 0.4), ik.quat()
    local b = ik.skeleton{ { name = "a", position = { 1, 2, 3 } } }:bone("a")
    local g, down = ik.ground.plane(), ik.vec3(0, -1, 0)
    local foot = ik.foot{ ground = g }
    assert.are.equal(0, steady(10, 200, function()
      v:add(w, out):sub(w, out):scale(2, out):normalized(out)
      v:cross(w, out):lerp(w, 0.5, out):set(out)
      q:mul(q, qout):inverse(qout):normalized(qout):slerp(q, 0.5, qout):rotate(v, out)
      ik.quat.axis_angle(w, 1, qout)
      ik.quat.from_to(v, w, qout)
      ik.quat.euler(0.1, 0.2, 0.3, qout)
      b:get_position(out)
      b:get_rotation(qout)
      g:raycast(v, down, 10, out, w)
      foot:update(v, q, DT, out, qout)
    end))
  end)

  it("raise, in Lua's words, for an out of the wrong type", function()
    local v = ik.vec3(1, 2, 3)
    assert(h.raises(function() local _ = v:normalized({}) end,
      "bad argument #1 to 'normalized' (ik.vec3 expected, got table)"))
    assert(h.raises(function() local _ = v:add(v, ik.quat()) end,
      "bad argument #2 to 'add' (ik.vec3 expected, got ik.quat)"))
    assert(h.raises(function() local _ = v:scale(2, 3) end,
      "bad argument #2 to 'scale' (ik.vec3 expected, got number)"))
    assert(h.raises(function() local _ = v:sub("x") end,
      "bad argument #1 to 'sub' (vec3 expected, got string)"))
    assert(h.raises(function() local _ = v:set(1, "y") end,
      "bad argument #2 to 'set' (number expected, got string)"))
    assert(h.raises(function() local _ = v:set(ik.quat()) end,
      "bad argument #1 to 'set' (vec3 expected, got ik.quat)"))
    assert(h.raises(function() local _ = v:set(math.huge, 0, 0) end,
      "bad argument #1 to 'set' (finite number expected"))
    local q = ik.quat()
    assert(h.raises(function() local _ = q:mul(q, v) end,
      "bad argument #2 to 'mul' (ik.quat expected, got ik.vec3)"))
    assert(h.raises(function() local _ = q:rotate(v, q) end,
      "bad argument #2 to 'rotate' (ik.vec3 expected, got ik.quat)"))
    assert(h.raises(function() local _ = q:set("q") end,
      "bad argument #1 to 'set' (quat expected, got string)"))
    assert(h.raises(function() local _ = ik.quat.axis_angle({ 0, 1, 0 }, 1, v) end,
      "bad argument #3 to 'axis_angle' (ik.quat expected, got ik.vec3)"))
    local b = ik.skeleton{ { name = "a" } }:bone("a")
    assert(h.raises(function() local _ = b:get_position(q) end,
      "bad argument #1 to 'get_position' (ik.vec3 expected, got ik.quat)"))
    assert(h.raises(function() local _ = b:get_rotation({}) end,
      "bad argument #1 to 'get_rotation' (ik.quat expected, got table)"))
    local g = ik.ground.plane()
    assert(h.raises(function() local _ = g:raycast(v, { 0, -1, 0 }, 10, {}) end,
      "bad argument #4 to 'raycast' (ik.vec3 expected, got table)"))
    local foot = ik.foot{ ground = g }
    assert(h.raises(function() local _ = foot:update(v, q, DT, v, v) end,
      "bad argument #5 to 'update' (ik.quat expected, got ik.vec3)"))
    assert.is_true(v == ik.vec3(1, 2, 3)) -- a refused call changed nothing
  end)
end)
