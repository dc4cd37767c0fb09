#!/usr/bin/env bash
# Write the service journals of one past release, for tests/journal_fixtures (docs/journal.md,
# "Journals of past releases"): each is the journal of a `tablectl run` of that release on a
# simulated device (url = "sim"), driven only by its CLI over the control socket, as the pit
# drives it. Run it from a checkout of that release with its own venv:
#   git worktree add /tmp/rel COMMIT && cd /tmp/rel && python3 -m venv .venv &&
#   .venv/bin/pip install -q -e . && bash /path/to/this/script OUT_DIR
# Each journal is one directory OUT_DIR/service-NAME (refused if it exists; the config, socket
# and service log live in a temporary directory, removed at the end):
#   service-clean-rws-nc       RWS-NC3P, 3 rounds settled, then SIGTERM
#   service-hold-killed        RWS-NC3P, an exposed card reported at box 2 after the deal: the
#                              round held for a supervisor (5.10 or 5.7?), SIGKILL on the hold
#   service-placements-rws-nc  RWS-NC3P, main 500-5,000: a Standing Player over what is left of
#                              the box maximum, a bet under the minimum, two players seated at
#                              one box, a batch with a row of an unknown bet; settled, SIGTERM
#   service-options-killed     MBS-R3P: the deck counted 51 while betting (so nothing is dealt),
#                              bets closed, an interruption reported: 5.13.1 offers the players
#                              their options; one answers, SIGKILL with the other still to answer
# Every wait polls `tablectl round status --json` (60 s at most); each journal is verified.
set -euo pipefail
out=${1:?usage: write_service_journals.sh OUT_DIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
tablectl=$PWD/.venv/bin/tablectl py=$PWD/.venv/bin/python
work=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT

start() {  # start NAME GAME DEVICE_TOML [TABLE_TOML [LIMITS_TOML]]: a service on a new journal
    name=$1; dir=$work/$1; cfg=$dir/tablectl.toml; journal=$out/service-$1
    [ ! -e "$journal" ] || { echo "$journal exists: remove it first" >&2; exit 1; }
    mkdir -p "$dir"
    cat > "$cfg" <<EOF
[table]
id = "SVC-1"
game = "$2"
${4:-}
[device]
$3
${5:-}
[journal]
directory = "$journal"
durability = "money"
hmac_key_file = ""
background_check_hours = 0

[control]
socket = "$dir/control.sock"
socket_group = ""

[clock]
unsynchronised = "allow"

[protection]
feed = "new-deck"
EOF
    "$tablectl" run --config "$cfg" 2>"$dir/service.log" & pid=$!
    wait_for "the device online" 's["state"] == "idle" and s["device"]["online"] and not s["offline"]'
    echo "== service-$name: $2 (pid $pid)"
}

t() { "$tablectl" "$@" --config "$cfg" --actor dealer:svc; }
maybe() { local rc=0; t "$@" || rc=$?; [ "$rc" -le 1 ] || exit "$rc"; }  # refused (1) is fine

wait_for() {  # wait_for WHAT PYTHON_EXPR: until EXPR holds of the status `s` (60 s at most)
    local end=$((SECONDS + 60))
    until "$tablectl" round status --json --config "$cfg" 2>/dev/null | "$py" -c \
        "import json, sys; s = json.load(sys.stdin); sys.exit(not ($2))" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || { echo "service-$name: the service exited" >&2
                                         tail -5 "$dir/service.log" >&2; exit 1; }
        [ "$SECONDS" -lt "$end" ] || { echo "service-$name: no $1 within 60 s" >&2; exit 1; }
        sleep 0.2
    done
}

deal() {  # No more bets, then the simulated device deals the round
    t round close; wait_for "the deal" 's["state"] == "dealt"'
}

settle() { t round reveal; t round settle; wait_for "the settlement" 's["state"] == "settled"'; }

stop() {  # SIGTERM, as systemd stops it: exit 0
    kill -TERM "$pid"; wait "$pid"; pid=; echo "   stopped (SIGTERM)"
}

killed() {  # SIGKILL: no handler runs, nothing is flushed
    kill -KILL "$pid"; wait "$pid" 2>/dev/null || true; pid=; echo "   killed (SIGKILL)"
}

shuffler='kind = "shuffler"
url = "sim"'

# 1. Three rounds settled, then a clean stop.
start clean-rws-nc rws-nc-three-pictures "$shuffler"
t round open
t wager place 1 main 1000 --player ann --seated
t wager place 2 main 500
t wager place 2 tie 500
deal; settle
t round open
t wager place 1 main 2000 --player ann --seated
t wager place 1 main 500 --id 1-main-bob --player bob
t wager place 3 main 1500 --player cy
t wager place 3 three_pictures 500 --player cy
deal; settle
t round open
t wager place 4 main 800
t wager place 5 main 1200 --player dee --seated
t wager place 5 tie 200 --player dee --seated
deal; settle
stop

# 2. An exposed card reported at a box: the round holds for a supervisor, who never answers.
start hold-killed rws-nc-three-pictures "$shuffler"
t round open
t wager place 1 main 1000 --player ann --seated
t wager place 2 main 500
t wager place 3 main 700 --player cy
deal
t report exposed_card --position 2 --details "box 2's first card seen face up"
wait_for "the hold" 's["state"] == "hold"'
killed

# 3. Placements a later release judges differently; whatever this release accepts, it accepts.
start placements-rws-nc rws-nc-three-pictures "$shuffler" "" '[limits.main]
min = 500
max = 5000'
t round open
maybe wager place 1 main 4500 --id s1 --player p1 --seated
maybe wager place 1 main 1000 --id t1 --player p2         # a Standing Player, over what is left
maybe wager place 2 main 300 --id u2 --player p3          # under the minimum
maybe wager place 3 main 1000 --id s3 --player p4 --seated
maybe wager place 3 main 1000 --id t3 --player p5 --seated  # a second Seated Player at box 3
echo '[["b4", "4", "main", 1000, "p6"], ["x4", "4", "no-such-bet", 100, "p6"]]' > "$dir/batch.json"
maybe wager place-batch "$dir/batch.json"
deal; settle
stop

# 4. MBS-R3P 5.13.1: the players' options open when the service is killed.
start options-killed mbs-royal-three-pictures 'kind = "shoe"
dialect = "scanner"
url = "sim"' 'options_deadline_s = 3600'
t round open
t wager place 1 main 1000 --player ann
t wager place 1 royal_pictures 500 --player ann
t wager place 1 main 700 --id 1-main-bob --player bob
t wager place 2 main 600
t deck counted 51          # the deck is blocked: bets close, nothing is dealt
t round close
wait_for "bets closed" 's["state"] == "closed" and s["deck_blocked"]'
t report interruption --details "power failure before the first card"
wait_for "the options" 's["state"] == "options"'
t option 1 withdraw --player ann
wait_for "ann's answer" 'len(s["options_pending_players"]) == 2'
killed

for journal in "$out"/service-*; do
    rc=0; "$tablectl" journal verify "$journal" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "$journal does not verify (exit $rc)" >&2; exit 1; }
done
