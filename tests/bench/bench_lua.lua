--- bench_lua: solves per second of `ik.chain`'s `c:solve` (FABRIK in C, one call)
-- against FABRIK written in plain Lua (plain_fabrik.lua, next to this file), on the
-- workload of bench_solvers.c.
--
-- Workload: unit bones laid straight along +X (3, 10 and 100 joints), 1,000 targets at
-- random directions and 0.1 to 0.95 of the chain's length from the root (fixed seed,
-- made here: the same on every Lua, not bench_solvers.c's sequence), tolerance
-- 1e-4 x length, at most 20 iterations, cold start. Each time is the median of 5
-- repetitions of os.clock() over all targets, after one untimed warm-up pass.
--
-- Cold start: before each solve the straight pose is restored, with `c:set_positions`
-- from a list of ik.vec3 built beforehand for the chain, and by copying a flat array of
-- numbers built beforehand for plain Lua. The two restores cost different amounts, so
-- each is also timed alone (the same loop without the solve) and subtracted: the
-- solves/s columns are the solve alone, and the restore columns say what was taken off.
--
-- "0-it call": ns per `c:solve` on a target the tip is already on (no iteration): the
-- price of the call itself, validation and result included. bench_call (C) prints the C
-- job's own figure for the same.
--
-- Then the batch table: ns per chain when 10,000 chains are solved in one `b:solve()`
-- (ik.batch, at 1 and 2 threads), against the same chains solved one `c:solve()` at a
-- time, and (10-joint chains) against plain Lua. Ten-joint chains take the workload
-- above, one target each; two-bone limbs (3 joints, a pole) targets at 0.1 to 0.95 of
-- their reach. Every solve is a cold start from the straight pose: the FABRIK chains'
-- pose is restored before each pass and the two-bone limbs are `deterministic` (a
-- deterministic FABRIK chain would start folded near its root, which plain Lua does
-- not); the restores are timed apart and subtracted, as plain Lua's are. A batch's time is the `b:solve()`
-- alone, its results read after it (as plain Lua's loop only solves: each pose is left
-- where a caller reads it). Times are wall-clock (`ik.clock`: os.clock would add up the
-- threads), median of the repetitions.
--
--   scripts/env --build build/release lua5.4 tests/bench/bench_lua.lua
--   scripts/env --lua jit --build build/release luajit tests/bench/bench_lua.lua
-- Options: --quick (50 targets, 200 batched chains, 1 repetition: the test suite's
-- smoke run), --reps N, --targets N, --batch N (chains per batch). Exits 1 when two
-- ways of solving disagree on iterations (they run the same algorithm), 2 on bad
-- options.

local clock = os.clock
local unpack = table.unpack or unpack

local ik = require("ik")

-- plain_fabrik.lua sits next to this script.
local here = (arg and arg[0] or ""):match("^(.*[/\\])") or "./"
local plain_fabrik = dofile(here .. "plain_fabrik.lua")

local reps, ntargets, nbatch, quick = 5, 1000, 10000, false
do
  local i = 1
  while arg and arg[i] do
    local a = arg[i]
    if a == "--quick" then
      reps, ntargets, nbatch, quick = 1, 50, 200, true
    elseif (a == "--reps" or a == "--targets" or a == "--batch") and tonumber(arg[i + 1]) then
      local v = math.floor(tonumber(arg[i + 1]))
      if a == "--reps" then reps = v elseif a == "--targets" then ntargets = v else nbatch = v end
      i = i + 1
    else
      io.stderr:write("usage: bench_lua.lua [--quick] [--reps N] [--targets N] [--batch N]\n")
      os.exit(2)
    end
    i = i + 1
  end
  if reps < 1 or ntargets < 1 or nbatch < 1 then
    io.stderr:write("bench_lua.lua: reps, targets and batch must be at least 1\n")
    os.exit(2)
  end
end

local MAX_ITERATIONS = 20
local has_chain = type(ik.chain) == "function"
  or (type(ik.chain) == "table" and getmetatable(ik.chain) ~= nil)

-- Park-Miller "minimal standard" generator: exact in doubles and in 5.4's integers, so
-- every Lua draws the same targets.
local function rng(seed)
  local s = seed
  return function()
    s = (s * 16807) % 2147483647
    return s / 2147483647
  end
