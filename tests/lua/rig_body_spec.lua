-- ik.rigs.body on the built-in humanoid and every test character, on scripted tracker
-- paths standing for a VR session (tests/lua/body_paths.lua): the head and hands reach
-- their targets, nothing jumps, planted feet stay put, never both feet in the air, the
-- same at 30, 60 and 144 Hz, and the same twice. Then weights, budget and bad options.
local ik = require("ik")
local rigs = require("ik.rigs")
local cases = require("humanoid_cases")
local paths_of = require("body_paths")

local float = ik.real == "float"
local HEAD_TOLERANCE = 1e-3
local SLIDE = float and 1e-4 or 1e-6

local function pos(t) return ik.vec3(t:get_position()) end

-- A fresh body on a fresh copy of the case's character, with its three trackers.
local function make(case, extra)
  local fresh
  for _, c in ipairs(cases.all()) do
    if c.name == case.name then fresh = c end
  end
  local nodes = { head = ik.node{}, left = ik.node{}, right = ik.node{} }
  local o = { skeleton = fresh.skeleton, map = fresh.map, model = fresh.model, reset_pose = true,
              targets = { head = nodes.head, left_hand = nodes.left, right_hand = nodes.right } }
  for k, v in pairs(extra or {}) do o[k] = v end
  local body = rigs.body(o)
  return body, nodes, fresh
end

-- Runs `name` at `hz` for `seconds` (default its duration), calling check(frame) after
-- each update with what moved.
local function run(case, name, hz, seconds, check, extra)
  local body, nodes, c = make(case, extra)
  local paths = paths_of.for_body(body)
  local dt = 1 / hz
  local frames = math.floor((seconds or paths[name].duration) * hz + 0.5)
  local bones = c.skeleton:bones()
  local last_rot, last_track = {}, {}
  for f = 0, frames do
    paths.apply(name, f * dt, nodes)
    body:update(f == 0 and 0 or dt)
    if check then
      local moved = 0
      for k, n in pairs(nodes) do
        local p = pos(n)
        if last_track[k] then moved = math.max(moved, (p - last_track[k]):length()) end
        last_track[k] = p
      end
      local turned = 0
      for i, bone in ipairs(bones) do
        local q = ik.quat(bone:get_rotation())
        if last_rot[i] then turned = math.max(turned, last_rot[i]:angle_to(q)) end
        last_rot[i] = q
      end
      check(body, nodes, f, moved, turned)
    end
  end
  return body, c
end

