-- ik.rigs.leg and its pelvis, on an ik.skeleton and on plain-Lua host transforms, over
-- the test course (tests/lua/terrain.lua): planted feet on flat ground, on stairs
-- (also straddling a step) and on the 20 degree slope are foot_offset from the surface
-- (within 1e-3) and turned to its normal; a swinging foot is left where the animation
-- has it; the pelvis drops by the lowest foot's deficit; a walk down the stairs gives
-- the same pose at 30, 60 and 144 Hz after one second; a leg without ground reaches its
-- target with the knee towards the pole; a host's own ground object works.
local ik = require("ik")
local R = require("rig_helper")
local terrain = require("terrain")
local legs = require("ik.rigs.leg")

local DT = 1 / 60
local OFFSET = 0.08
local TURN = ik.quat.axis_angle({ 0, 1, 0 }, math.pi / 2) -- +X to -Z: feet side by side along z

-- Two legs on `host` with the root at `position` (turned by `rotation`), each with a
-- leg rig on `ground`; the pole in front of the knee, parented to the hips.
local function setup(host, position, rotation, ground, options)
  local b = R.build(host, R.legs_spec())
  b.root:set_position(position)
  b.root:set_rotation(rotation or ik.quat())
  local rigs = {}
  for _, side in ipairs{ "l", "r" } do
    local hip = R.pos(b[side .. "_thigh"])
    local o = {
      upper = b[side .. "_thigh"], lower = b[side .. "_shin"], foot = b[side .. "_foot"],
      ground = ground, foot_offset = OFFSET,
      pole = R.node(host, hip + R.rot(b.hips) * ik.vec3(0, -0.4, 1), nil, b.hips),
    }
    for k, v in pairs(options or {}) do o[k] = v end
    rigs[side] = legs.new(o)
  end
  return b, rigs
end

-- The foot's distance from the course along its normal, and the angle between the foot's
-- up axis and that normal.
local function on_course(foot)
  local p = R.pos(foot)
  local h = terrain.height(p.x, p.z)
  local n = ik.vec3(terrain.normal(p.x, p.z))
  local distance = (p - ik.vec3(p.x, h, p.z)):dot(n)
  local up = R.rot(foot) * ik.vec3(0, 1, 0)
  return distance, R.angle(up, n)
end

