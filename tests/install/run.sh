#!/bin/sh
# The install as an embedder meets it (ctest: install_prefix): `cmake --install` into a
# temporary prefix, then, from a directory outside both trees with an environment that
# names only the prefix, a C program built with find_package(ikrig) and one with
# pkg-config, lua5.4, lua5.1 and luajit with only the installed files on their paths, the
# installed `ikrig run`, and its `ikrig view` serving the page over loopback. Under
# strace, any file opened in the source or the build tree fails the test.
#   tests/install/run.sh BUILD_DIR SOURCE_DIR
set -euf  # -f: the Lua paths' ? are no globs
build=$(cd "$1" && pwd -P)
src=$(cd "$2" && pwd -P)
tmp=$(mktemp -d /tmp/ikrig-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
mkdir "$tmp/home" "$tmp/work"
cd "$tmp/work"
fail() { echo "install_prefix: $*" >&2; exit 1; }

# Runs "$@" with nothing but the prefix in its environment, traced: a file opened (or
# probed with access) under either tree is a failure.
STRACE=$(command -v strace || true)
[ -n "$STRACE" ] || fail "strace not found (Debian package strace)"
reach() {
  log=$tmp/trace.$$.$(date +%s%N)
  env -i PATH="$prefix/bin:/usr/bin:/bin" HOME="$tmp/home" LANG=C.UTF-8 \
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig" CMAKE_PREFIX_PATH="$prefix" $EXTRA_ENV \
    "$STRACE" -f -qq -e trace=open,openat,access,execve -o "$log" "$@"
  status=$?
  if grep -F -e "\"$src/" -e "\"$build/" "$log" >"$log.hits"; then
    head -5 "$log.hits" >&2
    fail "'$*' opened files in the source or build tree"
  fi
  return $status
}
EXTRA_ENV=""

# ---- nm: only the public API leaves libik.so ----
so=$prefix/lib/libik.so
[ -f "$so" ] || fail "no lib/libik.so"
if nm -D --defined-only "$so" | grep -q ' ik__'; then fail "libik.so exports ik__ symbols"; fi
nm -D --defined-only "$so" | grep -q ' T ik_fabrik_run$' || fail "libik.so does not export ik_fabrik_run"

# ---- a C program with find_package(ikrig) (ikrig::ik and ikrig::embed) ----
mkdir cm
cat >cm/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(ikrig 0.1 CONFIG REQUIRED)
add_executable(solve solve.c)
target_link_libraries(solve PRIVATE ikrig::ik)
add_executable(solve_static solve.c)
target_link_libraries(solve_static PRIVATE ikrig::ik_static)
add_executable(host host.c)
target_link_libraries(host PRIVATE ikrig::embed)
CM
cat >cm/solve.c <<'C'
#include <stdio.h>

#include "ik.h"

int main(void) {
  ik_vec3 joints[4] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
  ik_real lengths[3];
  ik_chain chain;
  ik_fabrik_job job;
  ik_error err;
  ik_measure_lengths(joints, 4, lengths);
  ik_chain_init(&chain, joints, 4, lengths);
  ik_fabrik_job_init(&job, &chain, ik_vec3_make(1.5, 1.5, 0));
  job.tolerance = 1e-4;
  if (ik_fabrik_validate(&job, &err) != IK_OK) return 2;
  ik_fabrik_run(&job);
  printf("reached %d distance %.1e tip %.3f %.3f\n", job.result.reached, (double)job.result.distance,
         (double)joints[3].x, (double)joints[3].y);
  return job.result.reached ? 0 : 1;
}
C
cat >cm/host.c <<'C'
#include <stdio.h>

#include "ikrig_embed.h"
#include "lauxlib.h"

int main(void) {
  lua_State *L = ikrig_newstate(64u << 20);
  int ok;
  if (!L || ikrig_open_dirs(L, IKRIG_LUA_DIR) != 0) return 2;
  ok = luaL_dostring(L, "local ik = require('ik')\n"
                        "local c = ik.chain{ positions = { {0,0,0}, {1,0,0}, {2,0,0} } }\n"
                        "local reached = c:solve(ik.vec3(1, 1, 0))\n"
                        "assert(reached, 'not reached')\n"
                        "assert(package.searchpath('ik.runtime', package.path))\n"
                        "return package.searchpath('ik', package.path)");
  if (ok != LUA_OK) {
    fprintf(stderr, "host: %s\n", lua_tostring(L, -1));
    return 1;
  }
  printf("host: ik from %s\n", lua_tostring(L, -1));
  ikrig_closestate(L);
  return 0;
}
C
reach cmake -S cm -B cm/build -DCMAKE_BUILD_TYPE=Release >cm.log 2>&1 || { cat cm.log >&2; fail "configure with find_package"; }
reach cmake --build cm/build >>cm.log 2>&1 || { cat cm.log >&2; fail "build with find_package"; }
out=$(reach cm/build/solve) || fail "find_package program: $out"
echo "find_package, shared: $out"
out=$(reach cm/build/solve_static) || fail "find_package static program: $out"
out=$(reach cm/build/host) || fail "find_package embedding host: $out"
echo "$out" | grep -q "host: ik from $prefix/share/ikrig/lua/ik/init.lua" || fail "embedding host: $out"
echo "find_package, embed: $out"

# ---- a C program with pkg-config (shared, then static) ----
reach sh -c 'cc -std=c99 -o pc_solve cm/solve.c $(pkg-config --cflags --libs ikrig) \
  -Wl,-rpath,"$(pkg-config --variable=libdir ikrig)"' || fail "pkg-config build"
out=$(reach ./pc_solve) || fail "pkg-config program: $out"
echo "pkg-config, shared: $out"
reach sh -c 'cc -std=c99 -o pc_static cm/solve.c $(pkg-config --cflags ikrig) \
  "$(pkg-config --variable=libdir ikrig)/libik.a" $(pkg-config --libs-only-l --static ikrig | sed "s/-lik //")' \
  || fail "pkg-config static build"
out=$(reach ./pc_static) || fail "pkg-config static program: $out"

# ---- each Lua with only the installed files on its paths (no ';;': no default paths) ----
chain='local ik = require("ik")
local c = ik.chain{ positions = { {0,0,0}, {1,0,0}, {2,0,0}, {3,0,0} }, solver = "fabrik" }
local reached, distance = c:solve(ik.vec3(1.5, 1.5, 0))
assert(reached and distance < 1e-3, "not reached")
print(package.cpath .. " " .. tostring(reached))'
for spec in "lua5.4 5.4 5.4" "lua5.1 5.1 5.1" "luajit 5.1 luajit"; do
  set -- $spec
  command -v "$1" >/dev/null || fail "$1 not found"
  [ -f "$prefix/lib/lua/$3/ik/core.so" ] || fail "no lib/lua/$3/ik/core.so for $1"
  lp="$prefix/share/lua/$2/?.lua;$prefix/share/lua/$2/?/init.lua"
  cp="$prefix/lib/lua/$3/?.so"
  EXTRA_ENV="LUA_PATH=$lp LUA_CPATH=$cp LUA_PATH_5_4=$lp LUA_CPATH_5_4=$cp"
  out=$(reach "$1" -e "$chain") || fail "$1: $out"
  [ "$out" = "$cp true" ] || fail "$1: $out"
  echo "$1: $out"
done
# LuaJIT also loads the 5.1 build (lib/lua/5.1, on its default path for this prefix)
cp="$prefix/lib/lua/5.1/?.so"
EXTRA_ENV="LUA_PATH=$prefix/share/lua/5.1/?.lua;$prefix/share/lua/5.1/?/init.lua LUA_CPATH=$cp"
out=$(reach luajit -e "$chain") || fail "luajit with the 5.1 build: $out"
EXTRA_ENV=""

# ---- the installed ikrig run ----
reach ikrig run --frames 120 --out run.jsonl -q >run.log 2>&1 || { cat run.log >&2; fail "ikrig run"; }
[ "$(wc -l <run.jsonl)" -eq 120 ] || fail "ikrig run wrote $(wc -l <run.jsonl) lines, not 120"
echo "ikrig run: 120 frames"

# ---- the installed ikrig view: /, main.js and three.js over loopback, then SIGTERM ----
if [ -f "$prefix/share/ikrig/view/index.html" ]; then
  # strace itself in the background: the view is its child, which gets the SIGTERM
  env -i PATH="$prefix/bin:/usr/bin:/bin" HOME="$tmp/home" LANG=C.UTF-8 \
    "$STRACE" -f -qq -e trace=open,openat,access,execve -o "$tmp/trace.view" ikrig view --port 0 -q >view.log 2>view.err &
  tracer=$!
  i=0
  while ! grep -q "view at http" view.log 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 100 ] || { kill $tracer; cat view.err >&2; fail "ikrig view did not start"; }
    sleep 0.1
  done
  pid=$(cat /proc/$tracer/task/$tracer/children)
  url=$(sed -n 's/.*view at \(http[^ ]*\) .*/\1/p' view.log)
  get() { curl -fsS -o got "$url$1" && grep -q "$2" got; }
  get "" '<script type="module" src="main.js">' || { kill $pid; fail "GET / from ikrig view"; }
  get main.js OrbitControls || { kill $pid; fail "GET /main.js"; }
  get three/build/three.module.js REVISION || { kill $pid; fail "GET three.module.js"; }
  get three/examples/jsm/controls/OrbitControls.js "class OrbitControls" || { kill $pid; fail "GET OrbitControls.js"; }
  kill -TERM $pid
  wait $tracer || fail "ikrig view exited $? on SIGTERM"
  if grep -F -e "\"$src/" -e "\"$build/" "$tmp/trace.view"; then fail "ikrig view opened files in the source or build tree"; fi
  if grep -q "not found" view.err; then cat view.err >&2; fail "ikrig view: a page file missing"; fi
  echo "ikrig view: /, main.js, three.js served from $prefix/share/ikrig/view"
else
  echo "ikrig view: not installed (built with IK_VIEW=OFF)"
fi
echo "install_prefix: ok"
