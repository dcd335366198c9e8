#!/bin/sh
# The ikrig command line (ctest ikrig_cli): sh tests/host/ikrig_cli_test.sh PATH/TO/ikrig
#
# Help and usage errors (exit 2, "ikrig: ..." on stderr); `ikrig run` on the built-in demo
# and on scripts of our own: the JSON lines follow their schema, the SVG is well-formed
# XML in every view, two runs write the same bytes; script failures as the host sees
# them (syntax error, runtime error, an endless loop cut by the budget, a memory bomb
# and a slow leak under --memory-limit, the sandbox's missing functions), each leaving
# the other script running; `ikrig watch`: --frames, SIGTERM and SIGINT stop it
# cleanly, a rename-style save is reloaded, a bad save reports its line and a fix brings
# the script back.
#
# Needs python3 (PYTHON3, else on PATH) to parse the JSON and the XML. Exit 0 when all
# pass, 1 otherwise, 77 (skipped) when ik.runtime or python3 is not there.
set -u

IKRIG=${1:?usage: ikrig_cli_test.sh PATH/TO/ikrig}
PY=${PYTHON3:-}
[ -n "$PY" ] && [ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
  echo "ikrig_cli: python3 not found: skipped"
  exit 77
fi
# ik.runtime: where ikrig looks (IKRIG_LUA_PATH, then the source tree, the cwd here)
found=""
for d in $(echo "${IKRIG_LUA_PATH:-}" | tr ';' ' ') lua; do
  [ -f "$d/ik/runtime/init.lua" ] && found=1
done
if [ -z "$found" ]; then
  echo "ikrig_cli: ik.runtime (lua/ik/runtime/init.lua) is not there: skipped"
  exit 77
fi

tmp=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

failed=0
passed=0
ok() { passed=$((passed + 1)); }
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

# run ARGS...: runs ikrig, stdout in $tmp/out, stderr in $tmp/err, status in $rc
run() {
  "$IKRIG" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# expect_usage_error DESCRIPTION ARGS...: exit 2 and an "ikrig: " message on stderr
expect_usage_error() {
  what=$1
  shift
  run "$@"
  if [ "$rc" -eq 2 ] && head -n 1 "$tmp/err" | grep -q '^ikrig: '; then ok; else
    fail "$what: exit $rc, stderr: $(head -n 2 "$tmp/err")"
  fi
}

# contains FILE TEXT: fixed-string search
contains() { grep -qF -- "$2" "$1" 2>/dev/null; }

# wait_for FILE TEXT [SECONDS]: polls until the file holds TEXT
wait_for() {
  n=0
  limit=$((${3:-5} * 10))
  while [ $n -lt $limit ]; do
    contains "$1" "$2" && return 0
    sleep 0.1
    n=$((n + 1))
  done
  return 1
}

# ---- help and usage ----
run --help
if [ "$rc" -eq 0 ] && contains "$tmp/out" "usage: ikrig" && contains "$tmp/out" "watch"; then ok; else fail "--help"; fi
run run --help
if [ "$rc" -eq 0 ] && contains "$tmp/out" "--frames N" && contains "$tmp/out" "--view VIEW"; then ok; else fail "run --help"; fi
run watch --help
if [ "$rc" -eq 0 ] && contains "$tmp/out" "SIGTERM" && contains "$tmp/out" "--debounce"; then ok; else fail "watch --help"; fi
run help watch
if [ "$rc" -eq 0 ] && contains "$tmp/out" "usage: ikrig watch"; then ok; else fail "help watch"; fi
run
if [ "$rc" -eq 2 ] && contains "$tmp/err" "usage: ikrig"; then ok; else fail "no command: exit $rc"; fi

expect_usage_error "unknown command" frobnicate
expect_usage_error "unknown option" run --bogus
expect_usage_error "unknown top-level option" --bogus
expect_usage_error "option without its value" run --frames
expect_usage_error "bad number" run --frames abc
expect_usage_error "zero frames" run --frames 0
expect_usage_error "bad dt" run --dt 0
expect_usage_error "bad view" run --view sideways
expect_usage_error "run-only option given to watch" watch --svg x.svg
expect_usage_error "bad memory limit" run --memory-limit 2
expect_usage_error "missing script" run "$tmp/no_such_script.lua"
if contains "$tmp/err" "no_such_script.lua: No such file"; then ok; else fail "missing script: $(cat "$tmp/err")"; fi
expect_usage_error "missing script (watch)" watch "$tmp/no_such_script.lua"
expect_usage_error "a directory as script" run "$tmp"
printf 'function update(dt) end\n' >"$tmp/idle.lua"
expect_usage_error "a script given twice" run "$tmp/idle.lua" "$tmp/idle.lua"

# ---- --model: a bad file is bad usage, a good one runs its humanoid rig ----
expect_usage_error "a missing model" view --model "$tmp/no_such_model.glb" --frames 1
if contains "$tmp/err" "ikrig: --model $tmp/no_such_model.glb: cannot open"; then ok; else fail "missing model: $(cat "$tmp/err")"; fi
printf 'not glTF at all\n' >"$tmp/text.glb"
expect_usage_error "a model that is not glTF" view --model "$tmp/text.glb" --frames 1
if contains "$tmp/err" "--model $tmp/text.glb: JSON: syntax error at line 1"; then ok; else fail "not glTF: $(cat "$tmp/err")"; fi
printf '{"asset":{"version":"2.0"},"nodes":[{"name":"Hips"}]}\n' >"$tmp/noskin.gltf"
expect_usage_error "a model without a skin" view --model "$tmp/noskin.gltf" --frames 1
if contains "$tmp/err" "--model $tmp/noskin.gltf: the file has no skin"; then ok; else fail "no skin: $(cat "$tmp/err")"; fi
expect_usage_error "--model and --scene" view --model tests/data/characters/vrm1_tpose.vrm --scene ik.demo.scene
expect_usage_error "--model without its file" view --model
for f in vrm0_tpose.vrm blender_tpose.glb; do
  run run --model "tests/data/characters/$f" --frames 120
  if [ "$rc" -eq 0 ] && contains "$tmp/out" "model_rig.lua: 120 frames, reached 100.0% of 480 chain solves"; then ok; else
    fail "run --model $f: exit $rc $(cat "$tmp/out" "$tmp/err")"
  fi
done

# ---- the schema of the JSON lines ----
cat >"$tmp/check_jsonl.py" <<'EOF'
import json, math, sys

path, frames, dt = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
demo = len(sys.argv) > 4 and sys.argv[4] == "demo"
data = open(path, "rb").read().decode("utf-8")
assert data.endswith("\n"), "the last line is not finished"
lines = data[:-1].split("\n")
assert len(lines) == frames, "%d lines for %d frames" % (len(lines), frames)
KINDS = {"load", "reload", "error", "paused", "resumed", "removed"}

def transform(where, v):
    assert isinstance(v, list) and len(v) == 7, where + ": 7 numbers expected"
    assert all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v), where + ": numbers"
    assert abs(math.sqrt(sum(x * x for x in v[3:])) - 1) < 1e-6, where + ": unit quaternion"

for n, line in enumerate(lines):
    o = json.loads(line)
    assert list(o) == ["frame", "t", "skeletons", "nodes", "chains", "events"], "keys: %s" % list(o)
    assert o["frame"] == n, "frame %r on line %d" % (o["frame"], n + 1)
    assert abs(o["t"] - (n + 1) * dt) < 1e-6, "t %r on line %d" % (o["t"], n + 1)
    assert isinstance(o["skeletons"], dict) and isinstance(o["nodes"], dict)
    for sk, bones in o["skeletons"].items():
        assert isinstance(bones, dict) and bones, sk
        for b, v in bones.items():
            transform("%s.%s" % (sk, b), v)
    for name, v in o["nodes"].items():
        transform(name, v)
    for c in o["chains"]:
        keys = ["name", "script", "reached", "distance", "iterations"]
        assert list(c) == keys or list(c) == keys + ["constraints"], list(c)
        for k in c.get("constraints", []):
            hinge = k.get("kind") == "hinge"
            assert list(k) == (["bone", "kind", "apex", "direction", "axis", "min", "max", "length"] if hinge
                               else ["bone", "kind", "apex", "direction", "angle", "length"]), list(k)
            assert isinstance(k["bone"], int) and k["bone"] >= 1 and k["kind"] in ("cone", "hinge")
            for v in ("apex", "direction") + (("axis",) if hinge else ()):
                assert len(k[v]) == 3 and all(isinstance(x, (int, float)) for x in k[v]), v
            assert abs(math.sqrt(sum(x * x for x in k["direction"])) - 1) < 1e-6
        assert isinstance(c["name"], str) and isinstance(c["reached"], bool)
        assert c["script"] is None or isinstance(c["script"], str)
        assert c["distance"] is None or (isinstance(c["distance"], (int, float)) and c["distance"] >= 0)
        assert c["iterations"] is None or (isinstance(c["iterations"], int) and c["iterations"] >= 0)
    for e in o["events"]:
        assert list(e) == ["kind", "script", "message"], list(e)
        assert e["kind"] in KINDS, e["kind"]
        assert e["script"] is None or isinstance(e["script"], str)
        assert e["message"] is None or isinstance(e["message"], str)
    if demo:
        assert list(o["skeletons"]) and list(o["nodes"]) == sorted(o["nodes"])
        assert o["chains"], "the demo reports its chains every frame"
        shaped = [(c["name"], [k["kind"] for k in c["constraints"]]) for c in o["chains"] if "constraints" in c]
        assert shaped == [("tail", ["cone"] * 4)], shaped
if demo:
    first = json.loads(lines[0])
    assert any(e["kind"] == "load" for e in first["events"]), "the first frame has the loads"
print("ok")
EOF

cat >"$tmp/check_svg.py" <<'EOF'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
assert float(root.get("width")) > 0 and float(root.get("height")) > 0
assert root.find(ns + "title") is not None
lines = root.findall(".//" + ns + "line")
circles = root.findall(".//" + ns + "circle")
assert len(lines) > 3 and len(circles) > 2, "bones and joints drawn"
if len(sys.argv) > 2:
    ids = {g.get("id") for g in root.iter(ns + "g")}
    for want in sys.argv[2].split(","):
        assert want in ids, "no group " + want
print("ok")
EOF

jsonl_ok() { "$PY" "$tmp/check_jsonl.py" "$@" >"$tmp/py" 2>&1; }
svg_ok() { "$PY" "$tmp/check_svg.py" "$@" >"$tmp/py" 2>&1; }

# ---- ikrig run: the built-in demo ----
run run --frames 120 --out "$tmp/a.jsonl" --svg "$tmp/a.svg"
if [ "$rc" -eq 0 ]; then ok; else fail "run demo: exit $rc: $(cat "$tmp/err")"; fi
if grep -Eq '^.+: 120 frames, reached [0-9.]+% of [0-9]+ chain solves, worst tip error .*, .* us per frame' "$tmp/out"; then ok; else
  fail "run demo: summary line: $(cat "$tmp/out")"
fi
if jsonl_ok "$tmp/a.jsonl" 120 0.016666666666666666 demo; then ok; else fail "demo JSON lines: $(cat "$tmp/py")"; fi
if svg_ok "$tmp/a.svg" ground,trails,grid; then ok; else fail "demo SVG: $(cat "$tmp/py")"; fi
run run --frames 120 --out "$tmp/b.jsonl" --svg "$tmp/b.svg"
if [ "$rc" -eq 0 ] && cmp -s "$tmp/a.jsonl" "$tmp/b.jsonl"; then ok; else fail "run demo twice: the JSON lines differ"; fi
if cmp -s "$tmp/a.svg" "$tmp/b.svg"; then ok; else fail "run demo twice: the SVGs differ"; fi
for view in top front; do
  run run --frames 30 --svg "$tmp/$view.svg" --view "$view" --quiet
  if [ "$rc" -eq 0 ] && svg_ok "$tmp/$view.svg" ground && [ ! -s "$tmp/out" ]; then ok; else
    fail "run --view $view: exit $rc $(cat "$tmp/py" "$tmp/err")"
  fi
done
run run --frames 7 --dt 0.05 --out - --quiet
cp "$tmp/out" "$tmp/stdout.jsonl"
if [ "$rc" -eq 0 ] && jsonl_ok "$tmp/stdout.jsonl" 7 0.05; then ok; else fail "--out -: $(cat "$tmp/py" "$tmp/err")"; fi
run run --frames 3 --out "$tmp/no/such/dir/x.jsonl"
if [ "$rc" -ne 0 ] && contains "$tmp/err" "ikrig: $tmp/no/such/dir/x.jsonl"; then ok; else fail "unwritable --out: exit $rc"; fi

# ---- scripts of our own, in the built-in scene ----
cat >"$tmp/good.lua" <<'EOF'
-- reports one chain a frame, reached every other frame
state.n = state.n or 0
function update(dt)
  state.n = state.n + 1
  scene.report("mine", state.n % 2 == 0, 0.25, 2)
end
EOF
printf 'function update(dt)\n  local x = = 1\nend\n' >"$tmp/syntax.lua"
cat >"$tmp/fails.lua" <<'EOF'
local n = 0
function update(dt)
  n = n + 1
  if n == 2 then error("went wrong") end
end
EOF
printf 'function update(dt)\n  while true do end\nend\n' >"$tmp/loop.lua"
cat >"$tmp/bomb.lua" <<'EOF'
local hoard = {}
function update(dt)
  for i = 1, 1e9 do hoard[#hoard + 1] = string.rep("x", 1 << 20) .. i end
end
EOF
# grows by 4 MB a frame: under the runtime's per-call limit, so the state's allocator cap
# is what stops it ("not enough memory" inside the script)
cat >"$tmp/leak.lua" <<'EOF'
local hoard = {}
function update(dt)
  hoard[#hoard + 1] = string.rep("y", 4 << 20) .. #hoard
end
EOF
cat >"$tmp/sandbox.lua" <<'EOF'
-- everything here must be out of reach of a rig script
local function gone(f) return not pcall(f) end
local checks = {
  os_execute = os.execute == nil,
  io = io == nil,
  debug = debug == nil,
  loadlib = package == nil or package.loadlib == nil,
  dump = string.dump == nil,
  binary = load(string.char(27) .. "LuaT\0") == nil,
  require_io = gone(function() return require("io") end),
  require_os = gone(function() return require("os") end),
}
function update(dt)
  for name, fine in pairs(checks) do scene.report(name, fine, 0) end
end
EOF

run run "$tmp/good.lua" --frames 30 --out "$tmp/g.jsonl"
if [ "$rc" -eq 0 ] && contains "$tmp/out" "good.lua: 30 frames, reached 50.0% of 30 chain solves, worst tip error 0.25"; then ok; else
  fail "run good.lua: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
if jsonl_ok "$tmp/g.jsonl" 30 0.016666666666666666 && contains "$tmp/g.jsonl" "\"name\":\"mine\",\"script\":\"$tmp/good.lua\",\"reached\":true,\"distance\":0.25,\"iterations\":2"; then ok; else
  fail "good.lua JSON lines: $(cat "$tmp/py")"
fi

run run "$tmp/syntax.lua" "$tmp/good.lua" --frames 20
if [ "$rc" -eq 1 ] && contains "$tmp/err" "syntax.lua:2:" && contains "$tmp/out" "good.lua: 20 frames"; then ok; else
  fail "syntax error: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
run run "$tmp/fails.lua" "$tmp/good.lua" --frames 20
if [ "$rc" -eq 1 ] && contains "$tmp/err" "fails.lua:4: went wrong" && contains "$tmp/out" "good.lua: 20 frames" &&
  contains "$tmp/out" "fails.lua: 1 frame"; then ok; else
  fail "runtime error: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
run run "$tmp/loop.lua" "$tmp/good.lua" --frames 20 --budget 100000
if [ "$rc" -eq 1 ] && contains "$tmp/err" "budget" && contains "$tmp/out" "good.lua: 20 frames"; then ok; else
  fail "endless loop: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
run run "$tmp/bomb.lua" "$tmp/good.lua" --frames 20 --memory-limit 32 --budget 1e9
if [ "$rc" -eq 1 ] && contains "$tmp/out" "good.lua: 20 frames" && contains "$tmp/out" "bomb.lua: 0 frames"; then ok; else
  fail "memory bomb: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
run run "$tmp/leak.lua" "$tmp/good.lua" --frames 20 --memory-limit 32
if [ "$rc" -eq 1 ] && contains "$tmp/err" "leak.lua: memory limit exceeded (8388608 bytes)" && contains "$tmp/out" "good.lua: 20 frames"; then ok; else
  fail "memory leak past the cap: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
run run "$tmp/sandbox.lua" --frames 2 --out "$tmp/s.jsonl"
if [ "$rc" -eq 0 ] && contains "$tmp/s.jsonl" '"name":"binary"' && ! contains "$tmp/s.jsonl" '"reached":false'; then ok; else
  fail "sandbox: exit $rc: $(cat "$tmp/err") $(head -c 900 "$tmp/s.jsonl")"
fi

# A stop that always works: SIGTERM ends a run, watch or view whose script never returns
# (a budget it cannot spend, a loop whose xpcall handler loops too) within 1 s.
cat >"$tmp/hang.lua" <<'EOF'
function update(dt)
  xpcall(function() while true do end end, function() while true do end end)
end
EOF
for cmd in run watch view; do
  extra="--frames 1000000"
  [ "$cmd" = view ] && extra="--port 0"
  "$IKRIG" $cmd "$tmp/hang.lua" --budget 1e15 $extra >"$tmp/h_$cmd" 2>&1 &
  pid=$!
  pids="$pids $pid"
  sleep 1.5
  t0=$(date +%s%N)
  kill -s TERM "$pid"
  wait "$pid"
  t1=$(date +%s%N)
  ms=$(((t1 - t0) / 1000000))
  if [ "$ms" -lt 1000 ] && contains "$tmp/h_$cmd" "interrupted: the host is stopping"; then ok; else
    fail "SIGTERM on a hung script under ikrig $cmd: ${ms} ms: $(head -c 600 "$tmp/h_$cmd")"
  fi
  echo "ikrig_cli: SIGTERM ended ikrig $cmd with a hung script in $ms ms"
done

# ---- ikrig watch ----
run watch --frames 30
if [ "$rc" -eq 0 ] && contains "$tmp/out" "ikrig: loaded" && contains "$tmp/out" "stopped after 30 frames" &&
  grep -q ': 30 frames' "$tmp/out"; then ok; else
  fail "watch --frames: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
for sig in TERM INT; do
  "$IKRIG" watch "$tmp/good.lua" >"$tmp/w_$sig" 2>&1 &
  pid=$!
  pids="$pids $pid"
  wait_for "$tmp/w_$sig" "ikrig: loaded" 10
  sleep 0.3
  kill -s "$sig" "$pid"
  wait "$pid"
  wrc=$?
  if [ "$wrc" -eq 0 ] && contains "$tmp/w_$sig" "stopped after" && contains "$tmp/w_$sig" "good.lua:"; then ok; else
    fail "watch stopped by SIG$sig: exit $wrc: $(cat "$tmp/w_$sig")"
  fi
done

# hot reload: a rename-style save, a bad save (the line reported), the fix
cp "$tmp/good.lua" "$tmp/live.lua"
"$IKRIG" watch "$tmp/live.lua" >"$tmp/w_live" 2>&1 &
pid=$!
pids="$pids $pid"
if wait_for "$tmp/w_live" "ikrig: loaded $tmp/live.lua" 10; then ok; else fail "watch live.lua: not loaded"; fi
sleep 0.2
sed 's/0.25/0.5/' "$tmp/good.lua" >"$tmp/live.tmp" && mv "$tmp/live.tmp" "$tmp/live.lua"
if wait_for "$tmp/w_live" "ikrig: reloaded $tmp/live.lua" 5; then ok; else fail "rename-style save not reloaded: $(cat "$tmp/w_live")"; fi
printf 'state.n = state.n or 0\nfunction update(dt)\n  scene.report("mine", true 0)\nend\n' >"$tmp/live.tmp" &&
  mv "$tmp/live.tmp" "$tmp/live.lua"
if wait_for "$tmp/w_live" "live.lua:3:" 5; then ok; else fail "bad save: no error line: $(cat "$tmp/w_live")"; fi
cp "$tmp/good.lua" "$tmp/live.tmp" && mv "$tmp/live.tmp" "$tmp/live.lua"
n=0
while [ "$(grep -c "ikrig: reloaded $tmp/live.lua" "$tmp/w_live")" -lt 2 ] && [ $n -lt 50 ]; do
  sleep 0.1
  n=$((n + 1))
done
if [ "$(grep -c "ikrig: reloaded $tmp/live.lua" "$tmp/w_live")" -ge 2 ]; then ok; else fail "fixed save not reloaded: $(cat "$tmp/w_live")"; fi
kill -s TERM "$pid"
wait "$pid"
wrc=$?
if [ "$wrc" -eq 0 ] && grep -q "live.lua: [0-9]* frames, reached" "$tmp/w_live"; then ok; else
  fail "watch live.lua: exit $wrc: $(cat "$tmp/w_live")"
fi

echo "ikrig_cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
