-- The hostile-script matrix: rig scripts written to break out of their sandbox, each run
-- through ik.runtime beside the demo's two healthy scripts, on the demo scene. For every
-- attack:
--
--   1. the healthy scripts' output (every bone of every skeleton, every node, every
--      report, frame by frame) is byte-identical to a run without the attacker;
--   2. the attacker ends as the row says: paused or not loaded with that message, or
--      running and harmless;
--   3. no secret leaks: a file beside the attack holds a secret, which must appear in no
--      event, no state, no report;
--   4. the host's state is untouched: its string metatable, _G, package.loaded, the
--      ik module's metatables, its heap (what the attacker's state holds is its own,
--      within its limit).
local runtime = require("ik.runtime")
local scene_module = require("ik.demo.scene")
local tmp = require("tmp_helper")

local LUA51 = _VERSION == "Lua 5.1"
local BUDGET = 2e6
local MEMORY = 16 * 1024 * 1024
local FRAMES = 12
local SECRET = "s3cr3t-" .. tostring(os.time())

local BUDGET_MSG = ("instruction budget exceeded (%d)"):format(BUDGET)
local MEMORY_MSG = ("memory limit exceeded (%d bytes)"):format(MEMORY)
local HOST = "the scene's objects are the host's: rig scripts cannot close them"
local NOT_AVAILABLE = "is not available to rig scripts"

