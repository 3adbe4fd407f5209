#!/usr/bin/env bash
# What happens around a daemon's absence is not lost. A cancel it accepted survives a
# restart: `carma cancel` of a running task commits a "cancel" event and answers; the signal
# goes out on the next reap (within 0.2 s). A daemon stopped in between (restart, crash) used
# to forget it: the adopted task ran on and ended done. Here the gap is made certain: the
# daemon is killed while the task runs and the event is written as that daemon would have
# committed it; the next daemon sends the cancel. A cancel event of an earlier attempt does
# not cancel the one running now; one whose supervisor died meanwhile ends cancelled, and so
# does one that crashed out of memory meanwhile (not relaunched). A daemon stopped right after
# a cancel sends it before it exits. A task that ends while the daemon is away keeps its end
# time and peak; a time limit holds while it is away, and one the killed daemon acted on is
# not said twice (one timeout event); one that crashed out of memory needing more than any
# GPU holds ends failed, not queued for a recovery it never gets.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'sample_interval_s = 0.1\ngrace_s = 0.1\nkill_grace_s = 1\n' >"$tmp/carma.conf"
crash() { kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=; }
restart() { start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"; }
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
a=$("$CARMA" submit --mem 1G --name A -- sleep 60)
b=$("$CARMA" submit --mem 1G --name B -- sleep 3)
running() { [ "$("$CARMA" show --json "$1" | jq -r .state)" = running ] && [ -s "$STATE/attempts/$1.1/started" ]; }
wait_until 10 running "$a" || fail "A did not start"
wait_until 10 running "$b" || fail "B did not start"
crash
now=$(date +%s.%N)
# A: cancelled just now, its signal never sent. B: a cancel before its attempt began, by the
# events' order, though its time says now (as after a backward step of the wall clock): the
# order decides, not the time.
sqlite3 "$STATE/carma.db" <<SQL
INSERT INTO events(task_id, at, kind, detail) VALUES($a, $now, 'cancel', 'test');
INSERT INTO events(seq, task_id, at, kind, detail)
  VALUES((SELECT min(seq) FROM events) - 1, $b, $now, 'cancel', 'test');
SQL
restart
grep -q "task $a: its cancel, asked for before the restart, is sent now" "$tmp/daemon.log" \
    || fail "A's cancel not taken up: $(cat "$tmp/daemon.log")"
ended() { case "$("$CARMA" show --json "$1" | jq -r .state)" in queued|running) return 1;; esac; }
wait_until 10 ended "$a" || fail "A still runs after its cancel"
[ "$("$CARMA" show --json "$a" | jq -r .state)" = cancelled ] \
    || fail "A should be cancelled: $("$CARMA" show --json "$a" | jq -c .)"
wait_until 15 ended "$b" || fail "B did not end"
[ "$("$CARMA" show --json "$b" | jq -r .state)" = done ] \
    || fail "B should be done (the cancel was of no attempt of now): $("$CARMA" show --json "$b" | jq -c .)"
grep -q "task $b: its cancel" "$tmp/daemon.log" && fail "B's old cancel was sent"

# A cancel accepted whose attempt then lost its supervisor (and its task with it) while the
# daemon was away: the attempt ends cancelled, as asked, not failed.
e=$("$CARMA" submit --mem 1G --name E -- sleep 60)
wait_until 10 running "$e" || fail "E did not start"
crash
kill -KILL "$(cat "$STATE/attempts/$e.1/lock")"
sqlite3 "$STATE/carma.db" "INSERT INTO events(task_id, at, kind, detail) VALUES($e, $(date +%s.%N), 'cancel', 'test')"
restart
wait_until 5 ended "$e" || fail "E not ended"
[ "$("$CARMA" show --json "$e" | jq -r .state)" = cancelled ] \
    || fail "E should be cancelled: $("$CARMA" show --json "$e" | jq -c '{state, outcome}')"
# One that crashed out of memory while the daemon was away, before the cancel reached it: not
# relaunched (it used to go to the recovery queue and run again), but cancelled, as a daemon
# that saw the crash would have ended it.
p=$("$CARMA" submit --mem 1G --name P -- sh -c 'sleep 1; echo "CUDA out of memory" >&2; exit 1')
wait_until 10 running "$p" || fail "P did not start"
crash
sqlite3 "$STATE/carma.db" \
    "INSERT INTO events(task_id, at, kind, detail) VALUES($p, $(date +%s.%N), 'cancel', 'test')"
wait_until 10 test -s "$STATE/attempts/$p.1/result" || fail "P did not end"
restart
wait_until 5 ended "$p" \
    || fail "P not ended: $("$CARMA" show --json "$p" | jq -c '{queue, attempts}')"
t=$("$CARMA" show --json "$p")
jq -e '.state == "cancelled" and .attempts == 1' <<<"$t" >/dev/null \
    || fail "P should be cancelled after 1 attempt: $(jq -c '{state, outcome, attempts}' <<<"$t")"

