# slurm_lib.sh — a real Slurm cluster on this machine for carma's Slurm tests, sourced by them:
# its own munged (socket and key), a slurmctld and two slurmd (node1 on 127.0.0.1, node2 on
# 127.0.0.2) on free ports, four fake GPUs per node (character devices 195,N in the scratch
# directory, as gres.conf wants) with 40 shards each, carma_spank.so on an `optional`
# plugstack line and the shipped job_submit.lua. Everything lives under one mktemp directory
# and every daemon is stopped by the pid this script started it with, never by name.
# CTest runs tests/slurm/test_*.sh only; this file is a library.
# Provides: slurm_start, slurm_stop, slurm_wait_job, job_field, $SD (the scratch directory),
# $SLURM_CONF (exported). Expects $PLUGIN (carma_spank.so) and $SRC (the source tree).

SD=$(mktemp -d /tmp/carma-slurm.XXXXXX)
chmod 755 "$SD" # jobs of another user (nobody) read the config and reach munged through it
export SLURM_CONF=$SD/slurm.conf
SLURM_PIDS=()

# Three TCP ports no one listens on now, for slurmctld and the two slurmd; a clash with a
# test started at the same moment is caught by slurm_start, which tries again.
free_ports() {
    python3 - <<'PY'
import socket
socks = []
for _ in range(3):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

slurm_write_config() { # ctld_port port1 port2 socket_for_the_plugin
    mkdir -p "$SD/fakedev" "$SD/state" "$SD/spool/node1" "$SD/spool/node2" "$SD/out"
    chmod 1777 "$SD/out"
    for i in 0 1 2 3; do
        [ -e "$SD/fakedev/nvidia$i" ] || mknod "$SD/fakedev/nvidia$i" c 195 "$i"
    done
    cat >"$SD/slurm.conf" <<EOF
ClusterName=carmatest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$1
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SD/munge.sock
CredType=cred/munge
StateSaveLocation=$SD/state
SlurmdSpoolDir=$SD/spool/%n
SlurmctldPidFile=$SD/slurmctld.pid
SlurmdPidFile=$SD/slurmd-%n.pid
SlurmctldLogFile=$SD/log/slurmctld.log
SlurmdLogFile=$SD/log/slurmd-%n.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
GresTypes=gpu,shard
PlugStackConfig=$SD/plugstack.conf
JobSubmitPlugins=lua
NodeName=node1 NodeAddr=127.0.0.1 Port=$2 CPUs=16 RealMemory=16000 Gres=gpu:4,shard:160 State=UNKNOWN
NodeName=node2 NodeAddr=127.0.0.2 Port=$3 CPUs=16 RealMemory=16000 Gres=gpu:4,shard:160 State=UNKNOWN
PartitionName=gpu Nodes=node[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
    cat >"$SD/gres.conf" <<EOF
AutoDetect=off
Name=gpu File=$SD/fakedev/nvidia[0-3]
Name=shard Count=160
EOF
    echo "optional $PLUGIN carma=$CARMA socket=$4 timeout_ms=1000" >"$SD/plugstack.conf"
    cp "$SRC/contrib/slurm/job_submit.lua" "$SD/job_submit.lua"
}

# Starts a daemon in the foreground as a background job of this shell, its pid recorded.
slurm_spawn() { # name command...
    local name=$1
    shift
    "$@" >"$SD/log/$name.out" 2>&1 &
    SLURM_PIDS+=($!)
    echo $! >"$SD/$name.spawned.pid"
}

slurm_stop() {
    local i
    for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
        kill "${SLURM_PIDS[$i]}" 2>/dev/null
    done
    for pid in "${SLURM_PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    SLURM_PIDS=()
}

# True once every node is idle.
nodes_idle() { [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq 2 ]; }

slurm_start() { # socket_for_the_plugin
    local try ports
    mkdir -p "$SD/log"
    dd if=/dev/urandom of="$SD/munge.key" bs=1024 count=1 status=none
    chmod 400 "$SD/munge.key"
    slurm_spawn munged munged -F -f --socket="$SD/munge.sock" --key-file="$SD/munge.key" \
        --log-file="$SD/log/munged.log" --pid-file="$SD/munged.pid" --seed-file="$SD/munge.seed"
    for _ in $(seq 50); do [ -S "$SD/munge.sock" ] && break; sleep 0.1; done
    [ -S "$SD/munge.sock" ] || { echo "munged did not start:" >&2; cat "$SD/log/munged.out" >&2; return 1; }
    for try in 1 2 3; do
        read -r -a ports <<<"$(free_ports)"
        slurm_write_config "${ports[0]}" "${ports[1]}" "${ports[2]}" "$1"
        slurm_spawn slurmctld slurmctld -D -i -f "$SD/slurm.conf"
        slurm_spawn slurmd-node1 slurmd -D -f "$SD/slurm.conf" -N node1
        slurm_spawn slurmd-node2 slurmd -D -f "$SD/slurm.conf" -N node2
        for _ in $(seq 150); do nodes_idle && return 0; sleep 0.2; done
        echo "note: the cluster did not come up on ports ${ports[*]} (try $try)" >&2
        tail -n 5 "$SD"/log/*.log >&2
        local keep=${SLURM_PIDS[0]}
        kill "${SLURM_PIDS[@]:1}" 2>/dev/null
        wait "${SLURM_PIDS[@]:1}" 2>/dev/null
        SLURM_PIDS=("$keep")
        rm -rf "$SD/state" "$SD/spool"
    done
    return 1
}

# job_field JOBID FIELD: a field of `scontrol show job -o` (JobState, TresPerNode, ...).
job_field() {
    scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

# slurm_wait_job JOBID [SECONDS]: waits until the job ended; true when it COMPLETED.
slurm_wait_job() {
    local s i
    for ((i = 0; i < ${2:-60} * 5; i++)); do
        s=$(job_field "$1" JobState)
        case "$s" in
        COMPLETED) return 0 ;;
        FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) return 1 ;;
        esac
        sleep 0.2
    done
    return 1
}
