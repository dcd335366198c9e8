--- bench_motion: the motion-quality suite's table (tests/lua/motion_quality.lua,
-- docs/motion.md): every rig and solver on scripted target paths at 30, 60 and 144 Hz,
-- with flips, added jerk and 30/60/144 Hz agreement after a second, and the rows over
-- the thresholds (0 flips, agreement within 1e-3 of the limb) listed after it; then what
-- a point chain's start costs: sweeps over 61 frames of the README's chain on a fast
-- circle, warm start against the pose given (docs/motion.md, "Where a point chain
-- starts").
--
--   scripts/env --build build/release lua5.4 tests/bench/bench_motion.lua
-- Options: --quick (the chain rows only: the test suite's smoke run), --only TEXT (rows
-- whose subject and path contain TEXT). Exits 2 on bad options.

local here = (arg and arg[0] or ""):match("^(.*)[/\\][^/\\]*$") or "."
package.path = here .. "/../lua/?.lua;" .. package.path
local M = require("motion_quality")

local only
do
  local i = 1
  while arg and arg[i] do
    if arg[i] == "--quick" then
      only = "chain two_bone"
    elseif arg[i] == "--only" and arg[i + 1] then
      only = arg[i + 1]
      i = i + 1
    else
      io.stderr:write("usage: bench_motion.lua [--quick] [--only TEXT]\n")
      os.exit(2)
    end
    i = i + 1
  end
end

local rows = M.run(only)
print(M.table(rows))
local over = M.failures(rows)
print(string.format("\n%d rows, %d over the thresholds (0 flips, agreement within %g of the limb)%s", #rows,
  #over, M.AGREEMENT, #over > 0 and ":" or ""))
for _, r in ipairs(over) do
  print(string.format("  %s / %s: %d flips, %.3g limb lengths apart", r.subject, r.path, r.flips,
    r.agreement))
end

if only then return end
local ik = require("ik")
print("\nsweeps over 61 frames (60 Hz) of the README's chain on a circle of radius 0.9, 2 laps a second:")
print("| solver | warm start | from the pose given |")
for _, solver in ipairs({ "fabrik", "ccd", "dls" }) do
  local sweeps = {}
  for k, deterministic in ipairs({ false, true }) do
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } }, solver = solver,
                        iterations = solver == "ccd" and 40 or 20, tolerance = 1e-3,
                        deterministic = deterministic }
    c.pole = ik.pole{ position = { 1, 2, 0 } }
    local total, p = 0, ik.vec3()
    for f = 0, 60 do
      local phi = 2 * math.pi * 2 * f / 60
      p:set(1.5, 0.9 + 0.9 * math.cos(phi), 0.6 + 0.9 * math.sin(phi))
      local _, _, it = c:solve(p)
      total = total + it
    end
    sweeps[k] = total
  end
  print(string.format("| %s | %d | %d |", solver, sweeps[1], sweeps[2]))
end
