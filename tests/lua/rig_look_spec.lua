-- ik.rigs.look on an ik.skeleton and on plain-Lua host transforms: the head's forward
-- axis on targets inside the limits (within 1e-3 rad), stopped at the limit outside
-- them with every bone within its own limit, the turn spread by the weights, no flip for
-- a target crossing straight behind (and a check that the same path does flip a head
-- without hysteresis, so that test can fail), the body turned, another forward axis,
-- the weight, and the option errors.
local ik = require("ik")
local R = require("rig_helper")
local look = require("ik.rigs.look")

local DT = 1 / 60
local rad, deg, pi = math.rad, math.deg, math.pi
local atan2 = math.atan2 or math.atan

-- A spine on `host` and a look rig over the parts named in `parts` ("spine", "neck";
-- the head always), its target a free transform.
local function setup(host, parts, options)
  local b = R.build(host, R.SPINE)
  local target = R.node(host, R.pos(b.head) + ik.vec3(0, 0, 2))
  local o = { head = b.head, target = target, reset_pose = true }
  for _, part in ipairs(parts or {}) do
    if part == "spine" then o.spine = { b.spine1, b.spine2, b.spine3 } else o[part] = b[part] end
  end
  for k, v in pairs(options or {}) do o[k] = v end
  return b, look.new(o), target
end

-- Puts the target `distance` from the head at yaw (about +Y, towards +X) and pitch
-- (towards +Y), measured in the frame of `frame` (a rotation; identity by default).
local function aim_at(b, target, yaw, pitch, frame)
  local dir = ik.vec3(math.cos(pitch) * math.sin(yaw), math.sin(pitch), math.cos(pitch) * math.cos(yaw))
  target:set_position(R.pos(b.head) + (frame or ik.quat()) * dir * 2)
end

local function forward(b) return R.rot(b.head) * ik.vec3(0, 0, 1) end

-- The head's forward's angle from the direction to the target.
local function aim_error(b, target)
  return R.angle(forward(b), (R.pos(target) - R.pos(b.head)):normalized())
end

-- The head's yaw in the world, towards +X.
local function head_yaw(b)
  local f = forward(b)
  return atan2(f.x, f.z)
end

