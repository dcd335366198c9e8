--- chain:solve(vec3) through LuaJIT's ffi: what lua/ik/init.lua installs under LuaJIT.
--
-- The chain's `__index` becomes a Lua function (which a trace runs inline) that hands an
-- open chain's methods from a Lua table, `solve` being this module's wrapper; fields and
-- anything else go to the C `__index` as before. The wrapper calls the binding's C solve
-- with the chain's block, taken from a weak-keyed table that only the binding's
-- `_chain_ffi` fills (never from the caller), and an ik.vec3's block; every other case
-- (a table target, a closed pole, a bone chain, bad input) goes to the C `solve`, so that
-- its results and refusals are unchanged. A rig script's state has neither ffi nor
-- `_chain_ffi`: this runs only in the host's.
-- @module ik.fast

local ffi = require("ffi")

return function(core, chain_ffi)
  local probe = core.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } } }
  local chain_meta = getmetatable(probe)
  local vec3_meta = getmetatable(core.vec3(0, 0, 0))
  local c_index = chain_meta.__index
  local c_solve, c_close = c_index(probe, "solve"), c_index(probe, "close")
  -- The C __index's methods (its first upvalue), so that a new method needs no list here.
  local debug = rawget(_G, "debug")
  local c_methods = debug and select(2, debug.getupvalue(c_index, 1))
  if type(c_methods) ~= "table" or rawget(c_methods, "solve") ~= c_solve then
    return
  end
  local solve_ffi = ffi.cast("int (*)(void *, const void *, double *)", chain_ffi())
  local out = ffi.new("double[2]")
  local blocks = setmetatable({}, { __mode = "k" }) -- chain -> its block (a void * cdata)

  -- Tail calls into C throughout: an error names the caller's line and function.
  -- The arguments go to C as given: a missing one is named "no value", not nil.
  local function solve(...)
    local c, target = ...
    local block = blocks[c]
    if block ~= nil and type(target) == "userdata" and getmetatable(target) == vec3_meta then
      local reached = solve_ffi(block, target, out)
      if reached >= 0 then
        return reached == 1, out[0], out[1]
      end
    end
    return c_solve(...)
  end

  local function close(...)
    local c = ...
    if blocks[c] ~= nil then
      blocks[c] = nil
    end
    return c_close(...)
  end

  -- An open chain's methods from a Lua table, which a trace reads (and it stitches
  -- around the C ones): `solve` and `close` are the wrappers, the rest the C functions.
  -- Fields, and any key of a closed chain or of something else, go to the C __index.
  local methods = {}
  for name, method in pairs(c_methods) do
    methods[name] = method
  end
  methods.solve, methods.close = solve, close

  chain_meta.__index = function(c, key)
    if blocks[c] == nil then
      local block = chain_ffi(c) -- nil unless c is an open ik.chain
      if block == nil then
        return c_index(c, key)
      end
      blocks[c] = ffi.cast("void *", block) -- a light userdata is no argument a trace can pass
    end
    local method = methods[key]
    if method ~= nil then
      return method
    end
    return c_index(c, key)
  end
end
