#!/usr/bin/env bash
# What carma finds without being told: the system config (CARMA_SYSCONFDIR/carma.conf, here
# $CARMA_SYSTEM_CONFIG) is read when neither --config nor $CARMA_CONFIG names one; a client with
# no --socket, $CARMA_SOCKET or config `socket` tries the system socket (/run/carma/carma.sock,
# here $CARMA_SYSTEM_SOCKET) and then its user's own, and names both when neither answers.
# The second user's part needs root and setpriv (skipped otherwise).
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
unset CARMA_SOCKET CARMA_CONFIG
policy() { "$CARMA" config "$@" | sed -n 's/^policy = //p'; }

# ---- the system config, and the order: --config, $CARMA_CONFIG, system config, defaults ----
printf 'policy = oracle-ff\n' >"$tmp/system.conf"
printf 'policy = lucid\n' >"$tmp/user.conf"
printf 'policy = horus\n' >"$tmp/flag.conf"
export CARMA_SYSTEM_CONFIG=$tmp/system.conf
[ "$(policy)" = oracle-ff ] || fail "the system config is not read by default: $(policy)"
[ "$(CARMA_CONFIG=$tmp/user.conf policy)" = lucid ] || fail "\$CARMA_CONFIG should win over the system config"
[ "$(CARMA_CONFIG=$tmp/user.conf policy --config "$tmp/flag.conf")" = horus ] || fail "--config should win"
[ "$(CARMA_CONFIG= policy)" = carma ] || fail "an empty \$CARMA_CONFIG should read no file"
[ "$(CARMA_SYSTEM_CONFIG=$tmp/absent.conf policy)" = carma ] || fail "a missing system config is not an error"
printf 'policy = nonsense\n' >"$tmp/bad.conf"
out=$(CARMA_SYSTEM_CONFIG=$tmp/bad.conf "$CARMA" config 2>&1) && fail "a bad system config was accepted"
grep -q "bad.conf" <<<"$out" || fail "a bad system config's error should name the file: $out"
"$CARMA" config --help | grep -q "/carma.conf if it exists" || fail "config --help should name the system config"

# ---- the daemon and its clients find each other through the system config's socket ----
printf 'socket = %s\nstate_dir = %s\ngpu_backend = sim\nsample_interval_s = 0.2\n' \
    "$tmp/cfg.sock" "$STATE" >"$tmp/system.conf"
"$CARMA" daemon >/dev/null 2>>"$tmp/daemon.log" &
DAEMON_PID=$!
wait_until 10 "$CARMA" queue || fail "no flags: a client did not reach the daemon through the system config"
[ -S "$tmp/cfg.sock" ] || fail "the daemon should serve the system config's socket"
stop_daemon
export CARMA_SYSTEM_CONFIG=

# ---- the system socket ----
export CARMA_SYSTEM_SOCKET=$tmp/system.sock
if [ "$(id -u)" -eq 0 ]; then
    # a root daemon with no socket configured serves the system socket, and clients find it
    "$CARMA" daemon --state "$STATE" --gpu-backend sim >/dev/null 2>>"$tmp/daemon.log" &
    DAEMON_PID=$!
    wait_until 10 "$CARMA" queue || fail "root: no daemon found on the system socket"
    [ -S "$tmp/system.sock" ] || fail "a root daemon should serve the system socket"
    if command -v setpriv >/dev/null; then
        as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
        out=$(cd "$tmp" && as_nobody "$CARMA" queue --json 2>&1) \
            || fail "a user's first command should reach the root daemon: $out"
        id=$(cd "$tmp" && as_nobody "$CARMA" submit -- true 2>&1) || fail "nobody submit: $id"
        [ "$("$CARMA" show --json "$id" | jq -r .user)" = nobody ] || fail "the task should be nobody's"
        stop_daemon
        # no daemon anywhere: the error names both paths tried
        out=$(cd "$tmp" && as_nobody "$CARMA" queue 2>&1) && fail "queue with no daemon succeeded"
        grep -qF "$tmp/system.sock" <<<"$out" || fail "the error should name the system socket: $out"
        grep -qF "/tmp/carma-65534.sock" <<<"$out" || fail "the error should name the user's socket: $out"
    else
        stop_daemon
        echo "SKIP: setpriv missing: a second user's default socket was not checked"
    fi
else
    echo "SKIP: not root: a root daemon on the system socket was not checked"
fi
# a root client's own default is the system socket: one path, named
out=$("$CARMA" queue 2>&1) && fail "queue with no daemon succeeded"
grep -qF "$tmp/system.sock" <<<"$out" || fail "the error should name the system socket: $out"
"$CARMA" queue --help | tr -s ' \n' ' ' | grep -qF \
    '/run/carma/carma.sock, then $XDG_RUNTIME_DIR/carma.sock (when' \
    || fail "--help should say which sockets a client tries"
"$CARMA" queue --help | tr -s ' \n' ' ' | grep -qF '/run/user/UID when so), then /tmp/carma-UID.sock)' \
    || fail "--help should say which sockets a client tries, /tmp/carma-UID.sock last"
exit $((fails > 0))
