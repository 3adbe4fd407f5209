#!/usr/bin/env bash
# The daemon's state directory, attacked: a root daemon refuses a state directory (or socket
# directory) another user created or can write to, a symlink in place of it or of its
# database, and a database someone else owns; it keeps its state private (directory 0700,
# database and results 0600, each task's logs its submitter's alone, 0600); and a second
# daemon on the same state directory is refused, naming the first one's pid; a relative one is
# made absolute; one that cannot be made is named, with the parent that failed. The attacks need
# a second user (uid 65534): as another user, the test skips them and checks the rest.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
printf 'sample_interval_s = 0.2\ngrace_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"
root=0
[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && root=1
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# refused STATE_DIR PATTERN [SOCKET]: a daemon on that state directory must exit, saying PATTERN.
refused() {
    local out
    out=$(timeout 5 "$CARMA" daemon --socket "${3:-$tmp/r.sock}" --state "$1" --gpu-backend sim \
        --config "$tmp/carma.conf" 2>&1 >/dev/null)
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "daemon accepted $1 (rc $rc)"; return; }
    grep -q -- "$2" <<<"$out" || fail "refusal of $1 should say '$2': $out"
}

if [ $root -eq 1 ]; then
    # Created first by another user in a directory open to all (as /tmp): refused, naming
    # path, owner and mode; nothing is written in it.
    mkdir -m 1777 "$tmp/pub" && chmod 1777 "$tmp/pub"
    as_nobody mkdir -m 0700 "$tmp/pub/cs"
    refused "$tmp/pub/cs" "$tmp/pub/cs is owned by uid 65534 with mode 0700"
    [ -e "$tmp/pub/cs/carma.db" ] && fail "the daemon wrote into a state directory it refused"
    # Ours but writable by others.
    mkdir -m 0777 "$tmp/ww" && chmod 0777 "$tmp/ww"
    refused "$tmp/ww" "$tmp/ww is owned by uid 0 with mode 0777"
    # A socket directory another user can write to.
    as_nobody mkdir -m 0755 "$tmp/pub/sockdir"
    refused "$tmp/s2" "socket directory: $tmp/pub/sockdir is owned by uid 65534" \
        "$tmp/pub/sockdir/s"
    # A database that is not ours.
    mkdir -m 0700 "$tmp/db1" && touch "$tmp/db1/carma.db" && chown 65534 "$tmp/db1/carma.db"
    refused "$tmp/db1" "carma.db is owned by uid 65534"
    # The default state directory of a user (uid 65534) with no $HOME, /tmp/carma-state-UID,
    # taken first by another user (uid 65533): as a directory, or as a symlink to one of the
    # user's own. The user's daemon refuses it, naming it, and writes nothing.
    ustate=/tmp/carma-state-65534
    if [ -e "$ustate" ] || [ -L "$ustate" ]; then
        echo "SKIP: $ustate exists already: a default state directory taken first not checked"
    else
        trap 'rm -rf "$ustate"; cleanup' EXIT # ours: it was not there
        mkdir -m 0700 "$tmp/nbs" && chown 65534:65534 "$tmp/nbs"
        mkdir -m 0700 "$tmp/nbs/own" && chown 65534:65534 "$tmp/nbs/own"
        # user_refused PATTERN: the user's daemon with no --state or $HOME exits, saying PATTERN.
        user_refused() {
            local out rc
            out=$(env -u HOME timeout 5 setpriv --reuid=65534 --regid=65534 --clear-groups \
                "$CARMA" daemon --socket "$tmp/nbs/s" --gpu-backend sim --config "$tmp/carma.conf" \
                2>&1 >/dev/null)
            rc=$?
            [ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "the user's daemon accepted $ustate (rc $rc)"; return; }
            grep -qF -- "$1" <<<"$out" || fail "refusal of $ustate should say '$1': $out"
        }
        setpriv --reuid=65533 --regid=65533 --clear-groups mkdir -m 0700 "$ustate"
        user_refused "$ustate is owned by uid 65533 with mode 0700"
        rmdir "$ustate"
        setpriv --reuid=65533 --regid=65533 --clear-groups mkdir -m 0777 "$ustate"
        user_refused "$ustate is owned by uid 65533 with mode 0777"
        rmdir "$ustate"
        setpriv --reuid=65533 --regid=65533 --clear-groups ln -s "$tmp/nbs/own" "$ustate"
        user_refused "$ustate is a symbolic link"
        [ -z "$(ls -A "$tmp/nbs/own")" ] || fail "the daemon wrote through the symlink $ustate"
        rm -f "$ustate"
        [ ! -e "$tmp/nbs/s" ] || fail "a refused daemon made its socket"
    fi
