#!/usr/bin/env bash
# The daemon's Prometheus endpoint (metrics_listen) on the sim backend: off by default (no TCP
# port at all); a bad address or a port in use stops the start naming metrics_listen; on a
# free port (127.0.0.1:0, the port read from the log) a collocated placement and an
# out-of-memory crash with its recovery show in the counters, the GPU memory matches the sim
# GPUs, the scrape passes `promtool check metrics` with nothing to say, bad requests get 400,
# 404, 405, 501 while the Unix socket keeps serving; and every metric the Grafana dashboard
# (contrib/grafana/carma-dashboard.json) queries is one the daemon exports; a restart while a
# task runs takes the same port again.
# Exits 77 (skipped) after every other check when promtool is not installed.
set -u
CARMA=$1
SRC=${2:-$(dirname "$0")/../..}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
PROBE="python3 $(dirname "$0")/http_probe.py"
# sound FILE WHAT: fails unless the scrape in FILE is valid UTF-8, names each family in one
# HELP and one TYPE line at most, and holds no series twice (promtool 2.42 checks none of these:
# Prometheus would drop a scrape with a duplicate series)
sound() {
    python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$1" 2>/dev/null \
        || fail "$2: the scrape is not valid UTF-8"
    local d
    d=$(grep -E '^# (HELP|TYPE) ' "$1" | awk '{print $2, $3}' | sort | uniq -d)
    [ -z "$d" ] || fail "$2: a family's HELP or TYPE line twice: $d"
    d=$(grep -v '^#' "$1" | sed -E 's/ [^ ]+$//' | sort | uniq -d)
    [ -z "$d" ] || fail "$2: a series twice: $d"
}

# ---- off by default: the daemon listens on no TCP port
start_daemon --sim-gpus 1xA100-40GB
[ -z "$($PROBE listening "$DAEMON_PID")" ] || fail "metrics off by default, yet a TCP port is open"
grep -q "serving metrics" "$tmp/daemon.log" && fail "metrics off by default, yet the log names them"
stop_daemon

# ---- a bad address is refused before anything starts, naming the key
out=$("$CARMA" daemon --socket "$tmp/bad.sock" --state "$tmp/bad" --gpu-backend sim \
      --set metrics_listen=localhost 2>&1) && fail "metrics_listen=localhost (no port) started"
grep -q "metrics_listen" <<<"$out" || fail "bad metrics_listen: error does not name the key: $out"

# ---- metrics on
{ quick_config; echo "metrics_listen = 127.0.0.1:0"; } >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
PORT=$(metrics_port)
[ -n "$PORT" ] || { fail "no 'serving metrics on' line in the log"; cat "$tmp/daemon.log"; exit 1; }
[ "$($PROBE listening "$DAEMON_PID")" = "$PORT" ] || fail "the daemon does not listen on $PORT alone"

# a port in use: a second daemon's start fails, naming the key and the address
out=$("$CARMA" daemon --socket "$tmp/two.sock" --state "$tmp/two" --gpu-backend sim \
      --set "metrics_listen=127.0.0.1:$PORT" 2>&1) && fail "a second daemon took port $PORT"
grep -q "metrics_listen 127.0.0.1:$PORT: Address already in use" <<<"$out" \
    || fail "port in use: unclear error: $out"

job() { # MEM_DECLARED MEM_REAL SECONDS
    "$CARMA" submit --mem "$1" -- "$FAKEJOB" --mem "$2" --seconds "$3" --smact 0.2
}
job 10G 10G 3 >/dev/null
job 10G 10G 3 >/dev/null
job 10G 10G 3 >/dev/null   # the third shares a GPU: collocated
oom=$(job 1G 36G 1)        # lies about its memory: crashes out of memory, then runs alone
two_running() { [ "$("$CARMA" queue --json | jq '[.[] | select(.state=="running")] | length')" -ge 2 ]; }
wait_until 20 two_running || fail "two tasks never ran at once"
# the sample shows their memory once their processes hold it (a value is its line's last field)
mem_shown() {
    m=$(metrics_get /metrics)
    [ "$(awk '/^DCGM_FI_DEV_FB_USED\{/ {s += $NF} END {print s + 0}' <<<"$m")" -ge 20480 ]
}
wait_until 10 mem_shown || fail "two 10G tasks run, yet DCGM_FI_DEV_FB_USED never sums to 20480 MiB"
running=$(awk '/^carma_tasks\{state="running"\}/ {print $NF}' <<<"$m")
[ "${running:-0}" -ge 2 ] || fail "carma_tasks{state=running} is '$running' while two run"