for _, host in ipairs(R.HOSTS) do
  describe("ik.rigs.leg on " .. host, function()
    local ground = terrain.ground()

    local function planted(where, position, rotation)
      local b, rigs = setup(host, position, rotation, ground)
      for _, side in ipairs{ "l", "r" } do
        local rig = rigs[side]
        rig:update(DT)
        assert.is_true(rig.grounded, where .. ": " .. side .. " foot not grounded")
        assert.is_true(rig.reached, where .. ": " .. side .. " foot not reached")
        local distance, tilt = on_course(b[side .. "_foot"])
        assert.is_true(math.abs(distance - OFFSET) <= 1e-3,
          string.format("%s: %s foot %g from the surface", where, side, distance))
        assert.is_true(tilt <= 1e-3, string.format("%s: %s foot %g rad off the normal", where, side, tilt))
      end
    end

    it("plants the feet on flat ground", function()
      planted("flat", ik.vec3(0, -0.03, 0)) -- the animated soles 3 cm in the floor
      planted("flat, turned", ik.vec3(0.5, -0.05, -1), TURN)
    end)

    it("plants the feet on the stairs, also across a step", function()
      for k = 1, terrain.STEPS do
        local z = terrain.STAIRS_Z + (k - 0.5) * terrain.RUN
        planted("tread " .. k, ik.vec3(0, k * terrain.RISE - 0.03, z))
      end
      -- feet side by side along z, one each side of the edge between treads 1 and 2
      planted("across a step", ik.vec3(0, terrain.RISE - 0.03, terrain.STAIRS_Z + terrain.RUN), TURN)
    end)

    it("plants the feet on the 20 degree slope, turned to it", function()
      local z = terrain.SLOPE_Z + 1.5
      planted("slope", ik.vec3(0, terrain.height(0, z) - 0.03, z))
      planted("slope, turned", ik.vec3(0, terrain.height(0, z) - 0.05, z), TURN)
    end)

    it("leaves a swinging foot where the animation has it", function()
      local b, rigs = setup(host, ik.vec3(0, 0.3, 0), nil, ground) -- feet 0.3 up
      local foot = b.l_foot
      local p, q = R.pos(foot), R.rot(foot)
      rigs.l:update(DT)
      assert.is_false(rigs.l.grounded)
      assert.is_true((R.pos(foot) - p):length() < R.TOL)
      assert.is_true(R.rot(foot):angle_to(q) < R.FINE)
    end)

    it("moves a target transform given with ground to where the foot goes", function()
      local b, rigs = setup(host, ik.vec3(0, -0.03, 0), nil, ground,
        { target = R.node(host, { 0, 0, 0 }) })
      rigs.l:update(DT)
      assert.is_true((R.pos(rigs.l.target) - R.pos(b.l_foot)):length() < 1e-3)
      assert.is_true(math.abs(R.pos(rigs.l.target).y - OFFSET) < R.TOL)
    end)

    it("takes a host's own ground object", function()
      local b, rigs = setup(host, ik.vec3(0, -0.03, 0), nil, terrain.flat_ground(0))
      rigs.r:update(DT)
      assert.is_true(rigs.r.grounded)
      assert.is_true(math.abs(R.pos(b.r_foot).y - OFFSET) <= 1e-3)
    end)

    it("has the pelvis drop by the lowest foot's deficit", function()
      -- feet side by side across the edge between treads 1 and 2, the animation at the
      -- upper tread: the lower foot's ground is 0.1 below it
      local b, rigs = setup(host, ik.vec3(0, 2 * terrain.RISE, terrain.STAIRS_Z + terrain.RUN), TURN, ground,
        { reset_pose = true })
      local hips_animated = R.pos(b.hips)
      assert.is_true(math.abs(rigs.l:deficit() + terrain.RISE) < R.TOL)
      assert.is_true(math.abs(rigs.r:deficit()) < R.TOL)
      local pelvis = legs.pelvis{ hips = b.hips, legs = { rigs.l, rigs.r }, reset_pose = true }
      local set = require("ik.rigs").set{ rigs.l, rigs.r, pelvis }
      for _ = 1, 60 do set:update(DT) end
      assert.is_true(math.abs(pelvis.offset + terrain.RISE) < R.TOL)
      assert.is_true((R.pos(b.hips) - (hips_animated - ik.vec3(0, terrain.RISE, 0))):length() < R.TOL)
      for _, side in ipairs{ "l", "r" } do
        local distance, tilt = on_course(b[side .. "_foot"])
        assert.is_true(math.abs(distance - OFFSET) <= 1e-3, side .. " foot " .. distance .. " from its tread")
        assert.is_true(tilt <= 1e-3)
      end
    end)

    it("walks down the stairs to the same pose at 30, 60 and 144 Hz", function()
      local function walk(hz)
        local b, rigs = setup(host, ik.vec3(0, 0, 0), TURN, ground, { reset_pose = true, weight = 0 })
        local pelvis = legs.pelvis{ hips = b.hips, legs = { rigs.l, rigs.r }, reset_pose = true }
        local set = require("ik.rigs").set{ pelvis, rigs.r, rigs.l }
        rigs.l.weight, rigs.r.weight = 1, 1 -- fading in over the first 0.2 s
        local dt = 1 / hz
        for i = 1, hz do
          local z = 2.95 - 0.4 * i * dt
          -- the animation: the body glides down along the stairs' mean slope
          b.root:set_position{ 0, 0.25 * (z - terrain.STAIRS_Z) + 0.05, z }
          set:update(dt)
        end
        return { R.pos(b.hips), R.pos(b.l_foot), R.pos(b.r_foot) }
      end
      local at60 = walk(60)
      for _, hz in ipairs{ 30, 144 } do
        local other = walk(hz)
        for i, name in ipairs{ "hips", "left foot", "right foot" } do
          local d = (other[i] - at60[i]):length()
          assert.is_true(d <= 1e-3, string.format("%s %g apart at %d and 60 Hz", name, d, hz))
        end
      end
    end)

    it("reaches a target without ground, the knee towards the pole", function()
      local b = R.build(host, R.legs_spec())
      local hip = R.pos(b.l_thigh)
      local target = R.node(host, hip + ik.vec3(0.1, -0.6, 0.3))
      local pole = R.node(host, hip + ik.vec3(0, -0.4, 1), nil, b.hips)
      local rig = legs.new{ upper = b.l_thigh, lower = b.l_shin, foot = b.l_foot, target = target,
        pole = pole }
      local reached = rig:update(DT)
      assert.is_true(reached)
      assert.is_true((R.pos(b.l_foot) - R.pos(target)):length() <= 1e-3)
      local knee, aim = R.pos(b.l_shin) - hip, (R.pos(target) - hip):normalized()
      local across_k = knee - aim * knee:dot(aim)
      local across_p = (R.pos(pole) - hip) - aim * (R.pos(pole) - hip):dot(aim)
      assert.is_true(across_k:dot(across_p) > 0)
    end)

    it("says what is wrong with its options", function()
      local b = R.build(host, R.legs_spec())
      assert(R.raises(function() legs.new{ upper = b.l_thigh, lower = b.l_shin, foot = b.l_foot } end,
        "ik.rigs.leg: option 'target' (transform or vec3 expected, got nil)"))
      assert(R.raises(function()
        legs.new{ upper = b.l_thigh, lower = b.l_shin, foot = b.l_foot, ground = ground,
          target = { 1, 2, 3 } }
      end, "ik.rigs.leg: option 'target' (with ground: transform with set_position and set_rotation",
        "got table"))
      assert(R.raises(function()
        legs.new{ upper = b.l_thigh, lower = b.l_shin, foot = b.l_foot, ground = ground, foot_offset = -1 }
      end, "ik.rigs.leg: option 'foot_offset' (non-negative number expected, got -1)"))
      assert(R.raises(function() legs.pelvis{ hips = b.hips, legs = { {} } } end,
        "ik.rigs.leg.pelvis: option 'legs' (list of leg rigs expected, item 1 is table)"))
      assert(R.raises(function() legs.pelvis{ legs = {} } end,
        "ik.rigs.leg.pelvis: option 'hips' (transform with set_position and set_rotation expected, got nil)"))
    end)
  end)
end
