-- ik.rigs.root on an ik.skeleton and on plain-Lua host transforms: the hips follow
-- the target smoothly (partway after one frame, there after a while, never past it),
-- the same path at 30, 60 and 144 Hz for a moving and turning target (and a check that a
-- per-frame exponential blend, which is not frame-rate independent, fails the same
-- comparison, so that test can fail), the offsets, smooth_time 0, snap, the weight.
local ik = require("ik")
local R = require("rig_helper")
local root = require("ik.rigs.root")

local DT = 1 / 60

local function setup(host, options)
  local b = R.build(host, R.SPINE)
  local target = R.node(host, { 0, 1, 0 })
  local o = { hips = b.hips, target = target }
  for k, v in pairs(options or {}) do o[k] = v end
  return b, root.new(o), target
end

-- The target's pose at time t: along +X and round a circle, turning about +Y and
-- rocking about +X.
local function target_at(t)
  local p = ik.vec3(0.8 * t + 0.3 * math.sin(3 * t), 1 + 0.1 * math.sin(5 * t), 0.3 * math.cos(3 * t))
  local q = ik.quat.axis_angle({ 0, 1, 0 }, 2 * t) * ik.quat.axis_angle({ 1, 0, 0 }, 0.4 * math.sin(4 * t))
  return p, q
end

