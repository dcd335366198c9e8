--- The limits a runtime puts on its rig scripts: `require("ik.runtime.budget")`.
--
-- Each script runs in a Lua state of its own (`ik.runtime.sandbox`). Per call into it
-- (its top level, `on_reload`, `update`): an instruction **budget**, counted by a count
-- hook, which also counts the work of the C functions that could otherwise run long (the
-- pattern functions step by step, `string.rep`, `table.move`, `table.sort`, compiling).
-- Over its lifetime: a **memory limit**, its state's whole heap; past it an allocation
-- fails inside the script. Either pauses the script until its next reload; the host and
-- the other scripts are not affected. A reserve on top of the limit lets the runtime
-- reload a script whose state is full.
-- @module ik.runtime.budget

local budget = {}

--- The defaults.
-- @table defaults
-- @field budget instructions per call into a script (1e7)
-- @field memory_limit bytes a script's state may hold (64 MiB)
-- @field batch_threads the most threads a script's `ik.batch` may use (1)
-- @field reports the most `scene.report` calls a script may make in one call (1024)
budget.defaults = { budget = 1e7, memory_limit = 64 * 1024 * 1024, batch_threads = 1, reports = 1024 }

local function describe(v)
  if type(v) == "number" then return string.format("%.14g", v) end
  if type(v) == "string" then return string.format("%q", v) end
  return type(v)
end
budget.describe = describe

--- Raises the runtime's error for a bad option.
function budget.bad_option(name, expected, v, level)
  error("ik.runtime.new: option '" .. name .. "' (" .. expected .. " expected, got " .. describe(v) .. ")",
    (level or 2) + 1)
end

-- A positive finite number option, or false (or math.huge) for none when allow_off.
local function positive(options, name, allow_off)
  local v = options[name]
  if v == nil then return budget.defaults[name] end
  if allow_off and (v == false or v == math.huge) then return false end
  if type(v) ~= "number" or v ~= v or v <= 0 or v == math.huge then
    budget.bad_option(name, allow_off and "positive number or false" or "positive number", v, 3)
  end
  return v
end

local function integer_in(options, name, lo, hi)
  local v = options[name]
  if v == nil then return budget.defaults[name] end
  if type(v) ~= "number" or v ~= math.floor(v) or v < lo or v > hi then
    budget.bad_option(name, "integer in " .. lo .. ".." .. hi, v, 3)
  end
  return v
end

--- The limits of `runtime.new`'s options, checked: `budget` (false: none),
-- `memory_limit` (false: none), `batch_threads`, `reports`.
-- @tparam table options
-- @treturn table limits
function budget.from_options(options)
  return {
    budget = positive(options, "budget", true),
    memory_limit = positive(options, "memory_limit", true),
    batch_threads = integer_in(options, "batch_threads", 1, 64),
    reports = budget.defaults.reports,
  }
end

return budget
