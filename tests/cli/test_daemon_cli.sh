#!/usr/bin/env bash
# The commands that talk to the daemon (cli/request.h): true --help, exit status 2 for bad
# usage (a bad --set too), 1 with a clear message when the daemon is unreachable or refuses or
# the --config cannot be read, nothing stored for a
# refused submission, and the --json shapes the issue asks for.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

for c in daemon submit queue show cancel logs gpus; do
    "$CARMA" $c --help | grep -q "usage: carma $c" || fail "$c --help"
    "$CARMA" $c --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "$c --bogus should exit 2"
done
for c in show cancel logs; do
    "$CARMA" $c x >/dev/null 2>&1; [ $? -eq 2 ] || fail "$c with a bad id should exit 2"
    "$CARMA" $c >/dev/null 2>&1; [ $? -eq 2 ] || fail "$c without an id should exit 2"
done
# an attempt number past an int is out of range, not "no integer", however many digits it has
for n in 2147483648 "$(printf '9%.0s' {1..70})"; do
    out=$("$CARMA" logs --attempt "$n" 1 2>&1)
    [ $? -eq 2 ] && grep -qF -- "--attempt: '$n' is out of range (at most 2147483647)" <<<"$out" \
        || fail "logs --attempt $n: $out"
done
# a task id past int64 is out of range, not "no task id", wherever a task id is read
huge=99999999999999999999999
for args in "show $huge" "cancel 1 $huge" "hold $huge" "release $huge" "wait $huge" \
    "logs $huge" "priority $huge 1" "queue --all --after $huge" "history --after $huge" \
    "submit --after 1,$huge -- true"; do
    out=$("$CARMA" $args 2>&1)
    [ $? -eq 2 ] && grep -qF "task id '$huge' is out of range (at most 9223372036854775807)" \
        <<<"$out" || fail "$args: $out"
done
for args in "show -- -$huge" "queue --all --after x" "priority 0 1"; do
    out=$("$CARMA" $args 2>&1)
    [ $? -eq 2 ] && grep -q "expected a task id (a positive integer), got" <<<"$out" \
        || fail "$args: $out"
done
# priority's options stop at the id (for a negative priority): one after it is named
out=$("$CARMA" priority 5 -3 --json 2>&1)
[ $? -eq 2 ] && grep -qF "'--json' after the task id: options go before it" <<<"$out" \
    || fail "priority 5 -3 --json: $out"
"$CARMA" submit >/dev/null 2>&1; [ $? -eq 2 ] || fail "submit without a command should exit 2"
"$CARMA" submit --gpus 0 -- true >/dev/null 2>&1; [ $? -eq 2 ] || fail "--gpus 0 should exit 2"
"$CARMA" submit --mem lots -- true >/dev/null 2>&1; [ $? -eq 2 ] || fail "--mem lots should exit 2"
out=$("$CARMA" submit --batch 99999999999 -- true 2>&1)
[ $? -eq 2 ] && grep -q -- "--batch: expected 1..1073741824, got '99999999999'" <<<"$out" \
    || fail "--batch too large: $out"
out=$("$CARMA" queue 2>&1); [ $? -eq 1 ] || fail "no daemon: exit 1"
grep -q "cannot reach the daemon at $SOCK" <<<"$out" || fail "no daemon message: $out"
"$CARMA" daemon --gpu-backend nope --socket "$tmp/x" --state "$tmp/xs" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "unknown GPU backend 'nope' (available: sim" "$tmp/err" \
    || fail "bad backend: a usage error (exit 2) naming the backends: $(cat "$tmp/err")"
# a bad --sim-gpus is bad usage (exit 2), as a bad --set sim_gpus=... is
"$CARMA" daemon --gpu-backend sim --sim-gpus 2xA100 --socket "$tmp/x" --state "$tmp/xs" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "^carma daemon: --sim-gpus: sim GPUs '2xA100': expected COUNTxNAME-<N>GB" \
    "$tmp/err" && grep -q "Try 'carma daemon --help'" "$tmp/err" \
    || fail "bad --sim-gpus: $(cat "$tmp/err")"
