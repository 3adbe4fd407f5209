#!/usr/bin/env bash
# max_output_mib: a task's stdout and stderr reach their logs through its supervisor (pipes),
# which writes at most that many MiB of them together; past it the rest is dropped, a line in
# the stderr log says so, and the task is cancelled (not retried) with the reason in `show`
# and the daemon's log. Output written during the cancel's grace is dropped too, and a process
# the task left behind (out of its process group) cannot write to the logs once the attempt
# has ended. A task under the limit runs to its end; 0 means no limit.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
mib() { echo $(( ($(stat -c %s "$1") + 1048575) / 1048576 )); }

printf 'sample_interval_s = 0.1\ngrace_s = 0.2\nkill_grace_s = 2\nmax_output_mib = 1\n' \
    >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
# 0.75 MiB on stdout, then 0.75 on stderr (together past 1 MiB, neither alone); on SIGTERM it
# writes 4 MiB more before it exits (within the grace)
big=$("$CARMA" submit --name big -- sh -c 'trap "head -c 4194304 /dev/zero; exit 0" TERM;
    echo first line; head -c 786432 /dev/zero | tr "\0" x;
    head -c 786432 /dev/zero | tr "\0" y >&2; while :; do sleep 0.1; done')
small=$("$CARMA" submit --name small -- sh -c 'head -c 524288 /dev/zero | tr "\0" x; sleep 1')
"$CARMA" wait --timeout 30 "$big" "$small" >/dev/null
out=$("$CARMA" show --json "$big")
[ "$(jq -r .state <<<"$out")" = cancelled ] && [ "$(jq .attempts <<<"$out")" = 1 ] \
    || fail "big: $(jq -c '[.state, .attempts]' <<<"$out")"
[ "$(jq -r .end_reason <<<"$out")" = "output passed max_output_mib = 1 MiB" ] \
    || fail "big's reason: $(jq -c .end_reason <<<"$out")"
[ "$(grep -c "task $big: output passed max_output_mib = 1 MiB; cancelled" "$tmp/daemon.log")" = 1 ] \
    || fail "not logged once: $(grep "task $big" "$tmp/daemon.log")"
[ "$("$CARMA" logs "$big" 2>/dev/null | head -1)" = "first line" ] || fail "big's log lost its beginning"
"$CARMA" logs "$big" 2>&1 >/dev/null | grep -qF "carma: the task's output passed max_output_mib (1 MiB); the rest is dropped and the task cancelled (unless it has ended)" \
    || fail "the stderr log does not say why it stops"
total=$(( $(stat -c %s "$STATE/attempts/$big.1/stdout") + $(stat -c %s "$STATE/attempts/$big.1/stderr") ))
[ "$total" -le $((1048576 + 200)) ] || fail "big's logs hold $total bytes, past the limit (with the grace's output)"
[ "$(sqlite3 "$STATE/carma.db" "SELECT count(*) FROM events WHERE task_id=$big AND kind='output_limit'")" = 1 ] \
    || fail "no output_limit event"
task_is "$small" done || fail "small (under the limit): $(task_state "$small")"

# a writer the task leaves behind, out of its process group, writes into nothing once the
# attempt has ended
left=$("$CARMA" submit --name left -- sh -c 'setsid sh -c "sleep 1; head -c 2097152 /dev/zero" &
    echo started')
"$CARMA" wait --timeout 30 "$left" >/dev/null
task_is "$left" done || fail "left: $(task_state "$left")"
sleep 2
[ "$(stat -c %s "$STATE/attempts/$left.1/stdout")" -le 100 ] \
    || fail "a writer left behind grew the log to $(stat -c %s "$STATE/attempts/$left.1/stdout") bytes"
stop_daemon

# 0: no limit
printf 'sample_interval_s = 0.1\ngrace_s = 0.2\nkill_grace_s = 1\nmax_output_mib = 0\n' \
    >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
free=$("$CARMA" submit --name free -- sh -c 'head -c 2097152 /dev/zero | tr "\0" x; sleep 1')
"$CARMA" wait --timeout 30 "$free" >/dev/null
task_is "$free" done || fail "with no limit: $(task_state "$free")"
[ "$(mib "$STATE/attempts/$free.1/stdout")" = 2 ] || fail "free's log is not whole"
stop_daemon
"$CARMA" config --set max_output_mib=-1 >/dev/null 2>&1 && fail "max_output_mib = -1 accepted"
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
