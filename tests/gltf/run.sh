#!/bin/sh
# The test characters in glTF tools (ctest: characters_gltf): 'npm ci' here and in the
# view page's directory when their node_modules are missing or older than the lockfiles,
# then the Khronos glTF-Validator (validate.mjs) and three.js's GLTFLoader
# (tests/view/characters_three.mjs) over tests/data.   sh tests/gltf/run.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || "$root/scripts/ensure-packages" nodejs npm
for d in "$root/tests/gltf" "$root/src/host/view"; do
  if [ ! -f "$d/node_modules/.package-lock.json" ] || [ "$d/package-lock.json" -nt "$d/node_modules/.package-lock.json" ]; then
    (cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
node "$root/tests/gltf/validate.mjs" "$root/tests/data/characters" "$root/tests/data"
node "$root/tests/view/characters_three.mjs" "$root"
