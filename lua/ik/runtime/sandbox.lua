--- A rig script's sandbox, as the runtime makes it: `require("ik.runtime.sandbox")`.
--
-- **One Lua state per script.** Each script runs in a state of its own (`ik.core`'s
-- `sandbox`, in C): its own heap with its own memory limit, its own globals and its own
-- string metatable, with Lua's safe libraries, `ik` (but `ik.watch`, `ik.import` and
-- `ik.import_string`, which touch files), `scene` and `state`. It has no
-- `io`, `debug`, `package`, `os` but `os.clock`, `string.dump`, `collectgarbage` but
-- `"count"`, `setfenv`/`getfenv` or `newproxy`; `load` and its kin take text only, and
-- `loadfile`, `dofile` and `require` read files of the script's folder and the `ik`
-- modules, nothing else. Its `pcall`, `xpcall`, `coroutine.resume`, pattern functions,
-- `string.rep`, `table.move` and `table.sort` are the sandbox's C versions, which keep
-- to the budget (`ik.runtime.budget`). `getmetatable` gives read-only copies for strings
-- and userdata; `setmetatable` refuses `__gc`.
--
-- **The scene.** The script sees a copy of the host's scene, made when the script is
-- added, read-only at its top level: its tables are copies (a write changes only the
-- script's copy), its skeletons, bones, nodes and grounds are views of the host's own
-- objects (the script moves them; it cannot close them or change their parents), and
-- its functions are calls into the host with their arguments and results copied. The
-- scene's `advance` is left out (it is the host's frame step), and `scene.report` is
-- the sandbox's: it keeps checked records, which the runtime hands to the host's
-- `report` after the script's `update` returns.
--
-- Nothing of the script runs outside a call into its sandbox, and nothing the host reads
-- back is a script's object: state and reports come back as copies of plain data.
-- @module ik.runtime.sandbox

local core = require("ik.core")

local sandbox = {}

-- The templates of package.path, for the ik modules a script requires.
local function ik_path()
  return package.path
end

--- A new sandbox for the script at path, over the runtime's scene and limits.
-- @string dir the script's folder
-- @param scene the host's scene
-- @tparam table limits from `ik.runtime.budget.from_options`
-- @bool shapes whether reports carry their chain's constraint shapes
-- @param[opt] interrupt a C host's stop flag (light userdata)
-- @return the sandbox (an `ik.sandbox`)
function sandbox.new(dir, scene, limits, shapes, interrupt)
  return core.sandbox{
    dir = dir,
    ik_path = ik_path(),
    scene = scene,
    budget = limits.budget,
    memory_limit = limits.memory_limit,
    batch_threads = limits.batch_threads,
    reports = limits.reports,
    shapes = shapes,
    interrupt = interrupt,
  }
end

return sandbox
