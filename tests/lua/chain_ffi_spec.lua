-- chain:solve(vec3) under LuaJIT goes through lua/ik/fast.lua and the binding's ffi entry;
-- every other call, and every other Lua, through the C `solve`. Both must give the same
-- bits: here random chains and targets are solved twice, once with an ik.vec3 (the ffi
-- path under LuaJIT) and once with a table (always the C path), and compared bit for bit.
local ik = require("ik")

local jit = rawget(_G, "jit")

-- Round-trips a double (%a is not Lua 5.1's), and tells -0 from 0.
local function bits(x)
  return ("%.17g"):format(x) .. (1 / x < 0 and "-" or "+")
end

local function random_chain(rng, with_pole)
  local n = rng(2, 12)
  local p, at = {}, { 0, 0, 0 }
  for i = 1, n do
    p[i] = { at[1], at[2], at[3] }
    at = { at[1] + rng() - 0.5, at[2] + rng() + 0.1, at[3] + rng() - 0.5 }
  end
  local solvers = { "fabrik", "ccd", "dls" }
  local spec = {
    positions = p,
    solver = n == 3 and rng() < 0.25 and "two_bone" or solvers[rng(1, 3)],
    iterations = rng(1, 30),
    weight = rng() < 0.3 and rng() or 1,
    deterministic = rng() < 0.5,
    mode = rng() < 0.5 and "plain" or "refined",
  }
  if with_pole then
    spec.pole = ik.pole{ position = { rng() * 4 - 2, rng() * 4 - 2, 2 }, weight = rng() }
  end
  return spec, n
end

local function same_chain(a, b, n, what)
  for i = 1, n do
    local ax, ay, az = a:joint_xyz(i)
    local bx, by, bz = b:joint_xyz(i)
    local want, got = bits(bx) .. bits(by) .. bits(bz), bits(ax) .. bits(ay) .. bits(az)
    assert.are.equal(want, got, what .. " joint " .. i)
  end
end

describe("chain:solve(vec3) through LuaJIT's ffi", function()
  it("is the wrapper under LuaJIT and the C solve elsewhere", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 } } }
    assert.are.equal(jit and "Lua" or "C", debug.getinfo(c.solve, "S").what)
    -- only `solve` (and `close`, which forgets the chain) changed hands
    assert.are.equal("C", debug.getinfo(c.joint, "S").what)
    assert.is_nil(ik._chain_ffi)
    assert.is_nil(require("ik.core")._chain_ffi)
  end)

  it("gives the C path's bits on random chains and targets, warm starts included", function()
    local seed = 20261202
    local rng = function(a, b)
      seed = (seed * 1103515245 + 12345) % 2147483648
      local u = seed / 2147483648
      if a then return a + math.floor(u * (b - a + 1)) end
      return u
    end
    for round = 1, 200 do
      local spec, n = random_chain(rng, round % 3 == 0)
      local fast, slow = ik.chain(spec), ik.chain(spec)
      if round % 5 == 0 then
        for i = 1, n - 1 do
          fast:set_constraint(i, ik.cone{ angle = 0.6 })
          slow:set_constraint(i, ik.cone{ angle = 0.6 })
        end
      end
      for step = 1, 6 do
        local len = fast:length()
        local t = { (rng() - 0.5) * 2.6 * len, (rng() - 0.5) * 2.6 * len, (rng() - 0.5) * 2.6 * len }
        local what = ("round %d step %d (%s)"):format(round, step, spec.solver)
        local r1, d1, i1 = fast:solve(ik.vec3(t[1], t[2], t[3]))
        local r2, d2, i2 = slow:solve(t)
        assert.are.equal(r2, r1, what)
        assert.are.equal(bits(d2), bits(d1), what)
        assert.are.equal(i2, i1, what)
        assert.are.equal(math.type and math.type(i2) or type(i2), math.type and math.type(i1) or type(i1))
        same_chain(fast, slow, n, what)
      end
    end
  end)

  it("hands every other case to the C solve, with its messages", function()
    local pole = ik.pole{ position = { 0, 1, 1 } }
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }, pole = pole }
    local _, nan = pcall(c.solve, c, { 0 / 0, 0, 0 })
    assert.truthy(tostring(nan):find("finite vec3 expected", 1, true), nan)
    pole:close()
    local ok, msg = pcall(c.solve, c, ik.vec3(0, 1, 1))
    assert.is_false(ok)
    assert.truthy(msg:find("attempt to use a closed ik.pole", 1, true), msg)
    -- a fake chain never reaches the ffi entry: the C solve names it
    ok, msg = pcall(c.solve, setmetatable({}, getmetatable(c)), ik.vec3(0, 1, 1))
    assert.is_false(ok)
    assert.truthy(msg:find("ik.chain expected", 1, true), msg)
    c:close()
    ok, msg = pcall(function() return c:solve(ik.vec3(0, 1, 1)) end)
    assert.is_false(ok)
    assert.truthy(msg:find("attempt to use a closed ik.chain", 1, true), msg)
    ok, msg = pcall(function() return c.solve end)
    assert.is_false(ok)
    assert.truthy(msg:find("attempt to use a closed ik.chain", 1, true), msg)
  end)
end)
