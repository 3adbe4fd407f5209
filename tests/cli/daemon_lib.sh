# daemon_lib.sh — helpers for the daemon's CLI tests, sourced by them. CTest runs every
# tests/cli/*.sh, this one too: run on its own it does nothing and exits 0.
# Provides: start_daemon, stop_daemon, kill_supervisors, wait_until, task_state, task_is,
# use_fake_nvml, quick_config, metrics_port, metrics_get, and $tmp/$SOCK/$STATE.
[ "${BASH_SOURCE[0]}" = "$0" ] && exit 0
set -o pipefail

CARMA=$(realpath "$CARMA")
FAKEJOB=$(dirname "$CARMA")/carma-fakejob
tmp=$(mktemp -d)
chmod 755 "$tmp"
SOCK=$tmp/carma.sock
STATE=$tmp/state
DAEMON_PID=
export CARMA_SOCKET=$SOCK

# The daemon's state-directory floor (state_min_free_mib, 1 GiB by default) is off unless
# KEEP_STATE_FLOOR is set: the tests' state lives in $TMPDIR, which may have less free.
start_daemon() { # extra args...
    local floor=(--set state_min_free_mib=0)
    [ -n "${KEEP_STATE_FLOOR:-}" ] && floor=()
    "$CARMA" daemon --socket "$SOCK" --state "$STATE" --gpu-backend sim "${floor[@]}" "$@" \
        >/dev/null 2>>"$tmp/daemon.log" &
    DAEMON_PID=$!
    wait_until 10 "$CARMA" queue || { echo "daemon did not start:"; cat "$tmp/daemon.log"; }
}

stop_daemon() {
    [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
    DAEMON_PID=
}

# Cancels whatever supervisors are still alive (their lock file names them).
kill_supervisors() {
    local f pid
    for f in "$STATE"/attempts/*/lock; do
        [ -f "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null)
        [ -n "$pid" ] && [ ! -f "${f%/lock}/result" ] && kill -KILL "$pid" 2>/dev/null
    done
}

cleanup() {
    if [ -n "$DAEMON_PID" ]; then kill -KILL "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; fi
    kill_supervisors
    rm -rf "$tmp"
}
trap cleanup EXIT

# wait_until SECONDS COMMAND...: polls every 0.2 s.
wait_until() {
    local limit=$1 i=0
    shift
    while ! "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -ge $((limit * 5)) ] && return 1
        sleep 0.2
    done
}

# task_state ID: the task's state as `show --json` gives it; task_is ID STATE: whether it is.
task_state() { "$CARMA" show --json "$1" | jq -r .state; }
task_is() { [ "$(task_state "$1")" = "$2" ]; }

# use_fake_nvml [VARIANT]: the nvml backend on the fake libnvidia-ml.so.1 (tests/fake_nvml; full
# unless named) and no DCGM; $FAKE_DIR is where the fake's builds are.
use_fake_nvml() {
    FAKE_DIR=$(dirname "$CARMA")/tests/fake_nvml
    export CARMA_DCGM_LIBRARY=/nonexistent/libdcgm.so.4
    export CARMA_NVML_LIBRARY=$FAKE_DIR/${1:-full}/libnvidia-ml.so.1
}

# quick_config: a config for fast tests (oracle-magm, short grace, sampling every 0.2 s).
quick_config() { printf '%s\n' "policy = oracle-magm" "grace_s = 0.4" "sample_interval_s = 0.2" \
    "kill_grace_s = 1" "window = 3"; }

# metrics_port: the port the daemon's metrics endpoint took (metrics_listen = 127.0.0.1:0), as
# its log names it; metrics_get PATH: that path's reply body (http_probe.py).
metrics_port() { sed -nE 's#.*serving metrics on http://[^ ]*:([0-9]+)/metrics$#\1#p' "$tmp/daemon.log" | tail -1; }
metrics_get() { python3 "$(dirname "${BASH_SOURCE[0]}")/http_probe.py" "$(metrics_port)" "$1" | sed '1,/^\r$/d'; }
