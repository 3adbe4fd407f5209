#!/usr/bin/env bash
# A user's own daemon (not root) with no --socket, $CARMA_SOCKET or config `socket` serves
# $XDG_RUNTIME_DIR/carma.sock when that is a private directory of the user's (absolute, a
# directory and not a symlink, owned by the user, no access for group or others: as
# systemd-logind's /run/user/UID), and its clients find it there with nothing set; otherwise
# it serves /tmp/carma-UID.sock, whose name another user can take first, and a daemon refuses
# a path another user holds: with a private $XDG_RUNTIME_DIR such a squatter no longer keeps
# the user's daemon from starting. A root daemon keeps the system socket.
# Run as uid 65534 (the user) and 65533 (the squatter): needs root and setpriv (skipped
# otherwise), and /tmp/carma-65534.sock not there already (the test takes that name).
set -u
CARMA=$1
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: this test needs root and setpriv to act as two other users (uids 65534, 65533)"
    exit 0
fi
TMPSOCK=/tmp/carma-65534.sock
if [ -e "$TMPSOCK" ] || [ -L "$TMPSOCK" ]; then
    echo "SKIP: $TMPSOCK exists already: this test takes that name for a squatter of its own"
    exit 0
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
unset CARMA_SOCKET CARMA_CONFIG XDG_RUNTIME_DIR
export CARMA_SYSTEM_CONFIG= CARMA_SYSTEM_SOCKET=$tmp/system.sock
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_squatter() { setpriv --reuid=65533 --regid=65533 --clear-groups "$@"; }
squatted=0
trap '[ $squatted -eq 1 ] && rm -f "$TMPSOCK"; cleanup' EXIT

printf 'sample_interval_s = 0.2\ngrace_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"
mkdir -m 0700 "$tmp/nb" && chown 65534:65534 "$tmp/nb" # the user's state
mkdir -m 0700 "$tmp/run" && chown 65534:65534 "$tmp/run" # the user's $XDG_RUNTIME_DIR
# start_user_daemon XDG: the user's daemon, no socket named, with XDG_RUNTIME_DIR=XDG (setpriv
# called directly: $! is then the daemon's pid, for stop_daemon).
start_user_daemon() {
    XDG_RUNTIME_DIR=$1 setpriv --reuid=65534 --regid=65534 --clear-groups "$CARMA" daemon \
        --state "$tmp/nb/state" --gpu-backend sim --config "$tmp/carma.conf" \
        >/dev/null 2>>"$tmp/daemon.log" &
    DAEMON_PID=$!
}
user_queue() { XDG_RUNTIME_DIR=$1 as_nobody "$CARMA" queue; }

# ---- (a) a private $XDG_RUNTIME_DIR: the daemon serves carma.sock there, the client finds it --
start_user_daemon "$tmp/run"
wait_until 10 user_queue "$tmp/run" \
    || { fail "the user's client did not reach the user's daemon with \$XDG_RUNTIME_DIR set"; cat "$tmp/daemon.log"; }
[ -S "$tmp/run/carma.sock" ] || fail "the user's daemon should serve \$XDG_RUNTIME_DIR/carma.sock"
[ "$(stat -c %u "$tmp/run/carma.sock" 2>/dev/null)" = 65534 ] || fail "the socket should be the user's"
[ ! -e "$TMPSOCK" ] || fail "the daemon made $TMPSOCK though \$XDG_RUNTIME_DIR is private"
grep -qF "serving $tmp/run/carma.sock" "$tmp/daemon.log" || fail "the daemon's log should name its socket"
# the client, given the same environment, submits there with nothing else set
mkdir "$tmp/work" && chown 65534:65534 "$tmp/work"
id=$(cd "$tmp/work" && XDG_RUNTIME_DIR=$tmp/run as_nobody "$CARMA" submit -- true 2>&1) \
    || fail "the user's submit through \$XDG_RUNTIME_DIR/carma.sock: $id"
# without $XDG_RUNTIME_DIR the client looks in /tmp, and says so
out=$(as_nobody "$CARMA" queue 2>&1) && fail "a client with no \$XDG_RUNTIME_DIR reached the daemon"
grep -qF "$TMPSOCK" <<<"$out" || fail "the client with no \$XDG_RUNTIME_DIR should try $TMPSOCK: $out"
stop_daemon

