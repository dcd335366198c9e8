--- bench_pattern: the step-limited pattern matcher (ik.core._sandbox_patterns) against
-- the host's string library on typical patterns: time per call of each, their ratio, and
-- the steps the matcher charged per subject byte. Each case is a loop of N calls; the
-- figure is the median of the repetitions (ik.clock).
--
--   scripts/env --build build/release lua5.4 tests/bench/bench_pattern.lua
-- Options: --quick (100 calls, 1 repetition: the test suite's smoke run), --calls N,
-- --reps N. Exits 2 on bad options.

local ik = require("ik")
local core = require("ik.core")

local calls, reps = 2000, 7
do
  local i = 1
  while arg and arg[i] do
    local a, v = arg[i], tonumber(arg[i + 1])
    if a == "--quick" then
      calls, reps = 100, 1
    elseif (a == "--calls" or a == "--reps") and v and v >= 1 then
      if a == "--calls" then calls = math.floor(v) else reps = math.floor(v) end
      i = i + 1
    else
      io.stderr:write("usage: bench_pattern.lua [--quick] [--calls N] [--reps N]\n")
      os.exit(2)
    end
    i = i + 1
  end
end

-- A 1 kB line of script-like text: words, numbers, punctuation.
local words = {}
local vocabulary = { "bone", "hip_l", "12.5", "x=3", "(arm)", "leg", "--", "Spine2" }
for k = 1, 240 do words[k] = vocabulary[k % 8 + 1] end
local text = table.concat(words, " "):sub(1, 1000)
local cases = {
  { "find plain word", "find", text, "Spine9", 1, true },
  { "find literal (no specials)", "find", text, "Spine9" },
  { "find %d+%.%d+", "find", text, "%d+%.%d+" },
  { "find anchored ^%s*(%w+)", "find", text, "^%s*(%w+)" },
  { "find [%w_]+ at the end", "find", text .. " zz_top", "zz_[%w_]+$" },
  { "match (%w+)=(%w+)", "match", text, "(%w+)=(%w+)" },
  { "match %b()", "match", text, "%b()" },
  { "gsub %s+ -> ' '", "gsub", text, "%s+", " " },
  { "gsub %w+ -> <%0>", "gsub", text, "%w+", "<%0>" },
  { "gsub %f[%a]%a+ -> function", "gsub", text, "%f[%a]%a+", function(w) return w end },
  { "gsub .- (no match)", "gsub", text, "x.-y", "" },
}

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local function time(f, ...)
  local ts = {}
  for r = 1, reps do
    local t0 = ik.clock()
    for _ = 1, calls do f(...) end
    ts[r] = (ik.clock() - t0) / calls
  end
  return median(ts)
end

local unpack = table.unpack or unpack
local P = core._sandbox_patterns()
local B = core._sandbox_patterns(1e15)
print(("%d calls a case, median of %d; subject %d bytes; us per call"):format(calls, reps, #text))
print(("%-30s %10s %10s %10s %8s %8s %10s"):format("case", "string", "matcher", "budgeted", "ratio",
  "budget", "steps/B"))
local sum_ratio, n = 0, 0
for _, c in ipairs(cases) do
  local label, fname = c[1], c[2]
  local args = { unpack(c, 3) }
  local host = time(string[fname], unpack(args))
  local mine = time(P[fname], unpack(args))
  local budgeted = time(B[fname], unpack(args))
  local S = core._sandbox_patterns()
  S[fname](unpack(args))
  print(("%-30s %10.3f %10.3f %10.3f %8.2f %8.2f %10.2f"):format(label, 1e6 * host, 1e6 * mine,
    1e6 * budgeted, mine / host, budgeted / host, S.steps() / #args[1]))
  sum_ratio, n = sum_ratio + mine / host, n + 1
end
print(("mean ratio matcher / string: %.2f"):format(sum_ratio / n))
