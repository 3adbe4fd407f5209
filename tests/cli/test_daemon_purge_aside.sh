#!/usr/bin/env bash
# The attempt directories a launch moved aside (STATE/attempts/ID.N.replaced-K: another
# attempt's files, found when a replaced database began task ids again) go as old task logs
# do: once nothing in them was written for keep_attempt_logs_days, at start and hourly. Kept:
# a recent one, one whose lock a supervisor (here `flock`) holds (nor is an ended task's
# directory removed while its lock is held), a symlink with that name (and
# what it points to), names of another form; a link inside one is removed, not followed. A
# directory moved aside counts its days from the move, not from its old attempt's end.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
command -v flock >/dev/null || { echo "flock is not installed: skipped"; exit 77; }

conf=(--sim-gpus 1xA100-40GB --set keep_attempt_logs_days=7)
start_daemon "${conf[@]}"
t=$("$CARMA" submit -- echo held) || fail "submit"
wait_until 10 task_is "$t" done || fail "task $t: $(task_state "$t")"
stop_daemon
A=$STATE/attempts
# task t ended 8 days ago by its row, but a supervisor still holds its directory's lock
sqlite3 "$STATE/carma.db" "UPDATE tasks SET ended_at = strftime('%s','now') - 8*86400
                             WHERE id = $t;" || fail "sqlite3 update"
aside() { # NAME: a directory moved aside, its files written 8 days ago
    mkdir -m 700 "$A/$1" && echo out >"$A/$1/stdout" && echo 'exit 0' >"$A/$1/result" \
        && : >"$A/$1/lock" && touch -d '8 days ago' "$A/$1"/* "$A/$1"
}
aside 5.1.replaced-1
aside 6.1.replaced-2
echo recent >"$A/6.1.replaced-2/stderr" # written now: kept
aside 7.2.replaced-1
mkdir -m 700 "$tmp/elsewhere" && echo precious >"$tmp/elsewhere/stdout"
touch -d '8 days ago' "$tmp/elsewhere/stdout" "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$A/8.1.replaced-1"
aside 9.1.replaced-1
echo precious >"$tmp/target"
ln -s "$tmp/target" "$A/9.1.replaced-1/stderr"
touch -h -d '8 days ago' "$A/9.1.replaced-1/stderr" "$A/9.1.replaced-1"
aside 10.1.replaced-x
aside notes.replaced-1
# a supervisor still running in 7.2.replaced-1: its lock is held
(exec 9<"$A/7.2.replaced-1/lock" 8<"$A/$t.1/lock" && flock 9 && flock 8 && exec sleep 60) \
    >/dev/null 2>&1 &
holder=$!
wait_until 5 sh -c "! flock -n '$A/$t.1/lock' true" || fail "flock did not take the locks"

start_daemon "${conf[@]}"
wait_until 5 grep -q "removed 2 attempt directory(ies) moved aside" "$tmp/daemon.log" \
    || fail "the daemon should log the purge: $(cat "$tmp/daemon.log")"
[ ! -e "$A/5.1.replaced-1" ] || fail "5.1.replaced-1, unwritten for 8 days, was kept"
[ ! -e "$A/9.1.replaced-1" ] || fail "9.1.replaced-1, unwritten for 8 days, was kept"
[ "$(cat "$tmp/target")" = precious ] || fail "a file a link in 9.1.replaced-1 points to went"
[ -d "$A/6.1.replaced-2" ] || fail "6.1.replaced-2, written just now, was removed"
[ -d "$A/7.2.replaced-1" ] || fail "7.2.replaced-1, whose lock is held, was removed"
[ -d "$A/$t.1" ] || fail "task $t's directory, whose lock is held, was removed"
[ -L "$A/8.1.replaced-1" ] && [ "$(cat "$tmp/elsewhere/stdout")" = precious ] \
    || fail "the symlink 8.1.replaced-1, or what it points to, went"
grep -q "attempts/8.1.replaced-1: not a directory (kept)" "$tmp/daemon.log" \
    || fail "the symlink kept should be logged"
[ -d "$A/10.1.replaced-x" ] && [ -d "$A/notes.replaced-1" ] \
    || fail "a directory of another name was removed"
stop_daemon
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# Moved aside by a launch: its days count from the move. Task t's directory, kept above, holds
# an attempt that ended 8 days ago; its database is replaced, and task ids begin again.
touch -d '8 days ago' "$A/$t.1"/* "$A/$t.1"
mv "$STATE/carma.db" "$tmp/old.db"
rm -f "$STATE/carma.db-wal" "$STATE/carma.db-shm"
start_daemon "${conf[@]}"
n=$("$CARMA" submit -- echo second) || fail "submit after the database went"
[ "$n" = "$t" ] || fail "a fresh database should give id $t again, gave $n"
wait_until 10 task_is "$n" done || fail "the new task $n: $(task_state "$n")"
stop_daemon
start_daemon "${conf[@]}" # purges at start
"$CARMA" queue >/dev/null
[ -d "$A/$n.1.replaced-1" ] || fail "a directory moved aside just now was purged at the next start"
stop_daemon
exit $((fails > 0))
