-- The script-fault matrix: every way a rig script can go wrong or misbehave, each run
-- through ik.runtime next to a healthy script. For every row (one table, FAULTS, makes
-- them all):
--
--   1. the script runs a good version for a few frames, then is saved with the fault;
--   2. the fault is reported exactly once (event kind and message), however many
--      frames follow, or not at all when the sandbox makes it harmless (kind = false);
--   3. the healthy script keeps updating every frame, its state intact, with no event;
--   4. the host's objects are as they were: the scene and what is in it (its nested
--      tables by content), the ik module and its metatables, strings' metatable, _G,
--      package.loaded, the hook, the GC;
--   5. fixed (saved again), the script reloads and runs on with the state it had.
--
-- Each script runs in a Lua state of its own: its state is read as a copy
-- (`rt:scripts()[i].state`), read again after frames, and compared by content.
--
-- A row's fault is `update` (the body of update(dt): line 2 of the file), `top` (its top
-- level: line 1) or `text` (the whole file). Its `message` is the whole message, "@"
-- standing for the script's path, or without "@" a part of it (where a stack overflow
-- or a coroutine's budget is noticed depends on the Lua); a function gives the message
-- for the Lua running the specs (called with the script's path).
local ik = require("ik")
local runtime = require("ik.runtime")

local rh = require("runtime_helper")
local tmp = require("tmp_helper")

local HAS_CLOSE = _VERSION == "Lua 5.4"
local BUDGET = 1e5
local MEMORY = 8e6
local FAULT_FRAMES = 6

local nil_index, nil_call = rh.nil_index, rh.nil_call

local BUDGET_MSG = ("instruction budget exceeded (%d)"):format(BUDGET)
local MEMORY_MSG = ("memory limit exceeded (%d bytes)"):format(MEMORY)
local CLOSE_MSG = rh.CLOSE_MSG
local PROTECTED = "attempt to change a protected metatable"
local FOLDER_ONLY = "rig scripts can only load files of their own folder"

-- kind: "error" (a version that failed to load: the last good one runs on), "paused"
-- (update failed: the script stops until fixed) or false (harmless: nothing reported).
local FAULTS = {
  { name = "syntax error", text = "function update(dt)\n  state.n = state.n +\nend\n", kind = "error",
    message = "@:3: unexpected symbol near 'end'" },
  { name = "runtime error in update", update = "error('boom')", kind = "paused", message = "@:2: boom" },
  { name = "indexing nil in update", update = "local t = nil; t.x = 1", kind = "paused",
    message = function() return "@:2: " .. nil_index("local", "t") end },
  { name = "runtime error in the top level", top = "error('top')", kind = "error", message = "@:1: top" },
  { name = "error in on_reload",
    text = "function update() end\nfunction on_reload() error('no reload') end\n",
    kind = "error", message = "@:2: no reload" },
  { name = "no update", text = "local x = 1\n", kind = "error",
    message = "@: the script defines no function update(dt)" },
  { name = "infinite loop in update", update = "while true do end", kind = "paused",
    message = "@:2: " .. BUDGET_MSG },
  { name = "infinite loop in the top level", top = "while true do end", kind = "error",
    message = "@:1: " .. BUDGET_MSG },
  { name = "infinite loop under pcall", update = "while true do pcall(function() while true do end end) end",
    kind = "paused", message = "@:2: " .. BUDGET_MSG },
  { name = "infinite loop in an xpcall whose handler loops too",
    update = "xpcall(function() while true do end end, function() while true do end end)",
    kind = "paused", message = "@:2: " .. BUDGET_MSG },
  { name = "a spent budget ignored by pcall, then more work",
    update = "for _ = 1, 100 do pcall(function() while true do end end) end state.after = true",
    kind = "paused", message = "@:2: " .. BUDGET_MSG },
  { name = "infinite loop in a coroutine under pcall",
    update = "pcall(coroutine.wrap(function() while true do end end))", kind = "paused",
    message = BUDGET_MSG },
  { name = "a backtracking pattern on 20 kB", update = "local s = ('a'):rep(2e4) s:find('.-.-.-.-.-b')",
    kind = "paused", message = "@:2: " .. BUDGET_MSG },
  { name = "a backtracking pattern through string.match under pcall",
    update = "pcall(string.match, ('a'):rep(2e4), '.-.-.-.-.-b') state.after = true",
    kind = "paused", message = "@:2: " .. BUDGET_MSG },
  { name = "a backtracking gsub and gmatch",
    update = "local s = ('a'):rep(2e4) for _ in s:gmatch('.-.-.-b') do end s:gsub('(.-)(.-)(.-)x', '%1')",
    kind = "paused", message = "@:2: " .. BUDGET_MSG },
  { name = "deep recursion",
    text = "local function f(n) return 1 + f(n + 1) end\nfunction update() f(1) end\n",
    kind = "paused", budget = 1e9, memory_limit = false, message = "stack overflow" },
  { name = "deep recursion through a metamethod", kind = "paused", message = "stack overflow",
    update = "local t = setmetatable({}, {}); getmetatable(t).__index = function(s, k) return s[k] end; "
      .. "return t.x" },
  { name = "memory bomb", update = "local t = {} for i = 1, 1e9 do t[i] = { i } end", kind = "paused",
    budget = 1e9, message = MEMORY_MSG },
  { name = "memory grown over frames, each call below the limit",
    update = "state.kept = state.kept or {} local t = {} for i = 1, 2e5 do t[i] = i end "
      .. "state.kept[#state.kept + 1] = t",
    kind = "paused", budget = 1e9, message = MEMORY_MSG },
  { name = "string.rep of a huge string", update = "state.s = string.rep('x', 2^40)", kind = "paused",
    message = "@:2: " .. MEMORY_MSG },
  { name = "a huge string.rep as a method", update = "state.s = ('x'):rep(1e12, ',')", kind = "paused",
    message = "@:2: " .. MEMORY_MSG },
  { name = "a huge error message", update = "error(string.rep('x', 1e6))", kind = "paused", budget = 1e9,
    message = function(path)
      local head = path .. ":2: "
      return head .. ("x"):rep(4096 - #head) .. "... (cut)"
    end },
  { name = "coroutine that never ends", update = "coroutine.wrap(function() while true do end end)()",
    kind = "paused", message = BUDGET_MSG },
  { name = "coroutines resumed forever", update = "while true do coroutine.resume(coroutine.create("
      .. "function() coroutine.yield() end)) end", kind = "paused", message = BUDGET_MSG },
  { name = "os.execute", update = "os.execute('touch pwned')", kind = "paused",
    message = function() return "@:2: " .. nil_call("field", "execute") end },
  { name = "io", update = "io.open('/etc/passwd')", kind = "paused",
    message = function() return "@:2: " .. nil_index("global", "io") end },
  { name = "debug", update = "debug.sethook()", kind = "paused",
    message = function() return "@:2: " .. nil_index("global", "debug") end },
  { name = "load of a binary chunk", update = "assert(load(scene.bytecode))", kind = "paused",
    message = "@:2: attempt to load a binary chunk (mode is 't')" },
  { name = "string.dump", update = "string.dump(update)", kind = "paused",
    message = function() return "@:2: " .. nil_call("field", "dump") end },
  { name = "string.dump as a method", update = "('x').dump(update)", kind = "paused",
    message = function() return "@:2: " .. nil_call("field", "dump") end },
  { name = "package.loadlib", update = "package.loadlib('libc.so.6', 'system')", kind = "paused",
    message = function() return "@:2: " .. nil_index("global", "package") end },
  { name = "require of a C library", update = "require('os')", kind = "paused",
    message = "@:2: module 'os' is not available to rig scripts (they can require the ik modules and files "
      .. "of their own folder)" },
  { name = "require of io", update = "require('io')", kind = "paused",
    message = "@:2: module 'io' is not available to rig scripts (they can require the ik modules and files "
      .. "of their own folder)" },
  { name = "require of a path", update = "require('../../etc/passwd')", kind = "paused",
    message = "@:2: module '../../etc/passwd' is not available to rig scripts (they can require the ik "
      .. "modules and files of their own folder)" },
  { name = "loadfile outside the folder, the string functions replaced",
    update = "string.find, string.byte, string.match, string.gsub, string.sub = nil, nil, nil, nil, nil; "
      .. "assert(loadfile('../../../../etc/passwd'))",
    kind = "paused", message = "@:2: ../../../../etc/passwd: " .. FOLDER_ONLY },
  { name = "dofile of a path with a NUL in it", update = "dofile('x\\0/../../../../etc/passwd')",
    kind = "paused", message = "@:2: x: " .. FOLDER_ONLY },
  { name = "dofile of an absolute path", update = "dofile('/etc/passwd')", kind = "paused",
    message = "@:2: /etc/passwd: " .. FOLDER_ONLY },
  -- getmetatable gives read-only copies of the metatables of strings and userdata:
  -- changed, they change nothing else (the string table behind strings' methods is the
  -- script state's own); new fields are refused.
  { name = "strings' metatable changed", update = "getmetatable('').__index = {}", kind = false },
  { name = "strings' methods changed", update = "getmetatable('').__index.upper = print", kind = false },
  { name = "a field added to strings' metatable", update = "getmetatable('').__call = print", kind = "paused",
    message = "@:2: " .. PROTECTED },
  { name = "strings' methods replaced in its own string table",
    update = "string.upper = function() return 'pwned' end; string.format = nil", kind = false },
  { name = "an ik object's metatable changed", update = "getmetatable(ik.vec3(0, 0, 0)).__add = print",
    kind = false },
  { name = "a host skeleton's methods changed",
    update = "getmetatable(scene.skeletons.arm).__index = function() error('pwned') end", kind = false },
  { name = "a field added to an ik object's metatable", update = "getmetatable(scene.target).__call = print",
    kind = "paused", message = "@:2: " .. PROTECTED },
  { name = "setmetatable on a metatable of ik", update = "setmetatable(getmetatable(scene.target), {})",
    kind = "paused", message = "@:2: cannot change a protected metatable" },
  { name = "collectgarbage('stop')", update = "collectgarbage('stop')", kind = "paused",
    message = "@:2: collectgarbage: only collectgarbage(\"count\") is available to rig scripts" },
  { name = "collectgarbage() every frame", update = "collectgarbage()", kind = "paused",
    message = "@:2: collectgarbage: only collectgarbage(\"count\") is available to rig scripts" },
  { name = "an error object that is a table", update = "error({ code = 1 })", kind = "paused",
    message = "@: (error object is a table value)" },
  { name = "an error object that is nil", update = "error(nil)", kind = "paused",
    message = "@: (error object is a nil value)" },
  { name = "an error object whose __tostring fails",
    update = "error(setmetatable({}, { __tostring = function() error('in tostring') end }))", kind = "paused",
    message = "@: (error object is a table value)" },
  { name = "an error object whose __tostring loops",
    update = "error(setmetatable({}, { __tostring = function() while true do end end }))", kind = "paused",
    message = "@: (error object is a table value)" },
  { name = "error() in __gc of its own object",
    update = "setmetatable({}, { __gc = function() error('in gc') end })", kind = "paused",
    message = "@:2: setmetatable: __gc is not available to rig scripts" },
  { name = "a script that requires itself", top = "require('bad')", kind = "error",
    message = "@:1: loop or previous error loading module 'bad'" },
  { name = "yield across the top level", top = "coroutine.yield('out')", kind = "error",
    message = function() return rh.yield_outside(1) end },
  { name = "yield across update", update = "coroutine.yield('out')", kind = "paused",
    message = function() return rh.yield_outside(2) end },
  { name = "setmetatable(_G) that raises", text = "setmetatable(_G, { __index = function(_, k) "
      .. "error('no global ' .. k, 2) end })\nfunction update() return undefined_name end\n", kind = "paused",
    message = "@:2: no global undefined_name" },
  { name = "setmetatable(_G) that swallows update",
    text = "setmetatable(_G, { __newindex = function() end })\nfunction update() end\n", kind = "error",
    message = "@: the script defines no function update(dt)" },
  { name = "update replaced by a value that is not a function",
    text = "function update() update = setmetatable({}, { __call = function() end }) end\n", kind = "paused",
    message = "@: update is no longer a function" },
  { name = "scene rebound", text = "scene = nil\nfunction update() scene.x = 1 end\n", kind = "paused",
    message = function() return "@:2: " .. nil_index("global", "scene") end },
  { name = "setmetatable on the scene",
    update = "setmetatable(scene, { __index = function() error('x') end })",
    kind = "paused", message = "@:2: cannot change a protected metatable" },
  { name = "a scene field replaced", update = "scene.target = ik.node{}", kind = "paused",
    message = "@:2: " .. rh.READ_ONLY },
  { name = "scene.advance replaced", update = "scene.advance = function() while true do end end",
    kind = "paused", message = "@:2: " .. rh.READ_ONLY },
  { name = "a field added to the scene in the top level", top = "scene.extra = {}", kind = "error",
    message = "@:1: " .. rh.READ_ONLY },
  { name = "the scene's nested tables written",
    update = "scene.skeletons.arm = nil; scene.skeletons.leg = 1; scene.config.speed = 1e9; "
      .. "scene.config.list[1] = 'x'; scene.config.list[4] = 4", kind = false },
  { name = "ik functions replaced for the others",
    update = "require('ik.rigs').set = nil; require('ik').quat = nil; ik.vec3 = nil; "
      .. "ik.chain = function() error('hijacked') end", kind = false },
  { name = "a report flood", update = "for i = 1, 2000 do scene.report('c' .. i, true) end", kind = "paused",
    message = "@:2: scene.report: more than 1024 reports in one call" },
  { name = "a report with a long name", update = "scene.report(string.rep('n', 300), true)", kind = "paused",
    message = "@:2: scene.report: chain name of at most 256 bytes expected, got 300 bytes" },
  { name = "a report of something not a chain", update = "scene.report('c', true, 0, 0, scene.target)",
    kind = "paused", message = "@:2: scene.report: chain (ik.chain) expected, got ik.node" },
  { name = "a script's function handed to a host function", update = "scene.hint(function() end)",
    kind = "paused", message = rh.FUNCTION_OUT },
  { name = "a host function that raises, uncaught", update = "scene.refuse()", kind = "paused",
    message = "@: no, says the host" },
  { name = "the host's skeleton closed", update = "scene.skeletons.arm:close()", kind = "paused",
    message = "@:2: " .. CLOSE_MSG },
  { name = "the host's node closed", update = "scene.target:close()", kind = "paused",
    message = "@:2: " .. CLOSE_MSG },
  { name = "the host's ground closed", update = "scene.ground:close()", kind = "paused",
    message = "@:2: " .. CLOSE_MSG },
  { name = "the host's node given a parent", update = "scene.target:set_parent(ik.node{})", kind = "paused",
    message = "@:2: " .. rh.PARENT_MSG },
  { name = "the host's node detached", update = "scene.target:set_parent(nil)", kind = "paused",
    message = "@:2: " .. rh.PARENT_MSG },
  { name = "the host's skeleton closed through __gc",
    update = "getmetatable(scene.skeletons.arm).__gc(scene.skeletons.arm)", kind = "paused",
    message = function() return "@:2: " .. nil_call("field", "__gc") end },
  { name = "the host's skeleton closed through __close",
    update = "getmetatable(scene.skeletons.arm).__close(scene.skeletons.arm)", kind = "paused",
    message = "@:2: " .. CLOSE_MSG },
}
if HAS_CLOSE then -- a to-be-closed variable calls the real metatable's __close
  FAULTS[#FAULTS + 1] = { name = "the host's skeleton as a to-be-closed variable",
    update = "local sk <close> = scene.skeletons.arm", kind = "paused", message = "@:3: " .. CLOSE_MSG }
end

-- The script's first version and its fixed one: counts its frames in state.n.
local GOOD_V1 = "state.n = state.n or 0\nfunction update() state.n = state.n + 1 end\n"
local GOOD_V2 = "state.n = state.n or 0\nstate.fixed = true\nfunction update() state.n = state.n + 1 end\n"

-- The healthy script: its own chain (made once: state.made counts), strings' methods,
-- the module, the host's skeleton (a view) and a nested table of the scene.
local HEALTHY = [[
state.n = state.n or 0
if not state.chain then
  state.chain = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } } }
  state.made = (state.made or 0) + 1
end
function update(dt)
  state.n = state.n + 1
  state.reached = state.chain:solve(ik.vec3(1, 1, 0))
  state.label = ("%s-%d"):format("good", state.n):upper()
  state.hand = ik.vec3(scene.skeletons.arm:bone("hand"):get_position()).x
  state.rigs = type(require("ik.rigs").set)
  state.quat = ik.quat.identity().w
  state.speed = scene.config.speed
  state.list = #scene.config.list
end
]]