-- kind: "paused" (update failed), "error" (the version did not load) or "running"
-- (contained: the script runs on and nothing it did reaches the host). message: a part
-- of the event's message (or a list of parts, one of which it has: where a stack
-- overflows first depends on the Lua). update and top are the bodies of update(dt) and the top level.
local ATTACKS = {
  -- reading files
  { name = "replaces string methods, then loads a file outside its folder", kind = "error",
    message = "rig scripts can only load files of their own folder",
    top = "for _, k in ipairs{'byte','find','match','gsub','gmatch','sub'} do string[k] = function() end end "
      .. "error(assert(loadfile('../secret.lua'))())" },
  { name = "requires a file outside its folder through the string methods it replaced", kind = "error",
    message = NOT_AVAILABLE,
    top = "string.find = function() return nil end; string.gsub = function(s) return s, 0 end; "
      .. "error(require('../secret'))" },
  { name = "requires a name with an embedded NUL", kind = "error", message = NOT_AVAILABLE,
    top = "require('secret\\0/../../etc/passwd')" },
  { name = "loadfile with an embedded NUL", kind = "error", message = "rig scripts can only load files",
    top = "assert(loadfile('x\\0../../secret.txt'))" },
  { name = "dofile with an absolute path", kind = "error", message = "rig scripts can only load files",
    top = "dofile('/etc/passwd')" },
  { name = "loads a binary chunk", kind = "error", message = "attempt to load a binary chunk",
    top = "assert(load('\\27Lua' .. ('\\0'):rep(40)))" },
  { name = "reaches for io, os, debug and package", kind = "error", message = "attempt to index",
    top = "local f = io.open('secret.txt')" },
  { name = "requires io", kind = "error", message = NOT_AVAILABLE, top = "require('io')" },
  { name = "requires debug", kind = "error", message = NOT_AVAILABLE, top = "require('debug')" },
  { name = "requires ffi", kind = "error", message = NOT_AVAILABLE, top = "require('ffi')" },
  { name = "requires LuaJIT's ffi path of chain:solve", kind = "error", message = NOT_AVAILABLE,
    top = "require('ik.fast')" },
  { name = "looks for the chains' addresses", kind = "running",
    top = "assert(ik._chain_ffi == nil and require('ik.core')._chain_ffi == nil and jit == nil and "
      .. "not pcall(require, 'jit') and not pcall(require, 'ffi'))" },
  { name = "requires the runtime", kind = "error", message = NOT_AVAILABLE, top = "require('ik.runtime')" },
  { name = "looks for the module's dangerous parts", kind = "running",
    top = "assert(ik.watch == nil and ik.sandbox == nil and string.dump == nil and newproxy == nil and "
      .. "os.execute == nil and os.exit == nil and getfenv == nil and setfenv == nil and "
      .. "require('ik.core').sandbox == nil)" },
  -- hanging and starving the host
  { name = "loops in an xpcall message handler after spending its budget", kind = "paused",
    message = BUDGET_MSG,
    update = "xpcall(function() while true do end end, function() while true do end end)" },
  { name = "loops in a message handler of an ordinary error", kind = "paused", message = BUDGET_MSG,
    update = "xpcall(function() error('x') end, function() while true do end end)" },
  { name = "catches its budget error with pcall and goes on", kind = "paused", message = BUDGET_MSG,
    update = "for _ = 1, 1e9 do pcall(function() while true do end end) end" },
  -- each solve is capped (docs/bounded-work.md); its joint moves are charged to the budget
  { name = "solves a dear chain in a loop", kind = "paused", message = BUDGET_MSG,
    top = "local p = {} for i = 1, 1000 do p[i] = { i, 0, 0 } end\n"
      .. "c = ik.chain{ positions = p, solver = 'fabrik', mode = 'plain', iterations = 1000,"
      .. " tolerance = 1e-300 }",
    update = "for _ = 1, 1e9 do c:solve({ 300, 400, 0 }) end" },
  { name = "solves a dear tree in a loop", kind = "paused", message = BUDGET_MSG,
    top = "local p, up = {}, {} for i = 1, 1000 do p[i], up[i] = { i, 0, 0 }, i - 1 end\n"
      .. "t = ik.tree{ positions = p, parents = up, iterations = 1000, tolerance = 1e-300 }",
    update = "for _ = 1, 1e9 do t:solve({ 300, 400, 0 }) end" },
  { name = "solves a batch of a dear chain in a loop", kind = "paused", message = BUDGET_MSG,
    top = "local p = {} for i = 1, 1000 do p[i] = { i, 0, 0 } end\n"
      .. "b = ik.batch{ chains = { ik.chain{ positions = p, solver = 'fabrik', mode = 'plain',"
      .. " iterations = 1000, tolerance = 1e-300, target = { 300, 400, 0 } } } }",
    update = "for _ = 1, 1e9 do b:solve() end" },
  { name = "resumes coroutines that never end", kind = "paused", message = BUDGET_MSG,
    update = "while true do coroutine.resume(coroutine.create(function() while true do end end)) end" },
  { name = "reads a chunk from a reader that never ends", kind = "paused", message = BUDGET_MSG,
    update = "load(function() return ' ' end)" },
  { name = "matches a backtracking pattern on 20 kB", kind = "paused", message = BUDGET_MSG,
    update = "local s = ('a'):rep(2e4); pcall(s.find, s, '.-.-.-.-.-b')" },
  { name = "substitutes with a backtracking pattern", kind = "paused", message = BUDGET_MSG,
    update = "local s = ('a'):rep(2e4); for _ in s:gmatch('.-.-.-b') do end; s:gsub('(.-)(.-)(.-)x', '%1')" },
  { name = "moves a table a quadrillion slots", kind = "paused", message = BUDGET_MSG,
    update = "if table.move then table.move({}, 1, 1e15, 2) else while true do end end" }, -- 5.1 has none
  { name = "repeats an empty string a quadrillion times", kind = "running",
    update = "assert(('' ):rep(1e15) == '' and ('x'):rep(0) == '')" },
  { name = "repeats a string past its memory", kind = "paused", message = MEMORY_MSG,
    update = "state.s = ('x'):rep(1e10)" },
  { name = "keeps strings too long for the host to read back",
    kind = "running",
    top = "state.big = ('z'):rep(1000):rep(1000)", update = "state.n = (state.n or 0) + 1" },
  { name = "grows its state past its memory over many frames", kind = "paused", message = MEMORY_MSG,
    update = "state.t = state.t or {}; state.t[#state.t + 1] = ('y'):rep(1000):rep(4000) .. #state.t" },
  { name = "throws an error of 4 MB", kind = "paused", message = "... (cut)",
    update = "error(('e'):rep(1000):rep(4000))" },
  { name = "throws an error object whose __tostring loops", kind = "paused",
    message = "(error object is a table value)",
    update = "error(setmetatable({}, { __tostring = function() while true do end end }))" },
  { name = "recurses without end", kind = "paused", message = { "stack overflow", MEMORY_MSG },
    update = "local function f() return 1 + f() end f()" },
  { name = "starts 64 threads", kind = "paused", message = "more than this runtime lets scripts use",
    update = "ik.batch{ threads = 64 }" },
  { name = "keeps 33 batches", kind = "paused", message = "the most a runtime allows",
    update = "state.b = {}; for i = 1, 33 do state.b[i] = ik.batch{} end" },
  -- running code outside its budget
  { name = "replaces scene.advance", kind = "error", message = "the scene is read-only to rig scripts",
    top = "scene.advance = function() while true do end end" },
  { name = "puts a looping transform into the scene's nodes", kind = "running",
    update = "scene.nodes.trap = { get_position = function() while true do end end }" },
  { name = "puts a finaliser on a metatable", kind = "error", message = "__gc is not available",
    top = "setmetatable({}, { __gc = function() while true do end end })" },
  { name = "puts a finaliser on the bones' metatable", kind = "error",
    message = "attempt to change a protected metatable",
    top = "local b = scene.skeletons.humanoid:bone(1)\n"
      .. "getmetatable(b).__gc = function() while true do end end" },
  { name = "changes strings' metatable", kind = "running",
    top = "getmetatable('').__index = nil; assert(('x'):upper() == 'X')" },
  { name = "adds a field to strings' metatable", kind = "error",
    message = "attempt to change a protected metatable",
    top = "getmetatable('').__call = print" },
  { name = "closes the host's skeletons", kind = "error", message = HOST,
    top = "scene.skeletons.humanoid:close()" },
  { name = "closes the host's nodes", kind = "error", message = HOST,
    top = "for _, n in pairs(scene.nodes) do n:close() end" },
  { name = "re-parents a host's node", kind = "error", message = "cannot change their parents",
    top = "local _, n = next(scene.nodes); n:set_parent(nil)" },
  { name = "reports a function as its chain", kind = "error",
    message = "scene.report: chain (ik.chain) expected, got function",
    top = "scene.params.walker.legs = nil; scene.report('x', true, 0, 0, function() end)" },
  -- crashing and flooding the host through reports
  { name = "reports a shape table whose __index reports again", kind = "paused",
    message = "scene.report: chain (ik.chain) expected, got table",
    update = "scene.report('x', true, 0, 1, setmetatable({}, {\n"
      .. "  __index = function() scene.report('y', true) end }))" },
  { name = "reports 200,000 names in one update", kind = "paused",
    message = "scene.report: more than 1024 reports in one call",
    update = "for i = 1, 2e5 do scene.report('n' .. i, true, 0) end" },
  { name = "reports a name of 5 MB", kind = "paused",
    message = "scene.report: chain name of at most 256 bytes expected, got 5000000 bytes",
    update = "scene.report(('n'):rep(1000):rep(5000), true, 0)" },
}

