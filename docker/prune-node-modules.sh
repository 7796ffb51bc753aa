#!/bin/sh
# What the image does not run, removed from its production node_modules after `npm prune --omit=dev`
# (docs/operating.md#docker, docs/design.md#tracing): source maps and TypeScript files (sources and
# declarations: nothing in the image compiles, type-checks or maps a stack), and what compiling
# better-sqlite3 from source leaves beside its addon (object files, a static library, SQLite's C
# sources).
# Every module the gateway loads stays, OpenTelemetry's included: tracing is off by default but an
# operator turns it on with the environment alone, on this same image.
set -eu
dir=${1:-node_modules}
[ -d "$dir" ] || { echo "prune-node-modules: no directory $dir" >&2; exit 1; }
find "$dir" -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \) -delete
# better-sqlite3 needs only its addon: the rest of build/ and the C sources served the compiler
b="$dir/better-sqlite3"
if [ -f "$b/build/Release/better_sqlite3.node" ]; then
  find "$b/build" -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} +
  find "$b/build/Release" -mindepth 1 -maxdepth 1 ! -name better_sqlite3.node -exec rm -rf {} +
  rm -rf "$b/deps" "$b/src"
fi