local function fault_text(row)
  if row.text then return row.text end
  if row.top then return row.top .. "\nfunction update() end\n" end
  return "function update()\n" .. row.update .. "\nend\n"
end

-- The message expected, and whether it is the whole message (else a fragment of it:
-- where a stack overflow happens depends on the Lua).
local function expected_message(row, path)
  local m = row.message
  if type(m) == "function" then m = m(path) end
  local whole = m:find("@", 1, true) ~= nil
  return rh.at(m, path), whole
end

-- ---- the host's objects, as values that compare ----

local function keys_and_values(t)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  return out
end

-- A deep copy of plain tables, so that a change made in place shows.
local function contents(t)
  if type(t) ~= "table" then return t end
  local out = {}
  for k, v in pairs(t) do out[k] = contents(v) end
  return out
end

local function ik_metatables()
  local out = {}
  for name, mt in pairs(debug.getregistry()) do
    if type(name) == "string" and name:sub(1, 3) == "ik." and type(mt) == "table" then
      out[name] = keys_and_values(mt)
      local index = mt.__index
      if type(index) == "function" then
        local _, methods = debug.getupvalue(index, 1)
        if type(methods) == "table" then out[name .. " methods"] = keys_and_values(methods) end
      end
    end
  end
  return out
end

local function pose_of(sk)
  local out = {}
  for _, b in ipairs(sk:bones()) do
    local p, q = b:get_position(), b:get_rotation()
    out[b.name] = { p.x, p.y, p.z, q.x, q.y, q.z, q.w }
  end
  return out