all_done() { "$CARMA" queue --all --json | jq -e 'length == 4 and all(.[]; .state=="done")'; }
wait_until 60 all_done || { fail "not every task ended done"; "$CARMA" queue --all; }
[ "$("$CARMA" show --json "$oom" | jq .attempts)" -ge 2 ] || fail "task $oom never crashed"
m=$(metrics_get /metrics)
printf '%s\n' "$m" >"$tmp/scrape.txt"
val() { awk -v k="$1" '$1 == k {print $NF}' <<<"$m"; }
[ "$(val carma_oom_crashes_total)" = 1 ] || fail "carma_oom_crashes_total = '$(val carma_oom_crashes_total)', want 1"
[ "$(val carma_oom_recoveries_total)" = 1 ] || fail "carma_oom_recoveries_total = '$(val carma_oom_recoveries_total)', want 1"
[ "$(val carma_collocated_placements_total)" -ge 1 ] 2>/dev/null \
    || fail "carma_collocated_placements_total = '$(val carma_collocated_placements_total)', want >= 1"
[ "$(val carma_placements_total)" = 5 ] || fail "carma_placements_total = '$(val carma_placements_total)', want 5 (4 tasks, one retry)"
[ "$(val carma_task_wait_seconds_count)" = 5 ] || fail "carma_task_wait_seconds_count = '$(val carma_task_wait_seconds_count)', want 5"
[ "$(val 'carma_tasks_ended_total{state="done"}')" = 4 ] || fail "4 tasks done, carma_tasks_ended_total says '$(val 'carma_tasks_ended_total{state="done"}')'"
[ "$(val 'carma_tasks{state="queued"}')" = 0 ] && [ "$(val 'carma_tasks{state="running"}')" = 0 ] \
    || fail "nothing is live, yet carma_tasks says otherwise"
# every GPU's total, as `carma gpus` shows it, under its index and UUID
while read -r idx uuid total; do
    got=$(grep -E "^carma_gpu_memory_total_mib\{gpu=\"$idx\",UUID=\"$uuid\"," <<<"$m" | awk '{print $NF}')
    [ "$got" = "$total" ] || fail "GPU $idx: carma_gpu_memory_total_mib '$got', carma gpus says $total"
    free=$(grep -E "^DCGM_FI_DEV_FB_FREE\{gpu=\"$idx\"," <<<"$m" | awk '{print $NF}')
    usedg=$(grep -E "^DCGM_FI_DEV_FB_USED\{gpu=\"$idx\"," <<<"$m" | awk '{print $NF}')
    [ $((free + usedg)) -eq "$total" ] || fail "GPU $idx: free $free + used $usedg != total $total"
done < <("$CARMA" gpus --json | jq -r '.[] | "\(.index) \(.uuid) \(.mem_total_mib)"')
[ "$(grep -c '^carma_gpu_memory_total_mib{' <<<"$m")" -eq 2 ] || fail "not one total per GPU"
grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="0",.*,Hostname="'"$(hostname)"'"} [0-9]' <<<"$m" \
    || fail "no power sample labelled with this host"
# every family has its HELP and TYPE
for f in $(grep -oE '^[A-Za-z_:][A-Za-z0-9_:]*' <<<"$m" | sed -E 's/_(bucket|sum|count)$//' | sort -u); do
    grep -q "^# TYPE $f " <<<"$m" || fail "$f has no # TYPE"
    grep -q "^# HELP $f " <<<"$m" || fail "$f has no # HELP"
done

