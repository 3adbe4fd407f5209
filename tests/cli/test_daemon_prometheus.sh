#!/usr/bin/env bash
# A real Prometheus (Debian's prometheus package) scrapes the daemon's metrics endpoint every
# second: within 30 s its query API answers DCGM_FI_DEV_FB_USED and carma_gpu_memory_total_mib
# for each sim GPU with the values the daemon shows, and the target is up; while tasks run, no
# counter, histogram series or GPU energy counter goes down. Prometheus is
# started on a free port with its own storage under the test's directory, and stopped by its
# pid. Skipped (77) only when prometheus is not installed (scripts/deps.sh installs it).
set -u
CARMA=$1
command -v prometheus >/dev/null || { echo "SKIP: prometheus not installed"; exit 77; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
PROM_PID=
stop_prometheus() {
    [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
    PROM_PID=
}
trap 'stop_prometheus; cleanup' EXIT

start_daemon --sim-gpus 2xA100-40GB --set metrics_listen=127.0.0.1:0 --set sample_interval_s=0.2
PORT=$(metrics_port)
[ -n "$PORT" ] || { echo "FAIL: no metrics port in the log"; cat "$tmp/daemon.log"; exit 1; }

cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: carma
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YML
promtool check config "$tmp/prometheus.yml" >/dev/null 2>&1 || fail "promtool rejects the scrape config"

# A free port: the kernel picks one; should another process take it before Prometheus does,
# Prometheus exits and the next try takes another.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
query() { # PROMQL: the API's JSON answer
    python3 - "$PROM_PORT" "$1" <<'PY'
import sys, urllib.parse, urllib.request
url = f"http://127.0.0.1:{sys.argv[1]}/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[2]})
print(urllib.request.urlopen(url, timeout=5).read().decode())
PY
}
for try in 1 2 3; do
    PROM_PORT=$(free_port)
    prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb.$try" \
        --web.listen-address="127.0.0.1:$PROM_PORT" >"$tmp/prometheus.log" 2>&1 &
    PROM_PID=$!
    wait_until 15 query up && break
    stop_prometheus
done
[ -n "$PROM_PID" ] || { echo "FAIL: prometheus did not start:"; cat "$tmp/prometheus.log"; exit 1; }

# the first scraped sample becomes queryable some 6-7 s after the start
sampled() { query DCGM_FI_DEV_FB_USED | jq -e '.data.result | length == 2'; }
wait_until 30 sampled || fail "no DCGM_FI_DEV_FB_USED sample for both GPUs after 30 s: $(query DCGM_FI_DEV_FB_USED)"
r=$(query 'up{job="carma"}')
[ "$(jq -r '.data.result[0].value[1]' <<<"$r")" = 1 ] || fail "target not up: $r"
r=$(query carma_gpu_memory_total_mib)
while read -r idx uuid total; do
    got=$(jq -r --arg g "$idx" '.data.result[] | select(.metric.gpu == $g) | .value[1]' <<<"$r")
    [ "$got" = "$total" ] || fail "GPU $idx: Prometheus has total $got MiB, carma gpus says $total"
    lbl=$(jq -r --arg g "$idx" '.data.result[] | select(.metric.gpu == $g) | .metric.UUID' <<<"$r")
    [ "$lbl" = "$uuid" ] || fail "GPU $idx: UUID label '$lbl', carma gpus says $uuid"
done < <("$CARMA" gpus --json | jq -r '.[] | "\(.index) \(.uuid) \(.mem_total_mib)"')
r=$(query 'carma_tasks{state="queued"}')
[ "$(jq -r '.data.result[0].value[1]' <<<"$r")" = 0 ] || fail "carma_tasks{state=queued}: $r"

# counters never go down within a daemon's life (a restart may reset them): tasks placed and
# ended while scraped leave no reset in any counter, the histogram or the GPUs' energy
ids=()
for i in 1 2 3; do
    ids+=("$("$CARMA" submit --mem 1G -- "$FAKEJOB" --mem 1G --seconds 1 --smact 0.3)")
done
ended() { for id in "${ids[@]}"; do task_is "$id" done || return 1; done; }
wait_until 40 ended || fail "tasks ${ids[*]} not all done"
seen() { query 'max_over_time(carma_placements_total[5m])' | jq -e '.data.result[0].value[1] == "3"'; }
wait_until 15 seen || fail "Prometheus never saw 3 placements: $(query carma_placements_total)"
names=$(query '{__name__=~"carma_.*_total|carma_task_wait_seconds_.*|DCGM_FI_DEV_TOTAL_ENERGY.*"}' |
        jq -r '.data.result[].metric.__name__' | sort -u)
[ "$(wc -w <<<"$names")" -ge 9 ] || fail "counters not scraped: $names"
for n in $names; do # one name a query: resets() drops the name, and two would clash
    r=$(query "max(resets(${n}[5m]))")
    [ "$(jq -r '.data.result[0].value[1]' <<<"$r")" = 0 ] || fail "$n went down while scraped: $r"
done

stop_prometheus
"$CARMA" queue >/dev/null || fail "the daemon stopped answering while scraped"
stop_daemon
[ $fails -eq 0 ] || { echo "--- prometheus log"; tail -20 "$tmp/prometheus.log"; echo "--- daemon log"; cat "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ]
