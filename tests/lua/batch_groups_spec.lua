-- ik.batch reads and turns the bones of a chain that touches one skeleton only (its
-- bones, and targets and poles on that skeleton or on free nodes) off the Lua thread,
-- the chains of one skeleton together on one thread. What matters: that gives bit for
-- bit what the Lua-thread path gives (chains read before any is written), at any thread
-- count, with several chains on a skeleton and one hanging from another; a chain that
-- cannot be read raises as on the Lua thread, in batch order, before any bone turns; a
-- foot's ground is followed when it is replaced, and a closed foot or ground raises.
local ik = require("ik")
local h = require("spec_helper")
local mock = require("mock_transform")

-- A character: hips, a 4-bone spine, an arm on the spine's top, a leg on the hips. Its
-- spine is a FABRIK chain (a hinge on it, carried with the hips) whose target is a
-- free node shared with the next character's arm; the arm (two-bone, match_rotation)
-- hangs from the spine's tip and reaches for a node on the hips, its pole an ik.pole;
-- the leg (two-bone, half weight, deterministic) reaches for a free node, its pole a node
-- on the hips.
local function character(x, shared, next_shared)
  local sk = ik.skeleton{
    { name = "hips", position = { x, 1, 0 } },
    { name = "s1", parent = "hips", position = { 0, 0.1, 0 } },
    { name = "s2", parent = "s1", position = { 0, 0.15, 0.02 } },
    { name = "s3", parent = "s2", position = { 0, 0.15, 0 } },
    { name = "s4", parent = "s3", position = { 0, 0.15, -0.02 } },
    { name = "shoulder", parent = "s4", position = { 0.2, 0, 0 } },
    { name = "elbow", parent = "shoulder", position = { 0.05, -0.3, 0 } },
    { name = "hand", parent = "elbow", position = { 0, -0.25, 0.05 } },
    { name = "thigh", parent = "hips", position = { 0.1, -0.05, 0 } },
    { name = "knee", parent = "thigh", position = { 0, -0.45, 0.03 } },
    { name = "ankle", parent = "knee", position = { 0, -0.45, -0.03 } },
  }
  local b = function(name) return sk:bone(name) end
  local spine = ik.chain{ bones = { b("s1"), b("s2"), b("s3"), b("s4") }, target = shared, iterations = 12 }
  spine:set_constraint(2, ik.hinge{ axis = { 1, 0, 0 }, min = -0.3, max = 0.5 })
  local arm = ik.chain{ bones = { b("shoulder"), b("elbow"), b("hand") }, solver = "two_bone",
                        target = ik.node{ position = { 0.35, 0.4, 0.25 }, parent = b("hips") },
                        pole = ik.pole{ position = { x + 0.5, 1.5, -1 }, weight = 0.7 } }
  arm.match_rotation = true
  local ankle = ik.node{ position = { x + 0.1, 0.1, 0.15 } }
  local leg = ik.chain{ bones = { b("thigh"), b("knee"), b("ankle") }, solver = "two_bone", target = ankle,
                        pole = ik.node{ position = { 0.1, -0.4, 1 }, parent = b("hips") },
                        weight = 0.5, deterministic = true }
  local reach = ik.chain{ bones = { b("s4"), b("shoulder"), b("elbow") }, target = next_shared,
                          iterations = 8 }
  return { sk = sk, chains = { spine, arm, leg, reach }, movers = { b("hips"), ankle } }
end

