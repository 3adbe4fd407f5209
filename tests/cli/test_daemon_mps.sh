#!/usr/bin/env bash
# The daemon with `mps = on`, on the fake NVML, with a stand-in nvidia-cuda-mps-control (a
# script that records its environment and the commands it gets, and starts a fake MPS server
# that the fake NVML lists on the GPU): the control daemon is started with the daemon's pipe
# and log directories; the GPU holding only the MPS server counts as idle; a task alone on
# its GPU gets the pipe directory and no cap, a collocated one its figure + margin_mib as
# CUDA_MPS_PINNED_DEVICE_MEM_LIMIT and the thread percentage; cancelling a task terminates
# its MPS client first; the control daemon is stopped at shutdown; and without the control
# binary the daemon refuses to start, naming it; so it does with a pipe or log directory
# that is a symlink, another user's or writable by others. Each task's processes are looked
# for in NVML's MPS client list: a task whose process is listed as a plain compute process
# (CUDA reached no control daemon and runs without MPS) is logged once, its cap said not to
# apply, and shown with mps_client false. As root (tasks run as their submitters, whose MPS
# servers run as them): the default pipe directory is STATE-mps, 0755, which user nobody can
# enter, the control daemon starts under umask 022, and a configured pipe directory other
# users could not pass through to is refused.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml

mkdir -p "$tmp/bin"
ln -s "$(command -v sleep)" "$tmp/bin/nvidia-cuda-mps-server"
cat >"$tmp/bin/nvidia-cuda-mps-control" <<CTL
#!/bin/sh
if [ "\$1" = -d ]; then
  env | grep -E '^CUDA_MPS_' | sort >"\$CUDA_MPS_PIPE_DIRECTORY/daemon-env"
  sleep 120 >/dev/null 2>&1 </dev/null &
  echo \$! >"\$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"
  umask >"\$CUDA_MPS_PIPE_DIRECTORY/umask"
  $tmp/bin/nvidia-cuda-mps-server 120 >/dev/null 2>&1 </dev/null &
  echo \$! >"\$CUDA_MPS_PIPE_DIRECTORY/server.pid"
  exit 0
fi
read cmd
echo "\$cmd" >>"\$CUDA_MPS_PIPE_DIRECTORY/commands"
case "\$cmd" in
  get_server_list) cat "\$CUDA_MPS_PIPE_DIRECTORY/server.pid" ;;
  terminate_client*) ;;
  quit) kill \$(cat "\$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid") \
             \$(cat "\$CUDA_MPS_PIPE_DIRECTORY/server.pid") ;;
  *) echo "unknown command \$cmd"; exit 1 ;;
esac
CTL
chmod 755 "$tmp/bin/nvidia-cuda-mps-control"
# a root daemon's tasks run as other users: their MPS servers must reach the pipe directory,
# which the private (0700) state directory would hide
PIPE=$tmp/state/mps/pipe
[ "$(id -u)" -eq 0 ] && PIPE=$tmp/state-mps
stop_server() { [ -f "$PIPE/server.pid" ] && kill "$(cat "$PIPE/server.pid")" 2>/dev/null; }
trap 'stop_server; cleanup' EXIT

