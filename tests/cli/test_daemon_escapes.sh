#!/usr/bin/env bash
# Terminal escapes in what a user submits (task name, command) reach other users' terminals
# only made visible: `queue` and `show` print ESC as \x1b and a newline as \n, while --json
# keeps the exact strings.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.2
esc=$'\e'
name=$'evil\e[2J\nline2'
id=$("$CARMA" submit --name "$name" -- sleep 30) || fail "submit"
out=$("$CARMA" queue) || fail "queue"
grep -q "$esc" <<<"$out" && fail "queue printed a raw ESC: $(cat -v <<<"$out")"
grep -qF 'evil\x1b[2J\nline2' <<<"$out" || fail "queue should show the name escaped: $(cat -v <<<"$out")"
[ "$(wc -l <<<"$out")" -eq 2 ] || fail "the name's newline broke the table: $(cat -v <<<"$out")"
out=$("$CARMA" show "$id") || fail "show"
grep -q "$esc" <<<"$out" && fail "show printed a raw ESC: $(cat -v <<<"$out")"
grep -qF 'name          evil\x1b[2J\nline2' <<<"$out" || fail "show: $(cat -v <<<"$out")"
[ "$("$CARMA" show --json "$id" | jq -r .name)" = "$name" ] || fail "--json should keep the name exact"
[ "$("$CARMA" queue --json | jq -r '.[0].name')" = "$name" ] || fail "queue --json exact"
"$CARMA" cancel "$id" >/dev/null
stop_daemon

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