sound "$tmp/scrape.txt" "sim GPUs"

# ---- promtool lints the real scrape: nothing to say
have_promtool=false
if command -v promtool >/dev/null; then
    have_promtool=true
    lint=$(promtool check metrics <"$tmp/scrape.txt" 2>&1) || fail "promtool check metrics failed: $lint"
    [ -z "$lint" ] || fail "promtool check metrics: $lint"
fi

# ---- HEAD, the index, and bad requests; the Unix socket serves throughout
status() { $PROBE "$PORT" "$1" 2>/dev/null | head -1 | tr -d '\r'; }
[ "$(status 'HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n')" = "HTTP/1.1 200 OK" ] || fail "HEAD /metrics"
grep -q 'href="/metrics"' <<<"$($PROBE "$PORT" /)" || fail "/ does not link /metrics"
[ "$(status 'POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n')" = "HTTP/1.1 405 Method Not Allowed" ] \
    || fail "POST /metrics: $(status 'POST /metrics HTTP/1.1\r\n\r\n')"
[ "$(status /nope)" = "HTTP/1.1 404 Not Found" ] || fail "GET /nope: $(status /nope)"
# methods are case-sensitive: `get` is a method HTTP does not define, as FOO is
for m in get FOO; do
    [ "$(status "$m /metrics HTTP/1.1\r\nHost: a\r\n\r\n")" = "HTTP/1.1 501 Not Implemented" ] \
        || fail "$m /metrics: $(status "$m /metrics HTTP/1.1\r\nHost: a\r\n\r\n")"
done
[ "$(status 'hello\r\n\r\n')" = "HTTP/1.1 400 Bad Request" ] || fail "garbage: $(status 'hello\r\n\r\n')"
# an HTTP/1.1 request without a Host field (RFC 9112 3.2)
[ "$(status 'GET /metrics HTTP/1.1\r\n\r\n')" = "HTTP/1.1 400 Bad Request" ] || fail "no Host"
big="GET /metrics HTTP/1.1\r\nX-Pad: $(head -c 20000 /dev/zero | tr '\0' a)\r\n\r\n"
[ "$(status "$big")" = "HTTP/1.1 400 Bad Request" ] || fail "20 kB of headers: $(status "$big")"
# a peer that sends half a request and waits does not stall the daemon
python3 -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $PORT)); s.sendall(b'GET /metr'); time.sleep(30)" &
slow=$!
sleep 0.3
t0=$(date +%s%N)
"$CARMA" queue >/dev/null || fail "the Unix socket stopped serving"
m=$(metrics_get /metrics)
grep -q '^carma_build_info{version=' <<<"$m" || fail "a second client not served while one stalls"
[ $((($(date +%s%N) - t0) / 1000000)) -lt 3000 ] || fail "served, but slowly, while a peer stalls"
kill "$slow" 2>/dev/null; wait "$slow" 2>/dev/null
id=$(job 1G 1G 0.2) || fail "submit after the bad requests"
wait_until 20 task_is "$id" done || fail "task $id not done after the bad requests"

# ---- the Grafana dashboard: valid JSON, and every metric it queries is exported
DASH=$SRC/contrib/grafana/carma-dashboard.json
jq -e '.panels | length > 0' "$DASH" >/dev/null || fail "$DASH: not JSON with panels"
exported=$(grep -oE '^[A-Za-z_:][A-Za-z0-9_:]*' "$tmp/scrape.txt" | sort -u)
queried=$(jq -r '.. | objects | (.expr?, .definition?) // empty' "$DASH" |
          grep -oE '\b(DCGM_FI_[A-Z_]+|carma_[a-z_]+)\b' | sort -u)
[ -n "$queried" ] || fail "the dashboard queries no metric"
for q in $queried; do
    grep -qx "$q" <<<"$exported" || fail "the dashboard queries $q, which the daemon does not export"