# ---- another user takes /tmp/carma-65534.sock (a socket file nobody answers on) ----
as_squatter /usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMPSOCK" \
    && squatted=1
[ "$(stat -c %u "$TMPSOCK" 2>/dev/null)" = 65533 ] || fail "the squatter's socket was not made"

# ---- (b) an $XDG_RUNTIME_DIR that is not private, not a directory, not the user's or not
# absolute is not used: the daemon and the client fall back to /tmp/carma-UID.sock (here
# squatted: the daemon refuses it, naming the squatter; nothing is made in the directory) ----
mkdir -m 0750 "$tmp/group" && chown 65534:65534 "$tmp/group" && chmod 0750 "$tmp/group"
mkdir -m 0705 "$tmp/other" && chown 65534:65534 "$tmp/other" && chmod 0705 "$tmp/other"
mkdir -m 0777 "$tmp/world" && chown 65534:65534 "$tmp/world" && chmod 0777 "$tmp/world"
ln -s "$tmp/run" "$tmp/link" # a symlink, even to a private directory of the user's
mkdir -m 0700 "$tmp/foreign" && chown 65533:65533 "$tmp/foreign"
for bad in "$tmp/group" "$tmp/other" "$tmp/world" "$tmp/link" "$tmp/foreign" run; do
    out=$(cd "$tmp" && XDG_RUNTIME_DIR=$bad timeout 10 setpriv --reuid=65534 --regid=65534 \
        --clear-groups "$CARMA" daemon --state "$tmp/nb/state" --gpu-backend sim \
        --config "$tmp/carma.conf" 2>&1)
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "XDG_RUNTIME_DIR=$bad: the daemon started (rc $rc)"
    grep -qF "$TMPSOCK exists and belongs to uid 65533" <<<"$out" \
        || fail "XDG_RUNTIME_DIR=$bad: the daemon should have fallen back to $TMPSOCK: $out"
    [ ! -e "$tmp/run/carma.sock" ] && [ ! -e "$tmp/${bad##*/}/carma.sock" ] \
        || fail "XDG_RUNTIME_DIR=$bad: the daemon made a socket there"
    out=$(cd "$tmp" && XDG_RUNTIME_DIR=$bad as_nobody "$CARMA" queue 2>&1) \
        && fail "XDG_RUNTIME_DIR=$bad: queue succeeded with no daemon"
    grep -qF "$TMPSOCK" <<<"$out" || fail "XDG_RUNTIME_DIR=$bad: the client should try $TMPSOCK: $out"
    grep -qF "/carma.sock (" <<<"${out//$CARMA_SYSTEM_SOCKET/}" \
        && fail "XDG_RUNTIME_DIR=$bad: the client should not try a socket there: $out"
done

# ---- (c) the squatter does not keep a user with a private $XDG_RUNTIME_DIR from a daemon ----
: >"$tmp/daemon.log"
start_user_daemon "$tmp/run"
wait_until 10 user_queue "$tmp/run" \
    || { fail "with $TMPSOCK squatted, the user's daemon did not serve \$XDG_RUNTIME_DIR/carma.sock"; cat "$tmp/daemon.log"; }
[ -S "$tmp/run/carma.sock" ] || fail "squatted: the daemon should serve \$XDG_RUNTIME_DIR/carma.sock"
out=$(XDG_RUNTIME_DIR=$tmp/run as_nobody "$CARMA" queue --json 2>"$tmp/err") \
    && jq -e 'type == "array"' <<<"$out" >/dev/null || fail "squatted: queue: $out $(cat "$tmp/err")"

# ---- (d) logout: logind removes the runtime directory, socket and all. The daemon serves the
# next default, /tmp/carma-UID.sock: squatted, it says so once and tries again; once the name is
# free it serves there, and a client with no $XDG_RUNTIME_DIR (cron, a later login) finds it ----
rm -rf "$tmp/run"
gone="the socket $tmp/run/carma.sock is gone"
wait_until 5 grep -qF "$gone, and serving again failed: $TMPSOCK exists and belongs to uid 65533" \
    "$tmp/daemon.log" || fail "logout, squatted: not said: $(cat "$tmp/daemon.log")"
