#!/usr/bin/env bash
# A client that pipelines requests is served in full without holding the daemon's memory:
# more complete requests than one turn of the loop handles (512) arriving in one write are all
# answered without waiting for more input; a client that shuts its side down after its
# requests gets their replies; a client that sends requests without reading the
# replies finds its writes blocked once about 1 MiB of replies waits for it (the daemon stops
# reading it), instead of the daemon buffering 64 MiB and dropping it, and it gets every reply
# once it reads them. With a short conn_idle_timeout_s, a client that stops reading is dropped
# once none of its replies went out for that long, but one reading slowly and steadily is
# not, nor are `carma wait` and `carma logs --follow`, which wait longer than that (they ask
# again on new connections).
set -u
CARMA=$1
if ! command -v python3 >/dev/null; then
    echo "SKIP: needs python3 (to talk to the socket)"
    exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.5

# 1000 empty lines and a ping in one write: the ping is the 1001st line, two turns later.
out=$(python3 - "$SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
s.sendall(b"\n" * 1000 + b'{"verb": "ping"}\n')
try:
    print(s.recv(4096).decode().strip())
except socket.timeout:
    print("no reply within 5 s")
PY
)
grep -q '"version"' <<<"$out" || fail "the ping after 1000 lines in one write: $out"

# Requests, then the client shuts its side down (as `... | socat - UNIX:...` does): it still
# gets every reply. The daemon is stopped meanwhile, so that it reads the requests and the
# end of input in one go.
out=$(python3 - "$SOCK" "$DAEMON_PID" <<'PY'
import os, signal, socket, sys
pid = int(sys.argv[2])
s = socket.socket(socket.AF_UNIX)
os.kill(pid, signal.SIGSTOP)
try:
    s.connect(sys.argv[1])
    s.sendall(b'{"verb": "ping"}\n' * 3)
    s.shutdown(socket.SHUT_WR)
finally:
    os.kill(pid, signal.SIGCONT)
s.settimeout(5)
buf = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
except socket.timeout:
    pass
print(buf.count(b"\n"))
PY
)
[ "$out" = 3 ] || fail "3 requests then a shutdown of the client's side: $out replies"

# Requests without reading for 3 s: the daemon's peak memory grows by the backlog (1 MiB of
# replies, and what the socket buffers hold), not by up to 64 MiB, and every reply comes.
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
before=$(hwm)
python3 - "$SOCK" "$DAEMON_PID" >"$tmp/flood.out" <<'PY'
import socket, sys, time
req = b'{"verb": "gpus"}\n'
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.setblocking(False)
batch, sent, t0 = req * 1000, 0, time.time()
while time.time() - t0 < 3:
    try:
        sent += s.send(batch[sent % len(batch):])
    except BlockingIOError:
        time.sleep(0.01)
    except OSError as e:
        print(f"send failed after {sent // len(req)} requests: {e}")
        sys.exit(0)
hwm = [l.split()[1] for l in open(f"/proc/{sys.argv[2]}/status") if l.startswith("VmHWM:")][0]
want, got, buf = sent // len(req), 0, b""
s.setblocking(True)
s.settimeout(10)
try:
    while got < want:
        data = s.recv(1 << 20)
        if not data:
            break
        got += data.count(b"\n")
except OSError as e:
    print(f"recv: {e}")
print(f"sent={want} replies={got} hwm_kb={hwm}")
PY
read -r sent replies peak < <(sed -nE 's/^sent=([0-9]+) replies=([0-9]+) hwm_kb=([0-9]+)$/\1 \2 \3/p' "$tmp/flood.out")
if [ -z "${sent:-}" ]; then
    fail "a client not reading its replies: $(cat "$tmp/flood.out")"
else
    [ "$sent" -gt 1000 ] && [ "$replies" -ge "$sent" ] \
        || fail "every request should be answered: $(cat "$tmp/flood.out")"
    # Its writes blocked: about 16,000 requests of 17 bytes get in (socket buffers, and the
    # 1 MiB of replies); without the bound the daemon read on until 64 MiB of replies
    # (some 190,000) and dropped the client.
    [ "$sent" -lt 60000 ] || fail "the daemon read $sent requests from a client not reading"
    # AddressSanitizer's quarantine keeps freed memory: the peak says nothing under it.
    if ldd "$CARMA" 2>/dev/null | grep -q libasan; then
        echo "note: ASan build: the daemon's peak memory is not checked"
    else
        [ $((peak - before)) -lt 16384 ] \
            || fail "the daemon's peak memory grew by $(((peak - before) / 1024)) MiB for one client not reading"
    fi
fi
"$CARMA" queue >/dev/null || fail "the daemon should still serve others"
stop_daemon

# conn_idle_timeout_s=2: a client that asks for some 1.1 MiB of replies (3000 gpus) at once
# and takes 32 KiB of them every quarter second (some 9 s in all) gets every one: the daemon
# drops a connection only when no reply of its went out for that long. carma wait and
# logs --follow on a task running 5 s end with it.
start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.5 --set conn_idle_timeout_s=2
id=$("$CARMA" submit --mem 1G -- "$FAKEJOB" --mem 1G --seconds 5 --stdout LINE) || fail "submit"
timeout 30 "$CARMA" logs --follow "$id" >"$tmp/follow.out" 2>"$tmp/follow.err" &
follower=$!
timeout 30 "$CARMA" wait "$id" >"$tmp/wait.out" 2>&1 &
waiter=$!
out=$(python3 - "$SOCK" <<'PY'
import socket, sys, time
n = 3000
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"verb": "gpus"}\n' * n)
s.settimeout(10)
got, t0 = 0, time.monotonic()
try:
    while got < n:
        data = s.recv(32768)
        if not data:
            break
        got += data.count(b"\n")
        time.sleep(0.25)
except OSError as e:
    print(f"recv: {e}")
print(f"replies={got} of {n} in {time.monotonic() - t0:.0f} s")
PY
)
echo "a slow reader: $out"
grep -q "replies=3000 of 3000" <<<"$out" || fail "a client reading slowly: $out ($(grep dropped "$tmp/daemon.log"))"
wait "$waiter" || fail "carma wait exited $? (task $(task_state "$id")): $(cat "$tmp/wait.out")"
wait "$follower" || fail "logs --follow exited $?: $(cat "$tmp/follow.err")"
[ "$(cat "$tmp/follow.out")" = LINE ] || fail "logs --follow: $(cat "$tmp/follow.out")"
grep -q "dropped a connection" "$tmp/daemon.log" && fail "a connection was dropped: $(grep dropped "$tmp/daemon.log")"
# The same client stopping for 6 s instead: it is dropped (said in the log) and gets only what
# the socket held when it stopped, not its 3000 replies (before: held for as long as it liked).
out=$(python3 - "$SOCK" <<'PY'
import socket, sys, time
n = 3000
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"verb": "gpus"}\n' * n)
time.sleep(6)
s.settimeout(10)
got = 0
try:
    while got < n:
        data = s.recv(1 << 20)
        if not data:
            break
        got += data.count(b"\n")
except OSError as e:
    print(f"recv: {e}")
print(f"replies={got} of {n}")
PY
)
grep -q "replies=3000 of 3000" <<<"$out" && fail "a client not reading for 6 s was kept: $out"
grep -q "dropped a connection of uid $(id -u) .*bytes of replies unread" "$tmp/daemon.log" \
    || fail "the drop of a client not reading should be logged: $(tail -3 "$tmp/daemon.log")"
"$CARMA" queue >/dev/null || fail "the daemon should still serve others"
stop_daemon

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
