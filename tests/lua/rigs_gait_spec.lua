-- ik.rigs.gait on its own, with no body and no ground: sides, ranks, neighbours and
-- groups from the anchors, the exact messages of layouts and patterns that cannot walk,
-- the swing's arc, and the stepping's timing between frames (when a want began, when a
-- group goes, when a foot lands), its order, hysteresis, blocked feet and short steps.
local gait = require("ik.rigs.gait")

local OWNER = "ik.rigs.demo"
-- +X left, +Z forward: left front, left back, right front, right back
local QUAD = { { 1, 0, 1 }, { 1, 0, -1 }, { -1, 0, 1 }, { -1, 0, -1 } }
local HEX = { { 1, 0, 1 }, { 1, 0, 0 }, { 1, 0, -1 }, { -1, 0, 1 }, { -1, 0, 0 }, { -1, 0, -1 } }

local function feet_for(anchors)
  local feet = {}
  for i = 1, #anchors do feet[i] = { rest = { 0, 0 }, step_distance = 0.2, min_step = 0.05 } end
  return feet
end

local function make(anchors, pattern)
  local feet = feet_for(anchors)
  local g = gait.new{ owner = OWNER, feet = feet, anchors = anchors, pattern = pattern, step_time = 0.25,
                      step_height = 0.1, hysteresis = 0.2 }
  for _, foot in ipairs(feet) do gait.plant(foot, 0, 0, 0) end
  return g, feet
end

-- A frame of 0.1 s in which `foot` came to be d off its place.
local function frame(g, foot, d)
  g:tick(0.1)
  g:measure(foot, d, 0.1)
end

-- Two frames of 0.1 s: every foot 0.1 off its place, then `d[i]` off (0.1 when not given).
local function two_frames(g, feet, d)
  g:tick(0.1)
  for _, f in ipairs(feet) do g:measure(f, 0.1, 0.1) end
  g:tick(0.1)
  for i, f in ipairs(feet) do g:measure(f, d[i] or 0.1, 0.1) end
end

-- gait.new called from a rig's constructor: the message, and that it blames that
-- constructor's caller (this file).
local function rig_new(anchors, pattern)
  local g = gait.new{ owner = OWNER, feet = feet_for(anchors), anchors = anchors, pattern = pattern }
  return g
end
local function refusal(anchors, pattern)
  local ok, err = pcall(function()
    local g = rig_new(anchors, pattern)
    return g
  end)
  assert.is_false(ok)
  local msg = err:match("^[^:]*rigs_gait_spec%.lua:%d+: (.*)$")
  assert.is_not_nil(msg, err)
  return msg
end

