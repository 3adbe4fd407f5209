"""carma_trace.run — runs one training script under the tracer: makes torch believe a GPU is
there, sends "cuda" to "meta", counts optimizer steps and stops after the K-th, and turns
what cannot be traced into one clear message naming the operation."""
import contextlib
import os
import runpy
import shutil
import stat
import sys
import threading
import time
import types
import zipfile

import torch

from . import files, optim2x, standins
from .tracer import StopTrace, Trace, Unsupported, _Devices, _Dispatch


class Run:
    def __init__(self, out, iterations):
        self.trace = Trace(out)
        self.iterations = iterations
        self.steps = 0
        self.optimizers = 0      # how many distinct optimizers have stepped
        self.pid = os.getpid()   # the traced process; a fork's child is not it

    # Optimizers counted at most: a script that makes a new one at every step would
    # otherwise never reach K steps of each (the trace ran to the timeout).
    MAX_OPTIMIZERS = 4

    def step_done(self, opt):
        """K steps of each optimizer: a GAN's two take turns, and stopped at K steps in all
        the trace would miss the later one's phase with its state allocated (the peak)."""
        if not getattr(opt, "_carma_stepped", False):
            opt._carma_stepped = True
            self.optimizers += 1
        self.steps += 1
        self.trace.emit("s %d" % self.steps)
        if self.steps >= self.steps_wanted():
            raise StopTrace()

    def steps_wanted(self):
        return self.iterations * min(max(self.optimizers, 1), self.MAX_OPTIMIZERS)


def _refusal(what):
    """The Unsupported for what, remembered by the run being traced (see Trace.refuse)."""
    return _current.trace.refuse(what) if _current is not None else Unsupported(what)


def _unsupported(what):
    def refuse(*args, **kwargs):
        raise _refusal(what)
    return refuse


_current = None      # the Run being traced; the patches below report to it
_installed = False


def _install():
    """Patches torch once per process: a GPU that is there, 2.x optimizer behaviour, step
    counting and the backward-pass flag."""
    global _installed
    if _installed:
        return
    _installed = True
    optim2x.install()
    standins.install_meta_kernels()
    _pretend_cuda()
    _follow_process_ends()


def _follow_process_ends():
    """A child forked by the script (os.fork, multiprocessing, DataLoader workers) shares the
    trace's file: it writes nothing (its storages are its own; on a GPU a forked child cannot
    use CUDA anyway), and the parent's buffer is flushed first so the child holds none to
    write again. os._exit in the traced process ends the trace as sys.exit would: without
    it the trace stopped mid-way and the error named only a temporary file."""
    def before_fork():
        if _current is not None and not _current.trace.closed:
            _current.trace.out.flush()

    def in_child():
        if _current is not None:
            _current.trace.closed = True
    os.register_at_fork(before=before_fork, after_in_child=in_child)

    real_exit = os._exit

    def _exit(code):
        run = _current
        if run is not None and os.getpid() == run.pid:
            rc, msg = _outcome(run, code, None)
            run.trace.close(run.steps if rc == 0 else None)
            try:
                run.trace.out.flush()
                if rc == 0:
                    files.finish()
                if msg:
                    print("carma_trace: " + msg, file=sys.stderr, flush=True)
            finally:
                real_exit(rc)
        real_exit(code)
    os._exit = _exit


# What torch.cuda answers about the GPU itself: a trace has no GPU, and a made-up answer could
# steer the script (bf16 or not, a batch size from the memory free): refused, by name.
_GPU_FACTS = ("get_device_properties", "get_device_capability", "is_bf16_supported",
              "can_device_access_peer", "get_arch_list", "get_gencode_flags", "utilization")
# The allocator's figures that scripts size batches or pick paths by (free memory, the full
# statistics): refused too, rather than a made-up answer that would be believed.
_MEMORY_FIGURES = ("memory_stats", "memory_stats_as_nested_dict", "memory_summary",
                   "memory_snapshot", "mem_get_info", "list_gpu_processes", "memory_usage")
# What training code mostly only logs (the device's name, the allocated and reserved bytes):
# answered, as `.item()` is, with a stand-in (a name, 0) that the estimate never uses. A
# script that sizes its work by these would trace with the stand-in: documented.
_LOGGED = {"get_device_name": "carma-trace (meta)", "memory_allocated": 0,
           "max_memory_allocated": 0, "memory_reserved": 0, "max_memory_reserved": 0,
           "memory_cached": 0, "max_memory_cached": 0}
