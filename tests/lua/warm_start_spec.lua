-- Where a solve starts: warm start (the default: from the last solution, carried with
-- the root), `deterministic` (from the same pose every time), the FABRIK `mode`, the
-- iteration budget, and that none of it allocates.
local ik = require("ik")
local h = require("spec_helper")

local double = ik.real == "double"
local TOL = double and 1e-9 or 2e-4

local allocated = h.allocated

-- A character: hips, then a spine of 6 bones straight up (a 6-joint FABRIK chain from
-- spine1 to head), its animated pose set by animate(t) as an animation player would.
local function character()
  local spec = { { name = "hips", position = { 0, 1, 0 } } }
  local parent = "hips"
  for i = 1, 6 do
    local name = "spine" .. i
    spec[#spec + 1] = { name = name, parent = parent, position = { 0, i == 1 and 0.1 or 0.2, 0 } }
    parent = name
  end
  local sk = ik.skeleton(spec)
  local bones = {}
  for i = 1, 6 do bones[i] = sk:bone("spine" .. i) end
  local rest = {}
  for i, b in ipairs(sk:bones()) do rest[i] = b:get_local_rotation() end
  local self = { sk = sk, bones = bones, hips = sk:bone("hips") }
  -- Every bone back to its animated local rotation (a gentle sway): the last IK is gone.
  function self.animate(t)
    for i, b in ipairs(sk:bones()) do
      if i > 1 then b:set_local_rotation(ik.quat.euler(0.05 * math.sin(t + i), 0, 0.04 * math.cos(t))) end
      if i == 1 then b:set_local_rotation(rest[1]) end
    end
  end
  return self
end

-- The target path: a slow loop in front of the chest, within reach; into p when given.
local function target_at(frame, p)
  local a = frame * 0.03
  p = p or {}
  p[1], p[2], p[3] = 0.3 * math.cos(a), 1.7 + 0.15 * math.sin(2 * a), 0.25 + 0.15 * math.sin(a)
  return p
end

-- Total sweeps over 100 frames of animation and a moving target.
local function sweeps_over_frames(deterministic)
  local ch = character()
  local target = ik.node{ position = target_at(0) }
  local chain = ik.chain{ bones = ch.bones, target = target, solver = "fabrik", iterations = 50,
                          tolerance = 1e-4, deterministic = deterministic }
  local total, reached = 0, 0
  for frame = 1, 100 do
    ch.animate(frame / 60)
    target:set_position(target_at(frame))
    local ok, _, it = chain:solve()
    total = total + it
    if ok then reached = reached + 1 end
  end
  return total, reached
end

describe("warm start", function()
  it("is a bone chain's default, and takes far fewer sweeps than starting from the animation", function()
    assert.is_false(ik.chain{ bones = character().bones }.deterministic)
    local warm, warm_reached = sweeps_over_frames(false)
    local cold, cold_reached = sweeps_over_frames(true)
    assert.are.equal(100, warm_reached)
    assert.are.equal(100, cold_reached)
    -- Measured (double and float, either mode): 193 sweeps warm against 433 from the
    -- animated pose. At least 40% fewer is asserted.
    assert.is_true(warm <= 0.6 * cold, "warm " .. warm .. " sweeps, cold " .. cold)
  end)

  it("carries the last solution with the root and what it hangs from", function()
    local ch = character()
    local target = ik.node{ position = { 0.3, 1.9, 0.3 } }
    local chain = ik.chain{ bones = ch.bones, target = target, iterations = 50, tolerance = 1e-6 }
    assert.is_true((chain:solve()))
    -- The animation puts the spine back, and the whole body walks and turns, the target
    -- with it: the solution, carried along, is still on the target.
    ch.animate(0)
    local turn = ik.quat.euler(0, 0.7, 0)
    local move = ik.vec3(2, 0, -1)
    ch.hips:set_position(move + ik.vec3(0, 1, 0))
    ch.hips:set_rotation(turn)
    local p = target:get_position() - ik.vec3(0, 1, 0)
    target:set_position(move + ik.vec3(0, 1, 0) + turn * p)
    local reached, _, sweeps = chain:solve()
    assert.is_true(reached)
    assert.are.equal(0, sweeps)
    -- From the animated pose it takes sweeps again.
    ch.animate(0)
    chain.deterministic = true
    local _, _, cold = chain:solve()
    assert.is_true(cold > 0)
  end)

  it("turns the bones from the animated pose, so the animation's twist is kept", function()
    -- Two characters with the same history; in the last frame the animation twists one's
    -- bone 3 about its own axis (+Y locally), which moves no joint.
    local twist = ik.quat.axis_angle({ 0, 1, 0 }, 0.6)
    local out = {}
    for k = 1, 2 do
      local ch = character()
      local chain = ik.chain{ bones = ch.bones, target = { 0.3, 1.8, 0.3 }, iterations = 50 }
      chain:solve()
      ch.animate(0)
      chain:solve({ 0.2, 1.85, 0.25 })
      ch.animate(0)
      local b = ch.bones[3]
      if k == 2 then b:set_local_rotation(b:get_local_rotation() * twist) end
      chain:solve({ 0.25, 1.8, 0.3 })
      out[k] = ch
    end
    -- Same solved joints (the start is the last solution); bone 3 keeps its twist.
    for i = 1, 6 do
      assert(h.vec_near(out[2].bones[i]:get_position(), out[1].bones[i]:get_position(), TOL))
    end
    assert(h.quat_near(out[2].bones[3]:get_rotation(), out[1].bones[3]:get_rotation() * twist, TOL))
  end)

  it("point chains start from the pose given, or with deterministic = false from their last", function()
    local positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 } }
    local c = ik.chain{ positions = positions, iterations = 30 }
    assert.is_true(c.deterministic)
    local _, _, first = c:solve({ 1, 1.5, 1 })
    assert.is_true(first > 0)
    local _, _, again = c:solve({ 1, 1.5, 1 })
    assert.are.equal(first, again)
    c.deterministic = false
    _, _, again = c:solve({ 1, 1.5, 1 })
    assert.are.equal(0, again)
  end)

  it("a point chain's pose is a function of its target, not of the targets before", function()
    local positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } }
    local function pose(path)
      local c = ik.chain{ positions = positions, iterations = 20, pole = ik.pole{ position = { 1, 2, 0 } } }
      for _, p in ipairs(path) do c:solve(p) end
      local out = {}
      for i = 1, 4 do out[i] = ik.vec3(c:joint(i)) end
      return out
    end
    local a = pose({ ik.vec3(1.2, 1, 0.5), ik.vec3(0.5, 1.5, -0.8), ik.vec3(1, 1, 1) })
    local b = pose({ ik.vec3(-1, 1, 0), ik.vec3(1, 1, 1) })
    for i = 1, 4 do assert.are.equal(0, (a[i] - b[i]):length()) end
  end)