# A daemon stopped (SIGTERM) right after accepting a cancel sends it before it exits: the
# task does not run on until the next start. (Before, only a reap within 0.2 s sent it.)
c=$("$CARMA" submit --mem 1G --name C -- sleep 60)
wait_until 10 running "$c" || fail "C did not start"
"$CARMA" cancel "$c" >/dev/null || fail "cancel C"
stop_daemon
result_cancelled() { grep -qx "cancelled 1" "$STATE/attempts/$c.1/result"; }
wait_until 5 result_cancelled || fail "C was not cancelled by the stopping daemon"
restart
wait_until 5 ended "$c" || fail "C not ended after the restart"
[ "$("$CARMA" show --json "$c" | jq -r .state)" = cancelled ] || fail "C should be cancelled"

# A task that ends while the daemon is away: its end is when it ended (its result file's
# time), not the restart, and the peak seen before the stop is kept (the attempt's row is
# written as the peak grows).
d=$("$CARMA" submit --mem 20G --name D -- "$FAKEJOB" --mem 15G --seconds 6)
ended_file() { [ -s "$STATE/attempts/$d.1/result" ]; }
seen_peak() {
    local p
    p=$(sqlite3 "$STATE/carma.db" "SELECT ifnull(peak_mib, -1) FROM attempts WHERE task_id = $d") &&
        [ "$p" -ge 15000 ] && ! ended_file
}
wait_until 5 seen_peak || fail "D's peak not stored while it ran"
stop_daemon
ended_file && fail "D ended before the daemon stopped: nothing ended while it was away"
wait_until 10 ended_file || fail "D did not end"
sleep 4 # the restart comes well after the end
restart
wait_until 5 ended "$d" || fail "D not ended after the restart"
t=$("$CARMA" show --json "$d")
jq -e '.state == "done" and .elapsed_s < 9 and .peak_mib >= 15000' <<<"$t" >/dev/null \
    || fail "D's end or peak: $(jq -c '{state, elapsed_s, peak_mib}' <<<"$t")"

# A time limit holds while the daemon is away: the supervisor cancels the task itself (it
# used to run on until a daemon came back), and the restarted daemon ends it `timeout`.
l=$("$CARMA" submit --mem 1G --name L --time 0:02 -- sleep 60)
wait_until 10 running "$l" || fail "L did not start"
crash
# (cancelled 2: by its supervisor, at the time limit)
limit_kept() { grep -qx "cancelled 2" "$STATE/attempts/$l.1/result" 2>/dev/null; }
wait_until 10 limit_kept || fail "L ran on past its time limit while the daemon was down"
restart
wait_until 5 ended "$l" || fail "L not ended after the restart"
t=$("$CARMA" show --json "$l")
jq -e '.state == "timeout" and .end_reason == "time limit of 2 s reached" and .elapsed_s < 6' \
    <<<"$t" >/dev/null || fail "L: $(jq -c '{state, end_reason, elapsed_s}' <<<"$t")"
# its events say why it ended, as when the daemon's own look ends a task at its limit
[ "$(sqlite3 "$STATE/carma.db" "SELECT count(*) FROM events WHERE task_id=$l AND kind='timeout'")" = 1 ] \
    || fail "L: no timeout event: $(sqlite3 "$STATE/carma.db" "SELECT kind FROM events WHERE task_id=$l")"

# A time limit the last daemon saw first (its timeout event committed, as d_time_limit does)
# before it was killed: the next one finds the end and says it no second time.
k=$("$CARMA" submit --mem 1G --name K --time 0:02 -- sleep 60)
wait_until 10 running "$k" || fail "K did not start"
crash
sqlite3 "$STATE/carma.db" "INSERT INTO events(task_id, at, kind, detail)
    VALUES($k, $(date +%s.%N), 'timeout', 'time limit of 2 s reached')"
wait_until 10 test -s "$STATE/attempts/$k.1/result" || fail "K did not end"
restart
wait_until 5 ended "$k" || fail "K not ended after the restart"
[ "$("$CARMA" show --json "$k" | jq -r .state)" = timeout ] || fail "K should be timeout"
[ "$(sqlite3 "$STATE/carma.db" "SELECT count(*) FROM events WHERE task_id=$k AND kind='timeout'")" = 1 ] \
    || fail "K: $(sqlite3 "$STATE/carma.db" "SELECT kind FROM events WHERE task_id=$k")"

# An out-of-memory crash, while the daemon is away, of a task needing more than any GPU holds:
# the restarted daemon ends it failed, not retried, as a daemon that saw the crash does. It
# used to queue it for recovery at the head of every queue, where it never fit and held back
# every later task for good.
o=$("$CARMA" submit --mem 1G --name O -- sh -c "sleep 1; exec $FAKEJOB --mem 45G --seconds 1")
wait_until 10 running "$o" || fail "O did not start"
crash
wait_until 10 test -s "$STATE/attempts/$o.1/result" || fail "O did not end"
restart
wait_until 5 ended "$o" \
    || fail "O queued again: $("$CARMA" show --json "$o" | jq -c '{queue, reason}')"
t=$("$CARMA" show --json "$o")
jq -e '.state == "failed" and .outcome == "oom" and .attempts == 1' <<<"$t" >/dev/null \
    || fail "O: $(jq -c '{state, outcome, attempts}' <<<"$t")"
sqlite3 "$STATE/carma.db" "SELECT detail FROM events WHERE task_id = $o AND kind = 'ended'" \
    | grep -q "not retried: it needs 46080 MiB" || fail "O's end does not say why"
stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
