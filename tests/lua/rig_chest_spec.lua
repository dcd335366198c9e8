-- ik.rigs.chest on an ik.skeleton and on plain-Lua host transforms: the bend spread over
-- the spine (each bone turns its share, about one axis), none beyond max_angle in all,
-- the chest's up axis on the target when within it, custom shares, the body turned, and
-- the option errors.
local ik = require("ik")
local R = require("rig_helper")
local chest = require("ik.rigs.chest")

local DT = 1 / 60
local rad, deg = math.rad, math.deg

local function setup(host, options)
  local b = R.build(host, R.SPINE)
  local spine = { b.spine1, b.spine2, b.spine3 }
  local target = R.node(host, R.pos(b.spine1) + ik.vec3(0, 1, 0))
  local o = { spine = spine, target = target, reset_pose = true }
  for k, v in pairs(options or {}) do o[k] = v end
  return b, chest.new(o), target, spine
end

local function turned(bone) return ik.quat(bone:get_local_rotation()):angle_to(ik.quat()) end

-- Puts the target 1 m from the spine's root at `angle` from its up axis, leaning
-- towards `towards` (a horizontal direction), in the frame `frame`.
local function lean(b, target, angle, towards, frame)
  local dir = ik.vec3(0, math.cos(angle), 0) + ik.vec3(towards):normalized() * math.sin(angle)
  target:set_position(R.pos(b.spine1) + (frame or ik.quat()) * dir)
end

for _, host in ipairs(R.HOSTS) do
  describe("ik.rigs.chest on " .. host, function()
    it("spreads the bend over the spine bones", function()
      local b, rig, target, spine = setup(host)
      lean(b, target, rad(30), { 1, 0, 1 })
      rig:update(DT)
      for i, bone in ipairs(spine) do
        local a = deg(turned(bone))
        assert.is_true(math.abs(a - 10) < R.FINE, "bone " .. i .. " turned " .. a)
      end
      assert.is_true(math.abs(deg(rig.angle) - 30) < R.FINE)
      -- the chest's up axis now points at the target from the spine's root
      local up = R.rot(b.spine3) * ik.vec3(0, 1, 0)
      assert.is_true(R.angle(up, (R.pos(target) - R.pos(b.spine1)):normalized()) < R.FINE)
      -- and the bones above did not turn on their own
      assert.is_true(turned(b.neck) < R.TOL and turned(b.head) < R.TOL)
    end)

    it("bends no more than max_angle", function()
      local b, rig, target, spine = setup(host, { max_angle = rad(24) })
      for _, angle in ipairs{ 30, 90, 150 } do
        lean(b, target, rad(angle), { 0, 0, -1 })
        rig:update(DT)
        assert.is_true(math.abs(deg(rig.angle) - 24) < R.FINE)
        local total = R.angle(R.rot(b.spine3) * ik.vec3(0, 1, 0), ik.vec3(0, 1, 0))
        assert.is_true(total <= rad(24) + R.TOL, "bent " .. deg(total))
        for _, bone in ipairs(spine) do assert.is_true(math.abs(deg(turned(bone)) - 8) < R.FINE) end
      end
    end)

    it("takes its shares from weights", function()
      local b, rig, target, spine = setup(host, { weights = { 1, 2, 3 } })
      lean(b, target, rad(36), { -1, 0, 0 })
      rig:update(DT)
      for i, bone in ipairs(spine) do
        assert.is_true(math.abs(deg(turned(bone)) - 6 * i) < R.FINE)
      end
    end)

    it("bends towards the target with the body turned", function()
      local b, rig, target = setup(host)
      local body = ik.quat.axis_angle({ 0, 1, 0 }, rad(135))
      b.hips:set_rotation(body)
      lean(b, target, rad(20), { 0, 0, 1 }, body) -- forward for the turned body
      rig:update(DT)
      local up = R.rot(b.spine3) * ik.vec3(0, 1, 0)
      assert.is_true(R.angle(up, (R.pos(target) - R.pos(b.spine1)):normalized()) < R.FINE)
      -- leaning the body's way: towards its forward, not the world's
      local forward = body * ik.vec3(0, 0, 1)
      assert.is_true(up:dot(forward) > 0.3)
    end)

    it("says what is wrong with its options", function()
      local b = R.build(host, R.SPINE)
      local t = R.node(host, { 0, 3, 0 })
      assert(R.raises(function() chest.new{ target = t } end,
        "ik.rigs.chest: option 'spine' (list of transforms expected, got nil)"))
      assert(R.raises(function() chest.new{ spine = { b.spine1, 7 }, target = t } end,
        "ik.rigs.chest: option 'spine' (item 2: transform expected, got 7)"))
      assert(R.raises(function() chest.new{ spine = { b.spine1 }, target = t, weights = { 1, 2 } } end,
        "ik.rigs.chest: option 'weights' (1 numbers expected, got 2)"))
    end)
  end)
end
