#!/usr/bin/env bash
# Write the bench journals of one past release, for tests/journal_fixtures (docs/journal.md,
# "Journals of past releases"). Run it from a checkout of that release with its own venv:
#   git worktree add /tmp/rel COMMIT && cd /tmp/rel && python3 -m venv .venv &&
#   .venv/bin/pip install -q -e . && bash /path/to/this/script OUT_DIR
# Every game, every fault kind its bench table can inject, one per round in turn, then clean
# rounds; seed 7. Each journal is one directory OUT_DIR/bench-GAME.
set -euo pipefail
out=${1:?usage: write_bench_journals.sh OUT_DIR}
mkdir -p "$out"
casino="set2,set4,exposed,duplicate,unshuffled,count:51,count:53,foreign,noread,jam,jamhand,faceup,reboot,disconnect"
live="noread,doubleread,duplicate,exposed,disconnect"
for game in rws-nc-three-pictures mbs-three-pictures mbs-royal-three-pictures rws-three-card-poker live-three-pictures; do
    faults=$casino
    [ "$game" = live-three-pictures ] && faults=$live
    n=$(( $(tr ',' '\n' <<<"$faults" | wc -l) + 4 ))
    .venv/bin/tablectl bench --game "$game" --rounds "$n" --seed 7 --faults "$faults" \
        --journal-dir "$out/bench-$game" --json > "$out/bench-$game.summary.json"
done
