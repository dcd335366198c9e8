-- ik.chain{ bones = ... }: chains bound to transforms (ik.bone, ik.node, a host's own
-- objects). Each solve reads the bones' pose, solves, and turns the bones; these specs
-- check what the rig scripts rely on: reach, lengths, pole side, twist, weight,
-- match_rotation, IK over animation, what a target may hang from, the mock host path
-- agreeing with the skeleton, and every error message.
local ik = require("ik")
local h = require("spec_helper")
local mock = require("mock_transform")

local double = ik.real == "double"
-- Compared poses (positions, quaternion components) and angles; lengths relatively.
local TOL = double and 1e-9 or 2e-4
local LEN_EPS = double and 1e-9 or 2e-5
local atan2 = math.atan2 or math.atan -- 5.1 has atan2; 5.4's atan takes two arguments

-- ---- maths on anything with x, y, z ----

local function sub(a, b) return { x = a.x - b.x, y = a.y - b.y, z = a.z - b.z } end
local function add(a, b) return { x = a.x + b.x, y = a.y + b.y, z = a.z + b.z } end
local function scale(a, s) return { x = a.x * s, y = a.y * s, z = a.z * s } end
local function dot(a, b) return a.x * b.x + a.y * b.y + a.z * b.z end
local function len(a) return math.sqrt(dot(a, a)) end
local function dist(a, b) return len(sub(a, b)) end
local function cross(a, b)
  return { x = a.y * b.z - a.z * b.y, y = a.z * b.x - a.x * b.z, z = a.x * b.y - a.y * b.x }
end
-- Angle between two vectors; atan2 keeps small angles exact, where acos would not.
local function angle_between(a, b) return atan2(len(cross(a, b)), dot(a, b)) end

-- The part of v perpendicular to the unit vector n.
local function perp(v, n) return sub(v, scale(n, dot(v, n))) end

-- Twist angle of quaternion q about the unit axis a, in (-pi, pi].
local function twist_about(q, a)
  local angle = 2 * atan2(q.x * a.x + q.y * a.y + q.z * a.z, q.w)
  if angle > math.pi then
    angle = angle - 2 * math.pi
  elseif angle <= -math.pi then
    angle = angle + 2 * math.pi
  end
  return angle
end

local function rand(a, b) return a + (b - a) * math.random() end

local function random_dir()
  while true do
    local v = { x = rand(-1, 1), y = rand(-1, 1), z = rand(-1, 1) }
    local l = len(v)
    if l > 0.1 and l <= 1 then return scale(v, 1 / l) end
  end
end

local function assert_error_has(text, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error containing " .. text)
  err = tostring(err)
  assert.is_truthy(err:find(text, 1, true), ("expected %q in %q"):format(text, err))
end

-- ---- the arm: hips, and shoulder -> elbow -> hand (reach 0.55) ----

local SHOULDER_LS, ELBOW_LS, HAND_LS = { 0.2, 0.5, 0 }, { 0.3, 0, 0 }, { 0.25, 0, 0 }
local SHOULDER_WS = { x = 0.2, y = 1.5, z = 0 }
local POLE_LS = { 0.4, 0.2, -0.6 } -- from the hips: behind the arm and below it

local function skeleton_arm()
  local sk = ik.skeleton{
    { name = "hips", position = { 0, 1, 0 } },
    { name = "shoulder", parent = "hips", position = SHOULDER_LS },
    { name = "elbow", parent = "shoulder", position = ELBOW_LS },
    { name = "hand", parent = "elbow", position = HAND_LS },
  }
  return { sk = sk, hips = sk:bone("hips"), node = ik.node,
           bones = { sk:bone("shoulder"), sk:bone("elbow"), sk:bone("hand") } }
end

local function mock_arm()
  local hips = mock.new{ position = { 0, 1, 0 } }
  local shoulder = mock.new{ position = SHOULDER_LS, parent = hips }
  local elbow = mock.new{ position = ELBOW_LS, parent = shoulder }
  local hand = mock.new{ position = HAND_LS, parent = elbow }
  return { hips = hips, bones = { shoulder, elbow, hand }, node = mock.new }
end

-- A 4-bone arm (a wrist between elbow and hand), for the iterative solvers.
local function skeleton_arm4()
  local sk = ik.skeleton{
    { name = "hips", position = { 0, 1, 0 } },
    { name = "shoulder", parent = "hips", position = SHOULDER_LS },
    { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0.02 } },
    { name = "wrist", parent = "elbow", position = { 0.25, 0, -0.02 } },
    { name = "hand", parent = "wrist", position = { 0.08, 0, 0 } },
  }
  return sk, { sk:bone("shoulder"), sk:bone("elbow"), sk:bone("wrist"), sk:bone("hand") }
end

-- Every bone's world position and rotation, as numbers.
local function pose(bones)
  local t = {}
  for i, b in ipairs(bones) do
    local p, q = b:get_position(), b:get_rotation()
    t[i] = { p.x, p.y, p.z, q.x, q.y, q.z, q.w }
  end
  return t
end

