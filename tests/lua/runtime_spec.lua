-- ik.runtime: loading rig scripts in order, hot reload, error handling, and the sandbox.
--
-- Scripts are real files in a scratch folder per test (made from os.tmpname()). Time is
-- a fake clock the tests move by hand; update(0) keeps the debounce to that clock.
local ik = require("ik")
local runtime = require("ik.runtime")

local tmp = require("tmp_helper")

local mkdir_tmp, rmtree, write = tmp.mkdir, tmp.rmtree, tmp.write

-- Saves the way many editors do: a new file renamed over the old one.
local function save_by_rename(path, text)
  write(path .. ".tmp~", text)
  assert(os.rename(path .. ".tmp~", path))
end

local function kinds(events, script)
  local out = {}
  for _, ev in ipairs(events) do
    if script == nil or ev.script == script then out[#out + 1] = ev.kind end
  end
  return table.concat(out, " ")
end

local function count(events, kind)
  local n = 0
  for _, ev in ipairs(events) do
    if ev.kind == kind then n = n + 1 end
  end
  return n
end

local function find_event(events, kind, script)
  for _, ev in ipairs(events) do
    if ev.kind == kind and (script == nil or ev.script == script) then return ev end
  end
  return nil
end

local function info(rt, path)
  for _, s in ipairs(rt:scripts()) do
    if s.path == path then return s end
  end
  return nil
end

-- A counter script: update adds `step` to state.n and to scene.count[name].
local function counter(name, step)
  return ([[
state.n = state.n or 0
function update(dt)
  state.n = state.n + %d
  scene.count = scene.count or {}
  scene.count[%q] = (scene.count[%q] or 0) + 1
end
]]):format(step or 1, name, name)
end

describe("ik.runtime", function()
  local dir, now, clock, rts

  local function new(opts)
    opts.clock = opts.clock or clock
    if opts.watch == nil then opts.watch = false end
    local rt = runtime.new(opts)
    rts[#rts + 1] = rt
    return rt
  end

  local function script(name, text)
    local path = dir .. "/" .. name
    write(path, text)
    return path
  end

  before_each(function()
    dir = mkdir_tmp()
    now = 0
    clock = function() return now end
    rts = {}
  end)

  after_each(function()
    for _, rt in ipairs(rts) do rt:close() end
    rmtree(dir)
  end)

  describe("loading", function()
    it("calls the scripts' update in the order given", function()
      local scene = { log = {} }
      local paths = {}
      for _, name in ipairs({ "c", "a", "b" }) do
        local text = ("function update() scene.log[#scene.log + 1] = %q end"):format(name)
        paths[#paths + 1] = script(name .. ".lua", text)
      end
      local rt = new{ scene = scene, scripts = paths }
      rt:update(1 / 60)
      rt:update(1 / 60)
      assert.are.equal("c a b c a b", table.concat(scene.log, " "))
      assert.are.equal("load load load", kinds(rt:events()))
    end)

    it("adds a script at a position, and removes one", function()
      local scene = { log = {} }
      local a = script("a.lua", "function update() scene.log[#scene.log + 1] = 'a' end")
      local b = script("b.lua", "function update() scene.log[#scene.log + 1] = 'b' end")
      local rt = new{ scene = scene, scripts = { a } }
      assert.is_true(rt:add(b, 1))
      rt:update(0)
      assert.are.equal("b a", table.concat(scene.log, " "))
      assert.is_true(rt:remove(b))
      assert.is_false(rt:remove(b))
      rt:update(0)
      assert.are.equal("b a a", table.concat(scene.log, " "))
      assert.are.equal("load load removed", kinds(rt:events()))
      assert.has_error(function() rt:add(a) end)
      assert.has_error(function() rt:add(b, 5) end)
    end)

    it("gives scripts ik, scene and an empty state", function()
      local scene = {}
      local path = script("s.lua", [[
scene.seen = { ik = ik.vec3 ~= nil, scene = scene ~= nil, state = next(state) == nil }
function update() end
]])
      local rt = new{ scene = scene, scripts = { path } }
      assert.are.same({ ik = true, scene = true, state = true }, scene.seen)
      assert.are.equal("running", info(rt, path).status)
    end)

    it("reports a script without update, and one that does not exist", function()
      local path = script("s.lua", "local x = 1")
      local rt = new{ scripts = { path, dir .. "/missing.lua" } }
      local events = rt:events()
      assert.are.equal("error error", kinds(events))
      assert.are.equal(path .. ": the script defines no function update(dt)", events[1].message)
      assert.is_truthy(events[2].message:find(dir .. "/missing.lua: ", 1, true))
      assert.are.equal("error", info(rt, path).status)
      rt:update(0) -- nothing to run, nothing raised
    end)

    it("calls update as the script's global is now (a script may swap it)", function()
      local scene = {}
      local path = script("s.lua", [[
local function second() scene.v = 2 end
function update() scene.v = 1; update = second end
]])
      local rt = new{ scene = scene, scripts = { path } }
      rt:update(0)
      assert.are.equal(1, scene.v)
      rt:update(0)
      assert.are.equal(2, scene.v)
    end)

    it("caps the threads and the number of the scripts' ik.batch objects", function()
      local scene = {}
      local path = script("s.lua", [[
local ok, err = pcall(ik.batch, { threads = 2 })
scene.two = ok or err
state.keep = {}
for i = 1, 40 do
  ok, err = pcall(ik.batch, { threads = 1 })
  if not ok then scene.at, scene.err = i, err break end
  state.keep[i] = err
end
function update() end
]])
      local rt = new{ scene = scene, scripts = { path } }
      assert.are.equal("running", info(rt, path).status)
      assert.matches("ik.batch: threads 2 is more than this runtime lets scripts use (1)", scene.two, 1, true)
      -- 32 kept fill the cap; the refused one (threads = 2) was never made
      assert.are.equal(33, scene.at)
      assert.matches("ik.batch: the scripts hold 32 batches already, the most a runtime allows", scene.err,
        1, true)
      local wide_script = script("w.lua", "state.b = ik.batch{ threads = 2 } function update() end")
      local wide = new{ scene = {}, scripts = { wide_script }, batch_threads = 2 }
      assert.are.equal("running", wide:scripts()[1].status)
      assert.has_error(function() runtime.new{ batch_threads = 0 } end,
        "ik.runtime.new: option 'batch_threads' (integer in 1..64 expected, got 0)")
    end)

    it("checks the threads of a script's ik.batch on the value the batch uses", function()
      local scene = {}
      -- A spec whose threads answer 1, 1, then 64: read once, it gets 1 thread.
      local path = script("s.lua", [[
local reads = 0
local spec = setmetatable({}, { __index = function(_, k)
  if k ~= "threads" then return nil end
  reads = reads + 1
  return reads <= 2 and 1 or 64
end })
local b = ik.batch(spec)
scene.threads, scene.reads = b.threads, reads
b:close()
function update() end
]])
      local rt = new{ scene = scene, scripts = { path } }
      assert.are.equal("running", info(rt, path).status)
      assert.are.equal(1, scene.threads)
      assert.are.equal(1, scene.reads)
    end)

    it("rejects bad options Lua's way", function()
      assert.has_error(function() runtime.new{ budjet = 1 } end, "ik.runtime.new: no option \"budjet\"")
      assert.has_error(function() runtime.new{ budget = -1 } end)
      assert.has_error(function() runtime.new{ debounce = "x" } end)
      assert.has_error(function() runtime.new{ scripts = "a.lua" } end)
    end)
  end)

  describe("reloading", function()
    it("keeps state across reloads: the same table", function()
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scripts = { path } }
      for _ = 1, 3 do rt:update(1 / 60) end
      local state = info(rt, path).state
      assert.are.equal(3, state.n)
      write(path, counter("s", 10))
      assert.is_true(rt:reload(path))
      rt:update(1 / 60)
      assert.is_true(rawequal(state, info(rt, path).state))
      assert.are.equal(13, state.n)
      assert.are.equal("load reload", kinds(rt:events()))
    end)

    it("calls on_reload with the old state after a reload, not after the first load", function()
      local scene = { calls = {} }
      local text = [[
state.version = (state.version or 0) + 1
function update() end
function on_reload(old_state)
  scene.calls[#scene.calls + 1] = { old = old_state, n = old_state.n, version = state.version }
end
]]
      local path = script("s.lua", "state.n = 7\n" .. text)
      local rt = new{ scene = scene, scripts = { path } }
      assert.are.equal(0, #scene.calls)
      local state = info(rt, path).state
      write(path, "state.n = state.n + 1\n" .. text)
      assert.is_true(rt:reload(path))
      assert.are.equal(1, #scene.calls)
      assert.is_true(rawequal(state, scene.calls[1].old))
      assert.are.equal(8, scene.calls[1].n)
      assert.are.equal(2, scene.calls[1].version)
    end)

    it("keeps the old version on a syntax error, reports file:line once", function()
      local scene = {}
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scene = scene, scripts = { path }, watch = true }
      rt:update(0)
      rt:events()
      write(path, "state.n = state.n or 0\nfunction update(dt)\n  state.n = state.n +\nend\n")
      for i = 1, 10 do
        now = i
        rt:update(0)
      end
      local events = rt:events()
      assert.are.equal("error", kinds(events))
      assert.is_truthy(events[1].message:find("^" .. path:gsub("%p", "%%%0") .. ":4: "), events[1].message)
      local s = info(rt, path)
      assert.are.equal("running", s.status)
      assert.are.equal(events[1].message, s.error)
      assert.are.equal(11, scene.count.s) -- the old version ran every frame
      -- the same broken text seen again (an editor touching it) is not reported again
      write(path, "state.n = state.n or 0\nfunction update(dt)\n  state.n = state.n +\nend\n")
      rt:update(0)
      now = 20
      rt:update(0)
      assert.are.equal("", kinds(rt:events()))
    end)

    it("keeps the old version on an error in the new top level or on_reload", function()
      local scene = {}
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scene = scene, scripts = { path } }
      write(path, "function update() end\nlocal t = nil\nlocal x = t.field\n")
      local ok, err = rt:reload(path)
      assert.is_false(ok)
      assert.is_truthy(err:find(path .. ":3: ", 1, true), err)
      write(path, "function update() end\nfunction on_reload()\n  error('no migration')\nend\n")
      ok, err = rt:reload(path)
      assert.is_false(ok)
      assert.are.equal(path .. ":3: no migration", err)
      rt:update(0)
      assert.are.equal(1, scene.count.s)
      assert.are.equal("load error error", kinds(rt:events()))
    end)

    it("brings the script back when the file is fixed", function()
      local scene = {}
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scene = scene, scripts = { path } }
      write(path, "function update(\n")
      assert.is_false((rt:reload(path)))
      write(path, counter("s", 100))
      assert.is_true(rt:reload(path))
      rt:update(0)
      local s = info(rt, path)
      assert.are.equal("running", s.status)
      assert.is_nil(s.error)
      assert.are.equal(100, s.state.n)
      assert.are.equal("load error reload", kinds(rt:events()))
    end)

    it("loads a script whose first version failed once it is fixed", function()
      local path = script("s.lua", "function update(")
      local rt = new{ scripts = { path } }
      assert.are.equal("error", info(rt, path).status)
      write(path, counter("s", 1))
      assert.is_true(rt:reload(path))
      assert.are.equal("running", info(rt, path).status)
      assert.are.equal("error load", kinds(rt:events()))
    end)

    it("pauses a script whose update raises, reports it once, runs the others", function()
      local scene = {}
      local bad = script("bad.lua",
        "function update()\n  scene.bad = (scene.bad or 0) + 1\n  error('boom')\nend\n")
      local good = script("good.lua", counter("good"))
      local rt = new{ scene = scene, scripts = { bad, good } }
      for _ = 1, 5 do rt:update(1 / 60) end
      assert.are.equal(1, scene.bad)
      assert.are.equal(5, scene.count.good)
      local events = rt:events()
      assert.are.equal("load load paused", kinds(events))
      assert.are.equal(bad .. ":3: boom", events[3].message)
      assert.are.equal("paused", info(rt, bad).status)
      assert.are.equal(bad .. ":3: boom", info(rt, bad).error)
      write(bad, "function update() scene.bad = scene.bad + 10 end")
      assert.is_true(rt:reload(bad))
      rt:update(0)
      assert.are.equal(11, scene.bad)
      assert.are.equal("reload resumed", kinds(rt:events()))
    end)

    it("does not call an error object's __tostring (the script's code) outside its budget", function()
      local path = script("s.lua", [[
function update()
  error(setmetatable({}, { __tostring = function() while true do end end }))
end
]])
      local rt = new{ scripts = { path }, budget = 1e5 }
      rt:update(0)
      assert.are.equal(path .. ": (error object is a table value)", info(rt, path).error)
    end)

    it("sees a rename-style save (inotify) and reloads it within the debounce", function()
      local scene = {}
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scene = scene, scripts = { path }, watch = true, debounce = 0.03 }
      rt:update(0)
      rt:events()
      save_by_rename(path, counter("s", 1000))
      rt:update(0) -- sees the change, waits for the file to settle
      assert.are.equal("", kinds(rt:events()))
      assert.are.equal(2, info(rt, path).state.n)
      now = 0.04
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
      assert.are.equal(1002, info(rt, path).state.n)
    end)

    it("picks a save up on the first update after the debounce (< 100 ms)", function()
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scripts = { path }, watch = true, debounce = 0.03 }
      rt:events()
      now = 10
      write(path, counter("s", 5))
      local reloaded_at
      for i = 1, 20 do
        now = 10 + i * 0.005
        rt:update(0)
        if find_event(rt:events(), "reload") then
          reloaded_at = now - 10
          break
        end
      end
      assert.is_not_nil(reloaded_at)
      assert.is_true(reloaded_at >= 0.03 and reloaded_at < 0.04, tostring(reloaded_at))
    end)

    it("restarts the debounce while the file keeps changing", function()
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scripts = { path }, watch = true, debounce = 0.03 }
      rt:events()
      for i = 1, 5 do
        now = i * 0.02
        write(path, counter("s", i))
        rt:update(0)
        assert.are.equal("", kinds(rt:events()))
      end
      now = 0.2
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
    end)

    it("also counts the dt given to update towards the debounce", function()
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scripts = { path }, watch = true, debounce = 0.03 }
      rt:events()
      write(path, counter("s", 2))
      rt:update(1 / 60) -- the clock stands still (a host sleeping between frames)
      rt:update(1 / 60)
      assert.are.equal("", kinds(rt:events()))
      rt:update(1 / 60)
      assert.are.equal("reload", kinds(rt:events()))
    end)

    it("keeps a deleted script running, and reloads it when it comes back", function()
      local scene = {}
      local path = script("s.lua", counter("s", 1))
      local rt = new{ scene = scene, scripts = { path }, watch = true }
      rt:events()
      os.remove(path)
      for i = 1, 3 do
        now = i
        rt:update(0)
      end
      local events = rt:events()
      assert.are.equal("error", kinds(events))
      assert.is_truthy(events[1].message:find(path, 1, true))
      assert.are.equal("running", info(rt, path).status)
      assert.are.equal(3, scene.count.s)
      write(path, counter("s", 50))
      rt:update(0)
      now = 10
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
      assert.are.equal(54, info(rt, path).state.n) -- 4 frames of the old version, 1 of the new
    end)

    it("reloads a script when a file it required changes", function()
      local scene = {}
      write(dir .. "/util.lua", "return { step = 1 }")
      local path = script("s.lua",
        "local util = require('util')\nfunction update() scene.step = util.step end")
      local rt = new{ scene = scene, scripts = { path }, watch = true }
      rt:update(0)
      assert.are.equal(1, scene.step)
      rt:events()
      write(dir .. "/util.lua", "return { step = 2 }")
      rt:update(0)
      now = 1
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
      assert.are.equal(2, scene.step)
    end)
  end)

  describe("limits", function()
    it("cuts an infinite loop with the budget; the other script keeps running", function()
      local scene = {}
      local loop = script("loop.lua",
        "function update()\n  local n = 0\n  while true do n = n + 1 end\nend\n")
      local good = script("good.lua", counter("good"))
      local rt = new{ scene = scene, scripts = { loop, good }, budget = 1e5 }
      for _ = 1, 3 do rt:update(1 / 60) end
      assert.are.equal(3, scene.count.good)
      local s = info(rt, loop)
      assert.are.equal("paused", s.status)
      assert.are.equal(loop .. ":3: instruction budget exceeded (100000)", s.error)
      assert.are.equal(1, count(rt:events(), "paused"))
      assert.is_nil(debug.gethook()) -- the hook is gone after the call
    end)

    it("cuts loops that catch the error, run in coroutines, or sit in the top level", function()
      local bodies = {
        pcall = "while true do pcall(function() while true do end end) end",
        xpcall = "while true do xpcall(function() while true do end end, function(e) return e end) end",
        coroutine = "coroutine.wrap(function() while true do end end)()",
        resume = "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
        many = "while true do coroutine.resume(coroutine.create(function() for _ = 1, 90 do end end)) end",
        gsub = "string.gsub(string.rep('x', 100), '.', function() while true do end end)",
      }
      for name, body in pairs(bodies) do
        local path = script(name .. ".lua", "function update()\n  " .. body .. "\nend\n")
        local rt = new{ scripts = { path }, budget = 1e5 }
        rt:update(0)
        local s = info(rt, path)
        assert.are.equal("paused", s.status, name)
        assert.is_truthy(s.error:find("instruction budget exceeded (100000)", 1, true),
          name .. ": " .. s.error)
      end
      local top = script("top.lua", "while true do end\nfunction update() end")
      local rt = new{ scripts = { top }, budget = 1e5 }
      assert.are.equal("error", info(rt, top).status)
      assert.are.equal(top .. ":1: instruction budget exceeded (100000)", info(rt, top).error)
    end)

    it("keeps a host's own hook", function()
      local calls = 0
      local function host_hook() calls = calls + 1 end
      local path = script("s.lua", counter("s"))
      local rt = new{ scripts = { path } }
      debug.sethook(host_hook, "", 1e9)
      rt:update(0)
      local hook, mask, n = debug.gethook()
      debug.sethook()
      assert.are.equal(host_hook, hook)
      assert.are.equal("", mask)
      assert.are.equal(1e9, n)
    end)

    it("stops a memory bomb (memory_limit); the host and the other scripts survive", function()
      local scene = {}
      local bomb = script("bomb.lua", [[
function update()
  local t, i = {}, 0
  while true do
    i = i + 1
    t[i] = { i, i, i, i }
  end
end
]])
      local rep = script("rep.lua", "function update() scene.s = string.rep('x', 1e12) end")
      local method = script("method.lua", "function update() scene.s = ('x'):rep(1e12) end")
      local good = script("good.lua", counter("good"))
      local before = collectgarbage("count")
      local rt = new{ scene = scene, scripts = { bomb, rep, method, good }, memory_limit = 8e6, budget = 1e9 }
      for _ = 1, 3 do rt:update(1 / 60) end
      for _, path in ipairs({ bomb, rep, method }) do
        local s = info(rt, path)
        assert.are.equal("paused", s.status, path)
        assert.is_truthy(s.error:find("memory limit exceeded (8000000 bytes)", 1, true), s.error)
      end
      -- the memory check runs in the count hook, so it lands on a line of the loop (4 or 5)
      local bomb_error = info(rt, bomb).error
      assert.is_truthy(bomb_error:find(bomb .. ":5: ", 1, true) or bomb_error:find(bomb .. ":4: ", 1, true),
        bomb_error)
      assert.are.equal(3, scene.count.good)
      assert.is_nil(scene.s)
      collectgarbage()
      assert.is_true(collectgarbage("count") - before < 4000, "the bomb's memory was not freed")
    end)
  end)

  describe("sandbox", function()
    -- Runs text as a script's top level; returns the runtime and the script's info.
    local function run_top(text, scene)
      local path = script("t" .. #rts .. ".lua", text .. "\nfunction update() end\n")
      local rt = new{ scene = scene or {}, scripts = { path }, budget = 1e6 }
      return info(rt, path), path
    end

    local function fails(text, fragment, scene)
      local s = run_top(text, scene)
      assert.are.equal("error", s.status, "ran: " .. text)
      if fragment then assert.is_truthy(s.error:find(fragment, 1, true), s.error) end
    end

    it("has no os.execute, only os.clock", function()
      fails("os.execute('true')", "attempt to call")
      fails("os.getenv('HOME')")
      fails("os.remove('x')")
      local scene = {}
      run_top("scene.clock = type(os.clock())", scene)
      assert.are.equal("number", scene.clock)
    end)

    it("has no io", function()
      fails("io.open('/etc/passwd')", "attempt to index")
      fails("io.write('x')")
    end)

    it("has no debug", function()
      fails("debug.sethook()", "attempt to index")
      fails("debug.getregistry()")
    end)

    it("has no package, so no package.loadlib", function()
      fails("package.loadlib('libc.so.6', 'system')", "attempt to index")
      local scene = {}
      run_top("scene.t = { type(package), type(setfenv), type(getfenv), type(newproxy) }", scene)
      assert.are.same({ "nil", "nil", "nil", "nil" }, scene.t)
    end)

    it("has no string.dump, by name or as a string method", function()
      fails("string.dump(function() end)", "attempt to call")
      fails("local d = ('').dump; d(function() end)", "attempt to call")
      assert.are.equal("function", type(string.dump)) -- the host's is intact
      assert.are.equal("function", type(("").dump))
    end)

    it("does not load binary chunks, with load, loadstring or loadfile", function()
      local scene = { bytecode = string.dump(function() return 42 end) }
      run_top([[
local f, err = load(scene.bytecode)
scene.load = { f, err }
scene.text = load("return 1 + 1")()
if loadstring then scene.loadstring = { loadstring(scene.bytecode) } end
]], scene)
      assert.is_nil(scene.load[1])
      assert.are.equal("attempt to load a binary chunk (mode is 't')", scene.load[2])
      assert.are.equal(2, scene.text)
      if loadstring then assert.is_nil(scene.loadstring[1]) end
      local f = assert(io.open(dir .. "/bin.luac", "wb"))
      f:write(scene.bytecode)
      f:close()
      fails("dofile('bin.luac')", "binary chunk")
    end)

    it("runs loaded text chunks in the sandbox", function()
      fails("load('os.exit(1)')()", "attempt to call")
      fails("load('return io')().open('/etc/passwd')", "attempt to index")
    end)

    it("limits dofile and loadfile to the script's folder", function()
      fails("dofile('/etc/passwd')", "own folder")
      fails("dofile('../x.lua')", "own folder")
      write(dir .. "/helper.lua", "return 40 + 2")
      local scene = {}
      run_top("scene.v = dofile('helper.lua')", scene)
      assert.are.equal(42, scene.v)
    end)

    it("keeps string metatable tampering inside the script", function()
      local s = run_top([[
getmetatable("").__index.upper = function() return "pwned" end
string.lower = function() return "pwned" end
getmetatable("").__index = function() return "pwned" end
]])
      assert.are.equal("running", s.status)
      assert.are.equal("A", ("a"):upper())
      local scene = {}
      run_top([[
function string.shout(s) return s:upper() .. "!" end
scene.v = ("hi"):shout()
]], scene)
      assert.are.equal("HI!", scene.v) -- a script's own string functions work as methods
      assert.is_nil(rawget(string, "shout"))
      assert.is_nil(("x").shout)
      assert.are.equal("a", string.lower("A"))
      assert.are.equal("function", type(("x").rep))
      assert.are.equal(string, getmetatable("").__index)
      assert.is_nil(getmetatable("").__len)
      fails("getmetatable('').__newfield = 1", "protected metatable")
      fails("setmetatable(getmetatable(''), {})", "protected")
    end)

    it("keeps ik objects' metatables and the ik table away from scripts", function()
      local v = ik.vec3(1, 2, 3)
      local scene = { v = v }
      local mt = getmetatable(v)
      local index, tostr = mt.__index, mt.__tostring
      local s = run_top([[
local mt = getmetatable(scene.v)
scene.name = mt.__name
mt.__index = function() return "pwned" end
mt.__tostring = function() return "pwned" end
getmetatable(ik.vec3).__call = nil
ik.vec3 = nil
ik.quat.identity = nil
]], scene)
      assert.are.equal("running", s.status, s.error)
      assert.are.equal("ik.vec3", scene.name)
      assert.are.equal(index, mt.__index)
      assert.are.equal(tostr, mt.__tostring)
      assert.are.equal(2, v.y)
      assert.are.equal("function", type(getmetatable(ik.vec3).__call))
      assert.are.equal("function", type(ik.quat.identity))
      fails("getmetatable(scene.v).__newfield = 1", "protected metatable", scene)
      fails("ik.watch()", "attempt to call")
    end)

    it("refuses __gc metamethods", function()
      fails("setmetatable({}, { __gc = function() while true do end end })", "__gc")
    end)

    it("allows collectgarbage('count') only", function()
      local scene = {}
      run_top("scene.kb = collectgarbage('count')", scene)
      assert.are.equal("number", type(scene.kb))
      fails("collectgarbage()", "collectgarbage")
      fails("collectgarbage('stop')", "collectgarbage")
    end)

    it("requires files of the script's folder (same sandbox) and ik modules, not os or io", function()
      write(dir .. "/helper.lua", "return { io = io, add = function(a, b) return a + b end, ik = ik }")
      local scene = {}
      run_top([[
local helper = require("helper")
scene.sum = helper.add(1, 2)
scene.io = helper.io
scene.same = require("helper") == helper
scene.ik = require("ik") == ik and helper.ik == ik
scene.vec = require("ik.core").vec3(1, 2, 3).z
]], scene)
      assert.are.equal(3, scene.sum)
      assert.is_nil(scene.io)
      assert.is_true(scene.same)
      assert.is_true(scene.ik)
      assert.are.equal(3, scene.vec)
      fails("require('os')", "not available to rig scripts")
      fails("require('io')", "not available to rig scripts")
      fails("require('debug')", "not available to rig scripts")
      fails("require('ffi')", "not found")
      fails("require('ik.runtime')", "not available to rig scripts")
      fails("require('missing')", "not found")
    end)

    it("loads ik Lua modules inside the sandbox", function()
      local scene = {}
      run_top([[
local rigs = require("ik.rigs")
scene.set = type(rigs.set)
]], scene)
      assert.are.equal("function", scene.set)
    end)

    it("gives a copy of an ik module a host embeds in package.preload", function()
      local module = { answer = 42 }
      package.preload["ik.embedded_test"] = function() return module end
      local scene = {}
      local s = run_top([[
local m = require("ik.embedded_test")
scene.answer = m.answer
m.answer = 0
]], scene)
      package.preload["ik.embedded_test"] = nil
      package.loaded["ik.embedded_test"] = nil
      assert.are.equal("running", s.status, s.error)
      assert.are.equal(42, scene.answer)
      assert.are.equal(42, module.answer)
    end)

    it("does not let a script yield the host's coroutine", function()
      local path = script("y.lua", "function update() coroutine.yield('escaped') end")
      local rt = new{ scripts = { path } }
      local co = coroutine.create(function() rt:update(0) return "done" end)
      local ok, result = coroutine.resume(co)
      assert.is_true(ok)
      assert.are.equal("done", result)
      assert.are.equal("paused", info(rt, path).status)
      assert.is_truthy(info(rt, path).error:find("outside a coroutine", 1, true))
    end)

    it("runs script coroutines", function()
      local scene = {}
      run_top([[
local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
scene.v = gen() + gen() + gen()
local co = coroutine.create(function() error("inner") end)
scene.ok, scene.err = coroutine.resume(co)
]], scene)
      assert.are.equal(6, scene.v)
      assert.is_false(scene.ok)
      assert.is_truthy(scene.err:find("inner", 1, true))
    end)
  end)

  describe("events and errors", function()
    it("delivers each event to on_event and to events()", function()
      local seen = {}
      local path = script("s.lua", "function update() error('x') end")
      local rt = new{ scripts = { path }, on_event = function(ev) seen[#seen + 1] = ev end }
      rt:update(0)
      local events = rt:events()
      assert.are.equal("load paused", kinds(events))
      assert.are.equal(events[1], seen[1])
      assert.are.equal(events[2], seen[2])
      assert.are.equal(path, events[2].script)
      assert.are.equal(0, #rt:events()) -- drained
    end)

    it("never lets an error escape update", function()
      local path = script("s.lua", counter("s"))
      local rt = new{ scripts = { path }, on_event = function() error("handler failed") end }
      assert.has_no.errors(function() rt:update(-1) end)
      assert.has_no.errors(function() rt:update("x") end)
      local events = rt:events()
      assert.is_truthy(find_event(events, "error").message:find("handler failed", 1, true))
      local broken = new{ scripts = { path }, clock = function() error("clock broke") end }
      for _ = 1, 5 do assert.has_no.errors(function() broken:update(0) end) end
      events = broken:events()
      assert.are.equal("load error", kinds(events)) -- once, not every frame
      assert.is_truthy(events[2].message:find("clock broke", 1, true))
    end)

    it("does nothing after close; scripts and events stay readable", function()
      local scene = {}
      local path = script("s.lua", counter("s"))
      local rt = new{ scene = scene, scripts = { path }, watch = true }
      rt:close()
      rt:update(0)
      assert.is_nil(scene.count)
      assert.are.equal(1, #rt:scripts())
      assert.are.equal("load", kinds(rt:events()))
      assert.has_error(function() rt:reload(path) end, "ik.runtime: reload: the runtime is closed")
      assert.is_truthy(tostring(rt):find("closed", 1, true))
    end)
  end)
end)
