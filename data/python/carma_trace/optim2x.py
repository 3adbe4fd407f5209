"""carma_trace.optim2x — makes PyTorch 1.13's optimizers allocate what PyTorch 2.x's do on a GPU.

The jobs carma estimates run PyTorch >= 2.0 on CUDA, the tracer runs Debian's 1.13 on the CPU.
Two differences change the memory a training step holds, so the tracer follows 2.x:
  * zero_grad() sets gradients to None by default in 2.x (1.13 zeroes them in place), so the
    gradients are released between steps;
  * Adam/AdamW default to the multi-tensor ("foreach") path on CUDA in 2.x, which holds one
    temporary per parameter (sqrt of the second moment; plus the decayed gradients with weight
    decay, the negated ones with maximize) until the update is done. 1.13's foreach kernels have
    no meta implementation, so the update is written here with single-tensor operations that
    allocate the same temporaries at the same time; values are never computed (meta device).
"""
import functools
import importlib

import torch


def _adam_2x(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *args,
             amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, decoupled=False, **kwargs):
    if not params:
        return
    if maximize:
        grads = [torch.neg(g) for g in grads]
    for s in state_steps:
        s += 1
    if weight_decay != 0:
        if decoupled:
            for p in params:
                p.mul_(1 - lr * weight_decay)
        else:
            grads = [torch.add(g, p, alpha=weight_decay) for g, p in zip(grads, params)]
    for m, v, g in zip(exp_avgs, exp_avg_sqs, grads):
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    del grads
    if amsgrad:
        for mx, v in zip(max_exp_avg_sqs, exp_avg_sqs):
            torch.maximum(mx, v, out=mx)
        denom = [torch.sqrt(mx) for mx in max_exp_avg_sqs]
    else:
        denom = [torch.sqrt(v) for v in exp_avg_sqs]
    for d in denom:
        d.add_(eps)
    for p, m, d in zip(params, exp_avgs, denom):
        p.addcdiv_(m, d, value=-lr)
    del denom


def _adamw_2x(*args, **kwargs):
    return _adam_2x(*args, decoupled=True, **kwargs)


def _set_to_none_default(orig):
    @functools.wraps(orig)
    def zero_grad(self, set_to_none=True):
        return orig(self, set_to_none=set_to_none)
    return zero_grad


def install():
    """Patches torch for the lifetime of the traced process (it is its own process)."""
    # torch.optim deletes its submodule names, so reach the modules by import path.
    importlib.import_module("torch.optim.adam").adam = _adam_2x
    importlib.import_module("torch.optim.adamw").adamw = _adamw_2x
    torch.optim.Optimizer.zero_grad = _set_to_none_default(torch.optim.Optimizer.zero_grad)
    torch.nn.Module.zero_grad = _set_to_none_default(torch.nn.Module.zero_grad)