for _, host in ipairs(R.HOSTS) do
  describe("ik.rigs.root on " .. host, function()
    it("follows the target with smoothing, never past it", function()
      local b, rig, target = setup(host, { smooth_time = 0.1 })
      target:set_position{ 1, 1, 0 }
      target:set_rotation(ik.quat.axis_angle({ 0, 1, 0 }, 1))
      rig:update(DT)
      local x = R.pos(b.hips).x
      assert.is_true(x > 0 and x < 0.1, "after one frame the hips are at x = " .. x)
      local turned = R.rot(b.hips):angle_to(ik.quat())
      assert.is_true(turned > 0 and turned < 0.1)
      local last_x, last_turn = x, turned
      for _ = 1, 119 do
        rig:update(DT)
        local now_x, now_turn = R.pos(b.hips).x, R.rot(b.hips):angle_to(ik.quat())
        assert.is_true(now_x >= last_x and now_x <= 1 + R.TOL)
        assert.is_true(now_turn >= last_turn - R.TOL and now_turn <= 1 + R.TOL)
        last_x, last_turn = now_x, now_turn
      end
      assert.is_true((R.pos(b.hips) - ik.vec3(1, 1, 0)):length() < 1e-4)
      assert.is_true(R.rot(b.hips):angle_to(R.rot(target)) < 1e-4)
      -- the head (a child) went along
      assert.is_true(math.abs(R.pos(b.head).x - 1) < 1e-4)
    end)

    local function follow(hz, step)
      local b, rig, target = setup(host, { smooth_time = 0.15, rotation_smooth_time = 0.1 })
      local p, q = target_at(0)
      target:set_position(p)
      target:set_rotation(q)
      local dt = 1 / hz
      for i = 1, hz do
        p, q = target_at(i * dt)
        target:set_position(p)
        target:set_rotation(q)
        if step then step(rig, b, target, dt) else rig:update(dt) end
      end
      return R.pos(b.hips), R.rot(b.hips), target
    end

    it("follows the same path at 30, 60 and 144 Hz", function()
      local p60, q60, target = follow(60)
      assert.is_true((p60 - R.pos(target)):length() > 0.05) -- lagging, not on the target
      for _, hz in ipairs{ 30, 144 } do
        local p, q = follow(hz)
        assert.is_true((p - p60):length() <= 1e-3, hz .. " Hz: " .. (p - p60):length() .. " apart")
        assert.is_true(q:angle_to(q60) <= 1e-3, hz .. " Hz: " .. q:angle_to(q60) .. " rad apart")
      end
    end)

    -- Twice round a circle of radius 0.5 a second: 24 degrees of it between frames at
    -- 30 Hz. A goal taken along the chords of the circle left the hips on a polygon,
    -- 5.2e-3 inside a 2,880 Hz run at 30 Hz (the chords' sag, as the frame squared).
    local function circling(hz, smooth_time)
      local b, rig, target = setup(host, { smooth_time = smooth_time or 0.1 })
      local function at(t) return { 0.5 * math.cos(4 * math.pi * t), 1, 0.5 * math.sin(4 * math.pi * t) } end
      for f = 0, hz do
        target:set_position(at(f / hz))
        rig:update(f == 0 and 0 or 1 / hz)
      end
      return R.pos(b.hips)
    end

    it("follows a fast-circling target the same at 30, 60 and 144 Hz", function()
      local fine = circling(2880)
      for _, hz in ipairs{ 30, 60, 144 } do
        local apart = (circling(hz) - fine):length()
        assert.is_true(apart <= 1e-3, hz .. " Hz: " .. apart .. " from 2,880 Hz's")
      end
    end)

    it("does not carry on past a target that stops dead", function()
      for _, smooth_time in ipairs{ 0.1, 0.02, 0.005 } do
        local b, rig, target = setup(host, { smooth_time = smooth_time })
        local furthest = -1
        for f = 0, 60 do
          target:set_position{ math.min(f / 30, 0.5), 1, 0 }
          rig:update(f == 0 and 0 or 1 / 30)
          furthest = math.max(furthest, R.pos(b.hips).x)
        end
        assert.is_true(furthest <= 0.5 + R.TOL, smooth_time .. ": the hips went to x = " .. furthest)
      end
    end)

    it("(a per-frame exponential blend is not frame-rate independent)", function()
      local function naive(rig, b, target)
        b.hips:set_position(R.pos(b.hips):lerp(R.pos(target), 0.1))
        b.hips:set_rotation(R.rot(b.hips):slerp(R.rot(target), 0.1))
        return rig
      end
      local p30 = follow(30, naive)
      local p144 = follow(144, naive)
      assert.is_true((p30 - p144):length() > 1e-3)
    end)

    it("applies the offsets in the target's space", function()
      local turn = ik.quat.axis_angle({ 0, 1, 0 }, math.pi / 2)
      local b, rig, target = setup(host, { smooth_time = 0, offset = { 0, 0, 0.5 },
        rotation_offset = ik.quat.axis_angle({ 1, 0, 0 }, 0.2) })
      target:set_position{ 2, 1, 0 }
      target:set_rotation(turn)
      rig:update(DT)
      assert.is_true((R.pos(b.hips) - ik.vec3(2.5, 1, 0)):length() < R.TOL) -- +Z turned to +X
      assert.is_true(R.rot(b.hips):angle_to(turn * ik.quat.axis_angle({ 1, 0, 0 }, 0.2)) < R.FINE)
    end)

    it("follows only what it is told to", function()
      local b, rig, target = setup(host, { smooth_time = 0, rotation = false })
      target:set_position{ 1, 2, 3 }
      target:set_rotation(ik.quat.axis_angle({ 0, 1, 0 }, 1))
      rig:update(DT)
      assert.is_true((R.pos(b.hips) - ik.vec3(1, 2, 3)):length() < R.TOL)
      assert.is_true(R.rot(b.hips):angle_to(ik.quat()) < R.TOL)
    end)

    it("snaps", function()
      local b, rig, target = setup(host)
      rig:update(DT)
      target:set_position{ 5, 1, 5 }
      rig:snap()
      assert.is_true((R.pos(b.hips) - ik.vec3(5, 1, 5)):length() < R.TOL)
      rig:update(DT)
      assert.is_true((R.pos(b.hips) - ik.vec3(5, 1, 5)):length() < R.TOL) -- nothing left in the spring
    end)

    it("blends by the weight", function()
      local b, rig, target = setup(host, { smooth_time = 0, weight = 0.5, reset_pose = true })
      target:set_position{ 1, 1, 0 }
      rig:update(DT)
      assert.is_true((R.pos(b.hips) - ik.vec3(0.5, 1, 0)):length() < R.TOL)
    end)

    it("says what is wrong with its options", function()
      local b = R.build(host, R.SPINE)
      assert(R.raises(function() root.new{ hips = b.hips } end,
        "ik.rigs.root: option 'target' (transform expected, got nil)"))
      assert(R.raises(function() root.new{ hips = b.hips, target = b.head, smooth_time = -1 } end,
        "ik.rigs.root: option 'smooth_time' (non-negative number expected, got -1)"))
      assert(R.raises(function() root.new{ hips = b.hips, target = b.head, offset = "up" } end,
        "ik.rigs.root: option 'offset' (non-zero vec3 expected, got \"up\")"))
    end)
  end)
end
