local ok = pcall(function()
  local d = require("debug"); local o = require("os"); local io_ = require("io")
  state.loot = { d, o, io_, package, load(string.dump or function() end), loadfile("/etc/passwd") }
end)
local co = coroutine.wrap(function() while true do coroutine.yield(1) end end)
for _ = 1, 10 do co() end
local f = load("\27Lua binary")
state.f = f
_ENV.update = function() pcall(error); xpcall(function() while true do end end, function(e) return e end) end
