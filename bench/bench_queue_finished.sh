#!/usr/bin/env bash
# bench_queue_finished.sh CARMA [N] — the daemon with N (20000) finished tasks in its database
# and three live ones: the time `carma queue` and `carma queue --all` take, and the daemon's
# resident memory. The finished tasks are written straight into the state database (as a
# daemon that ran them would have left them), then the daemon is started on it.
set -eu
CARMA=$(realpath "$1")
N=${2:-20000}
command -v sqlite3 >/dev/null || { echo "SKIP: bench_queue_finished needs the sqlite3 shell"; exit 0; }
tmp=$(mktemp -d)
SOCK=$tmp/s
STATE=$tmp/state
export CARMA_SOCKET=$SOCK
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
start() {
    "$CARMA" daemon --socket "$SOCK" --state "$STATE" --gpu-backend sim --sim-gpus 2xA100-40GB \
        >/dev/null 2>>"$tmp/log" &
    pid=$!
    for _ in $(seq 100); do "$CARMA" queue >/dev/null 2>&1 && return; sleep 0.1; done
    echo "daemon did not start: $(cat "$tmp/log")" >&2; exit 1
}
start # creates the schema
kill "$pid"; wait "$pid" 2>/dev/null || true
sqlite3 "$STATE/carma.db" <<SQL
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $N)
INSERT INTO tasks(uid, gid, user, spec, state, recovery, queue_seq, attempts, submitted_at,
                  ended_at, outcome, history_mib)
SELECT 0, 0, 'root',
       '{"name":"resnet-' || i || '","command":"python train.py --epochs 20 --seed ' || i ||
       '","cwd":"/srv/training","ngpus":1,"mem":{"oracle":8000},"env":["PATH=/usr/local/sbin:' ||
       '/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","PYTHONUNBUFFERED=1"],"max_retries":-1}',
       'done', 0, i, 1, 1.7e9 + i, 1.7e9 + i + 60, 'done', NULL FROM c;
INSERT INTO attempts(task_id, n, gpus, dir, state, sup_pid, task_pid, started_at, ended_at,
                     exited, exit_code, signal, outcome, tail, peak_mib)
SELECT id, 1, '0', '$STATE/attempts/' || id || '.1', 'ended', 0, 0, submitted_at, ended_at,
       1, 0, 0, 'done', '', 7000 FROM tasks;
COMMIT;
SQL
start
for i in 1 2 3; do "$CARMA" submit --name live$i -- sleep 300 >/dev/null; done
ms() { local t0=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
echo "tasks: $N finished, 3 live (2 running, 1 queued)"
echo "carma queue:             $(ms "$CARMA" queue) ms"
echo "carma queue --all:       $(ms "$CARMA" queue --all) ms"
echo "carma queue --all --json: $(ms "$CARMA" queue --all --json) ms"
echo "one page (1000 tasks):   $(ms "$CARMA" queue --all --limit 1000 --json) ms"
echo "carma show 1:            $(ms "$CARMA" show 1) ms"
echo "listed by --all:         $("$CARMA" queue --all --json | jq length)"
echo "daemon RSS:              $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status)"
"$CARMA" queue | awk '$2 ~ /^live/' | wc -l | sed 's/^/live tasks listed: /'
for id in $("$CARMA" queue --json | jq '.[].id'); do "$CARMA" cancel "$id" >/dev/null; done
sleep 1
