#!/bin/sh
# The browser tests of `ikrig view` (ctest: ikrig_view): installs what is missing
# (Debian's chromium, node and npm when absent; the npm packages with 'npm ci' from the
# lockfiles), then runs view.test.cjs.   sh tests/view/run.sh IKRIG
set -eu
ikrig=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || "$root/scripts/ensure-packages" nodejs npm
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || "$root/scripts/ensure-packages" chromium
# npm ci when node_modules is missing or older than the lockfile
for d in "$root/tests/view" "$root/src/host/view"; do
  if [ ! -f "$d/node_modules/.package-lock.json" ] || [ "$d/package-lock.json" -nt "$d/node_modules/.package-lock.json" ]; then
    (cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
exec node "$root/tests/view/view.test.cjs" "$ikrig"
