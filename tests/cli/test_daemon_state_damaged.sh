#!/usr/bin/env bash
# A state database that is damaged (pages overwritten in its middle, or cut short), not an
# SQLite database at all, another program's SQLite database, or of a newer format is refused
# at start-up: the daemon exits non-zero with an error naming the file and what to do, serves
# nothing, and leaves the file byte for byte as it was. (A damaged one was found only at its
# first use of a bad page: the daemon served, and a later write stopped it.)
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed: skipped"; exit 77; }

start_daemon --sim-gpus 1xA100-40GB
for i in 1 2 3; do "$CARMA" submit -- echo "$i" >/dev/null || fail "submit $i"; done
wait_until 10 task_is 3 done || fail "task 3: $(task_state 3)"
stop_daemon
DB=$STATE/carma.db
# pages enough that one in the middle holds rows, not only the schema
sqlite3 "$DB" "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 3000)
               INSERT INTO events(task_id, at, kind, detail)
               SELECT 1, i, 'note', printf('%0100d', i) FROM k;" || fail "sqlite3 fill"
cp "$DB" "$tmp/good.db"
pages=$(( $(stat -c %s "$DB") / 4096 ))
[ "$pages" -ge 40 ] || fail "the database has only $pages pages"

# refused NAME WANT: starts the daemon on the database as it is now; it must exit non-zero,
# naming the file and WANT, serve nothing, and leave the file as it was
refused() {
    local before after out rc
    before=$(md5sum <"$DB")
    out=$(timeout 10 "$CARMA" daemon --socket "$SOCK" --state "$STATE" --gpu-backend sim \
        --sim-gpus 1xA100-40GB --set state_min_free_mib=0 2>&1 >/dev/null); rc=$?
    after=$(md5sum <"$DB")
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$1: the daemon exited $rc: $out"
    grep -qF "state database $DB " <<<"$out" || fail "$1: the error does not name $DB: $out"
    grep -qF "$2" <<<"$out" || fail "$1: the error does not say '$2': $out"
    grep -qF "carma left it as it is" <<<"$out" || fail "$1: the error does not say it is kept"
    [ "$before" = "$after" ] || fail "$1: the file was changed"
    [ ! -S "$SOCK" ] || fail "$1: a socket was left"
}

corrupt() { # FIRST_PAGE COUNT: overwritten with 0xab bytes
    head -c $(($2 * 4096)) /dev/zero | tr '\0' '\253' \
        | dd of="$DB" bs=4096 seek="$1" conv=notrunc status=none
}
corrupt $((pages / 2)) 4
refused "pages overwritten in its middle" "is damaged (SQLite's quick_check: "
cp "$tmp/good.db" "$DB"
truncate -s $(( (pages / 2) * 4096 )) "$DB"
refused "cut short at half" "is damaged ("
head -c 100000 /dev/urandom >"$DB"
refused "random bytes" "is not an SQLite database"
rm "$DB"
sqlite3 "$DB" "CREATE TABLE tasks(name TEXT, due TEXT); INSERT INTO tasks VALUES('x', 'y');"
refused "another program's database" "is an SQLite database but not carma's"
[ "$(sqlite3 "$DB" .schema)" = "CREATE TABLE tasks(name TEXT, due TEXT);" ] \
    || fail "another program's database was given carma's tables: $(sqlite3 "$DB" .schema)"
cp "$tmp/good.db" "$DB"
sqlite3 "$DB" "PRAGMA user_version = 99;"
refused "a newer format" "has format 99, newer than this carma reads"

# Odd files in the state directory, refused with what is there and what to do: an empty
# database where attempts/ holds earlier attempts (it would have begun again with no tasks); a
# database's companion (-wal, -shm) or the lock that is a link, a directory or another's; a
# file in attempts/'s place. (SQLite said "unable to open database file"; the lock "Too many
# levels of symbolic links"; attempts/ "Not a directory".)
odd() { # WANT: the daemon must refuse the state directory as it is now, saying WANT
    local out rc
    out=$(timeout 10 "$CARMA" daemon --socket "$SOCK" --state "$STATE" --gpu-backend sim \
        --sim-gpus 1xA100-40GB --set state_min_free_mib=0 2>&1 >/dev/null); rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$1: the daemon exited $rc: $out"
    grep -qF "$1" <<<"$out" || fail "the error does not say '$1': $out"
}
: >"$DB"
odd "$DB is empty, but $STATE/attempts holds the directories of earlier attempts"
[ ! -s "$DB" ] || fail "the empty database was written"
cp "$tmp/good.db" "$DB"
ln -s "$tmp/elsewhere" "$DB-wal"
odd "$DB-wal is not a regular file (a symbolic link); refusing it: move it away"
[ ! -e "$tmp/elsewhere" ] || fail "the -wal symlink was followed"
rm "$DB-wal" && mkdir "$DB-shm"
odd "$DB-shm is not a regular file (a directory)"
rmdir "$DB-shm" && touch "$DB-wal" && chown 65534 "$DB-wal" 2>/dev/null \
    && odd "$DB-wal is owned by uid 65534"
rm -f "$DB-wal"
mv "$STATE/daemon.lock" "$tmp/lock" && ln -s "$tmp/lock" "$STATE/daemon.lock"
odd "$STATE/daemon.lock is not a regular file (a symbolic link); refusing it: move it away"
rm "$STATE/daemon.lock"
mv "$STATE/attempts" "$tmp/attempts" && echo x >"$STATE/attempts"
odd "$STATE: attempts is not a directory (a file is in its place); refusing it: move it away"
rm "$STATE/attempts" && mv "$tmp/attempts" "$STATE/attempts"

# the good one still serves, its tasks all there
cp "$tmp/good.db" "$DB"
start_daemon --sim-gpus 1xA100-40GB
[ "$("$CARMA" queue --all --json | jq length)" = 3 ] || fail "the good database's tasks"
# A running attempt's directory replaced by a symlink while the daemon was away: never
# followed, the task adopted as unknown, and the log says what is there (it said "its files
# are unreadable").
r=$("$CARMA" submit -- sleep 30) || fail "submit"
wait_until 10 task_is "$r" running || fail "task $r: $(task_state "$r")"
stop_daemon
mv "$STATE/attempts/$r.1" "$tmp/real"
ln -s "$tmp/real" "$STATE/attempts/$r.1"
start_daemon --sim-gpus 1xA100-40GB
task_is "$r" running || fail "task $r, its directory a symlink: $(task_state "$r")"
grep -qF "task $r: attempt 1 cannot be looked at: $STATE/attempts/$r.1 is a symbolic link, \
not its directory" "$tmp/daemon.log" || fail "the symlink is not named: $(cat "$tmp/daemon.log")"
stop_daemon
rm "$STATE/attempts/$r.1" && mv "$tmp/real" "$STATE/attempts/$r.1"
exit $((fails > 0))
