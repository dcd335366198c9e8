--- Rig scripts that reload while they run: `local runtime = require("ik.runtime")`.
--
-- A runtime loads rig scripts, calls them every frame in a fixed order, watches their
-- files and reloads a script when it is saved, without losing what it was doing. It is
-- plain Lua over the `ik` module (file watching is `ik.watch`), so any Lua host can run
-- one: call `rt:update(dt)` from the host's own frame loop (see
-- `lua/examples/host_loop.lua`). It runs on Lua 5.4, 5.1 and LuaJIT.
--
-- **Rig script format.** A rig script is a Lua file. Its top level runs on every
-- (re)load, with `ik`, `scene` (the table the host gave the runtime: its skeletons,
-- nodes, ground) and `state` in its environment. `state` is a table that survives
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
--       scene.reached = state.arm:solve()
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
-- **Sandbox.** Each script runs in an environment of its own with Lua's safe functions,
-- `ik`, `scene` and `state`. It has no `io`, `debug`, `package`, `setfenv`/`getfenv`, no
-- `os` but `os.clock`, no `string.dump`, no `collectgarbage` but `collectgarbage("count")`,
-- and `load`, `loadstring`, `dofile` and `loadfile` take text only (`dofile` and
-- `loadfile` files of the script's folder only). `require` finds the `ik` modules
-- (loaded anew inside the sandbox from their files; a host that embeds them in
-- `package.preload` has its own copied instead) and Lua files of the script's folder
-- (`require("util")` is `<folder>/util.lua`, run in the same sandbox), nothing else. `getmetatable` gives a
-- copy of the metatable of strings and userdata (`ik` objects; without `__gc`), so a
-- script cannot change how they behave for the host or other scripts, and
-- `setmetatable` refuses `__gc` and the scene's tables. The `ik` objects of the scene
-- the host gave (three tables down) are the host's: a script uses them but cannot
-- close them ("the scene's objects are the host's: rig scripts cannot close them").
-- Each call into a script (its top level, `on_reload`, `update`, coroutines they
-- run) has an instruction budget, counted by a debug hook: past it the script raises
-- "instruction budget exceeded (N)" and is paused until its next reload. With
-- `memory_limit`, so does a call that grows the Lua heap by more than that ("memory
-- limit exceeded (N bytes)"); a C host should also cap its state through its allocator.
-- Under LuaJIT scripts run interpreted (the JIT compiler ignores hooks).
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
-- assert(info.state.reloads == 1 and rt:events()[2].kind == "reload")
-- rt:close()
-- os.remove(path); os.remove(dir)

local ik = require("ik")

local runtime = {}

local Runtime = {}
Runtime.__index = Runtime

local format = string.format
local getinfo, sethook, gethook = debug.getinfo, debug.sethook, debug.gethook
local raw_getmetatable = debug.getmetatable
local co_create, co_resume, co_yield, co_running = coroutine.create, coroutine.resume, coroutine.yield,
  coroutine.running
local jit_off = rawget(_G, "jit") and jit.off -- luacheck: ignore 143
local setfenv = rawget(_G, "setfenv") -- 5.1 and LuaJIT
local loadstring = rawget(_G, "loadstring")

--- The defaults of `runtime.new`'s options.
-- @table defaults
-- @field budget instructions per call into a script (1e7)
-- @field debounce seconds a file must be quiet before it is reloaded (0.03)
runtime.defaults = { budget = 1e7, debounce = 0.03 }

local MAX_EVENTS = 256
local STEP = 1000   -- the count hook fires every STEP instructions of the calling thread
local CO_STEP = 100 -- and of scripts' coroutines (finer: what a finished one had not counted is lost)
local THIS = getinfo(1, "S").source

-- ---------------------------------------------------------------------------------------
-- Budgets: one call into a script at a time (per Lua state) is `current`.

local current -- { budget =, memory_limit =, used =, mem_base =, exceeded = }
local run -- forward: the hook leaves run's own frame alone
local hook_for -- forward

-- "file:line: " of the innermost script frame at or above level (not this file), or "".
local function where(level)
  for l = level + 1, level + 40 do
    local info = getinfo(l, "Sl")
    if not info then break end
    if info.what ~= "C" and info.source ~= THIS and (info.currentline or 0) > 0 then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
  end
  return ""
end

-- Whether the call grew the heap past its limit; garbage does not count (it is collected
-- first).
local function over_memory(c)
  if (collectgarbage("count") - c.mem_base) * 1024 <= c.memory_limit then return false end
  collectgarbage("collect")
  return (collectgarbage("count") - c.mem_base) * 1024 > c.memory_limit
end

local function memory_message(c)
  return format("memory limit exceeded (%.0f bytes)", c.memory_limit)
end

local script_threads = setmetatable({}, { __mode = "k" }) -- coroutines made by scripts

-- Records that the call went over a limit, and raises it. From then on the hook raises
-- it again at every instruction of the calling thread (the sandbox's pcall and
-- coroutine.resume raise it again too), so that no handler can go on.
local function exceed(c, level, msg)
  c.exceeded = where(level + 1) .. msg
  local co = co_running()
  if not (co and script_threads[co]) then sethook(hook_for(1), "", 1) end
  error(c.exceeded, 0)
end

local hooks = {} -- step -> hook
hook_for = function(step)
  local hook = hooks[step]
  if hook then return hook end
  -- Whether the hook fired in run's own frame, where raising would escape its pcall.
  -- Asked only before raising: getinfo makes a table, and a frame must allocate nothing.
  local function in_run()
    local info = getinfo(3, "f")
    return info and info.func == run
  end
  hook = function()
    local c = current
    if not c then return end
    if c.exceeded then
      if in_run() then return end
      error(c.exceeded, 0) -- caught and ignored: raise again
    end
    c.used = c.used + step
    if c.budget and c.used >= c.budget then
      if in_run() then return end
      exceed(c, 2, format("instruction budget exceeded (%.0f)", c.budget))
    elseif c.memory_limit and over_memory(c) then
      if in_run() then return end
      exceed(c, 2, memory_message(c))
    end
  end
  hooks[step] = hook
  return hook
end

-- The hook's step for a budget (nil: no budget).
local function step_of(budget, step)
  if budget and budget < step then return math.max(1, math.floor(budget)) end
  return step
end

-- Calls fn(...) under the runtime's limits, with strings' methods taken from `strings`
-- (the script's own string table: the host's has string.dump); returns true, or false
-- and the error value.
local limits, run_depth = {}, 0 -- run's `current`s, one per nesting depth, made once
run = function(rt, strings, fn, ...)
  run_depth = run_depth + 1
  local c = limits[run_depth]
  if not c then
    c = {}
    limits[run_depth] = c
  end
  c.budget, c.memory_limit, c.used, c.exceeded = rt._budget, rt._memory_limit, 0, nil
  c.mem_base = collectgarbage("count")
  local outer = current
  local oh, om, oc = gethook()
  local string_meta = raw_getmetatable("")
  local string_index = string_meta and string_meta.__index
  if string_meta then string_meta.__index = strings end
  current = c
  sethook(hook_for(step_of(c.budget, STEP)), "", step_of(c.budget, STEP))
  local ok, err = pcall(fn, ...)
  if type(oh) == "function" then sethook(oh, om, oc) else sethook() end
  current = outer
  if string_meta then string_meta.__index = string_index end
  if ok and c.exceeded then ok, err = false, c.exceeded end
  if ok and c.memory_limit and over_memory(c) then ok, err = false, memory_message(c) end
  if c.exceeded or not ok and c.memory_limit then collectgarbage("collect") end -- free what it left
  run_depth = run_depth - 1
  return ok, err
end

-- ---------------------------------------------------------------------------------------
-- Files and chunks.

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

local function join(dir, name)
  if dir == "." then return name end
  if dir:sub(-1) == "/" then return dir .. name end
  return dir .. "/" .. name
end

local BINARY = "attempt to load a binary chunk (mode is 't')"

-- Compiles text (never bytecode) with env as its environment.
local function compile(text, chunkname, env)
  if text:byte(1) == 27 then return nil, BINARY end
  local fn, err
  if setfenv then
    fn, err = loadstring(text, chunkname)
    if fn then setfenv(fn, env) end
  else
    fn, err = load(text, chunkname, "t", env)
  end
  if fn and jit_off then jit_off(fn, true) end -- compiled code would not see the hook
  return fn, err
end

-- Compiles a file's text: its first line may be a "#!" line; errors name the file.
local function compile_file(text, path, env)
  if text:byte(1) == 27 then return nil, path .. ": " .. BINARY end
  if text:sub(1, 1) == "#" then text = "--" .. text end
  return compile(text, "@" .. path, env)
end

-- The file of an `ik.*` Lua module on package.path, or nil.
local function search_ik(name)
  local searchpath = package.searchpath
  if searchpath then return (searchpath(name, package.path)) end
  local file = name:gsub("%.", "/")
  for template in package.path:gmatch("[^;]+") do
    local candidate = template:gsub("%?", file)
    local f = io.open(candidate, "rb")
    if f then
      f:close()
      return candidate
    end
  end
  return nil
end

-- An error value as a message, "file: message" when it says no place.
local function message(e, path)
  local msg
  if type(e) == "string" then
    msg = e
  elseif type(e) == "number" then
    msg = tostring(e)
  else
    msg = "(error object is a " .. type(e) .. " value)" -- its __tostring is the script's: not called
  end
  if not msg:find("^[^\n]-:%d+: ") and msg:sub(1, #path + 2) ~= path .. ": " then
    msg = path .. ": " .. msg
  end
  return msg
end

-- ---------------------------------------------------------------------------------------
-- The sandbox.

local function deny_write()
  error("attempt to change a protected metatable", 2)
end

local function readonly(t)
  return setmetatable({}, { __index = t, __newindex = deny_write, __metatable = false })
end

-- A copy of a metatable: what the sandbox's getmetatable gives for strings and
-- userdata. Changing it changes nothing else; tables in it are read only.
local function meta_copy(mt)
  local copy = {}
  for k, v in next, mt do
    if k ~= "__gc" then copy[k] = type(v) == "table" and readonly(v) or v end -- a finaliser closes
  end
  return setmetatable(copy, { __newindex = deny_write, __metatable = false })
end

-- The host's objects: the userdata of the scene it gave (runtime.new). Scripts use
-- them but cannot close them: the methods that close (`close`, `__close`; `__gc` never
-- reaches a script) of every `ik` type refuse while a script runs.
local host_objects = setmetatable({}, { __mode = "k" })
-- And the scene and the tables in it: the host reads them, so a script may change
-- their fields but not their metatables.
local host_tables = setmetatable({}, { __mode = "k" })
local CLOSE_REFUSED = "the scene's objects are the host's: rig scripts cannot close them"
local close_guards = setmetatable({}, { __mode = "k" }) -- guard -> true

local function guard_close(t, key)
  local close = rawget(t, key)
  if type(close) ~= "function" or close_guards[close] then return end
  local function guard(obj, ...)
    if current and host_objects[obj] then error(CLOSE_REFUSED, 2) end
    return close(obj, ...)
  end
  close_guards[guard] = true
  rawset(t, key, guard)
end

local function refused_close() error(CLOSE_REFUSED, 2) end

-- Puts the guards on the metatables of the module's types (registered as "ik.<type>").
-- Their methods are the upvalue of a C __index, which Lua 5.1 and LuaJIT do not let
-- Lua reach: there the __index of a type that closes (it has __close) is wrapped.
local function guard_ik_types()
  for name, mt in next, debug.getregistry() do
    if type(name) == "string" and name:sub(1, 3) == "ik." and type(mt) == "table"
        and rawget(mt, "__close") ~= nil then
      guard_close(mt, "__close")
      local index = rawget(mt, "__index")
      local methods = index
      if type(index) == "function" then methods = select(2, debug.getupvalue(index, 1)) end
      if type(methods) == "table" then
        guard_close(methods, "close")
      elseif type(index) == "function" and not close_guards[index] then
        local function guarded_index(obj, key)
          if key == "close" and current and host_objects[obj] then return refused_close end
          return index(obj, key)
        end
        close_guards[guarded_index] = true
        rawset(mt, "__index", guarded_index)
      end
    end
  end
end

-- Marks the scene's userdata (and its tables') as the host's, a few levels down.
local function protect_scene(v, depth, seen)
  if type(v) == "userdata" then
    host_objects[v] = true
  elseif type(v) == "table" and not seen[v] and depth > 0 then
    seen[v] = true
    host_tables[v] = true
    for _, item in next, v do protect_scene(item, depth - 1, seen) end
  end
end

-- A deep copy of a table of the module (callable tables like ik.vec3 included: their
-- metatables are copied too).
local function copy_table(t, seen)
  if seen[t] then return seen[t] end
  local copy = {}
  seen[t] = copy
  for k, v in next, t do
    copy[k] = type(v) == "table" and copy_table(v, seen) or v
  end
  local mt = raw_getmetatable(t)
  if mt then setmetatable(copy, copy_table(mt, seen)) end
  return copy
end

local function shallow(t, except)
  local copy = {}
  for k, v in next, t do
    if not (except and except[k]) then copy[k] = v end
  end
  return copy
end

-- Raises again when the call went over a limit (a script's pcall caught that).
local function rethrow(...)
  local c = current
  if c and c.exceeded then error(c.exceeded, 0) end
  return ...
end

local function safe_pcall(f, ...) return rethrow(pcall(f, ...)) end
local function safe_xpcall(f, handler, ...) return rethrow(xpcall(f, handler, ...)) end

local function safe_create(f)
  if type(f) ~= "function" then
    error("bad argument #1 to 'create' (function expected, got " .. type(f) .. ")", 2)
  end
  local co = co_create(f)
  script_threads[co] = true
  -- LuaJIT has one hook for all its threads, and setting it restarts the count: a
  -- coroutine made and finished in fewer than a step would then never be counted.
  if not jit_off then
    local c = current
    local step = step_of(c and c.budget, CO_STEP)
    sethook(co, hook_for(step), "", step)
  end
  return co
end

local function safe_resume(co, ...)
  return rethrow(co_resume(co, ...))
end

local function wrap_results(ok, ...)
  rethrow()
  if not ok then error((...), 0) end
  return ...
end

local function safe_wrap(f)
  if type(f) ~= "function" then
    error("bad argument #1 to 'wrap' (function expected, got " .. type(f) .. ")", 2)
  end
  local co = safe_create(f)
  return function(...) return wrap_results(co_resume(co, ...)) end
end

local function safe_yield(...)
  local co = co_running()
  if not (co and script_threads[co]) then error("attempt to yield from outside a coroutine", 2) end
  return co_yield(...)
end

local function safe_collectgarbage(opt)
  if opt == "count" then return collectgarbage("count") end
  error("collectgarbage: only collectgarbage(\"count\") is available to rig scripts", 2)
end

local function safe_setmetatable(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    error("setmetatable: __gc is not available to rig scripts", 2)
  end
  if host_tables[t] then error("setmetatable: the scene's metatable is the host's", 2) end
  local old = getmetatable(t)
  if old ~= nil and old ~= raw_getmetatable(t) then error("cannot change a protected metatable", 2) end
  return setmetatable(t, mt)
end

local function safe_rep(s, n, sep)
  local c = current
  if c and c.memory_limit and type(n) == "number" and n > 0 then
    local piece = (type(s) == "string" or type(s) == "number") and #tostring(s) or 0
    local between = (type(sep) == "string" or type(sep) == "number") and #tostring(sep) or 0
    if (piece + between) * n > c.memory_limit then exceed(c, 1, memory_message(c)) end
  end
  return string.rep(s, n, sep)
end

-- Standard modules a script may require (its own copies); the others it may not.
local LIBRARIES = { string = true, table = true, math = true, coroutine = true, utf8 = true, bit = true }
local BLOCKED_IK = { ["ik.runtime"] = true }

local SAFE_GLOBALS = {
  "assert", "error", "ipairs", "next", "pairs", "print", "rawequal", "rawget", "rawlen", "rawset", "select",
  "tonumber", "tostring", "type", "unpack", "_VERSION",
}

-- A new environment for one version of a script, and its string table (also what
-- strings' methods are while it runs); deps collects the files it loads.
local function new_env(rt, sc, deps)
  local env = {}
  for _, name in ipairs(SAFE_GLOBALS) do env[name] = rawget(_G, name) end
  env.pcall, env.xpcall = safe_pcall, safe_xpcall
  env.setmetatable = safe_setmetatable
  env.collectgarbage = safe_collectgarbage
  env.os = { clock = os.clock }
  env.math = shallow(math)
  env.table = shallow(table)
  local str = shallow(string, { dump = true })
  str.rep = safe_rep
  env.string = str
  env.coroutine = shallow(coroutine)
  env.coroutine.create, env.coroutine.wrap = safe_create, safe_wrap
  env.coroutine.resume, env.coroutine.yield = safe_resume, safe_yield
  if coroutine.close then
    local close = coroutine.close
    env.coroutine.close = function(co) return rethrow(close(co)) end
  end
  if rawget(_G, "utf8") then env.utf8 = shallow(utf8) end -- luacheck: ignore 143
  if rawget(_G, "bit") then env.bit = shallow(bit) end -- luacheck: ignore 143

  local ik_copy = copy_table(ik, {})
  ik_copy.watch = nil -- files are not the scripts' business
  ik_copy.batch = rt._batch
  env.ik = ik_copy
  env.scene = rt._scene
  env.state = sc.state
  env._G = env

  -- getmetatable: tables as usual; strings and userdata get copies.
  local string_meta = setmetatable({ __index = str }, { __newindex = deny_write, __metatable = false })
  local copies = setmetatable({}, { __mode = "k" })
  env.getmetatable = function(v)
    if type(v) == "table" then return getmetatable(v) end
    if type(v) == "string" then return string_meta end
    local mt = getmetatable(v)
    if type(mt) ~= "table" then return mt end
    local copy = copies[mt]
    if not copy then
      copy = meta_copy(mt)
      copies[mt] = copy
    end
    return copy
  end

  env.load = function(chunk, chunkname, _, chunk_env)
    if type(chunk) == "function" then
      local parts = {}
      while true do
        local part = chunk()
        if part == nil or part == "" then break end
        if type(part) ~= "string" then return nil, "reader function must return a string" end
        parts[#parts + 1] = part
      end
      chunk, chunkname = table.concat(parts), chunkname or "=(load)"
    elseif type(chunk) ~= "string" then
      error("bad argument #1 to 'load' (string expected, got " .. type(chunk) .. ")", 2)
    end
    if chunkname ~= nil and type(chunkname) ~= "string" then
      error("bad argument #2 to 'load' (string expected, got " .. type(chunkname) .. ")", 2)
    end
    if chunk_env == nil then chunk_env = env end
    return compile(chunk, chunkname or chunk, chunk_env)
  end
  if loadstring then env.loadstring = function(s, chunkname) return env.load(s, chunkname) end end

  -- Files of the script's folder only: relative paths without "..".
  local function resolve(name)
    if type(name) ~= "string" then
      return nil, "file name expected, got " .. type(name)
    end
    if name == "" or name:sub(1, 1) == "/" or name:find("\\", 1, true) or name:find("^%a:") then
      return nil, name .. ": rig scripts can only load files of their own folder"
    end
    for part in name:gmatch("[^/]+") do
      if part == ".." then return nil, name .. ": rig scripts can only load files of their own folder" end
    end
    return join(sc.dir, name)
  end
  env.loadfile = function(name, _, chunk_env)
    local path, err = resolve(name)
    if not path then return nil, err end
    local text
    text, err = read_file(path)
    if not text then return nil, err end
    deps[path] = true
    if chunk_env == nil then chunk_env = env end
    return compile_file(text, path, chunk_env)
  end
  env.dofile = function(name)
    local fn, err = env.loadfile(name)
    if not fn then error(err, 2) end
    return fn()
  end

  local loaded, LOADING = {}, {}
  local function load_module(name, path)
    local text, err = read_file(path)
    if not text then error(err, 3) end
    deps[path] = true
    local fn
    fn, err = compile_file(text, path, env)
    if not fn then
      error("error loading module '" .. name .. "' from file '" .. path .. "':\n\t" .. err, 3)
    end
    loaded[name] = LOADING
    local value = fn(name, path)
    if value == nil then value = loaded[name] ~= LOADING and loaded[name] or true end
    loaded[name] = value
    return value
  end
  env.require = function(name)
    if type(name) ~= "string" then
      error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
    end
    local value = loaded[name]
    if value == LOADING then error("loop or previous error loading module '" .. name .. "'", 2) end
    if value ~= nil then return value end
    if name == "ik" or name == "ik.core" then return ik_copy end
    if LIBRARIES[name] and env[name] then return env[name] end
    local modname = name:match("^[%w_]+[%w_%.]*$") and not name:find("%.%.") and not name:find("%.$")
    if name:sub(1, 3) == "ik." and modname and not BLOCKED_IK[name] then
      local path = search_ik(name)
      if path then return load_module(name, path) end
      if package.loaded[name] ~= nil or package.preload[name] then
        -- not a file (a host that embeds its Lua): the host's module, copied
        local found, module = pcall(require, name)
        if found then
          loaded[name] = type(module) == "table" and copy_table(module, {}) or module
          return loaded[name]
        end
      end
      error("module '" .. name .. "' not found", 2)
    end
    if modname and not (name:sub(1, 3) == "ik." or rawget(_G, name:match("^[^%.]+")) ~= nil) then
      local path = join(sc.dir, (name:gsub("%.", "/")) .. ".lua")
      local f = io.open(path, "rb")
      if f then
        f:close()
        return load_module(name, path)
      end
      error("module '" .. name .. "' not found (no file " .. path .. ")", 2)
    end
    error("module '" .. name .. "' is not available to rig scripts (they can require the ik modules and "
      .. "files of their own folder)", 2)
  end
  return env, str
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

-- Loads the current text of a script as its new version; true, or false and the error.
local function load_version(rt, sc, forced)
  local path = sc.path
  local deps = {}
  local text, err = read_file(path)
  if text then
    local env, strings = new_env(rt, sc, deps)
    local fn
    fn, err = compile_file(text, path, env)
    if fn then
      local ok, e = run(rt, strings, fn)
      if ok and type(rawget(env, "update")) ~= "function" then
        ok, e = false, path .. ": the script defines no function update(dt)"
      end
      local on_reload = rawget(env, "on_reload")
      if ok and sc.good and on_reload ~= nil then
        if type(on_reload) ~= "function" then
          ok, e = false, path .. ": on_reload is not a function"
        else
          ok, e = run(rt, strings, on_reload, sc.state)
        end
      end
      if ok then
        local was = sc.status
        sc.env, sc.strings = env, strings
        sc.deps, sc.tried_deps = deps, nil
        sc.status, sc.error = "running", nil
        sc.failed_text, sc.failed_message = nil, nil
        local kind = sc.good and "reload" or "load"
        sc.good = true
        emit(rt, kind, path)
        if was == "paused" then emit(rt, "resumed", path) end
        return true
      end
      err = e
    end
  end
  err = message(err, path)
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
  clock = true, on_event = true, batch_threads = true,
}

-- Most ik.batch objects the scripts of one runtime may hold at once. A batch's threads
-- and per-thread buffers (some 150 KB each) are C memory, which neither the memory limit
-- nor a host's Lua allocator sees: without these caps a script could start hundreds of
-- threads, or keep thousands of batches.
local MAX_BATCHES = 32

-- The scripts' ik.batch: at most `threads` threads each, MAX_BATCHES alive at once.
local function sandboxed_batch(threads)
  local live = setmetatable({}, { __mode = "k" })
  local batch = ik.batch
  return function(spec, ...)
    if type(spec) == "table" then
      -- ik.batch is handed a copy, each field read once: the value checked here is the
      -- one it uses (a spec's __index could answer otherwise the next time).
      local copy = {}
      for k, v in next, spec do copy[k] = v end -- raw: ik.batch still checks the keys
      copy.chains, copy.threads = spec.chains, spec.threads
      if type(copy.threads) == "number" and copy.threads > threads then
        error(format("ik.batch: threads %s is more than this runtime lets scripts use (%d)",
          tostring(copy.threads), threads), 2)
      end
      spec = copy
    end
    local n = 0
    for _ in pairs(live) do n = n + 1 end
    if n >= MAX_BATCHES then
      collectgarbage() -- the unreachable ones go, and their threads with them
      n = 0
      for _ in pairs(live) do n = n + 1 end
      if n >= MAX_BATCHES then
        error(format("ik.batch: the scripts hold %d batches already, the most a runtime allows", n), 2)
      end
    end
    local b = batch(spec, ...)
    live[b] = true
    return b
  end
end

local function describe(v)
  if type(v) == "number" then return format("%.14g", v) end
  if type(v) == "string" then return format("%q", v) end
  return type(v)
end

local function bad_option(name, expected, v)
  error("ik.runtime.new: option '" .. name .. "' (" .. expected .. " expected, got " .. describe(v) .. ")", 3)
end

local function positive(options, name, default, allow_off)
  local v = options[name]
  if v == nil then return default end
  if allow_off and (v == false or v == math.huge) then return nil end
  if type(v) ~= "number" or v ~= v or v <= 0 or v == math.huge then
    bad_option(name, allow_off and "positive number or false" or "positive number", v)
  end
  return v
end

--- Makes a runtime and loads its scripts, in order (a script that fails to load is
-- reported and comes in when its file is fixed).
-- @tparam[opt] table options
--
-- - `scene` (any value, default `{}`): what the scripts see as `scene`.
-- - `scripts` (list of file paths): the scripts, run in this order.
-- - `watch` (boolean, default true): reload scripts when their files change.
-- - `budget` (number, default 1e7, or false): Lua instructions per call into a script.
-- - `memory_limit` (number of bytes, default none): Lua heap growth allowed per call.
-- - `debounce` (seconds, default 0.03): how long a changed file must be left alone
--   before it is reloaded, by `clock` or by the `dt`s given to `update`, whichever
--   says so first (`os.clock` is processor time, which a host that sleeps between
--   frames hardly spends).
-- - `clock` (function, default `os.clock`): the time for `debounce`, in seconds.
-- - `batch_threads` (integer in 1..64, default 1): the most threads a script's
--   `ik.batch` may use (the scripts may hold at most 32 batches at once).
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
  if options.clock ~= nil and type(options.clock) ~= "function" then
    bad_option("clock", "function", options.clock)
  end
  if options.on_event ~= nil and type(options.on_event) ~= "function" then
    bad_option("on_event", "function", options.on_event)
  end
  if options.watch ~= nil and type(options.watch) ~= "boolean" then
    bad_option("watch", "boolean", options.watch)
  end
  local debounce = options.debounce
  if debounce == nil then debounce = runtime.defaults.debounce end
  if type(debounce) ~= "number" or debounce ~= debounce or debounce < 0 or debounce == math.huge then
    bad_option("debounce", "non-negative number", debounce)
  end
  local batch_threads = options.batch_threads
  if batch_threads == nil then batch_threads = 1 end
  if type(batch_threads) ~= "number" or batch_threads ~= math.floor(batch_threads) or batch_threads < 1
      or batch_threads > 64 then
    bad_option("batch_threads", "integer in 1..64", batch_threads)
  end
  local rt = setmetatable({
    _batch = sandboxed_batch(batch_threads),
    _scene = options.scene == nil and {} or options.scene,
    _budget = positive(options, "budget", runtime.defaults.budget, true),
    _memory_limit = positive(options, "memory_limit", nil, true),
    _debounce = debounce,
    _clock = options.clock or os.clock,
    _on_event = options.on_event,
    _list = {},
    _events = {},
    _pending = {},
    _watched = {},
  }, Runtime)
  guard_ik_types()
  protect_scene(rt._scene, 3, {})
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
  local sc = { path = path, dir = dirname(path), state = {}, status = "error", deps = {}, good = false }
  table.insert(list, position, sc)
  if self._watch and not self._watched[path] then -- before reading it: a save from now on is seen
    self._watch:add(path)
    self._watched[path] = true
  end
  local ok, err = load_version(self, sc, true)
  refresh_watch(self)
  return ok, err
end

--- Removes a script (an event "removed"); its state is dropped.
-- @string path
-- @treturn boolean whether it was there
function Runtime:remove(path)
  check_open(self, "remove")
  local sc, i = self:_find(path)
  if not sc then return false end
  table.remove(self._list, i)
  sc.removed = true
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

-- update's work; errors are the runtime's own (scripts' are caught by run).
local function step(self, dt)
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
  if due then
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
      local update = rawget(sc.env, "update") -- the script may have changed it
      local ok, err
      local t0 = self._clock()
      if type(update) == "function" then
        ok, err = run(self, sc.strings, update, dt)
      else
        ok, err = false, sc.path .. ": update is no longer a function"
      end
      sc.time = (sc.time or 0) + (self._clock() - t0)
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

--- The scripts, in the order they run, as new tables: `path`, `status` ("running",
-- "error": no version ever loaded, or "paused"), `error` (the last error, nil when
-- the last version loaded and runs), `state` (the script's state table itself) and
-- `time` (seconds spent in its `update` calls so far, by the runtime's `clock`).
-- @treturn {table,...}
function Runtime:scripts()
  local out = {}
  for i, sc in ipairs(self._list) do
    out[i] = { path = sc.path, status = sc.status, error = sc.error, state = sc.state, time = sc.time or 0 }
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

--- Stops watching files; `update` then does nothing, and `add`, `remove` and `reload`
-- raise. Scripts and events can still be read.
function Runtime:close()
  if self._closed then return end
  self._closed = true
  if self._watch then self._watch:close() end
  self._watch = nil
  self._pending = {}
end

function Runtime:__tostring()
  local running = 0
  for _, sc in ipairs(self._list) do
    if sc.status == "running" then running = running + 1 end
  end
  return format("ik.runtime(%d scripts, %d running%s)", #self._list, running,
    self._closed and ", closed" or "")
end

return runtime