-- Two poses within tol (quaternions up to sign).
local function same_pose(a, b, tol)
  for i = 1, #a do
    for k = 1, 3 do
      local ok, msg = h.near(a[i][k], b[i][k], tol)
      if not ok then return false, ("bone %d position: %s"):format(i, msg) end
    end
    local qa = { x = a[i][4], y = a[i][5], z = a[i][6], w = a[i][7] }
    local qb = { x = b[i][4], y = b[i][5], z = b[i][6], w = b[i][7] }
    local ok, msg = h.quat_near(qa, qb, tol)
    if not ok then return false, ("bone %d rotation: %s"):format(i, msg) end
  end
  return true
end

local function lengths(bones)
  local t = {}
  for i = 1, #bones - 1 do t[i] = dist(bones[i]:get_position(), bones[i + 1]:get_position()) end
  return t
end

-- An animation frame at time t: the hips sway and turn, the arm swings and bends.
local function animate(arm, t)
  arm.hips:set_local_position({ 0.1 * math.sin(t), 1 + 0.05 * math.cos(2 * t), 0.1 * t })
  arm.hips:set_local_rotation(ik.quat.euler(0, 0.4 * math.sin(t), 0))
  arm.bones[1]:set_local_rotation(ik.quat.euler(0.3 * math.sin(t), 0.5 * math.cos(t), -0.6))
  arm.bones[2]:set_local_rotation(ik.quat.euler(0, 0.8 + 0.3 * math.sin(2 * t), 0))
end

