--- The baseline the Lua benchmark compares `ik.chain` against: FABRIK written in plain
-- Lua straight from the seed's pseudocode, exactly as tests/bench/baseline_fabrik.c is
-- in C, the way a Lua programmer after speed would write it: joints in one flat array
-- of numbers (x1, y1, z1, x2, y2, z2, ...), locals for everything hot, no table per
-- point, no allocation in a solve.
--
-- Forward pass tip to root (tip on the target, each joint put at its bone length from
-- the next along the direction towards it), backward pass root to tip (root back on its
-- anchor, each joint put at its bone length from the previous), a safe normalise for
-- coincident joints (+Y when the squared length is at most 1e-12), out-of-reach targets
-- laid straight with no sweep, convergence tested after each full sweep on squared
-- distances.
--
--   local fabrik = dofile("tests/bench/plain_fabrik.lua")
--   local reached, iterations = fabrik(p, lengths, n, tx, ty, tz, max_iterations, tolerance)

local sqrt = math.sqrt

--- Solves in place.
-- @tparam {number,...} p 3n coordinates, root first; in/out
-- @tparam {number,...} len n - 1 bone lengths (bone i joins joints i and i + 1)
-- @int n joint count (>= 2)
-- @number tx target x
-- @number ty target y
-- @number tz target z
-- @int max_iterations most full sweeps
-- @number tolerance distance under which the tip counts as there
-- @treturn boolean whether the tip ended within tolerance
-- @treturn int sweeps done (0 when the target is out of reach)
local function fabrik(p, len, n, tx, ty, tz, max_iterations, tolerance)
  local rx, ry, rz = p[1], p[2], p[3]
  local total = 0
  for i = 1, n - 1 do total = total + len[i] end

  -- Out of reach: straight towards the target.
  local dx, dy, dz = tx - rx, ty - ry, tz - rz
  local sq = dx * dx + dy * dy + dz * dz
  if sq >= total * total then
    if sq > 1e-12 then
      local l = sqrt(sq)
      dx, dy, dz = dx / l, dy / l, dz / l
    else
      dx, dy, dz = 0, 1, 0
    end
    local x, y, z = rx, ry, rz
    for i = 1, n - 1 do
      local l, k = len[i], 3 * i
      x, y, z = x + dx * l, y + dy * l, z + dz * l
      p[k + 1], p[k + 2], p[k + 3] = x, y, z
    end
    return false, 0
  end

  local tol2 = tolerance * tolerance
  local tip = 3 * (n - 1)
  for iter = 1, max_iterations do
    -- Forward: tip on the target, then joints n - 1 .. 1, each from the one after it.
    local x, y, z = tx, ty, tz
    p[tip + 1], p[tip + 2], p[tip + 3] = x, y, z
    for i = n - 1, 1, -1 do
      local k = 3 * (i - 1)
      dx, dy, dz = p[k + 1] - x, p[k + 2] - y, p[k + 3] - z
      sq = dx * dx + dy * dy + dz * dz
      if sq > 1e-12 then
        local l = sqrt(sq)
        dx, dy, dz = dx / l, dy / l, dz / l
      else
        dx, dy, dz = 0, 1, 0
      end
      local l = len[i]
      x, y, z = x + dx * l, y + dy * l, z + dz * l
      p[k + 1], p[k + 2], p[k + 3] = x, y, z
    end
    -- Backward: root back, then joints 2 .. n, each from the one before it.
    x, y, z = rx, ry, rz
    p[1], p[2], p[3] = x, y, z
    for i = 1, n - 1 do
      local k = 3 * i
      dx, dy, dz = p[k + 1] - x, p[k + 2] - y, p[k + 3] - z
      sq = dx * dx + dy * dy + dz * dz
      if sq > 1e-12 then
        local l = sqrt(sq)
        dx, dy, dz = dx / l, dy / l, dz / l
      else
        dx, dy, dz = 0, 1, 0
      end
      local l = len[i]
      x, y, z = x + dx * l, y + dy * l, z + dz * l
      p[k + 1], p[k + 2], p[k + 3] = x, y, z
    end
    -- Converged? (x, y, z is the tip.)
    dx, dy, dz = x - tx, y - ty, z - tz
    if dx * dx + dy * dy + dz * dz < tol2 then return true, iter end
  end
  return false, max_iterations
end

return fabrik
