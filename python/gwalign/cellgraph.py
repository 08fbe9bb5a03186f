"""Graph-cell kernels on numpy arrays and torch tensors, on the CPU and on CUDA devices: edge
masks, batched heat diffusion, per-gene aggregation.

The C++ kernels of cellgraph/ (see cellgraph/*.h for layouts and semantics), called without
copies where the layout allows: an input that is C-contiguous and of the kernel's type (int32
ids and edges, int64 ptr arrays, float32 or float64 signals) is read in place, anything else
is converted once by numpy; outputs are written into a caller's `out=` array or handed over
from C++ without a copy. CPU torch tensors are accepted, inputs and `out=` alike, through numpy
(Tensor.numpy() shares their memory, so a kernel writes straight into an `out=` tensor); results
without `out=` come back as numpy arrays (torch.from_numpy wraps them without a copy). The GIL is
released while a kernel runs.

CUDA (a build with CUDA, cellgraph/cuda_*.h): when the per-batch inputs are device arrays -- torch
CUDA tensors, or any object with `__cuda_array_interface__` (CuPy, Numba, gwalign's own
DeviceBuffer) -- the call runs on that device, reading them in place (C-contiguous and of the
kernel's dtype; a torch tensor of another dtype or layout is converted on the device, anything
else is refused), on the caller's stream: `stream=` (a cudaStream_t as an int) when given, else
torch's current stream for torch tensors, else the array interface's "stream" entry, else the
legacy default stream. Fixed-size outputs (keep masks, diffusion results) go into `out=` or a new
array of the input's kind (torch tensor, else DeviceBuffer); removal lists and aggregates, whose
size the device decides, are copied into new device arrays. keep_mask and HeatDiffusion.apply
only enqueue work (keep_mask waits for the stream only with check=True, the default, to raise on
an invalid batch); removed_edges and aggregate_by_gene read result sizes back, but their final
copies into the returned arrays are still queued. Every DeviceBuffer names its stream in its array
interface (version 3, "stream"), so consumers on other streams order themselves after it; torch
tensors an off-stream call allocates or converts are recorded on that stream. A DeviceBuffer made
on a caller's `stream=` copies on that stream later (numpy()): keep the stream alive while you
read the result; releasing the result after the stream is gone is safe. The
graph operators (edge types, diffusion graphs) are built on the CPU once and uploaded once per
(device, stream). Mixing host and device inputs in one call is an error.

    masker = EdgeMasker(num_genes)
    masker.add_type("ppi", src, dst)                 # once per edge type
    removed = masker.removed_edges(ids, ptr)         # per batch: [(positions, ptr)] per type
    keep = masker.keep_mask(0, ids, ptr, out=buf)    # or the dense uint8 mask, into buf
    y = heat_diffusion(num_nodes, edge_ptr, src, dst, x, beta=0.1)   # x: [B, S, C]
    genes, mean, counts = aggregate_by_gene(emb, gene_ids, lengths)
"""

from __future__ import annotations

import threading

import numpy as np

from . import _core

_cg = _core.cellgraph
_cuda = _cg.cuda

__all__ = ["EdgeMasker", "HeatDiffusion", "heat_diffusion", "aggregate_by_gene", "DeviceBuffer",
           "device_count"]

DeviceBuffer = _cg.cuda.DeviceBuffer


def device_count():
    """CUDA devices visible to gwalign (0 in a build without CUDA)."""
    return _cg.cuda.device_count()


def _np(x):
    if x is None:
        return None
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor (CPU: shares memory)
        if getattr(x, "is_cuda", False):
            # .cpu() would copy it to the host behind the caller's back, and an `out=` tensor
            # would then never be written: refuse instead.
            raise ValueError(
                "gwalign.cellgraph: a CUDA tensor was mixed with host arrays; pass every per-batch "
                "array on the same device (or all on the host)")
        return x.detach().numpy()
    return np.asarray(x)


# ---- device arrays ----------------------------------------------------------------------------

_DTYPES = {"<f4": "float32", "<f8": "float64", "<i4": "int32", "<i8": "int64", "|u1": "uint8",
           "|b1": "uint8"}


def _on_device(x):
    """True for a torch CUDA tensor or any __cuda_array_interface__ object."""
    if x is None:
        return False
    try:
        return hasattr(x, "__cuda_array_interface__")
    except Exception:  # torch CPU tensors raise from the property
        return False


def _is_torch(x):
    return hasattr(x, "detach") and hasattr(x, "data_ptr")


def _torch_dtype(name):
    import torch
    return {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32,
            "int64": torch.int64, "uint8": torch.uint8}[name]


