#!/usr/bin/env python3
"""hold_conns.py SOCKET N [SECONDS]: opens N connections to carma's daemon socket and holds
them idle, for the tests of the daemon's connection limits (test_daemon_conn_limits.sh,
test_daemon_fd_exhaustion.sh). A second after opening them it prints one line,
"open=A closed=B reason=...": how many the daemon still holds and how many it closed, with
the first reason it gave; then it holds the open ones until killed or SECONDS pass."""
import resource
import socket
import sys
import time

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # N may exceed a soft 1024
path, n = sys.argv[1], int(sys.argv[2])
hold = float(sys.argv[3]) if len(sys.argv) > 3 else 600.0
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
closed, reason = 0, ""
for s in conns:
    s.setblocking(False)
    try:
        data = s.recv(4096)
    except BlockingIOError:
        continue
    except OSError:
        data = b""
    closed += 1
    if data and not reason:
        reason = data.decode(errors="replace").strip()
print(f"open={len(conns) - closed} closed={closed} reason={reason}", flush=True)
time.sleep(hold)
