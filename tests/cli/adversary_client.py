"""adversary_client.py — raw protocol clients for test_daemon_adversary.sh (run as another user).

parked SOCKET N: a held task (the live dependency, id 1 on a fresh daemon), 63 tasks cancelled
at once (ended dependencies); a batch of 600 tasks each --after all 64, refused for its last
("batch refused SECONDS"); then N queued tasks each --after all 64, the live one last; then
prints the worst of a few pings ("worst ping SECONDS").
pipeline SOCKET N: N queue requests in one stream, the replies read only after a second;
prints "replies COUNT errors {ERROR: COUNT}".
"""
import json
import socket
import sys
import threading
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s


def parked(path, n):
    s = connect(path)
    f = s.makefile("rb")

    def rq(o):
        s.sendall((json.dumps(o) + "\n").encode())
        r = json.loads(f.readline())
        if not r["ok"]:
            sys.exit("refused: %s: %s" % (o["verb"], r["error"]))
        return r

    task = {"command": "true", "cwd": "/tmp", "hold": True}
    live = rq({"verb": "submit", "task": task})["id"]
    ended = rq({"verb": "submit", "array": list(range(63)), "task": task})["ids"]
    for i in ended:
        rq({"verb": "cancel", "id": i})
    task = {"command": "true", "cwd": "/tmp", "after": ended + [live]}
    # a batch of 600 such tasks (a line of 190 KB) refused for its last one: each dependency was
    # looked up with a whole task's read from the store, 38,400 of them before the refusal,
    # again and again
    batch = [task] * 599 + [dict(task, ngpus=99)]
    t = time.monotonic()
    s.sendall((json.dumps({"verb": "submit", "tasks": batch}) + "\n").encode())
    r = json.loads(f.readline())
    if r["ok"] or r.get("index") != 599:
        sys.exit("the batch: %s" % r)
    print("batch refused %.3f" % (time.monotonic() - t))
    made = 0
    while made < n:
        k = min(1000, n - made)
        rq({"verb": "submit", "array": list(range(k)), "task": task})
        made += k
    worst = 0.0
    for _ in range(6):
        t = time.monotonic()
        rq({"verb": "ping"})
        worst = max(worst, time.monotonic() - t)
        time.sleep(0.3)
    print("worst ping %.3f" % worst)


def pipeline(path, n):
    s = connect(path)
    req = b'{"verb":"queue"}\n'
    writer = threading.Thread(target=lambda: s.sendall(req * n), daemon=True)
    writer.start()
    time.sleep(1.0)  # the daemon reads a full buffer of them before any reply is taken
    s.settimeout(30)
    got, errors, buf = 0, {}, b""
    try:
        while got < n:
            d = s.recv(1 << 20)
            if not d:
                break
            buf += d
            *lines, buf = buf.split(b"\n")
            for line in lines:
                r = json.loads(line)
                got += 1
                if not r["ok"]:
                    errors[r["error"]] = errors.get(r["error"], 0) + 1
    except OSError as e:
        errors[str(e)] = 1
    print("replies %d errors %s" % (got, json.dumps(errors)))


if __name__ == "__main__":
    {"parked": parked, "pipeline": pipeline}[sys.argv[1]](sys.argv[2], int(sys.argv[3]))