def _device_index(x):
    """The CUDA device of a device array: torch's own record, else asked of the CUDA runtime for
    the array's pointer (the array interface does not carry the device; CuPy's .device and
    Numba's differ, and a guessed 0 would hand one device's pointer to another's kernels)."""
    if _is_torch(x):
        return x.device.index if x.device.index is not None else 0
    return int(_cuda.pointer_device(int(x.__cuda_array_interface__["data"][0])))


def _hold_for_stream(handle, *tensors):
    """Torch's caching allocator hands a freed tensor's memory to new work on the stream the tensor
    was allocated on. When the kernels run on another stream (stream=), each torch tensor the call
    reads or writes (converted inputs, new outputs) is recorded on that stream, so its memory is
    not reused before the queued kernels are done with it."""
    for t in tensors:
        if t is None or not _is_torch(t):
            continue
        import torch
        if int(torch.cuda.current_stream(t.device).cuda_stream) != handle:
            t.record_stream(torch.cuda.ExternalStream(handle, device=t.device))


class _Dev:
    """A device array's pointer, shape and dtype name, and the object that keeps it alive."""

    def __init__(self, x, dtype, what, allow_bool=False):
        if _is_torch(x):
            t = x.detach()
            want = _torch_dtype(dtype)
            if allow_bool and str(t.dtype) == "torch.bool":
                want = t.dtype
            # A device-side conversion where needed (documented above); `converted` tells an
            # out= array, which must be written in place, from an input that may be copied.
            self.converted = t.dtype != want or not t.is_contiguous()
            if self.converted:
                t = t.to(want).contiguous()
            self.obj, self.ptr, self.shape = t, t.data_ptr(), tuple(t.shape)
            return
        self.converted = False
        cai = x.__cuda_array_interface__
        typestr = cai["typestr"]
        got = _DTYPES.get(typestr)
        if got != dtype or (typestr == "|b1" and not allow_bool):
            raise ValueError("gwalign.cellgraph: %s must be a %s device array, got typestr %r "
                             "(convert it on the device first)" % (what, dtype, typestr))
        shape = tuple(int(d) for d in cai["shape"])
        strides = cai.get("strides")
        if strides is not None:
            itemsize = 1 if dtype == "uint8" else int(typestr[2:])
            expect, acc = [], itemsize
            for d in reversed(shape):
                expect.append(acc)
                acc *= d
            if tuple(strides) != tuple(reversed(expect)) and int(np.prod(shape)) > 1:
                raise ValueError("gwalign.cellgraph: %s must be C-contiguous on the device" % what)
        self.obj, self.ptr, self.shape = x, int(cai["data"][0]), shape


def _signal_dtype(x, what):
    """The kernel's float type for a device signal: float64 stays, a torch tensor of any other
    dtype is converted to float32 (by _Dev), other arrays must be float32 or float64."""
    if _is_torch(x):
        return "float64" if str(x.dtype) == "torch.float64" else "float32"
    dtype = _DTYPES.get(x.__cuda_array_interface__["typestr"])
    if dtype not in ("float32", "float64"):
        raise ValueError("%s must be float32 or float64" % what)
    return dtype


def _stream_of(x, stream):
    """The cudaStream_t (int) a call runs on: see the module docstring."""
    if stream is not None:
        return int(stream)
    if _is_torch(x):
        import torch
        return int(torch.cuda.current_stream(x.device).cuda_stream)
    s = x.__cuda_array_interface__.get("stream")
    if s is None or s == 1:  # 1: the legacy default stream (the array interface, version 3)
        return 0
    return int(s)


def _check_device_available():
    if not _core.has_cuda:
        raise NotImplementedError("gwalign.cellgraph: device arrays need a gwalign built with "
                                  "CUDA (-DGWALIGN_ENABLE_CUDA=ON); pass host arrays")
    if _cuda.device_count() == 0:
        raise ValueError("gwalign.cellgraph: device arrays were passed but no CUDA device is "
                         "visible to gwalign")


def _all_or_none_on_device(*xs):
    flags = [_on_device(x) for x in xs if x is not None]
    if any(flags) and not all(flags):
        raise ValueError("gwalign.cellgraph: mix of device and host arrays; pass every per-batch "
                         "array (and out=) on the same device, or all on the host")
    return bool(flags) and all(flags)


def _wrap_like(like, buf):
    """A DeviceBuffer as the caller's kind: a torch tensor (zero-copy) for torch inputs."""
    if _is_torch(like):
        import torch
        return torch.as_tensor(buf, device=like.device)
    return buf


def _new_like(like, shape, dtype, stream, device):
    if _is_torch(like):
        import torch
        return torch.empty(shape, dtype=_torch_dtype(dtype), device=like.device)
    return _cuda.DeviceBuffer.empty(list(shape), dtype, _cuda.Stream.borrow(stream, device))


