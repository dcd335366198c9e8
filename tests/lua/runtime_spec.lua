-- ik.runtime: loading rig scripts in order, hot reload, error handling, and the sandbox.
--
-- Scripts are real files in a scratch folder per test (made from os.tmpname()). Time is
-- a fake clock the tests move by hand; update(0) keeps the debounce to that clock.
--
-- Each script runs in a Lua state of its own and sees a read-only copy of the scene, so
-- the tests watch a script through its state (`rt:scripts()[i].state`: a copy made when
-- it is read, so read again after frames), through the host's objects it moves (views:
-- `scene.trace`, a node whose x the scripts write digits into, shows the order they ran
-- in) or through a host function in the scene.
local ik = require("ik")
local runtime = require("ik.runtime")

local rh = require("runtime_helper")
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

-- The script's entry of rt:scripts(), read now.
local function info(rt, path)
  for _, s in ipairs(rt:scripts()) do
    if s.path == path then return s end
  end
  return nil
end

local function state(rt, path) return info(rt, path).state end

-- A counter script: update adds `step` to state.n and 1 to state.frames.
local function counter(step)
  return ([[
state.n = state.n or 0
state.frames = state.frames or 0
function update(dt)
  state.n = state.n + %d
  state.frames = state.frames + 1
end
]]):format(step or 1)
end

-- A script whose update appends the digit d to scene.trace's x (x = 10 x + d).
local function tracer(d)
  return ([[
function update()
  local p = scene.trace:get_position()
  scene.trace:set_position{ p.x * 10 + %d, 0, 0 }
end
]]):format(d)
end

