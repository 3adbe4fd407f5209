"""carma_trace.standins — shape-only stand-ins for the operators that PyTorch 1.13 cannot run
on the `meta` device (no meta kernel), so that a training loop traces to the end.

A stand-in returns empty meta tensors of exactly the shapes, dtypes and layouts the real
kernel returns: the trace records storages, never values, so this is all the allocator replay
needs. An operator with no meta kernel and no stand-in stops the trace with its name
(see carma_trace.tracer), never a guessed shape.
"""
import torch

aten = torch.ops.aten


def _like(t):
    return torch.empty(t.shape, dtype=t.dtype, device="meta") if t is not None else None


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    # grad_input has input's shape, grad_weight weight's, grad_bias one entry per output
    # channel; each is made only when output_mask asks for it, as the real kernel does.
    gi = _like(input) if output_mask[0] else None
    gw = _like(weight) if output_mask[1] else None
    gb = None
    if output_mask[2]:
        gb = torch.empty(grad_output.shape[1], dtype=grad_output.dtype, device="meta")
    return gi, gw, gb


def adaptive_avg_pool2d_backward(grad_output, input):
    return _like(input)


def max_pool2d_with_indices_backward(grad_output, input, *args, **kwargs):
    return _like(input)


# Operator overload -> stand-in. Only operators measured to lack a meta kernel in 1.13.
STANDINS = {
    aten.convolution_backward.default: convolution_backward,
    aten._adaptive_avg_pool2d_backward.default: adaptive_avg_pool2d_backward,
}


def standin_for(func):
    """The stand-in of func, or None when the real kernel must run."""
    return STANDINS.get(func)


# Operators that CUDA runs as one kernel but 1.13 decomposes on meta (their composite
# implementation applies where no backend kernel exists), so the trace would hold temporaries
# the GPU never allocates. Measured: of the common activations, norms and pools only Mish's
# backward decomposes (softplus, tanh, sigmoid, ... each a full-size tensor). A Meta kernel
# takes precedence over the composite one, so the operator reaches the dispatch hook whole.
_META_KERNELS = {
    "mish_backward": lambda grad_output, input: torch.empty_like(input),
}
_library = None


def install_meta_kernels():
    global _library
    if _library is not None:
        return
    _library = torch.library.Library("aten", "IMPL", "Meta")
    for name, fn in _META_KERNELS.items():
        # Library.impl refuses operators with a composite kernel on principle; its underlying
        # registration is what the check guards; meta here is a backend of our own.
        _library.m.impl(name, "Meta", fn)
