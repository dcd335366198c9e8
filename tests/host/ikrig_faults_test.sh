#!/bin/sh
# The script-fault matrix through the ikrig program (ctest ikrig_faults):
#   sh tests/host/ikrig_faults_test.sh PATH/TO/ikrig
#
# For each row of FAULTS below, `ikrig run` runs a faulty script first and then the
# built-in demo's two scripts, and this checks what `ikrig run --help` documents:
#
#   - the exit status: 1 when the script failed or was stopped, 0 when the sandbox made
#     the fault harmless (kind "none");
#   - the fault on stderr exactly once, as "FILE:LINE: message" (and, for a script paused
#     in update, one "ikrig: paused FILE until it is saved again"), and nothing else;
#   - the summary: both demo scripts ran every frame, the faulty one is stopped with
#     the same message;
#   - the demo's output: every frame's JSON line, and the demo's skeletons, nodes and
#     chains in it identical to a run of the demo alone (the host's state intact);
#     exactly one event about the faulty script (its load, when harmless).
#
# The same matrix through ik.runtime, with reloads, is tests/lua/script_faults_spec.lua.
# Needs python3 (PYTHON3, else on PATH) to compare the JSON lines. Exit 0 when all pass,
# 1 otherwise, 77 (skipped) when python3 or the demo scripts are not there.
set -u