end

-- The workload for n joints: rest pose (flat numbers and ik.vec3 list), lengths,
-- targets (flat numbers and ik.vec3 list).
local function make_workload(n, count)
  local w = { n = n, length = n - 1, rest_flat = {}, rest_list = {}, len = {}, tflat = {}, tlist = {} }
  for i = 1, n do
    local x = (i - 1) * 1.0
    w.rest_flat[3 * i - 2], w.rest_flat[3 * i - 1], w.rest_flat[3 * i] = x, 0.0, 0.0
    w.rest_list[i] = ik.vec3(x, 0, 0)
  end
  for i = 1, n - 1 do w.len[i] = 1.0 end
  w.tolerance = 1e-4 * w.length
  local uniform = rng(20240611)
  for t = 1, count do
    local x, y, z, sq
    repeat
      x, y, z = 2 * uniform() - 1, 2 * uniform() - 1, 2 * uniform() - 1
      sq = x * x + y * y + z * z
    until sq <= 1 and sq >= 0.01
    local s = w.length * (0.1 + 0.85 * uniform()) / math.sqrt(sq)
    x, y, z = x * s, y * s, z * s
    w.tflat[3 * t - 2], w.tflat[3 * t - 1], w.tflat[3 * t] = x, y, z
    w.tlist[t] = ik.vec3(x, y, z)
  end
  w.count = count
  return w
end

