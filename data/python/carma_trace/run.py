"""carma_trace.run — runs one training script under the tracer: makes torch believe a GPU is
there, sends "cuda" to "meta", counts optimizer steps and stops after the K-th, and turns
what cannot be traced into one clear message naming the operation."""
import os
import runpy
import sys
import types

import torch

from . import optim2x, standins
from .tracer import StopTrace, Trace, Unsupported, _Devices, _Dispatch


class Run:
    def __init__(self, out, iterations):
        self.trace = Trace(out)
        self.iterations = iterations
        self.steps = 0

    def step_done(self):
        self.steps += 1
        self.trace.emit("s %d" % self.steps)
        if self.steps >= self.iterations:
            raise StopTrace()


def _unsupported(what):
    def refuse(*args, **kwargs):
        raise Unsupported(what)
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


def _pretend_cuda():
    """What a script asks torch.cuda about a GPU it believes it has."""
    c = torch.cuda
    c.is_available = lambda: True
    c.device_count = lambda: 1
    c.current_device = lambda: 0
    c.get_device_name = lambda *a, **k: "carma-trace (meta)"
    for name in ("synchronize", "empty_cache", "set_device", "manual_seed", "manual_seed_all",
                 "reset_peak_memory_stats", "reset_max_memory_allocated", "init"):
        setattr(c, name, lambda *a, **k: None)
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved"):
        setattr(c, name, lambda *a, **k: 0)
    torch.Tensor.pin_memory = lambda self, *a, **k: self
    # Mixed precision changes every dtype and adds casts that 1.13 cannot replay on meta:
    # refuse it by name rather than print a float32 figure for a float16 job.
    c.amp.autocast.__init__ = _unsupported("mixed precision (torch.cuda.amp.autocast)")
    c.amp.GradScaler.__init__ = _unsupported("mixed precision (torch.cuda.amp.GradScaler)")

    optim_init = torch.optim.Optimizer.__init__

    def init(self, *args, **kwargs):
        optim_init(self, *args, **kwargs)
        cls_step = type(self).step

        def counted(opt, *a, **k):
            r = cls_step(opt, *a, **k)
            if _current is not None:
                _current.step_done()
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


def _command(argv):
    """(kind, target, argv for the script): drops a leading python interpreter word."""
    if argv and os.path.basename(argv[0]).startswith("python"):
        argv = argv[1:]
    if not argv:
        raise Unsupported("no script given")
    if argv[0] == "-m" and len(argv) > 1:
        return "module", argv[1], argv[1:]
    if argv[0].startswith("-"):
        raise Unsupported("interpreter option %s (give the script, or -m MODULE)" % argv[0])
    return "path", argv[0], argv


def main(argv, out, iterations):
    """Traces the command; returns (exit code, message). 0: complete trace written."""
    try:
        kind, target, script_argv = _command(argv)
    except Unsupported as e:
        return 2, str(e)
    if kind == "path" and not os.path.isfile(target):
        return 2, "no such script: %s" % target
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
    return rc, msg


def _traced(run, fn):
    try:
        with _Devices(), _Dispatch(run.trace):
            try:
                fn()
            except StopTrace:
                pass
    except Unsupported as e:
        return 3, "cannot trace: %s" % e
    except SystemExit as e:
        if e.code not in (None, 0) and run.steps == 0:
            return 4, "the script exited with status %s before its first optimizer step" % e.code
    except BaseException as e:   # the script's own failure, under the tracer
        op = run.trace.last_op
        where = " (last operation traced: %s)" % op if op else ""
        return 4, "the script failed under the tracer: %s: %s%s" % (
            type(e).__name__, str(e).splitlines()[0] if str(e) else "", where)
    if run.steps == 0:
        return 4, "the script made no optimizer step (nothing to estimate)"
    return 0, None
