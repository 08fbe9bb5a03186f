"""Graph-cell kernels on numpy arrays: edge masks, batched heat diffusion, per-gene aggregation.

The C++ kernels of cellgraph/ (see cellgraph/*.h for layouts and semantics), called without
copies where the layout allows: an input that is C-contiguous and of the kernel's type (int32
ids and edges, int64 ptr arrays, float32 or float64 signals) is read in place, anything else
is converted once by numpy; outputs are written into a caller's `out=` array or handed over
from C++ without a copy. CPU torch tensors are accepted, inputs and `out=` alike, through numpy
(Tensor.numpy() shares their memory, so a kernel writes straight into an `out=` tensor); results
without `out=` come back as numpy arrays (torch.from_numpy wraps them without a copy). CUDA
tensors are not supported here. The GIL is released while a kernel runs.

    masker = EdgeMasker(num_genes)
    masker.add_type("ppi", src, dst)                 # once per edge type
    removed = masker.removed_edges(ids, ptr)         # per batch: [(positions, ptr)] per type
    keep = masker.keep_mask(0, ids, ptr, out=buf)    # or the dense uint8 mask, into buf
    y = heat_diffusion(num_nodes, edge_ptr, src, dst, x, beta=0.1)   # x: [B, S, C]
    genes, mean, counts = aggregate_by_gene(emb, gene_ids, lengths)
"""

from __future__ import annotations

import numpy as np

from . import _core

_cg = _core.cellgraph

__all__ = ["EdgeMasker", "HeatDiffusion", "heat_diffusion", "aggregate_by_gene"]


def _np(x):
    if x is None:
        return None
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor (CPU: shares memory)
        if getattr(x, "is_cuda", False):
            # .cpu() would copy it to the host behind the caller's back, and an `out=` tensor
            # would then never be written: refuse instead.
            raise NotImplementedError(
                "gwalign.cellgraph: CUDA tensors are not supported; pass tensor.cpu() (the kernels "
                "run on the CPU here)")
        return x.detach().numpy()
    return np.asarray(x)


class EdgeMasker:
    """Per-sample edge masks of a multi-edge-type gene graph (cellgraph/edge_masks.h).

    Edge e of a type is dropped in sample b iff either endpoint is among the sample's perturbed
    genes ids[ptr[b]:ptr[b+1]]."""

    def __init__(self, num_nodes, threads=0):
        self._m = _cg.EdgeMasker(int(num_nodes), int(threads))

    def add_type(self, name, src, dst):
        """Adds an edge type (edge e = src[e] -> dst[e]); returns its index."""
        return self._m.add_type(str(name), _np(src), _np(dst))

    def removed_edges(self, ids, ptr):
        """Per type, (positions, ptr): the dropped global positions b * E + e, ascending."""
        return [tuple(r) for r in self._m.removed_edges(_np(ids), _np(ptr))]

    def keep_mask(self, type, ids, ptr, out=None):
        """Dense uint8 keep-mask of B * E entries (0 = dropped); written into `out` if given."""
        return self._m.keep_mask(int(type), _np(ids), _np(ptr), _np(out))

    def num_edges(self, type):
        return self._m.num_edges(int(type))

    @property
    def num_types(self):
        return self._m.num_types


class HeatDiffusion:
    """Y = exp(-beta L) X per graph for a batch of graphs (cellgraph/diffusion.h), built once.

    num_nodes (B,), edge_ptr (B + 1,), src / dst local ids, weights (or None); x is padded
    [B, seq_len, C]."""

    def __init__(self, num_nodes, edge_ptr, src, dst, weights=None, *, seq_len, order=64,
                 beta=0.1, lambda_max=2.0, estimate_lambda_max=False, halve_c0=True,
                 symmetrize=False, threads=0):
        o = _cg.DiffusionOptions()
        o.order, o.beta, o.lambda_max = int(order), float(beta), float(lambda_max)
        o.estimate_lambda_max, o.halve_c0 = bool(estimate_lambda_max), bool(halve_c0)
        o.symmetrize, o.threads = bool(symmetrize), int(threads)
        self._d = _cg.HeatDiffusion(_np(num_nodes), _np(edge_ptr), _np(src), _np(dst),
                                    _np(weights), int(seq_len), o)

    def apply(self, x, out=None):
        """exp(-beta L) x; into `out` (same shape and dtype, C-contiguous) when given."""
        return self._d.apply(_np(x), _np(out))

    @property
    def lambda_max(self):
        return self._d.lambda_max


def heat_diffusion(num_nodes, edge_ptr, src, dst, x, weights=None, out=None, **options):
    """One call: HeatDiffusion(..., seq_len=x.shape[1], **options).apply(x, out)."""
    x = _np(x)
    return HeatDiffusion(num_nodes, edge_ptr, src, dst, weights, seq_len=x.shape[1],
                         **options).apply(x, out)


def aggregate_by_gene(embeddings, gene_ids, lengths, *, skip_cls=False, threads=0):
    """(gene_ids (U,), mean (U, H), counts (U,)) over the valid tokens of [B, T, H] embeddings."""
    return tuple(_cg.aggregate_by_gene(_np(embeddings), _np(gene_ids), _np(lengths),
                                       bool(skip_cls), int(threads)))