end)

describe("deterministic", function()
  it("a bone chain gives the same result whatever the history", function()
    local function run(history)
      local ch = character()
      local chain = ik.chain{ bones = ch.bones, target = { 0.3, 1.9, 0.3 }, deterministic = true,
                              iterations = 8 }
      for _, t in ipairs(history) do
        ch.animate(0.5)
        chain:solve(t)
      end
      ch.animate(0.5)
      local reached, distance, it = chain:solve({ 0.25, 1.85, 0.35 })
      local out = { reached, distance, it }
      for _, b in ipairs(ch.bones) do
        local q = b:get_rotation()
        out[#out + 1] = q.x
        out[#out + 1] = q.y
        out[#out + 1] = q.z
        out[#out + 1] = q.w
      end
      return out
    end
    local history = { { 0.5, 1.5, 0 }, { -0.3, 2, 0.4 }, { 0, 1.6, -0.5 } }
    assert.are.same(run({}), run(history))
    assert.are.same(run({}), run({ { 0.1, 1.9, 0.2 } }))
  end)

  it("a point chain starts from the pose given at creation or by set_positions", function()
    local pose = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0.1 }, { 0, 3, 0 } }
    local function run(history, deterministic)
      local c = ik.chain{ positions = pose, iterations = 3, deterministic = deterministic }
      for _, t in ipairs(history) do c:solve(t) end
      local reached, distance, it = c:solve({ 1, 1, 1 })
      local out = { reached, distance, it }
      for j = 1, #c do
        local x, y, z = c:joint_xyz(j)
        out[#out + 1], out[#out + 2], out[#out + 3] = x, y, z
      end
      return out
    end
    local history = { { 2, 0, 0 }, { -1, 1, 1 } }
    assert.are.same(run({}, true), run(history, true))
    -- not vacuous: warm, the history shows
    assert.are_not.same(run({}, false), run(history, false))
    -- set_positions gives the new start
    local c = ik.chain{ positions = pose, iterations = 3, deterministic = true }
    c:solve({ 2, 0, 0 })
    c:set_positions{ { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } }
    local fresh = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } },
                            iterations = 3 }
    c:solve({ 1, 1, 1 })
    fresh:solve({ 1, 1, 1 })
    for j = 1, 4 do assert.are.same(h.xyz(fresh:joint(j)), h.xyz(c:joint(j))) end
  end)

  -- Targets on lines through the root, 1% of the length a frame, to 0.1 of it either
  -- side, on 30 lines (fixed seed) for each of 4 poles (3 and none). A chain started
  -- straight from the pose given turned over where the target passed the root on every
  -- one of them, each solver (a bone turning more than 30 degrees in a frame). It now
  -- starts from that pose folded towards a loop there, and the pole lets go there.
  it("a point chain's pose does not turn over as its target passes through its root", function()
    local atan2 = math.atan2 or math.atan
    local function turn(a, b) return atan2(a:cross(b):length(), a:dot(b)) end
    local seed = 12345
    local function random() -- Park and Miller's: exact in doubles, the same lines on every Lua
      seed = (seed * 16807) % 2147483647
      return seed / 2147483647
    end
    local lines = {}
    for k = 1, 30 do lines[k] = ik.vec3(random() - 0.5, random() - 0.5, random() - 0.5):normalized() end
    local poles = { { 1, 2, 0 }, { 0, 0, 3 }, { -2, 1, 1 }, false }
    for _, solver in ipairs({ "fabrik", "plain", "ccd", "dls" }) do
      local flipped = 0
      for _, pole in ipairs(poles) do
        for _, u in ipairs(lines) do
          local c = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } },
                              solver = solver == "plain" and "fabrik" or solver,
                              mode = solver == "plain" and "plain" or nil,
                              iterations = solver == "ccd" and 40 or 20, tolerance = 1e-3 }
          if pole then c.pole = ik.pole{ position = pole } end
          local prev, flips = nil, 0
          for f = 0, 20 do
            assert.is_true(c:solve(u * (-0.3 + f * 0.03)))
            local now = {}
            for i = 1, 3 do now[i] = (c:joint(i + 1) - c:joint(i)):normalized() end
            for i = 1, prev and 3 or 0 do
              if turn(prev[i], now[i]) > math.rad(30) then flips = flips + 1 end
            end
            prev = now
          end
          if flips > 0 then flipped = flipped + 1 end
        end
      end
      -- what is left (docs/motion.md): FABRIK turns over on 1 line, CCD on 7 (as it sets
      -- out from the root), DLS on none
      local allowed = ({ fabrik = 1, plain = 1, ccd = 7, dls = 0 })[solver]
      assert.is_true(flipped <= allowed, solver .. ": turned over on " .. flipped .. " of 120 lines")
    end
  end)

  it("is a boolean field", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } } }
    c.deterministic = true
    assert.is_true(c.deterministic)
    assert(h.raises(function() c.deterministic = 1 end,
      "ik.chain: bad field 'deterministic' (boolean expected, got 1)"))
    assert(h.raises(function() ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, deterministic = "x" } end,
      "ik.chain: bad field 'deterministic' (boolean expected, got string)"))
  end)
