--- Inverse kinematics for Lua: `local ik = require("ik")`.
--
-- Re-exports the native module `ik.core` (vectors, quaternions, chains, poles and
-- constraints) together with the Lua helpers of this package. Sets no globals.
-- @module ik

local core = require("ik.core")

local ik = {}
for name, value in pairs(core) do
  ik[name] = value
end

return ik
