--- Inverse kinematics for Lua: `local ik = require("ik")`.
--
-- Re-exports the native module `ik.core` (vectors, quaternions, chains, poles and
-- constraints) together with the Lua helpers of this package. Sets no globals.
-- @module ik

local core = require("ik.core")

-- Chain addresses: for lua/ik/fast.lua alone, so out of ik.core once taken.
local chain_ffi = core._chain_ffi
core._chain_ffi = nil

local ik = {}
for name, value in pairs(core) do
  ik[name] = value
end

-- LuaJIT: c:solve(vec3) through the ffi (a rig script's state has neither).
if chain_ffi and rawget(_G, "jit") then
  local has_ffi = pcall(require, "ffi")
  if has_ffi then
    require("ik.fast")(core, chain_ffi)
  end
end

return ik
