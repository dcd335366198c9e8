-- The step-limited pattern matcher (ik.core._sandbox_patterns, src/lua/ikl_pattern.c):
-- the same outcomes as the host's string.find, match, gmatch and gsub on every case of
-- pattern_cases.lua, and a seeded random sweep; the budget stops a catastrophic pattern
-- after the steps it allows and leaves the state usable.
--
-- The matcher has Lua 5.4's semantics everywhere. On Lua 5.4 it is compared with the
-- host's library, error messages included. On Lua 5.1 and LuaJIT it is compared with the
-- host where 5.1 agrees with 5.4, and otherwise (and for every error) with the 5.4
-- outcome the case records (checked against the host on 5.4).
local core = require("ik.core")
local data = require("tests.lua.pattern_cases")
local show = data.show

local is54 = _VERSION == "Lua 5.4" and not rawget(_G, "jit")
local pack = table.pack or function(...) return { n = select("#", ...), ... } end
local unpack = table.unpack or unpack

-- Called through one local name, so that argument errors name the function alike ('f').
local function call(f, ...) return f(...) end

local function gmatch_all(gmatch, ...)
  local it = gmatch(...)
  local out = {}
  for _ = 1, 1000 do
    local r = pack(it())
    if r[1] == nil then return out end
    local vals = {}
    for i = 1, r.n do vals[i] = show(r[i]) end
    out[#out + 1] = "{" .. table.concat(vals, " ") .. "}"
  end
  error("gmatch did not end")
end

-- "ok <values>" or "err <message>" (the message without its "file:line: " prefix).
local function outcome(lib, name, ...)
  local r
  if name == "gmatch" then
    r = pack(pcall(gmatch_all, lib.gmatch, ...))
    if r[1] then r = pack(true, unpack(r[2])) end
  else
    r = pack(pcall(call, lib[name], ...))
  end
  if not r[1] then
    -- How the function is named is the interpreter's doing ('f', or '?' on LuaJIT).
    local msg = tostring(r[2]):gsub("^[^\n]-:%d+: ", ""):gsub("^(bad argument #%d+ to )'[^']*'", "%1'f'")
    return "err " .. msg
  end
  local vals = { "ok" }
  for i = 2, r.n do vals[#vals + 1] = (name == "gmatch") and r[i] or show(r[i]) end
  return table.concat(vals, " ")
end

local function nargs(case)
  local n = 1
  for k in pairs(case) do
    if type(k) == "number" and k > n then n = k end
  end
  return n
end

describe("ik.core._sandbox_patterns", function()
  local P = core._sandbox_patterns()

  it("returns find, match, gmatch, gsub and steps, on a budget of their own", function()
    for _, k in ipairs({ "find", "match", "gmatch", "gsub", "steps" }) do
      assert.are.equal("function", type(P[k]))
    end
    local Q = core._sandbox_patterns()
    local before = P.steps()
    Q.find(("x"):rep(100), "%%d")
    assert.are.equal(before, P.steps())
    assert.is_true(Q.steps() >= 100)
  end)

  it("checks its limit", function()
    local ok, msg = pcall(core._sandbox_patterns, -1)
    assert.is_false(ok)
    assert.is_truthy(msg:find("number of steps in [0, 2^53) expected", 1, true), msg)
    ok, msg = pcall(core._sandbox_patterns, "x")
    assert.is_false(ok)
    assert.is_truthy(msg:find("number expected, got string", 1, true), msg)
  end)

  describe("gives the string library's outcomes", function()
    for i, case in ipairs(data.cases) do
      local name = case[1]
      local n = nargs(case)
      local label = ("case %d: %s(%s)"):format(i, name, (function()
        local t = {}
        for k = 2, n do t[#t + 1] = show(case[k]):sub(1, 40) end
        return table.concat(t, ", ")
      end)())
      it(label, function()
        local mine = outcome(P, name, unpack(case, 2, n))
        if is54 then
          local host = outcome(string, name, unpack(case, 2, n))
          if case.v54 then assert.are.equal(case.v54, host) end
          assert.are.equal(host, mine)
        elseif case.v54 then
          assert.are.equal(case.v54, mine)
        else
          assert.are.equal(outcome(string, name, unpack(case, 2, n)), mine)
        end
      end)
    end
  end)

  -- Random patterns and subjects over a small alphabet, so that they match often; each
  -- run first on a budget, so that the host's matcher is only asked what is known to end.
  if is54 then
    it("agrees with the host on 3000 seeded random patterns", function()
      local atoms = { "a", "b", ".", "%a", "%d", "[ab]", "[^a]", "[a-c]", "%b()", "%f[%a]", "%1", "()", "(",
        ")", "^", "$", "%", "[", "]", "x" }
      local suffixes = { "", "", "", "*", "+", "-", "?" }
      local subject_chars = { "a", "b", "c", "1", "(", ")", " ", "x" }
      local seed = 12345
      local function rnd(n)
        seed = (seed * 1103515245 + 12345) % 2147483648
        return seed % n + 1
      end
      local compared, stopped = 0, 0
      for _ = 1, 3000 do
        local p, s = {}, {}
        for k = 1, rnd(6) do p[k] = atoms[rnd(#atoms)] .. suffixes[rnd(#suffixes)] end
        for k = 1, rnd(12) - 1 do s[k] = subject_chars[rnd(#subject_chars)] end
        p, s = table.concat(p), table.concat(s)
        local fname = ({ "find", "match", "gmatch", "gsub" })[rnd(4)]
        local extra = fname == "gsub" and "<%0>" or nil
        local B = core._sandbox_patterns(1e5)
        local mine = outcome(B, fname, s, p, extra)
        if mine:find("pattern step budget exceeded", 1, true) then
          stopped = stopped + 1
        else
          compared = compared + 1
          assert.are.equal(outcome(string, fname, s, p, extra), mine, ("%s(%q, %q)"):format(fname, s, p))
        end
      end
      assert.is_true(compared > 2900, compared)
      assert.is_true(stopped < 100, stopped)
    end)
  end
end)

describe("the step budget", function()
  local catastrophic = ("a"):rep(2e4)

  it("stops ('a'):rep(2e4):find('.-.-.-.-.-b') after the steps it allows", function()
    local B = core._sandbox_patterns(1e6)
    local ok, msg = pcall(B.find, catastrophic, ".-.-.-.-.-b")
    assert.is_false(ok)
    assert.is_truthy(msg:find("pattern step budget exceeded", 1, true), msg)
    -- Charged at most 1024 steps apart: the one that went past the limit raised.
    local steps = B.steps()
    assert.is_true(steps > 1e6 and steps <= 1e6 + 1024, steps)
  end)

  it("raises with the caller's position, and from every function", function()
    local B = core._sandbox_patterns(1000)
    local ok, msg = pcall(function()
      local r = B.match(catastrophic, ".-.-.-b") -- no tail call: LuaJIT's would lose the position
      return r
    end)
    assert.is_false(ok)
    assert.is_truthy(msg:find("^[^:]*pattern_spec%.lua:%d+: pattern step budget exceeded"), msg)
    -- Spent: every later call raises at its first charge.
    for _, f in ipairs({
      function() return B.find(catastrophic, "b") end,
      function() return B.gsub(catastrophic, "a", "b") end,
      function()
        for _ in B.gmatch(catastrophic, "a") do end
      end,
    }) do
      ok, msg = pcall(f)
      assert.is_false(ok)
      assert.is_truthy(msg:find("pattern step budget exceeded", 1, true), msg)
    end
  end)

  it("stops gsub and gmatch midway", function()
    local B = core._sandbox_patterns(5000)
    local calls = 0
    local ok, msg = pcall(B.gsub, catastrophic, "a", function()
      calls = calls + 1
      return "b"
    end)
    assert.is_false(ok)
    assert.is_truthy(msg:find("pattern step budget exceeded", 1, true), msg)
    assert.is_true(calls > 100 and calls < 5000, calls)
    B = core._sandbox_patterns(5000)
    local seen = 0
    ok, msg = pcall(function()
      for _ in B.gmatch(catastrophic, "a") do seen = seen + 1 end
    end)
    assert.is_false(ok)
    assert.is_truthy(msg:find("pattern step budget exceeded", 1, true), msg)
    assert.is_true(seen > 100 and seen < 5000, seen)
  end)

  it("leaves the state usable", function()
    local B = core._sandbox_patterns(1e4)
    assert.is_false(pcall(B.find, catastrophic, ".-.-.-.-.-b"))
    collectgarbage()
    assert.are.same({ 3, 4 }, { ("xyab"):find("ab") })
    local Q = core._sandbox_patterns()
    assert.are.same({ 3, 4, "a" }, { Q.find("xyab", "(a)b") })
    assert.are.same({ "x-y", 1 }, { Q.gsub("x y", " ", "-") })
  end)

  it("charges about one step per character tried", function()
    local n = 1e5
    local subject = ("ab"):rep(n / 2)
    local function steps(f, ...)
      local B = core._sandbox_patterns()
      B[f](subject, ...)
      return B.steps()
    end
    -- A failed search tries each start once, one item each.
    local s = steps("find", "%d")
    assert.is_true(s >= n and s <= 3 * n, s)
    -- '.-' at every start grows to the end of the subject: quadratic, on a short one.
    local B = core._sandbox_patterns()
    B.find(("a"):rep(100), ".-b")
    s = B.steps()
    assert.is_true(s >= 100 * 101 / 2 and s <= 4 * 100 * 101 / 2, s)
    -- A plain search goes through 16 bytes a step.
    s = steps("find", "c", 1, true)
    assert.is_true(s >= n / 16 and s <= n / 8, s)
    -- gsub: each match and each skipped character.
    s = steps("gsub", "a", "x")
    assert.is_true(s >= n and s <= 4 * n, s)
  end)

  it("with a limit of 0 allows only calls that cost no step", function()
    local B = core._sandbox_patterns(0)
    assert.are.same({ nil }, { B.find("", "x") })
    local ok = pcall(B.find, "abc", "x")
    assert.is_false(ok)
  end)
end)
