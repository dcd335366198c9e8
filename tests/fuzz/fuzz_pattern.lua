-- fuzz_pattern.lua: the Lua half of fuzz_pattern (fuzz_lua.c built with this driver).
-- Called with (ik, input, fail): decodes the input into one call of find, match, gmatch
-- or gsub and compares the step-limited matcher (ik.core._sandbox_patterns) with the
-- host's string library, Lua 5.4's: the same values, or the same error message.
--
-- Input: byte 1 picks the function and its init, byte 2 find's plain flag or gsub's
-- replacement and max n; the rest is the pattern, then a 0xFF byte, then the subject.
-- The matcher runs first on a budget of 1e5 steps; past it, the call is not asked of the
-- host, whose matcher would spend as much (the work of a backtracking search is the
-- pattern's, not the implementation's) and may run for minutes.
local _, input, fail = ...
local core = require("ik.core")

local NAMES = { "find", "match", "gmatch", "gsub" }
local INITS = { nil, 1, 2, -1, -3, 0, 5, 100, -100 }
local REPLS = {
  "%0", "<%1>", "%2%1", "%%", "%", "x%y", "",
  { a = "A", b = false, ["1"] = 1 },
  function(...) return select("#", ...) > 1 and (...) or nil end,
  function() return {} end,
}

local b1, b2 = input:byte(1) or 0, input:byte(2) or 0
local rest = input:sub(3)
local cut = rest:find("\255", 1, true)
local pattern = cut and rest:sub(1, cut - 1) or rest
local subject = cut and rest:sub(cut + 1) or ""
local name = NAMES[b1 % 4 + 1]
local init = INITS[(b1 // 4) % #INITS + 1]

local function show(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "number" then return math.type(v) .. " " .. tostring(v) end
  return type(v)
end

local function outcome(lib)
  local r
  if name == "gmatch" then
    r = table.pack(pcall(function()
      local out, it = {}, lib.gmatch(subject, pattern, init)
      for _ = 1, 10000 do
        local m = table.pack(it())
        if m[1] == nil then break end
        for i = 1, m.n do out[#out + 1] = show(m[i]) end
        out[#out + 1] = "|"
      end
      return table.concat(out, " ")
    end))
  elseif name == "gsub" then
    local repl = REPLS[b2 % #REPLS + 1]
    local most = (b2 // 16) % 4 == 0 and 1 or nil
    r = table.pack(pcall(lib.gsub, subject, pattern, repl, most))
  elseif name == "find" then
    r = table.pack(pcall(lib.find, subject, pattern, init, b2 % 5 == 0))
  else
    r = table.pack(pcall(lib.match, subject, pattern, init))
  end
  if not r[1] then
    local msg = tostring(r[2]):gsub("^[^\n]-:%d+: ", ""):gsub("^(bad argument #%d+ to )'[^']*'", "%1'f'")
    return "err " .. msg
  end
  local t = { "ok" }
  for i = 2, r.n do t[#t + 1] = show(r[i]) end
  return table.concat(t, " ")
end

local mine = outcome(core._sandbox_patterns(1e5))
if mine:find("pattern step budget exceeded", 1, true) then return end
local host = outcome(string)
if mine ~= host then
  fail(("%s(%q, %q, %s): the matcher gives %s, string.%s %s"):format(name, subject, pattern, tostring(init),
    mine, name, host))
end
