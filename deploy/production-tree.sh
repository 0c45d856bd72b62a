#!/bin/sh
# What a production install contains, in one place: the Dockerfile's build stage runs this to make the
# image's /app, and deploy/smoke.sh runs it to make the folder it starts and tests. Usage:
#   deploy/production-tree.sh SOURCE DEST
# SOURCE is a checkout after `npm run build`; DEST (new or empty) receives package.json, the lock file,
# the compiled dist/ (without the build's bookkeeping) and the production dependencies, installed
# without install scripts: every native module used (bcrypt, bufferutil, the PTY library) ships its
# binaries in its packages, so none is compiled here.
set -eu
source_dir=$1
dest=$2

[ -f "$source_dir/dist/src/main.js" ] || { echo "production-tree: $source_dir/dist is not built (npm run build)" >&2; exit 1; }
mkdir -p "$dest"
cp "$source_dir/package.json" "$source_dir/package-lock.json" "$dest/"
cp -R "$source_dir/dist" "$dest/dist"
rm -rf "$dest/dist/.tsbuildinfo" "$dest/dist/.build-stamps"
cd "$dest"
npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