-- ---------------------------------------------------------------------------------------

local function attack_text(row)
  if row.text then return row.text end
  return (row.top or "") .. "\nfunction update(dt)\n" .. (row.update or "") .. "\nend\n"
end

-- Everything the host can see of the scene in one frame, as text.
local function snapshot(scene, reports)
  local out = {}
  local names = {}
  for name in pairs(scene.skeletons) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    for _, b in ipairs(scene.skeletons[name]:bones()) do
      local p, q = b:get_position(), b:get_rotation()
      out[#out + 1] = ("%s.%s %.17g %.17g %.17g %.17g %.17g %.17g %.17g"):format(name, b.name, p.x, p.y, p.z,
        q.x, q.y, q.z, q.w)
    end
  end
  names = {}
  for name in pairs(scene.nodes) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local p = scene.nodes[name]:get_position()
    out[#out + 1] = ("%s %.17g %.17g %.17g"):format(name, p.x, p.y, p.z)
  end
  for _, r in ipairs(reports) do out[#out + 1] = r end
  return table.concat(out, "\n")
end

local function demo_path(name)
  return (package.searchpath(name, package.path))
end

-- Runs the demo's scripts (and the attacker, first, if given) for FRAMES frames; returns
-- the healthy scripts' output per frame, the runtime, its events, and the scene.
local function run(attacker)
  local scene = scene_module.new()
  local reports = {}
  scene.report = function(name, reached, distance, iterations, _, script)
    if script ~= attacker then
      reports[#reports + 1] = ("%s %s %s %.17g %s"):format(script, name, tostring(reached), distance or -1,
        tostring(iterations))
    end
  end
  local events = {}
  local scripts = { demo_path("ik.demo.humanoid"), demo_path("ik.demo.walker") }
  if attacker then table.insert(scripts, 1, attacker) end
  local rt = runtime.new{ scene = scene, scripts = scripts, watch = false, budget = BUDGET,
    memory_limit = MEMORY, on_event = function(ev) events[#events + 1] = ev end }
  local frames = {}
  for f = 1, FRAMES do
    scene:advance(1 / 60)
    rt:update(1 / 60)
    frames[f] = snapshot(scene, reports)
    reports = {}
  end
  return frames, rt, events, scene
end

local function host_snapshot()
  local smt = getmetatable("")
  local out = { string_index = smt.__index, find = string.find, G = {}, loaded = {} }
  for k, v in pairs(_G) do out.G[k] = v end
  for k, v in pairs(package.loaded) do out.loaded[k] = v end
  out.chain_meta = {}
  for k, v in pairs(debug.getregistry()["ik.chain"] or {}) do out.chain_meta[k] = v end
  return out
end

describe("the sandbox against hostile scripts", function()
  local dir, healthy

  setup(function()
    healthy = run(nil)
  end)

  before_each(function()
    dir = tmp.mkdir()
    -- beside the folder, outside it: Lua, so that a script that could load it could leak it
    tmp.write(dir .. "/../secret.lua", ("return %q"):format(SECRET))
  end)

  after_each(function()
    os.remove(dir .. "/../secret.lua")
    tmp.rmtree(dir)
  end)

  for _, row in ipairs(ATTACKS) do
    it("contains a script that " .. row.name, function()
      local path = dir .. "/attack.lua"
      tmp.write(path, attack_text(row))
      local before = host_snapshot()
      collectgarbage()
      local heap_before = collectgarbage("count")
      local frames, rt, events = run(path)
      -- 1: the healthy scripts did exactly what they do alone
      for f = 1, FRAMES do
        assert.are.equal(healthy[f], frames[f], "frame " .. f)
      end
      -- 2: the attacker's end
      local info = rt:scripts()[1]
      local mine = {}
      for _, ev in ipairs(events) do
        if ev.script ~= path then
          assert.are.equal("load", ev.kind, "the healthy scripts: " .. tostring(ev.message))
        elseif ev.kind ~= "load" then
          mine[#mine + 1] = ev
        end
      end
      if row.kind == "running" then
        assert.are.equal("running", info.status, info.error)
        assert.are.same({}, mine)
      else
        assert.are.equal(row.kind == "paused" and "paused" or "error", info.status)
        assert.are.equal(1, #mine, "reported once")
        assert.are.equal(row.kind, mine[1].kind)
        local found = false
        for _, part in ipairs(type(row.message) == "table" and row.message or { row.message }) do
          found = found or mine[1].message:find(part, 1, true) ~= nil
        end
        assert.is_true(found, mine[1].message)
        assert.is_true(#mine[1].message <= 4096 + 200)
      end
      -- 3: no secret anywhere the host sees
      for _, ev in ipairs(events) do
        assert.is_falsy(tostring(ev.message):find(SECRET, 1, true))
      end
      for _, s in ipairs(rt:scripts()) do
        for _, v in pairs(s.state) do assert.is_falsy(tostring(v):find(SECRET, 1, true)) end
      end
      -- 4: the host as it was
      local after = host_snapshot()
      assert.are.equal(before.string_index, after.string_index)
      assert.are.equal(before.find, after.find)
      assert.are.same(before.G, after.G)
      assert.are.same(before.loaded, after.loaded)
      assert.are.same(before.chain_meta, after.chain_meta)
      assert.is_true(info.memory <= MEMORY + 2 * 1024 * 1024, "the attacker's state: " .. info.memory)
      rt:close()
      collectgarbage()
      assert.is_true(collectgarbage("count") - heap_before < 4096, "the host's heap grew")
    end)
  end

  it("has at least 35 attacks, each named once", function()
    local seen = {}
    for _, row in ipairs(ATTACKS) do
      assert.is_nil(seen[row.name], row.name)
      seen[row.name] = true
    end
    assert.is_true(#ATTACKS >= 35)
  end)

  it("runs the host's own code with the JIT still on", function()
    if not rawget(_G, "jit") then return end
    assert.is_true((jit.status()))
    assert.is_false(LUA51 and false)
  end)
end)