# Calls that change nothing a trace records (waits, cache and peak-counter resets, seeds, the
# one device): no-ops.
_NO_OPS = ("synchronize", "empty_cache", "ipc_collect", "set_device", "init", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached",
           "reset_accumulated_memory_stats", "set_per_process_memory_fraction",
           "set_sync_debug_mode")


class _Event:
    """torch.cuda.Event, for timing: record, wait and synchronize do nothing; elapsed_time
    gives the CPU time between the two records (the trace's time, never the GPU's)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._t = None

    def record(self, stream=None):
        self._t = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        if self._t is None or end_event._t is None:
            return 0.0
        return (end_event._t - self._t) * 1000.0

    def ipc_handle(self):
        raise _refusal("an interprocess CUDA event (torch.cuda.Event.ipc_handle)")


class _DefaultStream:
    """The default stream, the one stream a trace follows: waiting on it does nothing."""

    def synchronize(self):
        pass

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event if event is not None else _Event()
        event.record()
        return event

    def query(self):
        return True


class _SideStream:
    """torch.cuda.Stream: refused. The caching allocator keeps each stream's blocks apart,
    which the replay (one stream) does not model."""

    def __new__(cls, *args, **kwargs):
        raise _refusal("a side CUDA stream (torch.cuda.Stream): the trace follows the default "
                       "stream only")


def _stream_context(stream):
    if stream is None or isinstance(stream, _DefaultStream):
        return contextlib.nullcontext()
    raise _refusal("a side CUDA stream (torch.cuda.stream)")


_CUDA_DIR = os.path.dirname(torch.cuda.__file__) + os.sep


def _no_gpu():
    """Stands for torch.cuda._lazy_init, which every call needing a real GPU makes first (an
    AssertionError "Torch not compiled with CUDA enabled" otherwise): names the call."""
    f, name = sys._getframe(1), None
    while f is not None and f.f_code.co_filename.startswith(_CUDA_DIR):
        name, f = f.f_code.co_name, f.f_back
    where = " at %s:%d" % (os.path.basename(f.f_code.co_filename), f.f_lineno) if f else ""
    if threading.current_thread() is not threading.main_thread():
        # the tracer's modes hold for the thread it runs in: another thread reaches real CUDA
        raise _refusal("a CUDA call%s on a thread the script started: the tracer follows the "
                       "main thread only" % where)
    what = "calls torch.cuda.%s" % name if name else "makes a CUDA call" + where
    raise _refusal("the script %s, which needs a GPU (a CPU trace has none)" % what)


def _patch_cuda(name, value):
    for mod in (torch.cuda, torch.cuda.memory):
        if hasattr(mod, name):
            setattr(mod, name, value)


def _refuse_mixed_precision():
    """Mixed precision changes every dtype and adds casts; on meta, autocast does nothing (a
    meta tensor has no autocast dispatch key), so a float16 job would trace as float32: every
    CUDA autocast entry point is refused by name rather than print a float32 figure. Disabled
    ones (enabled=False, as torch.utils.checkpoint makes) and CPU autocast (it casts CPU
    tensors only, on a GPU as on the trace) run as they are."""
    base = torch.amp.autocast_mode.autocast
    base_init = base.__init__

    def autocast_init(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if enabled and device_type != "cpu":
            raise _refusal("mixed precision (torch.autocast, device_type %s)" % device_type)
        base_init(self, device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
    base.__init__ = autocast_init

    cuda_ac = torch.cuda.amp.autocast
    cuda_init = cuda_ac.__init__

    def cuda_autocast_init(self, enabled=True, dtype=torch.float16, cache_enabled=True):
        if enabled:
            raise _refusal("mixed precision (torch.cuda.amp.autocast)")
        cuda_init(self, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
    cuda_ac.__init__ = cuda_autocast_init

    scaler = torch.cuda.amp.GradScaler
    scaler_init = scaler.__init__

    def scaler_init_(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
        if enabled:
            raise _refusal("mixed precision (torch.cuda.amp.GradScaler)")
        scaler_init(self, init_scale, growth_factor, backoff_factor, growth_interval, enabled)
    scaler.__init__ = scaler_init_

    set_enabled = torch.set_autocast_enabled

    def set_autocast_enabled(enabled):
        if enabled:
            raise _refusal("mixed precision (torch.set_autocast_enabled)")
        set_enabled(enabled)
    torch.set_autocast_enabled = set_autocast_enabled


def _pretend_cuda():
    """What a script asks torch.cuda about a GPU it believes it has: one device is there;
    harmless calls do nothing; questions whose answer would be made up are refused by name."""
    c = torch.cuda
    c.is_available = lambda: True
    c.device_count = lambda: 1
    c.current_device = lambda: 0
    for name in _NO_OPS:
        _patch_cuda(name, lambda *a, **k: None)
    for name in _GPU_FACTS:
        _patch_cuda(name, _unsupported("the script asks torch.cuda.%s about the GPU, which a "
                                       "CPU trace has none of" % name))
    for name in _MEMORY_FIGURES:
        _patch_cuda(name, _unsupported("the script asks torch.cuda.%s for the GPU's memory use, "
                                       "which a CPU trace cannot give (the script could act on "
                                       "it)" % name))
    for name, answer in _LOGGED.items():
        _patch_cuda(name, lambda *a, _answer=answer, **k: _answer)
    c.Event = c.streams.Event = _Event
    c.Stream = c.streams.Stream = _SideStream
    default = _DefaultStream()
    c.current_stream = c.default_stream = lambda *a, **k: default
    c.stream = _stream_context
    lazy_init = c._lazy_init
    for name, mod in list(sys.modules.items()):
        if (name == "torch.cuda" or name.startswith("torch.cuda.")) and \
                getattr(mod, "_lazy_init", None) is lazy_init:
            mod._lazy_init = _no_gpu
    torch.Tensor.pin_memory = lambda self, *a, **k: self
    _refuse_mixed_precision()
    optim_init = torch.optim.Optimizer.__init__

    def init(self, *args, **kwargs):
        optim_init(self, *args, **kwargs)
        cls_step = type(self).step

        def counted(opt, *a, **k):
            r = cls_step(opt, *a, **k)
            if _current is not None:
                _current.step_done(opt)
            return r
        self.step = types.MethodType(counted, self)   # bound, as LR schedulers expect
    torch.optim.Optimizer.__init__ = init

    backward, grad = torch.autograd.backward, torch.autograd.grad

    def in_backward(fn):
        def wrapped(*a, **k):
            tr = _current.trace if _current is not None else None
            if tr is not None:
                tr.in_backward += 1
            try:
                return fn(*a, **k)
            finally:
                if tr is not None:
                    tr.in_backward -= 1
        return wrapped
    torch.autograd.backward = in_backward(backward)
    torch.autograd.grad = in_backward(grad)


_GIVE_SCRIPT = "give the Python script itself: carma estimate --run -- python3 SCRIPT ARGS"
# Programs that run a training script rather than being one (launchers, shells): named as such
# even where they are not installed.
_LAUNCHERS = {"bash", "sh", "dash", "zsh", "env", "torchrun", "accelerate", "deepspeed",
              "srun", "mpirun", "mpiexec", "horovodrun", "nohup", "time", "sudo"}


def _is_python(word):
    return os.path.basename(word).startswith("python")


def _command(argv):
    """(kind, target, argv for the script): drops a leading python interpreter word (and an
    `env` before it, as in `/usr/bin/env python3 SCRIPT`)."""
    if len(argv) > 1 and os.path.basename(argv[0]) == "env" and _is_python(argv[1]):
        argv = argv[1:]
    if argv and _is_python(argv[0]):
        argv = argv[1:]
    if not argv:
        raise Unsupported("no script given")
    if argv[0] == "-m" and len(argv) > 1:
        return "module", argv[1], argv[1:]
    if argv[0].startswith("-"):
        raise Unsupported("interpreter option %s (give the script, or -m MODULE)" % argv[0])
    return "path", argv[0], argv


def _not_python(path, why):
    return "%s is not a Python script (%s): the tracer runs Python scripts; %s" % (
        path, why, _GIVE_SCRIPT)


def _check_script(path):
    """None when path is a file the tracer can run as a Python script, else why not (one
    line). The tracer runs as the submitting user, so "cannot read" is theirs."""
    program = "%s is a program, not a Python script: the tracer runs Python scripts; %s" % (
        path, _GIVE_SCRIPT)
    if os.path.basename(path) in _LAUNCHERS:
        return program
    try:
        st = os.stat(path)
    except PermissionError:
        return "cannot read %s: permission denied" % path
    except OSError:
        return program if os.sep not in path and shutil.which(path) else \
            "no such script: %s" % path
    if not stat.S_ISREG(st.st_mode):
        return _not_python(path, "not a file")
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except PermissionError:
        return "cannot read %s: permission denied" % path
    except OSError as e:
        return "cannot read %s: %s" % (path, e.strerror)
    if head.startswith(b"#!"):
        line = head.split(b"\n", 1)[0]
        if b"python" not in line:
            return _not_python(path, "its first line runs %s" % line[2:].decode(
                errors="replace").strip())
    elif b"\0" in head and not path.endswith((".pyc", ".pyo")) and not zipfile.is_zipfile(path):
        return _not_python(path, "a binary file")
    elif path.endswith((".sh", ".bash")):
        return _not_python(path, "a shell script")
    return None


def main(argv, out, iterations, files_fd=None):
    """Traces the command; returns (exit code, message). 0: complete trace written, and the
    files the script read to files_fd (carma_trace.files) when given."""
    files.install(files_fd)
    try:
        kind, target, script_argv = _command(argv)
    except Unsupported as e:
        return 2, str(e)
    if kind == "path":
        why = _check_script(target)
        if why:
            return 2, why
    sys.argv = list(script_argv)
    if kind == "path":
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        return trace_function(lambda: runpy.run_path(target, run_name="__main__"), out,
                              iterations)
    return trace_function(lambda: runpy.run_module(target, run_name="__main__", alter_sys=True),
                          out, iterations)


def trace_function(fn, out, iterations):
    """Runs fn() under the tracer until the iterations-th optimizer step, writing the trace
    to the open file out; returns (exit code, message) as main() does."""
    global _current
    _install()
    run = _current = Run(out, iterations)
    rc, msg = 4, None
    try:
        rc, msg = _traced(run, fn)
    finally:
        run.trace.close(run.steps if rc == 0 else None)
        _current = None
    if rc == 0:
        files.finish()
    return rc, msg


def _exit_status(code):
    """The process status of sys.exit(code), and its message if it has one."""
    if code is None:
        return 0, None
    if isinstance(code, int):
        return code, None
    return 1, str(code).splitlines()[0] if str(code) else None


def _traced(run, fn):
    exit_code, failure = None, None
    try:
        with _Devices(), _Dispatch(run.trace):
            try:
                fn()
            except StopTrace:
                pass
    except Unsupported as e:
        run.trace.refuse(str(e))
    except SystemExit as e:
        exit_code = e.code
    except BaseException as e:   # the script's own failure, under the tracer
        op = run.trace.last_op
        where = " (last operation traced: %s)" % op if op else ""
        failure = "the script failed under the tracer: %s: %s%s" % (
            type(e).__name__, str(e).splitlines()[0] if str(e) else "", where)
    return _outcome(run, exit_code, failure)


def _outcome(run, exit_code, failure):
    """(exit code, message) of a run that ended: by exit_code (sys.exit's or os._exit's, None
    when it ran to its end or its K-th step), or with failure."""
    # A refusal wins even where the script caught it and went on: what it ran next may differ
    # from the job's (a float32 fallback for a bfloat16 one, a guessed batch size).
    if run.trace.refused is not None:
        return 3, "cannot trace: %s" % run.trace.refused
    if failure:
        return 4, failure
    status, said = _exit_status(exit_code)
    if status != 0:
        said = " (%s)" % said if said else ""
        if run.steps == 0:
            return 4, "the script exited with status %s%s before its first optimizer step" % (
                status, said)
        # Short of the K-th step, the trace may lack the steady step that makes the peak.
        return 4, "the script exited with status %s%s after %d optimizer step%s (of %d)" % (
            status, said, run.steps, "" if run.steps == 1 else "s", run.steps_wanted())
    if run.steps == 0:
        return 4, "the script made no optimizer step (nothing to estimate)"
    # Ended (or exited with 0) after 1 to K steps: the estimate covers the steps it made, and
    # says how many.
    return 0, None
