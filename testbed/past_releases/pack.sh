#!/usr/bin/env bash
# Pack the journals a release wrote (the OUT_DIR of the write_* scripts) as
# tests/journal_fixtures/RELEASE.tar.xz, reproducibly (sorted, no owners, fixed times).
#   bash testbed/past_releases/pack.sh RELEASE OUT_DIR
set -euo pipefail
release=${1:?usage: pack.sh RELEASE OUT_DIR}; out=${2:?usage: pack.sh RELEASE OUT_DIR}
target="$(cd "$(dirname "$0")/../.." && pwd)/tests/journal_fixtures/$release.tar.xz"
cd "$out"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=2026-12-07 -cJf "$target" -- *