class EdgeMasker:
    """Per-sample edge masks of a multi-edge-type gene graph (cellgraph/edge_masks.h and, for
    device batches, cellgraph/cuda_edge_masks.h).

    Edge e of a type is dropped in sample b iff either endpoint is among the sample's perturbed
    genes ids[ptr[b]:ptr[b+1]] (ids int32, ptr int64)."""

    def __init__(self, num_nodes, threads=0):
        self._m = _cg.EdgeMasker(int(num_nodes), int(threads))
        self._device = {}  # (device, stream) -> the uploaded incidence (_cuda.EdgeMasker)

    def add_type(self, name, src, dst):
        """Adds an edge type (edge e = src[e] -> dst[e]); returns its index."""
        self._device.clear()  # uploads are rebuilt with the new type on the next device call
        return self._m.add_type(str(name), _np(src), _np(dst))

    def _on(self, ids, ptr, stream):
        _check_device_available()
        i, p = _Dev(ids, "int32", "ids"), _Dev(ptr, "int64", "ptr")
        if len(i.shape) != 1 or len(p.shape) != 1 or p.shape[0] < 1:
            raise ValueError("gwalign.cellgraph: ids must be 1-D and ptr 1-D with B + 1 >= 1 "
                             "entries, got shapes %s and %s" % (list(i.shape), list(p.shape)))
        device, handle = _device_index(ids), _stream_of(ids, stream)
        key = (device, handle)
        if key not in self._device:
            self._device[key] = _cuda.EdgeMasker(self._m, handle, device)
        return self._device[key], i, p, device, handle

    def removed_edges(self, ids, ptr, *, stream=None):
        """Per type, (positions, ptr): the dropped global positions b * E + e, ascending (int64).
        Device ids / ptr give device arrays (waits for the stream to size them)."""
        if _all_or_none_on_device(ids, ptr):
            m, i, p, _, handle = self._on(ids, ptr, stream)
            _hold_for_stream(handle, i.obj, p.obj)
            lists = m.removed_edges(i.ptr, i.shape[0], p.ptr, p.shape[0] - 1)
            return [(_wrap_like(ids, a), _wrap_like(ids, b)) for a, b in lists]
        return [tuple(r) for r in self._m.removed_edges(_np(ids), _np(ptr))]

    def keep_mask(self, type, ids, ptr, out=None, *, stream=None, check=True):
        """Dense uint8 keep-mask of B * E entries (0 = dropped); written into `out` if given
        (uint8 or bool, C-contiguous). Device inputs: enqueued on the stream; `check` waits for
        it and raises if the batch was invalid (check=False returns at once)."""
        type = int(type)
        if _all_or_none_on_device(ids, ptr, out):
            m, i, p, device, handle = self._on(ids, ptr, stream)
            b = p.shape[0] - 1
            size = b * self._m.num_edges(type)
            if out is None:
                out = _new_like(ids, (size,), "uint8", handle, device)
            o = _Dev(out, "uint8", "out", allow_bool=True)
            if o.converted:
                raise ValueError("keep_mask out= must be a C-contiguous uint8 / bool device array")
            if int(np.prod(o.shape)) != size:
                raise ValueError("keep_mask out= must have B * E = %d entries" % size)
            _hold_for_stream(handle, i.obj, p.obj, o.obj)
            m.keep_mask(type, i.ptr, i.shape[0], p.ptr, b, o.ptr, bool(check))
            return out
        return self._m.keep_mask(type, _np(ids), _np(ptr), _np(out))

    def num_edges(self, type):
        return self._m.num_edges(int(type))

    @property
    def num_types(self):
        return self._m.num_types


