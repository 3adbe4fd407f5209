#!/usr/bin/env bash
# A batch: several different tasks in one submit request ("tasks"), made all or none as an
# array is. A bad spec among them, or a batch past max_tasks_per_user, stores none; a repeat
# with its key answers the same ids; an environment sent once beside the tasks is each one's
# that has none of its own. `carma run` sends its task files so, on a shared daemon: not held
# and released one by one (carma run killed after it sent them leaves no task held, nor only
# some of its files queued). The max_tasks_per_user part acts as nobody (uid 65534): it needs
# root and setpriv, and is skipped otherwise.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
source "$(dirname "$0")/daemon_lib.sh"

start_daemon --sim-gpus 2xA100-40GB --set sample_interval_s=0.2 --set max_tasks_per_user=3
# send REQUEST-JSON [SETPRIV-ARGS...]: the daemon's reply to the request (its lines joined in
# one), sent as any client could, past carma's own checks (the JSON on stdin: it may be longer
# than an argument), as another user with setpriv's args.
send() {
    local req=$1
    shift
    "$@" python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(sys.stdin.read().encode() + b"\n")
print(s.makefile().readline(), end="")' "$SOCK" <<<"${req//$'\n'/ }"
}
stored() { sqlite3 "$STATE/carma.db" "SELECT count(*) FROM tasks"; }
spec() { # NAME [EXTRA-JSON-FIELDS]: a held task that does nothing
    printf '{"name": "%s", "command": "true", "cwd": "/tmp", "hold": true%s}' "$1" "${2:-}"
}

# --- one bad spec among good ones: refused naming it (index, source), nothing stored
for bad in '"ngpus": 3' '"ngpus": 0' '"colour": 1' '"after": [999]' '"priority": 5000000'; do
    r=$(send "{\"verb\": \"submit\", \"tasks\": [$(spec a), $(spec b ", $bad, \"source\": \"/x/b.yaml\""), $(spec c)]}")
    jq -e '.ok == false and .index == 1 and (.error | startswith("submission refused: tasks[1] (/x/b.yaml): "))' \
        <<<"$r" >/dev/null || fail "a batch with a bad spec ($bad): $r"
    [ "$(stored)" = 0 ] || fail "a batch with a bad spec ($bad) stored $(stored) task(s)"
done
r=$(send "{\"verb\": \"submit\", \"tasks\": [$(spec a), $(spec b ', "ngpus": 3')]}")
grep -q "task asks for 3 GPUs but this server has 2" <<<"$r" || fail "the reason: $r"

# --- the request itself: bad batches are refused (a batch refusal always has an index)
for want in '[]|list of 1 to 1000 tasks' '[1]|tasks[0]: expected a task object' \
    '"x"|list of 1 to 1000 tasks'; do
    r=$(send "{\"verb\": \"submit\", \"tasks\": ${want%%|*}}")
    jq -e --arg w "${want#*|}" '.ok == false and .index == null and (.error | contains($w))' \
        <<<"$r" >/dev/null || fail "tasks ${want%%|*}: $r"
done
many=$(for i in $(seq 1001); do spec "m$i"; echo ,; done | tr -d '\n')
r=$(send "{\"verb\": \"submit\", \"tasks\": [${many%,}]}")
grep -q "list of 1 to 1000 tasks" <<<"$r" || fail "1001 tasks: $r"
for other in "\"task\": $(spec t)" '"array": [1]'; do
    r=$(send "{\"verb\": \"submit\", \"tasks\": [$(spec a)], $other}")
    grep -q "'tasks' and 'task' or 'array': give one" <<<"$r" || fail "tasks with $other: $r"
done
r=$(send "{\"verb\": \"submit\", \"tasks\": [$(spec a)], \"key\": \"xyz\"}")
jq -e '.index == null and (.error | contains("16 to 64 hex digits"))' <<<"$r" >/dev/null \
    || fail "a batch with a bad key: $r"
[ "$(stored)" = 0 ] || fail "refused batches stored $(stored) task(s)"

# --- a repeat with its key answers the same ids; the key with another count is refused
k=0123456789abcdef0123456789abcdef
req="{\"verb\": \"submit\", \"key\": \"$k\", \"tasks\": [$(spec k1), $(spec k2 ', "ngpus": 2')]}"
first=$(send "$req")
again=$(send "$req")
jq -e '.ok and (.ids | length) == 2 and .repeat == null' <<<"$first" >/dev/null \
    || fail "a keyed batch: $first"
[ "$(jq -c .ids <<<"$again")" = "$(jq -c .ids <<<"$first")" ] && jq -e .repeat <<<"$again" \
    >/dev/null || fail "a repeat: $first then $again"
[ "$(stored)" = 2 ] || fail "a repeated batch stored $(stored) tasks, not 2"
set -- $(jq -r '.ids[]?' <<<"$first") 0 0 # (0: none, when it failed)
[ "$("$CARMA" show --json "$1" | jq -r .name)" = k1 ] \
    && [ "$("$CARMA" show --json "$2" | jq -c '[.name, .ngpus, .held]')" = '["k2",2,true]' ] \
    || fail "the batch's tasks are not its specs: $("$CARMA" show --json "$2")"
