-- ik.batch: many chains solved in one call, over threads. What matters: a batch gives
-- bit for bit what chain:solve() on each chain in order gives, at any thread count;
-- feet on a ground are placed inside it; misuse raises with the module's wording; a
-- steady-state solve allocates nothing.
local ik = require("ik")
local h = require("spec_helper")

local allocated = h.allocated

-- A skeleton of 4 bones (hips, then a 3-bone arm) per character: bone chains over
-- ik.bone, each with an ik.node target.
local function arm_rig(x, solver)
  local sk = ik.skeleton{
    { name = "hips", position = { x, 1, 0 } },
    { name = "shoulder", parent = "hips", position = { 0.2, 0.5, 0 } },
    { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0 } },
    { name = "wrist", parent = "elbow", position = { 0.25, 0, 0 } },
    { name = "hand", parent = "wrist", position = { 0.1, 0, 0 } },
  }
  local names = { "shoulder", "elbow", "wrist", "hand" }
  if solver == "two_bone" then names[4] = nil end
  local bones = {}
  for i, name in ipairs(names) do bones[i] = sk:bone(name) end
  local target = ik.node{ position = { x + 0.4, 1.3, 0.2 } }
  return { sk = sk, target = target,
           chain = ik.chain{ bones = bones, target = target, solver = solver, iterations = 20,
                             pole = ik.node{ position = { 0.4, 0.2, -0.6 }, parent = sk:bone("hips") } } }
end

