-- ik.tree: several end effectors solved together. Reach on targets sampled from the
-- tree's own poses, lengths, weights, constraints, poles, the one-branch tree as the
-- chain, no allocation, bit-identical runs, error messages, and a sandboxed rig script.
local ik = require("ik")
local h = require("spec_helper")
local tmp = require("tmp_helper")

package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local runtime = require("ik.runtime")

local double = ik.real == "double"
local EPS = double and 1e-9 or 1e-4

local function dist(a, b)
  local dx, dy, dz = a.x - b.x, a.y - b.y, a.z - b.z
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

-- A Y: trunk 1-2-3, arms 3-4-5 and 3-6-7.
local Y_PARENTS = { 0, 1, 2, 3, 4, 3, 6 }
local function y_positions()
  return { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0.5, 2.5, 0 }, { 1, 3, 0 }, { -0.5, 2.5, 0 },
           { -1, 3, 0 } }
end
local function y_tree(spec)
  spec = spec or {}
  spec.positions = spec.positions or y_positions()
  spec.parents = Y_PARENTS
  return ik.tree(spec)
end

-- The joints of `parents` bent at random from `positions`, lengths kept (each joint at
-- its bone length from its parent, in a random direction).
local function random_pose(positions, parents, rnd)
  local out = { ik.vec3(positions[1]) }
  for j = 2, #positions do
    local p = ik.vec3(positions[parents[j]])
    local len = dist(ik.vec3(positions[j]), p)
    local d = ik.vec3(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1))
    while d:length() < 1e-3 do d = ik.vec3(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)) end
    out[j] = out[parents[j]] + d:normalized() * len
  end
  return out
end

local function assert_lengths_kept(tree, parents)
  local l, pose = tree:lengths(), tree:positions()
  for j = 2, #pose do
    assert.is_true(math.abs(dist(pose[j], pose[parents[j]]) - l[j]) <= EPS * 10 * l[j], "bone " .. j)
  end
end

