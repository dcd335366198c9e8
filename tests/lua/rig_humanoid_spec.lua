-- ik.rigs.humanoid on the built-in humanoid and every test character, its axes read from
-- the rest pose alone: hands reach with the elbow on the pole's side, the face (from
-- between the eyes) points at look targets with roll within the limit, feet stand on
-- steps and a 20-degree slope, and root and pelvis together follow a walking target.
local ik = require("ik")
local rigs = require("ik.rigs")
local cases = require("humanoid_cases")

local DT = 1 / 60
local float = ik.real == "float"

local function settle(h, frames)
  for _ = 1, frames or 60 do h:update(DT) end
end

local function pos(t) return ik.vec3(t:get_position()) end

for _, case in ipairs(cases.all()) do
  describe("ik.rigs.humanoid on " .. case.name, function()
    local function make(extra)
      local o = { skeleton = case.skeleton, map = case.map, model = case.model, reset_pose = true }
      for k, v in pairs(extra) do o[k] = v end
      return rigs.humanoid(o)
    end

    it("measures forward from the character, not from a bone's axes", function()
      local h = make{}
      local b = h.bones
      local eyes = b.leftEye and (pos(b.leftEye) + pos(b.rightEye)) * 0.5 or nil
      if eyes then assert.is_true((eyes - pos(b.head)):dot(h.forward) > 0) end
      local toes = b.leftToes
      if toes then assert.is_true((pos(toes) - pos(b.leftFoot)):dot(h.forward) > 0) end
      assert.is_true(math.abs(h.up:dot(ik.vec3(0, 1, 0)) - 1) < 1e-6)
    end)

    it("reaches reachable targets with each hand, the elbow on the pole's side", function()
      for _, side in ipairs({ "left", "right" }) do
        local target = ik.node{}
        local h = make{ targets = { [side .. "_hand"] = target } }
        local b = h.bones
        local upper, lower, hand = b[side .. "UpperArm"], b[side .. "LowerArm"], b[side .. "Hand"]
        local s = pos(upper)
        local reach = (pos(lower) - s):length() + (pos(hand) - pos(lower)):length()
        local out = side == "left" and h.left or h.left * -1
        for _, p in ipairs({ { 0.5, 0.3, -0.2 }, { 0.7, 0.1, 0.3 }, { 0.3, 0.6, 0 }, { 0.6, -0.2, -0.4 } }) do
          local at = s + h.forward * (p[1] * reach) + out * (p[2] * reach) + h.up * (p[3] * reach)
          target:set_position(at)
          settle(h, 40)
          assert.is_true((pos(hand) - at):length() <= 1e-3 * reach, side)
          -- elbow on the pole's side of the shoulder-hand line (the pole: back and down)
          local line = (at - s):normalized()
          local e = pos(lower) - s
          local off = e - line * e:dot(line)
          local pole_dir = h.forward * -0.5 - h.up * 0.3
          pole_dir = pole_dir - line * pole_dir:dot(line)
          assert.is_true(off:dot(pole_dir) > 0, side)
        end
      end
    end)

    it("keeps the hand's bind rotation relative to the target when asked", function()
      local target = ik.node{}
      target:set_position(pos(case.skeleton:bone(case.map.rightHand)))
      local h = make{ targets = { right_hand = target }, hand_rotation = true }
      local hand = h.bones.rightHand
      local before = ik.quat(hand:get_rotation())
      local turn = ik.quat.axis_angle({ 0, 1, 0 }, 0.5)
      target:set_rotation(turn)
      settle(h, 10)
      assert.is_true((turn * before):angle_to(ik.quat(hand:get_rotation())) < (float and 1e-4 or 1e-9))
    end)

    it("points the face at look targets within its limits, with roll within the limit", function()
      local target = ik.node{}
      local roll_limit = math.rad(0.5)
      local h = make{ targets = { look = target }, roll_limit = roll_limit }
      local head = h.bones.head
      local eye_local = h.bones.leftEye and
          ik.quat(head:get_rotation()):inverse() * ((pos(h.bones.leftEye) + pos(h.bones.rightEye)) * 0.5
            - pos(head)) or ik.vec3(0, 0, 0)
      local forward_ls = ik.quat(head:get_rotation()):inverse() * h.forward
      local up_ls = ik.quat(head:get_rotation()):inverse() * h.up
      for _, p in ipairs({ { 1.5, 0.5, 0.3 }, { 1.2, -0.6, -0.2 }, { 2, 0.8, 0.5 } }) do
        local eye = pos(head) + ik.quat(head:get_rotation()) * eye_local
        local at = eye + h.forward * p[1] + h.left * p[2] + h.up * p[3]
        target:set_position(at)
        settle(h, 2)
        local q = ik.quat(head:get_rotation())
        eye = pos(head) + q * eye_local
        local f = q * forward_ls
        local want = (at - eye):normalized()
        assert.is_false(h.look.clamped)
        assert.is_true(math.acos(math.min(1, f:dot(want))) < 1e-3)
        -- roll: the head's up against the character's up, square to the face
        local u = q * up_ls
        local ref = h.up - f * h.up:dot(f)
        u = u - f * u:dot(f)
        local roll = math.acos(math.max(-1, math.min(1, ref:normalized():dot(u:normalized()))))
        local slack = ik.real == "double" and 1e-6 or 1e-4 -- a float build's rounding
        assert.is_true(roll <= roll_limit + slack, string.format("roll %.2f deg", math.deg(roll)))
      end
    end)

    it("stands each foot on its step, and on a 20-degree slope", function()
      local b = case.skeleton and { lf = case.skeleton:bone(case.map.leftFoot) } or {}
      local probe = make{ ground = ik.ground.plane() }
      local foot_offset = probe.foot_offset.left
      local sole = pos(b.lf):dot(probe.up) - foot_offset
      -- steps: the left foot's side 6 cm up, the right's 4 cm down (the pelvis comes down)
      local left_x = pos(b.lf):dot(probe.left) - pos(probe.bones.hips):dot(probe.left)
      local hips_side = pos(probe.bones.hips):dot(probe.left)
      local steps = ik.ground.custom(function(origin, direction, max)
        local side = (origin:dot(probe.left) - hips_side) * (left_x > 0 and 1 or -1)
        local y = sole + (side > 0 and 0.06 or -0.04)
        if direction:dot(probe.up) >= 0 then return false end
        local d = (origin:dot(probe.up) - y) / -direction:dot(probe.up)
        if d < 0 or d > max then return false end
        return true, origin + direction * d, probe.up
      end)
      local h = make{ ground = steps }
      settle(h, 60)
      for _, side in ipairs({ "left", "right" }) do
        local foot = h.bones[side .. "Foot"]
        local want = sole + (side == "left" and 0.06 or -0.04) + h.foot_offset[side]
        assert.is_true(math.abs(pos(foot):dot(h.up) - want) < 2e-3, side)
      end
      -- a 20-degree slope up along forward, through the feet's sole
      local n = h.up * math.cos(math.rad(20)) - h.forward * math.sin(math.rad(20))
      local slope = ik.ground.plane{ point = pos(b.lf) - h.up * foot_offset, normal = n }
      local hs = make{ ground = slope }
      local rest_up = {}
      for _, side in ipairs({ "left", "right" }) do
        rest_up[side] = ik.quat(hs.bones[side .. "Foot"]:get_rotation()):inverse() * hs.up
      end
      settle(hs, 60)
      for _, side in ipairs({ "left", "right" }) do
        assert.is_true(hs[side .. "_leg"].reached, side)
        -- the sole square to the slope: the foot's rest up now along its normal
        local now = ik.quat(hs.bones[side .. "Foot"]:get_rotation()) * rest_up[side]
        assert.is_true(math.acos(math.min(1, now:dot(n:normalized()))) < math.rad(0.5), side)
      end
    end)

    it("follows a walking root target with the pelvis, the hips within 1 mm", function()
      local target = ik.node{}
      local probe = make{ ground = ik.ground.plane() }
      local hips = probe.bones.hips
      local start = pos(hips)
      target:set_position(start)
      target:set_rotation(probe.frame)
      local foot_offset = probe.foot_offset.left
      local floor = ik.ground.plane{ point = pos(probe.bones.leftFoot) - probe.up * foot_offset,
                                     normal = probe.up }
      local h = make{ targets = { root = target }, ground = floor }
      for f = 1, 120 do
        target:set_position(start + h.forward * (0.5 * f / 120))
        h:update(DT)
      end
      settle(h, 90)
      local want = start + h.forward * 0.5 + h.up * h.pelvis.offset
      assert.is_true((pos(hips) - want):length() < 1e-3)
      assert.is_true(math.abs(h.pelvis.offset) < 0.05)
    end)
  end)
