#!/usr/bin/env python3
"""hold_conns.py SOCKET N [SECONDS] [--unread]: opens N connections to carma's daemon socket
and holds them idle, for the tests of the daemon's connection limits
(test_daemon_conn_limits.sh, test_daemon_fd_exhaustion.sh). A second after opening them it
prints one line, "open=A closed=B reason=...": how many the daemon still holds and how many it
closed, with the first reason it gave; then it holds the open ones until killed or SECONDS
pass.

--unread: the open ones are not idle but stop reading: each sends requests (gpus) without
reading a reply until its writes have blocked for a second (the daemon stopped reading it,
its unread replies past the backlog), then it prints "unread=K requests=R": how many got there
and the requests sent over all of them, and holds them, never reading."""
import resource
import socket
import sys
import time

args = [a for a in sys.argv[1:] if a != "--unread"]
unread = len(args) < len(sys.argv) - 1
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # N may exceed a soft 1024
path, n = args[0], int(args[1])
hold = float(args[2]) if len(args) > 2 else 600.0
conns = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        print(f"connect failed after {len(conns)}: {e}", file=sys.stderr)
        s.close()
        break
    conns.append(s)
time.sleep(1)
closed, reason, held = 0, "", []
for s in conns:
    s.setblocking(False)
    try:
        data = s.recv(4096)
    except BlockingIOError:
        held.append(s)
        continue
    except OSError:
        data = b""
    closed += 1
    if data and not reason:
        reason = data.decode(errors="replace").strip()
print(f"open={len(conns) - closed} closed={closed} reason={reason}", flush=True)
if unread:
    batch = b'{"verb": "gpus"}\n' * 1000
    sent = [0] * len(held)
    last = [time.monotonic()] * len(held)
    full = [False] * len(held)
    deadline = time.monotonic() + 60
    while not all(full) and time.monotonic() < deadline:
        moved = False
        for i, s in enumerate(held):
            if full[i]:
                continue
            try:
                sent[i] += s.send(batch[sent[i] % len(batch):])
                last[i], moved = time.monotonic(), True
            except BlockingIOError:
                full[i] = time.monotonic() - last[i] >= 1.0
            except OSError:
                full[i] = True  # dropped meanwhile: not counted
                sent[i] = -1
        if not moved:
            time.sleep(0.01)
    got = sum(1 for f, b in zip(full, sent) if f and b >= 0)
    print(f"unread={got} requests={sum(b for b in sent if b > 0) // 17}", flush=True)
time.sleep(hold)
