#!/bin/sh
# The test characters in glTF tools (ctest: characters_gltf): the Khronos glTF-Validator
# (validate.mjs) and three.js's GLTFLoader (tests/view/characters_three.mjs) over
# tests/data and the view's demo humanoid (src/host/view/humanoid.glb), their npm
# packages installed into the build tree (tests/npm-ci.sh: the
# validator into BUILD/npm/gltf, the view page's three.js into BUILD/src/host/view).
#   sh tests/gltf/run.sh BUILD
set -eu
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || "$root/scripts/ensure-packages" nodejs npm
sh "$root/tests/npm-ci.sh" "$root/tests/gltf" "$build/npm/gltf"
sh "$root/tests/npm-ci.sh" "$root/src/host/view" "$build/src/host/view"
IK_NODE_MODULES="$build/npm/gltf/node_modules" node "$root/tests/gltf/validate.mjs" "$root/tests/data/characters" "$root/tests/data" "$root/src/host/view"
node "$root/tests/view/characters_three.mjs" "$root" "$build/src/host/view/node_modules/three"
