#!/usr/bin/env bash
# Old task logs go: a daemon removes the attempt directories (STATE/attempts/ID.N) of tasks that
# ended (done, failed, cancelled, timed out) more than keep_attempt_logs_days ago, at start and
# hourly, and records it as an event; their stored environments go too; recent tasks' and
# live tasks' logs stay, and 0 keeps everything. The end times are made old in the database while the daemon is down.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'sample_interval_s = 0.1\ngrace_s = 0.2\nkill_grace_s = 1\nkeep_attempt_logs_days = 7\n' \
    >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
old=$("$CARMA" submit -- echo old) || fail "submit old"
new=$("$CARMA" submit -- echo new) || fail "submit new"
live=$("$CARMA" submit -- sleep 30) || fail "submit live"
slow=$("$CARMA" submit --time 0:01 -- sleep 30) || fail "submit slow" # ends timeout
ended() { [ "$("$CARMA" show --json "$1" | jq -r .state)" = done ]; }
running() { [ "$("$CARMA" show --json "$live" | jq -r .state)" = running ]; }
wait_until 10 ended "$old" || fail "task $old did not finish"
wait_until 10 ended "$new" || fail "task $new did not finish"
wait_until 10 running || fail "task $live did not start"
timed_out() { [ "$("$CARMA" show --json "$slow" | jq -r .state)" = timeout ]; }
wait_until 15 timed_out || fail "task $slow did not time out"
for id in "$old" "$new" "$live" "$slow"; do
    [ -d "$STATE/attempts/$id.1" ] || fail "task $id has no attempt directory"
done
stop_daemon

# 8 days ago for the old task; the live one's row is given an old end too, as a row damaged
# by hand could be: its state (running) keeps its logs all the same.
sqlite3 "$STATE/carma.db" "UPDATE tasks SET ended_at = strftime('%s','now') - 8*86400
                             WHERE id IN ($old, $live, $slow);" || fail "sqlite3 update"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
gone() { [ ! -e "$STATE/attempts/$old.1" ]; }
wait_until 10 gone || fail "the logs of task $old, ended 8 days ago, were kept (keep 7 days)"
[ ! -e "$STATE/attempts/$slow.1" ] || fail "the logs of task $slow, timed out 8 days ago, were kept"
[ -d "$STATE/attempts/$new.1" ] || fail "the logs of task $new, ended just now, were removed"
[ -d "$STATE/attempts/$live.1" ] || fail "the logs of the live task $live were removed"
"$CARMA" show "$old" >/dev/null || fail "show of a task whose logs were purged"
# its logs are gone, and `logs` says so (it printed nothing and exited 0: an empty output)
for args in "$old" "--follow $old" "--attempt 1 $old"; do
    out=$("$CARMA" logs $args 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -qF "task $old's logs were removed" <<<"$out" \
        || fail "logs $args of a purged task: rc $rc, '$out'"
done
n=$(sqlite3 "$STATE/carma.db" "SELECT count(*) FROM events WHERE task_id = $old AND kind = 'logs-purged';")
[ "$n" = 1 ] || fail "the purge should be one event of task $old, found $n"
grep -q "removed the logs of 2 task(s) ended over 7 day(s) ago" "$tmp/daemon.log" \
    || fail "the daemon should log the purge: $(cat "$tmp/daemon.log")"
# their environments (a submitter's tokens) go with the logs; the recent and live tasks' stay
env_of() { sqlite3 "$STATE/carma.db" "SELECT json_type(spec, '$.env') FROM tasks WHERE id = $1;"; }
[ -z "$(env_of "$old")" ] && [ -z "$(env_of "$slow")" ] \
    || fail "the environment of tasks ended 8 days ago was kept: $(env_of "$old") $(env_of "$slow")"
[ "$(env_of "$new")" = array ] && [ "$(env_of "$live")" = array ] \
    || fail "the environment of the recent or live task went: $(env_of "$new") $(env_of "$live")"
"$CARMA" history --json >/dev/null || fail "history after the environments went"
stop_daemon

# keep_attempt_logs_days = 0 keeps everything
sqlite3 "$STATE/carma.db" "UPDATE tasks SET ended_at = strftime('%s','now') - 800*86400
                             WHERE id = $new;" || fail "sqlite3 update"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf" --set keep_attempt_logs_days=0
"$CARMA" queue >/dev/null
[ -d "$STATE/attempts/$new.1" ] || fail "keep_attempt_logs_days = 0 should keep every log"
"$CARMA" cancel "$live" >/dev/null
stop_daemon
exit $((fails > 0))