fi
# A symlink in place of the state directory, or of its database.
mkdir -m 0700 "$tmp/real"
ln -s "$tmp/real" "$tmp/link"
refused "$tmp/link" "$tmp/link is a symbolic link"
mkdir -m 0700 "$tmp/db2" && ln -s "$tmp/real/x.db" "$tmp/db2/carma.db"
refused "$tmp/db2" "carma.db is not a regular file (a symbolic link)"
[ -e "$tmp/real/x.db" ] && fail "the daemon created a database through a symlink"

# A state directory whose parent cannot be made: the error names the directory wanted, then
# the parent that failed (not the parent alone); the default one (under a $HOME it cannot be
# made in) is named as the default, with how to name another.
touch "$tmp/plain"
refused "$tmp/plain/sub/state" \
    "state directory: $tmp/plain/sub/state: cannot create $tmp/plain/sub: Not a directory"
mkdir -m 0700 "$tmp/hs"
as_user=()
[ $root -eq 1 ] && chown 65534:65534 "$tmp/hs" && as_user=(setpriv --reuid=65534 --regid=65534 \
    --clear-groups)
if [ $root -eq 1 ] || [ "$(id -u)" -ne 0 ]; then
    # $XDG_STATE_HOME, when set, is the place ~/.local/state stands for; a relative one is
    # invalid (the XDG spec) and ignored, as an empty one is
    for xdg in "" rel/state; do
        out=$(HOME=/nonexistent XDG_STATE_HOME=$xdg timeout 5 "${as_user[@]}" "$CARMA" daemon \
            --socket "$tmp/hs/s" --gpu-backend sim --config "$tmp/carma.conf" 2>&1 >/dev/null)
        grep -qF "default state directory (name another with --state DIR or the config's \
state_dir): /nonexistent/.local/state/carma: cannot create /nonexistent: " <<<"$out" \
            || fail "a default state directory that cannot be made ('$xdg'): $out"
    done
    touch "$tmp/hs/plain"
    out=$(HOME=/nonexistent XDG_STATE_HOME=$tmp/hs/plain timeout 5 "${as_user[@]}" "$CARMA" \
        daemon --socket "$tmp/hs/s" --gpu-backend sim --config "$tmp/carma.conf" 2>&1 >/dev/null)
    grep -qF "state_dir): $tmp/hs/plain/carma: cannot create: Not a directory" <<<"$out" \
        || fail "the default state directory under \$XDG_STATE_HOME: $out"
    rm -f "$tmp/hs/plain"
fi

# Private state, with the umask most systems have.
umask 022
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
mode() { stat -c %a "$1"; }
owner() { stat -c %u "$1"; }
[ "$(mode "$STATE")" = 700 ] || fail "state directory mode $(mode "$STATE"), want 700"
[ "$(mode "$STATE/carma.db")" = 600 ] || fail "carma.db mode $(mode "$STATE/carma.db"), want 600"
[ "$(mode "$STATE/attempts")" = 700 ] || fail "attempts mode $(mode "$STATE/attempts"), want 700"
submitter=$(id -u)
if [ $root -eq 1 ]; then
    mkdir "$tmp/work" && chown 65534:65534 "$tmp/work"
    id=$(cd "$tmp/work" && as_nobody "$CARMA" submit --json -- sh -c 'echo secret >&2; touch made' | jq .id)
    submitter=65534
else
    id=$(cd "$tmp" && "$CARMA" submit --json -- sh -c 'echo secret >&2; touch made' | jq .id)
