"""gwalign.joint_embedding: several datasets in one shared space, from the plans that align them.

    emb = gwalign.joint_embedding({"src": X, "tgt": Y}, {("src", "tgt"): T}, anchor="tgt",
                                  dimension=10)
    emb["src"].shape == (len(X), 10)

The method is the C++ library's (embedding/joint_embedding.h): the anchor's PCA coordinates
(zero columns past its rank), then, outward from the anchor along the plans, each dataset's
barycentric projection T Z_parent / rowmass smoothed on its graph by (I + lambda_reg L_rw) Z = B
(L_rw the random-walk Laplacian of its symmetrized 0/1 adjacency; edge weights are ignored).
"""

from __future__ import annotations

import numpy as np

from . import _core

__all__ = ["joint_embedding"]


def _numpy(x):
    if x is None:
        return None
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        return x.detach().cpu().numpy()
    return x


def _is_sparse(x):
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        return False
    return sp.issparse(x)


def _graph_arrays(graph, name):
    """(indptr int64, indices int32) of a square scipy.sparse graph (any format)."""
    if not _is_sparse(graph):
        raise ValueError("joint_embedding: the graph of %r must be a scipy.sparse matrix "
                         "(e.g. gwalign.knn_graph), got %s" % (name, type(graph).__name__))
    csr = graph.tocsr()
    if csr.shape[0] != csr.shape[1]:
        raise ValueError("joint_embedding: the graph of %r is %d x %d; give a square n x n graph"
                         % (name, csr.shape[0], csr.shape[1]))
    return (np.ascontiguousarray(csr.indptr, dtype=np.int64),
            np.ascontiguousarray(csr.indices, dtype=np.int32))


def _plan_entry(key, plan):
    if not (isinstance(key, tuple) and len(key) == 2):
        raise ValueError("joint_embedding: plan keys are (row_dataset, col_dataset) pairs, got %r"
                         % (key,))
    plan = _numpy(plan)
    if _is_sparse(plan):
        csr = plan.tocsr()
        rows, cols = csr.shape
        arrays = (np.ascontiguousarray(csr.indptr, dtype=np.int64),
                  np.ascontiguousarray(csr.indices, dtype=np.int32),
                  np.ascontiguousarray(csr.data, dtype=np.float64))
        return (str(key[0]), str(key[1]), rows, cols, None, arrays)
    dense = np.asarray(plan)
    if dense.ndim != 2:
        raise ValueError("joint_embedding: plan %r must be a 2-D matrix, got shape %s"
                         % (key, dense.shape))
    return (str(key[0]), str(key[1]), dense.shape[0], dense.shape[1],
            np.ascontiguousarray(dense, dtype=np.float64), None)


def joint_embedding(data, plans, *, anchor, graphs=None, dimension=30, lambda_reg=1.0, knn=10,
                    cg_tolerance=1e-10, cg_max_iterations=2000, return_info=False):
    """Embed several datasets in one `dimension`-dimensional space.

    data:    {name: points (n x d array)} for every dataset; the anchor's points are required
             (its PCA is the shared frame), the others give their size and, when no graph is
             given, their kNN graph.
    plans:   {(row_name, col_name): T}: dense arrays (numpy / torch) or scipy.sparse matrices,
             rows = the first dataset's points. Every dataset must be linked to the anchor by a
             chain of plans; either key order works.
    graphs:  {name: scipy.sparse n x n graph}; a non-anchor dataset without one gets
             gwalign.knn_graph(points, knn). Only the pattern is used (weights ignored).
    lambda_reg: Laplacian weight (0 = plain barycentric projection).

    Returns {name: float64 ndarray (n x dimension)}, plus an info dict with return_info=True
    (per dataset: parent, zero_mass_points, cg_iterations, cg_residual; anchor_components,
    anchor_variances, unused_plans)."""
    if not isinstance(data, dict) or not data:
        raise ValueError("joint_embedding: data must be a non-empty {name: points} dict")
    if anchor not in data:
        raise ValueError("joint_embedding: the anchor %r is not a key of data (%s)"
                         % (anchor, ", ".join(map(repr, data))))
    graphs = dict(graphs or {})
    unknown = [name for name in graphs if name not in data]
    if unknown:
        raise ValueError("joint_embedding: graphs has %r, which is not a key of data"
                         % (unknown[0],))
    datasets = []
    for name, points in data.items():
        pts = _numpy(points)
        pts = None if pts is None else np.asarray(pts)
        if pts is not None and pts.ndim == 1:
            pts = pts.reshape(-1, 1)
        graph = graphs.get(name)
        if graph is None and name != anchor and float(lambda_reg) > 0 and pts is not None:
            from ._align import knn_graph
            graph = knn_graph(pts, int(knn))
        if pts is None:
            if graph is None:
                raise ValueError("joint_embedding: dataset %r has neither points nor a graph"
                                 % (name,))
            n = graph.shape[0]
        else:
            n = pts.shape[0]
        send_points = pts if name == anchor else None
        datasets.append((str(name), int(n), send_points,
                         None if graph is None or name == anchor
                         else _graph_arrays(graph, name)))
    plan_list = [_plan_entry(key, plan) for key, plan in plans.items()]
    embeddings, info = _core.joint_embedding_arrays(
        str(anchor), datasets, plan_list, int(dimension), float(lambda_reg),
        float(cg_tolerance), int(cg_max_iterations))
    return (embeddings, info) if return_info else embeddings