-- n characters and a point chain; with `host`, a bone chain over host transforms too,
-- which keeps every chain on the Lua thread: the reference.
local function crowd(n, host)
  local set = { chains = {}, movers = {}, sks = {} }
  local shared = {}
  for k = 1, n + 1 do shared[k] = ik.node{ position = { k, 1.6, 0.3 } } end
  for k = 1, n do
    local ch = character(k, shared[k], shared[k + 1])
    set.sks[k] = ch.sk
    for _, c in ipairs(ch.chains) do set.chains[#set.chains + 1] = c end
    for _, m in ipairs(ch.movers) do set.movers[#set.movers + 1] = m end
  end
  for k = 1, n + 1 do set.movers[#set.movers + 1] = shared[k] end
  set.chains[#set.chains + 1] = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } },
                                          target = shared[1] }
  if host then
    local root = mock.new{ position = { -5, 1, 0 } }
    local mid = mock.new{ position = { 0, -0.5, 0.05 }, parent = root }
    local tip = mock.new{ position = { 0, -0.5, -0.05 }, parent = mid }
    set.chains[#set.chains + 1] = ik.chain{ bones = { root, mid, tip }, target = { -5, 0.3, 0.3 } }
  end
  set.move = function(frame)
    local m = h.rng(1000 + frame)
    for _, t in ipairs(set.movers) do
      local p = t:get_position()
      t:set_position({ p.x + m(-0.05, 0.05), p.y + m(-0.05, 0.05), p.z + m(-0.05, 0.05) })
      t:set_rotation(ik.quat.euler(m(-0.2, 0.2), m(-0.3, 0.3), m(-0.2, 0.2)))
    end
  end
  return set
end

local function snapshot(set)
  local out = {}
  for _, sk in ipairs(set.sks) do
    for _, b in ipairs(sk:bones()) do
      local q, p = b:get_rotation(), b:get_position()
      for _, v in ipairs({ q.x, q.y, q.z, q.w, p.x, p.y, p.z }) do out[#out + 1] = v end
    end
  end
  return out
end

describe("ik.batch off the Lua thread", function()
  it("gives bit for bit what the Lua thread gives, at 1, 2 and 3 threads, every frame", function()
    local ref = crowd(5, true)
    local ref_batch = ik.batch{ chains = ref.chains }
    local runs = {}
    for _, threads in ipairs({ 1, 2, 3 }) do
      local set = crowd(5, false)
      runs[threads] = { set = set, batch = ik.batch{ chains = set.chains, threads = threads } }
    end
    for frame = 1, 10 do
      ref.move(frame)
      local reached = ref_batch:solve() - (ref_batch:result(#ref.chains) and 1 or 0)
      local expected = snapshot(ref)
      for threads, r in pairs(runs) do
        r.set.move(frame)
        assert.are.equal(reached, r.batch:solve())
        h.assert_identical(snapshot(r.set), expected, threads .. " threads, frame " .. frame)
        for i = 1, #r.set.chains do
          assert.are.same({ ref_batch:result(i) }, { r.batch:result(i) })
        end
      end
    end
  end)

  it("raises for a chain it cannot read as the Lua thread does, in order, turning no bone", function()
    local set = crowd(3, false)
    local b = ik.batch{ chains = set.chains, threads = 2 }
    b:solve()
    local before = snapshot(set)
    -- chain 6 (character 2's arm): its target is hung from its own hand since it was set
    local arm = set.chains[6]
    local target = ik.node{ position = { 1, 1, 1 } }
    arm.target = target
    target:set_parent(set.sks[2]:bone("hand"))
    assert(h.raises(function() b:solve() end, "ik.chain: bad field 'target' (the target hangs from bone 3 "
      .. "of this chain: it would move with every solve)"))
    h.assert_identical(snapshot(set), before, "after the error")
    -- a later chain's fault is not the one named: chain 9 (character 3's spine) too
    set.sks[3]:bone("s2"):set_position(set.sks[3]:bone("s1"):get_position())
    assert(h.raises(function() b:solve() end, "bad field 'target' (the target hangs from bone 3"))
    target:set_parent(nil)
    before = snapshot(set)
    assert(h.raises(function() b:solve() end,
      "ik.chain: bones 1 and 2 are at the same place: a bone of zero length cannot be turned"))
    h.assert_identical(snapshot(set), before, "after the second error")
    -- a closed skeleton
    set.sks[3]:close()
    assert(h.raises(function() b:solve() end, "attempt to use a bone of a closed ik.skeleton"))
  end)

  it("reads a point chain's target and pole with no Lua call, and raises as the Lua thread does", function()
    local sk = ik.skeleton{ { name = "root", position = { 0, 0, 0 } }, { name = "hand", parent = "root",
                                                                          position = { 1, 1, 0 } } }
    local pole = ik.pole{ position = { 0, 1, 1 }, weight = 0.5 }
    local on_bone = ik.node{ position = { 0, 0.2, 0 }, parent = sk:bone("hand") }
    local function chains()
      return { ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, target = on_bone,
                         pole = pole },
               ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, target = sk:bone("hand"),
                         solver = "two_bone", pole = pole },
               ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, target = { 1, 0.5, 0.5 },
                         solver = "ccd" } }
    end
    local alone, batched = chains(), chains()
    local b = ik.batch{ chains = batched, threads = 2 }
    for frame = 1, 3 do
      sk:bone("root"):set_rotation(ik.quat.euler(0.1 * frame, 0.2, 0))
      local reached, results = 0, {}
      for i, c in ipairs(alone) do
        results[i] = { c:solve() }
        reached = reached + (results[i][1] and 1 or 0)
      end
      assert.are.equal(reached, b:solve())
      for i, c in ipairs(alone) do
        assert.are.same(results[i], { b:result(i) })
        for j = 1, 3 do assert.are.same({ c:joint_xyz(j) }, { batched[i]:joint_xyz(j) }) end
      end
    end
    pole:close()
    assert(h.raises(function() b:solve() end, "attempt to use a closed ik.pole"))
    b:remove(batched[1])
    b:remove(batched[2])
    sk:close()
    assert.are.equal(1, b:solve())
  end)

  it("follows a foot's new ground, and raises for a closed foot or ground", function()
    local flat = ik.ground.heightfield{ origin = { -2, 0, -2 }, cell_size = 1, columns = 5, rows = 5,
                                        heights = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                    0, 0, 0, 0, 0, 0 } }
    local raised = ik.ground.plane{ point = { 0, 0.2, 0 } }
    local sk = ik.skeleton{
      { name = "hip", position = { 0, 1, 0 } },
      { name = "knee", parent = "hip", position = { 0, -0.5, 0.1 } },
      { name = "ankle", parent = "knee", position = { 0, -0.5, -0.1 } },
    }
    local ankle = ik.node{ position = { 0, 0.02, 0.2 } }
    local leg = ik.chain{ bones = { sk:bone("hip"), sk:bone("knee"), sk:bone("ankle") }, solver = "two_bone",
                          target = ankle }
    local foot = ik.foot{ ground = flat, smooth_time = 0, foot_offset = 0.08 }
    local b = ik.batch{ threads = 2 }
    b:add(leg, foot)
    b:solve(1 / 60)
    assert(h.near(sk:bone("ankle"):get_position().y, 0.08, 1e-6))
    foot.ground = raised
    b:solve(1 / 60)
    assert(h.near(sk:bone("ankle"):get_position().y, 0.28, 1e-6))
    raised:close()
    assert(h.raises(function() b:solve(0) end, "attempt to use a closed ik.ground"))
    foot.ground = flat
    assert.are.equal(1, b:solve(0))
    foot:close()
    assert(h.raises(function() b:solve(0) end, "attempt to use a closed ik.foot"))
  end)

  it("reads again what a host's Lua may have changed: the chains after it solve as in order", function()
    -- Two alike scenes: one solved by chain:solve() in order, one by a batch. Chain 1's
    -- target is a host transform whose getter retargets chains 2 (a point chain, read
    -- off the Lua thread), 3 (a bone chain, read in its skeleton's group) and 4 (a
    -- FABRIK chain of the same skeleton, which its new host target takes out of the
    -- group: solved once, and turned on the Lua thread).
    local function scene()
      local sk = ik.skeleton{
        { name = "hip", position = { 0, 1, 0 } },
        { name = "knee", parent = "hip", position = { 0, -0.5, 0.1 } },
        { name = "ankle", parent = "knee", position = { 0, -0.5, -0.1 } },
        { name = "r_hip", position = { 0.4, 1, 0 } },
        { name = "r_knee", parent = "r_hip", position = { 0, -0.35, 0.05 } },
        { name = "r_shin", parent = "r_knee", position = { 0, -0.35, 0 } },
        { name = "r_ankle", parent = "r_shin", position = { 0, -0.3, -0.05 } },
      }
      local set = { sk = sk, armed = false, free = ik.node{ position = { 0.5, 0.3, 0.3 } },
                    host = mock.new{ position = { 0.6, 0.25, -0.3 } } }
      local host = mock.new{ position = { 1, 1.5, 0 } }
      local get_position = host.get_position
      host.get_position = function(self)
        if set.armed then
          set.armed = false
          set.chains[2].target = { 1.2, 0.4, 0.9 }
          set.chains[3].target = ik.node{ position = { 0.3, 0.2, 0.4 } }
          set.chains[4].target = set.host
        end
        return get_position(self)
      end
      set.chains = {
        ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, target = host },
        ik.chain{ positions = { { 1, 0, 0 }, { 1, 1, 0 }, { 1, 2, 0 } }, target = { 1.5, 1, 0.5 } },
        ik.chain{ bones = { sk:bone("hip"), sk:bone("knee"), sk:bone("ankle") }, solver = "two_bone",
                  target = ik.node{ position = { 0, 0.2, 0.3 } } },
        ik.chain{ bones = { sk:bone("r_hip"), sk:bone("r_knee"), sk:bone("r_shin"), sk:bone("r_ankle") },
                  iterations = 3 },
      }
      return set
    end
    local alone, batched = scene(), scene()
    local b = ik.batch{ chains = batched.chains, threads = 2 }
    for frame = 1, 3 do
      for _, set in ipairs{ alone, batched } do
        set.armed = true
        set.chains[4].target = set.free -- in its skeleton's group until the getter runs
      end
      for _, c in ipairs(alone.chains) do c:solve() end
      b:solve()
      assert.is_false(batched.armed)
      for j = 1, 3 do
        assert.are.same({ alone.chains[2]:joint_xyz(j) }, { batched.chains[2]:joint_xyz(j) })
      end
      h.assert_identical(snapshot{ sks = { alone.sk } }, snapshot{ sks = { batched.sk } }, "frame " .. frame)
    end
  end)

  it("checks feet again when Lua ran during its gather: a ground swapped there is the one used", function()
    local function plane(y) return ik.ground.plane{ point = { 0, y, 0 } } end
    local foot = ik.foot{ ground = plane(0), smooth_time = 0, foot_offset = 0.08 }
    -- a point chain with a vec3 target: it and its foot are read off the Lua thread
    local leg = ik.chain{ positions = { { 0, 1, 0 }, { 0, 0.5, 0.1 }, { 0, 0, 0 } }, solver = "two_bone",
                          target = { 0, 0.02, 0.2 } }
    -- a chain on host transforms, gathered on the Lua thread after that reading: its
    -- root's getter swaps the foot's ground and lets the old one be collected
    local root = mock.new{ position = { 3, 1, 0 } }
    local mid = mock.new{ position = { 0, -0.5, 0.05 }, parent = root }
    local tip = mock.new{ position = { 0, -0.5, -0.05 }, parent = mid }
    local get_position, height = root.get_position, nil
    root.get_position = function(self)
      if height then -- once a solve, in its gather: the first read of the root
        foot.ground = plane(height)
        height = nil
        collectgarbage()
        collectgarbage()
      end
      return get_position(self)
    end
    local host = ik.chain{ bones = { root, mid, tip }, target = { 3, 0.3, 0.3 } }
    local b = ik.batch{ threads = 2 }
    b:add(leg, foot)
    b:add(host)
    for frame = 1, 3 do
      height = 0.02 * frame -- within the foot's ray, 0.5 above the animated foot
      b:solve(1 / 60)
      assert.is_nil(height)
      -- on the ground the getter left, never on the one read before it ran
      assert(h.near(leg:joint(3).y, 0.02 * frame + 0.08, 1e-5), "frame " .. frame)
    end
  end)
end)