describe("ik.chain{ bones = ... }", function()
  describe("on an ik.skeleton arm", function()
    local arm, chain, target
    before_each(function()
      arm = skeleton_arm()
      target = ik.node{ position = { 0.4, 1.3, 0.2 } }
      chain = ik.chain{ bones = arm.bones, target = target,
                        pole = ik.node{ position = POLE_LS, parent = arm.hips } }
    end)

    it("reaches targets around the shoulder, keeps bone lengths and bends towards the pole", function()
      local before = lengths(arm.bones)
      local pole = chain.pole
      math.randomseed(4242)
      for _ = 1, 200 do
        local goal = add(SHOULDER_WS, scale(random_dir(), rand(0.1, 0.5)))
        target:set_position(goal)
        local reached, distance, iterations = chain:solve()
        local hand = arm.bones[3]:get_position()
        assert.is_true(reached, "target at " .. dist(goal, SHOULDER_WS) .. " not reached")
        assert.is_true(dist(hand, goal) <= chain.tolerance)
        assert(h.near(distance, dist(hand, goal), TOL))
        assert.are.equal(1, iterations)
        -- bones turned, never stretched
        local after = lengths(arm.bones)
        for i = 1, 2 do assert(h.near(after[i], before[i], LEN_EPS)) end
        assert(h.vec_near(arm.bones[1]:get_position(), SHOULDER_WS, TOL)) -- the root stays
        -- the elbow is on the pole's side of the shoulder-target line, in their plane
        local axis = scale(sub(goal, SHOULDER_WS), 1 / dist(goal, SHOULDER_WS))
        local e = perp(sub(arm.bones[2]:get_position(), SHOULDER_WS), axis)
        local p = perp(sub(pole:get_position(), SHOULDER_WS), axis)
        if len(p) > 0.05 then
          assert.is_true(dot(e, p) >= 0.999 * len(e) * len(p), "the elbow is not towards the pole")
        end
      end
    end)

    it("keeps the forearm's twist about its own axis", function()
      local axis = { x = 1, y = 0, z = 0 } -- the forearm, in the elbow's frame (HAND_LS)
      arm.bones[2]:set_local_rotation(ik.quat.axis_angle(axis, 0.7))
      local local_before = arm.bones[2]:get_local_rotation()
      assert(h.near(twist_about(local_before, axis), 0.7, TOL))
      target:set_position({ 0.45, 1.25, 0.25 })
      assert.is_true((chain:solve()))
      local local_after = arm.bones[2]:get_local_rotation()
      -- the elbow did bend: not a vacuous check
      assert.is_true(local_after:angle_to(local_before) > 0.5)
      assert(h.near(twist_about(local_after, axis), 0.7, TOL))
    end)

    it("adds no twist to an animated, twisted arm: it turns exactly as the untwisted one", function()
      local plain = skeleton_arm()
      local plain_chain = ik.chain{ bones = plain.bones,
                                    pole = ik.node{ position = POLE_LS, parent = plain.hips } }
      animate(arm, 0.7)
      animate(plain, 0.7)
      local twist = ik.quat.axis_angle({ 1, 0, 0 }, -1.1)
      arm.bones[2]:set_local_rotation(arm.bones[2]:get_local_rotation() * twist)
      -- a twist about the forearm moves no joint
      assert(h.vec_near(arm.bones[3]:get_position(), plain.bones[3]:get_position(), TOL))
      local goal = { 0.5, 1.2, 0.3 }
      assert.is_true((chain:solve(goal)))
      assert.is_true((plain_chain:solve(goal)))
      for i = 1, 3 do assert(h.vec_near(arm.bones[i]:get_position(), plain.bones[i]:get_position(), TOL)) end
      assert(h.quat_near(arm.bones[1]:get_rotation(), plain.bones[1]:get_rotation(), TOL))
      -- the elbow is the untwisted one, twisted the same about its own axis
      assert(h.quat_near(plain.bones[2]:get_rotation():inverse() * arm.bones[2]:get_rotation(), twist, TOL))
    end)

    it("at weight 0 changes nothing and says so", function()
      animate(arm, 1.3)
      local locals = {}
      for i, b in ipairs(arm.bones) do locals[i] = { b:get_local_rotation():unpack() } end
      local hand = arm.bones[3]:get_position()
      chain.weight = 0
      local reached, distance, iterations = chain:solve()
      assert.is_false(reached)
      assert.are.equal(0, iterations)
      assert(h.near(distance, dist(hand, target:get_position()), TOL))
      for i, b in ipairs(arm.bones) do assert.are.same(locals[i], { b:get_local_rotation():unpack() }) end
    end)

    it("at weight 0.5 turns half way", function()
      local start = arm.bones[1]:get_rotation()
      local d0 = dist(arm.bones[3]:get_position(), target:get_position())
      assert.is_true((chain:solve()))
      local full = arm.bones[1]:get_rotation()
      arm.sk:reset()
      chain.weight = 0.5
      local reached, distance = chain:solve()
      local half = arm.bones[1]:get_rotation()
      assert.is_false(reached)
      assert.is_true(distance > 0.01 and distance < d0 - 0.01,
        ("%g not between 0 and %g"):format(distance, d0))
      assert(h.near(distance, dist(arm.bones[3]:get_position(), target:get_position()), TOL))
      assert(h.near(start:angle_to(half), 0.5 * start:angle_to(full), TOL))
      assert(h.near(half:angle_to(full), 0.5 * start:angle_to(full), TOL))
      local lengths_now = lengths(arm.bones)
      assert(h.near(lengths_now[1], 0.3, LEN_EPS))
      assert(h.near(lengths_now[2], 0.25, LEN_EPS))
    end)

    it("with match_rotation gives the hand the target's rotation", function()
      local turned = ik.quat.euler(0.3, 0.5, -0.2)
      target:set_rotation(turned)
      assert.is_true((chain:solve()))
      assert.is_false(h.quat_near(arm.bones[3]:get_rotation(), turned, 0.01)) -- not by chance
      chain.match_rotation = true
      assert.is_true(chain.match_rotation)
      assert.is_true((chain:solve()))
      assert(h.quat_near(arm.bones[3]:get_rotation(), turned, TOL))
      assert.is_true(dist(arm.bones[3]:get_position(), target:get_position()) <= chain.tolerance)
    end)

    it("works on top of animation: deterministic, each solve starts from the pose it finds", function()
      chain.deterministic = true -- the default, warm start, is specified in warm_start_spec.lua
      for _, solver in ipairs({ "two_bone", "fabrik" }) do
        chain.solver = solver
        chain.iterations = 30
        for frame = 0, 8 do
          local t = frame * 0.35
          animate(arm, t) -- overwrites what the last solve did, as an animation player does
          local reached = chain:solve()
          assert.is_true(reached, solver .. ", frame " .. frame)
          -- the same frame on a fresh arm, solved once: no memory of earlier frames
          local fresh = skeleton_arm()
          animate(fresh, t)
          local fresh_chain = ik.chain{ bones = fresh.bones, target = target, solver = solver,
                                        iterations = 30,
                                        pole = ik.node{ position = POLE_LS, parent = fresh.hips } }
          fresh_chain:solve()
          assert(same_pose(pose(arm.bones), pose(fresh.bones), TOL))
        end
      end
    end)

    it("measures bones again at each solve (animation may scale them)", function()
      -- fabrik and ccd keep the lengths they are given, unlike two_bone which measures
      for _, solver in ipairs({ "two_bone", "fabrik", "ccd" }) do
        arm.sk:reset()
        chain.solver, chain.iterations = solver, 50
        chain:solve({ 0.4, 1.4, 0.3 }) -- a pose, and lengths, of the arm as made
        arm.bones[3]:set_local_position({ 0.35, 0, 0 }) -- a stretched forearm: reach 0.65
        local goal = add(SHOULDER_WS, { x = 0, y = -0.6, z = 0.1 })
        assert.is_true((chain:solve(goal)), solver)
        assert.is_true(dist(arm.bones[3]:get_position(), goal) <= chain.tolerance)
        assert(h.near(lengths(arm.bones)[2], 0.35, LEN_EPS))
        assert(h.near(chain:length(), 0.65, LEN_EPS))
      end
    end)

    it("chooses two_bone for 3 bones and fabrik otherwise", function()
      assert.are.equal("two_bone", chain.solver)
      local sk4, bones4 = skeleton_arm4()
      local c4 = ik.chain{ bones = bones4, iterations = 50 }
      assert.are.equal("fabrik", c4.solver)
      assert.are.equal("fabrik", ik.chain{ bones = { bones4[1], bones4[2] } }.solver)
      local before = lengths(bones4)
      math.randomseed(17)
      for _ = 1, 50 do
        local goal = add(SHOULDER_WS, scale(random_dir(), rand(0.15, 0.55)))
        local reached, _, iterations = c4:solve(goal)
        assert.is_true(reached)
        assert.is_true(iterations >= 0 and iterations <= 50)
        assert.is_true(dist(bones4[4]:get_position(), goal) <= c4.tolerance)
      end
      local after = lengths(bones4)
      for i = 1, 3 do assert(h.near(after[i], before[i], LEN_EPS)) end
      assert.are.equal("ik.chain(fabrik, 4 bones)", tostring(c4))
      assert.is_not_nil(sk4)
    end)

    it("has the fields and methods rig scripts use", function()
      assert.are.equal(3, #chain)
      local list = chain:bones()
      assert.are.equal(3, #list)
      for i = 1, 3 do assert.is_true(rawequal(arm.bones[i], list[i])) end
      list[1] = nil -- a copy: the chain is unchanged
      assert.is_true(rawequal(arm.bones[1], chain:bones()[1]))
      assert.is_true(rawequal(target, chain.target))
      chain.target = { 0.5, 1.2, 0 }
      assert.are.equal("ik.vec3", getmetatable(chain.target).__name)
      -- a vec3 target reads as a copy each time (vec3:set on it cannot move the target)
      assert.is_false(rawequal(chain.target, chain.target))
      assert.are.equal(ik.vec3(0.5, 1.2, 0), chain.target)
      chain.target = nil
      assert.is_nil(chain.target)
      assert.is_false(chain.match_rotation)
      assert.are.equal(1, chain.weight)
      chain.weight, chain.iterations, chain.tolerance = 0.25, 4, 0.5 -- exact in float too
      assert.are.same({ 0.25, 4, 0.5 }, { chain.weight, chain.iterations, chain.tolerance })
      -- joints read the bones as they are now
      arm.bones[2]:set_local_rotation(ik.quat.euler(0, 1, 0))
      assert(h.vec_near(chain:joint(3), arm.bones[3]:get_position(), TOL))
      assert.are.same({ chain:joint_xyz(3) }, { arm.bones[3]:get_position():unpack() })
      assert.are.equal(3, #chain:positions())
      assert(h.near(chain:length(), 0.55, LEN_EPS))
      assert.are.equal("ik.chain(two_bone, 3 bones)", tostring(chain))
    end)

    it("takes its pole as a transform, an ik.pole or a vec3", function()
      local goal = { 0.45, 1.3, 0.1 }
      local function elbow_side(pole)
        arm.sk:reset()
        chain.pole = pole
        assert.is_true((chain:solve(goal)))
        return arm.bones[2]:get_position().z
      end
      assert.is_true(elbow_side(ik.node{ position = { 0.5, 1.4, 1 } }) > 0.05)
      assert.is_true(elbow_side(ik.pole{ position = { 0.5, 1.4, -1 } }) < -0.05)
      assert.is_true(elbow_side({ 0.5, 1.4, 1 }) > 0.05)
      assert.are.equal("ik.pole", getmetatable(chain.pole).__name)
      local host = mock.new{ position = { 0.5, 1.4, -1 } }
      assert.is_true(elbow_side(host) < -0.05)
      assert.is_true(rawequal(host, chain.pole))
    end)

    it("turns bone 1's constraint with what the chain hangs from", function()
      for _, make in ipairs({ skeleton_arm, mock_arm }) do
        local a = make()
        local c = ik.chain{ bones = a.bones, solver = "fabrik", iterations = 50,
                            base_direction = { 1, 0, 0 } }
        c:set_constraint(1, ik.cone{ angle = 0.3 })
        -- the character turns a quarter to its left: the arm's rest direction is now -z
        a.hips:set_rotation(ik.quat.axis_angle({ 0, 1, 0 }, math.pi / 2))
        local shoulder = a.bones[1]:get_position()
        local goal = add(shoulder, { x = 0.1, y = -0.1, z = -0.45 })
        local reached = c:solve(goal)
        assert.is_true(reached)
        local upper = sub(a.bones[2]:get_position(), shoulder)
        local angle = angle_between(upper, { x = 0, y = 0, z = -1 })
        assert.is_true(angle <= 0.3 + 1e-4, "bone 1 is " .. angle .. " rad from its turned base direction")
      end
    end)

    it("turns every hinge axis with what the chain hangs from, bone 1 constrained or not", function()
      -- A leg hanging from the pelvis, knee hinged about the pelvis's x axis: turned with
      -- the pelvis, the knee must still bend in the pelvis's y-z plane, with or without
      -- a cone on the thigh. A knee straight at rest and one bent, a one-sided hinge.
      for _, bent in ipairs({ 0, 0.05 }) do
        for _, solver in ipairs({ "fabrik", "ccd", "dls" }) do
          for _, cone in ipairs({ false, true }) do
            local sk = ik.skeleton{
              { name = "pelvis", position = { 0, 1, 0 } },
              { name = "hip", parent = "pelvis", position = { 0.1, 0, 0 } },
              { name = "knee", parent = "hip", position = { 0, -0.5, bent } },
              { name = "ankle", parent = "knee", position = { 0, -0.5, -bent } },
            }
            -- In float, 1e-6 is 8 ulps of the leg's length: the solve stops within it, and
            -- turning the bones to its pose adds a few ulps more (dls, knee straight: 0.9e-6
            -- to 1.0e-6 from the target as read back from the ankle, from one version to the
            -- next; ccd 0.86e-6).
            local leg = ik.chain{ bones = { sk:bone("hip"), sk:bone("knee"), sk:bone("ankle") },
                                  solver = solver, iterations = 100, tolerance = double and 1e-6 or 2e-5 }
            leg:set_constraint(2, ik.hinge{ axis = { 1, 0, 0 }, min = 0, max = 2.5 })
            if cone then
              leg:set_constraint(1, ik.cone{ angle = 1 })
              leg.base_direction = { 0, -1, 0 }
            end
            sk:bone("pelvis"):set_rotation(ik.quat.axis_angle({ 0, 1, 0 }, math.pi / 2))
            local hip = sk:bone("hip"):get_position()
            local what = ("%s, knee bent %g, %s"):format(solver, bent,
                                                         cone and "cone on the thigh" or "thigh free")
            assert.is_true(leg:solve(add(hip, { x = 0, y = -0.8, z = 0 })), what .. ": not reached")
            -- the knee in the pelvis's frame: on its y-z plane, forwards (the hinge's side)
            local knee = ik.quat.axis_angle({ 0, 1, 0 }, -math.pi / 2)
              * ik.vec3(sub(sk:bone("knee"):get_position(), hip))
            assert.is_true(math.abs(knee.x) <= 1e-4, what .. ": knee off the pelvis's y-z plane by "
              .. knee.x)
            assert.is_true(knee.z > 0.25, what .. ": knee not bent forwards (" .. knee.z .. ")")
          end
        end
      end
    end)

    it("keeps a target on the character: hanging from the hips it follows them", function()
      local on_hips = ik.node{ position = { 0.5, 0.3, 0.2 }, parent = arm.hips }
      chain.target = on_hips
      assert.is_true((chain:solve()))
      arm.hips:set_position({ 1, 1.2, -0.5 })
      arm.hips:set_rotation(ik.quat.euler(0, 0.8, 0))
      local moved = on_hips:get_position()
      assert.is_false(h.vec_near(moved, { 0.5, 1.3, 0.2 }, 0.1)) -- it did move with them
      local reached, distance = chain:solve()
      assert.is_true(reached)
      assert.is_true(dist(arm.bones[3]:get_position(), moved) <= chain.tolerance)
      assert(h.near(distance, dist(arm.bones[3]:get_position(), moved), TOL))
    end)

    it("keeps its bones, target and pole alive", function()
      local weak = setmetatable({}, { __mode = "v" })
      local c = (function()
        local a = skeleton_arm()
        local t = ik.node{ position = { 0.4, 1.3, 0.2 } }
        local p = ik.node{ position = POLE_LS, parent = a.hips }
        weak.sk, weak.target, weak.pole = a.sk, t, p
        return ik.chain{ bones = a.bones, target = t, pole = p }
      end)()
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_not_nil(weak.sk)
      assert.is_not_nil(weak.target)
      assert.is_not_nil(weak.pole)
      assert.is_true((c:solve()))
      c:close()
      c = nil -- luacheck: ignore 311
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_nil(weak.target)
      assert.is_nil(weak.sk)
    end)

    it("solves without allocating (ik.bone bones, ik.node target and pole)", function()
      local a, b = ik.node{ position = { 0.4, 1.3, 0.2 } }, ik.node{ position = { 0.3, 1.1, -0.1 } }
      local function run(k)
        for i = 1, k do
          if i % 3 == 0 then chain:solve() else chain:solve(i % 2 == 0 and a or b) end
        end
      end
      local function allocated()
        run(1000)
        collectgarbage("collect")
        collectgarbage("stop")
        local before = collectgarbage("count")
        run(1000)
        local after = collectgarbage("count")
        collectgarbage("restart")
        return after - before
      end
      for _, solver in ipairs({ "two_bone", "fabrik", "ccd", "dls" }) do
        chain.solver = solver
        chain.weight = 0.75
        chain.match_rotation = solver == "fabrik"
        h.jit_off()
        local delta = allocated()
        if jit then jit.on() end
        assert.are.equal(0, delta, solver .. " allocated " .. delta .. " KiB")
      end
    end)
  end)

  describe("on plain-Lua host transforms (mock_transform)", function()
    -- Runs the same script on a skeleton arm and on a mock arm; both must agree.
    local function script(arm)
      local target = arm.node{ position = { 0.5, 0.3, 0.2 }, parent = arm.hips }
      local pole = arm.node{ position = POLE_LS, parent = arm.hips }
      local chain = ik.chain{ bones = arm.bones, target = target, pole = pole }
      local poses, results = {}, {}
      local function step(...)
        results[#results + 1] = { chain:solve(...) }
        poses[#poses + 1] = pose(arm.bones)
      end
      arm.bones[2]:set_local_rotation(ik.quat.axis_angle({ 1, 0, 0 }, 0.7))
      step()
      animate(arm, 0.9)
      step()
      chain.weight = 0.5
      chain.match_rotation = true
      target:set_local_rotation(ik.quat.euler(0.2, -0.4, 0.1))
      step()
      chain.weight = 1
      chain.match_rotation = false
      step({ 0.1, 1.1, 0.4 })
      chain.solver = "fabrik"
      animate(arm, 2.1)
      step(target)
      chain.solver = "ccd"
      animate(arm, 2.5)
      step()
      return poses, results
    end

    it("turns them exactly as it turns ik.bone", function()
      local sk_poses, sk_results = script(skeleton_arm())
      local mock_poses, mock_results = script(mock_arm())
      assert.are.equal(6, #mock_poses)
      for i = 1, #sk_poses do
        assert(same_pose(mock_poses[i], sk_poses[i], TOL))
        assert.are.equal(sk_results[i][1], mock_results[i][1])
        assert(h.near(mock_results[i][2], sk_results[i][2], TOL))
        assert.are.equal(sk_results[i][3], mock_results[i][3])
      end
      assert.is_true(sk_results[1][1]) -- and the script does reach
    end)

    it("reads them all, writes root to tip, and touches nothing at weight 0", function()
      local arm = mock_arm()
      local log, depth = {}, 0
      -- Logs the chain's calls only, not those a mock makes to its parents.
      local function logged(name, f)
        return function(...)
          depth = depth + 1
          if depth == 1 then log[#log + 1] = name end
          local result = f(...)
          depth = depth - 1
          return result
        end
      end
      for i, b in ipairs(arm.bones) do
        b.get_position = logged("pos " .. i, b.get_position)
        b.get_rotation = logged("rot " .. i, b.get_rotation)
        b.set_rotation = logged("set " .. i, b.set_rotation)
      end
      local chain = ik.chain{ bones = arm.bones, target = { 0.4, 1.3, 0.2 } }
      log = {}
      chain:solve()
      -- the tip only follows its parent unless it takes the target's rotation; the last
      -- read is the tip, for the distance the results report
      local function reads_then(...) -- every bone read, root first, then the given calls
        local t = { "pos 1", "rot 1", "pos 2", "rot 2", "pos 3", "rot 3" }
        for _, call in ipairs({ ... }) do t[#t + 1] = call end
        return t
      end
      assert.are.same(reads_then("set 1", "set 2", "pos 3"), log)
      chain.match_rotation = true
      chain.target = mock.new{ position = { 0.3, 1.2, 0.2 } }
      log = {}
      chain:solve()
      assert.are.same(reads_then("set 1", "set 2", "set 3", "pos 3"), log)
      chain.weight = 0
      log = {}
      chain:solve()
      assert.are.same({ "pos 3" }, log) -- the tip, for the distance; no rotation read or written
    end)
  end)

  describe("refuses", function()
    local arm
    before_each(function() arm = skeleton_arm() end)

    it("bad bone lists", function()
      assert_error_has("ik.chain: bad field 'bones' (at least 2 transforms expected, got 1)",
        function() ik.chain{ bones = { arm.bones[1] } } end)
      assert_error_has("ik.chain: bad field 'bones' (at least 2 transforms expected, got string)",
        function() ik.chain{ bones = "arm" } end)
      assert_error_has("ik.chain: bad field 'bones' (at least 2 transforms expected, got nil)",
        function() ik.chain{ target = { 0, 1, 0 } } end)
      assert_error_has("ik.chain: bad field 'bones' (transform expected at index 2, got number)",
        function() ik.chain{ bones = { arm.bones[1], 5, arm.bones[3] } } end)
      assert_error_has("ik.chain: bad field 'bones' (transform expected at index 3, got ik.vec3)",
        function() ik.chain{ bones = { arm.bones[1], arm.bones[2], ik.vec3(1, 2, 3) } } end)
      assert_error_has(
        "ik.chain: bad field 'bones' (transform expected at index 1, got table without set_rotation)",
        function()
          ik.chain{ bones = { { get_position = print, get_rotation = print }, arm.bones[2] } }
        end)
      assert_error_has("ik.chain: bad field 'bones' (a chain is made from positions or from bones, not both)",
        function() ik.chain{ bones = arm.bones, positions = { { 0, 0, 0 }, { 0, 1, 0 } } } end)
      assert_error_has("ik.chain: bad field 'bones' (bones 2 and 3 are at the same place",
        function() ik.chain{ bones = { arm.bones[1], arm.bones[2], arm.bones[2] } } end)
      assert_error_has("ik.chain: no field 'targt' (fields: bones, solver, iterations, tolerance, weight, "
        .. "pole, base_direction, target, deterministic, mode, match_rotation)",
        function() ik.chain{ bones = arm.bones, targt = {} } end)
      assert_error_has("ik.chain: solver 'two_bone' needs exactly 3 joints (this chain has 2)",
        function() ik.chain{ bones = { arm.bones[1], arm.bones[2] }, solver = "two_bone" } end)
    end)

    it("a target or pole that moves with the chain's own bones", function()
      local on_hand = ik.node{ position = { 0.1, 0, 0 }, parent = arm.bones[3] }
      local on_elbow = ik.node{ position = { 0.1, 0, 0 }, parent = arm.bones[2] }
      local deeper = ik.node{ position = { 0, 0.1, 0 }, parent = on_hand }
      local hand_target = "ik.chain: bad field 'target' (the target hangs from bone 3 of this chain: "
        .. "it would move with every solve)"
      assert_error_has(hand_target, function() ik.chain{ bones = arm.bones, target = on_hand } end)
      assert_error_has(hand_target, function() ik.chain{ bones = arm.bones, target = deeper } end)
      assert_error_has("ik.chain: bad field 'target' (the target hangs from bone 2 of this chain",
        function() ik.chain{ bones = arm.bones, target = on_elbow } end)
      assert_error_has("ik.chain: bad field 'target' (the target is bone 3 of this chain",
        function() ik.chain{ bones = arm.bones, target = arm.bones[3] } end)
      local host_hand = mock_arm().bones[3]
      assert_error_has("ik.chain: bad field 'target' (the target is bone 3 of this chain",
        function() ik.chain{ bones = { arm.bones[1], arm.bones[2], host_hand }, target = host_hand } end)
      local sk = ik.skeleton{
        { name = "shoulder" }, { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0 } },
        { name = "hand", parent = "elbow", position = { 0.25, 0, 0 } },
        { name = "finger", parent = "hand", position = { 0.1, 0, 0 } }, { name = "other" },
      }
      local limb = { sk:bone("shoulder"), sk:bone("elbow"), sk:bone("hand") }
      assert_error_has(hand_target, function() ik.chain{ bones = limb, target = sk:bone("finger") } end)
      assert.is_true(rawequal(sk:bone("other"), ik.chain{ bones = limb, target = sk:bone("other") }.target))
      assert_error_has("ik.chain: bad field 'pole' (the pole hangs from bone 2 of this chain: "
        .. "it would move with every solve)", function() ik.chain{ bones = arm.bones, pole = on_elbow } end)
      -- on assignment, changing nothing
      local target = ik.node{ position = { 0.4, 1.3, 0.2 }, parent = arm.hips }
      local c = ik.chain{ bones = arm.bones, target = target }
      assert_error_has(hand_target, function() c.target = on_hand end)
      assert.is_true(rawequal(target, c.target))
      assert_error_has("ik.chain: bad field 'pole' (the pole hangs from bone 3",
        function() c.pole = on_hand end)
      assert.is_nil(c.pole)
      -- and given to solve
      assert_error_has("bad argument #1 to 'solve' (the target hangs from bone 3 of this chain",
        function() c:solve(on_hand) end)
      -- the hips are no bone of this chain
      c.target = ik.node{ parent = arm.hips }
      c.pole = ik.node{ position = { 0, 0, -1 }, parent = arm.hips }
    end)

    it("a target or pole hung from the chain's own bones after it was set, at solve", function()
      local target = ik.node{ position = { 0.4, 1.3, 0.2 } }
      local pole = ik.node{ position = { 0, 0, -1 } }
      local c = ik.chain{ bones = arm.bones, target = target, pole = pole }
      assert.is_true((c:solve()))
      -- hung from the hand: each solve would move it
      target:set_parent(arm.bones[3])
      local before = pose(arm.bones)
      assert_error_has("ik.chain: bad field 'target' (the target hangs from bone 3 of this chain: "
        .. "it would move with every solve)", function() c:solve() end)
      assert.is_true(same_pose(pose(arm.bones), before, 0))
      target:set_parent(nil)
      assert.is_true((c:solve()))
      -- the pole likewise
      pole:set_parent(arm.bones[2])
      before = pose(arm.bones)
      assert_error_has("ik.chain: bad field 'pole' (the pole hangs from bone 2 of this chain",
        function() c:solve() end)
      assert.is_true(same_pose(pose(arm.bones), before, 0))
    end)

    it("bones out of range, at creation or at solve", function()
      local far = ik.real == "float" and 4e14 or 4e139
      local sk = ik.skeleton{
        { name = "root", position = { far, 0, 0 } },
        { name = "a", parent = "root", position = { 0, far / 4, 0 } },
        { name = "b", parent = "a", position = { 0, far / 4, 0 } },
      }
      local bones = { sk:bone("root"), sk:bone("a"), sk:bone("b") }
      assert_error_has("ik.chain: bad field 'bones' (the chain reaches too far: its root's largest "
        .. "coordinate plus its length must be at most", function() ik.chain{ bones = bones } end)
      sk:bone("root"):set_position({ far / 2, 0, 0 })
      local c = ik.chain{ bones = bones, solver = "fabrik" }
      assert.is_false((c:solve({ -far, 0, 0 })))
      sk:bone("root"):set_position({ far, 0, 0 })
      local before = pose(bones)
      assert_error_has("ik.chain: the bones are out of range (the chain reaches too far",
        function() c:solve({ 0, 0, 0 }) end)
      assert.is_true(same_pose(pose(bones), before, 0))
    end)

    it("bad targets, fields and uses", function()
      local c = ik.chain{ bones = arm.bones }
      assert_error_has(
        "bad argument #1 to 'solve' (transform or vec3 expected, got no value: the chain has no target)",
        function() c:solve() end)
      assert_error_has("bad argument #1 to 'solve' (transform or vec3 expected, got string)",
        function() c:solve("there") end)
      assert_error_has("bad argument #1 to 'solve' (finite vec3 expected, got NaN, inf or a huge component)",
        function() c:solve({ 0 / 0, 1, 0 }) end)
      assert_error_has("ik.chain: bad field 'target' (transform or vec3 expected, got boolean)",
        function() c.target = true end)
      assert_error_has(
        "ik.chain: bad field 'target' (transform or vec3 expected, got table without get_rotation)",
        function() c.target = { get_position = function() return { 0, 1, 0 } end } end)
      assert_error_has(
        "ik.chain: bad field 'target' (finite vec3 expected, got NaN, inf or a huge component)",
        function() c.target = { 1, math.huge, 0 } end)
      assert_error_has("ik.chain: bad field 'pole' (transform, ik.pole or vec3 expected, got string)",
        function() c.pole = "behind" end)
      assert_error_has("ik.chain: bad field 'match_rotation' (boolean expected, got 1)",
        function() c.match_rotation = 1 end)
      assert_error_has("ik.chain: no field 'bones' (fields: solver, iterations, tolerance, weight, pole, "
        .. "base_direction, target, deterministic, mode, match_rotation)", function() c.bones = {} end)
      c.match_rotation = true
      assert_error_has("ik.chain: match_rotation needs a target with a rotation (a transform), got a vec3",
        function() c:solve({ 0.4, 1.3, 0.2 }) end)
      assert_error_has("ik.chain: set_positions is for chains made from positions (this one reads its bones)",
        function() c:set_positions({ { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } }) end)
      -- a point chain keeps its own fields (a target it has: vec3 or transform, solved for by solve())
      assert_error_has("ik.chain: no field 'match_rotation' (fields: positions, solver,",
        function()
          ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, solver = "fabrik", match_rotation = true }
        end)
      assert_error_has(
        "ik.chain: bad field 'target' (transform or vec3 expected, got table without get_position)",
        function() ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, solver = "fabrik", target = {} } end)
    end)

    it("what a host transform returns, when unusable", function()
      local m = mock_arm()
      local c = ik.chain{ bones = m.bones, target = { 0.4, 1.3, 0.2 } }
      m.bones[2].get_position = function() return "here" end
      assert_error_has("ik.chain: bone 2: get_position returned string (vec3 expected)",
        function() c:solve() end)
      m.bones[2].get_position = function() return { 0 / 0, 0, 0 } end
      assert_error_has("ik.chain: bone 2: get_position returned NaN, inf or a huge component",
        function() c:solve() end)
      m.bones[2].get_position = nil
      m.bones[3].get_rotation = function() return { 0, 0, 0, 0 } end
      assert_error_has("ik.chain: bone 3: get_rotation returned a zero, NaN, inf or huge quat",
        function() c:solve() end)
      m.bones[3].get_rotation = nil
      m.bones[3]:set_position(m.bones[2]:get_position())
      assert_error_has(
        "ik.chain: bones 2 and 3 are at the same place: a bone of zero length cannot be turned",
        function() c:solve() end)
      assert_error_has("ik.chain: bad field 'bones' (bone 2: get_position returned nil (vec3 expected))",
        function()
          ik.chain{ bones = { m.bones[1], { get_position = function() end, get_rotation = print,
                                             set_rotation = print } } }
        end)
    end)

    it("closed skeletons and nodes, with their own messages", function()
      local target = ik.node{ position = { 0.4, 1.3, 0.2 } }
      local c = ik.chain{ bones = arm.bones, target = target }
      target:close()
      assert_error_has("attempt to use a closed ik.node", function() c:solve() end)
      c.target = { 0.4, 1.3, 0.2 }
      assert.is_true((c:solve()))
      arm.sk:close()
      assert_error_has("attempt to use a bone of a closed ik.skeleton", function() c:solve() end)
      assert_error_has("attempt to use a bone of a closed ik.skeleton", function() return c:joint(1) end)
      assert_error_has("attempt to use a bone of a closed ik.skeleton",
        function() ik.chain{ bones = arm.bones } end)
      c:close()
      assert_error_has("attempt to use a closed ik.chain", function() c:solve() end)
    end)
  end)
end)
