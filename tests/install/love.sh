#!/bin/sh
# A real LÖVE host of the installed module (ctest: love_host): `cmake --install` into a
# temporary prefix, then a folder game, run by Debian's love under xvfb-run from outside
# both trees, requires ik from the prefix only (its LuaJIT build), runs a rig set (an arm)
# and ik.runtime with a rig script that is rewritten mid-run (hot reload) for 300 frames,
# and checks the poses: the game's exit status says which check failed.
#   sh tests/install/love.sh BUILD_DIR
set -euf
build=$(cd "$1" && pwd -P)
for p in love xvfb-run; do
  command -v "$p" >/dev/null || { echo "love_host: $p not found (Debian packages love, xvfb, xauth)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/ikrig-love.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
cjit=$prefix/lib/lua/luajit/ik/core.so
[ -f "$cjit" ] || cjit=$prefix/lib/lua/5.1/ik/core.so
mkdir -p "$tmp/game" "$tmp/home" "$tmp/scripts"
cat >"$tmp/scripts/reach.lua" <<'LUA'
state.t = state.t or 0
state.arm = state.arm or ik.chain{ bones = scene.runtime_arm, target = scene.runtime_target }
function update(dt)
  state.t = state.t + dt
  scene.runtime_target:set_position{ 0.35 + 0.1 * math.cos(state.t), 1.3 + 0.1 * math.sin(state.t), 0.3 }
  state.reached = state.arm:solve()
  state.version = 1
end
LUA
cat >"$tmp/game/conf.lua" <<'LUA'
function love.conf(t)
  t.window.width, t.window.height = 64, 64
  t.modules.audio, t.modules.sound, t.modules.joystick = false, false, false
end
LUA
cat >"$tmp/game/main.lua" <<'LUA'
-- The installed module's paths only (no defaults): set by the test's environment.
package.path = os.getenv("IK_TEST_LUA_PATH")
package.cpath = os.getenv("IK_TEST_LUA_CPATH")
local ik = require("ik")
local rigs = require("ik.rigs")
local runtime = require("ik.runtime")
local script = os.getenv("IK_TEST_SCRIPT")

local function skeleton()
  return ik.skeleton{
    { name = "chest", position = { 0, 1.4, 0 } },
    { name = "upper", parent = "chest", position = { 0.2, 0, 0 } },
    { name = "lower", parent = "upper", position = { 0.3, 0, 0 } },
    { name = "hand", parent = "lower", position = { 0.25, 0, 0 } },
  }
end
local sk, sk2 = skeleton(), skeleton()
local target = ik.node{}
local set = rigs.set{ require("ik.rigs.arm").new{ upper = sk:bone("upper"), lower = sk:bone("lower"),
  hand = sk:bone("hand"), target = target, pole = ik.node{ position = { 0.3, -0.4, -0.6 } } } }
local scene = { runtime_arm = { sk2:bone("upper"), sk2:bone("lower"), sk2:bone("hand") },
  runtime_target = ik.node{ position = { 0.35, 1.3, 0.3 } } }
local reloads, errors, frame, worst = 0, {}, 0, 0
local rt = runtime.new{ scene = scene, scripts = { script }, debounce = 0,
  on_event = function(ev)
    if ev.kind == "reload" then reloads = reloads + 1 end
    if ev.kind == "error" or ev.kind == "paused" then errors[#errors + 1] = tostring(ev.message) end
  end }

local function fail(code, msg)
  io.stderr:write("love_host: ", msg, "\n")
  love.event.quit(code)
end

function love.update()
  local dt = 1 / 60
  frame = frame + 1
  local a = 2 * math.pi * frame / 120
  target:set_position{ 0.35 + 0.1 * math.cos(a), 1.3 + 0.1 * math.sin(a), 0.3 }
  set:update(dt)
  rt:update(dt)
  if frame > 30 then -- the arm's blend-in done: the hand on the target
    worst = math.max(worst, (sk:bone("hand"):get_position() - target:get_position()):length())
  end
  if frame == 150 then -- a new version of the script, as an editor saves it
    local f = assert(io.open(script, "w"))
    f:write('state.arm = state.arm or ik.chain{ bones = scene.runtime_arm, target = scene.runtime_target }\n',
      'function update(dt)\n  state.reached = state.arm:solve()\n  state.version = 2\nend\n')
    f:close()
  end
  if frame == 300 then
    local st = rt:scripts()[1].state
    local hand = sk2:bone("hand"):get_position()
    local off = (hand - scene.runtime_target:get_position()):length()
    if #errors > 0 then return fail(2, "script errors: " .. table.concat(errors, "; ")) end
    if worst > 1e-2 then return fail(3, ("the rig set's hand %.3g from its target"):format(worst)) end
    if reloads ~= 1 or st.version ~= 2 then
      return fail(4, ("reloads %d, version %s"):format(reloads, tostring(st.version)))
    end
    if not st.reached or off > 1e-2 then return fail(5, ("the script's hand %.3g from its target"):format(off)) end
    print(("love_host: %d frames, %s, rig set within %.1e, script reloaded once, within %.1e")
      :format(frame, jit and jit.version or _VERSION, worst, off))
    love.event.quit(0)
  end
end
LUA
lp="$prefix/share/lua/5.1/?.lua;$prefix/share/lua/5.1/?/init.lua"
cp="$(dirname "$(dirname "$cjit")")/?.so"
cd "$tmp"
env -i PATH=/usr/bin:/bin HOME="$tmp/home" XDG_DATA_HOME="$tmp/home" LANG=C.UTF-8 \
  IK_TEST_LUA_PATH="$lp" IK_TEST_LUA_CPATH="$cp" IK_TEST_SCRIPT="$tmp/scripts/reach.lua" \
  xvfb-run -a love "$tmp/game"
