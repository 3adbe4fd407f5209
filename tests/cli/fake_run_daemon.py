#!/usr/bin/env python3
"""fake_run_daemon.py SOCKET MODE: a stand-in for carma's daemon answering the requests
`carma run` makes (submit, release, show, cancel), for test_run_cli.sh: it puts carma run in
states a real daemon reaches only by chance. A released task is running. Each request's verb
is printed on stdout as it comes. MODE:
  ended  a task has ended `done` by the time carma run cancels it: the cancel is refused, as
         the daemon refuses one of a task that has ended ("task N is already done")
  slow   a cancel is answered after a second, and the task never ends
Serves until killed."""
import json
import socket
import sys
import threading
import time

path, mode = sys.argv[1], sys.argv[2]
states = {}
lock = threading.Lock()


def answer(req):
    verb, tid = req.get("verb"), req.get("id")
    print(verb, flush=True)
    with lock:
        if verb == "submit":
            tid = len(states) + 1
            states[tid] = "queued"
            return {"ok": True, "id": tid}
        if tid not in states:
            return {"ok": False, "error": f"no task {tid}"}
        if verb == "release":
            states[tid] = "running"
            return {"ok": True}
        if verb == "show":
            return {"ok": True, "task": {"id": tid, "state": states[tid], "attempts": 1}}
        if verb == "cancel" and mode == "ended":
            states[tid] = "done"
            return {"ok": False, "error": f"task {tid} is already done"}
    if verb == "cancel":
        time.sleep(1)
        return {"ok": True}
    return {"ok": False, "error": f"unknown verb {verb}"}


def serve(conn):
    with conn:
        for line in conn.makefile("rb"):
            conn.sendall(json.dumps(answer(json.loads(line))).encode() + b"\n")


srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(64)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
