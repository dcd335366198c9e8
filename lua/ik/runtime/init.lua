--- Rig scripts that reload while they run: `local runtime = require("ik.runtime")`.
--
-- A runtime loads rig scripts, calls them every frame in a fixed order, watches their
-- files and reloads a script when it is saved, without losing what it was doing. It is
-- plain Lua over the `ik` module (file watching is `ik.watch`), so any Lua host can run
-- one: call `rt:update(dt)` from the host's own frame loop (see
-- `lua/examples/host_loop.lua`). It runs on Lua 5.4, 5.1 and LuaJIT.
--
-- **Rig script format.** A rig script is a Lua file. Its top level runs on every
-- (re)load, with `ik`, `scene` (a copy of the table the host gave the runtime: its
-- skeletons, nodes, ground) and `state` in its environment. `state` is a table that survives
-- reloads (the first load gets an empty one): keep in it whatever must outlive a
-- version of the code, rig objects included, and make such things only when `state`
-- does not have them yet. The script defines `update(dt)`, called every frame, and
-- optionally `on_reload(old_state)`, called after a successful reload with the previous
-- state table (the same table as `state`: it is kept). A complete script (it ships as
-- `lua/examples/scripts/reach.lua`):
--
--     -- reach.lua: the hand follows a target going round in a circle.
--     local SPEED = 2     -- radians per second
--     local RADIUS = 0.1
--
--     state.t = state.t or 0
--     -- Made once: the chain (and what its solver learned) lives on across reloads.
--     state.arm = state.arm or ik.chain{ bones = scene.arm, target = scene.target, pole = { 0.2, 1.5, -1 } }
--
--     function update(dt)
--       state.t = state.t + SPEED * dt
--       scene.target:set_position{ 0.35 + RADIUS * math.cos(state.t), 1.3 + RADIUS * math.sin(state.t), 0.3 }
--       state.reached = state.arm:solve()
--     end
--
--     function on_reload(old_state)
--       print(("reach.lua: reloaded at t = %.2f"):format(old_state.t))
--     end
--
-- **Reloading.** A save is seen on the `update` after the file settled (`debounce`
-- seconds without a new change). A script is also reloaded when a file it required
-- changes. If the new version fails (a syntax error, an error in its top level or in
-- `on_reload`, no `update`), the last good version keeps running, the error is reported
-- once as `file:line: message`, and the script comes back when the file is fixed. A
-- deleted file keeps its last version running. An error in `update` pauses that script
-- (reported once, as a "paused" event) until its next reload; the others go on. No
-- error of a script ever escapes `rt:update`.
--
-- **Sandbox.** Each script runs in a Lua state of its own, with Lua's safe functions,
-- `ik`, a read-only copy of `scene` (its skeletons, bones, nodes and grounds are views of
-- the host's objects) and `state`: see `ik.runtime.sandbox` for what it can and cannot
-- do, and SECURITY.md for the promise. Each call into a script (its top level,
-- `on_reload`, `update`) has an instruction budget; past it the script raises
-- "instruction budget exceeded (N)" and is paused until its next reload. Its state's
-- heap has a memory limit over its lifetime ("memory limit exceeded (N bytes)"): see
-- `ik.runtime.budget`. Scripts run interpreted under LuaJIT (the JIT compiler ignores
-- hooks); the host's own code keeps the JIT.
--
-- **Events** are tables `{ kind =, script =, message = }`: "load" (a script's first good
-- version), "reload", "error" (a version that failed, or a deleted file; the last good
-- version, if any, keeps running), "paused" (message: why), "resumed" (a paused script
-- reloaded), "removed" (`rt:remove`). They are delivered to `on_event` as they happen
-- and queued for `rt:events()` (the last 256).
-- @module ik.runtime
-- @usage local dir = os.tmpname()        -- a scratch folder for the example
-- os.remove(dir); assert(os.execute("mkdir " .. dir))
-- local path = dir .. "/reach.lua"
-- local function save(text) local f = assert(io.open(path, "w")); f:write(text); f:close() end
-- save([==[
-- local SPEED = 2
-- state.t = state.t or 0
-- state.arm = state.arm or ik.chain{ bones = scene.arm, target = scene.target, pole = {0.2, 1.5, -1} }
-- function update(dt)
--   state.t = state.t + SPEED * dt
--   scene.target:set_position{ 0.35 + 0.1 * math.cos(state.t), 1.3, 0.3 }
--   state.arm:solve()
-- end
-- function on_reload(old_state) state.reloads = (old_state.reloads or 0) + 1 end
-- ]==])
-- local sk = ik.skeleton{
--   { name = "shoulder", position = {0, 1.5, 0} },
--   { name = "elbow", parent = "shoulder", position = {0.3, 0, 0} },
--   { name = "hand", parent = "elbow", position = {0.25, 0, 0} },
-- }
-- local scene = { arm = { sk:bone("shoulder"), sk:bone("elbow"), sk:bone("hand") },
--                 target = ik.node{ position = {0.35, 1.3, 0.3} } }
-- local rt = require("ik.runtime").new{ scene = scene, scripts = { path }, watch = false }
-- for _ = 1, 30 do rt:update(1 / 60) end
-- local info = rt:scripts()[1]
-- assert(info.status == "running" and math.abs(info.state.t - 1) < 1e-9)
-- assert(rt:reload(path))                    -- as a save would
-- assert(rt:scripts()[1].state.reloads == 1 and rt:events()[2].kind == "reload")
-- rt:close()
-- os.remove(path); os.remove(dir)

local ik = require("ik")
local budget = require("ik.runtime.budget")
local sandbox = require("ik.runtime.sandbox")

local runtime = {}

local Runtime = {}
Runtime.__index = Runtime

local describe, bad_option = budget.describe, budget.bad_option

--- The defaults of `runtime.new`'s options (and `ik.runtime.budget.defaults`).
-- @table defaults
-- @field budget instructions per call into a script (1e7)
-- @field debounce seconds a file must be quiet before it is reloaded (0.03)
-- @field memory_limit bytes each script's state may hold (64 MiB)
runtime.defaults = {
  budget = budget.defaults.budget, debounce = 0.03, memory_limit = budget.defaults.memory_limit,
}

local MAX_EVENTS = 256

-- ---------------------------------------------------------------------------------------
-- Files.

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text = f:read("*a")
  f:close()
  if not text then return nil, path .. ": cannot be read" end
  return text
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

-- An error message, "file: message" when it says no place.
local function message(msg, path)
  if not msg:find("^[^\n]-:%d+: ") and msg:sub(1, #path + 2) ~= path .. ": " then
    msg = path .. ": " .. msg
  end
  return msg
end

-- ---------------------------------------------------------------------------------------
-- The runtime.

local function emit(rt, kind, path, msg)
  local ev = { kind = kind, script = path, message = msg }
  local queue = rt._events
  queue[#queue + 1] = ev
  if #queue > MAX_EVENTS then table.remove(queue, 1) end
  if rt._on_event then
    local ok, err = pcall(rt._on_event, ev)
    if not ok then
      queue[#queue + 1] = { kind = "error", script = path,
        message = "ik.runtime: on_event: " .. tostring(err) }
      if #queue > MAX_EVENTS then table.remove(queue, 1) end
    end
  end
end

-- Watches the scripts' files and the files they loaded, and no other.
local function refresh_watch(rt)
  local w = rt._watch
  if not w then return end
  local want = {}
  for _, sc in ipairs(rt._list) do
    want[sc.path] = true
    for path in pairs(sc.deps) do want[path] = true end
    for path in pairs(sc.tried_deps or {}) do want[path] = true end
  end
  for path in pairs(rt._watched) do
    if not want[path] then
      w:remove(path)
      rt._watched[path] = nil
    end
  end
  for path in pairs(want) do
    if not rt._watched[path] then
      w:add(path)
      rt._watched[path] = true
    end
  end
end

-- The files the script's sandbox loaded since the last look, added to deps; whether any.
local function take_deps(sc, deps)
  local list = sc.box:deps()
  if not list then return false end
  for _, path in ipairs(list) do deps[path] = true end
  return true
end

-- The host's report function, if its scene has one (called with the script's records).
local function forward_reports(rt, sc)
  local report = rt._report
  if not report then return end
  sc.box:reports(report, sc.path)
end

-- Loads the current text of a script as its new version; true, or false and the error.
local function load_version(rt, sc, forced)
  local path = sc.path
  local text, err = read_file(path)
  local deps = {}
  if text then
    local ok
    if not sc.box then
      ok, sc.box = pcall(sandbox.new, sc.dir, rt._scene, rt._limits, rt._shapes, rt._interrupt)
      if not ok then
        err, sc.box = "ik.runtime: " .. tostring(sc.box), nil
      end
    end
    if sc.box then
      ok, err = sc.box:load(text, "@" .. path, sc.good)
      take_deps(sc, deps)
      forward_reports(rt, sc)
      if ok then
        local was = sc.status
        sc.deps, sc.tried_deps = deps, nil
        sc.status, sc.error = "running", nil
        sc.failed_text, sc.failed_message = nil, nil
        local kind = sc.good and "reload" or "load"
        sc.good = true
        emit(rt, kind, path)
        if was == "paused" then emit(rt, "resumed", path) end
        return true
      end
    end
  end
  err = message(tostring(err), path)
  sc.tried_deps = deps
  local repeated = not forced and sc.failed_message == err and sc.failed_text == text
  sc.failed_text, sc.failed_message = text, err
  sc.error = err
  if not sc.good then sc.status = "error" end
  if not repeated then emit(rt, "error", path, err) end
  return false, err
end

local function pause(rt, sc, err)
  sc.status, sc.error = "paused", message(err, sc.path)
  emit(rt, "paused", sc.path, sc.error)
end

local OPTIONS = {
  scene = true, scripts = true, watch = true, budget = true, memory_limit = true, debounce = true,
  clock = true, on_event = true, batch_threads = true, interrupt = true, report_shapes = true,
}

--- Makes a runtime and loads its scripts, in order (a script that fails to load is
-- reported and comes in when its file is fixed).
-- @tparam[opt] table options
--
-- - `scene` (table, default `{}`): what the scripts see as `scene` (each a read-only
--   copy; see `ik.runtime.sandbox`). Its `report(name, reached, distance, iterations,
--   shapes, script)`, if any, receives what the scripts report.
-- - `scripts` (list of file paths): the scripts, run in this order.
-- - `watch` (boolean, default true): reload scripts when their files change.
-- - `budget` (number, default 1e7, or false): instructions per call into a script.
-- - `memory_limit` (number of bytes, default 64 MiB, or false): what each script's
--   state may hold, over its lifetime.
-- - `debounce` (seconds, default 0.03): how long a changed file must be left alone
--   before it is reloaded, by `clock` or by the `dt`s given to `update`, whichever
--   says so first (`os.clock` is processor time, which a host that sleeps between
--   frames hardly spends).
-- - `clock` (function, default `os.clock`): the time for `debounce`, in seconds.
-- - `batch_threads` (integer in 1..64, default 1): the most threads a script's
--   `ik.batch` may use.
-- - `report_shapes` (boolean, default true): whether reports carry their chain's
--   constraint shapes (a few tables a chain and frame).
-- - `interrupt` (light userdata, from C only): a `volatile sig_atomic_t` that, once
--   non-zero, stops the script running at its next instruction.
-- - `on_event` (function): called with each event as it happens (errors in it are
--   reported as "error" events, not raised).
-- @treturn table the runtime
function runtime.new(options)
  if options == nil then options = {} end
  if type(options) ~= "table" then
    error("ik.runtime.new: options table expected, got " .. describe(options), 2)
  end
  for k in pairs(options) do
    if not OPTIONS[k] then error("ik.runtime.new: no option " .. describe(k), 2) end
  end
  if options.scripts ~= nil and type(options.scripts) ~= "table" then
    bad_option("scripts", "list of paths", options.scripts)
  end
  for i, path in ipairs(options.scripts or {}) do
    if type(path) ~= "string" then bad_option("scripts", "path at item " .. i, path) end
  end
  if options.scene ~= nil and type(options.scene) ~= "table" then
    bad_option("scene", "table", options.scene)
  end
  if options.clock ~= nil and type(options.clock) ~= "function" then
    bad_option("clock", "function", options.clock)
  end
  if options.on_event ~= nil and type(options.on_event) ~= "function" then
    bad_option("on_event", "function", options.on_event)
  end
  if options.watch ~= nil and type(options.watch) ~= "boolean" then
    bad_option("watch", "boolean", options.watch)
  end
  if options.report_shapes ~= nil and type(options.report_shapes) ~= "boolean" then
    bad_option("report_shapes", "boolean", options.report_shapes)
  end
  if options.interrupt ~= nil and type(options.interrupt) ~= "userdata" then
    bad_option("interrupt", "light userdata", options.interrupt)
  end
  local debounce = options.debounce
  if debounce == nil then debounce = runtime.defaults.debounce end
  if type(debounce) ~= "number" or debounce ~= debounce or debounce < 0 or debounce == math.huge then
    bad_option("debounce", "non-negative number", debounce)
  end
  local scene = options.scene == nil and {} or options.scene
  local report = rawget(scene, "report")
  local rt = setmetatable({
    _scene = scene,
    _report = type(report) == "function" and report or nil,
    _limits = budget.from_options(options),
    _shapes = options.report_shapes ~= false,
    _interrupt = options.interrupt,
    _debounce = debounce,
    _clock = options.clock or os.clock,
    _on_event = options.on_event,
    _list = {},
    _events = {},
    _pending = {},
    _watched = {},
  }, Runtime)
  if options.watch ~= false then
    local ok, w = pcall(ik.watch)
    if ok then
      rt._watch = w
    else
      emit(rt, "error", nil, "ik.runtime: cannot watch files, scripts will not reload by themselves: "
        .. tostring(w))
    end
  end
  for _, path in ipairs(options.scripts or {}) do
    if rt:_find(path) then error("ik.runtime.new: option 'scripts' (" .. path .. " is given twice)", 2) end
    rt:add(path)
  end
  return rt
end

function Runtime:_find(path)
  for i, sc in ipairs(self._list) do
    if sc.path == path then return sc, i end
  end
  return nil
end

local function check_open(self, what)
  if getmetatable(self) ~= Runtime then
    error("ik.runtime: " .. what .. ": runtime expected (call it with ':')", 3)
  end
  if self._closed then error("ik.runtime: " .. what .. ": the runtime is closed", 3) end
end

local function check_path(path, what)
  if type(path) ~= "string" or path == "" then
    error("ik.runtime: " .. what .. ": path (file path expected, got " .. describe(path) .. ")", 3)
  end
end

--- Adds a script and loads it. One that fails to load is kept (status "error") and
-- comes in when its file is fixed.
-- @string path its file
-- @int[opt] position where it runs among the scripts (default: last)
-- @treturn boolean whether it loaded
-- @treturn ?string the error, when it did not
function Runtime:add(path, position)
  check_open(self, "add")
  check_path(path, "add")
  local list = self._list
  if position == nil then position = #list + 1 end
  if type(position) ~= "number" or position % 1 ~= 0 or position < 1 or position > #list + 1 then
    error("ik.runtime: add: position (integer in [1, " .. (#list + 1) .. "] expected, got "
      .. describe(position) .. ")", 2)
  end
  if self:_find(path) then error("ik.runtime: add: " .. path .. " is in the runtime already", 2) end
  local sc = { path = path, dir = dirname(path), status = "error", deps = {}, good = false }
  table.insert(list, position, sc)
  if self._watch and not self._watched[path] then -- before reading it: a save from now on is seen
    self._watch:add(path)
    self._watched[path] = true
  end
  local ok, err = load_version(self, sc, true)
  refresh_watch(self)
  return ok, err
end

local function drop(sc)
  sc.removed = true
  if sc.box then sc.box:close() end
  sc.box = nil
end

--- Removes a script (an event "removed"); its state is dropped.
-- @string path
-- @treturn boolean whether it was there
function Runtime:remove(path)
  check_open(self, "remove")
  local sc, i = self:_find(path)
  if not sc then return false end
  table.remove(self._list, i)
  drop(sc)
  refresh_watch(self)
  emit(self, "removed", path)
  return true
end

--- Reloads a script now, as if its file had been saved.
-- @string path
-- @treturn boolean whether the new version loaded (else the last good one keeps running)
-- @treturn ?string the error, when it did not
function Runtime:reload(path)
  check_open(self, "reload")
  check_path(path, "reload")
  local sc = self:_find(path)
  if not sc then error("ik.runtime: reload: " .. path .. " is not in the runtime", 2) end
  self._pending[path] = nil
  local ok, err = load_version(self, sc, true)
  refresh_watch(self)
  return ok, err
end

-- Reloads the scripts whose files (or files they loaded) changed and settled.
local function reload_due(self, dt)
  local now = self._clock()
  local pending = self._pending
  if self._watch then
    local changed = self._watch:poll()
    for i = 1, #changed do pending[changed[i]] = { since = now, waited = -dt } end
  end
  local due
  for path, p in pairs(pending) do
    p.waited = p.waited + dt
    if now - p.since >= self._debounce or p.waited >= self._debounce then
      due = due or {}
      due[path] = true
      pending[path] = nil
    end
  end
  if not due then return end
  local reloaded = false
  for _, sc in ipairs(self._list) do
    local hit = due[sc.path]
    if not hit then
      for path in pairs(due) do
        if sc.deps[path] or (sc.tried_deps and sc.tried_deps[path]) then hit = true end
      end
    end
    if hit then
      load_version(self, sc, false)
      reloaded = true
    end
  end
  if reloaded then refresh_watch(self) end
end

-- update's work; errors are the runtime's own (scripts' come back as values).
local function step(self, dt)
  reload_due(self, dt)
  -- The scripts as the frame began (one may remove another), in a list kept from frame
  -- to frame: a frame allocates nothing. A nested update (from a host's callback) makes
  -- its own.
  local list = self._stepping and {} or self._frame_list or {}
  if not self._stepping then self._frame_list = list end
  self._stepping = true
  local n = #self._list
  for i = 1, n do list[i] = self._list[i] end
  for i = #list, n + 1, -1 do list[i] = nil end
  for i = 1, n do
    local sc = list[i]
    if sc.status == "running" and not sc.removed and not self._closed then
      local t0 = self._clock()
      local ok, err = sc.box:update(dt)
      sc.time = (sc.time or 0) + (self._clock() - t0)
      forward_reports(self, sc)
      if take_deps(sc, sc.deps) then refresh_watch(self) end
      if not ok then pause(self, sc, err) end
    end
  end
  self._stepping = false
end

--- Runs one frame: reloads the scripts whose files changed (and settled), then calls
-- every running script's `update(dt)`, in order. Never raises: what goes wrong is
-- reported as events (a bad `dt` or a failing `clock` too, once until an update goes
-- well). Does nothing once the runtime is closed.
-- @number dt seconds since the last frame, >= 0
function Runtime:update(dt)
  if getmetatable(self) ~= Runtime or self._closed then return end
  local ok, err
  if type(dt) ~= "number" or dt ~= dt or dt < 0 or dt == math.huge then
    ok, err = false, "update: dt (non-negative number expected, got " .. describe(dt) .. ")"
  else
    ok, err = pcall(step, self, dt)
    self._stepping = false -- also when step failed half-way
  end
  if ok then
    self._last_failure = nil
  elseif self._last_failure ~= tostring(err) then -- a host's mistake: said once, not every frame
    self._last_failure = tostring(err)
    pcall(emit, self, "error", nil, "ik.runtime: " .. tostring(err)) -- even out of memory
  end
end

-- A copy of a script's state (plain data; the ik objects it holds by type name).
local function state_of(sc)
  if not sc.box then return {} end
  local ok, st = pcall(sc.box.state, sc.box)
  return ok and st or {}
end

--- The scripts, in the order they run, as new tables: `path`, `status` ("running",
-- "error": no version ever loaded, or "paused"), `error` (the last error, nil when
-- the last version loaded and runs), `state` (a copy of the script's state table, as
-- plain data: it lives in the script's own Lua state), `memory` (bytes its state holds)
-- and `time` (seconds spent in its `update` calls so far, by the runtime's `clock`).
-- @treturn {table,...}
function Runtime:scripts()
  local out = {}
  for i, sc in ipairs(self._list) do
    local memory = sc.box and select(1, sc.box:memory()) or 0
    out[i] = { path = sc.path, status = sc.status, error = sc.error, state = state_of(sc),
      time = sc.time or 0, memory = memory }
  end
  return out
end

--- One script's `path`, `status`, `error` and `time`, as `scripts` gives them but as
-- values rather than a new table, for a host reading them every frame; nothing past
-- the last script.
-- @int i its place in the running order
-- @treturn ?string path
-- @treturn string status
-- @treturn ?string error
-- @treturn number time
function Runtime:script_info(i)
  local sc = self._list[i]
  if not sc then return nil end
  return sc.path, sc.status, sc.error, sc.time or 0
end

--- The events since the last call (oldest first), removed from the queue.
-- @treturn {table,...}
function Runtime:events()
  local events = self._events
  self._events = {}
  return events
end

--- Stops watching files and closes the scripts' states; `update` then does nothing,
-- and `add`, `remove` and `reload` raise. Scripts and events can still be read (a
-- script's state as it was last read: an empty table).
function Runtime:close()
  if self._closed then return end
  self._closed = true
  if self._watch then self._watch:close() end
  self._watch = nil
  self._pending = {}
  for _, sc in ipairs(self._list) do
    if sc.box then sc.box:close() end
    sc.box = nil
  end
end

function Runtime:__tostring()
  local running = 0
  for _, sc in ipairs(self._list) do
    if sc.status == "running" then running = running + 1 end
  end
  return string.format("ik.runtime(%d scripts, %d running%s)", #self._list, running,
    self._closed and ", closed" or "")
end

return runtime