end

local function host_snapshot(scene)
  local target = scene.target:get_position()
  local hit = { scene.ground:raycast({ 0, 5, 0 }, { 0, -1, 0 }, 10) }
  local string_meta = debug.getmetatable("")
  return {
    scene = keys_and_values(scene),
    skeletons = keys_and_values(scene.skeletons),
    config = contents(scene.config),
    skeleton = tostring(scene.skeletons.arm),
    pose = pose_of(scene.skeletons.arm),
    target = { tostring(scene.target), target.x, target.y, target.z, scene.target.parent },
    ground = { tostring(scene.ground), hit[1], type(hit[2]) },
    scene_meta = debug.getmetatable(scene) or "none",
    ik = keys_and_values(ik),
    ik_meta = ik_metatables(),
    string_meta = string_meta,
    string_meta_fields = keys_and_values(string_meta),
    string = keys_and_values(string),
    upper = ("abc"):upper(),
    globals = keys_and_values(_G),
    loaded = keys_and_values(package.loaded),
    hook = { debug.gethook() },
    gc = { pcall(collectgarbage, "isrunning") }, -- 5.1 cannot tell
  }
end

-- The host's scene; calls counts what the scene's functions were called with.
local function new_scene(calls)
  local sk = ik.skeleton{
    { name = "shoulder", position = { 0, 1.5, 0 } },
    { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0 } },
    { name = "hand", parent = "elbow", position = { 0.25, 0, 0 } },
  }
  calls = calls or {}
  local function count(name) calls[name] = (calls[name] or 0) + 1 end
  return {
    skeletons = { arm = sk },
    target = ik.node{ position = { 0.4, 1.2, 0.1 } },
    ground = ik.ground.plane{ point = { 0, 0, 0 }, normal = { 0, 1, 0 } },
    bytecode = string.dump(function() return 42 end),
    config = { speed = 2, list = { 1, 2, 3 } },
    advance = function() count("advance") end,
    report = function() count("report") end,
    hint = function() count("hint") end,
    refuse = function() count("refuse") error("no, says the host", 0) end,
  }