done
# its Server variable takes several daemons at once: a series kept per daemon (not summed)
# names the daemon in its legend, or two servers' "GPU 0" could not be told apart
unnamed=$(jq -r '.panels[].targets[]? | select(.expr | test("^(sum|histogram_quantile)") | not)
                 | select(.legendFormat | contains("{{instance}}") | not) | .expr' "$DASH")
[ -z "$unnamed" ] || fail "per-daemon series whose legend does not name the daemon: $unnamed"

# ---- a restart while a task runs takes the same port again: the task's supervisor, which
# outlives the daemon, holds none of its sockets
long=$(job 1G 1G 4)
wait_until 10 task_is "$long" running || fail "task $long never ran"
stop_daemon
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf" --set "metrics_listen=127.0.0.1:$PORT"
[ "$(grep -c "serving metrics on http://127.0.0.1:$PORT/metrics" "$tmp/daemon.log")" = 2 ] \
    || fail "the restarted daemon did not take port $PORT again"
m=$(metrics_get /metrics)
[ "$(val carma_oom_crashes_total)" = 0 ] || fail "a new daemon's counters start at 0"
[ "$(val 'carma_tasks{state="running"}')" = 1 ] || fail "the adopted task is not counted running"
wait_until 20 task_is "$long" done || fail "task $long not done after the restart"

stop_daemon

# ---- GPUs whose model names hold a backslash, braces and bytes that are not ASCII (one not
# UTF-8), both under one UUID, the second without power or energy, and a task whose name
# looks like labels: the scrape is still valid UTF-8 text that promtool accepts, each series
# once (the gpu label tells the two GPUs apart), the unknown power left out, the task's name
# nowhere (fake NVML: a scenario cannot hold a double quote or a newline; the unit test
# escapes those)
use_fake_nvml
printf 'gpu uuid=GPU-twin name="back\\slash {gpu=0} \377\303\251" total=40960 used=100 %s\n' \
    'power=60000 energy=1000' 'power=na energy=na' >"$tmp/nvml.scenario"
export FAKE_NVML_SCENARIO=$tmp/nvml.scenario
STATE=$tmp/state.nvml
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
odd=$("$CARMA" submit --name 'MARK"} 1\n{x="y' -- sleep 30) || fail "submit, named like labels"
PORT=$(metrics_port)
two_gpus() { [ "$(metrics_get /metrics | grep -c '^DCGM_FI_DEV_FB_USED{')" = 2 ]; }
wait_until 10 two_gpus || fail "no memory sample for the two fake GPUs"
scrape=$tmp/scrape.nvml.txt
# the body's bytes as sent (metrics_get's http_probe.py reads them as Latin-1 and writes UTF-8)
python3 -c 'import sys, urllib.request as u
sys.stdout.buffer.write(u.urlopen(sys.argv[1]).read())' \
    "http://127.0.0.1:$PORT/metrics" >"$scrape" || fail "GET /metrics from the fake GPUs' daemon"
sound "$scrape" "odd GPU names"
if $have_promtool; then
    lint=$(promtool check metrics <"$scrape" 2>&1) || fail "promtool: odd GPU names: $lint"
fi
want='^carma_gpu_tasks{gpu="[01]",UUID="GPU-twin",model_name="back\\\\slash {gpu=0} ???",'
[ "$(grep -c "$want" "$scrape")" = 2 ] \
    || fail "odd GPU names not escaped as documented: $(grep '^carma_gpu_tasks' "$scrape")"
grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="0",' "$scrape" || fail "GPU 0's power not shown"
grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="1",' "$scrape" && fail "GPU 1's unknown power shown"
grep -q MARK "$scrape" && fail "a task's name is in the scrape"
[ -n "$odd" ] && "$CARMA" cancel "$odd" >/dev/null
stop_daemon
kill_supervisors
# under `make asan`, the daemons' sanitizers report into the log (leaks: at their exit)
grep -qE "runtime error|Sanitizer" "$tmp/daemon.log" && fail "a sanitizer reported in the daemon"
[ $fails -eq 0 ] || { echo "--- daemon log"; cat "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ] || exit 1
$have_promtool || { echo "SKIP: promtool not installed (scripts/deps.sh installs prometheus)"; exit 77; }
