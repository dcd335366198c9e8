--- bench_api: ns per call of what a rig script calls every frame: ik.vec3 arithmetic and
-- methods, and reading and moving ik.bones and ik.nodes. Each is a loop of N calls in
-- plain Lua; the figure is the median of the repetitions (ik.clock), the empty loop's
-- time taken off. The price of a call from Lua into C is most of each: checking the
-- arguments' types, reading a vector argument, making or filling the result.
--
--   scripts/env --build build/release lua5.4 tests/bench/bench_api.lua
--   scripts/env --lua jit --build build/release luajit tests/bench/bench_api.lua
-- Options: --quick (10,000 calls, 1 repetition: the test suite's smoke run), --calls N,
-- --reps N. Exits 2 on bad options.

local ik = require("ik")

local calls, reps = 1000000, 7
do
  local i = 1
  while arg and arg[i] do
    local a, v = arg[i], tonumber(arg[i + 1])
    if a == "--quick" then
      calls, reps = 10000, 1
    elseif (a == "--calls" or a == "--reps") and v and v >= 1 then
      if a == "--calls" then calls = math.floor(v) else reps = math.floor(v) end
      i = i + 1
    else
      io.stderr:write("usage: bench_api.lua [--quick] [--calls N] [--reps N]\n")
      os.exit(2)
    end
    i = i + 1
  end
end

local a, b, out = ik.vec3(1, 2, 3), ik.vec3(0.5, 0.25, 1), ik.vec3(0, 0, 0)
local q, qout = ik.quat.axis_angle(ik.vec3(0, 1, 0), 0.3), ik.quat(0, 0, 0, 1)
local sk = ik.skeleton{ { name = "root", position = { 0, 1, 0 } },
                        { name = "child", parent = "root", position = { 0, 1, 0 } } }
local bone, child = sk:bone("root"), sk:bone("child")
local node = ik.node{ position = { 0, 0, 0 } }
local xyz = { 1, 2, 3 }

-- Each case is a loop: the empty one is timed too and taken off.
local cases = {
  { "a + b (new vec3)", function(n) local c for _ = 1, n do c = a + b end return c end },
  { "a:add(b, out)", function(n) for _ = 1, n do a:add(b, out) end end },
  { "a:dot(b)", function(n) local c for _ = 1, n do c = a:dot(b) end return c end },
  { "q * a (rotate)", function(n) local c for _ = 1, n do c = q * a end return c end },
  { "bone:get_position(out)", function(n) for _ = 1, n do child:get_position(out) end end },
  { "bone:get_rotation(qout)", function(n) for _ = 1, n do child:get_rotation(qout) end end },
  { "bone:set_position({x,y,z})", function(n) for _ = 1, n do bone:set_position(xyz) end end },
  { "bone:set_rotation(q)", function(n) for _ = 1, n do bone:set_rotation(q) end end },
  { "node:set_position(vec3)", function(n) for _ = 1, n do node:set_position(a) end end },
  { "node:get_position(out)", function(n) for _ = 1, n do node:get_position(out) end end },
}

local function median(list)
  table.sort(list)
  return list[math.floor(#list / 2) + 1]
end

local function time(fn)
  local t = {}
  for r = 1, reps do
    local t0 = ik.clock()
    fn(calls)
    t[r] = ik.clock() - t0
  end
  return median(t)
end

local empty = time(function(n) for _ = 1, n do end end)
print(string.format("%s, ik.core %s (%s); %d calls, median of %d", jit and jit.version or _VERSION,
  ik._VERSION, ik.real, calls, reps))
print()
print(string.format("%-28s %10s", "call", "ns"))
for _, case in ipairs(cases) do
  case[2](calls) -- warm-up (LuaJIT compiles the loop)
  print(string.format("%-28s %10.1f", case[1], (time(case[2]) - empty) / calls * 1e9))
end
