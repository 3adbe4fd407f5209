"""carma_trace — carma's tracer: runs an unmodified PyTorch training script on the `meta`
device and writes the trace of its GPU memory requests (see tracer.py for the format), which
`carma estimate --run` replays through its model of PyTorch's CUDA caching allocator."""
