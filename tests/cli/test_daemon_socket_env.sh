#!/usr/bin/env bash
# `carma daemon` serves the socket the clients look for: --socket, else $CARMA_SOCKET, else the
# config's `socket`, else the default, so a job script that exports CARMA_SOCKET once reaches
# its own daemon. Each case starts a daemon and checks which path answers.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'socket = %s\n' "$tmp/from-config.sock" >"$tmp/carma.conf"
# serve_with NAME ARGS...: starts a daemon with the environment and args given, waits until
# `carma queue --socket $tmp/NAME.sock` answers, then stops it.
serves() {
    local want=$1
    shift
    "$@" >/dev/null 2>>"$tmp/daemon.log" &
    local pid=$!
    wait_until 10 "$CARMA" queue --socket "$tmp/$want" || fail "no daemon on $want: $*"
    for other in from-env.sock from-opt.sock from-config.sock; do
        [ "$other" = "$want" ] || [ ! -S "$tmp/$other" ] || fail "$*: also a socket $other"
    done
    kill "$pid"
    wait "$pid" 2>/dev/null
    rm -rf "$STATE"
}

unset CARMA_SOCKET
serves from-config.sock "$CARMA" daemon --gpu-backend sim --state "$STATE" --config "$tmp/carma.conf"
serves from-env.sock env CARMA_SOCKET="$tmp/from-env.sock" \
    "$CARMA" daemon --gpu-backend sim --state "$STATE" --config "$tmp/carma.conf"
serves from-opt.sock env CARMA_SOCKET="$tmp/from-env.sock" \
    "$CARMA" daemon --gpu-backend sim --state "$STATE" --config "$tmp/carma.conf" \
    --socket "$tmp/from-opt.sock"
# An empty $CARMA_SOCKET is unset, as for the clients.
serves from-config.sock env CARMA_SOCKET= \
    "$CARMA" daemon --gpu-backend sim --state "$STATE" --config "$tmp/carma.conf"
# The help says so.
"$CARMA" daemon --help | grep -q 'default: \$CARMA_SOCKET, else the config' \
    || fail "carma daemon --help does not name \$CARMA_SOCKET"

[ $fails -eq 0 ] && echo "all daemon socket checks passed"
exit $((fails > 0))
