#!/bin/sh
# The rock (ctest: luarocks_make): `luarocks make` in the checkout into a temporary tree
# for Lua 5.4 and 5.1, then require("ik") and a chain solved with only that tree on the
# Lua's paths. LuaRocks builds in build.luarocks/ (ignored by git), removed after each.
#   sh tests/install/luarocks.sh SOURCE_DIR
set -euf
src=$(cd "$1" && pwd -P)
command -v luarocks >/dev/null || { echo "luarocks_make: luarocks not found (Debian package luarocks)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/ikrig-rock.XXXXXX)
trap 'rm -rf "$tmp" "$src/build.luarocks"' EXIT
cd "$src"
for v in 5.4 5.1; do
  rm -rf build.luarocks
  luarocks make --tree "$tmp/$v" --lua-version "$v" ikrig-scm-1.rockspec >"$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log" >&2; echo "luarocks_make: luarocks make for $v failed" >&2; exit 1; }
  tree=$tmp/$v
  out=$(cd "$tmp" && env -i PATH=/usr/bin:/bin LUA_PATH="$tree/share/lua/$v/?.lua;$tree/share/lua/$v/?/init.lua" \
    LUA_CPATH="$tree/lib/lua/$v/?.so" "lua$v" -e '
local ik = require("ik")
local c = ik.chain{ positions = { {0,0,0}, {1,0,0}, {2,0,0}, {3,0,0} } }
local reached, distance = c:solve(ik.vec3(1.5, 1.5, 0))
assert(reached and distance < 1e-3, "not reached")
assert(require("ik.runtime"))
print("reached " .. tostring(reached))') || { echo "luarocks_make: lua$v: $out" >&2; exit 1; }
  [ "$out" = "reached true" ] || { echo "luarocks_make: lua$v: $out" >&2; exit 1; }
  [ -f "$tree/lib/lua/$v/ik/core.so" ] && [ -f "$tree/share/lua/$v/ik/init.lua" ] ||
    { echo "luarocks_make: the $v rock lacks ik/core.so or ik/init.lua" >&2; exit 1; }
  echo "luarocks make, Lua $v: $out"
done
