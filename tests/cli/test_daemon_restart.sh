#!/usr/bin/env bash
# What a restarted daemon makes of the attempts it left behind: a supervisor that died while
# the daemon was down (its task dies with it) makes the attempt fail for good; an attempt
# written but never launched sends its task back to its queue without counting; queued tasks
# keep their order; `carma logs --follow` follows a task to its end.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'sample_interval_s = 0.1\ngrace_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
a=$("$CARMA" submit --name A -- sleep 30)
b=$("$CARMA" submit --name B -- sh -c 'echo B-ran')
running() { [ "$("$CARMA" show --json "$a" | jq -r .state)" = running ] && [ -s "$STATE/attempts/$a.1/started" ]; }
wait_until 10 running || fail "A did not start"
task_pid=$(cat "$STATE/attempts/$a.1/started")
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
kill -KILL "$(cat "$STATE/attempts/$a.1/lock")"        # A's supervisor dies too
gone() { ! kill -0 "$task_pid" 2>/dev/null; }
wait_until 5 gone || fail "A's task outlived its supervisor"
# C: written as launched, never started (the daemon died between the commit and the fork);
# submitted now (a task submitted long ago would be overdue, and go first, under the carma
# policy's carma_max_wait_s).
now=$(date +%s)
sqlite3 "$STATE/carma.db" <<SQL
INSERT INTO tasks(id, uid, gid, user, spec, state, recovery, queue_seq, attempts, submitted_at)
  VALUES(3, 0, 0, 'root', '{"name":"C","command":"echo C-ran","cwd":"/"}', 'running', 0, 3, 1, $now);
INSERT INTO attempts(task_id, n, gpus, dir, state, started_at)
  VALUES(3, 1, '0', '$STATE/attempts/3.1', 'starting', $now);
SQL
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
grep -q "task $a: attempt 1 lost its supervisor while the daemon was away" "$tmp/daemon.log" \
    || fail "A's lost supervisor not noticed"
wait_until 5 sh -c "! pgrep -g $task_pid" || fail "A's process group outlived its supervisor"
grep -q "task 3: attempt 1 was never started; queued again" "$tmp/daemon.log" \
    || fail "C not requeued"
out=$("$CARMA" logs --follow 3) || fail "logs --follow"
[ "$out" = C-ran ] || fail "C's output: '$out'"
all_ended() { "$CARMA" queue --all --json | jq -e 'all(.[]; .state=="done" or .state=="failed")'; }
wait_until 10 all_ended || fail "tasks did not end"
q=$("$CARMA" queue --all --json)
[ "$(jq -r ".[] | select(.id==$a) | .state" <<<"$q")" = failed ] || fail "A should have failed"
[ "$(jq -r '.[] | select(.id==3) | "\(.state) \(.attempts)"' <<<"$q")" = "done 1" ] \
    || fail "C should be done after one attempt: $(jq -c '.[] | select(.id==3)' <<<"$q")"
[ "$(jq -r ".[] | select(.id==$b) | .state" <<<"$q")" = done ] || fail "B should be done"
order=$(sqlite3 "$STATE/carma.db" "SELECT task_id FROM events WHERE kind='launch' ORDER BY seq" | tr '\n' ' ')
[ "$order" = "1 2 3 " ] || fail "launch order: $order"
[ "$(sqlite3 "$STATE/carma.db" "SELECT n, state FROM attempts WHERE task_id=3" | tr '\n' ' ')" = "1|ended " ] \
    || fail "C's attempts: only the real one"
stop_daemon

# A database replaced (moved aside, as one does with a corrupt one): task ids begin again, and
# the new task 1 finds task 1's old attempt directory. It is moved aside, kept and logged, and
# the new task runs on its own (it ended at once with the old one's exit status).
mv "$STATE/carma.db" "$STATE/old.db"
rm -f "$STATE/carma.db-wal" "$STATE/carma.db-shm"
start_daemon --sim-gpus 1xA100-40GB
n=$("$CARMA" submit --mem 1G -- sh -c 'echo new') || fail "submit after the database went"
[ "$n" = 1 ] || fail "a fresh database should give id 1, gave $n"
wait_until 10 task_is "$n" done || fail "the new task 1: $(task_state "$n")"
[ "$("$CARMA" logs "$n")" = new ] || fail "the new task 1's output: $("$CARMA" logs "$n")"
grep -q "task 1 attempt 1: its directory held another attempt's files; they are kept in \
attempts/1.1.replaced-1" "$tmp/daemon.log" || fail "the move aside is not logged"
[ -d "$STATE/attempts/1.1.replaced-1" ] || fail "the old attempt's files are gone"
stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
