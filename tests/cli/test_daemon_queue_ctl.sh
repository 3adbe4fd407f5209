#!/usr/bin/env bash
# Queue controls through the CLI, on one sim GPU that holds one 30 GB task at a time:
# dependencies (--after, --afterok: met, broken, unknown), hold and release, priority (the
# queue's order, and who may raise it), the time limit (ends `timeout`, not retried),
# `carma wait` (exit status, --timeout), arrays; and a daemon restart keeps all of it.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'policy = exclusive\nsample_interval_s = 0.2\ngrace_s = 0.2\nkill_grace_s = 1\nwindow = 2\n' \
    >"$tmp/carma.conf"
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
job() { # SECONDS [submit options...]: a 30 GB job, so that one runs at a time
    local secs=$1
    shift
    "$CARMA" submit --mem 30G "$@" -- "$FAKEJOB" --mem 30G --seconds "$secs"
}
first_launch() { # the order of the tasks' first launches
    sqlite3 "$STATE/carma.db" "SELECT task_id FROM events WHERE kind='launch' ORDER BY seq" \
        | awk '!seen[$1]++' | tr '\n' ' '
}

# --- dependencies, hold, priority: the order in which tasks start
a=$(job 2) || fail "submit a"                       # runs first
b=$(job 1 --after "$a") || fail "submit b"           # waits for a
c=$(job 1 --hold) || fail "submit c"                 # held
d=$(job 1) || fail "submit d"
e=$(job 1) || fail "submit e"
"$CARMA" priority "$e" 5 >/dev/null || fail "priority e 5"   # e goes ahead of d
out=$("$CARMA" queue --json) || fail "queue"
[ "$(jq -r "[.[] | select(.id==$c)][0].held" <<<"$out")" = true ] || fail "c not shown held: $out"
[ "$(jq -c "[.[] | select(.id==$b)][0].after" <<<"$out")" = "[$a]" ] || fail "b's after: $out"
[ "$(jq -r "[.[] | select(.id==$b or .id==$c) | .queue] | join(\" \")" <<<"$out")" = "waiting held" ] \
    || fail "b and c should be shown waiting and held: $out"
[ "$(jq -r '[.[] | select(.state=="queued") | .id] | join(" ")' <<<"$out")" = "$e $d $b $c" ] \
    || fail "queue order should be e d (priority), then b c (waiting): $(jq -c '[.[] | .id]' <<<"$out")"
"$CARMA" wait --timeout 30 "$a" "$b" "$d" "$e" >/dev/null || fail "wait for a b d e"
task_is "$c" queued || fail "held c started"
# b enters the queue when a ends, at its place by submission: ahead of d
[ "$(first_launch)" = "$a $e $b $d " ] || fail "launch order should be a e b d, got: $(first_launch)"
# released, a task with no dependencies joins the queue at once: not "waiting" for them
r=$("$CARMA" release --json "$c") || fail "release c"
jq -e '.[0].task | .queue != "waiting" and .reason_code != "dependency"' <<<"$r" >/dev/null \
    || fail "release's reply: c waits for dependencies it does not have: $r"
"$CARMA" wait --timeout 20 "$c" >/dev/null || fail "released c did not run"
out=$("$CARMA" wait "$c" "$c") || fail "wait c c" # a repeated id: once, as cancel takes it
[ "$out" = "task $c done" ] || fail "wait c c should print c once: $out"
# so does one whose dependencies have all ended (a is done)
m=$(job 1 --hold --after "$a") || fail "submit m"
r=$("$CARMA" release --json "$m") || fail "release m"
jq -e '.[0].task | .queue != "waiting" and .reason_code != "dependency"' <<<"$r" >/dev/null \
    || fail "release's reply: m waits for a dependency that has ended: $r"
"$CARMA" wait --timeout 20 "$m" >/dev/null || fail "released m did not run"
[ "$(sqlite3 "$STATE/carma.db" "SELECT group_concat(kind) FROM (SELECT kind FROM events
      WHERE task_id = $m AND kind IN ('released', 'dependencies met') ORDER BY seq)")" \
    = "released,dependencies met" ] || fail "m's events should say its dependencies were met"

# --afterok: met when the dependency is done; broken when it failed (cancelled, naming it)
f=$("$CARMA" submit --mem 30G -- "$FAKEJOB" --mem 30G --seconds 1 --exit 3) || fail "submit f"
g=$(job 1 --afterok "$f") || fail "submit g"
h=$(job 1 --afterok "$c") || fail "submit h (c is done)"
"$CARMA" wait --timeout 20 "$f" >/dev/null; [ $? -eq 5 ] || fail "wait on a failed task should exit 5"
wait_until 10 task_is "$g" cancelled || fail "g (afterok a failed task) should be cancelled: $(task_state "$g")"
[ "$("$CARMA" show --json "$g" | jq -r .end_reason)" = "dependency $f ended failed (--afterok)" ] \
    || fail "g's reason: $("$CARMA" show --json "$g" | jq -c .end_reason)"
"$CARMA" wait --timeout 20 "$h" >/dev/null || fail "h (afterok a done task) should run: $(task_state "$h")"
out=$("$CARMA" submit --after 999 -- true 2>&1) && fail "--after an unknown task accepted"
grep -q "after 999: no task 999" <<<"$out" || fail "unknown dependency message: $out"

# --- hold / release: errors, and the no-ops
out=$("$CARMA" hold "$a" 2>&1) && fail "an ended task was held"
grep -q "already done" <<<"$out" || fail "hold of an ended task: $out"
i=$(job 1 --hold) || fail "submit i"
out=$("$CARMA" release "$a" 2>&1) && fail "release of an ended task"
grep -q "already done" <<<"$out" || fail "release of an ended task: $out"
out=$("$CARMA" release 999 2>&1) && fail "release of an unknown task"
grep -q "no task 999" <<<"$out" || fail "release of an unknown task: $out"
# as asked already: a release of a queued task not held (j waits for held i), as a hold of a
# held one, succeeds with a note (scontrol's habit), and changes nothing
j=$(job 1 --after "$i") || fail "submit j"
out=$("$CARMA" release "$j" 2>&1) || fail "release of a task not held: $out"
[ "$out" = "note: task $j is not held: nothing to release" ] || fail "release note: $out"
out=$("$CARMA" release --json "$j" 2>"$tmp/err") || fail "release --json of a task not held"
jq -e --argjson j "$j" '. == [{"id": $j, "ok": true, "task": .[0].task, "unchanged": true}] and
    .[0].task.held == false and .[0].task.state == "queued"' <<<"$out" >/dev/null \
    || fail "release --json: $out"
[ "$(cat "$tmp/err")" = "note: task $j is not held: nothing to release" ] \
    || fail "release --json note: $(cat "$tmp/err")"
[ "$("$CARMA" hold "$j")" = "task $j held" ] || fail "hold j"
out=$("$CARMA" hold "$j" 2>&1) || fail "hold of a held task: $out"
[ "$out" = "note: task $j is already held" ] || fail "hold note: $out"
[ "$("$CARMA" show --json "$j" | jq -c '[.state, .held]')" = '["queued",true]' ] || fail "j held"
# several ids, as scontrol hold/release take them: each done, a repeated one once, one that
# cannot be named on stderr while the others still are, and the exit status 1
p=$(job 1 --after "$i") || fail "submit p"
out=$("$CARMA" hold "$p" "$j" "$p" 999 2>"$tmp/err"); rc=$?
[ $rc -eq 1 ] && [ "$out" = "task $p held
note: task $j is already held" ] || fail "hold p j p 999: exit $rc: $out"
[ "$(cat "$tmp/err")" = "carma hold: task 999: no task 999" ] || fail "hold 999: $(cat "$tmp/err")"
out=$("$CARMA" release --json "$p" "$a" "$j" 2>/dev/null); rc=$?
[ $rc -eq 1 ] && jq -e --argjson p "$p" --argjson j "$j" --argjson a "$a" 'length == 3 and
    .[0].id == $p and .[0].ok and .[0].task.held == false and .[0].unchanged == null and
    .[1] == {"id": $a, "ok": false, "error": "task \($a) is already done"} and
    .[2].id == $j and .[2].task.held == false' <<<"$out" >/dev/null \
    || fail "release --json p a j: exit $rc: $out"
"$CARMA" cancel "$j" "$p" >/dev/null
[ "$("$CARMA" release "$i")" = "task $i released" ] || fail "release i"

# --- time limit: cancelled past it, ends timeout, not retried
t=$(job 60 --time 0:02) || fail "submit --time"
[ "$("$CARMA" show --json "$t" | jq .time_limit_s)" = 2 ] || fail "time_limit_s not 2"
"$CARMA" wait --timeout 20 "$t" >/dev/null; st=$?
[ $st -eq 4 ] || fail "wait on a timed-out task should exit 4, got $st ($(task_state "$t"))"
out=$("$CARMA" show --json "$t")
[ "$(jq -r .state <<<"$out")" = timeout ] && [ "$(jq .attempts <<<"$out")" = 1 ] \
    && [ "$(jq -r .end_reason <<<"$out")" = "time limit of 2 s reached" ] || fail "timeout task: $out"
[ "$("$CARMA" history --json --state timeout | jq -c '[.[].id]')" = "[$t]" ] \
    || fail "history --state timeout: $("$CARMA" history --json --state timeout)"
"$CARMA" history --json | jq -e "any(.[]; .id == $t)" >/dev/null || fail "history lists the timed-out task"
for bad in 1:2:3:4 x 0 5-xx 1-2:3:4:5; do
    "$CARMA" submit --time "$bad" -- true >/dev/null 2>&1 && fail "--time $bad accepted"
done

# --- wait: --timeout on a task that does not start; unknown task
k=$(job 1 --hold) || fail "submit k"
"$CARMA" wait --timeout 0.6 "$k" >/dev/null 2>&1; st=$?
[ $st -eq 124 ] || fail "wait --timeout should exit 124, got $st"
# the whole --timeout is waited, also one shorter than the 0.5 s between looks
t0=$(date +%s%N)
"$CARMA" wait --timeout 0.4 "$k" >/dev/null 2>&1; st=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $st -eq 124 ] && [ $ms -ge 400 ] || fail "wait --timeout 0.4 gave up after $ms ms (exit $st)"
"$CARMA" wait 999 >/dev/null 2>&1; [ $? -eq 1 ] || fail "wait on an unknown task should exit 1"
"$CARMA" cancel "$k" >/dev/null
"$CARMA" wait "$k" >/dev/null; [ $? -eq 3 ] || fail "wait on a cancelled task should exit 3"

# --- arrays: one task per index, CARMA_ARRAY_INDEX in each
ids=$("$CARMA" submit --array 1-2,5 --name sweep -- sh -c 'echo i=$CARMA_ARRAY_INDEX') || fail "array"
[ "$(wc -w <<<"$ids")" = 3 ] || fail "array should print 3 ids on one line: $ids"
"$CARMA" wait --timeout 20 $ids >/dev/null || fail "array tasks"
set -- $ids
[ "$("$CARMA" logs "$3")" = i=5 ] && [ "$("$CARMA" show --json "$3" | jq -r .name)" = "sweep[5]" ] \
    || fail "array element 5: $("$CARMA" logs "$3"), $("$CARMA" show --json "$3" | jq -r .name)"
"$CARMA" submit --array 3-1 -- true >/dev/null 2>&1 && fail "--array 3-1 accepted"
# All or none, whenever the client dies: the daemon makes an array's tasks in one request.
# SIGKILL at several moments while 1000 are sent: none, or all 1000, never some held.
intr() { "$CARMA" queue --all --json | jq --arg p "$1[" '[.[] | select(.name | startswith($p))]
    | length'; }
for delay in 0 0.01 0.03 0.1; do
    "$CARMA" submit --hold --array 0-999 --name "intr$delay" -- true >/dev/null 2>&1 &
    sp=$!
    sleep "$delay"
    kill -KILL "$sp" 2>/dev/null
    wait "$sp" 2>/dev/null
    n=$(intr "intr$delay")
    [ "$n" = 0 ] || [ "$n" = 1000 ] || fail "an array killed after ${delay}s left $n of 1000 tasks"
    echo "killed after ${delay}s: $n of 1000 tasks"
    left=$("$CARMA" queue --json | jq -r '.[] | select(.name | startswith("intr")) | .id')
    [ -z "$left" ] || "$CARMA" cancel $left >/dev/null
done
# The request itself: a repeat with its key answers the same ids; bad arrays are refused.
py_req() {
    python3 -c 'import json, socket, sys
def req(line):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(line.encode() + b"\n")
    return json.loads(s.makefile().readline())
task = {"command": "true", "cwd": "/", "hold": True, "name": "raw"}
def arr(a, key=None, **extra):
    r = {"verb": "submit", "task": dict(task, **extra), "array": a}
    if key: r["key"] = key
    return req(json.dumps(r))
k = "0123456789abcdef0123456789abcdef"
first, again = arr([7, 3], k), arr([7, 3], k)
print(first.get("ids"), again.get("ids"), again.get("repeat"))
print(arr([1, 2, 3], k).get("error"))
print(arr([5], k).get("error"))
print(arr([1, 1]).get("error"))
print(arr([]).get("error"))
print(arr(list(range(1001))).get("error"))
print(arr([1], array_index=2).get("error"))
print(arr([1000001]).get("error"))' "$SOCK"
}
out=$(py_req) || fail "raw arrays: $out"
ids=$(sed -n 1p <<<"$out")
grep -qE '^\[[0-9]+, [0-9]+\] \[[0-9]+, [0-9]+\] True$' <<<"$ids" \
    && [ "$(cut -d' ' -f1-2 <<<"$ids")" = "$(cut -d' ' -f3-4 <<<"$ids")" ] \
    || fail "an array repeated with its key: $ids"
set -- $(tr -d '[],' <<<"$ids")
[ "$("$CARMA" show --json "$1" | jq -r '.name + " " + (.array_index | tostring)')" = "raw[7] 7" ] \
    && [ "$("$CARMA" show --json "$2" | jq -r .name)" = "raw[3]" ] || fail "raw array names"
"$CARMA" cancel "$1" "$2" >/dev/null
for want in "already used for a larger array" "already used for a smaller array" \
    "index 1 given twice" "list of 1 to 1000 indices" "list of 1 to 1000 indices" \
    "give one" "integers 0..1000000"; do
    grep -qF "$want" <<<"$out" || fail "raw arrays: no '$want' in: $out"
done

# --- choosing live tasks by --name, --state, --user (as scancel's filters)
"$CARMA" submit --hold --array 1-3 --name sel -- true >/dev/null || fail "array sel"
other=$("$CARMA" submit --hold --name selx -- true) || fail "selx" # not of the array sel
ids=$("$CARMA" queue --json | jq -r '[.[] | select(.name | startswith("sel[")) | .id] | join(" ")')
set -- $ids
out=$("$CARMA" hold --json --name sel 2>/dev/null) || fail "hold --name sel: $out"
[ "$(jq -r '[.[] | .id] | join(" ")' <<<"$out")" = "$ids" ] \
    && [ "$(jq '[.[] | select(.unchanged)] | length' <<<"$out")" = 3 ] || fail "hold --name: $out"
out=$("$CARMA" cancel --json --name sel "$1" "$other") || fail "cancel --name sel ID ID: $out"
[ "$(jq -c '[.[] | .id]' <<<"$out")" = "[$1]" ] || fail "--name among the ids given: $out"
out=$("$CARMA" cancel --name sel --state queued) || fail "cancel --name sel: $out"
[ "$out" = "task $2 cancelled"$'\n'"task $3 cancelled" ] || fail "cancel --name sel: $out"
task_is "$other" queued || fail "selx cancelled with the array sel"
out=$("$CARMA" cancel --json --name nosuch 2>&1) && [ "$(jq -c . <<<"${out#*$'\n'}")" = "[]" ] \
    && grep -q "note: no live task of $(id -un) matches" <<<"$out" || fail "nothing chosen: $out"
"$CARMA" cancel --state running >/dev/null 2>&1 || fail "cancel --state running with none"
"$CARMA" cancel --state done >/dev/null 2>&1; [ $? -eq 2 ] || fail "--state done accepted"
"$CARMA" cancel >/dev/null 2>&1; [ $? -eq 2 ] || fail "cancel with nothing chosen"
"$CARMA" cancel "$other" >/dev/null

# --- who may: nobody may not hold root's task, nor raise a priority above 0
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    r=$(job 1 --hold) || fail "submit r"
    for cmd in "release $r" "hold $r" "priority $r -1"; do
        out=$(as_nobody "$CARMA" $cmd 2>&1) && fail "nobody could $cmd on root's task"
        grep -q "permission denied" <<<"$out" || fail "nobody $cmd: $out"
    done
    out=$(cd /tmp && as_nobody "$CARMA" submit --priority 1 -- true 2>&1) && fail "nobody raised a priority"
    grep -q "above 0 is root's only" <<<"$out" || fail "nobody --priority 1: $out"
    n=$(cd /tmp && as_nobody "$CARMA" submit --hold --priority -3 -- true) || fail "nobody lowers own"
    as_nobody "$CARMA" priority "$n" 2 >/dev/null 2>&1 && fail "nobody raised own priority above 0"
    as_nobody "$CARMA" priority "$n" -1 >/dev/null || fail "nobody sets own priority -1"
    # choosing: nobody's options choose among nobody's own tasks; root's named another's
    out=$(as_nobody "$CARMA" cancel --name "$(jq -r .name <<<"$("$CARMA" show --json "$r")")" 2>&1)
    task_is "$r" queued || fail "nobody's cancel --name chose root's task: $out"
    out=$(as_nobody "$CARMA" cancel --user root --state queued 2>&1) \
        && fail "nobody cancelled root's tasks by --user: $out"
    grep -q "permission denied" <<<"$out" && task_is "$r" queued || fail "nobody --user root: $out"
    out=$("$CARMA" hold --json --user nobody --state queued) || fail "root holds nobody's: $out"
    [ "$(jq -c '[.[] | .id]' <<<"$out")" = "[$n]" ] || fail "root hold --user nobody: $out"
    "$CARMA" cancel "$r" >/dev/null; "$CARMA" cancel "$n" >/dev/null
fi

# --- a restart keeps holds, priorities, dependencies and time limits
x=$(job 3) || fail "submit x"
y=$(job 1 --afterok "$x" --time 5:00) || fail "submit y"
z=$(job 1 --hold --priority -2) || fail "submit z"
w=$(job 1) || fail "submit w"
"$CARMA" priority "$w" 7 >/dev/null || fail "priority w"
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
out=$("$CARMA" show --json "$y")
[ "$(jq -c .afterok <<<"$out")" = "[$x]" ] && [ "$(jq .time_limit_s <<<"$out")" = 300 ] \
    || fail "y after the restart: $out"
out=$("$CARMA" show --json "$z")
[ "$(jq .held <<<"$out")" = true ] && [ "$(jq .priority <<<"$out")" = -2 ] || fail "z after the restart: $out"
[ "$("$CARMA" show --json "$w" | jq .priority)" = 7 ] || fail "w's priority lost in the restart"
"$CARMA" wait --timeout 30 "$x" "$y" "$w" >/dev/null || fail "x y w after the restart"
task_is "$z" queued || fail "held z started after the restart"
l=$(first_launch)
[ "${l% $x $w $y }" != "$l" ] || [ "${l% $w $x $y }" != "$l" ] \
    || fail "after the restart w (priority 7) and x should start before y: $l"

stop_daemon
[ $fails -eq 0 ] || { echo "--- daemon log"; cat "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ]