printf '#!/bin/sh\nenv | grep "^CUDA_MPS_" | sort >"$2"\nsleep "$1"\n' >"$tmp/envjob"
chmod 755 "$tmp/envjob"
cp "$tmp/envjob" "$tmp/plainjob" # one the fake NVML lists as a compute process, not a client
cat >"$tmp/scenario" <<SCN
gpu uuid=GPU-fake-0000 name="NVIDIA H100 80GB HBM3" total=81559 used=1024 util=10 power=90000 gpm=1 smact=10 smocc=5 drama=3
proc gpu=0 match=nvidia-cuda-mps-server used=300
mps gpu=0 match="/bin/sh $tmp/envjob" used=na
proc gpu=0 match="/bin/sh $tmp/plainjob" used=900
SCN
export FAKE_NVML_SCENARIO=$tmp/scenario
# Without the control binary: the daemon does not start, and says which binary it missed.
out=$(env -u CARMA_MPS_CONTROL PATH=/usr/bin:/bin "$CARMA" daemon --gpu-backend nvml \
      --socket "$tmp/x.sock" --state "$tmp/xstate" --set mps=on 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "missing nvidia-cuda-mps-control: exit $rc"
grep -q 'mps = on: nvidia-cuda-mps-control not found in PATH' <<<"$out" || fail "message: $out"

export CARMA_MPS_CONTROL=$tmp/bin/nvidia-cuda-mps-control
# A pipe or log directory that is not the daemon's own (a symlink, another user's, one others
# may write to) is refused as the state directory is: its owner could plant a pid file that
# passes for a running control daemon, or their own pipes for every task to connect to.
mps_refused() { # KEY DIR PATTERN
    local out rc
    out=$(timeout 10 "$CARMA" daemon --gpu-backend nvml --socket "$tmp/x.sock" \
          --state "$tmp/xstate" --set mps=on --set "$1=$2" 2>&1)
    rc=$?
    [ $rc -eq 1 ] && grep -qF -- "$3" <<<"$out" || fail "$1 = $2: exit $rc: $out"
    [ ! -e "$2/daemon-env" ] || fail "$1 = $2: the control daemon was started there"
    rm -f "$2/daemon-env"
}
mkdir -m 0700 "$tmp/realpipe"
ln -s "$tmp/realpipe" "$tmp/linkpipe"
mps_refused mps_pipe_dir "$tmp/linkpipe" "$tmp/linkpipe is a symbolic link"
mkdir -m 0777 "$tmp/openpipe" && chmod 0777 "$tmp/openpipe"
mps_refused mps_pipe_dir "$tmp/openpipe" "with mode 0777; refusing it"
mps_refused mps_log_dir "$tmp/openpipe" "with mode 0777; refusing it"
if [ "$(id -u)" -eq 0 ]; then
    mkdir -m 0755 "$tmp/theirpipe" && chown 65534 "$tmp/theirpipe"
    sleep 60 & planted=$!
    echo $planted >"$tmp/theirpipe/nvidia-cuda-mps-control.pid"
    mps_refused mps_pipe_dir "$tmp/theirpipe" "$tmp/theirpipe is owned by uid 65534"
    kill $planted; wait $planted 2>/dev/null
    # Other users' MPS servers could not pass through a 0700 parent (the state directory's
    # mode), nor enter a 0700 pipe directory: refused, naming it, not left to fail silently.
    mkdir -m 0700 "$tmp/closed"
    mps_refused mps_pipe_dir "$tmp/closed/pipe" \
        "directory $tmp/closed above MPS pipe directory $tmp/closed/pipe has mode 0700"
    mps_refused mps_pipe_dir "$tmp/closed/pipe" "cannot pass through it"
    mkdir -m 0700 "$tmp/ownpipe"
    mps_refused mps_pipe_dir "$tmp/ownpipe" "$tmp/ownpipe has mode 0700: other users cannot"
    # a parent another user owns: they could swap the pipe directory for one of theirs
    mkdir -m 0755 "$tmp/theirs" && chown 65534 "$tmp/theirs"
    mps_refused mps_pipe_dir "$tmp/theirs/pipe" "$tmp/theirs above MPS pipe directory"
fi
cat >"$tmp/carma.conf" <<CONF
policy = oracle-magm
grace_s = 0.5
sample_interval_s = 0.2
kill_grace_s = 1
mps = on
mps_active_thread_percentage = 50
CONF
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
[ -f "$PIPE/daemon-env" ] || fail "the control daemon was not started"
grep -qx "CUDA_MPS_PIPE_DIRECTORY=$PIPE" "$PIPE/daemon-env" \
    && grep -qx "CUDA_MPS_LOG_DIRECTORY=$tmp/state/mps/log" "$PIPE/daemon-env" \
    || fail "control daemon environment: $(cat "$PIPE/daemon-env" 2>&1)"
[ "$(stat -c %a "$tmp/state/mps/log")" = 700 ] || fail "log directory not private"
if [ "$(id -u)" -eq 0 ]; then
    [ "$(stat -c %a "$PIPE")" = 755 ] || fail "pipe directory mode $(stat -c %a "$PIPE")"
    setpriv --reuid 65534 --regid 65534 --clear-groups test -r "$PIPE/daemon-env" \
        || fail "user nobody cannot reach $PIPE"
    [ "$(cat "$PIPE/umask")" = 0022 ] || fail "control daemon umask $(cat "$PIPE/umask")"
fi

state_is() { [ "$("$CARMA" show --json "$1" | jq -r .state)" = "$2" ]; }
a=$("$CARMA" submit --mem 4G -- "$tmp/envjob" 60 "$tmp/envA")
wait_until 10 test -s "$tmp/envA" || fail "task A did not start: $("$CARMA" queue --all)"
b=$("$CARMA" submit --mem 2G -- "$tmp/envjob" 60 "$tmp/envB")
wait_until 10 test -s "$tmp/envB" || fail "task B was not collocated: $("$CARMA" queue --all)"
[ "$(cat "$tmp/envA")" = "CUDA_MPS_PIPE_DIRECTORY=$PIPE" ] \
    || fail "task A (alone: the MPS server leaves the GPU idle) env: $(cat "$tmp/envA")"
want="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4096M
CUDA_MPS_PIPE_DIRECTORY=$PIPE"
[ "$(cat "$tmp/envB")" = "$want" ] || fail "collocated task B env: $(cat "$tmp/envB")"
"$CARMA" gpus --json | jq -e ".[0].tasks | sort == [$a, $b]" >/dev/null \
    || fail "GPU 0 should hold both tasks: $("$CARMA" gpus --json)"
"$CARMA" gpus --json | jq -e --arg p "$PIPE" 'all(.[]; .mps_pipe_dir == $p and .backend == "nvml")' \
    >/dev/null || fail "gpus --json mps_pipe_dir, backend: $("$CARMA" gpus --json)"
# Listed as MPS clients: shown so. One listed as a compute process runs outside MPS, and its
# cap (1024 + margin_mib 2048) does not hold: logged once, shown.
mps_client_is() { [ "$("$CARMA" show --json "$1" | jq -c .mps_client)" = "$2" ]; }
wait_until 5 mps_client_is "$a" true && wait_until 5 mps_client_is "$b" true \
    || fail "A, B: mps_client $("$CARMA" show --json "$a" | jq -c .mps_client)"
c=$("$CARMA" submit --mem 1G -- "$tmp/plainjob" 60 "$tmp/envC")
wait_until 10 test -s "$tmp/envC" || fail "task C was not collocated: $("$CARMA" queue --all)"
grep -q "^CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=3072M$" "$tmp/envC" \
    || fail "C env: $(cat "$tmp/envC")"
wait_until 5 mps_client_is "$c" false \
    || fail "C: mps_client $("$CARMA" show --json "$c" | jq -c .mps_client)"
sleep 1 # more samples: still one line
outside="task $c: its process [0-9]* on GPU 0 is not an MPS client .*$PIPE"
n=$(grep -c "$outside.*its MPS memory cap (3072 MiB) does not apply" "$tmp/daemon.log")
[ "$n" = 1 ] || fail "C: $n log lines for its process outside MPS"
! grep -Eq "task ($a|$b): .*not an MPS client" "$tmp/daemon.log" \
    || fail "A or B taken for non-clients"
"$CARMA" cancel "$c" >/dev/null
wait_until 10 state_is "$c" cancelled || fail "C not cancelled"
[ "$("$CARMA" show --json "$c" | jq -c .mps_client)" = null ] || fail "ended C: mps_client not null"

"$CARMA" cancel "$b" >/dev/null || fail "cancel B"
wait_until 10 state_is "$b" cancelled || fail "B not cancelled"
server=$(cat "$PIPE/server.pid")
grep -q "^get_server_list$" "$PIPE/commands" && grep -Eq "^terminate_client $server [0-9]+$" \
    "$PIPE/commands" || fail "B's MPS client not terminated: $(cat "$PIPE/commands" 2>&1)"
grep -q "task $b: MPS client [0-9]* terminated" "$tmp/daemon.log" || fail "no log of the terminate"
"$CARMA" cancel "$a" >/dev/null
wait_until 10 state_is "$a" cancelled || fail "A not cancelled"
[ "$("$CARMA" show --json "$a" | jq .peak_mib)" = null ] || fail "MPS memory unknown gave a peak"
stop_daemon
grep -qx quit "$PIPE/commands" || fail "the control daemon was not stopped at shutdown"
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
