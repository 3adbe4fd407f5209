"""carma_trace.files — the files a traced script read besides the Python installation: its own
modules and what it opened (configs, data). carma's cache of estimates keys on the script's
bytes alone; a changed model.py or config.yaml beside it changes the memory too, so each such
file's size and modification time go with a cached estimate, and a change means a new trace.

Written as lines "SIZE MTIME_NS PATH" and "end"; "-" when the set cannot be given (a path with
a line break, more than MAX_FILES files): carma then does not cache the estimate."""
import os
import stat
import sys

MAX_FILES = 4096
_opened = set()
_fd = None      # where finish() writes, if anywhere
_pid = None     # the traced process: a child it forked shares _fd and must not write


def _audit(event, args):
    # "open" is audited for every open(), io.open_code (imports) and os.open
    if event == "open" and args and isinstance(args[0], (str, bytes)):
        mode, flags = args[1], args[2]
        if mode is None and isinstance(flags, int):
            reading = flags & (os.O_WRONLY | os.O_RDWR) == 0
        else:
            reading = mode is None or "r" in mode
        if reading:
            _opened.add(os.fsdecode(args[0]))


def install(fd):
    """Follows what the script opens; finish() writes the files to descriptor fd (None: not)."""
    global _fd, _pid
    _fd, _pid = fd, os.getpid()
    sys.addaudithook(_audit)


def _installation():
    """Where the Python that runs the tracer lives (its standard library and the system's
    packages, torch among them): not the job's. The user's own packages (~/.local, a
    virtual environment, /usr/local) are followed: an upgrade there can change the model."""
    dirs = {os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.__file__)}
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        dirs.add(os.path.join(p, "lib"))
    return tuple(os.path.join(os.path.abspath(d), "") for d in dirs if d) + (
        "/proc/", "/sys/", "/dev/")


def finish():
    """Writes the files read (modules loaded, files opened) to the descriptor, once."""
    global _fd
    if _fd is None or os.getpid() != _pid:
        return
    with os.fdopen(_fd, "w") as out:
        _fd = None
        out.writelines(_lines())


def _lines():
    skip = _installation()
    names = set(_opened)
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if isinstance(f, str):
            names.add(f)
    lines = set()
    for name in names:
        path = os.path.abspath(name)
        if path.startswith(skip):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if "\n" in path or "\r" in path or len(lines) >= MAX_FILES:
            return ["-\n"]
        lines.add("%d %d %s\n" % (st.st_size, st.st_mtime_ns, path))
    return sorted(lines) + ["end\n"]