-- Where landing() put each foot it was asked about, and what it was told.
local function recorder(x)
  local asked = {}
  local function landing(host, foot, late, back)
    asked[#asked + 1] = { foot = foot, late = late, back = back, host = host }
    if x == false then return nil end
    return x or 1, 0, 0
  end
  return landing, asked
end

describe("ik.rigs.gait", function()
  describe("layout and groups", function()
    it("ranks four feet front to back on each side, neighbours along a side and across a rank", function()
      local g, feet = make(QUAD)
      assert.are.same({ 1, 2 }, g.left)
      assert.are.same({ 3, 4 }, g.right)
      assert.are.same({ "left", 1 }, { feet[1].side, feet[1].rank })
      assert.are.same({ "right", 2 }, { feet[4].side, feet[4].rank })
      assert.are.same({ 2, 3 }, feet[1].neighbours)
      assert.are.same({ 3, 2 }, feet[4].neighbours)
      assert.are.same({ { 1, 4 }, { 3, 2 } }, g.groups) -- the diagonals
      assert.are.same({ 1, 2, 2, 1 }, { feet[1].group, feet[2].group, feet[3].group, feet[4].group })
      assert.are.same({ 0, true, 0 }, { feet[1].steps, feet[1].planted, feet[1].t })
    end)

    it("makes tripods and ripples of six, ripples of four, a list as given, and a biped's two", function()
      assert.are.same({ { 1, 5, 3 }, { 4, 2, 6 } }, (make(HEX, "tripod")).groups)
      assert.are.same({ { 3, 5 }, { 2, 4 }, { 1, 6 } }, (make(HEX, "ripple")).groups)
      assert.are.same({ { 2 }, { 1 }, { 4 }, { 3 } }, (make(QUAD, "ripple")).groups)
      assert.are.same({ { 1, 4 }, { 2 }, { 3 } }, (make(QUAD, { { 1, 4 }, { 2 }, { 3 } })).groups)
      local g, feet = make({ { 0.1, 0, 0 }, { -0.1, 0, 0 } })
      assert.are.same({ { 1 }, { 2 } }, g.groups)
      assert.are.same({ 2 }, feet[1].neighbours)
    end)

    it("refuses what cannot walk, naming the option", function()
      local GAIT = "ik.rigs.demo: option 'gait' ("
      local EXPECTED = GAIT .. "'alternate', 'tripod', 'ripple' or a list of groups of legs expected, got "
      assert.are.equal("ik.rigs.demo: leg 2's hip is on the body's centre line (x = 0 in the body's frame): "
        .. "on neither side", refusal({ { 1, 0, 0 }, { 0, 0, 1 } }))
      assert.are.equal("ik.rigs.demo: option 'legs' (as many legs on the left, hip x > 0 in the body's "
        .. "frame, as on the right expected, got 3 and 1)",
        refusal({ { 1, 0, 0 }, { 1, 0, 1 }, { 1, 0, 2 }, { -1, 0, 0 } }))
      assert.are.equal(GAIT .. "'tripod' needs 6 legs, got 4)", refusal(QUAD, "tripod"))
      assert.are.equal(GAIT .. "'ripple' needs 4 or 6 legs, got 2)",
        refusal({ { 1, 0, 0 }, { -1, 0, 0 } }, "ripple"))
      assert.are.equal(EXPECTED .. "\"trot\")", refusal(QUAD, "trot"))
      assert.are.equal(EXPECTED .. "table)", refusal(QUAD, { { 1, 4 }, {} }))
      assert.are.equal(GAIT .. "leg 3 is in no group)", refusal(QUAD, { { 1, 4 }, { 2 } }))
      assert.are.equal("ik.rigs.demo: option 'gait' (group 2: leg 1 is no leg or in two groups)",
        refusal(QUAD, { { 1, 4 }, { 1, 2, 3 } }))
      assert.are.equal("ik.rigs.demo: option 'gait' (group 1: leg 9 is no leg or in two groups)",
        refusal(QUAD, { { 9 } }))
      assert.are.equal("ik.rigs.demo: option 'gait' (group 1 holds neighbouring legs 1 and 2)",
        refusal(QUAD, { { 1, 2 }, { 3, 4 } }))
    end)
  end)

  describe("the arc", function()
    local a, b = { 0, 0, 0 }, { 1, 0.2, -1 }

    it("runs from one plant to the other, over the higher by the step height", function()
      assert.are.same({ 0, 0, 0 }, { gait.arc(a, b, 0, 0.1) })
      local x, y, z = gait.arc(a, b, 1, 0.1)
      assert.are.same({ 1, -1 }, { x, z })
      assert.is_true(math.abs(y - 0.2) < 1e-15)
      local _, top = gait.arc(a, b, 0.5, 0.1)
      assert.is_true(math.abs(top - 0.3) < 1e-12)
      for s = 0.05, 1, 0.05 do assert.is_true(select(2, gait.arc(a, b, s, 0.1)) <= top + 1e-12) end
    end)

    it("rises before it moves across and comes down after", function()
      local x, y = gait.arc(a, b, 0.15, 0.1)
      assert.are.equal(0, x)
      assert.is_true(y > 0.1)
      local x2, y2 = gait.arc(a, b, 0.85, 0.1)
      assert.is_true(math.abs(x2 - 1) < 1e-12)
      assert.is_true(y2 > 0.2 + 0.04)
    end)

    it("is where a swinging foot is, and a planted foot is on its plant", function()
      local g, feet = make(QUAD)
      gait.plant(feet[1], 0.5, 0.1, 0.2)
      assert.are.same({ 0.5, 0.1, 0.2 }, { g:foot_point(feet[1]) })
      feet[1].planted, feet[1].from, feet[1].dest, feet[1].t = false, a, b, 0.4
      assert.are.same({ gait.arc(a, b, 0.4, 0.1) }, { g:foot_point(feet[1]) })
    end)
  end)

  describe("stepping", function()
    it("wants a step from the moment between frames that the foot passed its step distance", function()
      local g, feet = make(QUAD)
      local f = feet[1]
      frame(g, f, 0.1)
      assert.is_nil(f.want_since)
      frame(g, f, 0.3) -- 0.1 -> 0.3 over the frame: 0.2 reached half way
      assert.is_true(math.abs(f.want_since - 0.15) < 1e-15)
      assert.are.same({ 0.1, 0.3, 0.3 }, { f.prev_distance, f.last_distance, f.distance })
    end)

    it("keeps wanting down to (1 - hysteresis) of the step distance", function()
      local g, feet = make(QUAD)
      local f = feet[1]
      frame(g, f, 0.25)
      local since = f.want_since
      frame(g, f, 0.17) -- below 0.2, above 0.16
      assert.are.equal(since, f.want_since)
      frame(g, f, 0.15)
      assert.is_nil(f.want_since)
    end)

    it("starts a group at the moment it came due, its feet swinging ahead by the remainder", function()
      local g, feet = make(QUAD)
      local landing, asked = recorder(0.5)
      two_frames(g, feet, { 0.3 }) -- foot 1 due at 0.15
      local host = {}
      g:start_steps(0.1, landing, host)
      assert.are.equal(1, #asked) -- foot 4, of the same group, is not far enough off to go along
      assert.are.same({ feet[1], host }, { asked[1].foot, asked[1].host })
      assert.is_true(math.abs(asked[1].late - 0.05) < 1e-15 and math.abs(asked[1].back - 0.5) < 1e-14)
      local f = feet[1]
      assert.is_false(f.planted)
      assert.is_true(math.abs(f.t - 0.2) < 1e-14)
      assert.are.same({ 0.5, 0, 0 }, f.dest)
      assert.are.same({ 0, 0, 0 }, f.from)
      assert.is_nil(f.want_since)
      assert.are.equal(2, g.next_group)
    end)

    it("takes along a group's feet more than half their step distance off", function()
      local g, feet = make(QUAD)
      local landing, asked = recorder(0.5)
      two_frames(g, feet, { 0.3, nil, nil, 0.14 }) -- foot 4 0.12 off at the group's moment: over 0.1
      g:start_steps(0.1, landing)
      assert.are.equal(2, #asked)
      assert.is_false(feet[4].planted)
    end)

    it("lands a foot at the moment its swing ended, and holds its neighbours until then", function()
      local g, feet = make(QUAD)
      local landing = recorder(0.5)
      two_frames(g, feet, { 0.1 + 0.1 / 0.75 }) -- foot 1 due 3/4 into the frame: at 0.175
      g:start_steps(0.1, landing)
      assert.is_true(math.abs(feet[1].t - 0.1) < 1e-12) -- 0.025 s of 0.25 gone
      -- its neighbour 2 wants a step from now on: it waits for foot 1 to land
      for _ = 1, 2 do
        g:tick(0.1)
        g:swing(0.1)
        g:measure(feet[2], 0.5, 0.1)
        g:start_steps(0.1, landing)
        assert.is_false(feet[1].planted)
        assert.is_true(feet[2].planted)
      end
      g:tick(0.1)
      g:swing(0.1)
      assert.is_true(feet[1].planted)
      assert.are.equal(1, feet[1].steps)
      assert.are.same({ 0.5, 0, 0 }, feet[1].plant)
      assert.is_nil(feet[1].dest)
      assert.is_true(math.abs(feet[1].land_time - 0.425) < 1e-12) -- 0.175 + 0.25, between the frames
      local landing2, asked = recorder(0.7)
      g:measure(feet[2], 0.5, 0.1)
      g:start_steps(0.1, landing2)
      assert.are.equal(1, #asked)
      -- it goes at the moment foot 1 landed, not at the frame
      assert.is_true(math.abs(asked[1].late - 0.075) < 1e-12)
      assert.is_true(math.abs(feet[2].t - 0.3) < 1e-12)
      assert.is_false(feet[2].planted)
    end)

    it("starts groups that came due within a frame in the order they came, not in turn", function()
      local g, feet = make(QUAD, { { 1 }, { 4 }, { 2, 3 } })
      local landing, asked = recorder(0.5)
      frame(g, feet[1], 0.1)
      g:measure(feet[4], 0.1, 0.1)
      frame(g, feet[1], 0.21) -- due late in the frame
      g:measure(feet[4], 0.6, 0.1) -- due early
      g:start_steps(0.1, landing) -- group 1 is next in turn, group 2 came first
      assert.are.same({ feet[4], feet[1] }, { asked[1].foot, asked[2].foot })
      assert.are.equal(2, g.next_group) -- after group 1, the last to go
    end)

    it("keeps the plant when there is nowhere to land, until the rest point moves on", function()
      local g, feet = make(QUAD)
      local f = feet[1]
      frame(g, f, 0.3)
      local nowhere = recorder(false)
      f.rest[1], f.rest[2] = 1, 2
      g:start_steps(0.1, nowhere)
      assert.is_true(f.planted)
      assert.are.same({ 1, 2 }, f.blocked_at)
      local landing, asked = recorder(0.5)
      g:tick(0.1)
      f.rest[1] = 1.04 -- less than a quarter of the step distance
      g:measure(f, 0.3, 0.1)
      g:start_steps(0.1, landing)
      assert.are.equal(0, #asked)
      g:tick(0.1)
      f.rest[1] = 1.06
      g:measure(f, 0.3, 0.1)
      assert.is_nil(f.blocked_at)
      g:start_steps(0.1, landing)
      assert.are.equal(1, #asked)
      assert.is_false(f.planted)
    end)

    it("takes no step shorter than the foot's min_step", function()
      local g, feet = make(QUAD)
      frame(g, feet[1], 0.3)
      g:start_steps(0.1, recorder(0.04))
      assert.is_true(feet[1].planted)
      assert.are.same({ 0, 0 }, feet[1].blocked_at)
    end)

    it("forgets swings and wants when a foot is planted afresh", function()
      local g, feet = make(QUAD)
      frame(g, feet[1], 0.3)
      g:start_steps(0.1, recorder(0.5))
      gait.plant(feet[1], 2, 0, 0)
      assert.are.same({ true, 0, { 2, 0, 0 } }, { feet[1].planted, feet[1].t, feet[1].plant })
      assert.is_nil(feet[1].want_since)
      assert.is_nil(feet[1].dest)
      assert.are.equal(-math.huge, feet[1].land_time)
    end)
  end)
end)
