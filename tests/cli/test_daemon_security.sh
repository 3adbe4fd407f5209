#!/usr/bin/env bash
# Identity and security of carma daemon: the submitter comes from the socket (SO_PEERCRED);
# a root daemon runs each task as its submitter in the submitter's directory; only the owner
# or root may cancel a task or read its logs; a task run as its submitter still dies with its
# supervisor; a daemon not running as root refuses other users and keeps its socket to itself;
# a client talks only to a daemon run by root or by its own user, and a daemon will not serve
# a socket path another user holds. Needs root (to act as a second uid): skipped otherwise.
set -u
CARMA=$1
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: this test needs root and setpriv to act as a second user (uid 65534)"
    exit 0
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

printf 'sample_interval_s = 0.2\ngrace_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
[ "$(stat -c %a "$SOCK")" = 666 ] || fail "a root daemon's socket should be 0666, is $(stat -c %a "$SOCK")"

# A task of root's, long enough to try to cancel.
rootjob=$(SECRET=hunter2 "$CARMA" submit --name rootjob -- sleep 30) || fail "root submit"
out=$(as_nobody "$CARMA" cancel "$rootjob" 2>&1) && fail "nobody cancelled root's task"
grep -q "permission denied" <<<"$out" || fail "refusal should say permission denied: $out"
out=$(as_nobody "$CARMA" logs "$rootjob" 2>&1) && fail "nobody read root's logs"
grep -q "permission denied" <<<"$out" || fail "logs refusal: $out"
[ "$("$CARMA" show --json "$rootjob" | jq -r .state)" != cancelled ] || fail "task was cancelled"

# Several ids at once (one request each): root's is refused, nobody's own are still done, and
# the exit status says one failed. Each verb that needs the owner refuses root's task, and the
# refusal names no more of it than show does (never its environment).
mine=$(cd /tmp && as_nobody "$CARMA" submit --hold --array 1-2 -- sleep 30) || fail "nobody's array"
read -r m1 m2 <<<"$mine"
for verb in hold release cancel; do
    out=$(as_nobody "$CARMA" "$verb" "$m1" "$rootjob" "$m2" 2>&1) && fail "$verb with root's id: 0"
    [ "$(grep -c "task $rootjob: permission denied" <<<"$out")" = 1 ] || fail "$verb: $out"