end)

describe("mode", function()
  it("is 'plain' or 'refined'", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, mode = "refined" }
    assert.are.equal("refined", c.mode)
    c.mode = "plain"
    assert.are.equal("plain", c.mode)
    assert(h.raises(function() c.mode = "fast" end,
      "ik.chain: bad field 'mode' ('plain' or 'refined' expected, got 'fast')"))
    assert(h.raises(function() c.mode = 2 end,
      "ik.chain: bad field 'mode' ('plain' or 'refined' expected, got 2)"))
    assert.are.equal("plain", c.mode)
    for _, mode in ipairs({ "plain", "refined" }) do
      c.mode = mode
      c:set_positions{ { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0.01 } }
      local reached = c:solve({ 1, 1, 0.5 })
      assert.is_true(reached, mode)
    end
  end)

  it("reaches, refined, what the plain sweeps crawl towards within the same budget", function()
    local function solve(mode)
      local c = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 }, { 4, 0, 0 } },
                          iterations = 50, tolerance = double and 1e-8 or 1e-5, mode = mode }
      return c:solve({ 3.9, 0.5, 0.2 }) -- near full reach: FABRIK converges slowly there
    end
    local plain_reached, _, plain_its = solve("plain")
    local refined_reached, _, refined_its = solve("refined")
    assert.is_false(plain_reached)
    assert.are.equal(50, plain_its)
    assert.is_true(refined_reached)
    assert.is_true(refined_its < 50)
  end)
end)

describe("the iteration budget", function()
  it("can be lowered and raised between solves", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0.1 }, { 0, 3, 0 }, { 0, 4, 0 } },
                        iterations = 50, tolerance = 1e-8, deterministic = true }
    local target = { 1.5, 2, 1 }
    local _, _, full = c:solve(target)
    assert.is_true(full > 2)
    c.iterations = 2 -- a distant character: fewer sweeps
    local reached, _, low = c:solve(target)
    assert.are.equal(2, low)
    assert.is_false(reached)
    c.iterations = 50
    local _, _, again = c:solve(target)
    assert.are.equal(full, again)
  end)
end)

describe("allocation", function()
  it("chain:solve allocates nothing: point chains, bone chains over ik.bone with ik.node targets", function()
    local ch = character()
    local target = ik.node{ position = target_at(0) }
    local pole = ik.node{ position = { 0, 1.5, 1 }, parent = ch.hips }
    local warm = ik.chain{ bones = ch.bones, target = target, pole = pole, iterations = 20 }
    local cold = ik.chain{ bones = ch.bones, target = target, iterations = 20, deterministic = true,
                           mode = "refined" }
    local point = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, target = target }
    local limb = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, solver = "two_bone",
                           deterministic = true }
    local p, v = { 0, 0, 0 }, ik.vec3(0.5, 1, 0)
    assert.are.equal(0, allocated(function()
      for frame = 1, 1000 do
        target:set_position(target_at(frame, p))
        warm:solve()
        cold:solve()
        point:solve()
        limb:solve(v)
      end
    end))
  end)
end)
