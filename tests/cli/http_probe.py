#!/usr/bin/env python3
"""http_probe.py PORT REQUEST: sends REQUEST (its \\r and \\n escapes read as such) to
127.0.0.1:PORT over TCP and prints the whole reply, headers and body, for the metrics tests
(test_daemon_metrics.sh, test_daemon_prometheus.sh); waits at most 10 s for the daemon to
close the connection. `http_probe.py PORT /metrics` sends a plain GET of that path.
http_probe.py listening PID: prints the TCP ports process PID listens on, one a line (from
/proc: its socket descriptors matched against /proc/net/tcp and tcp6 in state LISTEN)."""
import os
import socket
import sys


def listening(pid):
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # 0A: LISTEN
                print(int(f[1].rsplit(":", 1)[1], 16))


if sys.argv[1] == "listening":
    listening(sys.argv[2])
    sys.exit(0)
port, req = int(sys.argv[1]), sys.argv[2]
if req.startswith("/"):
    req = f"GET {req} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
else:
    req = req.encode().decode("unicode_escape")
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(req.encode("latin-1"))
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except OSError as e:  # a reset after the reply still shows the reply
    sys.stderr.write(f"http_probe: {e}\n")
sys.stdout.write(out.decode("latin-1"))
