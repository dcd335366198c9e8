#!/bin/sh
# npm ci from SRC's package.json and lockfile into DEST (a directory of the build tree:
# nothing is written into the source tree), when DEST's node_modules is missing or
# older than the lockfile.   sh tests/npm-ci.sh SRC DEST
set -eu
src=$1
dest=$2
mkdir -p "$dest"
if [ ! -f "$dest/node_modules/.package-lock.json" ] || [ "$src/package-lock.json" -nt "$dest/node_modules/.package-lock.json" ]; then
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
fi
