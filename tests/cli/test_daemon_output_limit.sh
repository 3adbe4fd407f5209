#!/usr/bin/env bash
# max_output_mib: a running attempt whose stdout and stderr (in the state directory) pass the
# limit together is cancelled, once, with the reason in `show` and the log, and not retried;
# a task under the limit runs to its end, and 0 means no limit. The task's logs stay as they
# were written (nothing is cut), so `carma logs` still shows its beginning.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'sample_interval_s = 0.1\ngrace_s = 0.2\nkill_grace_s = 1\nmax_output_mib = 1\n' \
    >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
# 1.5 MiB: 0.75 on stdout, 0.75 on stderr (together past 1 MiB, neither alone), then it waits
big=$("$CARMA" submit --name big -- sh -c 'echo first line; head -c 786432 /dev/zero | tr "\0" x;
    head -c 786432 /dev/zero | tr "\0" y >&2; exec sleep 60')
small=$("$CARMA" submit --name small -- sh -c 'head -c 524288 /dev/zero | tr "\0" x; sleep 1')
"$CARMA" wait --timeout 30 "$big" "$small" >/dev/null
out=$("$CARMA" show --json "$big")
[ "$(jq -r .state <<<"$out")" = cancelled ] && [ "$(jq .attempts <<<"$out")" = 1 ] \
    || fail "big: $(jq -c '[.state, .attempts]' <<<"$out")"
[ "$(jq -r .end_reason <<<"$out")" = "output of 2 MiB passed max_output_mib = 1 MiB" ] \
    || fail "big's reason: $(jq -c .end_reason <<<"$out")"
[ "$(grep -c "task $big: output of 2 MiB passed max_output_mib = 1 MiB; cancelling" \
    "$tmp/daemon.log")" = 1 ] || fail "not logged once: $(grep "task $big" "$tmp/daemon.log")"
[ "$("$CARMA" logs "$big" | head -1)" = "first line" ] || fail "big's log lost its beginning"
task_is "$small" done || fail "small (under the limit): $(task_state "$small")"
stop_daemon

# 0: no limit
printf 'sample_interval_s = 0.1\ngrace_s = 0.2\nkill_grace_s = 1\nmax_output_mib = 0\n' \
    >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
free=$("$CARMA" submit --name free -- sh -c 'head -c 2097152 /dev/zero | tr "\0" x; sleep 1')
"$CARMA" wait --timeout 30 "$free" >/dev/null
task_is "$free" done || fail "with no limit: $(task_state "$free")"
stop_daemon
"$CARMA" config --set max_output_mib=-1 >/dev/null 2>&1 && fail "max_output_mib = -1 accepted"
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
