--- A crowd's buffers as plain arrays: LuaJIT's FFI where there is one, tables elsewhere.
--
-- `local views = require("ik.crowd").views(c)` gives `views.roots`, `views.targets`,
-- `views.rotations` and `views.positions`, each indexed from 1 (instance i's k-th
-- number at `(i - 1) * stride + k`, strides in `views.stride`), and two calls a frame:
-- `views.push()` before `c:solve(dt)` (the roots and targets in), `views.pull()` after
-- (the pose out). Under LuaJIT the arrays are the crowd's own memory, reached through
-- the FFI (`views.ffi` is true): push and pull then do nothing and no number costs a
-- call. Elsewhere they are tables that push and pull move in one call each
-- (`buffer:set`, `buffer:get`). The views keep the crowd's buffers, and so its memory,
-- alive; use them between solves only, and not after `c:close()`.
-- @module ik.crowd

local M = {}

local has_ffi, ffi = pcall(require, "ffi")
has_ffi = has_ffi and rawget(_G, "jit") ~= nil -- luacheck: ignore 143

local names = { "roots", "targets", "rotations", "positions" }

-- The 1-based array over buffer b.
local function array(b)
  if has_ffi then
    -- One element before the first: index 1 is the buffer's first number.
    return ffi.cast(b.type .. " *", ffi.cast("uintptr_t", b:address())) - 1
  end
  return b:get()
end

--- The crowd's buffers as arrays.
-- @tparam ik.crowd c
-- @tparam[opt] boolean tables true for tables even where the FFI is (tests, comparisons)
-- @treturn table views: roots, targets, rotations, positions, stride (by name), buffers,
-- ffi, push, pull
function M.views(c, tables)
  local use_ffi = has_ffi and not tables
  local v = { buffers = {}, stride = {}, ffi = use_ffi }
  for _, name in ipairs(names) do
    if name ~= "targets" or c.template.targets > 0 then
      local b = c:buffer(name)
      v.buffers[name] = b
      v.stride[name] = b.stride
      v[name] = use_ffi and array(b) or b:get()
    end
  end
  local roots, targets, rotations, positions = v.roots, v.targets, v.rotations, v.positions
  local broots, btargets = v.buffers.roots, v.buffers.targets
  local brotations, bpositions = v.buffers.rotations, v.buffers.positions
  if use_ffi then
    v.push = function() end
    v.pull = function() end
  else
    v.push = function()
      broots:set(roots)
      if btargets then btargets:set(targets) end
    end
    v.pull = function()
      brotations:get(rotations)
      bpositions:get(positions)
    end
  end
  return v
end

--- Whether views use the FFI here.
M.ffi = has_ffi

return M
