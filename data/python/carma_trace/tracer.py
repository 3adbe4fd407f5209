"""carma_trace.tracer — runs PyTorch code on the `meta` device and records every GPU storage's
creation and last release, in order: the trace carma's allocator model replays (src/estimate/
trace_replay.c). Tensors the script puts on "cuda" go to "meta": shapes, dtypes and lifetimes
are real, values are never computed, so a 100-GiB job traces in seconds on a laptop.

Trace format (text, one event a line; the C reader documents the same):
  carma-trace 1          header
  a ID BYTES             a storage of BYTES bytes is created (the allocator's request)
  f ID                   the last tensor using storage ID is gone (the block is freed)
  g fwd|bwd              the first matrix multiply on the forward thread / on autograd's
                         backward thread (each such thread keeps a cuBLAS workspace)
  l                      a matrix multiply with bias (cuBLASLt takes a transient workspace)
  c IN OUT WEIGHT        a convolution (forward or backward) over tensors of these byte sizes
                         (cuDNN takes a workspace the CPU cannot see: carma applies its rule)
  s N                    optimizer step N is done
  end                    the trace is complete
"""
import weakref

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from . import standins

aten = torch.ops.aten
META = torch.device("meta")

GEMMS = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default,
         aten.addbmm.default, aten.mv.default, aten.addmv.default}
BIAS_GEMMS = {aten.addmm.default, aten.baddbmm.default, aten.addmv.default}
CONVS = {aten.convolution.default, aten.convolution_backward.default}
SCALARS = {aten._local_scalar_dense.default}


class Unsupported(Exception):
    """The script did something the tracer cannot follow; names the operation."""


class StopTrace(BaseException):
    """Raised after the K-th optimizer step; a BaseException so that scripts' `except
    Exception` does not swallow it."""


def _storage_key(t):
    s = t.storage()
    return s._storage._cdata, s.nbytes()


def _nbytes(t):
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


class _Dispatch(TorchDispatchMode):
    """Sees every aten operation (forward, backward, optimizer) and the tensors it returns."""

    def __init__(self, trace):
        super().__init__()
        self.trace = trace

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tr = self.trace
        tr.last_op = func
        if func in SCALARS:
            # .item() on meta: there is no value. 0 lets logging code run on; it is never
            # used for a shape (a data-dependent shape cannot be traced, see Unsupported).
            t = args[0]
            return False if t.dtype == torch.bool else (0.0 if t.is_floating_point() else 0)
        if func in GEMMS:
            tr.gemm()
            if func in BIAS_GEMMS:
                tr.emit("l")
        stand = standins.standin_for(func)
        try:
            out = stand(*args, **kwargs) if stand else func(*args, **kwargs)
        except NotImplementedError as e:
            if "Meta" in str(e) or "meta" in str(e):
                raise tr.refuse("operation %s has no meta implementation in PyTorch %s"
                                % (func, torch.__version__)) from None
            raise
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == "meta":
                tr.track(t)
        # cuDNN takes its workspace once the outputs exist, so the event follows them.
        if func == aten.convolution.default:
            tr.emit("c %d %d %d" % (_nbytes(args[0]), _nbytes(out), _nbytes(args[1])))
        elif func == aten.convolution_backward.default:
            tr.emit("c %d %d %d" % (_nbytes(args[1]), _nbytes(args[0]), _nbytes(args[2])))
        return out


def _to_meta(x):
    if isinstance(x, torch.device) and x.type == "cuda":
        return META
    if isinstance(x, str) and x.startswith("cuda"):
        return META
    return x


_F_DROPOUT = torch.nn.functional.dropout


def _fused_dropout(input, p=0.5, training=True, inplace=False):
    """Dropout as CUDA runs it: ATen uses the fused kernel (a 1-byte mask) only for CUDA
    tensors, and on any other device a noise tensor of the input's dtype (4 bytes an element
    in fp32). So on meta, call the fused operator the GPU would run; None: not that case (in
    place, or not training, or p at 0 or 1, which take the same path on every device)."""
    if (not isinstance(input, torch.Tensor) or input.device.type != "meta" or inplace
            or not training or not 0 < p < 1 or input.numel() == 0):
        return None
    return torch.native_dropout(input, p, True)[0]


class _Devices(TorchFunctionMode):
    """Sends everything a script puts on "cuda" to "meta", and gives meta tensors' values
    (to CPU, NumPy, lists) as zeros, since a meta tensor has none."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name == "cuda" and args and isinstance(args[0], torch.Tensor):
            return args[0].to(META, non_blocking=kwargs.get("non_blocking", False))
        if name in ("cpu", "numpy", "tolist") and args and isinstance(args[0], torch.Tensor) \
                and args[0].device.type == "meta":
            z = torch.zeros(args[0].shape, dtype=args[0].dtype)
            return z if name == "cpu" else getattr(z, name)()
        if func is _F_DROPOUT:
            fused = _fused_dropout(*args, **kwargs)
            if fused is not None:
                return fused
        args = tree_map(_to_meta, args)
        kwargs = tree_map(_to_meta, kwargs)
        return func(*args, **kwargs)


class Trace:
    """The event log of one traced run, written to a file as it goes."""

    def __init__(self, out):
        self.out = out
        self.next_id = 1
        self.live = {}          # storage key -> [id, live tensor count]
        self.in_backward = 0
        self.last_op = None
        self.closed = False
        self.gemm_seen = set()
        self.refused = None     # the first thing refused, even if the script caught it
        self.emit("carma-trace 1")

    def refuse(self, what):
        """The Unsupported to raise for what; remembered, so that a script catching it (a
        try/except around a probe) still ends with this refusal rather than a wrong trace."""
        if self.refused is None:
            self.refused = what
        return Unsupported(what)

    def emit(self, line):
        if not self.closed:
            self.out.write(line + "\n")

    def close(self, steps):
        """Ends the trace; the releases that run at interpreter exit are not part of it."""
        if steps is not None:
            self.emit("end %d" % steps)
        self.closed = True

    def gemm(self):
        phase = "bwd" if self.in_backward else "fwd"
        if phase not in self.gemm_seen:
            self.gemm_seen.add(phase)
            self.emit("g " + phase)

    def track(self, t):
        key = _storage_key(t)
        ent = self.live.get(key)
        if ent is None:
            ent = [self.next_id, 0]
            self.next_id += 1
            self.live[key] = ent
            self.emit("a %d %d" % (ent[0], key[1]))
        ent[1] += 1
        weakref.finalize(t, self._release, key)

    def _release(self, key):
        ent = self.live.get(key)
        if ent is None:
            return
        ent[1] -= 1
        if ent[1] == 0:
            del self.live[key]
            self.emit("f %d" % ent[0])