end

describe("script faults (ik.runtime)", function()
  local dir, rts

  before_each(function()
    dir = tmp.mkdir()
    rts = {}
  end)

  after_each(function()
    for _, rt in ipairs(rts) do rt:close() end
    tmp.rmtree(dir)
  end)

  -- The matrix's protocol for one row; returns nothing, asserts everything.
  local function run_row(row)
    local bad, good = dir .. "/bad.lua", dir .. "/good.lua"
    tmp.write(bad, GOOD_V1)
    tmp.write(good, HEALTHY)
    local calls = {}
    local scene = new_scene(calls)
    local events = {}
    local memory_limit = MEMORY
    if row.memory_limit ~= nil then memory_limit = row.memory_limit end
    local rt = runtime.new{ scene = scene, scripts = { bad, good }, watch = false,
                            budget = row.budget or BUDGET, memory_limit = memory_limit,
                            clock = function() return 0 end,
                            on_event = function(ev) events[#events + 1] = ev end }
    rts[#rts + 1] = rt
    -- A script's state (a copy, read now) and its entry.
    local function state_of(path)
      for _, s in ipairs(rt:scripts()) do
        if s.path == path then return s.state, s end
      end
    end
    for _ = 1, 3 do rt:update(1 / 60) end
    assert.are.same({ 3, 3 }, { state_of(bad).n, state_of(good).n })
    local before = host_snapshot(scene)
    rt:events()
    events = {}

    -- the fault, then frames
    tmp.write(bad, fault_text(row))
    local loaded = rt:reload(bad)
    assert.are.equal(row.kind ~= "error", loaded, "reload's result")
    for _ = 1, FAULT_FRAMES do rt:update(1 / 60) end

    local mine, others = {}, {}
    for _, ev in ipairs(events) do
      if ev.script == bad then mine[#mine + 1] = ev else others[#others + 1] = ev end
    end
    assert.are.same({}, others)
    local bad_state, info = state_of(bad)
    if row.kind == false then
      assert.are.same({ "reload" }, { mine[1] and mine[1].kind, mine[2] and mine[2].kind })
      assert.are.equal("running", info.status)
    else
      local reload = row.kind == "paused" and 1 or 0 -- it loaded, then update failed
      assert.are.equal(1 + reload, #mine, "events: " .. #mine)
      if reload == 1 then assert.are.equal("reload", mine[1].kind) end
      local ev = mine[1 + reload]
      assert.are.equal(row.kind, ev.kind)
      local want, whole = expected_message(row, bad)
      if whole then
        assert.are.equal(want, ev.message)
      else
        assert.is_truthy(ev.message:find(want, 1, true), ev.message)
      end
      assert.is_true(#ev.message <= 4096 + #"... (cut)", "message of " .. #ev.message .. " bytes")
      assert.are.equal(row.kind == "paused" and "paused" or "running", info.status)
      assert.are.equal(ev.message, info.error)
    end
    -- the last good version runs on after a failed load; a paused script stops
    assert.are.equal(row.kind == "error" and 3 + FAULT_FRAMES or 3, bad_state.n)
    assert.is_nil(bad_state.after) -- past a spent budget, nothing of the script ran

    -- the healthy script went on, state intact
    local good_state, good_info = state_of(good)
    assert.are.equal("running", good_info.status)
    assert.are.equal(3 + FAULT_FRAMES, good_state.n)
    assert.are.equal(1, good_state.made) -- its chain is the one it made first
    assert.are.equal("ik.chain", good_state.chain)
    assert.is_true(good_state.reached)
    assert.are.equal(("GOOD-%d"):format(good_state.n), good_state.label)
    assert.are.equal("function", good_state.rigs)
    assert.are.equal(1, good_state.quat)
    assert.is_true(math.abs(good_state.hand - 0.55) < 1e-6, tostring(good_state.hand)) -- a float build's vec3
    assert.are.same({ 2, 3 }, { good_state.speed, good_state.list }) -- its copy of the scene is its own

    -- the host's objects
    assert.are.same(before, host_snapshot(scene))
    assert.is_nil(calls.advance) -- the host's frame step is not the scripts'
    assert.is_nil(calls.hint) -- a call refused is not made

    -- fixed: it comes back, with its state
    local n = bad_state.n
    tmp.write(bad, GOOD_V2)
    events = {}
    assert.is_true(rt:reload(bad))
    for _ = 1, 2 do rt:update(1 / 60) end
    local back = {}
    for _, ev in ipairs(events) do back[#back + 1] = ev.kind end
    assert.are.equal(row.kind == "paused" and "reload resumed" or "reload", table.concat(back, " "))
    local fixed, fixed_info = state_of(bad)
    assert.are.equal("running", fixed_info.status)
    assert.is_nil(fixed_info.error)
    assert.is_true(fixed.fixed)
    assert.are.equal(n + 2, fixed.n) -- the same state, counting on
    assert.are.equal(3 + FAULT_FRAMES + 2, state_of(good).n)
  end

  for _, row in ipairs(FAULTS) do
    it("contains " .. row.name, function() run_row(row) end)
  end

  it("has one row per fault, each named once", function()
    local seen = {}
    for _, row in ipairs(FAULTS) do
      assert.is_nil(seen[row.name], row.name)
      seen[row.name] = true
      assert.is_true(row.kind == false or type(row.message) == "string" or type(row.message) == "function")
      assert.is_true((row.update and 1 or 0) + (row.top and 1 or 0) + (row.text and 1 or 0) == 1, row.name)
    end
    assert.is_true(#FAULTS >= 77, tostring(#FAULTS))
  end)

  it("lets a script close what it made itself", function()
    local path = dir .. "/own.lua"
    tmp.write(path, [[
local sk = ik.skeleton{ { name = "root" } }
local node = ik.node{}
local child = ik.node{}
child:set_parent(node)
sk:close()
node:close()
state.closed = tostring(sk)
function update() end
]])
    local rt = runtime.new{ scene = new_scene(), scripts = { path }, watch = false }
    rts[#rts + 1] = rt
    local s = rt:scripts()[1]
    assert.are.equal("running", s.status, s.error)
    assert.are.equal("ik.skeleton (closed)", s.state.closed)
  end)

  it("leaves the host free to close its own objects", function()
    local scene = new_scene()
    local path = dir .. "/watcher.lua"
    tmp.write(path, "function update() state.x = scene.target:get_position().x end")
    local rt = runtime.new{ scene = scene, scripts = { path }, watch = false }
    rts[#rts + 1] = rt
    rt:update(0)
    scene.skeletons.arm:close()
    scene.target:close()
    assert.are.equal("ik.skeleton (closed)", tostring(scene.skeletons.arm))
    -- the script's view of a closed host object fails in the script, not in the host
    rt:update(0)
    local s = rt:scripts()[1]
    assert.are.equal("paused", s.status)
    assert.is_truthy(s.error:find(path .. ":1: ", 1, true), s.error)
  end)
end)