end

-- A VRM's own eye point (VRM 1.0 lookAt.offsetFromHeadBone, VRM 0.x
-- firstPerson.firstPersonBoneOffset: between the eyes, 1 cm ahead, in the test
-- characters): the look's eye when the map has no eye bones.
for _, file in ipairs({ "vrm1_tpose.vrm", "vrm0_tpose.vrm" }) do
  describe("ik.rigs.humanoid on " .. file .. " without its eye bones", function()
    it("looks from the file's eye point", function()
      local model = assert(ik.import("tests/data/characters/" .. file))
      local map = {}
      for role, name in pairs(model.humanoid_names) do
        if role ~= "leftEye" and role ~= "rightEye" then map[role] = name end
      end
      local target = ik.node{}
      local h = rigs.humanoid{ skeleton = model.skeleton, map = map, model = model,
                               targets = { look = target }, reset_pose = true }
      local head = h.bones.head
      assert.equal(model.humanoid_names.head, model.look_offset.bone)
      -- the eye point in the head's space, from the file's offset alone
      local eye_ls = ik.vec3(model.look_offset.offset)
      local rest = ik.quat(head:get_rotation())
      local forward_ls = rest:inverse() * h.forward
      for _, p in ipairs({ { 1.5, 0.5, 0.3 }, { 1.2, -0.6, -0.2 }, { 2, 0.8, 0.5 } }) do
        local at = pos(head) + rest * eye_ls + h.forward * p[1] + h.left * p[2] + h.up * p[3]
        target:set_position(at)
        settle(h, 2)
        local q = ik.quat(head:get_rotation())
        local eye = pos(head) + q * eye_ls
        local want = (at - eye):normalized()
        assert.is_false(h.look.clamped)
        assert.is_true(math.acos(math.min(1, (q * forward_ls):dot(want))) < 1e-3)
      end
    end)
  end)
end