for _, host in ipairs(R.HOSTS) do
  describe("ik.rigs.look on " .. host, function()
    it("points the head's forward axis at targets inside the limits", function()
      for _, parts in ipairs{ {}, { "neck" }, { "spine", "neck" } } do
        local b, rig, target = setup(host, parts)
        local limit = rad(60) + (#parts > 0 and rad(40) or 0) + (#parts > 1 and rad(60) or 0)
        limit = math.min(limit, pi - rad(30))
        local n = 0
        for yaw = -170, 170, 17 do
          for pitch = -50, 50, 20 do
            local cos_angle = math.cos(rad(pitch)) * math.cos(rad(yaw))
            if math.acos(cos_angle) < 0.9 * limit then
              aim_at(b, target, rad(yaw), rad(pitch))
              rig:update(DT)
              local e = aim_error(b, target)
              assert.is_true(e <= 1e-3, string.format("%d parts, yaw %d pitch %d: off by %g rad", #parts, yaw,
                pitch, e))
              assert.is_false(rig.clamped)
              n = n + 1
            end
          end
        end
        assert.is_true(n > 10)
      end
    end)

    it("stops at the limit outside it, each bone within its own", function()
      local b, rig, target = setup(host) -- the head alone: 60 degrees
      for _, t in ipairs{ { 120, 0 }, { -100, 0 }, { 0, 85 }, { 70, 40 }, { 150, -30 } } do
        aim_at(b, target, rad(t[1]), rad(t[2]))
        rig:update(DT)
        assert.is_true(rig.clamped)
        local turned = R.angle(forward(b), ik.vec3(0, 0, 1))
        assert.is_true(math.abs(turned - rad(60)) <= 1e-3, string.format("yaw %d pitch %d: turned %g degrees",
          t[1], t[2], deg(turned)))
        -- towards the target's side
        if t[1] ~= 0 then assert.is_true(head_yaw(b) * t[1] > 0) end
      end

      local limits = { spine = rad(10), neck = rad(30), head = rad(50) }
      local b2, rig2, target2 = setup(host, { "spine", "neck" }, { limits = limits })
      aim_at(b2, target2, rad(150), rad(10))
      rig2:update(DT)
      local turned = R.angle(forward(b2), ik.vec3(0, 0, 1))
      assert.is_true(math.abs(turned - rad(110)) <= 1e-3, "turned " .. deg(turned))
      for name, limit in pairs{ spine1 = limits.spine, spine2 = limits.spine, spine3 = limits.spine,
        neck = limits.neck, head = limits.head } do
        local a = ik.quat(b2[name]:get_local_rotation()):angle_to(ik.quat())
        assert.is_true(a <= limit + R.TOL, name .. " turned " .. deg(a))
        assert.is_true(a >= limit - R.FINE, name .. " should be at its limit, turned " .. deg(a))
      end
    end)

    it("spreads the turn by the weights", function()
      local b, rig, target = setup(host, { "spine", "neck" })
      aim_at(b, target, rad(40), 0)
      rig:update(DT)
      local expect = { spine1 = 8 / 3, spine2 = 8 / 3, spine3 = 8 / 3, neck = 12, head = 20 }
      for name, degrees in pairs(expect) do
        local a = ik.quat(b[name]:get_local_rotation()):angle_to(ik.quat())
        assert.is_true(math.abs(deg(a) - degrees) < R.FINE, name .. " turned " .. deg(a))
      end

      local b2, rig2, target2 = setup(host, { "neck" }, { weights = { neck = 1, head = 3 } })
      aim_at(b2, target2, rad(40), 0)
      rig2:update(DT)
      assert.is_true(math.abs(deg(ik.quat(b2.neck:get_local_rotation()):angle_to(ik.quat())) - 10) < R.FINE)
      assert.is_true(aim_error(b2, target2) <= 1e-3)
    end)

    -- The target goes from 150 degrees to one side round behind the head to 155 to the
    -- other side (25 degrees past straight behind) and back, a degree a frame.
    local function circle_behind(options)
      local b, rig, target = setup(host, nil, options)
      local yaws = {}
      for y = 150, 205 do yaws[#yaws + 1] = y end
      for y = 204, 150, -1 do yaws[#yaws + 1] = y end
      aim_at(b, target, rad(150), 0)
      rig:update(DT)
      local worst, side_changes, last = 0, 0, head_yaw(b)
      for _, y in ipairs(yaws) do
        aim_at(b, target, rad(y), 0)
        rig:update(DT)
        local now = head_yaw(b)
        worst = math.max(worst, math.abs(now - last))
        if now * last < 0 then side_changes = side_changes + 1 end
        last = now
      end
      return worst, side_changes, b, rig, target
    end

    it("does not flip for a target crossing behind the head", function()
      local worst, changes, b, rig, target = circle_behind()
      assert.are.equal(0, changes)
      assert.is_true(worst < rad(1), "the head jumped " .. deg(worst) .. " degrees in a frame")
      assert.is_true(math.abs(head_yaw(b) - rad(60)) < 1e-3) -- still over the left shoulder
      -- on round to the front on the other side: the head changes side once, and then
      -- follows the target again
      for y = 150, 310 do
        aim_at(b, target, rad(y), 0)
        rig:update(DT)
      end
      assert.is_true(aim_error(b, target) <= 1e-3)
    end)

    it("(the same path flips a head without hysteresis)", function()
      local worst, changes = circle_behind{ hysteresis = 0 }
      assert.is_true(changes > 0 and worst > rad(90))
    end)

    it("swings rather than snaps when it changes side with smooth_time", function()
      local b, rig, target = setup(host, nil, { smooth_time = 0.1 })
      aim_at(b, target, rad(150), 0)
      for _ = 1, 60 do rig:update(DT) end
      local worst, last = 0, head_yaw(b)
      for y = 150, 320 do -- round behind to the front on the other side
        aim_at(b, target, rad(y), 0)
        rig:update(DT)
        local now = head_yaw(b)
        worst = math.max(worst, math.abs(now - last))
        last = now
      end
      for _ = 1, 60 do rig:update(DT) end
      assert.is_true(worst < rad(15), "the head turned " .. deg(worst) .. " degrees in a frame")
      assert.is_true(aim_error(b, target) <= 1e-3)
    end)

    it("works with the body turned", function()
      local b, rig, target = setup(host, { "spine", "neck" })
      local body = ik.quat.axis_angle({ 0, 1, 0 }, rad(90)) * ik.quat.axis_angle({ 1, 0, 0 }, rad(10))
      b.hips:set_rotation(body) -- facing +X, leaning forward
      aim_at(b, target, rad(50), rad(20), body)
      rig:update(DT)
      assert.is_true(aim_error(b, target) <= 1e-3)
      -- straight behind the turned body: turned to the limit, not stuck
      aim_at(b, target, rad(180), 0, body)
      rig:update(DT)
      assert.is_true(math.abs(rig.angle - (pi - rad(30))) <= 1e-3)
    end)

    it("takes another forward axis", function()
      local b = R.build(host, R.SPINE)
      local target = R.node(host, R.pos(b.head) + ik.vec3(1, 0.5, -1))
      local rig = look.new{ head = b.head, target = target, forward = { 1, 0, 0 },
        limits = { head = rad(90) } }
      rig:update(DT)
      local f = R.rot(b.head) * ik.vec3(1, 0, 0)
      assert.is_true(R.angle(f, (R.pos(target) - R.pos(b.head)):normalized()) <= 1e-3)
    end)

    it("turns part of the way at a part weight", function()
      local b, rig, target = setup(host, nil, { weight = 0.5 })
      aim_at(b, target, rad(40), 0)
      rig:update(DT)
      assert.is_true(math.abs(deg(rig.angle) - 20) < R.FINE)
    end)

    it("says what is wrong with its options", function()
      local b = R.build(host, R.SPINE)
      local t = R.node(host, { 0, 2, 2 })
      assert(R.raises(function() look.new{ target = t } end,
        "ik.rigs.look: option 'head' (transform expected, got nil)"))
      assert(R.raises(function() look.new{ head = b.head, target = t, weights = { chest = 1 } } end,
        "ik.rigs.look: option 'weights' (no entry 'chest'"))
      assert(R.raises(function() look.new{ head = b.head, target = t, limits = { head = -1 } } end,
        "ik.rigs.look: option 'limits' (entry 'head': non-negative number expected, got -1)"))
      assert(R.raises(function()
        look.new{ head = b.head, target = t, spine = { b.spine1 }, limits = { spine = { 1, 2 } } }
      end, "ik.rigs.look: option 'limits' (entry 'spine': 1 numbers expected, got 2)"))
      assert(R.raises(function() look.new{ head = b.head, target = t, forward = { 0, 2, 0 } } end,
        "ik.rigs.look: options 'forward' and 'up'"))
      assert(R.raises(function() look.new{ head = b.head, target = t, weights = { head = 0 } } end,
        "ik.rigs.look: option 'weights' (at least one positive share expected"))
    end)
  end)
end
