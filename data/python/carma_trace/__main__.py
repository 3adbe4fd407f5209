"""python3 -m carma_trace --iterations K (--out FILE | --out-fd N) -- COMMAND...: trace
COMMAND (a training script, optionally after "python3", or "-m MODULE") until its K-th
optimizer step; with --files-fd N, the files it read besides Python's own (carma_trace.files)
go to descriptor N once the trace is complete. Exit
status: 0 trace complete, 2 usage, 3 an operation the tracer cannot follow, 4 the script
failed or made no step; the reason goes to stderr as one line."""
import argparse
import os
import sys


def main():
    ap = argparse.ArgumentParser(prog="carma_trace")
    ap.add_argument("--iterations", type=int, default=3)
    out = ap.add_mutually_exclusive_group(required=True)
    out.add_argument("--out", help="trace file to write")
    out.add_argument("--out-fd", type=int, help="an open descriptor to write the trace to "
                     "(carma passes one: reopening /dev/fd/N would need rights on its file)")
    ap.add_argument("--files-fd", type=int, help="an open descriptor to write the files the "
                    "script read to (carma's cache checks them)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if a.iterations < 1 or not cmd:
        print("carma_trace: need --iterations >= 1 and a command", file=sys.stderr)
        return 2
    # carma's descriptors are the tracer's, not for the programs the script runs (os.system,
    # subprocess with close_fds=False): one would hold the trace file open, or write to it
    for fd in (a.out_fd, a.files_fd):
        if fd is not None:
            try:
                os.set_inheritable(fd, False)
            except OSError as e:
                print("carma_trace: descriptor %d: %s" % (fd, e.strerror), file=sys.stderr)
                return 2
    from .run import main as run_main   # imports torch: after the usage checks
    with (open(a.out, "w") if a.out else os.fdopen(a.out_fd, "w")) as out:
        rc, msg = run_main(cmd, out, a.iterations, a.files_fd)
    if msg:
        print("carma_trace: " + msg, file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
