-- What runtime_spec and script_faults_spec share: `local rh = require("runtime_helper")`.
--
-- Each rig script runs in a Lua state of its own, so the specs observe scripts through
-- their state (`rt:scripts()[i].state`, a copy taken when it is read), through the host
-- objects they move (views), or through host functions in the scene.
local rh = {}

--- Lua's wording for a nil indexed, which 5.1 and LuaJIT put another way.
function rh.nil_index(kind, name)
  if _VERSION == "Lua 5.1" then return ("attempt to index %s '%s' (a nil value)"):format(kind, name) end
  return ("attempt to index a nil value (%s '%s')"):format(kind, name)
end

--- Lua's wording for a nil called.
function rh.nil_call(kind, name)
  if _VERSION == "Lua 5.1" then return ("attempt to call %s '%s' (a nil value)"):format(kind, name) end
  return ("attempt to call a nil value (%s '%s')"):format(kind, name)
end

--- What a script's `coroutine.yield` outside a coroutine raises ("@" for the script's
-- path): the same on every Lua, since the script's state has no coroutine of the host's.
function rh.yield_outside(line)
  return "@:" .. line .. ": attempt to yield from outside a coroutine"
end

--- The script's path in place of "@" in a message.
function rh.at(message, path)
  return (message:gsub("@", function() return path end))
end

rh.READ_ONLY = "the scene is read-only to rig scripts (keep your own values in state)"
rh.CLOSE_MSG = "the scene's objects are the host's: rig scripts cannot close them"
rh.PARENT_MSG = "the scene's objects are the host's: rig scripts cannot change their parents"
rh.FUNCTION_OUT = "scene function: function of the script's cannot be handed to the host"

return rh
