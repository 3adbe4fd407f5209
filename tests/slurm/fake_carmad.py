#!/usr/bin/env python3
"""fake_carmad.py MODE SOCKET — a misbehaving carma daemon for carma_spank.so's node side
(test_slurm_cluster.sh): it serves SOCKET, reads each request line and answers the `gpus`
verb as MODE says:
  dribble  the start of a reply, then one byte every 0.2 s for 40 s (a daemon that is slow
           but never silent for a whole timeout_ms);
  garbage  a well-formed reply whose memory figures overflow a subtraction (total INT64_MAX,
           used -1) and whose pipe directory is not a path;
  hostile  a well-formed reply whose GPU UUIDs and pipe directory hold terminal escapes, a
           newline that starts a forged log line and printf conversions;
  refuse   an error reply whose text holds the same.
One connection at a time; runs until killed."""
import json
import os
import socket
import sys
import time

mode, path = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(8)
gpus = [{"index": m, "minor": m, "uuid": "GPU-odd-m%d" % m, "mem_total_mib": 2**63 - 1,
         "mem_used_mib": -1} for m in range(4)]
# ESC [31m, a newline and a line that passes for slurmd's, printf conversions, a C1 CSI byte
FORGED = "\x1b[31mred\n[2000-01-01T00:00:00.000] forged: %n%s%s \u009b2J"
if mode == "hostile":
    gpus = [{"index": m, "minor": m, "uuid": "GPU-m%d-" % m + FORGED, "mem_total_mib": 40960,
             "mem_used_mib": 0} for m in range(4)]
while True:
    conn, _ = srv.accept()
    with conn:
        conn.recv(4096)
        try:
            if mode == "dribble":
                conn.sendall(b'{"ok":true,"gpus":[]')
                end = time.monotonic() + 40
                while time.monotonic() < end:
                    conn.sendall(b" ")
                    time.sleep(0.2)
                conn.sendall(b"}\n")
            elif mode == "hostile":
                reply = {"ok": True, "gpus": gpus, "mps_pipe_dir": "/pipe" + FORGED}
                conn.sendall(json.dumps(reply).encode() + b"\n")
            elif mode == "refuse":
                conn.sendall(json.dumps({"ok": False, "error": FORGED}).encode() + b"\n")
            else:
                reply = {"ok": True, "gpus": gpus, "mps_pipe_dir": "pipe\nrelative"}
                conn.sendall(json.dumps(reply).encode() + b"\n")
        except OSError:
            pass  # the plugin gave up and hung up