-- A mixed set: point chains of every solver, bone chains (FABRIK, two-bone), one with a
-- constraint, one at half weight; two identical copies made from the same draws.
local function make_set(seed)
  local r = h.rng(seed)
  local set = { chains = {}, targets = {}, rigs = {} }
  local solvers = { "fabrik", "ccd", "dls", "two_bone", "fabrik" }
  for i = 1, 25 do
    local solver = solvers[(i - 1) % #solvers + 1]
    local n = solver == "two_bone" and 3 or 4 + i % 5
    local positions = {}
    for j = 1, n do positions[j] = { i, (j - 1) * r(0.5, 1), r(-0.1, 0.1) } end
    local target = ik.node{ position = { i + r(-1, 1), r(0, n - 1), r(-1, 1) } }
    local c = ik.chain{ positions = positions, solver = solver, iterations = 15, target = target,
                        weight = i % 7 == 0 and 0.5 or 1 }
    if i % 6 == 0 then c:set_constraint(2, ik.cone{ angle = 0.5 }) end
    set.chains[#set.chains + 1], set.targets[#set.targets + 1] = c, target
  end
  for i = 1, 6 do
    local rig = arm_rig(i * 3, i % 2 == 0 and "two_bone" or "fabrik")
    set.rigs[i] = rig
    set.chains[#set.chains + 1], set.targets[#set.targets + 1] = rig.chain, rig.target
  end
  set.move = function(frame)
    local m = h.rng(seed + frame)
    for _, t in ipairs(set.targets) do
      local p = t:get_position()
      t:set_position({ p.x + m(-0.2, 0.2), p.y + m(-0.2, 0.2), p.z + m(-0.2, 0.2) })
    end
  end
  return set
end

-- Everything a solve leaves: each chain's joints, exactly.
local function snapshot(set)
  local out = {}
  for _, c in ipairs(set.chains) do
    for j = 1, #c do
      local x, y, z = c:joint_xyz(j)
      out[#out + 1] = x
      out[#out + 1] = y
      out[#out + 1] = z
    end
  end
  for _, rig in ipairs(set.rigs) do
    for _, b in ipairs(rig.sk:bones()) do
      local q = b:get_rotation()
      out[#out + 1] = q.x
      out[#out + 1] = q.w
    end
  end
  return out
end

describe("ik.batch", function()
  it("gives bit for bit what chain:solve() in order gives, at 1, 2 and 4 threads, every frame", function()
    local alone = make_set(7)
    local batched = {}
    for _, threads in ipairs({ 1, 2, 4 }) do
      local set = make_set(7)
      batched[threads] = { set = set, batch = ik.batch{ chains = set.chains, threads = threads } }
    end
    for frame = 1, 12 do
      alone.move(frame)
      local results, reached = {}, 0
      for i, c in ipairs(alone.chains) do
        local ok, d, it = c:solve()
        results[i] = { ok, d, it }
        if ok then reached = reached + 1 end
      end
      local expected = snapshot(alone)
      for threads, t in pairs(batched) do
        t.set.move(frame)
        assert.are.equal(reached, t.batch:solve())
        h.assert_identical(snapshot(t.set), expected, threads .. " threads, frame " .. frame)
        for i, c in ipairs(t.set.chains) do
          local ok, d, it = t.batch:result(i)
          assert.are.same(results[i], { ok, d, it })
          assert.are.same(results[i], { t.batch:results(c) })
        end
      end
    end
    assert.is_true(#alone.chains > 30)
  end)

  it("is made from a list, grows and shrinks, and says what it holds", function()
    local a = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, target = { 1, 0, 0 } }
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, target = { 0, 1, 1 } }
    local b = ik.batch{ chains = { a }, threads = 2 }
    assert.are.equal(1, #b)
    assert.are.equal(2, b.threads)
    assert.are.equal("ik.batch(1 chains, 2 threads)", tostring(b))
    b:add(c)
    assert.are.equal(2, #b)
    assert.are.equal(2, b:solve())
    assert.is_true(b:remove(a))
    assert.is_false(b:remove(a))
    assert.are.equal(1, #b)
    assert.is_true(rawequal(b:chains()[1], c))
    assert.are.equal(1, b:solve())
    assert.is_true((b:result(1)))
    assert.are.equal(0, ik.batch():solve())
    -- the chains keep working on their own, and may be in another batch too
    assert.is_true((a:solve({ 0, 1, 0 })))
    local other = ik.batch{ chains = { c } }
    assert.are.equal(1, other:solve())
  end)

  it("stops its threads when closed or collected", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, target = { 1, 0, 0 } }
    for _ = 1, 40 do
      local b = ik.batch{ chains = { c }, threads = 3 }
      assert.are.equal(1, b:solve())
    end
    collectgarbage()
    collectgarbage()
    if _VERSION == "Lua 5.4" then
      local closed = assert(load("local ik, c = ...; local b <close> = ik.batch{ chains = { c }, "
        .. "threads = 2 }; b:solve(); return b"))(ik, c)
      assert.are.equal("ik.batch (closed)", tostring(closed))
    end
    assert.is_true((c:solve())) -- the chain lives on
  end)

  it("places feet on a heightfield inside the solve", function()
    local g = ik.ground.heightfield{ origin = { -2, 0, -2 }, cell_size = 1, columns = 5, rows = 5,
                                     heights = { 0, 0, 0, 0, 0, 0, 0.1, 0.1, 0.1, 0, 0, 0.1, 0.2, 0.1, 0,
                                                 0, 0.1, 0.1, 0.1, 0, 0, 0, 0, 0, 0 } }
    local ankle = ik.node{ position = { 0, 0.05, 0.2 } } -- sunk into the bump
    local leg = ik.chain{ positions = { { 0, 1, 0 }, { 0, 0.5, 0.1 }, { 0, 0, 0 } }, solver = "two_bone",
                          target = ankle }
    local foot = ik.foot{ ground = g, smooth_time = 0, foot_offset = 0.08 }
    local b = ik.batch{ threads = 2 }
    b:add(leg, foot)
    b:solve(1 / 60)
    local reached, _, _, grounded = b:result(1)
    assert.is_true(reached)
    assert.is_true(grounded)
    -- the same foot update done by hand gives the same target
    local check = ik.foot{ ground = g, smooth_time = 0, foot_offset = 0.08 }
    local p = check:update(ankle:get_position(), ik.quat(), 1 / 60)
    assert(h.vec_near(leg:joint(3), p, 1e-6))
    assert.is_true(p.y > 0.05 + 0.08)
    -- one foot for two legs would race with itself
    local other = ik.chain{ positions = { { 1, 1, 0 }, { 1, 0.5, 0.1 }, { 1, 0, 0 } }, target = ankle }
    assert(h.raises(function() b:add(other, foot) end,
      "bad argument #2 to 'add' (the foot is in this batch already)"))
    assert.is_true(b:remove(leg))
    b:add(other, foot) -- free again
    b:remove(other)
    b:add(leg, foot)
    -- a custom ground cannot be queried off the Lua thread
    foot.ground = ik.ground.custom(function() return false end)
    assert(h.raises(function() b:solve(0) end, "ik.batch: chain 1's foot stands on a custom ground"))
  end)

  it("raises with the module's wording", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, target = { 1, 0, 0 } }
    local b = ik.batch()
    assert(h.raises(function() b:add({}) end, "bad argument #1 to 'add' (ik.chain expected, got table)"))
    assert(h.raises(function() b:add(c, 3) end,
      "bad argument #2 to 'add' (ik.foot or nil expected, got number)"))
    b:add(c)
    assert(h.raises(function() b:add(c) end, "bad argument #1 to 'add' (the chain is in this batch already)"))
    assert(h.raises(function() b:remove("c") end,
      "bad argument #1 to 'remove' (ik.chain expected, got string)"))
    assert(h.raises(function() b:result(2) end, "bad argument #1 to 'result' (index out of range: 1..1)"))
    assert(h.raises(function() b:solve(-1) end,
      "bad argument #1 to 'solve' (non-negative number expected, got -1)"))
    assert(h.raises(function() ik.batch{ threads = 0 } end,
      "ik.batch: bad field 'threads' (integer in 1..64 expected, got 0)"))
    assert(h.raises(function() ik.batch{ threads = 1.5 } end,
      "ik.batch: bad field 'threads' (integer in 1..64 expected, got 1.5)"))
    assert(h.raises(function() ik.batch{ chains = { c, 1 } } end,
      "ik.batch: bad field 'chains' (ik.chain expected at index 2, got number)"))
    assert(h.raises(function() ik.batch{ chains = { c, c } } end,
      "ik.batch: bad field 'chains' (chain 2 is in the list twice)"))
    -- arguments after the spec are ignored, as Lua's own functions ignore them
    local extra = ik.batch({ chains = { c }, threads = 2 }, {}, ik.vec3(), "x")
    assert.are.equal(1, #extra)
    assert.are.equal(2, extra.threads)
    extra:close()
    assert(h.raises(function() ik.batch{ chain = { c } } end,
      "ik.batch: no field 'chain' (fields: chains, threads)"))
    assert(h.raises(function() b.threads = 2 end, "ik.batch: fields are read-only"))
    local untargeted = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } } }
    b:add(untargeted)
    assert(h.raises(function() b:solve() end, "ik.batch: chain 2 has no target"))
    b:remove(untargeted)
    -- a chain closed while in the batch: a clear error, no crash; the batch goes on without it
    local d = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, target = { 0, 0, 1 } }
    b:add(d)
    d:close()
    assert(h.raises(function() b:solve() end, "ik.batch: chain 2 is closed"))
    assert.is_true(b:remove(d))
    assert.are.equal(1, b:solve())
    b:close()
    assert.are.equal("ik.batch (closed)", tostring(b))
    assert(h.raises(function() b:solve() end, "attempt to use a closed ik.batch"))
  end)

  it("refuses to be changed by a transform's method during its own solve, and goes on", function()
    local CHANGED = "ik.batch: changed during its own solve (add, remove, solve or close called from a "
      .. "transform's method)"
    for _, change in ipairs{ "add", "remove", "solve", "close" } do
      local b = ik.batch()
      local first
      for i = 1, 4 do
        local c = ik.chain{ positions = { { 0, 0, i }, { 0, 1, i }, { 0, 2, i } }, target = { 1, 1, i } }
        first = first or c
        b:add(c)
      end
      local armed = true
      local target = {
        get_position = function()
          if armed then
            armed = false
            if change == "add" then -- the entries move to a new buffer, the old one is collected
              for i = 1, 8 do
                b:add(ik.chain{ positions = { { 9, 0, i }, { 9, 1, i } }, target = { 9, 0, i + 1 } })
              end
              collectgarbage()
            elseif change == "remove" then
              b:remove(first)
            elseif change == "solve" then
              b:solve()
            else
              b:close()
            end
          end
          return { x = 1, y = 1, z = 5 }
        end,
        get_rotation = function() return { x = 0, y = 0, z = 0, w = 1 } end,
      }
      b:add(ik.chain{ positions = { { 0, 0, 5 }, { 0, 1, 5 }, { 0, 2, 5 } }, target = target })
      assert(h.raises(function() b:solve() end, CHANGED), change)
      if change == "close" then
        assert(h.raises(function() b:solve() end, "attempt to use a closed ik.batch"))
      else
        assert.are.equal(#b, b:solve(), change) -- every chain reachable: all reach
      end
    end
  end)

  it("hands out a copy of a vec3 target: changing it in place does not pretend to move it", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, target = { 1, 1, 0 } }
    local t = c.target
    t:set(0, 1.5, 0)
    assert.are.equal(ik.vec3(1, 1, 0), c.target)
    assert.is_true((c:solve()))
    assert.is_true(c:joint(3):distance(ik.vec3(1, 1, 0)) <= c.tolerance)
  end)

  it("allocates nothing in a steady-state solve (point and bone chains, ik.node targets)", function()
    local set = make_set(3)
    local b = ik.batch{ chains = set.chains, threads = 2 }
    local p = { x = 0, y = 0, z = 0 }
    local function frame(k) -- moves the targets without making values
      for i, t in ipairs(set.targets) do
        p.x, p.y, p.z = i + math.sin(k * 0.1 + i), 1 + 0.5 * math.cos(k * 0.1), 0.2
        t:set_position(p)
      end
      b:solve(1 / 60)
    end
    assert.are.equal(0, allocated(function()
      for k = 1, 1000 do frame(k) end
    end))
  end)
end)