rm -f "$TMPSOCK" && squatted=0
wait_until 10 as_nobody "$CARMA" queue || fail "after logout the daemon should serve $TMPSOCK"
[ "$(stat -c %u "$TMPSOCK" 2>/dev/null)" = 65534 ] || fail "$TMPSOCK should be the user's now"
[ "$(grep -cF "serving again failed" "$tmp/daemon.log")" = 1 ] \
    || fail "the failure should be logged once: $(cat "$tmp/daemon.log")"
grep -qF "$gone (its directory removed" "$tmp/daemon.log" && grep -qF "; serving $TMPSOCK" \
    "$tmp/daemon.log" || fail "the move should be logged: $(cat "$tmp/daemon.log")"
stop_daemon
[ ! -e "$TMPSOCK" ] || fail "the daemon left $TMPSOCK behind"

# ---- no $XDG_RUNTIME_DIR (cron, su): logind's /run/user/UID, by the same rule, for both sides --
# (only when this test can make /run/user/65534 itself, and removes it after)
RUNUSER=/run/user/65534
if [ ! -e "$RUNUSER" ] && [ ! -L "$RUNUSER" ] && [ -d /run/user ]; then
    mkdir -m 0755 "$RUNUSER" && chown 65534:65534 "$RUNUSER"
    trap '[ $squatted -eq 1 ] && rm -f "$TMPSOCK"; rm -rf "$RUNUSER"; cleanup' EXIT
    # open to others (0755): not private, not used
    out=$(as_nobody "$CARMA" queue 2>&1) && fail "no daemon, yet a client succeeded: $out"
    grep -qF "$RUNUSER/carma.sock" <<<"$out" && fail "a 0755 $RUNUSER should not be tried: $out"
    chmod 0700 "$RUNUSER"
    start_user_daemon ""
    wait_until 10 as_nobody "$CARMA" queue \
        || fail "a client with no \$XDG_RUNTIME_DIR did not reach a daemon with none: $(cat "$tmp/daemon.log")"
    [ -S "$RUNUSER/carma.sock" ] || fail "a daemon with no \$XDG_RUNTIME_DIR should serve $RUNUSER/carma.sock"
    [ ! -e "$TMPSOCK" ] || fail "the daemon made $TMPSOCK though $RUNUSER is private"
    user_queue "$RUNUSER" >/dev/null || fail "a client with \$XDG_RUNTIME_DIR=$RUNUSER (a login) should find it"
    # another user's $XDG_RUNTIME_DIR (as `su` without `-` keeps): not used, /run/user/UID is
    mkdir -m 0700 "$tmp/roots"
    user_queue "$tmp/roots" >/dev/null \
        || fail "a client with another user's \$XDG_RUNTIME_DIR should find $RUNUSER/carma.sock"
    stop_daemon
    rm -rf "$RUNUSER"
else
    echo "note: $RUNUSER exists (or no /run/user): the case without \$XDG_RUNTIME_DIR is not run"
fi

# ---- root keeps the system socket, whatever its $XDG_RUNTIME_DIR ----
mkdir -m 0700 "$tmp/rootrun"
XDG_RUNTIME_DIR=$tmp/rootrun "$CARMA" daemon --state "$tmp/rootstate" --gpu-backend sim \
    --config "$tmp/carma.conf" >/dev/null 2>>"$tmp/daemon.log" &
DAEMON_PID=$!
wait_until 10 env XDG_RUNTIME_DIR="$tmp/rootrun" "$CARMA" queue || fail "root: no daemon on the system socket"
[ -S "$CARMA_SYSTEM_SOCKET" ] || fail "a root daemon should serve the system socket"
[ ! -e "$tmp/rootrun/carma.sock" ] || fail "a root daemon should not serve \$XDG_RUNTIME_DIR/carma.sock"
stop_daemon
out=$(XDG_RUNTIME_DIR=$tmp/rootrun "$CARMA" queue 2>&1) && fail "root: queue with no daemon succeeded"
grep -qF "cannot reach the daemon at $CARMA_SYSTEM_SOCKET:" <<<"$out" \
    || fail "a root client should try the system socket alone: $out"

echo "$fails failure(s)"
[ $fails -eq 0 ]