r=$(send "{\"verb\": \"submit\", \"key\": \"$k\", \"tasks\": [$(spec k1)]}")
grep -q "already used for a larger batch" <<<"$r" || fail "the key with 1 task: $r"
r=$(send "{\"verb\": \"submit\", \"key\": \"$k\", \"tasks\": [$(spec a), $(spec b), $(spec c)]}")
grep -q "already used for a smaller batch" <<<"$r" || fail "the key with 3 tasks: $r"
"$CARMA" cancel "$1" "$2" >/dev/null 2>&1

# --- the request's env, for each task without its own; a task's own env is kept
env='["WHO=shared"]'
r=$(send "{\"verb\": \"submit\", \"env\": $env, \"tasks\": [
    {\"command\": \"echo \$WHO\", \"cwd\": \"/tmp\", \"name\": \"e1\"},
    {\"command\": \"echo \$WHO\", \"cwd\": \"/tmp\", \"name\": \"e2\", \"env\": [\"WHO=own\"]}]}")
set -- $(jq -r '.ids[]?' <<<"$r") 0 0
[ $# = 4 ] || fail "a batch with a shared env: $r"
"$CARMA" wait --timeout 20 "$1" "$2" >/dev/null || fail "the env batch's tasks did not run"
[ "$("$CARMA" logs "$1")" = shared ] && [ "$("$CARMA" logs "$2")" = own ] \
    || fail "env: $("$CARMA" logs "$1") / $("$CARMA" logs "$2")"
r=$(send "{\"verb\": \"submit\", \"env\": [\"NOEQUALS\"], \"tasks\": [$(spec a)]}")
jq -e '.index == 0 and (.error | contains("NOEQUALS"))' <<<"$r" >/dev/null \
    || fail "a bad shared env: $r"

# --- carma run on a shared daemon: its task files in one request, not held, nothing released
cd "$tmp"
for i in $(seq 3); do printf 'name: run%s\ncommand: "true"\nmemory: 1000\n' "$i" >"run$i.yaml"; done
"$CARMA" run run1.yaml run2.yaml run3.yaml >"$tmp/out" 2>"$tmp/err" \
    || fail "carma run: exit $?: $(cat "$tmp/err")"
[ "$(grep -c '^task [0-9]* done run' "$tmp/out")" = 3 ] || fail "carma run: $(cat "$tmp/out")"
[ "$(sqlite3 "$STATE/carma.db" "SELECT count(*) FROM events e JOIN tasks t ON t.id = e.task_id
      WHERE e.kind = 'released'")" = 0 ] || fail "carma run's tasks were held and released"
# killed at once after it sent them (SIGKILL: it cancels nothing): all its files' tasks are
# queued, or none, and none is held
files=()
for i in $(seq 200); do
    printf 'name: k%s\ncommand: sleep 0\nmemory: 1000\n' "$i" >"k$i.yaml"
    files+=("k$i.yaml")
done
for delay in 0.05 0.1 0.2 0.4; do
    before=$(stored)
    "$CARMA" run "${files[@]}" >/dev/null 2>&1 &
    rp=$!
    sleep "$delay"
    kill -KILL "$rp" 2>/dev/null
    wait "$rp" 2>/dev/null
    sleep 0.5 # a request it sent is taken meanwhile (one transaction: all its tasks or none)
    n=$(($(stored) - before))
    held=$("$CARMA" queue --json | jq '[.[] | select(.held)] | length')
    echo "carma run killed after ${delay}s: $n of 200 tasks, $held held"
    { [ "$n" = 0 ] || [ "$n" = 200 ]; } && [ "$held" = 0 ] \
        || fail "carma run killed after ${delay}s left $n of 200 tasks, $held held"
done

# --- max_tasks_per_user counts every task of the batch: past it, none is stored
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: max_tasks_per_user needs root and setpriv to act as a second user (uid 65534)"
else
    NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    r=$(send "{\"verb\": \"submit\", \"tasks\": [$(spec n1), $(spec n2)]}" "${NOBODY[@]}")
    jq -e '.ok and (.ids | length) == 2' <<<"$r" >/dev/null || fail "nobody's batch of 2: $r"
    before=$(stored)
    r=$(send "{\"verb\": \"submit\", \"tasks\": [$(spec n3), $(spec n4)]}" "${NOBODY[@]}")
    jq -e '.ok == false and .index == null and (.error | contains("you have 2 tasks not ended and the batch adds 2 (max_tasks_per_user = 3)"))' \
        <<<"$r" >/dev/null || fail "nobody's batch past the cap: $r"
    [ "$(stored)" = "$before" ] || fail "a batch past the cap stored $(($(stored) - before)) task(s)"
    r=$(send "{\"verb\": \"submit\", \"tasks\": [$(spec n3)]}" "${NOBODY[@]}")
    jq -e '.ok' <<<"$r" >/dev/null || fail "nobody's batch of 1 within the cap: $r"
fi

stop_daemon
[ $fails -eq 0 ] || { echo "--- daemon log"; tail -50 "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ]