for _, case in ipairs(cases.all()) do
  describe("ik.rigs.body on " .. case.name, function()
    for _, name in ipairs(paths_of.names) do
      it("follows '" .. name .. "': head within 1 mm, hands where reachable, no jumps, feet planted",
        function()
          local worst_head, worst_hand, worst_turn, worst_slide = 0, 0, 0, 0
          local reachable, frames = 0, 0
          local last_foot = {}
          local check = function(body, nodes, f, moved, turned)
            local b = body.bones
            worst_head = math.max(worst_head, (pos(b.head) - pos(nodes.head)):length())
            for side, node in pairs({ left = nodes.left, right = nodes.right }) do
              local a = body.arms[side]
              local t = pos(node)
              frames = frames + 1
              if (t - pos(a.upper)):length() < 0.995 * a.reach then
                reachable = reachable + 1
                worst_hand = math.max(worst_hand, (pos(a.hand) - t):length())
              end
            end
            if f > 0 and moved < 0.01 * body.height then worst_turn = math.max(worst_turn, turned) end
            assert.is_true(body.legs[1].planted or body.legs[2].planted, "both feet in the air")
            for i, leg in ipairs(body.legs) do
              local p = pos(leg.foot_bone)
              local plant = leg.planted and leg.plant
              if plant and last_foot[i] and last_foot[i].plant == plant then
                worst_slide = math.max(worst_slide, (p - last_foot[i].p):length())
              end
              last_foot[i] = { p = p, plant = plant }
            end
          end
          run(case, name, 60, nil, check)
          assert.is_true(worst_head <= HEAD_TOLERANCE, string.format("head %.6g m off", worst_head))
          assert.is_true(worst_hand <= 1e-3,
            string.format("a hand %.6g m off a reachable target", worst_hand))
          assert.is_true(reachable >= 0.5 * frames, string.format("%d of %d hand frames reachable", reachable,
            frames))
          assert.is_true(worst_turn <= math.rad(30), string.format("a bone turned %.3g deg in a frame",
            math.deg(worst_turn)))
          assert.is_true(worst_slide <= SLIDE, string.format("a planted foot slid %.3g m", worst_slide))
        end)
    end

    it("turns no arm bone more in a frame than 10x its hand tracker's motion seen from the shoulder",
      function()
        -- every frame, not only slow ones: the tracker's motion is the angle it turned
        -- through about the shoulder, the change of its distance from the shoulder (in
        -- reaches, as radians) or its own rotation, whichever is most
        local worst, where = 0, ""
        for _, name in ipairs(paths_of.names) do
          local last = {}
          run(case, name, 60, nil, function(body, nodes, f)
            for _, side in ipairs({ "left", "right" }) do
              local a = body.arms[side]
              local now = { off = pos(nodes[side]) - pos(a.upper), bones = {},
                            q = ik.quat(nodes[side]:get_rotation()) }
              for i, bone in ipairs({ a.shoulder or a.upper, a.upper, a.lower, a.hand }) do
                now.bones[i] = ik.quat(bone:get_rotation())
              end
              local l = last[side]
              if l then
                local moved = math.max(rigs.motion.angle(l.off, now.off), l.q:angle_to(now.q),
                  (now.off - l.off):length() / a.reach)
                for i, q in ipairs(now.bones) do
                  local excess = l.bones[i]:angle_to(q) - 10 * moved
                  if excess > worst then
                    worst = excess
                    where = string.format("%s frame %d %s bone %d: turned %.3g deg, tracker %.3g deg", name,
                      f, side, i, math.deg(l.bones[i]:angle_to(q)), math.deg(moved))
                  end
                end
              end
              last[side] = now
            end
          end)
        end
        assert.is_true(worst <= (float and 1e-3 or 1e-6), where)
      end)

    it("walks 2 m: steps, and ends standing with the head over its feet", function()
      local body = run(case, "walk 2 m", 60)
      assert.is_true(body:step_count() >= 4, "steps: " .. body:step_count())
      assert.is_true(body:standing())
      local mid = (pos(body.legs[1].foot_bone) + pos(body.legs[2].foot_bone)) * 0.5
      local moved = (mid - body.feet_mid):dot(body.forward)
      assert.is_true(math.abs(moved - 2) < 0.1, "feet moved " .. moved)
    end)

    it("turns on the spot: the feet step round with it", function()
      local body = run(case, "turn 360", 60)
      assert.is_true(body:step_count() >= 4, "steps: " .. body:step_count())
      local foot = body.legs[1]
      assert.is_true(math.abs(rigs.motion.wrap_angle(foot.yaw - 2 * math.pi)) < math.rad(20),
        "left foot's heading " .. math.deg(foot.yaw))
    end)

    it("crouches when the head comes down", function()
      local low
      run(case, "crouch", 60, 2.5, function(body, _, f)
        if f == 150 then low = pos(body.bones.hips).y end
      end)
      local body = make(case)
      local rest = pos(body.bones.hips).y
      assert.is_true(rest - low > 0.15 * body.height, "hips down by " .. (rest - low))
    end)

    it("agrees at 30, 60 and 144 Hz within 1e-3 of its height after 1 s", function()
      for _, name in ipairs(paths_of.names) do
        local poses = {}
        for _, hz in ipairs({ 30, 60, 144 }) do
          local _, c = run(case, name, hz, 1)
          local list = {}
          for i, bone in ipairs(c.skeleton:bones()) do list[i] = pos(bone) end
          poses[hz] = list
        end
        local body = make(case)
        local worst = 0
        for _, hz in ipairs({ 30, 144 }) do
          for i, p in ipairs(poses[hz]) do worst = math.max(worst, (p - poses[60][i]):length()) end
        end
        assert.is_true(worst <= 1e-3 * body.height, string.format("%s: %.3g m apart", name, worst))
      end
    end)

    it("is deterministic: two runs give the same pose bit for bit", function()
      local function final(name)
        local _, c = run(case, name, 60, 2.5)
        local out = {}
        for _, bone in ipairs(c.skeleton:bones()) do
          local x, y, z = bone:get_position()
          if type(x) ~= "number" then x, y, z = x:unpack() end
          out[#out + 1] = string.format("%.17g %.17g %.17g", x, y, z)
        end
        return table.concat(out, "\n")
      end
      for _, name in ipairs({ "walk 2 m", "turn 360", "reach to the floor" }) do
        assert.are.equal(final(name), final(name))
      end
    end)
  end)
end

describe("ik.rigs.body", function()
  local case = cases.all()[2]

  it("blends a target's weight in over time, never snapping", function()
    local body, nodes = make(case)
    local paths = paths_of.for_body(body)
    paths.apply("stand", 0, nodes)
    body:update(0)
    for _ = 1, 60 do body:update(1 / 60) end
    local hand = body.arms.right.hand
    local before = pos(hand)
    nodes.right:set_position(before + body.up * 0.3)
    body.targets.right_hand.position_weight = 0
    body:update(1 / 60)
    body.targets.right_hand.position_weight = 1
    local last, steps = pos(hand), 0
    for _ = 1, 60 do
      body:update(1 / 60)
      local p = pos(hand)
      steps = math.max(steps, (p - last):length())
      last = p
    end
    assert.is_true((last - pos(nodes.right)):length() < 1e-3)
    assert.is_true(steps < 0.06, "the hand jumped " .. steps .. " m in a frame")
  end)

  it("moves the hips to a hips target and the chest towards a chest target, by weight", function()
    local function settle(extra_targets, extra_nodes)
      local body, nodes = make(case)
      local paths = paths_of.for_body(body)
      paths.apply("stand", 0, nodes)
      local b = make(case, { targets = extra_targets(nodes, body) })
      paths = paths_of.for_body(b)
      paths.apply("stand", 0, nodes)
      if extra_nodes then extra_nodes(b) end
      b:update(0)
      for _ = 1, 60 do b:update(1 / 60) end
      return b, nodes
    end
    local plain = settle(function(n) return { head = n.head, left_hand = n.left, right_hand = n.right } end)
    local chest_at = pos(plain.bones.upperChest or plain.bones.chest)
    local hips_at = pos(plain.bones.hips)
    local ct, ht = ik.node{}, ik.node{}
    local b = settle(function(n)
      return { head = n.head, left_hand = n.left, right_hand = n.right,
               chest = { target = ct, rotation_weight = 0 } }
    end, function(body) ct:set_position(chest_at + body.forward * 0.08) end)
    local moved = (pos(b.bones.upperChest or b.bones.chest) - chest_at):dot(b.forward)
    -- the spine, solved for the head, takes some of it back (docs/body.md: 4.0 of 8 cm)
    assert.is_true(moved > 0.035 and moved < 0.045, "the chest moved " .. moved)
    assert.is_true((pos(b.bones.head) - pos(b.targets.head.target)):length() < 1e-3)
    local h = settle(function(n)
      return { head = n.head, left_hand = n.left, right_hand = n.right,
               hips = { target = ht, position_weight = 0.5, rotation_weight = 0 } }
    end, function(body) ht:set_position(hips_at - body.forward * 0.1) end)
    local back = (hips_at - pos(h.bones.hips)):dot(h.forward)
    assert.is_true(math.abs(back - 0.05) < 0.01, "the hips went back " .. back)
  end)

  it("bends an elbow towards its hint by the position weight; the hint's rotation weight does nothing",
    function()
      local function elbow(pw, rw)
        local hint = ik.node{}
        local nodes = { head = ik.node{}, left = ik.node{}, right = ik.node{} }
        local targets = { head = nodes.head, left_hand = nodes.left, right_hand = nodes.right,
                          right_elbow = { target = hint, position_weight = pw, rotation_weight = rw } }
        local body = make(case, { targets = targets })
        local paths = paths_of.for_body(body)
        paths.apply("stand", 0, nodes)
        local a = body.arms.right
        -- the hint above the elbow's default side: the elbow goes up with it
        hint:set_position(pos(a.lower) + body.up * 0.5)
        body:update(0)
        for _ = 1, 30 do body:update(1 / 60) end
        return pos(a.lower), body
      end
      local none = elbow(0, 0)
      local half, body = elbow(0.5, 0)
      local full = elbow(1, 0)
      local full_rot = elbow(1, 1)
      local up = body.up
      assert.is_true((half - none):dot(up) > 0.01, "half weight raised it " .. (half - none):dot(up))
      assert.is_true((full - half):dot(up) > 0.01, "full weight raised it " .. (full - half):dot(up))
      assert.are.equal(0, (full_rot - full):length())
    end)

  it("skips the legs under LOD, and takes a budget", function()
    local body, nodes = make(case, { budget = 2, skip_legs = true })
    assert.are.equal(2, body.spine.iterations)
    body:set_budget(nil)
    assert.are.equal(20, body.spine.iterations)
    local paths = paths_of.for_body(body)
    for f = 0, 120 do
      paths.apply("walk 2 m", f / 60, nodes)
      body:update(f == 0 and 0 or 1 / 60)
    end
    assert.are.equal(0, body:step_count())
    assert.are.equal(0, body._legs_weight)
  end)

  it("keeps the hips where the legs reach with plant_feet, follows the head without", function()
    local function head_miss(plant)
      local body, nodes = make(case, { plant_feet = plant })
      local paths = paths_of.for_body(body)
      paths.apply("stand", 0, nodes)
      nodes.head:set_position(pos(nodes.head) + body.up * 0.2) -- 11.5 cm above what it can reach
      body:update(0)
      for _ = 1, 30 do body:update(1 / 60) end
      return (pos(body.bones.head) - pos(nodes.head)):length()
    end
    assert.is_true(head_miss(true) > 0.05)
    assert.is_true(head_miss(false) < 1e-3)
  end)

  it("gives clear errors for bad options", function()
    local c = cases.all()[2]
    local n = ik.node{}
    local function try(o)
      local base = { skeleton = c.skeleton, map = c.map,
                     targets = { head = n, left_hand = n, right_hand = n } }
      for k, v in pairs(o) do base[k] = v end
      local ok, err = pcall(rigs.body, base)
      assert.is_false(ok)
      return err
    end
    assert.matches("ik.rigs.body: option 'targets': head %(transform expected, got nil%)",
      try{ targets = { left_hand = n, right_hand = n } })
    assert.matches("ik.rigs.body: option 'targets': no target 'nose'",
      try{ targets = { head = n, left_hand = n, right_hand = n, nose = n } })
    assert.matches(
      "ik.rigs.body: option 'targets': left_hand %(position_weight: number in %[0, 1%] expected, got 2%)",
      try{ targets = { head = n, right_hand = n, left_hand = { target = n, position_weight = 2 } } })
    assert.matches("ik.rigs.body: option 'step_time' %(positive number expected, got 0%)",
      try{ step_time = 0 })
    assert.matches("ik.rigs.body: no option 'speed'", try{ speed = 1 })
    assert.matches("ik.rigs.body: option 'map' has no spine", try{ map = { hips = c.map.hips,
      head = c.map.head, leftUpperLeg = c.map.leftUpperLeg, rightUpperLeg = c.map.rightUpperLeg } })
    assert.matches("ik.rigs.body: map.head names no bone of the skeleton", try{ map = { head = "nope" } })
    local body = make(case)
    body.targets.head.rotation_weight = -1
    local ok, err = pcall(body.update, body, 1 / 60)
    assert.is_false(ok)
    assert.matches("ik.rigs.body: targets.head.rotation_weight %(number in %[0, 1%] expected, got %-1%)", err)
    ok, err = pcall(body.update, body, -1)
    assert.is_false(ok)
    assert.matches("ik.rigs.body: update: dt", err)
  end)
end)

describe("ik.demo.body_scene", function()
  local runtime = require("ik.runtime")
  it("runs its script through ik.runtime as ikrig does: every chain reached over its 24 s session", function()
    local scene_mod = require("ik.demo.body_scene")
    local scene = scene_mod.new()
    local reports, events = {}, {}
    scene.report = function(name, reached, distance)
      reports[#reports + 1] = { name = name, reached = reached, distance = distance }
    end
    local path = "lua/" .. scene_mod.scripts[1]:gsub("%.", "/") .. ".lua"
    local rt = runtime.new{ scene = scene, scripts = { path }, watch = false,
                            on_event = function(ev) events[#events + 1] = ev end }
    local hips = scene.skeletons.humanoid:bone("hips")
    local x0 = hips:get_position().x
    local far = 0
    for _ = 1, 1440 do
      scene:advance(1 / 60)
      rt:update(1 / 60)
      far = math.max(far, hips:get_position().x - x0)
    end
    for _, ev in ipairs(events) do assert.are.equal("load", ev.kind, ev.message) end
    assert.are.equal(1440 * 5, #reports)
    local worst = 0
    for _, r in ipairs(reports) do
      assert.is_true(r.reached, r.name)
      worst = math.max(worst, r.distance)
    end
    assert.is_true(worst < 1e-3)
    assert.is_true(far > 1.3, "walked " .. far) -- it walked after the head, 1.5 m out
    rt:close()
  end)
end)