-- One pass of each kind; each returns the iterations it counted (time is the caller's).

local function pass_chain(w, c)
  local rest, targets, iterations = w.rest_list, w.tlist, 0
  for t = 1, w.count do
    c:set_positions(rest)
    local _, _, it = c:solve(targets[t])
    iterations = iterations + it
  end
  return iterations
end

local function pass_chain_restore(w, c)
  local rest = w.rest_list
  for _ = 1, w.count do c:set_positions(rest) end
  return 0
end

local function pass_plain(w, p)
  local rest, targets, len, n, tol = w.rest_flat, w.tflat, w.len, w.n, w.tolerance
  local m, iterations = 3 * n, 0
  for t = 1, w.count do
    for k = 1, m do p[k] = rest[k] end
    local k = 3 * t
    local _, it = plain_fabrik(p, len, n, targets[k - 2], targets[k - 1], targets[k], MAX_ITERATIONS, tol)
    iterations = iterations + it
  end
  return iterations
end

local function pass_plain_restore(w, p)
  local rest, m = w.rest_flat, 3 * w.n
  for _ = 1, w.count do
    for k = 1, m do p[k] = rest[k] end
  end
  return 0
end

-- Median over reps of the seconds one pass takes, after an untimed warm-up pass whose
-- result (the iteration total, deterministic) is returned too.
local function median_time(pass, w, state)
  local result = pass(w, state)
  local times = {}
  for r = 1, reps do
    collectgarbage()
    local t0 = clock()
    pass(w, state)
    times[r] = clock() - t0
  end
  table.sort(times)
  return times[math.floor(reps / 2) + 1], result
end

-- ns per c:solve on a target the tip is on (0 iterations, nothing to restore).
local function zero_iteration_ns(w, c, target, calls)
  c:set_positions(w.rest_list)
  local _, _, it = c:solve(target)
  assert(it == 0, "the 0-iteration target took iterations")
  local times = {}
  for r = 1, reps do
    collectgarbage()
    local t0 = clock()
    for _ = 1, calls do c:solve(target) end
    times[r] = clock() - t0
  end
  table.sort(times)
  return times[math.floor(reps / 2) + 1] / calls * 1e9
end

local function rate(count, seconds)
  if seconds <= 0 then return math.huge end
  return count / seconds
end

print(string.format("%s, ik.core %s (%s); %d targets, tolerance 1e-4 x length, <= %d iterations, "
  .. "cold start; median of %d (os.clock)", jit and jit.version or _VERSION, ik._VERSION, ik.real,
  ntargets, MAX_ITERATIONS, reps))
if not has_chain then
  print("ik.chain is not in this build of ik.core yet: plain Lua only")
end
print()
print(string.format("%-6s %12s %12s %8s %8s %8s %11s %11s %11s %11s", "joints", "c:solve/s", "plain/s",
  "ratio", "it c", "it plain", "restore c", "restore pl", "0-it vec3", "0-it table"))

local disagree = false
for _, n in ipairs({ 3, 10, 100 }) do
  local w = make_workload(n, ntargets)
  local p = {}
  for k = 1, 3 * n do p[k] = w.rest_flat[k] end

  local plain_total, plain_its = median_time(pass_plain, w, p)
  local plain_restore = median_time(pass_plain_restore, w, p)
  local plain_solve = math.max(plain_total - plain_restore, 0)
  local plain_mean = plain_its / ntargets

  local cells = { n, "-", string.format("%12.0f", rate(ntargets, plain_solve)), "-", "-",
    string.format("%8.2f", plain_mean), "-", string.format("%9.0fns", plain_restore / ntargets * 1e9),
    "-", "-" }
  if has_chain then
    local c = ik.chain{ positions = w.rest_list, solver = "fabrik", iterations = MAX_ITERATIONS,
                        tolerance = w.tolerance, mode = "plain", deterministic = false }
    local chain_total, chain_its = median_time(pass_chain, w, c)
    local chain_restore = median_time(pass_chain_restore, w, c)
    local chain_solve = math.max(chain_total - chain_restore, 0)
    local chain_mean = chain_its / ntargets
    local calls = quick and 1000 or (n >= 100 and 100000 or 300000)
    local tip = w.rest_list[n]
    cells[2] = string.format("%12.0f", rate(ntargets, chain_solve))
    cells[4] = string.format("%7.2fx", rate(ntargets, chain_solve) / rate(ntargets, plain_solve))
    cells[5] = string.format("%8.2f", chain_mean)
    cells[7] = string.format("%9.0fns", chain_restore / ntargets * 1e9)
    cells[9] = string.format("%9.0fns", zero_iteration_ns(w, c, tip, calls))
    cells[10] = string.format("%9.0fns", zero_iteration_ns(w, c, { tip.x, tip.y, tip.z }, calls))
    -- Same algorithm, same targets: the iteration counts may differ only by rounding.
    if math.abs(chain_mean - plain_mean) > 0.02 * plain_mean + 0.05 then
      disagree = true
      cells[5] = cells[5] .. "!"
    end
  end
  print(string.format("%-6d %12s %12s %8s %8s %8s %11s %11s %11s %11s", unpack(cells)))
end
print()
print("solves/s: the solve alone (restore timed separately and subtracted); ratio = c:solve / plain;")
print("restore: ns per restore of the straight pose; 0-it: ns per c:solve already on target")

-- ---- batch: many chains per call ----

local has_batch = type(ik.batch) == "function" and type(ik.clock) == "function"

-- Median wall seconds of fn() over reps, after an untimed warm-up call whose result is
-- returned.
local function median_wall(fn)
  local result = fn()
  local times = {}
  for r = 1, reps do
    collectgarbage()
    local t0 = ik.clock()
    fn()
    times[r] = ik.clock() - t0
  end
  table.sort(times)
  return times[math.floor(reps / 2) + 1], result
end

-- count chains of n joints (10: FABRIK; 3: two-bone with a pole), each with its own
-- target from the workload's, all starting every solve from the straight pose.
local function make_chains(n, count)
  local w = make_workload(n, count)
  local chains = {}
  for i = 1, count do
    if n == 3 then
      chains[i] = ik.chain{ positions = w.rest_list, solver = "two_bone", tolerance = w.tolerance,
                            pole = { 1, 1, 1 }, deterministic = true, target = w.tlist[i] }
    else
      chains[i] = ik.chain{ positions = w.rest_list, solver = "fabrik", iterations = MAX_ITERATIONS,
                            tolerance = w.tolerance, deterministic = false, target = w.tlist[i],
                            mode = "plain" }
    end
  end
  return chains, w
end

-- The timed pass is the solve alone, as plain Lua's is: every chain's pose is where the
-- solve left it, and plain Lua's in its table. The sweeps are counted after it.
-- FABRIK chains are not `deterministic` (which would fold a start near the root, where
-- plain Lua starts from the straight pose): every pass restores their straight pose
-- first, timed apart (restore_pass) and subtracted, as plain Lua's restore is.
local function restore_all(chains, rest)
  if rest then
    for i = 1, #chains do chains[i]:set_positions(rest) end
  end
end

local function restore_pass(chains, rest)
  return function() restore_all(chains, rest) end
end

local function batch_pass(b, chains, rest)
  return function()
    restore_all(chains, rest)
    b:solve()
    return b
  end
end

local function batch_iterations(b)
  local iterations = 0
  for i = 1, #b do
    local _, _, it = b:result(i)
    iterations = iterations + it
  end
  return iterations
end

local function one_by_one_pass(chains, rest)
  return function()
    local iterations = 0
    restore_all(chains, rest)
    for i = 1, #chains do
      local _, _, it = chains[i]:solve()
      iterations = iterations + it
    end
    return iterations
  end
end

if has_batch then
  print()
  print(string.format("ik.batch: %d chains per call, ns per chain, wall clock (ik.clock), median of %d",
    nbatch, reps))
  print(string.format("%-10s %10s %10s %10s %10s %9s %9s %9s %8s", "chains", "batch 1t", "batch 2t",
    "c:solve", "plain", "1t/solve", "2t/solve", "2t/plain", "mean it"))
  for _, n in ipairs({ 10, 3 }) do
    local chains, w = make_chains(n, nbatch)
    local per = 1e9 / nbatch
    local rest = n ~= 3 and w.rest_list or nil
    local restore = median_wall(restore_pass(chains, rest))
    local one_time, one_its = median_wall(one_by_one_pass(chains, rest))
    local b1 = ik.batch{ chains = chains, threads = 1 }
    local b2 = ik.batch{ chains = chains, threads = 2 }
    local t1 = median_wall(batch_pass(b1, chains, rest))
    local t2 = median_wall(batch_pass(b2, chains, rest))
    one_time = math.max(one_time - restore, 1e-9)
    t1, t2 = math.max(t1 - restore, 1e-9), math.max(t2 - restore, 1e-9)
    local its1, its2 = batch_iterations(b1), batch_iterations(b2)
    b1:close()
    b2:close()
    local cells = { n == 3 and "two-bone" or "10-joint", string.format("%8.0fns", t1 * per),
      string.format("%8.0fns", t2 * per), string.format("%8.0fns", one_time * per), "-",
      string.format("%8.2fx", one_time / t1), string.format("%8.2fx", one_time / t2), "-",
      string.format("%8.2f", one_its / nbatch) }
    -- The batch is chain:solve on each chain, bit for bit: the same iterations exactly.
    if its1 ~= one_its or its2 ~= one_its then
      disagree = true
      cells[9] = cells[9] .. "!"
    end
    if n == 10 then
      local p = {}
      local flat, targets, len, tol, m = w.rest_flat, w.tflat, w.len, w.tolerance, 3 * n
      local plain_time, plain_its = median_wall(function()
        local iterations = 0
        for t = 1, nbatch do
          for k = 1, m do p[k] = flat[k] end
          local _, it = plain_fabrik(p, len, n, targets[3 * t - 2], targets[3 * t - 1], targets[3 * t],
            MAX_ITERATIONS, tol)
          iterations = iterations + it
        end
        return iterations
      end)
      local restore_time = median_wall(function()
        for _ = 1, nbatch do
          for k = 1, m do p[k] = flat[k] end
        end
      end)
      plain_time = math.max(plain_time - restore_time, 1e-9)
      cells[5] = string.format("%8.0fns", plain_time * per)
      cells[8] = string.format("%8.2fx", plain_time / t2)
      if math.abs(plain_its - one_its) > 0.02 * plain_its + 0.05 * nbatch then
        disagree = true
        cells[9] = cells[9] .. "!"
      end
    end
    print(string.format("%-10s %10s %10s %10s %10s %9s %9s %9s %8s", unpack(cells)))
    for _, c in ipairs(chains) do c:close() end
  end
  print()
  print("batch 1t/2t: one b:solve() over all chains on 1/2 threads; c:solve: the same chains one call")
  print("at a time; plain: FABRIK in plain Lua (restore subtracted); ratios: speed-ups (higher is better)")
else
  print()
  print("ik.batch is not in this build of ik.core: no batch table")
end

if disagree then
  print("FAIL: two ways of solving disagree on iterations (marked !)")
  os.exit(1)
end
