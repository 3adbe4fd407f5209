#!/usr/bin/env bash
# A time limit is what the carma policy's backfill plans with, but it is the submitter's own
# claim: on one sim GPU, of two queued tasks the one with a long --time does not start first
# (longest first takes only measured runtimes), so a long limit buys no place at the front.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

job() { # SECONDS [submit options...]: a 30 GB job, so that one runs at a time
    local secs=$1
    shift
    "$CARMA" submit --mem 30G "$@" -- "$FAKEJOB" --mem 30G --seconds "$secs"
}
first_launch() {
    sqlite3 "$STATE/carma.db" "SELECT task_id FROM events WHERE kind='launch' ORDER BY seq" \
        | awk '!seen[$1]++' | tr '\n' ' '
}
run_case() { # MAX_WAIT_S: prints the launch order of a (running), b (no --time), c (--time)
    rm -rf "$STATE"
    printf 'policy = carma\nsample_interval_s = 0.2\nkill_grace_s = 1\ncarma_max_wait_s = %s\n' \
        "$1" >"$tmp/carma.conf"
    start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
    local a b c
    a=$(job 3) && b=$(job 1) && c=$(job 1 --time 10:00) || fail "submit"
    "$CARMA" wait --timeout 30 "$a" "$b" "$c" >/dev/null || fail "tasks did not finish"
    first_launch
    stop_daemon
}
out=$(run_case 86400)
[ "$out" = "1 2 3 " ] || fail "c's --time 10:00 should not pass b, got $out"

[ $fails -eq 0 ] || { echo "--- daemon log"; cat "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ]