IKRIG=${1:?usage: ikrig_faults_test.sh PATH/TO/ikrig}
PY=${PYTHON3:-}
[ -n "$PY" ] && [ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
  echo "ikrig_faults: python3 not found: skipped"
  exit 77
fi
DEMO="lua/ik/demo/humanoid.lua lua/ik/demo/walker.lua"
for s in $DEMO; do
  if [ ! -f "$s" ]; then
    echo "ikrig_faults: $s is not there (run from the source tree): skipped"
    exit 77
  fi
done
FRAMES=30

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
passed=0
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

# One row a line: name | kind (error: the script fails to load; paused: its update
# fails; none: harmless) | the message after "FILE:" ("" for none) | the fault. The
# fault is the body of update(dt), on line 2 of the script, or with "top:" its top level
# (line 1), or with "file:" the whole file (\n for new lines). The runs have
# --memory-limit 32: each script's own state may hold a quarter of it (8388608 bytes) over
# its lifetime; and the default budget, 1e7 instructions.
FAULTS=$(cat <<'EOF'
syntax error|error|3: unexpected symbol near 'end'|file:function update(dt)\n  local x = 1 +\nend
runtime error in update|paused|2: boom|error('boom')
runtime error in the top level|error|1: top|top:error('top')
no update|error| the script defines no function update(dt)|file:local x = 1
infinite loop in update|paused|2: instruction budget exceeded (10000000)|while true do end
infinite loop in the top level|error|1: instruction budget exceeded (10000000)|top:while true do end
infinite loop under pcall|paused|2: instruction budget exceeded (10000000)|while true do pcall(function() while true do end end) end
deep recursion|paused| memory limit exceeded (8388608 bytes)|file:local function f(n) return 1 + f(n + 1) end\nfunction update() f(1) end
deep recursion through a metamethod|paused|2: C stack overflow|local t = setmetatable({}, {}); getmetatable(t).__index = function(s, k) return s[k] end; return t.x
memory bomb|paused| memory limit exceeded (8388608 bytes)|local t = {} for i = 1, 1e9 do t[i] = { i } end
a slow leak up to the script's memory limit|paused| memory limit exceeded (8388608 bytes)|state.h = state.h or {}; state.h[#state.h + 1] = string.rep('y', 4 << 20) .. #state.h
string.rep of a huge string|paused|2: memory limit exceeded (8388608 bytes)|state.s = string.rep('x', 2^40)
coroutine that never ends|paused|2: instruction budget exceeded (10000000)|coroutine.wrap(function() while true do end end)()
os.execute|paused|2: attempt to call a nil value (field 'execute')|os.execute('true')
io|paused|2: attempt to index a nil value (global 'io')|io.open('/etc/passwd')
debug|paused|2: attempt to index a nil value (global 'debug')|debug.sethook()
load of a binary chunk|paused|2: attempt to load a binary chunk (mode is 't')|assert(load('\27Lua'))
string.dump|paused|2: attempt to call a nil value (field 'dump')|string.dump(update)
package.loadlib|paused|2: attempt to index a nil value (global 'package')|package.loadlib('libc.so.6', 'system')
strings' metatable changed|none||getmetatable('').__index = {}; getmetatable('').__index.upper = print
a field added to strings' metatable|paused|2: attempt to change a protected metatable|getmetatable('').__call = print
an ik object's metatable changed|none||getmetatable(scene.skeletons.walker).__index = print
setmetatable on an ik metatable|paused|2: cannot change a protected metatable|setmetatable(getmetatable(scene.nodes.reach_target), {})
collectgarbage abuse|paused|2: collectgarbage: only collectgarbage("count") is available to rig scripts|collectgarbage('stop')
an error object that is a table|paused| (error object is a table value)|error({})
an error object that is nil|paused| (error object is a nil value)|error(nil)
an error object whose __tostring fails|paused| (error object is a table value)|error(setmetatable({}, { __tostring = function() error('x') end }))
error() in __gc of its own object|paused|2: setmetatable: __gc is not available to rig scripts|setmetatable({}, { __gc = function() error('gc') end })
a script that requires itself|error|1: loop or previous error loading module 'fault'|top:require('fault')
yield across the top level|error|1: attempt to yield from outside a coroutine|top:coroutine.yield()
setmetatable(_G)|paused|2: no global nothing|file:setmetatable(_G, { __index = function(_, k) error('no global ' .. k, 2) end })\nfunction update() return nothing end
scene rebound|none||scene = nil
setmetatable on the scene|paused|2: cannot change a protected metatable|setmetatable(scene, {})
scene.report replaced|none||scene = setmetatable({ report = function() end }, { __index = scene })
ik functions replaced for the others|none||ik.chain = nil; ik.vec3 = nil; require('ik').quat = nil; string.format = nil
the host's skeleton closed|paused|2: the scene's objects are the host's: rig scripts cannot close them|scene.skeletons.walker:close()
the host's node closed|paused|2: the scene's objects are the host's: rig scripts cannot close them|scene.nodes.reach_target:close()
the host's ground closed|paused|2: the scene's objects are the host's: rig scripts cannot close them|scene.ground:close()
the host's skeleton as a to-be-closed variable|paused|3: the scene's objects are the host's: rig scripts cannot close them|local sk <close> = scene.skeletons.humanoid
a loop in an xpcall handler after the budget|paused|2: instruction budget exceeded (10000000)|xpcall(function() while true do end end, function() while true do end end)
a file outside its folder, string methods replaced|error|1: ../../../etc/passwd: rig scripts can only load files of their own folder|top:string.find = function() end; string.gsub = function(s) return s, 0 end; assert(loadfile('../../../etc/passwd'))
a quadrillion table slots moved|paused|2: instruction budget exceeded (10000000)|if table.move then table.move({}, 1, 1e15, 2) else while true do end end
scene.advance replaced|error|1: the scene is read-only to rig scripts (keep your own values in state)|top:scene.advance = function() while true do end end
a looping transform put into the scene's nodes|none||scene.nodes.trap = { get_position = function() while true do end end }
a backtracking pattern on 20 kB|paused|2: instruction budget exceeded (10000000)|local s = ('a'):rep(2e4); pcall(s.find, s, '.-.-.-.-.-b')
a report flood|paused|2: scene.report: more than 1024 reports in one call|for i = 1, 2e5 do scene.report('n' .. i, true, 0) end
a report whose shapes report again|paused|2: scene.report: chain (ik.chain) expected, got table|scene.report('x', true, 0, 1, setmetatable({}, { __index = function() scene.report('y', true) end }))
EOF
)

# The demo alone: what every run must reproduce.
"$IKRIG" run $DEMO --frames $FRAMES --memory-limit 32 --out "$tmp/base.jsonl" >/dev/null 2>"$tmp/base.err"
if [ $? -ne 0 ] || [ -s "$tmp/base.err" ]; then
  echo "ikrig_faults: the demo alone failed: $(cat "$tmp/base.err")"
  exit 1
fi

# compare.py BASE RUN FAULT KIND: the demo's part of every frame as in BASE, one event
# about FAULT (its load when KIND is none, else the fault).
cat >"$tmp/compare.py" <<'EOF'
import json, sys
base, run, fault, kind = sys.argv[1:5]
def lines(p):
    with open(p) as f:
        return [json.loads(l) for l in f]
b, r = lines(base), lines(run)
if len(b) != len(r):
    sys.exit("%d frames, %d expected" % (len(r), len(b)))
events = []
for i, (x, y) in enumerate(zip(b, r)):
    for key in ("skeletons", "nodes", "frame", "t"):
        if x[key] != y[key]:
            sys.exit("frame %d: %s differ from the demo alone" % (i, key))
    mine = [c for c in y["chains"] if c["script"] != fault]
    if mine != x["chains"]:
        sys.exit("frame %d: the demo's chains differ" % i)
    events += [e for e in y["events"] if e["script"] == fault]
want = "load" if kind == "none" else ("error" if kind == "error" else "load paused")
got = " ".join(e["kind"] for e in events)
if got != want:
    sys.exit("events about the script: '%s', '%s' expected" % (got, want))
EOF

n=0
printf '%s\n' "$FAULTS" | while IFS='|' read -r name kind message fault; do
  n=$((n + 1))
  dir="$tmp/$n"
  mkdir "$dir"
  script="$dir/fault.lua"
  case "$fault" in
    top:*) printf '%s\nfunction update() end\n' "${fault#top:}" >"$script" ;;
    file:*) printf '%b\n' "${fault#file:}" >"$script" ;;
    *) printf 'function update()\n%s\nend\n' "$fault" >"$script" ;;
  esac
  "$IKRIG" run "$script" $DEMO --frames $FRAMES --memory-limit 32 --out "$dir/run.jsonl" \
    >"$dir/out" 2>"$dir/err"
  rc=$?
  problem=""
  if [ "$kind" = none ]; then
    [ "$rc" -eq 0 ] || problem="exit $rc, 0 expected"
    [ -s "$dir/err" ] && problem="$problem; stderr not empty"
    grep -qF "$script: $FRAMES frames" "$dir/out" || problem="$problem; the script did not run every frame"
  else
    want="$script:$message"
    [ "$rc" -eq 1 ] || problem="exit $rc, 1 expected"
    [ "$(head -n 1 "$dir/err")" = "$want" ] || problem="$problem; first stderr line is not '$want'"
    lines=1
    if [ "$kind" = paused ]; then
      lines=2
      [ "$(sed -n 2p "$dir/err")" = "ikrig: paused $script until it is saved again" ] ||
        problem="$problem; no 'paused' line after the message"
    fi
    [ "$(wc -l <"$dir/err")" -eq "$lines" ] || problem="$problem; stderr has $(wc -l <"$dir/err") lines, $lines expected"
    grep -qF "stopped ($kind): $want" "$dir/out" || problem="$problem; the summary does not say 'stopped ($kind)'"
  fi
  for s in $DEMO; do
    grep -qF "$s: $FRAMES frames, reached" "$dir/out" || problem="$problem; $s did not run every frame"
  done
  why=$("$PY" "$tmp/compare.py" "$tmp/base.jsonl" "$dir/run.jsonl" "$script" "$kind" 2>&1) ||
    problem="$problem; output: $why"
  if [ -n "$problem" ]; then
    echo "FAIL: $name: ${problem#; }"
    sed 's/^/  | /' "$dir/err" "$dir/out" | head -n 8
    echo fail >>"$tmp/failures"
  else
    echo pass >>"$tmp/passes"
  fi
done
passed=$(cat "$tmp/passes" 2>/dev/null | wc -l)
failed=$(cat "$tmp/failures" 2>/dev/null | wc -l)
echo "ikrig_faults: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