local function pose_numbers(tree)
  local out = {}
  for _, p in ipairs(tree:positions()) do
    out[#out + 1], out[#out + 2], out[#out + 3] = p.x, p.y, p.z
  end
  return out
end

describe("ik.tree", function()
  it("names its effectors in joint order and cuts the tree into branches", function()
    local t = y_tree()
    assert.are.equal(7, #t)
    assert.are.equal(7, t.count)
    assert.are.equal(2, t.effectors)
    assert.are.equal(5, t:effector_joint(1))
    assert.are.equal(7, t:effector_joint(2))
    assert.are.equal("ik.tree(7 joints, 3 branches, 2 effectors)", tostring(t))
    assert.are.equal("ik.tree", getmetatable(t).__name)
  end)

  it("reaches every effector's target where the tree can reach them all", function()
    local rnd = h.rng(7)
    local reached = 0
    for _ = 1, 50 do
      local t = y_tree{ iterations = 200 }
      local pose = random_pose(y_positions(), Y_PARENTS, rnd)
      local ok, d1, d2 = t:solve(pose[5], pose[7])
      if ok then reached = reached + 1 end
      assert.are.equal(ok, d1 <= t.tolerance and d2 <= t.tolerance)
      assert.are.equal(d1, (select(2, t:result(1))))
      assert.is_true(h.vec_near(t:joint(1), ik.vec3(0, 0, 0), 0))
      assert_lengths_kept(t, Y_PARENTS)
    end
    assert.are.equal(50, reached)
  end)

  it("pulls unreachable effectors towards their targets by weight", function()
    local a, b = y_tree{ iterations = 50 }, y_tree{ iterations = 50 }
    a:set_weight(2, 0.2)
    b:set_weight(1, 0.2)
    assert.is_true(math.abs(b:weight(1) - 0.2) <= EPS) -- as ik_real holds it
    local ok_a, a1, a2 = a:solve({ 6, 2, 0 }, { -6, 2, 0 })
    local ok_b, b1, b2 = b:solve({ 6, 2, 0 }, { -6, 2, 0 })
    assert.is_false(ok_a)
    assert.is_false(ok_b)
    assert.is_true(a1 < a2)
    assert.is_true(b2 < b1)
    assert_lengths_kept(a, Y_PARENTS)
  end)

  it("ignores an effector of weight 0", function()
    local a, b = y_tree(), y_tree()
    a:set_weight(2, 0)
    b:set_weight(2, 0)
    local ok = a:solve({ 1, 2.5, 0 }, { -9, 0, 0 })
    b:solve({ 1, 2.5, 0 }, { 0, -9, 3 })
    assert.is_true(ok)
    local r2 = a:result(2)
    assert.is_false(r2)
    h.assert_identical(pose_numbers(a), pose_numbers(b), "pose")
  end)

  it("keeps its constraints, on the trunk and from a trunk bone to an arm", function()
    local t = y_tree()
    local cone = ik.cone{ angle = 0.3 }
    t:set_constraint(4, cone)
    assert.is_true(rawequal(cone, t:constraint(4)))
    t:set_weight(2, 0)
    t:solve({ 3, 0, 0 })
    local p = t:positions()
    local trunk, arm = (p[3] - p[2]):normalized(), (p[4] - p[3]):normalized()
    assert.is_true(math.acos(math.min(1, trunk:dot(arm))) <= 0.3 + 1e-6)
    assert.is_true(math.acos(math.min(1, trunk:dot((ik.vec3(3, 0, 0) - p[3]):normalized()))) > 0.5)
    t:set_constraint(4, nil)
    assert.is_nil(t:constraint(4))
  end)

  it("bends a branch towards its pole", function()
    local t = y_tree()
    local pole = ik.pole{ position = { 1, 2, 5 } }
    t:set_pole(5, pole)
    assert.is_true(rawequal(pole, t:pole(5)))
    local ok = t:solve({ 1.2, 2.5, 0 }, { -1, 2.4, 0.3 })
    assert.is_true(ok)
    assert.is_true(t:joint(4).z > 0.1)
    t:set_pole(5, { 1, 2, -5 })
    t:solve()
    assert.is_true(t:joint(4).z < -0.1)
    t:set_pole(5, nil)
    assert.is_nil(t:pole(5))
  end)

  it("lets a branch pull in fewer sweeps than the tree", function()
    local t = y_tree{ iterations = 30, tolerance = 0 }
    t:set_branch_iterations(7, 2)
    t:solve({ 1.5, 1.5, 0.5 }, { -0.5, 2.5, 0.5 })
    assert.are.equal(2, select(3, t:result(2)))
    assert.is_true(select(3, t:result(1)) > 2)
  end)

  it("solves a one-branch tree exactly as the chain (plain FABRIK)", function()
    local positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0.3, 2, 0 }, { 0.5, 3, 0.2 } }
    local t = ik.tree{ positions = positions, parents = { 0, 1, 2, 3 }, iterations = 7 }
    local c = ik.chain{ positions = positions, mode = "plain", iterations = 7 }
    -- 0.89 of the length out: beyond where a point chain starts folded (docs/motion.md)
    local target = ik.vec3(2.0, 1.8, 0.5)
    local _, d = t:solve(target)
    local _, cd = c:solve(target)
    assert.are.equal(cd, d)
    local tree_pose, chain_pose = pose_numbers(t), {}
    for _, p in ipairs(c:positions()) do
      chain_pose[#chain_pose + 1], chain_pose[#chain_pose + 2], chain_pose[#chain_pose + 3] = p.x, p.y, p.z
    end
    h.assert_identical(tree_pose, chain_pose, "pose")
  end)

  it("repeats bit for bit, and warm-starts when not deterministic", function()
    local a, b = y_tree(), y_tree()
    a:solve({ 1, 2.5, 0.5 }, { -1, 2.2, -0.3 })
    b:solve({ 1, 2.5, 0.5 }, { -1, 2.2, -0.3 })
    h.assert_identical(pose_numbers(a), pose_numbers(b), "pose")
    local first = pose_numbers(a)
    a:solve()
    h.assert_identical(first, pose_numbers(a), "deterministic")
    a.deterministic = false
    assert.is_false(a.deterministic)
    a.tolerance = 0
    a:solve()
    local warm = pose_numbers(a)
    local same = true
    for i = 1, #warm do same = same and warm[i] == first[i] end
    assert.is_false(same)
  end)

  it("allocates nothing per solve", function()
    local t = y_tree()
    local out = ik.vec3()
    local target1, target2 = ik.vec3(1, 2.5, 0.5), ik.vec3(-1, 2.2, -0.3)
    assert.are.equal(0, h.allocated(function()
      for _ = 1, 100 do
        t:solve(target1, target2)
        t:joint(5, out)
        t:result(1)
      end
    end))
  end)

  it("refuses bad input Lua's way and changes nothing", function()
    local t = y_tree()
    local before = pose_numbers(t)
    local cases = {
      { function() t:set_target(3, { 0, 0, 0 }) end,
        "bad argument #1 to 'set_target' (index out of range: 1..2)" },
      { function() t:set_target(1, "x") end, "bad argument #2 to 'set_target' (vec3 expected, got string)" },
      { function() t:set_target(1, { 0 / 0, 0, 0 }) end,
        "bad argument #2 to 'set_target' (finite vec3 expected, got NaN, inf or a huge component)" },
      { function() t:set_weight(1, 2) end, "bad argument #2 to 'set_weight' (weight in [0, 1] expected)" },
      { function() t:solve("x") end, "bad argument #1 to 'solve' (vec3 expected, got string)" },
      { function() t:set_constraint(1, ik.cone{ angle = 1 }) end,
        "bad argument #1 to 'set_constraint' (joint 1 is the root: it ends no bone)" },
      { function() t:set_constraint(2, 5) end,
        "bad argument #2 to 'set_constraint' (ik.cone, ik.hinge or nil expected, got number)" },
      { function() t:set_pole(4, { 0, 0, 1 }) end,
        "bad argument #1 to 'set_pole' (joint 4 ends no branch (a branch ends at an effector or a joint "
          .. "with several children))" },
      { function() t:set_pole(5, true) end,
        "bad argument #2 to 'set_pole' (ik.pole, vec3 or nil expected, got boolean)" },
      { function() t:set_branch_iterations(5, -1) end,
        "bad argument #2 to 'set_branch_iterations' (integer in 0..10000 expected)" },
      { function() t.iterations = 0 end,
        "ik.tree: bad field 'iterations' (integer in 1..10000 expected, got 0)" },
      { function() t.tolerance = -1 end,
        "ik.tree: bad field 'tolerance' (non-negative number expected, got -1)" },
      { function() t.deterministic = 1 end, "ik.tree: bad field 'deterministic' (boolean expected, got 1)" },
      { function() t.count = 3 end,
        "ik.tree: no field 'count' (fields: iterations, tolerance, deterministic)" },
      { function() ik.tree{ positions = { { 0, 0, 0 } }, parents = { 0 } } end,
        "ik.tree: bad field 'positions' (at least 2 joints expected, got 1)" },
      { function() ik.tree{ positions = { { 0, 0, 0 }, { 0, 0, 0 } }, parents = { 0, 1 } } end,
        "ik.tree: bad field 'positions' (joint 2 is on its parent, joint 1)" },
      { function() ik.tree{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, parents = { 0, 2 } } end,
        "ik.tree: bad field 'parents' (entry 2: a joint in 1..1 expected, got 2)" },
      { function() ik.tree{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, parents = { 1, 1 } } end,
        "ik.tree: bad field 'parents' (entry 1: 0 (joint 1 is the root) expected, got 1)" },
      { function() ik.tree{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, parents = { 0 } } end,
        "ik.tree: bad field 'parents' (2 entries expected, one per joint, got 1)" },
      { function() ik.tree{ positions = { { 0, 0, 0 }, "x" }, parents = { 0, 1 } } end,
        "ik.tree: bad field 'positions' (entry 2: vec3 expected, got string)" },
      { function()
          ik.tree{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, parents = { 0, 1 }, iterations = 1.5 }
        end,
        "ik.tree: bad field 'iterations' (integer in 1..10000 expected, got 1.5)" },
      { function() ik.tree{ positions = { { 0, 0, 0 }, { 0, 1, 0 } }, parent = { 0, 1 } } end,
        "ik.tree: no field 'parent' (fields: positions, parents, bones, iterations, tolerance, "
          .. "deterministic)" },
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(case[1])
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find(case[2], 1, true), tostring(err))
    end
    h.assert_identical(before, pose_numbers(t), "pose")
    assert.are.equal(10, t.iterations)
  end)

  it("caps a big tree's iterations as chains are capped", function()
    local positions, parents = {}, {}
    for j = 1, 4096 do
      positions[j] = { j, 0, 0 }
      parents[j] = j - 1
    end
    local t = ik.tree{ positions = positions, parents = parents }
    assert.are.equal(10, t.iterations)
    local most = math.floor(2 ^ 20 / (4096 + 1))
    t.iterations = most
    assert.has_error(function() t.iterations = most + 1 end,
      ("ik.tree: bad field 'iterations' (integer in 1..%d expected, got %d)"):format(most, most + 1))
  end)

  it("closes", function()
    local t = y_tree()
    t:close()
    assert.are.equal("ik.tree (closed)", tostring(t))
    assert.is_true(h.raises(function() t:solve() end, "attempt to use a closed ik.tree"))
  end)

  it("runs from a sandboxed rig script", function()
    local dir = tmp.mkdir()
    local path = dir .. "/hand.lua"
    tmp.write(path, [[
state.tree = ik.tree{
  positions = { {0, 0, 0}, {0, 1, 0}, {0.3, 1.5, 0}, {0.3, 2, 0}, {-0.3, 1.5, 0}, {-0.3, 2, 0} },
  parents = { 0, 1, 2, 3, 2, 5 }, iterations = 40,
}
local ok, err = pcall(function() state.tree.iterations = 1e9 end)
state.capped = not ok and tostring(err):find("integer in 1..10000", 1, true) ~= nil
function update()
  local reached, d1, d2 = state.tree:solve({0.6, 1.8, 0.2}, {-0.5, 1.7, -0.2})
  scene.report("hand", reached, math.max(d1, d2), 0)
end
]])
    local reports = {}
    local scene = { report = function(name, reached, distance)
      reports[#reports + 1] = { name, reached, distance }
    end }
    local rt = runtime.new{ scene = scene, scripts = { path }, watch = false }
    for _ = 1, 3 do rt:update(1 / 60) end
    local info = rt:scripts()[1]
    tmp.rmtree(dir)
    assert.are.equal("running", info.status, info.error)
    assert.is_true(info.state.capped)
    assert.are.equal(3, #reports)
    assert.are.equal("hand", reports[3][1])
    assert.is_true(reports[3][2])
    assert.is_true(reports[3][3] <= 1e-3)
  end)
end)

describe("ik.tree on bones", function()
  local body = h.tree_body
  local TURNED = { "spine", "chest", "l_sh", "l_el", "r_sh", "r_el" }

  local function locals(sk)
    local out = {}
    for _, b in ipairs(sk:bones()) do
      local p = b:get_local_position()
      out[#out + 1], out[#out + 2], out[#out + 3] = p.x, p.y, p.z
    end
    return out
  end

  it("reaches hands sampled from the skeleton's own poses, bones never stretching", function()
    local rnd = h.rng(3)
    local reached = 0
    for _ = 1, 40 do
      local pose = body()
      for _, name in ipairs(TURNED) do
        local axis = ik.vec3(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)):normalized()
        pose:bone(name):set_local_rotation(ik.quat.axis_angle(axis, rnd(-0.8, 0.8)))
      end
      local a, b = pose:bone("l_hand"):get_position(), pose:bone("r_hand"):get_position()
      local sk = body()
      local rest = locals(sk)
      local t = ik.tree{ bones = sk:bones(), iterations = 500 }
      local ok, d1, d2 = t:solve(a, b)
      if ok then reached = reached + 1 end
      assert.are.equal(d1, sk:bone("l_hand"):get_position():distance(a))
      assert.are.equal(d2, sk:bone("r_hand"):get_position():distance(b))
      assert.is_true(d1 < 0.1 and d2 < 0.1)
      h.assert_identical(rest, locals(sk), "local positions")
      assert.is_true(h.vec_near(sk:bone("hips"):get_position(), ik.vec3(0, 0, 0), 0))
    end
    assert.is_true(reached >= 38, reached .. " of 40")
  end)

  it("finds the parents in the skeleton, skipping bones left out", function()
    local sk = body()
    local t = ik.tree{ bones = { sk:bone("hips"), sk:bone("chest"), sk:bone("l_hand"), sk:bone("r_el"),
                                 sk:bone("r_hand") } }
    assert.are.equal(2, t.effectors)
    assert.are.equal(3, t:effector_joint(1))
    assert.are.equal(5, t:effector_joint(2))
  end)

  it("refuses bones that do not make a tree", function()
    local sk, other = body(), body()
    local cases = {
      { { sk:bone("l_sh"), sk:bone("hips") }, "entry 1: it hangs from entry 2: the root must come first" },
      { { sk:bone("hips"), sk:bone("l_hand"), sk:bone("l_el") },
        "entry 2: it hangs from entry 3, which must come before it" },
      { { sk:bone("hips"), sk:bone("hips") }, "entry 2: the same bone as entry 1" },
      { { sk:bone("l_sh"), sk:bone("r_sh") },
        "entry 2: it hangs from no bone of the list: every bone but the first must hang from an "
          .. "earlier one" },
      { { sk:bone("hips"), 3 }, "entry 2: ik.bone expected, got 3" },
      { { sk:bone("hips"), other:bone("spine") },
        "entry 2: a bone of another skeleton than entry 1's" },
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(ik.tree, { bones = case[1] })
      assert.is_false(ok)
      local want = "ik.tree: bad field 'bones' (" .. case[2] .. ")"
      assert.is_truthy(tostring(err):find(want, 1, true), tostring(err))
    end
    assert.is_true(h.raises(function() ik.tree{ bones = sk:bones(), parents = { 0 } } end,
      "ik.tree: give either 'bones' or 'positions' and 'parents', not both"))
  end)

  it("warm-starts from its last solution unless deterministic, the bones reset every frame", function()
    local function follow(deterministic)
      local sk = body()
      local t = ik.tree{ bones = sk:bones(), iterations = 1, tolerance = 0 }
      assert.is_false(t.deterministic)
      t.deterministic = deterministic
      local worst = 0
      for f = 1, 60 do
        local a = math.min(f, 30) / 30 -- then held: a warm tree settles on it
        sk:reset()
        local _, d1, d2 = t:solve({ 0.9, 1.4 + 0.3 * a, 0.5 }, { -0.9, 1.4 + 0.3 * a, 0.5 })
        if f > 30 then worst = math.max(worst, d1, d2) end
      end
      return worst
    end
    local cold, warm = follow(true), follow(false)
    assert.is_true(warm < 1e-3, "warm " .. warm)
    assert.is_true(cold > 10 * warm, "cold " .. cold .. ", warm " .. warm)
  end)

  it("raises once its skeleton is closed", function()
    local sk = body()
    local t = ik.tree{ bones = sk:bones() }
    sk:close()
    assert.is_true(h.raises(function() t:solve({ 1, 2, 0 }, { -1, 2, 0 }) end,
      "attempt to use a bone of a closed ik.skeleton"))
  end)
end)
