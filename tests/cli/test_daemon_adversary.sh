#!/usr/bin/env bash
# What one user (uid 65534 here) can do to a root daemon, and so to everyone else, with
# requests the CLI would never send: a user filling the limit of tasks not ended
# (max_tasks_per_user) with tasks waiting on dependencies does not hold the daemon's loop (it
# served every request seconds late), nor does a refused batch of tasks with many dependencies
# each (every dependency was read from the store whole); a client pipelining many short
# requests whose replies wait unread is served in full, not told its request line is too long
# and dropped. Needs
# root (to act as a second uid) and python3: skipped otherwise.
set -u
CARMA=$1
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! command -v python3 >/dev/null
then
    echo "SKIP: this test needs root, setpriv and python3 (to act as uid 65534)"
    exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
PY=/usr/bin/python3 # not a shim in root's home, which nobody cannot run
[ -x "$PY" ] || PY=$(command -v python3)
# a copy nobody can read wherever the checkout is
cp "$(dirname "$0")/adversary_client.py" "$tmp/client.py" && chmod 644 "$tmp/client.py"

start_daemon --sim-gpus 2xA100-40GB --set sample_interval_s=0.2 --set grace_s=0.2

# 9000 queued tasks of nobody's, each waiting on 63 ended tasks and then a live one: every
# pass over them looked each dependency up among the 9000 live tasks (and read the ended ones
# from the store), some 10 s each sample; a ping waited that long. Now: milliseconds.
out=$(cd /tmp && as_nobody timeout 120 "$PY" "$tmp/client.py" parked "$SOCK" 9000 2>&1)
echo "$out"
batch=$(sed -n 's/^batch refused \([0-9.]*\)$/\1/p' <<<"$out")
[ -n "$batch" ] && awk -v b="$batch" 'BEGIN { exit !(b < 1.0) }' ||
    fail "a refused batch of 600 tasks with 64 dependencies each took ${batch:-?} s"
worst=$(sed -n 's/^worst ping \([0-9.]*\)$/\1/p' <<<"$out")
[ -n "$worst" ] || fail "the parked tasks' client: $out"
[ -n "$worst" ] && awk -v w="$worst" 'BEGIN { exit !(w < 1.5) }' ||
    fail "a ping waited ${worst:-?} s behind 9000 parked tasks with dependencies"
# they still wait, and start once their last dependency ends (released here, it runs `true`)
[ "$("$CARMA" queue --json --state queued | jq '[.[] | select(.queue == "waiting")] | length')" \
    = 9000 ] || fail "nobody's 9000 tasks should wait for their dependencies"
"$CARMA" release 1 >/dev/null || fail "release of the last dependency"
none_waiting() {
    [ "$("$CARMA" queue --json | jq '[.[] | select(.queue == "waiting")] | length')" = 0 ]
}
wait_until 20 none_waiting || fail "the tasks still wait once their dependencies ended"
stop_daemon

# 20000 queue requests of 17 bytes in one stream, none of the replies read for a second: the
# daemon reads some 264 KiB of them at once, serves them until 1 MiB of replies waits, and
# what is left unserved is more than a line's limit of complete requests. It was answered
# "request line longer than 262144 bytes" and dropped; every one is answered now.
rm -rf "$STATE"
start_daemon --sim-gpus 2xA100-40GB
for i in $(seq 15); do "$CARMA" submit --hold --name "pad$i" -- true >/dev/null; done
out=$(as_nobody timeout 60 "$PY" "$tmp/client.py" pipeline "$SOCK" 20000 2>&1)
[ "$out" = "replies 20000 errors {}" ] || fail "20000 pipelined queue requests: $out"
stop_daemon

echo "$fails failure(s)"
[ $fails -eq 0 ]
