#!/usr/bin/env python3
"""fake_run_daemon.py SOCKET MODE: a stand-in for carma's daemon answering the requests
`carma run` makes (ping, submit, release, show, cancel), for test_run_cancel.sh: it puts carma
run in states a real daemon reaches only by chance. A task submitted in a batch ("tasks"), or
released, is running. Each request's verb is printed on stdout as it comes ("submit tasks"
for a batch, "submit held" for a held task). MODE:
  ended  a task has ended `done` by the time carma run cancels it: the cancel is refused, as
         the daemon refuses one of a task that has ended ("task N is already done")
  slow   a cancel is answered after a second, and the task never ends
  old    a daemon of protocol version 1, which knows no batch: it refuses one for its missing
         "task"; its tasks end done once released
  hung   after the first `show` it answers nothing more, as a stopped (SIGSTOP) daemon
  deaf   a request longer than 4 KiB is never read ("unread" printed), as by a daemon that
         stopped while it was sent: the sender's socket buffer fills
Serves until killed."""
import json
import socket
import sys
import threading
import time

path, mode = sys.argv[1], sys.argv[2]
states = {}
shows = 0
lock = threading.Lock()


def answer(req):
    verb, tid = req.get("verb"), req.get("id")
    batch = "tasks" in req
    held = req.get("task", {}).get("hold")
    print(verb + (" tasks" if batch else " held" if held else ""), flush=True)
    global shows
    if mode == "hung" and shows >= 1:
        while True:  # every request from now on waits for ever
            time.sleep(60)
    shows += verb == "show"
    if verb == "ping":
        return {"ok": True, "version": 1 if mode == "old" else 2, "uid": 0}
    with lock:
        if verb == "submit" and batch and mode == "old":
            return {"ok": False, "error": "invalid submission: task: expected an object"}
        if verb == "submit" and batch:
            ids = list(range(len(states) + 1, len(states) + 1 + len(req["tasks"])))
            states.update({i: "running" for i in ids})
            return {"ok": True, "ids": ids}
        if verb == "submit":
            tid = len(states) + 1
            states[tid] = "queued"
            return {"ok": True, "id": tid}
        if tid not in states:
            return {"ok": False, "error": f"no task {tid}"}
        if verb == "release":
            states[tid] = "done" if mode == "old" else "running"
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


def long_request(conn):
    """Whether the request waiting on conn is longer than 4 KiB (peeked, not read)."""
    while True:
        head = conn.recv(4096, socket.MSG_PEEK)
        if not head or b"\n" in head:
            return False
        if len(head) >= 4096:
            return True
        time.sleep(0.01)


def serve(conn):
    if mode == "deaf" and long_request(conn):
        print("unread", flush=True)
        time.sleep(3600)
    with conn:
        for line in conn.makefile("rb"):
            conn.sendall(json.dumps(answer(json.loads(line))).encode() + b"\n")


srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(64)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