class HeatDiffusion:
    """Y = exp(-beta L) X per graph for a batch of graphs (cellgraph/diffusion.h; device signals
    through cellgraph/cuda_diffusion.h), built once on the CPU.

    num_nodes (B,), edge_ptr (B + 1,), src / dst local ids, weights (or None); x is padded
    [B, seq_len, C]."""

    def __init__(self, num_nodes, edge_ptr, src, dst, weights=None, *, seq_len, order=64,
                 beta=0.1, lambda_max=2.0, estimate_lambda_max=False, halve_c0=True,
                 symmetrize=False, threads=0):
        o = _cg.DiffusionOptions()
        o.order, o.beta, o.lambda_max = int(order), float(beta), float(lambda_max)
        o.estimate_lambda_max, o.halve_c0 = bool(estimate_lambda_max), bool(halve_c0)
        o.symmetrize, o.threads = bool(symmetrize), int(threads)
        self._num_graphs = int(np.asarray(_np(num_nodes)).shape[0])
        self._seq_len = int(seq_len)
        self._d = _cg.HeatDiffusion(_np(num_nodes), _np(edge_ptr), _np(src), _np(dst),
                                    _np(weights), int(seq_len), o)
        self._device = {}  # (device, stream) -> the uploaded operator (_cuda.HeatDiffusion)

    def apply(self, x, out=None, *, stream=None):
        """exp(-beta L) x; into `out` (same shape and dtype, C-contiguous) when given. A device x
        is enqueued on the stream and the call returns at once."""
        if _all_or_none_on_device(x, out):
            _check_device_available()
            dtype = _signal_dtype(x, "HeatDiffusion.apply: x")
            xi = _Dev(x, dtype, "x")
            if len(xi.shape) != 3 or xi.shape[0] != self._num_graphs or \
                    xi.shape[1] != self._seq_len:
                raise ValueError("x must be [B, S, C] = [%d, %d, channels], got %s"
                                 % (self._num_graphs, self._seq_len, list(xi.shape)))
            device, handle = _device_index(x), _stream_of(x, stream)
            key = (device, handle)
            if key not in self._device:
                self._device[key] = _cuda.HeatDiffusion(self._d, handle, device)
            if out is None:
                out = _new_like(x, xi.shape, dtype, handle, device)
            o = _Dev(out, dtype, "out")
            if o.converted or o.shape != xi.shape:
                raise ValueError("out= must be a C-contiguous device array of x's shape and dtype")
            _hold_for_stream(handle, xi.obj, o.obj)
            self._device[key].apply(xi.ptr, xi.shape[2], o.ptr, dtype)
            return out
        return self._d.apply(_np(x), _np(out))

    @property
    def lambda_max(self):
        return self._d.lambda_max


def heat_diffusion(num_nodes, edge_ptr, src, dst, x, weights=None, out=None, **options):
    """One call: HeatDiffusion(..., seq_len=x.shape[1], **options).apply(x, out); the graphs are
    host arrays, x may be on a device (see HeatDiffusion.apply)."""
    stream = options.pop("stream", None)
    seq_len = x.shape[1] if _on_device(x) else _np(x).shape[1]
    op = HeatDiffusion(num_nodes, edge_ptr, src, dst, weights, seq_len=int(seq_len), **options)
    if _on_device(x):
        return op.apply(x, out, stream=stream)
    return op.apply(_np(x), out)


# Device aggregators (their scratch buffers) per thread and (device, stream): a CUDA class is used by
# one host thread at a time.
_aggregators = threading.local()


def aggregate_by_gene(embeddings, gene_ids, lengths, *, skip_cls=False, threads=0,
                      id_bound=None, method="sort", stream=None):
    """(gene_ids (U,), mean (U, H), counts (U,)) over the valid tokens of [B, T, H] embeddings.

    Device inputs (embeddings float32/float64 [B, T, H], gene_ids int32 [B, T], lengths int32
    [B]) run cellgraph/cuda_aggregate.h: `id_bound` must exceed every valid id (the vocabulary
    size; when omitted it is read as gene_ids.max() + 1 for torch tensors, a synchronization,
    and required otherwise); method "sort" (deterministic, equal to the CPU) or "atomics"; the
    results are device arrays. `threads` is for the CPU only."""
    if _all_or_none_on_device(embeddings, gene_ids, lengths):
        _check_device_available()
        dtype = _signal_dtype(embeddings, "aggregate_by_gene: embeddings")
        e = _Dev(embeddings, dtype, "embeddings")
        g, l = _Dev(gene_ids, "int32", "gene_ids"), _Dev(lengths, "int32", "lengths")
        if len(e.shape) != 3 or tuple(g.shape) != e.shape[:2] or tuple(l.shape) != e.shape[:1]:
            raise ValueError("aggregate_by_gene: embeddings [B, T, H], gene_ids [B, T] and "
                             "lengths [B] must agree, got %s, %s, %s"
                             % (list(e.shape), list(g.shape), list(l.shape)))
        if id_bound is None:
            if not _is_torch(gene_ids):
                raise ValueError("aggregate_by_gene: device arrays need id_bound= (an int above "
                                 "every valid gene id, e.g. the vocabulary size)")
            id_bound = int(g.obj.max()) + 1 if g.obj.numel() else 1
        device, handle = _device_index(embeddings), _stream_of(embeddings, stream)
        cache = _aggregators.__dict__.setdefault("by_stream", {})
        if (device, handle) not in cache:
            cache[(device, handle)] = _cuda.Aggregator(handle, device)
        agg = cache[(device, handle)]
        _hold_for_stream(handle, e.obj, g.obj, l.obj)
        ids, mean, counts = agg.run(e.ptr, dtype, g.ptr, l.ptr, e.shape[0], e.shape[1],
                                    e.shape[2], int(id_bound), bool(skip_cls), str(method))
        return tuple(_wrap_like(embeddings, a) for a in (ids, mean, counts))
    return tuple(_cg.aggregate_by_gene(_np(embeddings), _np(gene_ids), _np(lengths),
                                       bool(skip_cls), int(threads)))
