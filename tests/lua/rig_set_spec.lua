-- ik.rigs.set and what every rig shares: the set runs rigs in their order (root, chest,
-- pelvis, leg, arm, look) whatever order they were given in, keeps the given order among
-- equals, follows add, remove and order changes, and refuses what is not a rig; each
-- rig's applied weight never moves more than dt / blend_time in an update (also while
-- weight and enabled change under it), and a disabled rig fades out and then touches no
-- bone. The @usage examples of lua/ik/rigs/*.lua run (doc_examples_spec.lua reads
-- lua/ik/*.lua only), and so do the examples in lua/examples.
local ik = require("ik")
local R = require("rig_helper")
local mock = require("mock_transform")
local rigs = require("ik.rigs")
local terrain = require("terrain")

local DT = 1 / 60

-- A mock transform that counts the calls that change it.
local function counted(t, counter)
  for _, name in ipairs{ "set_position", "set_rotation", "set_local_position", "set_local_rotation" } do
    local original = t[name]
    t[name] = function(self, v)
      counter.n = counter.n + 1
      return original(self, v)
    end
  end
  return t
end

-- One rig of each kind on mock transforms (every transform counting its changes in
-- counter), keyed by kind.
local function one_of_each(options, counter)
  counter = counter or { n = 0 }
  local function build(specs)
    local b = R.build("mock", specs)
    for _, t in pairs(b) do counted(t, counter) end
    return b
  end
  local function with(o)
    for k, v in pairs(options or {}) do o[k] = v end
    return o
  end
  local out = {}
  local a = build(R.ARM)
  local target = counted(mock.new{ position = { 0.5, 1.2, 0.3 } }, counter)
  out.arm = rigs.arm.new(with{ upper = a.upper, lower = a.lower, hand = a.hand, target = target })
  local l = build(R.legs_spec())
  l.root:set_position{ 0, -0.03, 0 }
  local ground = terrain.ground()
  out.leg = rigs.leg.new(with{ upper = l.l_thigh, lower = l.l_shin, foot = l.l_foot, ground = ground })
  local right = rigs.leg.new(with{ upper = l.r_thigh, lower = l.r_shin, foot = l.r_foot, ground = ground })
  out.pelvis = rigs.leg.pelvis(with{ hips = l.hips, legs = { out.leg, right } })
  local s = build(R.SPINE)
  local look_at = counted(mock.new{ position = { 1, 1.7, 1 } }, counter)
  out.look = rigs.look.new(with{ head = s.head, neck = s.neck, target = look_at })
  out.chest = rigs.chest.new(with{ spine = { s.spine1, s.spine2, s.spine3 }, target = { 0.3, 2, 0.5 } })
  local h = build(R.SPINE)
  local follow = counted(mock.new{ position = { 1, 1, 0 } }, counter)
  out.root = rigs.root.new(with{ hips = h.hips, target = follow })
  return out, counter
end

describe("ik.rigs.set", function()
  it("runs the rigs in their order, whatever order they were given in", function()
    local ran = {}
    local made = one_of_each()
    local list = {}
    for _, kind in ipairs{ "look", "arm", "leg", "pelvis", "root", "chest" } do
      local rig = made[kind]
      local update = rig.update
      rig.update = function(self, dt)
        ran[#ran + 1] = kind
        return update(self, dt)
      end
      list[#list + 1] = rig
    end
    local set = rigs.set(list)
    set:update(DT)
    assert.are.same({ "root", "chest", "pelvis", "leg", "arm", "look" }, ran)
    local orders = {}
    for i, kind in ipairs(ran) do orders[i] = made[kind].order end
    assert.are.same({ 100, 200, 250, 300, 400, 500 }, orders)
  end)

  it("keeps the given order among equals, and follows add, remove and order changes", function()
    local ran = {}
    local function rig(name, order)
      return { order = order, update = function() ran[#ran + 1] = name end }
    end
    local a, b, c, d = rig("a", 300), rig("b", 300), rig("c", 100), rig("d", 300)
    local set = rigs.set{ a, b, c }
    set:update(DT)
    assert.are.same({ "c", "a", "b" }, ran)
    ran = {}
    assert.are.equal(d, set:add(d))
    set:update(DT)
    assert.are.same({ "c", "a", "b", "d" }, ran)
    ran = {}
    assert.is_true(set:remove(a))
    assert.is_false(set:remove(a))
    c.order = 400
    set:update(DT)
    assert.are.same({ "b", "d", "c" }, ran)
    assert.are.same({ b, d, c }, set:rigs())
    assert.are.equal("ik.rigs.set(3 rigs)", tostring(set))
    ran = {}
    rigs.set():update(DT)
    assert.are.same({}, ran)
  end)

  it("refuses what is not a rig", function()
    assert(R.raises(function() rigs.set{ 1 } end, "ik.rigs.set: rig #1 (rig expected, got 1)"))
    assert(R.raises(function() rigs.set{ {} } end,
      "ik.rigs.set: rig #1 (rig expected, got table without update)"))
    assert(R.raises(function() rigs.set{ { update = function() end } } end,
      "ik.rigs.set: rig #1 has no order (number expected, got nil)"))
    local r = { order = 1, update = function() end }
    assert(R.raises(function() rigs.set{ r, r } end, "ik.rigs.set: rig #2 is given twice"))
    local set = rigs.set{ r }
    assert(R.raises(function() set:add(r) end, "ik.rigs.set: add: the rig is in the set already"))
    assert(R.raises(function() set:update(-1) end,
      "ik.rigs.set: update: dt (non-negative number expected, got -1)"))
    assert(R.raises(function() rigs.set(3) end, "ik.rigs.set: list of rigs expected, got 3"))
  end)

  it("reaches the rig modules as fields", function()
    assert.are.equal(require("ik.rigs.arm"), rigs.arm)
    assert.are.equal(require("ik.rigs.common"), rigs.common)
    assert.is_nil(rigs.nothing)
  end)
end)

describe("every rig's weight", function()
  it("never moves more than dt / blend_time in an update", function()
    local made = one_of_each{ blend_time = 0.25 }
    local seed = 12345
    local function random() -- the same sequence on every Lua
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    end
    for kind, rig in pairs(made) do
      for _ = 1, 400 do
        if random() < 0.05 then rig.weight = random() < 0.5 and 0 or (random() < 0.5 and 1 or random()) end
        if random() < 0.03 then rig.enabled = not rig.enabled end
        local dt = random() < 0.1 and 0 or random() * 0.05
        local before = rig.applied_weight
        rig:update(dt)
        local jump = math.abs(rig.applied_weight - before)
        assert.is_true(jump <= dt / 0.25 + 1e-12, string.format("%s: %g in a step of %g s", kind, jump, dt))
        local goal = rig.enabled and rig.weight or 0
        assert.is_true(math.abs(rig.applied_weight - goal) <= math.abs(before - goal) + 1e-12)
      end
    end
  end)

  it("takes blend_time to go from 0 to 1, never one frame", function()
    for kind, rig in pairs(one_of_each{ weight = 0 }) do
      assert.are.equal(0, rig.applied_weight, kind)
      rig.weight = 1
      rig:update(DT)
      assert.is_true(math.abs(rig.applied_weight - DT / 0.2) < 1e-12, kind)
      local frames = 1
      while rig.applied_weight < 1 do
        rig:update(DT)
        frames = frames + 1
      end
      assert.is_true(frames >= 12 and frames <= 13, kind .. " took " .. frames .. " frames")
    end
  end)

  it("fades out when disabled, then leaves every bone alone", function()
    local made, counter = one_of_each()
    for kind, rig in pairs(made) do
      rig:update(DT)
      rig.enabled = false
      local last = rig.applied_weight
      while rig.applied_weight > 0 do
        rig:update(DT)
        assert.is_true(rig.applied_weight < last, kind)
        last = rig.applied_weight
      end
      counter.n = 0
      for _ = 1, 5 do rig:update(DT) end
      assert.are.equal(0, counter.n, kind .. " still changed transforms while disabled")
    end
  end)
end)

-- ---- the examples ----

local lfs = require("lfs")

local function root_dir()
  local source = debug.getinfo(1, "S").source
  local dir = source:sub(1, 1) == "@" and source:sub(2):match("^(.*)tests[/\\]lua[/\\][^/\\]+$")
  if dir and dir ~= "" then return dir end
  return "./"
end
local ROOT = root_dir()

local function lua_files(dir)
  local names = {}
  local ok, iter, state = pcall(lfs.dir, ROOT .. dir)
  if ok then
    for name in iter, state do
      if name:match("%.lua$") then names[#names + 1] = dir .. "/" .. name end
    end
  end
  table.sort(names)
  return names
end

-- Runs a chunk in a fresh environment (ik, the standard globals, and print muted).
local function run(source, chunkname)
  local env = setmetatable({ ik = ik, print = function() end }, { __index = _G })
  local fn, err
  if setfenv then
    fn, err = loadstring(source, chunkname)
    if fn then setfenv(fn, env) end
  else
    fn, err = load(source, chunkname, "t", env)
  end
  if not fn then return false, err end
  return pcall(fn)
end

-- The @usage examples of a Lua file: runs of `--` lines opened by `---`, an example
-- running from its tag to the next tag or the end of the comment.
local function usages(path)
  local found, comment = {}, false
  local current
  local n = 0
  for line in io.lines(ROOT .. path) do
    n = n + 1
    local opening = line:match("^%s*%-%-%-(.*)$")
    local text
    if opening and not opening:match("^%-") then
      comment, current, text = true, nil, opening
    elseif comment and line:match("^%s*%-%-") then
      text = line:match("^%s*%-%-(.*)$")
    else
      comment, current = false, nil
    end
    if text then
      text = text:gsub("^ ", "")
      if text:match("^%s*@%a") then current = nil end
      local first = text:match("^%s*@usage%s?(.*)$")
      if first then
        current = { line = n, lines = { first } }
        found[#found + 1] = current
      elseif current then
        current.lines[#current.lines + 1] = text
      end
    end
  end
  return found
end

describe("the rigs' @usage examples", function()
  local files = lua_files("lua/ik/rigs")
  it("are found", function() assert.is_true(#files >= 7) end)
  for _, path in ipairs(files) do
    for _, ex in ipairs(usages(path)) do
      it(path .. ":" .. ex.line, function()
        local source = string.rep("\n", ex.line - 1) .. table.concat(ex.lines, "\n")
        local ok, err = run(source, "@" .. path)
        assert(ok, tostring(err))
      end)
    end
  end
end)

describe("lua/examples", function()
  local files = lua_files("lua/examples")
  it("are there", function() assert.is_true(#files >= 5) end)
  for _, path in ipairs(files) do
    it(path .. " runs", function()
      local f = assert(io.open(ROOT .. path, "r"))
      local source = f:read("*a")
      f:close()
      local ok, err = run(source, "@" .. path)
      assert(ok, tostring(err))
    end)
  end
end)