# what can be checked is, before anything is created: a bad --sim-gpus, a socket directory
# that cannot be one or a socket path too long leave no state directory behind
[ ! -e "$tmp/xs" ] || fail "a daemon refusing --sim-gpus 2xA100 created its state directory"
touch "$tmp/file"
for sock in "$tmp/file/s" "$tmp/$(printf 's%.0s' {1..120})"; do
    "$CARMA" daemon --gpu-backend sim --socket "$sock" --state "$tmp/xs" 2>"$tmp/err"
    [ $? -eq 1 ] && grep -Eq "socket directory: $tmp/file: Not a directory|is longer than" \
        "$tmp/err" || fail "socket $sock: $(cat "$tmp/err")"
    [ ! -e "$tmp/xs" ] || fail "a daemon refusing socket $sock created its state directory"
done
# and the other way round: a refused state directory (a file here, or another's, or in use)
# leaves no socket directory, nor its parents, made for it; one that was there stays
for sock in "$tmp/sd/sub/s" "$tmp/s"; do
    "$CARMA" daemon --gpu-backend sim --socket "$sock" --state "$tmp/file" 2>"$tmp/err"
    [ $? -eq 1 ] &&
        grep -q "state directory: $tmp/file is not a directory (a file is in its place)" "$tmp/err" \
        || fail "state $tmp/file: $(cat "$tmp/err")"
done
[ ! -e "$tmp/sd" ] || fail "a daemon refusing its state directory left $(find "$tmp/sd") behind"
[ -d "$tmp" ] || fail "a daemon refusing its state directory removed the socket's directory"
# --sim-gpus with another backend (named, or the config's nvml) would be ignored: refused
for backend in "--gpu-backend nvml" ""; do
    CARMA_CONFIG= timeout 20 "$CARMA" daemon $backend --sim-gpus 2xA100-40GB --socket "$tmp/x" \
        --state "$tmp/xs" 2>"$tmp/err"
    [ $? -eq 2 ] && grep -q -- "--sim-gpus goes with the sim GPU backend .*, not 'nvml'" \
        "$tmp/err" || fail "--sim-gpus with '$backend': $(cat "$tmp/err")"
done

start_daemon --sim-gpus 2xA100-40GB --set sample_interval_s=0.2
# --config and --set are checked whatever names the socket ($CARMA_SOCKET here, or --socket),
# though the socket needs no config: a bad --set is a usage error, a missing file a failure
queue_via() { # queue_via env|opt ARGS...: `carma queue`, the socket by $CARMA_SOCKET or --socket
    local how=$1; shift
    if [ "$how" = env ]; then
        "$CARMA" queue "$@"
    else
        env -u CARMA_SOCKET "$CARMA" queue --socket "$SOCK" "$@"
    fi
}
for how in env opt; do
    out=$(queue_via $how --set bogus=1 2>&1)
    [ $? -eq 2 ] && grep -q "unknown config key 'bogus'" <<<"$out" \
        || fail "$how: --set bogus=1: $out"
    out=$(queue_via $how --config "$tmp/none.conf" 2>&1)
    [ $? -eq 1 ] && grep -q "config $tmp/none.conf: No such file" <<<"$out" \
        || fail "$how: --config missing: $out"
    queue_via $how >/dev/null || fail "$how: queue does not reach the daemon"
