#!/bin/sh
# The browser tests of `ikrig view` (ctest: ikrig_view): installs what is missing
# (Debian's chromium, node and npm when absent; the npm packages with 'npm ci' from the
# lockfiles, into the build tree), then runs view.test.cjs.   sh tests/view/run.sh IKRIG BUILD
set -eu
ikrig=$1
build=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || "$root/scripts/ensure-packages" nodejs npm
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || "$root/scripts/ensure-packages" chromium
# the npm packages into the build tree; require() finds them through NODE_PATH
sh "$root/tests/npm-ci.sh" "$root/tests/view" "$build/npm/view"
sh "$root/tests/npm-ci.sh" "$root/src/host/view" "$build/src/host/view"
NODE_PATH="$build/npm/view/node_modules" exec node "$root/tests/view/view.test.cjs" "$ikrig"