local function trace_of(scene) return scene.trace:get_position().x end

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
      local scene = { trace = ik.node{} }
      local paths = {}
      for _, d in ipairs({ 3, 1, 2 }) do paths[#paths + 1] = script(d .. ".lua", tracer(d)) end
      local rt = new{ scene = scene, scripts = paths }
      rt:update(1 / 60)
      rt:update(1 / 60)
      assert.are.equal(312312, trace_of(scene))
      assert.are.equal("load load load", kinds(rt:events()))
    end)

    it("calls the scripts' update in the order given (seen through a host function)", function()
      local log = {}
      local scene = { log = function(s) log[#log + 1] = s end }
      local paths = {}
      for _, name in ipairs({ "c", "a", "b" }) do
        paths[#paths + 1] = script(name .. ".lua", ("function update() scene.log(%q) end"):format(name))
      end
      local rt = new{ scene = scene, scripts = paths }
      rt:update(1 / 60)
      rt:update(1 / 60)
      assert.are.equal("c a b c a b", table.concat(log, " "))
    end)

    it("adds a script at a position, and removes one", function()
      local scene = { trace = ik.node{} }
      local a = script("a.lua", tracer(1))
      local b = script("b.lua", tracer(2))
      local rt = new{ scene = scene, scripts = { a } }
      assert.is_true(rt:add(b, 1))
      rt:update(0)
      assert.are.equal(21, trace_of(scene))
      assert.is_true(rt:remove(b))
      assert.is_false(rt:remove(b))
      rt:update(0)
      assert.are.equal(211, trace_of(scene))
      assert.are.equal("load load removed", kinds(rt:events()))
      assert.are.equal(1, #rt:scripts())
      assert.has_error(function() rt:add(a) end, "ik.runtime: add: " .. a .. " is in the runtime already")
      assert.has_error(function() rt:add(b, 5) end,
        "ik.runtime: add: position (integer in [1, 2] expected, got 5)")
    end)

    it("gives scripts ik, a read-only scene and an empty state", function()
      local path = script("s.lua", [[
state.seen = { ik = ik.vec3 ~= nil, scene = type(scene), state = next(state) == nil }
state.write = select(2, pcall(function() scene.x = 1 end))
function update() end
]])
      local rt = new{ scene = { a = 1 }, scripts = { path } }
      local s = info(rt, path)
      assert.are.equal("running", s.status, s.error)
      assert.are.same({ ik = true, scene = "table", state = true }, s.state.seen)
      assert.are.equal(path .. ":2: " .. rh.READ_ONLY, s.state.write)
    end)

    it("reports a script without update, and one that does not exist", function()
      local path = script("s.lua", "local x = 1")
      local rt = new{ scripts = { path, dir .. "/missing.lua" } }
      local events = rt:events()
      assert.are.equal("error error", kinds(events))
      assert.are.equal(path .. ": the script defines no function update(dt)", events[1].message)
      assert.is_truthy(events[2].message:find(dir .. "/missing.lua: ", 1, true))
      assert.are.equal("error", info(rt, path).status)
      assert.are.same({}, info(rt, path).state)
      rt:update(0) -- nothing to run, nothing raised
    end)

    it("calls update as the script's global is now (a script may swap it)", function()
      local path = script("s.lua", [[
local function second() state.v = 2 end
function update() state.v = 1; update = second end
]])
      local rt = new{ scripts = { path } }
      rt:update(0)
      assert.are.equal(1, state(rt, path).v)
      rt:update(0)
      assert.are.equal(2, state(rt, path).v)
    end)

    it("caps the threads and the number of each script's ik.batch objects", function()
      local text = [[
local ok, err = pcall(ik.batch, { threads = 2 })
state.two = ok or err
state.keep = {}
for i = 1, 40 do
  ok, err = pcall(ik.batch, { threads = 1 })
  if not ok then state.at, state.err = i, err break end
  state.keep[i] = err
end
function update() end
]]
      local path = script("s.lua", text)
      local other = script("o.lua", text)
      local rt = new{ scripts = { path, other } }
      for _, p in ipairs({ path, other }) do -- the cap is each script's: the second gets as many
        local s = info(rt, p)
        assert.are.equal("running", s.status, s.error)
        assert.matches("ik.batch: threads 2 is more than this runtime lets scripts use (1)", s.state.two,
          1, true)
        -- 32 kept fill the cap; the refused one (threads = 2) was never made
        assert.are.equal(33, s.state.at)
        assert.matches("ik.batch: the script holds 32 batches already, the most a runtime allows",
          s.state.err, 1, true)
        assert.are.equal(32, #s.state.keep)
        assert.are.equal("ik.batch", s.state.keep[1]) -- a copy names the script's objects by type
      end
      local wide_script = script("w.lua", "state.b = ik.batch{ threads = 2 } function update() end")
      local wide = new{ scene = {}, scripts = { wide_script }, batch_threads = 2 }
      assert.are.equal("running", wide:scripts()[1].status, wide:scripts()[1].error)
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
state.threads, state.reads = b.threads, reads
b:close()
function update() end
]])
      local rt = new{ scene = scene, scripts = { path } }
      local s = info(rt, path)
      assert.are.equal("running", s.status, s.error)
      assert.are.equal(1, s.state.threads)
      assert.are.equal(1, s.state.reads)
    end)

    it("rejects bad options Lua's way", function()
      assert.has_error(function() runtime.new{ budjet = 1 } end, "ik.runtime.new: no option \"budjet\"")
      assert.has_error(function() runtime.new{ budget = -1 } end,
        "ik.runtime.new: option 'budget' (positive number or false expected, got -1)")
      assert.has_error(function() runtime.new{ memory_limit = 0 } end,
        "ik.runtime.new: option 'memory_limit' (positive number or false expected, got 0)")
      assert.has_error(function() runtime.new{ debounce = "x" } end,
        "ik.runtime.new: option 'debounce' (non-negative number expected, got \"x\")")
      assert.has_error(function() runtime.new{ scripts = "a.lua" } end,
        "ik.runtime.new: option 'scripts' (list of paths expected, got \"a.lua\")")
      assert.has_error(function() runtime.new{ scene = 1 } end,
        "ik.runtime.new: option 'scene' (table expected, got 1)")
    end)

    it("refuses a scene it cannot share, naming what", function()
      local path = script("s.lua", "function update() end")
      local rt = new{ scene = { co = coroutine.create(function() end) }, scripts = { path } }
      local s = info(rt, path)
      assert.are.equal("error", s.status)
      assert.is_truthy(s.error:find("scene: thread cannot be shared with rig scripts", 1, true), s.error)
    end)
  end)

  describe("reloading", function()
    it("keeps state across reloads (by content: a script's state is read as a copy)", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path } }
      for _ = 1, 3 do rt:update(1 / 60) end
      local before = state(rt, path)
      assert.are.equal(3, before.n)
      write(path, counter(10))
      assert.is_true(rt:reload(path))
      rt:update(1 / 60)
      local after = state(rt, path)
      assert.are.equal(13, after.n)
      assert.are.equal(4, after.frames)
      assert.are.equal(3, before.n) -- the copy read before is not the script's table
      assert.is_false(rawequal(before, after))
      assert.are.equal("load reload", kinds(rt:events()))
    end)

    it("calls on_reload with the old state (the same table) after a reload, not the first load", function()
      local text = [[
state.version = (state.version or 0) + 1
state.calls = state.calls or {}
function update() end
function on_reload(old_state)
  state.calls[#state.calls + 1] =
    { same = rawequal(old_state, state), n = old_state.n, version = state.version }
end
]]
      local path = script("s.lua", "state.n = 7\n" .. text)
      local rt = new{ scripts = { path } }
      assert.are.same({}, state(rt, path).calls)
      write(path, "state.n = state.n + 1\n" .. text)
      assert.is_true(rt:reload(path))
      assert.are.same({ { same = true, n = 8, version = 2 } }, state(rt, path).calls)
    end)

    it("reloads a script that makes reading an undefined global an error (strict mode)", function()
        local path = script("strict.lua", "setmetatable(_G, { __index = function(_, k) "
          .. "error('no global ' .. k, 2) end })\nstate.n = (state.n or 0) + 1\nfunction update() end\n")
        local rt = new{ scripts = { path } }
        assert.are.equal("running", info(rt, path).status, info(rt, path).error)
        assert.is_true(rt:reload(path))
        assert.are.equal(2, state(rt, path).n)
      end)

    it("keeps the old version on a syntax error, reports file:line once", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path }, watch = true }
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
      assert.are.equal(11, s.state.frames) -- the old version ran every frame
      -- the same broken text seen again (an editor touching it) is not reported again
      write(path, "state.n = state.n or 0\nfunction update(dt)\n  state.n = state.n +\nend\n")
      rt:update(0)
      now = 20
      rt:update(0)
      assert.are.equal("", kinds(rt:events()))
    end)

    it("keeps the old version on an error in the new top level or on_reload", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path } }
      write(path, "function update() end\nlocal t = nil\nlocal x = t.field\n")
      local ok, err = rt:reload(path)
      assert.is_false(ok)
      assert.are.equal(path .. ":3: " .. rh.nil_index("local", "t"), err)
      write(path, "function update() end\nfunction on_reload()\n  error('no migration')\nend\n")
      ok, err = rt:reload(path)
      assert.is_false(ok)
      assert.are.equal(path .. ":3: no migration", err)
      rt:update(0)
      assert.are.equal(1, state(rt, path).n)
      assert.are.equal("load error error", kinds(rt:events()))
    end)

    it("brings the script back when the file is fixed", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path } }
      write(path, "function update(\n")
      assert.is_false((rt:reload(path)))
      write(path, counter(100))
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
      write(path, counter(1))
      assert.is_true(rt:reload(path))
      assert.are.equal("running", info(rt, path).status)
      assert.are.equal("error load", kinds(rt:events()))
    end)

    it("pauses a script whose update raises, reports it once, runs the others", function()
      local bad = script("bad.lua",
        "function update()\n  state.bad = (state.bad or 0) + 1\n  error('boom')\nend\n")
      local good = script("good.lua", counter())
      local rt = new{ scripts = { bad, good } }
      for _ = 1, 5 do rt:update(1 / 60) end
      assert.are.equal(1, state(rt, bad).bad) -- what it did before the error stays in its state
      assert.are.equal(5, state(rt, good).n)
      local events = rt:events()
      assert.are.equal("load load paused", kinds(events))
      assert.are.equal(bad .. ":3: boom", events[3].message)
      assert.are.equal("paused", info(rt, bad).status)
      assert.are.equal(bad .. ":3: boom", info(rt, bad).error)
      write(bad, "function update() state.bad = state.bad + 10 end")
      assert.is_true(rt:reload(bad))
      rt:update(0)
      assert.are.equal(11, state(rt, bad).bad)
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

    it("cuts a script's error text to 4096 bytes", function()
      local path = script("s.lua", "function update() error(string.rep('y', 1e5)) end")
      local rt = new{ scripts = { path }, budget = 1e9 }
      rt:update(0)
      local err = info(rt, path).error
      local head = path .. ":1: "
      assert.are.equal(head, err:sub(1, #head))
      assert.are.equal(4096 + #"... (cut)", #err)
      assert.are.equal(("y"):rep(4096 - #head) .. "... (cut)", err:sub(#head + 1))
      assert.are.equal(err, find_event(rt:events(), "paused").message)
    end)

    it("sees a rename-style save (inotify) and reloads it within the debounce", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path }, watch = true, debounce = 0.03 }
      rt:update(0)
      rt:events()
      save_by_rename(path, counter(1000))
      rt:update(0) -- sees the change, waits for the file to settle
      assert.are.equal("", kinds(rt:events()))
      assert.are.equal(2, state(rt, path).n)
      now = 0.04
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
      assert.are.equal(1002, state(rt, path).n)
    end)

    it("picks a save up on the first update after the debounce (< 100 ms)", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path }, watch = true, debounce = 0.03 }
      rt:events()
      now = 10
      write(path, counter(5))
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
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path }, watch = true, debounce = 0.03 }
      rt:events()
      for i = 1, 5 do
        now = i * 0.02
        write(path, counter(i))
        rt:update(0)
        assert.are.equal("", kinds(rt:events()))
      end
      now = 0.2
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
    end)

    it("also counts the dt given to update towards the debounce", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path }, watch = true, debounce = 0.03 }
      rt:events()
      write(path, counter(2))
      rt:update(1 / 60) -- the clock stands still (a host sleeping between frames)
      rt:update(1 / 60)
      assert.are.equal("", kinds(rt:events()))
      rt:update(1 / 60)
      assert.are.equal("reload", kinds(rt:events()))
    end)

    it("keeps a deleted script running, and reloads it when it comes back", function()
      local path = script("s.lua", counter(1))
      local rt = new{ scripts = { path }, watch = true }
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
      assert.are.equal(3, state(rt, path).frames)
      write(path, counter(50))
      rt:update(0)
      now = 10
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
      assert.are.equal(54, state(rt, path).n) -- 4 frames of the old version, 1 of the new
    end)

    it("reloads a script when a file it required changes", function()
      write(dir .. "/util.lua", "return { step = 1 }")
      local path = script("s.lua",
        "local util = require('util')\nfunction update() state.step = util.step end")
      local rt = new{ scripts = { path }, watch = true }
      rt:update(0)
      assert.are.equal(1, state(rt, path).step)
      rt:events()
      write(dir .. "/util.lua", "return { step = 2 }")
      rt:update(0)
      now = 1
      rt:update(0)
      assert.are.equal("reload", kinds(rt:events()))
      assert.are.equal(2, state(rt, path).step)
    end)
  end)

  describe("limits", function()
    it("cuts an infinite loop with the budget; the other script keeps running", function()
      local loop = script("loop.lua",
        "function update()\n  local n = 0\n  while true do n = n + 1 end\nend\n")
      local good = script("good.lua", counter())
      local rt = new{ scripts = { loop, good }, budget = 1e5 }
      for _ = 1, 3 do rt:update(1 / 60) end
      assert.are.equal(3, state(rt, good).n)
      local s = info(rt, loop)
      assert.are.equal("paused", s.status)
      assert.are.equal(loop .. ":3: instruction budget exceeded (100000)", s.error)
      assert.are.equal(1, count(rt:events(), "paused"))
      assert.is_nil(debug.gethook()) -- the host has no hook after the call
    end)

    it("gives each call its own budget: a script under it every frame runs on", function()
      local path = script("s.lua", [[
function update()
  for _ = 1, 2000 do end -- a few thousand instructions a call, far below the budget
  state.n = (state.n or 0) + 1
end
]])
      local rt = new{ scripts = { path }, budget = 1e5 }
      for _ = 1, 200 do rt:update(0) end -- far more than the budget in all
      assert.are.equal("running", info(rt, path).status, info(rt, path).error)
      assert.are.equal(200, state(rt, path).n)
    end)

    it("cuts loops that catch the error, run in coroutines, or sit in the top level", function()
      local bodies = {
        pcall = "while true do pcall(function() while true do end end) end",
        xpcall = "while true do xpcall(function() while true do end end, function(e) return e end) end",
        xpcall_loop = "xpcall(function() while true do end end, function() while true do end end)",
        coroutine = "coroutine.wrap(function() while true do end end)()",
        resume = "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
        many = "while true do coroutine.resume(coroutine.create(function() for _ = 1, 90 do end end)) end",
        gsub = "string.gsub(string.rep('x', 100), '.', function() while true do end end)",
        sort = "local t = {} for i = 1, 100 do t[i] = i end table.sort(t, function() while true do end end)",
        tostring = "tostring(setmetatable({}, { __tostring = function() while true do end end }))",
        -- backtracking patterns on 20 kB: minutes of C work each, unless the matcher's
        -- steps count against the budget
        find = "local s = ('a'):rep(2e4); s:find('.-.-.-.-.-b')",
        match = "string.match(('a'):rep(2e4), '.-.-.-.-.-b')",
        gmatch = "for _ in ('a'):rep(2e4):gmatch('.-.-.-b') do end",
        pattern_gsub = "(('a'):rep(2e4)):gsub('(.-)(.-)(.-)x', '%1')",
        pcall_find = "local s = ('a'):rep(2e4); pcall(s.find, s, '.-.-.-.-.-b'); while true do end",
      }
      for name, body in pairs(bodies) do
        local path = script(name .. ".lua", "function update()\n  " .. body .. "\nend\n")
        local rt = new{ scripts = { path }, budget = 1e5 }
        rt:update(0)
        local s = info(rt, path)
        assert.are.equal("paused", s.status, name)
        local whole = "^" .. path:gsub("%p", "%%%0") .. ":%d+: instruction budget exceeded %(100000%)$"
        assert.is_truthy(s.error:find(whole), name .. ": " .. s.error)
      end
      local top = script("top.lua", "while true do end\nfunction update() end")
      local rt = new{ scripts = { top }, budget = 1e5 }
      assert.are.equal("error", info(rt, top).status)
      assert.are.equal(top .. ":1: instruction budget exceeded (100000)", info(rt, top).error)
    end)

    it("lets neither pcall nor an xpcall handler see a spent budget", function()
      local path = script("s.lua", [[
function update()
  state.handled, state.caught = 0, 0
  for _ = 1, 3 do
    xpcall(function() while true do end end, function(e) state.handled = state.handled + 1 return e end)
    state.caught = state.caught + 1
  end
end
]])
      local rt = new{ scripts = { path }, budget = 1e5 }
      rt:update(0)
      local s = info(rt, path)
      assert.are.equal("paused", s.status)
      assert.are.equal(path .. ":4: instruction budget exceeded (100000)", s.error)
      assert.are.same({ 0, 0 }, { s.state.handled, s.state.caught })
    end)

    it("keeps a host's own hook", function()
      local calls = 0
      local function host_hook() calls = calls + 1 end
      local path = script("s.lua", counter())
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
      local bomb = script("bomb.lua", [[
function update()
  local t, i = {}, 0
  while true do
    i = i + 1
    t[i] = { i, i, i, i }
  end
end
]])
      local rep = script("rep.lua", "function update() state.s = string.rep('x', 1e12) end")
      local method = script("method.lua", "function update() state.s = ('x'):rep(1e12) end")
      local good = script("good.lua", counter())
      local before = collectgarbage("count")
      local rt = new{ scripts = { bomb, rep, method, good }, memory_limit = 8e6, budget = 1e9 }
      for _ = 1, 3 do rt:update(1 / 60) end
      assert.are.equal(bomb .. ": memory limit exceeded (8000000 bytes)", info(rt, bomb).error)
      -- a string.rep past the limit is refused before it is made
      assert.are.equal(rep .. ":1: memory limit exceeded (8000000 bytes)", info(rt, rep).error)
      assert.are.equal(method .. ":1: memory limit exceeded (8000000 bytes)", info(rt, method).error)
      for _, path in ipairs({ bomb, rep, method }) do
        local s = info(rt, path)
        assert.are.equal("paused", s.status, path)
        assert.is_nil(s.state.s)
        assert.is_true(s.memory < 8e6, path .. ": " .. s.memory) -- what the failed call held is freed
      end
      assert.are.equal(3, state(rt, good).n)
      assert.are.equal(3, count(rt:events(), "paused"))
      collectgarbage()
      assert.is_true(collectgarbage("count") - before < 4000, "the host's heap grew")
    end)

    it("counts memory over the script's lifetime, not per call", function()
      -- about 2 MB more each frame, each call far below the limit: a limit per call
      -- would never stop it
      local grow = script("grow.lua", [[
state.kept = state.kept or {}
function update()
  local t = {}
  for i = 1, 1e5 do t[i] = i end
  state.kept[#state.kept + 1] = t
end
]])
      local good = script("good.lua", counter())
      local rt = new{ scripts = { grow, good }, memory_limit = 8e6, budget = 1e9 }
      local paused_at
      for frame = 1, 20 do
        rt:update(1 / 60)
        if not paused_at and info(rt, grow).status == "paused" then paused_at = frame end
      end
      assert.is_not_nil(paused_at, "never paused")
      assert.is_true(paused_at > 1, "paused on its first frame")
      local s = info(rt, grow)
      assert.are.equal(grow .. ": memory limit exceeded (8000000 bytes)", s.error)
      assert.are.equal(paused_at - 1, #s.state.kept) -- the frames before kept theirs
      assert.is_true(s.memory <= 8e6, tostring(s.memory))
      assert.are.equal(20, state(rt, good).n)
      assert.are.equal(1, count(rt:events(), "paused"))
    end)

    it("reloads a script whose state filled its memory, with a version that frees it", function()
        local path = script("full.lua", [[
state.kept = state.kept or {}
function update()
  for i = 1, 1e4 do state.kept[#state.kept + 1] = { i } end
end
]])
        local rt = new{ scripts = { path }, memory_limit = 8e6, budget = 1e9 }
        for _ = 1, 100 do rt:update(0) end
        assert.are.equal("paused", info(rt, path).status)
        assert.are.equal(path .. ": memory limit exceeded (8000000 bytes)", info(rt, path).error)
        write(path, "state.kept = nil\nfunction update() state.ok = true end\n")
        assert.is_true(rt:reload(path))
        rt:update(0)
        local s = info(rt, path)
        assert.are.equal("running", s.status, s.error)
        assert.is_true(s.state.ok)
        assert.is_true(s.memory < 1e6, tostring(s.memory))
      end)

    it("has a 64 MiB memory limit by default, and none with memory_limit = false", function()
      assert.are.same({ budget = 1e7, debounce = 0.03, memory_limit = 64 * 1024 * 1024 }, runtime.defaults)
      local text = "state.t = {} for i = 1, 2e6 do state.t[i] = i end function update() end" -- 16 MB or more
      local path = script("big.lua", text)
      local limited = new{ scripts = { path }, memory_limit = 8e6, budget = 1e9 }
      assert.are.equal(path .. ": memory limit exceeded (8000000 bytes)", info(limited, path).error)
      local unlimited = new{ scripts = { path }, memory_limit = false, budget = 1e9 }
      assert.are.equal("running", info(unlimited, path).status, info(unlimited, path).error)
      assert.is_true(info(unlimited, path).memory > 8e6)
      local default = new{ scripts = { path }, budget = 1e9 }
      assert.are.equal("running", info(default, path).status, info(default, path).error)
    end)

    it("says what each script's state holds, and frees it when the script is removed", function()
      local small = script("small.lua", "function update() end")
      local big = script("big.lua", "state.t = {} for i = 1, 1e5 do state.t[i] = i end function update() end")
      local rt = new{ scripts = { small, big } }
      local m_small, m_big = info(rt, small).memory, info(rt, big).memory
      assert.is_true(m_small > 0)
      assert.is_true(m_big > m_small + 5e5, m_small .. " " .. m_big) -- 1e5 numbers: 800 kB or more
      assert.is_true(rt:remove(big))
      assert.are.equal(1, #rt:scripts())
      rt:close()
      assert.are.equal(0, rt:scripts()[1].memory)
    end)
  end)

  describe("isolation", function()
    local function top(text, scene, opts)
      local path = script("t" .. #rts .. ".lua", text .. "\nfunction update() end\n")
      opts = opts or {}
      opts.scene, opts.scripts = scene or {}, { path }
      local rt = new(opts)
      return info(rt, path), path, rt
    end

    it("refuses writes to the scene's top level, in the top level and in update", function()
      local scene = { a = 1, target = ik.node{} }
      local s, path = top("scene.a = 2", scene)
      assert.are.equal("error", s.status)
      assert.are.equal(path .. ":1: " .. rh.READ_ONLY, s.error)
      for _, write_it in ipairs({ "scene.b = 1", "scene.target = nil", "scene.advance = print" }) do
        local p = script("u.lua", "function update() " .. write_it .. " end")
        local rt = new{ scene = scene, scripts = { p } }
        rt:update(0)
        local u = info(rt, p)
        assert.are.equal("paused", u.status, write_it)
        assert.are.equal(p .. ":1: " .. rh.READ_ONLY, u.error, write_it)
        rt:close()
      end
      assert.are.same({ "a", "target" }, (function()
        local keys = {}
        for k in pairs(scene) do keys[#keys + 1] = k end
        table.sort(keys)
        return keys
      end)())
      assert.are.equal(1, scene.a)
    end)

    it("gives scripts copies of the scene's tables: their writes stay their own", function()
      local nested = { a = 1, list = { 1, 2, 3 } }
      local scene = { t = nested }
      local path = script("s.lua", [[
scene.t.a = 5
scene.t.list[4] = 4
scene.t.new = "mine"
rawset(scene, "x", 1) -- raw, into the script's read-only proxy: still the script's own
function update() state.seen = { a = scene.t.a, n = #scene.t.list, new = scene.t.new, x = scene.x } end
]])
      local other = script("o.lua",
        "function update() state.seen = { a = scene.t.a, new = scene.t.new, x = scene.x } end")
      local rt = new{ scene = scene, scripts = { path, other } }
      rt:update(0)
      assert.are.same({ a = 1, list = { 1, 2, 3 } }, nested) -- the host never sees them
      assert.is_nil(rawget(scene, "x"))
      assert.are.same({ a = 5, n = 4, new = "mine", x = 1 }, state(rt, path).seen)
      assert.are.same({ a = 1 }, state(rt, other).seen) -- nor does the other script
    end)

    it("copies the scene when the script is added: the host's later changes are not seen", function()
      local scene = { t = { a = 1 } }
      local path = script("s.lua", "function update() state.a, state.b = scene.t.a, scene.b end")
      local rt = new{ scene = scene, scripts = { path } }
      scene.t.a, scene.b = 2, 3
      rt:update(0)
      assert.are.same({ 1, nil }, { state(rt, path).a, state(rt, path).b })
    end)

    it("keeps cycles and shared tables of the scene as they are in the copy", function()
      local shared = { v = 1 }
      local cyclic = {}
      cyclic.self = cyclic
      local scene = { x = shared, y = shared, c = cyclic }
      local s = top("state.shared = rawequal(scene.x, scene.y)\n"
        .. "state.cycle = rawequal(scene.c.self, scene.c)", scene)
      assert.are.equal("running", s.status, s.error)
      assert.is_true(s.state.shared)
      assert.is_true(s.state.cycle)
    end)

    it("makes the scene's nodes views of the host's: a node moved by a script moves for the host", function()
      local node = ik.node{ position = { 1, 2, 3 } }
      local scene = { target = node, nested = { node = node } }
      local path = script("s.lua", [[
state.same = rawequal(scene.target, scene.nested.node)
state.start = { scene.target:get_position().x, scene.target:get_position().y }
function update() scene.target:set_position{ 4, 5, 6 } end
]])
      local rt = new{ scene = scene, scripts = { path } }
      assert.is_true(state(rt, path).same) -- one view per host object
      assert.are.same({ 1, 2 }, state(rt, path).start)
      rt:update(0)
      assert.are.same({ 4, 5, 6 }, { node:get_position().x, node:get_position().y, node:get_position().z })
      node:set_position{ 7, 8, 9 } -- and the host's moves are seen by the script
      write(path, "function update() state.x = scene.target:get_position().x end")
      assert.is_true(rt:reload(path))
      rt:update(0)
      assert.are.equal(7, state(rt, path).x)
    end)

    it("lets a script solve a chain over the host's bones, which move for the host", function()
      local sk = ik.skeleton{
        { name = "shoulder", position = { 0, 1.5, 0 } },
        { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0 } },
        { name = "hand", parent = "elbow", position = { 0.25, 0, 0 } },
      }
      local scene = { arm = { sk:bone("shoulder"), sk:bone("elbow"), sk:bone("hand") },
                      target = ik.node{ position = { 0.35, 1.3, 0.3 } } }
      local path = script("reach.lua", [[
state.arm = state.arm or ik.chain{ bones = scene.arm, target = scene.target, pole = { 0.2, 1.5, -1 } }
function update() state.reached = state.arm:solve() end
]])
      local rt = new{ scene = scene, scripts = { path } }
      rt:update(0)
      local s = info(rt, path)
      assert.are.equal("running", s.status, s.error)
      assert.is_true(s.state.reached)
      assert.are.equal("ik.chain", s.state.arm)
      local hand, target = sk:bone("hand"):get_position(), scene.target:get_position()
      assert.is_true((hand - target):length() < 1e-3, tostring(hand))
    end)

    it("refuses to close the host's objects or change their parents", function()
      local sk = ik.skeleton{ { name = "root" }, { name = "tip", parent = "root", position = { 1, 0, 0 } } }
      local scene = { sk = sk, node = ik.node{},
                      ground = ik.ground.plane{ point = { 0, 0, 0 }, normal = { 0, 1, 0 } } }
      local cases = {
        { "scene.sk:close()", rh.CLOSE_MSG },
        { "scene.sk:bone('tip'):close()", rh.nil_call("method", "close") }, -- bones have none
        { "scene.node:close()", rh.CLOSE_MSG },
        { "scene.ground:close()", rh.CLOSE_MSG },
        { "scene.node:set_parent(ik.node{})", rh.PARENT_MSG },
        { "scene.node:set_parent(nil)", rh.PARENT_MSG },
        { "ik.node{}:set_parent(scene.node)", false }, -- its own node may hang under a host node
      }
      for i, case in ipairs(cases) do
        local path = script("c" .. i .. ".lua", "function update()\n" .. case[1] .. "\nend\n")
        local rt = new{ scene = scene, scripts = { path } }
        rt:update(0)
        local s = info(rt, path)
        if case[2] then
          assert.are.equal("paused", s.status, case[1])
          assert.are.equal(path .. ":2: " .. case[2], s.error, case[1])
        else
          assert.are.equal("running", s.status, case[1])
        end
      end
      assert.are.equal("ik.skeleton(2 bones)", tostring(sk))
      assert.are.equal("ik.node(0, 0, 0)", tostring(scene.node))
      assert.are.equal("ik.ground(plane)", tostring(scene.ground))
      assert.is_nil(scene.node.parent)
      sk:close() -- the host still can
      assert.are.equal("ik.skeleton (closed)", tostring(sk))
    end)

    it("lets the host close its objects under a script: the script's next use fails in the script", function()
      local cases = {
        { "skeleton", "state.arm:solve()", "attempt to use a bone of a closed ik.skeleton" },
        { "node", "scene.target:get_position()", "attempt to use a closed ik.node" },
        { "ground", "scene.ground:raycast({ 0, 1, 0 }, { 0, -1, 0 }, 5)",
          "attempt to use a closed ik.ground" },
      }
      for i, case in ipairs(cases) do
        local sk = ik.skeleton{
          { name = "a", position = { 0, 1.5, 0 } },
          { name = "b", parent = "a", position = { 0.3, 0, 0 } },
          { name = "c", parent = "b", position = { 0.25, 0, 0 } },
        }
        local scene = { arm = { sk:bone("a"), sk:bone("b"), sk:bone("c") },
                        target = ik.node{ position = { 0.3, 1.3, 0.2 } },
                        ground = ik.ground.plane{ point = { 0, 0, 0 }, normal = { 0, 1, 0 } } }
        local path = script("closed" .. i .. ".lua", ([[
state.arm = ik.chain{ bones = scene.arm, target = scene.target }
function update()
  %s
end
]]):format(case[2]))
        local rt = new{ scene = scene, scripts = { path } }
        rt:update(0)
        assert.are.equal("running", info(rt, path).status, info(rt, path).error)
        local closing = { skeleton = sk, node = scene.target, ground = scene.ground }
        closing[case[1]]:close()
        rt:update(0)
        local s = info(rt, path)
        assert.are.equal("paused", s.status, case[1])
        assert.are.equal(path .. ":3: " .. case[3], s.error)
      end
    end)

    it("leaves scene.advance out, and hands scene.report's records to the host's report", function()
      local got, advanced = {}, 0
      local scene = {
        advance = function() advanced = advanced + 1 end,
        report = function(...) got[#got + 1] = { n = select("#", ...), ... } end,
      }
      local path = script("s.lua", [[
state.advance = type(scene.advance)
state.chain = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } } }
scene.report("top", true)
function update()
  local reached, distance, iterations = state.chain:solve(ik.vec3(1, 1, 0))
  scene.report("arm", reached, distance, iterations, state.chain)
  scene:report("leg", false)
end
]])
      local rt = new{ scene = scene, scripts = { path } }
      assert.are.equal("nil", state(rt, path).advance)
      assert.are.same({ { n = 6, "top", true, nil, nil, nil, path } }, got)
      got = {}
      rt:update(0)
      assert.are.equal(0, advanced)
      assert.are.equal(2, #got)
      local arm, leg = got[1], got[2]
      assert.are.same({ "arm", true, "number", "number", "table", path },
        { arm[1], arm[2], type(arm[3]), type(arm[4]), type(arm[5]), arm[6] })
      assert.are.same({ n = 6, "leg", false, nil, nil, nil, path }, leg)
      rt:update(0)
      assert.are.equal(4, #got) -- records are handed once, after each update
      got = {}
      local plain = new{ scene = scene, scripts = { path }, report_shapes = false }
      plain:update(0)
      assert.are.same({ "arm", true, "nil", path }, { got[2][1], got[2][2], type(got[2][5]), got[2][6] })
      assert.has_error(function() runtime.new{ report_shapes = 1 } end,
        "ik.runtime.new: option 'report_shapes' (boolean expected, got 1)")
    end)

    it("checks scene.report's arguments and caps its calls per update", function()
      local scene = { report = function() end }
      local cases = {
        { "scene.report(string.rep('n', 257), true)",
          "scene.report: chain name of at most 256 bytes expected, got 257 bytes" },
        { "scene.report(1, true)", "scene.report: chain name (string) expected, got number" },
        -- a string where a number belongs is named by its length ("got 3 bytes"), as names are:
        -- only the start is the contract here
        { "scene.report('c', true, 'far')", "scene.report: distance (number) expected, got ", prefix = true },
        { "scene.report('c', true, 1, '2')", "scene.report: iterations (number) expected, got ",
          prefix = true },
        { "scene.report('c', true, {})", "scene.report: distance (number) expected, got table" },
        { "scene.report('c', true, 1, 2, {})", "scene.report: chain (ik.chain) expected, got table" },
        { "scene:report('c', true, 1, 2, ik.node{})",
          "scene.report: chain (ik.chain) expected, got ik.node" },
        { "for i = 1, 1025 do scene.report('c' .. i, true) end",
          "scene.report: more than 1024 reports in one call" },
      }
      for i, case in ipairs(cases) do
        local path = script("r" .. i .. ".lua", "function update()\n" .. case[1] .. "\nend\n")
        local rt = new{ scene = scene, scripts = { path } }
        rt:update(0)
        local s = info(rt, path)
        assert.are.equal("paused", s.status, case[1])
        local want = path .. ":2: " .. case[2]
        assert.are.equal(want, case.prefix and s.error:sub(1, #want) or s.error)
      end
      local ok = script("ok.lua", "function update() for i = 1, 1024 do scene.report('c' .. i, true) end end")
      local n = 0
      local rt = new{ scene = { report = function() n = n + 1 end }, scripts = { ok } }
      rt:update(0)
      rt:update(0)
      assert.are.equal("running", info(rt, ok).status, info(rt, ok).error)
      assert.are.equal(2048, n) -- the cap is per call
    end)

    it("calls the scene's host functions with their arguments and results copied", function()
      local host_t = { a = 1 }
      local node = ik.node{}
      local kept = { k = { 1, 2 } }
      local got
      local scene = {
        t = host_t,
        node = node,
        give = function(...) got = { n = select("#", ...), ... } return ... end,
        fresh = function() return kept, "s", 3, true end,
        fail = function() error("host says no", 0) end,
      }
      local path = script("s.lua", [[
local arg = { x = 1, inner = { 2 } }
local r = { scene.give(arg, scene.t, scene.node, "s", 2, false, nil) }
state.same_arg = rawequal(r[1], arg)      -- the result is a copy of the copy
state.arg_x = r[1].x
state.t_back = r[2].a -- results come in as copies (views stay views)
state.node_back = rawequal(r[3], scene.node)
state.rest = { r[4], r[5], r[6] }
local k, s, n, b = scene.fresh()
k.k[1] = 10
state.fresh = { k.k[1], k.k[2], s, n, b }
state.fresh_again = scene.fresh().k[1]
state.caught = select(2, pcall(scene.fail))
function update(dt) scene.give("frame", dt) end
]])
      local rt = new{ scene = scene, scripts = { path } }
      local s = info(rt, path)
      assert.are.equal("running", s.status, s.error)
      assert.are.equal(7, got.n)
      assert.are.same({ x = 1, inner = { 2 } }, got[1]) -- a copy of the script's table
      assert.is_true(rawequal(got[2], host_t)) -- a scene table comes back as the host's own
      assert.is_true(rawequal(got[3], node)) -- a view comes back as the host's object
      assert.are.same({ "s", 2, false }, { got[4], got[5], got[6] })
      assert.is_false(s.state.same_arg)
      assert.are.equal(1, s.state.arg_x)
      assert.are.equal(1, s.state.t_back)
      assert.is_true(s.state.node_back)
      assert.are.same({ "s", 2, false }, s.state.rest)
      assert.are.same({ 10, 2, "s", 3, true }, s.state.fresh)
      assert.are.equal(1, s.state.fresh_again) -- the script changed its copy, not the host's table
      assert.are.same({ k = { 1, 2 } }, kept)
      assert.are.equal("host says no", s.state.caught)
      assert.are.same({ a = 1 }, host_t)
      rt:update(0.5) -- and from update
      assert.are.same({ n = 2, "frame", 0.5 }, got)
      assert.are.equal("running", info(rt, path).status, info(rt, path).error)
    end)

    it("refuses to hand a script's function (or coroutine) to a host function", function()
      local called = false
      local scene = { take = function() called = true end }
      local args = { "function() end", "print", "coroutine.create(function() end)", "{ f = function() end }" }
      for i, arg in ipairs(args) do
        local path = script("f" .. i .. ".lua", "function update()\nscene.take(" .. arg .. ")\nend\n")
        local rt = new{ scene = scene, scripts = { path } }
        rt:update(0)
        local s = info(rt, path)
        assert.are.equal("paused", s.status, arg)
        local what = arg:find("coroutine", 1, true) and "thread" or "function"
        local want = "scene function: " .. what .. " of the script's cannot be handed to the host"
        assert.is_truthy(s.error:find(want, 1, true), s.error)
      end
      assert.is_false(called)
    end)

    it("cuts a host function's error text to 4096 bytes for the script", function()
      local scene = { fail = function() error(string.rep("z", 1e5), 0) end }
      local s = top("state.len = #select(2, pcall(scene.fail))", scene)
      assert.are.equal("running", s.status, s.error)
      assert.are.equal(4096, s.state.len)
    end)

    it("copies a script's state out as plain data, when it is read", function()
      local path = script("s.lua", [[
state.list = { 1, "two", true, { 3 } }
state.cycle = {}
state.cycle.self = state.cycle
state.v = ik.vec3(1, 2, 3)
state.q = ik.quat.identity()
state.chain = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 } } }
state.node = ik.node{}
state.host_node = scene.node
state.f = print
state.co = coroutine.create(function() end)
state[{}] = "a table key"
state.mt = setmetatable({ x = 1 }, { __index = function() return "from __index" end })
function update() state.frames = (state.frames or 0) + 1 end
]])
      local host_node = ik.node{}
      local rt = new{ scene = { node = host_node }, scripts = { path } }
      local st = state(rt, path)
      assert.are.same({ 1, "two", true, { 3 } }, st.list)
      assert.is_true(rawequal(st.cycle.self, st.cycle))
      assert.are.same({ 1, 2, 3 }, { st.v.x, st.v.y, st.v.z })
      assert.are.equal(1, st.q.w)
      assert.are.equal("ik.chain", st.chain)
      assert.are.equal("ik.node", st.node)
      assert.is_true(rawequal(host_node, st.host_node)) -- what came from the host goes back as its own
      assert.are.equal("function", st.f)
      assert.are.equal("thread", st.co)
      assert.is_nil(getmetatable(st.mt)) -- read raw, no metamethod of the script's runs
      assert.are.equal(1, st.mt.x)
      assert.is_nil(st.mt.y)
      local table_keys = 0
      for k in pairs(st) do
        if type(k) == "table" then table_keys = table_keys + 1 end
      end
      assert.are.equal(1, table_keys)
      st.list[1] = "changed by the host"
      rt:update(0)
      local again = state(rt, path)
      assert.are.equal(1, again.list[1]) -- the host's copy is not the script's state
      assert.are.equal(1, again.frames)
      assert.is_nil(st.frames) -- nor does a copy follow the script
      assert.is_false(rawequal(st, again))
    end)

    it("keeps the host's globals, string metatable and modules out of the scripts' reach", function()
      local string_meta, vec3 = debug.getmetatable(""), ik.vec3
      local s = top([[
x_global = 1
_G.print = nil
string.upper = nil
ik.vec3 = nil
state.g = type(_G.print)
]])
      assert.are.equal("running", s.status, s.error)
      assert.are.equal("nil", s.state.g) -- the script's own globals changed
      assert.is_nil(rawget(_G, "x_global"))
      assert.are.equal("function", type(print))
      assert.are.equal("ABC", ("abc"):upper())
      assert.are.equal(vec3, ik.vec3)
      assert.are.equal(string_meta, debug.getmetatable(""))
      assert.are.equal(string, string_meta.__index)
    end)
  end)

  describe("sandbox", function()
    -- Runs text as a script's top level; returns the script's info.
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

    -- The state of a script whose top level is text (asserted running).
    local function top_state(text, scene)
      local s = run_top(text, scene)
      assert.are.equal("running", s.status, s.error)
      return s.state
    end

    it("has no os.execute, only os.clock", function()
      fails("os.execute('true')", "attempt to call")
      fails("os.getenv('HOME')", "attempt to call")
      fails("os.remove('x')", "attempt to call")
      assert.are.equal("number", top_state("state.clock = type(os.clock())").clock)
    end)

    it("has no io", function()
      fails("io.open('/etc/passwd')", "attempt to index")
      fails("io.write('x')", "attempt to index")
    end)

    it("has no debug", function()
      fails("debug.sethook()", "attempt to index")
      fails("debug.getregistry()", "attempt to index")
    end)

    it("has no package, so no package.loadlib", function()
      fails("package.loadlib('libc.so.6', 'system')", "attempt to index")
      local st = top_state("state.t = { type(package), type(setfenv), type(getfenv), type(newproxy) }")
      assert.are.same({ "nil", "nil", "nil", "nil" }, st.t)
    end)

    it("has no string.dump, by name or as a string method", function()
      fails("string.dump(function() end)", "attempt to call")
      fails("local d = ('').dump; d(function() end)", "attempt to call")
      assert.are.equal("function", type(string.dump)) -- the host's is intact
      assert.are.equal("function", type(("").dump))
    end)

    it("does not load binary chunks, with load, loadstring, loadfile or dofile", function()
      local scene = { bytecode = string.dump(function() return 42 end) }
      local st = top_state([[
local f, err = load(scene.bytecode)
state.load = { f == nil, err }
state.text = load("return 1 + 1")()
if loadstring then state.loadstring = loadstring(scene.bytecode) == nil end
state.loadfile = { loadfile("bin.luac") }
]], scene)
      assert.are.same({ true, "attempt to load a binary chunk (mode is 't')" }, st.load)
      assert.are.equal(2, st.text)
      if loadstring then assert.is_true(st.loadstring) end
      local f = assert(io.open(dir .. "/bin.luac", "wb"))
      f:write(scene.bytecode)
      f:close()
      fails("assert(loadfile('bin.luac'))", "attempt to load a binary chunk")
      fails("dofile('bin.luac')", "binary chunk")
    end)

    it("runs loaded text chunks in the sandbox", function()
      fails("load('os.exit(1)')()", "attempt to call")
      fails("load('return io')().open('/etc/passwd')", "attempt to index")
      assert.are.equal(5, top_state("state.v = load('return x', 'c', 't', { x = 5 })()").v)
    end)

    it("limits dofile, loadfile and require to the script's folder, whatever string functions do", function()
      fails("dofile('/etc/passwd')", "/etc/passwd: rig scripts can only load files of their own folder")
      fails("dofile('../x.lua')", "own folder")
      fails("dofile('a/../../x.lua')", "own folder")
      fails("assert(loadfile('/etc/passwd'))", "own folder")
      fails("dofile('x\\0/../../../etc/passwd')", "own folder")
      fails("string.find, string.byte, string.match, string.gsub, string.sub = nil, nil, nil, nil, nil\n"
        .. "local mt = getmetatable('')\n"
        .. "assert(loadfile('../../../../etc/passwd'))", "own folder")
      fails("require('..x')", "not available to rig scripts")
      fails("require('/etc/passwd')", "not available to rig scripts")
      write(dir .. "/helper.lua", "return 40 + 2")
      assert.are.equal(42, top_state("state.v = select(-1, dofile('helper.lua'))").v)
      assert.are.equal(42, top_state("state.v = loadfile('helper.lua')()").v)
    end)

    it("gives dofile's results, and only them", function()
        write(dir .. "/two.lua", "return 40 + 2, 'two'")
        assert.are.same({ 42, "two" }, top_state("state.r = { dofile('two.lua') }").r)
      end)

    it("gives strings the sandbox's own methods: a script's string table changes no method", function()
      local st = top_state([[
string.upper = function() return "pwned" end
function string.shout(s) return s .. "!" end
state.upper = ("a"):upper()
state.shout = type(("x").shout)
state.mine = string.shout("hi")
getmetatable("").__index = function() return "pwned" end -- a copy of the metatable
state.method = ("a"):upper()
]])
      assert.are.equal("A", st.upper)
      assert.are.equal("nil", st.shout)
      assert.are.equal("hi!", st.mine)
      assert.are.equal("A", st.method)
      -- and nothing of it reached the host
      assert.are.equal("A", ("a"):upper())
      assert.is_nil(rawget(string, "shout"))
      assert.is_nil(("x").shout)
      assert.are.equal(string, getmetatable("").__index)
      assert.is_nil(getmetatable("").__len)
      fails("getmetatable('').__newfield = 1", "attempt to change a protected metatable")
      fails("setmetatable(getmetatable(''), {})", "cannot change a protected metatable")
    end)

    it("keeps ik objects' metatables and the ik table of the host away from scripts", function()
      local v = ik.vec3(1, 2, 3)
      local scene = { v = v, node = ik.node{} }
      local mt, node_mt = getmetatable(v), getmetatable(scene.node)
      local index, tostr = mt.__index, mt.__tostring
      local st = top_state([[
local mt = getmetatable(scene.v)
state.name = mt.__name
mt.__index = function() return "pwned" end
mt.__tostring = function() return "pwned" end
state.y = scene.v.y
getmetatable(ik.vec3).__call = nil
ik.vec3 = nil
ik.quat.identity = nil
state.watch, state.sandbox = type(ik.watch), type(ik.sandbox)
]], scene)
      assert.are.equal("ik.vec3", st.name)
      assert.are.equal(2, st.y) -- a copy of the metatable: changing it changes nothing
      assert.are.same({ "nil", "nil" }, { st.watch, st.sandbox })
      assert.are.equal(index, mt.__index)
      assert.are.equal(tostr, mt.__tostring)
      assert.are.equal(node_mt, getmetatable(scene.node))
      assert.are.equal(2, v.y)
      assert.are.equal("function", type(getmetatable(ik.vec3).__call))
      assert.are.equal("function", type(ik.quat.identity))
      fails("getmetatable(scene.v).__newfield = 1", "attempt to change a protected metatable", scene)
      fails("getmetatable(scene.node).__gc(scene.node)", "attempt to call", scene)
      fails("ik.watch()", "attempt to call")
      fails("ik.import('/etc/passwd')", "attempt to call")
      fails("ik.import_string('{}', { base_dir = '/etc' })", "attempt to call")
    end)

    it("refuses __gc metamethods", function()
      fails("setmetatable({}, { __gc = function() while true do end end })",
        "setmetatable: __gc is not available to rig scripts")
    end)

    it("allows collectgarbage('count') only", function()
      assert.are.equal("number", type(top_state("state.kb = collectgarbage('count')").kb))
      fails("collectgarbage()", "collectgarbage: only collectgarbage(\"count\") is available to rig scripts")
      fails("collectgarbage('stop')", "collectgarbage")
    end)

    it("requires files of the script's folder (same sandbox) and ik modules, not os or io", function()
      write(dir .. "/helper.lua", "return { io = io, add = function(a, b) return a + b end, ik = ik }")
      local st = top_state([[
local helper = require("helper")
state.sum = helper.add(1, 2)
state.io = helper.io
state.same = require("helper") == helper
state.ik = require("ik") == ik and helper.ik == ik
state.vec = require("ik.core").vec3(1, 2, 3).z
state.string = require("string") == string
]])
      assert.are.equal(3, st.sum)
      assert.is_nil(st.io)
      assert.is_true(st.same)
      assert.is_true(st.ik)
      assert.are.equal(3, st.vec)
      assert.is_true(st.string) -- the script's own libraries
      fails("require('os')", "module 'os' is not available to rig scripts")
      fails("require('package')", "module 'package' is not available to rig scripts")
      fails("require('io')", "not available to rig scripts")
      fails("require('debug')", "not available to rig scripts")
      fails("require('ffi')", "module 'ffi'")
      fails("require('ik.runtime')", "not available to rig scripts")
      fails("require('ik.runtime.sandbox')", "not available to rig scripts")
      fails("require('missing')", "module 'missing' not found")
    end)

    it("loads ik Lua modules inside the sandbox", function()
      assert.are.equal("function", top_state("state.set = type(require('ik.rigs').set)").set)
    end)

    it("does not reach the host's package.preload (an ik module a host embeds there)", function()
      local module = { answer = 42 }
      package.preload["ik.embedded_test"] = function() return module end
      local s = run_top([[
local ok, m = pcall(require, "ik.embedded_test")
state.found = ok
if ok then m.answer = 0 end
]])
      package.preload["ik.embedded_test"] = nil
      package.loaded["ik.embedded_test"] = nil
      assert.are.equal("running", s.status, s.error)
      assert.is_false(s.state.found)
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
      assert.are.equal(rh.at(rh.yield_outside(1), path), info(rt, path).error)
    end)

    it("runs script coroutines", function()
      local st = top_state([[
local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
state.v = gen() + gen() + gen()
local co = coroutine.create(function() error("inner") end)
state.ok, state.err = coroutine.resume(co)
]])
      assert.are.equal(6, st.v)
      assert.is_false(st.ok)
      assert.is_truthy(st.err:find("inner", 1, true))
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
      local path = script("s.lua", counter())
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
      local scene = { trace = ik.node{} }
      local path = script("s.lua", tracer(1))
      local rt = new{ scene = scene, scripts = { path }, watch = true }
      rt:close()
      rt:update(0)
      assert.are.equal(0, trace_of(scene))
      assert.are.equal(1, #rt:scripts())
      assert.are.same({}, rt:scripts()[1].state)
      assert.are.equal("load", kinds(rt:events()))
      assert.has_error(function() rt:reload(path) end, "ik.runtime: reload: the runtime is closed")
      assert.is_truthy(tostring(rt):find("closed", 1, true))
    end)
  end)
end)