done
out=$("$CARMA" submit --gpus 3 -- true 2>&1); [ $? -eq 1 ] || fail "3 GPUs on 2 should fail"
grep -q "asks for 3 GPUs but this server has 2" <<<"$out" || fail "message: $out"
"$CARMA" submit /nonexistent/x.rad >/dev/null 2>&1; [ $? -eq 1 ] || fail "missing task file"
# A task file is never read as a command line: options or words after it are refused (they
# would have become the task's command), and so is a directory where a task file would be.
src=$2
out=$("$CARMA" submit "$src/examples/resnet18.yaml" --gpus 2 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "'--gpus' after the task file .*options go before it" <<<"$out" ||
    fail "options after a task file: rc $rc: $out"
"$CARMA" submit "$src/examples/resnet18.yaml" extra >/dev/null 2>&1
[ $? -eq 2 ] || fail "a word after a task file should exit 2"
# the extension in any case, as carma run and task check read it (X.YAML was a command)
cp "$src/examples/resnet18.yaml" "$tmp/UPPER.YAML"
"$CARMA" submit "$tmp/UPPER.YAML" extra >/dev/null 2>&1
[ $? -eq 2 ] || fail "X.YAML should be a task file to submit too"
out=$("$CARMA" submit --name "" -- true 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- "--name: must not be empty" <<<"$out" || fail "--name '': rc $rc: $out"
for d in "$tmp" "$src/examples/"; do
    out=$("$CARMA" submit "$d" 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "'$d' is a directory" <<<"$out" || fail "directory $d: rc $rc: $out"
done
[ "$("$CARMA" queue --all --json | jq length)" -eq 0 ] || fail "a refused submission was stored"
id=$("$CARMA" submit --json --name hello --mem 3G -- echo 'hi there' | jq .id)
[ "$id" = 1 ] || fail "--json submit id: $id"
t=$("$CARMA" show --json 1)
for k in id name user state attempts gpus mem_mib; do
    jq -e "has(\"$k\")" <<<"$t" >/dev/null || fail "show --json lacks $k"
done
[ "$(jq -r .name <<<"$t")" = hello ] && [ "$(jq .mem_mib <<<"$t")" = 3072 ] || fail "fields: $t"
[ "$(jq -r .command <<<"$t")" = "echo 'hi there'" ] || fail "command quoting: $(jq -r .command <<<"$t")"
done_() { [ "$("$CARMA" show --json 1 | jq -r .state)" = done ]; }
wait_until 10 done_ || fail "task 1 did not finish"
[ "$("$CARMA" logs 1)" = "hi there" ] || fail "logs"
[ "$("$CARMA" logs --json 1 | jq -r .stdout)" = "hi there" ] || fail "logs --json"
# which attempt it is of; a task never started has none: null, not 0
[ "$("$CARMA" logs --json 1 | jq -c .attempt)" = 1 ] || fail "logs --json attempt: $("$CARMA" logs --json 1)"
held=$("$CARMA" submit --hold -- true) || fail "submit --hold"
[ "$("$CARMA" logs --json "$held" 2>/dev/null | jq -c .attempt)" = null ] \
    || fail "logs --json of a task not started: $("$CARMA" logs --json "$held")"
# show takes several ids (as scontrol's list): each in turn, a blank line between; --json an
# array (one id: its object alone); one that does not exist is named, the others still shown
out=$("$CARMA" show 1 99 "$held" 2>"$tmp/err"); rc=$?
[ $rc -eq 1 ] && [ "$(grep -c '^id ' <<<"$out")" = 2 ] && grep -qx '' <<<"$out" \
    && grep -q "no task 99" "$tmp/err" || fail "show 1 99 $held: exit $rc: $out $(cat "$tmp/err")"
[ "$("$CARMA" show --json 1 "$held" | jq -c 'map(.id)')" = "[1,$held]" ] || fail "show --json 1 $held"
[ "$("$CARMA" show --json 1 | jq -c .id)" = 1 ] || fail "show --json 1: one object"
"$CARMA" cancel "$held" >/dev/null
"$CARMA" gpus --json | jq -e 'length == 2 and all(.[]; has("mem_used_mib") and has("smact") and has("grace") and has("tasks") and has("power_w"))' >/dev/null \
    || fail "gpus --json"
# the reply's backend and MPS pipe directory, on each GPU (null: the daemon runs no MPS)
"$CARMA" gpus --json | jq -e 'all(.[]; .backend == "sim" and has("mps_pipe_dir") and .mps_pipe_dir == null)' \
    >/dev/null || fail "gpus --json backend, mps_pipe_dir: $("$CARMA" gpus --json)"
"$CARMA" top --once --json | jq -e '.gpus[0].backend == "sim"' >/dev/null || fail "top --json backend"
"$CARMA" gpus | grep -q "^0 .*sim A100-40GB" || fail "gpus table"
out=$("$CARMA" cancel 1 2>&1); [ $? -eq 1 ] && grep -q "already done" <<<"$out" || fail "cancel done: $out"
# The figures a task file gives are the task's: only the estimators it leaves out (carma) are
# computed from its summary and batch; a --batch given here has them all computed again.
id=$("$CARMA" submit --hold "$src/examples/resnet18.yaml") || fail "submit resnet18.yaml"
m=$("$CARMA" show --json "$id" | jq -c .mem)
[ "$(jq -c '[.oracle, .horus, .faketensor, .gpumemnet]' <<<"$m")" = "[788,2231,53,8192]" ] &&
    jq -e '.carma > 0' <<<"$m" >/dev/null || fail "the task file's figures: $m"
id=$("$CARMA" submit --hold --batch 64 "$src/examples/resnet18.yaml") || fail "submit --batch 64"
m=$("$CARMA" show --json "$id" | jq -c .mem)
jq -e '.oracle == 788 and .faketensor == 53 and .horus != 2231 and .gpumemnet != 8192' \
    <<<"$m" >/dev/null || fail "--batch 64 should recompute the summary's figures: $m"
# cancel takes several ids (as scancel): each is cancelled; one that cannot be is named on
# stderr, the others still are, and the exit status is 1. A bad id cancels nothing.
long() { "$CARMA" submit --json --mem 1G -- sleep 60 | jq .id; }
a=$(long) b=$(long) c=$(long)
"$CARMA" cancel "$a" x >/dev/null 2>&1; [ $? -eq 2 ] || fail "cancel with a bad id should exit 2"
task_is "$a" cancelled && fail "a usage error cancelled task $a"
out=$("$CARMA" cancel "$a" 1 99 "$b" 2>"$tmp/err"); rc=$?
[ $rc -eq 1 ] || fail "cancel of two live and two others: exit $rc"
for t in "$a" "$b"; do
    grep -Eq "^task $t (cancelled|cancelling)$" <<<"$out" || fail "cancel $t: $out"
    wait_until 10 task_is "$t" cancelled || fail "task $t not cancelled"
done
grep -q "^carma cancel: task 1: task 1 is already done$" "$tmp/err" \
    && grep -q "^carma cancel: task 99: no task 99$" "$tmp/err" || fail "cancel errors: $(cat "$tmp/err")"
d=$(long)
out=$("$CARMA" cancel --json "$d" "$d" 2>&1); rc=$? # a repeated id: once, no error
[ $rc -eq 0 ] && jq -e 'length == 1 and .[0].ok' <<<"$out" >/dev/null || fail "cancel d d: $rc $out"
out=$("$CARMA" cancel --json "$c" 1 2>/dev/null); rc=$?
[ $rc -eq 1 ] && jq -e --argjson c "$c" 'length == 2 and .[0].id == $c and .[0].ok and
        (.[0].state | test("^cancel")) and .[1] == {"id": 1, "ok": false,
        "error": "task 1 is already done"}' <<<"$out" >/dev/null || fail "cancel --json: $rc $out"
wait_until 10 task_is "$c" cancelled || fail "task $c not cancelled"
d=$(long) e=$(long)
"$CARMA" cancel "$d" "$e" >/dev/null || fail "cancel of two live tasks should exit 0"

stop_daemon

# The TASKS column of `carma gpus` with more ids than fit: whole ids, the rest counted (the
# list ran past its buffer, cut mid-number). Placed without the interference model, which
# would stop at a few sleepers per GPU.
start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.2 --set carma_interference=off \
    --set margin_mib=0
"$CARMA" submit --mem 1M --array 1-120 -- sleep 60 >/dev/null || fail "array of 120"
many() { [ "$("$CARMA" gpus --json | jq '.[0].tasks | length')" -ge 120 ]; }
wait_until 30 many || fail "120 tasks not all running: $("$CARMA" gpus --json | jq -c '.[0].tasks')"
line=$("$CARMA" gpus | awk '$1 == "0"')
shown=$(grep -o '[0-9,]*,+[0-9]* more$' <<<"$line") || fail "no '+N more' in: $line"
ids=${shown%,+*}
more=${shown##*+}; more=${more% more}
want=$("$CARMA" gpus --json | jq -r '.[0].tasks | map(tostring) | join(",")')
[[ "$want," == "$ids,"* ]] && [ $(($(tr ',' '\n' <<<"$ids" | wc -l) + more)) -eq 120 ] \
    || fail "TASKS column: '$shown' against $want"
"$CARMA" cancel $("$CARMA" gpus --json | jq -r '.[0].tasks[]') >/dev/null
stop_daemon

# A daemon that takes a submission and goes without answering: the message says it may have
# it (sending it again could make a second task), not only that it cannot be reached.
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
for _ in range(4):
    c, _ = s.accept(); c.recv(65536); c.close()' "$tmp/mute.sock" &
mute=$!
wait_until 10 test -S "$tmp/mute.sock" || fail "the mute daemon did not start"
out=$("$CARMA" submit --socket "$tmp/mute.sock" --mem 1G -- true 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "closed the connection without a reply; the daemon may have taken it" \
    <<<"$out" || fail "a submission never answered: rc $rc: $out"
kill "$mute" 2>/dev/null; wait "$mute" 2>/dev/null
echo "$fails failure(s)"
[ $fails -eq 0 ]