fi
done_() { [ "$("$CARMA" show --json "$id" | jq -r .state)" = done ]; }
wait_until 10 done_ || fail "task $id did not finish"
a=$(echo "$STATE"/attempts/"$id".1)
[ "$(mode "$a")" = 700 ] || fail "attempt directory mode $(mode "$a"), want 700"
[ "$(mode "$a/result")" = 600 ] || fail "result mode $(mode "$a/result"), want 600"
for f in stdout stderr; do
    [ "$(mode "$a/$f")" = 600 ] && [ "$(owner "$a/$f")" = "$submitter" ] ||
        fail "$f: mode $(mode "$a/$f") owner $(owner "$a/$f"), want 600 owned by $submitter"
done
# The task itself runs with the umask the daemon was started with, not the daemon's own.
made=$([ $root -eq 1 ] && echo "$tmp/work/made" || echo "$tmp/made")
[ "$(mode "$made")" = 644 ] || fail "a task's file has mode $(mode "$made"), want 644 (umask 022)"

# A second daemon on the same state directory (another socket) is refused, naming the first.
out=$(timeout 10 "$CARMA" daemon --socket "$tmp/second.sock" --state "$STATE" --gpu-backend sim \
    --config "$tmp/carma.conf" 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a second daemon started on $STATE (rc $rc)"
grep -q "in use by another carma daemon (pid $DAEMON_PID)" <<<"$out" ||
    fail "second daemon's refusal should name pid $DAEMON_PID: $out"
"$CARMA" queue >/dev/null || fail "the first daemon stopped serving"
# A second daemon on the same socket (another state directory) is refused before it makes one.
out=$(timeout 10 "$CARMA" daemon --socket "$SOCK" --state "$tmp/second-state" --gpu-backend sim \
    --config "$tmp/carma.conf" 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "another daemon is serving $SOCK" <<<"$out" \
    || fail "a second daemon on $SOCK: rc $rc: $out"
[ ! -e "$tmp/second-state" ] || fail "a daemon refused its socket made its state directory"
"$CARMA" queue >/dev/null || fail "the first daemon stopped serving"
stop_daemon
# Once the first has stopped, the state directory is free again.
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
"$CARMA" show "$id" >/dev/null || fail "restarted daemon does not serve"
stop_daemon
# A relative --state is the directory's from where the daemon started: the attempt
# directories it names to clients are absolute.
mkdir "$tmp/here"
(cd "$tmp/here" && exec "$CARMA" daemon --socket "$SOCK" --state rel --gpu-backend sim \
    --config "$tmp/carma.conf" >/dev/null 2>>"$tmp/daemon.log") &
DAEMON_PID=$!
wait_until 10 "$CARMA" queue || fail "the daemon with a relative --state did not start"
rid=$("$CARMA" submit -- true) || fail "submit to the daemon with a relative --state"
wait_until 10 task_is "$rid" done || fail "task $rid did not finish"
dir=$("$CARMA" show --json "$rid" | jq -r .last_attempt.dir)
[ "$dir" = "$tmp/here/rel/attempts/$rid.1" ] || fail "attempt directory '$dir' should be absolute"
stop_daemon

# A socket directory the daemon creates (as /run/carma when no unit made it) is 0755, its
# missing parents too, whatever the daemon's private umask: other users must reach the socket.
(umask 022; exec "$CARMA" daemon --socket "$tmp/run/carma/c.sock" --state "$STATE" \
    --gpu-backend sim --config "$tmp/carma.conf" >/dev/null 2>>"$tmp/daemon.log") &
DAEMON_PID=$!
wait_until 10 "$CARMA" queue --socket "$tmp/run/carma/c.sock" || fail "daemon on a new socket dir"
for d in "$tmp/run" "$tmp/run/carma"; do
    [ "$(mode "$d")" = 755 ] || fail "created socket directory $d has mode $(mode "$d"), want 755"
done
if [ $root -eq 1 ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups "$CARMA" queue \
        --socket "$tmp/run/carma/c.sock" >/dev/null 2>&1 \
        || fail "another user cannot reach the socket"
fi
stop_daemon

echo "$fails failure(s)"
[ $fails -eq 0 ]