done
both_cancelled() { task_is "$m1" cancelled && task_is "$m2" cancelled; }
wait_until 10 both_cancelled || fail "nobody's own: $(task_state "$m1") $(task_state "$m2")"
out=$(as_nobody /usr/bin/python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile("rb")
for v in ("cancel", "hold", "release", "logs"):
    s.sendall(b"{\"verb\": \"%s\", \"id\": %s}\n" % (v.encode(), sys.argv[2].encode()))
    print(f.readline().decode(), end="")
s.sendall(b"{\"verb\": \"priority\", \"id\": %s, \"priority\": -1}\n" % sys.argv[2].encode())
print(f.readline().decode(), end="")' "$SOCK" "$rootjob")
[ "$(grep -c "permission denied: task $rootjob belongs to root" <<<"$out")" = 5 ] \
    || fail "raw refusals: $out"
grep -q "hunter2\|sleep 30" <<<"$out" && fail "a refusal leaks root's task: $out"
"$CARMA" show --json "$rootjob" | grep -q hunter2 && fail "show leaks the task's environment"
"$CARMA" show --json "$rootjob" |
    jq -e '.state != "cancelled" and .held == false and .priority == 0' >/dev/null ||
    fail "root's task was changed: $("$CARMA" show --json "$rootjob")"

# nobody's own task runs as nobody, in nobody's directory; the message cannot claim otherwise.
mkdir "$tmp/work" && chown 65534:65534 "$tmp/work"
id=$(cd "$tmp/work" && as_nobody "$CARMA" submit --json -- sh -c 'id -u; id -g; pwd' | jq .id) \
    || fail "nobody submit"
done_() { [ "$("$CARMA" show --json "$id" | jq -r .state)" = done ]; }
wait_until 10 done_ || fail "nobody's task did not finish"
[ "$("$CARMA" show --json "$id" | jq -r .user)" = nobody ] || fail "owner should be nobody"
out=$(as_nobody "$CARMA" logs "$id") || fail "nobody reads own logs"
[ "$out" = "$(printf '65534\n65534\n%s' "$tmp/work")" ] || fail "task ran as/where: '$out'"
"$CARMA" logs "$id" >/dev/null || fail "root reads anyone's logs"
# The task's group is the user's primary one from the user database, not the group the
# connecting process happened to run with (here root's, as a setgid program would lend one).
gid0=$(cd "$tmp/work" && setpriv --reuid=65534 --regid=0 --clear-groups "$CARMA" submit -- id -g) \
    || fail "nobody submit with gid 0"
wait_until 10 task_is "$gid0" done || fail "task $gid0 did not finish"
[ "$("$CARMA" logs "$gid0")" = "$(id -g nobody)" ] || fail "task $gid0 ran with gid $("$CARMA" logs "$gid0"), not nobody's $(id -g nobody)"
# A user's own cancel works; root may cancel anything.
id2=$(cd "$tmp/work" && as_nobody "$CARMA" submit -- sleep 30) || fail "nobody submit 2"
as_nobody "$CARMA" cancel "$id2" >/dev/null || fail "nobody cancels own task"
"$CARMA" cancel "$rootjob" >/dev/null || fail "root cancels own task"
ended() { "$CARMA" queue --all --json | jq -e "all(.[]; .state != \"running\" and .state != \"queued\")"; }
wait_until 10 ended || fail "cancelled tasks did not end"
[ "$("$CARMA" show --json "$rootjob" | jq -r .state)" = cancelled ] || fail "root's task cancelled"

# The daemon and a supervisor killed: the task, run as nobody, does not outlive its supervisor
# (the parent-death signal survives the switch of user), and what it started in its process
# group is ended by the next daemon.
id3=$(cd "$tmp/work" && as_nobody "$CARMA" submit -- sleep 300) || fail "nobody submit 3"
id4=$(cd "$tmp/work" && as_nobody "$CARMA" submit -- sh -c 'sleep 300; true') || fail "submit 4"
started() { [ -s "$STATE/attempts/$id3.1/started" ] && [ -s "$STATE/attempts/$id4.1/started" ]; }
wait_until 10 started || fail "tasks $id3 and $id4 did not start"
pid3=$(cat "$STATE/attempts/$id3.1/started") pid4=$(cat "$STATE/attempts/$id4.1/started")
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
kill -KILL "$(cat "$STATE/attempts/$id3.1/lock")" "$(cat "$STATE/attempts/$id4.1/lock")"
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
wait_until 5 gone "$pid3" || fail "nobody's task $id3 outlived its supervisor"
wait_until 5 gone "$pid4" || fail "nobody's task $id4 (its shell) outlived its supervisor"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
wait_until 5 sh -c "! pgrep -g $pid4" || fail "task $id4's process group outlived the restart"
kill -KILL "$pid3" 2>/dev/null; pkill -KILL -g "$pid4" 2>/dev/null
stop_daemon

# A daemon not running as root serves only its own user, on a socket only it can open.
mkdir "$tmp/nb" && chown 65534:65534 "$tmp/nb"
NBSOCK=$tmp/nb/s
setpriv --reuid=65534 --regid=65534 --clear-groups "$CARMA" daemon --socket "$NBSOCK" --state "$tmp/nb/state" --gpu-backend sim \
    --config "$tmp/carma.conf" >/dev/null 2>>"$tmp/daemon.log" &
DAEMON_PID=$!
wait_until 10 as_nobody "$CARMA" queue --socket "$NBSOCK" || fail "nobody's daemon did not start"
[ "$(stat -c %a "$NBSOCK")" = 600 ] || fail "a user daemon's socket should be 0600"
# root's client will not talk to it (below); the daemon refuses root too, as a raw client sees
out=$("$CARMA" submit --socket "$NBSOCK" -- true 2>&1) && fail "root's client used nobody's daemon"
grep -q "served by uid 65534, neither root nor you" <<<"$out" || fail "client refusal: $out"
out=$(python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"{\"verb\": \"queue\"}\n"); print(s.recv(4096).decode())' "$NBSOCK")
grep -q "serves only that user" <<<"$out" || fail "refusal message: $out"
as_nobody "$CARMA" submit --socket "$NBSOCK" -- true >/dev/null || fail "own user refused"
stop_daemon

# A client talks only to a daemon of root's or its own: another user may take the name of a
# user's own socket in /tmp first and would read the task's environment. Nothing is sent.
mkdir -m 1777 "$tmp/sticky"
as_nobody /usr/bin/python3 -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); s.settimeout(8)
open(sys.argv[3], "w").close()
with open(sys.argv[2], "wb") as f:
    while True:
        try: c, _ = s.accept()
        except OSError: break
        c.settimeout(1)
        try: f.write(c.recv(65536)); f.flush()
        except OSError: pass' "$tmp/sticky/carma.sock" "$tmp/sticky/stolen" "$tmp/sticky/ready" &
squat=$!
wait_until 5 test -e "$tmp/sticky/ready" || fail "the squatter's socket"
out=$(SECRET=hunter2 "$CARMA" submit --socket "$tmp/sticky/carma.sock" -- true 2>&1) \
    && fail "submitted to another user's socket"
grep -q "served by uid 65534, neither root nor you" <<<"$out" || fail "squat refusal: $out"
sleep 0.3
[ ! -s "$tmp/sticky/stolen" ] || fail "the client sent to another user's socket: $(cat "$tmp/sticky/stolen")"
# ... and a daemon will not serve a path another user holds
out=$(timeout 10 "$CARMA" daemon --socket "$tmp/sticky/carma.sock" --state "$tmp/st2" --gpu-backend sim \
    --config "$tmp/carma.conf" 2>&1) && fail "a daemon started on another user's socket path"
grep -q "belongs to uid 65534" <<<"$out" || fail "daemon refusal: $out"
kill "$squat" 2>/dev/null; wait "$squat" 2>/dev/null

echo "$fails failure(s)"
[ $fails -eq 0 ]
