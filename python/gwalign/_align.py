"""gwalign.align, align_anndata, knn_graph, gw_loss: the native API on numpy / scipy / anndata.

Copies (documented per input kind):
  * points (n x d): copied once into the geometry the solver owns, converting dtype and layout
    on the way (float32/float64, C or Fortran order, any strides); no other copy.
  * graphs (scipy.sparse): converted to CSR by scipy when in another format (tocsr()), then read
    once into the library's graph builder (which symmetrizes by max and drops self-loops).
  * distance matrices (n x n): copied once into float32 (the solver's distance type).
  * outputs: Result.plan (dense), Result.matching and the CSR arrays of a top-k plan view the
    C++ result's memory (no copy); the arrays keep it alive.
"""

from __future__ import annotations

import inspect
import json
import numpy as np
import scipy.sparse as sp

from . import _core
from ._progress import make_progress

__all__ = ["Options", "Result", "Strategy", "align", "align_anndata", "explain", "knn_graph",
           "gw_loss", "option_names", "make_options", "options_dict"]

Options = _core.Options
Strategy = _core.Strategy


def option_names():
    """The gw::Options fields accepted as keyword arguments, in the C++ declaration order."""
    return list(_core.Options.field_names())


def _defaults():
    o = _core.Options()
    return {name: getattr(o, name) for name in option_names()}


def make_options(options=None, **fields):
    """An Options object: a copy of `options` (or the defaults) with `fields` set by name.

    Unknown names raise TypeError (the message lists the valid ones)."""
    if options is None:
        out = _core.Options()
    elif isinstance(options, _core.Options):
        out = options.__copy__()
    elif isinstance(options, dict):
        out = make_options(None, **options)
    else:
        raise TypeError("options must be a gwalign.Options or a dict, got %r" % type(options).__name__)
    valid = set(option_names())
    for name, value in fields.items():
        if name not in valid:
            raise TypeError(
                "unknown option %r; valid options: %s" % (name, ", ".join(option_names())))
        setattr(out, name, value)
    return out


def options_dict(options):
    """The fields of an Options object as a dict (name -> value)."""
    return {name: getattr(options, name) for name in option_names()}


def _options_repr(self):
    return "gwalign.Options(%s)" % ", ".join("%s=%r" % kv for kv in options_dict(self).items())


Options.__repr__ = _options_repr


def _is_sparse(x):
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency of the package
        return False
    return sp.issparse(x)


def _side(x, role, as_distances, threads):
    """A _core.Side from points, a scipy.sparse graph or a distance matrix."""
    if _is_sparse(x):
        csr = x.tocsr()
        if csr.shape[0] != csr.shape[1]:
            raise ValueError("%s graph is %d x %d; a graph (or sparse distance matrix) must be "
                             "n x n" % (role, csr.shape[0], csr.shape[1]))
        if as_distances:
            # Missing entries of a sparse distance matrix are unreachable.
            dense = np.full(csr.shape, np.inf, dtype=np.float32)
            coo = csr.tocoo()
            dense[coo.row, coo.col] = coo.data
            return _core.side_distances(dense, True, threads, "%s distance matrix" % role), "distances"
        return (_core.side_graph(csr.shape[0], csr.indptr, csr.indices, csr.data,
                                 "%s graph" % role), "graph")
    a = np.asarray(x)
    if as_distances:
        return _core.side_distances(a, False, threads, "%s distance matrix" % role), "distances"
    if a.ndim != 2:
        raise ValueError("%s points must be an n x d array, got %d dimensions (pass "
                         "as_distances=True for a distance matrix)" % (role, a.ndim))
    return _core.side_points(a, "%s points" % role), "points"


def _describe(x):
    if _is_sparse(x):
        return "<scipy.sparse %d x %d>" % x.shape
    a = np.asarray(x)
    return "<ndarray %s %s>" % (" x ".join(str(s) for s in a.shape), a.dtype)


class Result:
    """What gwalign.align returns.

    plan      n x k: a float64 ndarray (plan_format="dense", a view of the C++ result, no copy) or
              a scipy.sparse.csr_matrix (plan_format="topk"; data and indices are views, scipy
              may convert indptr to int32)
    matching  int32 array of n: the argmax of each plan row
    report    dict with exactly the keys of `gwalign align --report` (total_seconds included)
    Any other attribute (termination, iterations, gw_loss, log, timings, options, ...) is read
    from the C++ result.
    """

    def __init__(self, core_result, run):
        self._core = core_result
        self._run = run

    @property
    def plan(self):
        dense = self._core.plan_dense
        if dense is not None:
            return dense
        import scipy.sparse as sp
        data, indices, indptr = self._core.plan_csr_arrays
        return sp.csr_matrix((data, indices, indptr), shape=(self._core.n, self._core.k),
                             copy=False)

    @property
    def matching(self):
        return self._core.matching

    @property
    def report(self):
        return json.loads(self.to_json())

    def to_json(self):
        """The report as the JSON text `gwalign align --report` writes."""
        return self._core.report_json(self._run)

    def report_scalars(self):
        """The report's scalars as (name, value) pairs: what the CLI writes as attributes."""
        return list(self._core.report_scalars(self._run))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._core, name)

    def __repr__(self):
        return "<gwalign.Result %s>" % self._core.brief_report()


def _prepare(source, target, as_distances, feature_cost, features, initial_plan, options,
             option_fields):
    """What align and explain share: the Options, the sides and the run's description."""
    opts = make_options(options, **option_fields)
    if isinstance(initial_plan, str):
        # The Options field of that name: how the loop starts ("product" | "profiles").
        opts.initial_plan = initial_plan
        initial_plan = None
    if features is not None:
        if feature_cost is not None:
            raise ValueError("give either features or feature_cost, not both")
        fs, ft = features
        # Passed as features: the solver builds their n x k cost only on a dense path.
        features = (np.asarray(fs, dtype=np.float64), np.asarray(ft, dtype=np.float64))
    if opts.fused_weight > 0 and feature_cost is None and features is None:
        raise ValueError("fused_weight %g needs a feature cost: features=(F_source, F_target) or "
                         "feature_cost (n x k)" % opts.fused_weight)
    run = _core.RunInfo()
    run.command = "gwalign.align"
    if opts.fused_weight >= 1.0:
        if features is not None:
            src, tgt = _core.side_nodes(len(features[0])), _core.side_nodes(len(features[1]))
            run.source, run.target = _describe(features[0]), _describe(features[1])
        else:
            fc = np.asarray(feature_cost)
            src, tgt = _core.side_nodes(fc.shape[0]), _core.side_nodes(fc.shape[1])
            run.source, run.target = _describe(fc), _describe(fc)
    else:
        src, run.source_rep = _side(source, "source", as_distances, opts.threads)
        tgt, run.target_rep = _side(target, "target", as_distances, opts.threads)
        run.source, run.target = _describe(source), _describe(target)
    run.source_description = src.description
    run.target_description = tgt.description
    return opts, initial_plan, feature_cost, features, src, tgt, run


def align(source, target, *, p=None, q=None, as_distances=False, feature_cost=None,
          features=None, initial_plan=None, truth=None, options=None, progress=True,
          **option_fields):
    """Align `source` (n nodes) to `target` (k nodes) by sampled Gromov-Wasserstein transport.

    Each side is points (an n x d array -> kNN graph with `knn` neighbours -> shortest paths), a
    graph (a scipy.sparse n x n matrix whose entries are edge lengths) or, with
    as_distances=True, an n x n distance matrix (dense; or sparse, missing = unreachable).
    p, q: marginals (default uniform). Fused GW (fused_weight > 0): feature_cost (n x k) or
    features=(F_source, F_target), whose cost is |f_i - g_j|^2 / max, as `gwalign align
    --features`. initial_plan: n x k starting plan. truth=(t_source, t_target): per-node ground
    truth; the report then carries abs_rho (|Spearman| of the matched truth), as the CLI does.
    progress: True (a tqdm bar when tqdm is installed), a callable f(gwalign.Progress) -> bool
    (False stops the solve), or False. Ctrl-C cancels the solve and raises KeyboardInterrupt.
    options / keyword arguments: every gw::Options field by its C++ name and default (see
    gwalign.option_names()); enum fields by name: plan_format "dense" | "topk", precision
    "f32" | "f64", backend "cpu" | "cuda", distance_mode None (auto) | "precomputed" | "dijkstra"
    | "landmark". initial_plan is either that Options field ("product" | "profiles") or an n x k
    array (the starting plan itself).
    The GIL is released while the solver runs.
    """
    opts, initial_plan, feature_cost, features, src, tgt, run = _prepare(
        source, target, as_distances, feature_cost, features, initial_plan, options, option_fields)
    callback, finish = make_progress(progress)
    try:
        core = _core.solve(src, tgt, p, q, feature_cost, features, initial_plan, opts, callback)
    finally:
        finish()
    if truth is not None:
        ts, tt = (np.asarray(t, dtype=np.float64).ravel() for t in truth)
        if len(ts) != core.n or len(tt) != core.k:
            raise ValueError("truth must have n = %d and k = %d values, got %d and %d"
                             % (core.n, core.k, len(ts), len(tt)))
        run.abs_rho = abs(_core.spearman(ts, tt[np.asarray(core.matching)]))
        run.truth = "source truth vs target truth"
    return Result(core, run)


def explain(source, target, *, p=None, q=None, as_distances=False, feature_cost=None,
            features=None, initial_plan=None, options=None, **option_fields):
    """How align(source, target, ...) with these arguments would solve the problem, without
    solving: a gwalign.Strategy (support, solver, backend, precision, threads, loss, each with its
    reason, and every candidate's predicted seconds and bytes; print it, or .to_json()). The same
    choice `gwalign align --explain` prints and Result.strategy records: gw::choose_strategy
    decides for every front end."""
    opts, initial_plan, feature_cost, features, src, tgt, _ = _prepare(
        source, target, as_distances, feature_cost, features, initial_plan, options, option_fields)
    return _core.choose_strategy(src, tgt, p, q, feature_cost, features, initial_plan, opts)


def _signature_with_options():
    # align's signature shows every option with its default (help(), IDE completion).
    sig = inspect.signature(align)
    params = [v for v in sig.parameters.values() if v.kind != inspect.Parameter.VAR_KEYWORD]
    taken = {v.name for v in params}
    for name, default in _defaults().items():
        if name in taken:
            continue
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return sig.replace(parameters=params)


align.__signature__ = _signature_with_options()


# --------------------------------------------------------------------------------- AnnData

def _read_rep(adata, rep, role, as_distances):
    """The matrix an AnnData spec names: X, obsm:KEY, obsp:KEY, layers:KEY."""
    if rep == "X":
        return adata.X, "X"
    kind, _, key = rep.partition(":")
    stores = {"obsm": adata.obsm, "obsp": adata.obsp, "layers": adata.layers}
    if kind not in stores or not key:
        raise ValueError("%s rep %r: expected X, obsm:KEY, obsp:KEY or layers:KEY" % (role, rep))
    store = stores[kind]
    if key not in store:
        raise KeyError("%s rep %r: AnnData has no %s[%r] (it has: %s)"
                       % (role, rep, kind, key, ", ".join(store.keys()) or "none"))
    m = store[key]
    if kind == "obsp" and not as_distances and not _is_sparse(m):
        raise ValueError("%s rep %r is a dense matrix; pass as_distances=True to use it as an n x n "
                         "distance matrix (obsp graphs are read from sparse matrices)" % (role, rep))
    if kind != "obsp" and _is_sparse(m) and not as_distances:
        m = m.toarray()  # points stored sparse (e.g. X): densified, as the CLI does
    return m, rep


def _default_rep(adata, role):
    # The CLI's rule (gwalign align without --source-rep): the only obsm entry; with none, the only
    # obsp entry when it is a sparse (CSR) graph.
    keys = list(adata.obsm.keys())
    if len(keys) == 1:
        return "obsm:" + keys[0]
    graphs = list(adata.obsp.keys())
    if not keys and len(graphs) == 1 and sp.issparse(adata.obsp[graphs[0]]):
        return "obsp:" + graphs[0]
    raise ValueError("AnnData has %s; pick the %s geometry with rep= (e.g. obsm:X_pca, "
                     "obsp:distances or X)" % (
                         "no obsm entry" if not keys else "several obsm entries (%s)"
                         % ", ".join("obsm:" + k for k in keys), role))


def align_anndata(adata_src, adata_tgt, rep="obsm:X_pca", *, source_rep=None, target_rep=None,
                  key_added="gw", copy=False, as_distances=False, source_weights=None,
                  target_weights=None, truth=None, **kwargs):
    """Align two AnnData objects and store the result in the source (scanpy's convention).

    Writes obsm[key_added + "_plan"] (the plan: dense n x k, or CSR with plan_format="topk"),
    obsm[key_added + "_match"] (int32 matched target row of each cell) and uns[key_added] (the
    report's scalars and report_json), exactly what `gwalign align --write-into-source` writes.
    rep / source_rep / target_rep: X, obsm:KEY, layers:KEY (points) or obsp:KEY (a graph, or a
    distance matrix with as_distances=True); rep=None picks the only obsm entry, or with no
    obsm entry the only obsp entry when it is a sparse graph (as `gwalign align` does).
    source_weights / target_weights: obs column names (or arrays) of the marginals.
    truth: an obs column present in both (default "angle" when both have it) -> abs_rho.
    copy=True leaves adata_src untouched and returns an annotated copy; otherwise returns the
    Result. Other keyword arguments go to gwalign.align.
    """
    src_spec = source_rep or rep or _default_rep(adata_src, "source")
    tgt_spec = target_rep or rep or _default_rep(adata_tgt, "target")
    xs, src_spec = _read_rep(adata_src, src_spec, "source", as_distances)
    xt, tgt_spec = _read_rep(adata_tgt, tgt_spec, "target", as_distances)

    def weights(adata, w):
        if w is None:
            return None
        if isinstance(w, str):
            return np.asarray(adata.obs[w], dtype=np.float64)
        return np.asarray(w, dtype=np.float64)

    truth_col = truth
    if truth_col is None and "angle" in adata_src.obs and "angle" in adata_tgt.obs:
        truth_col = "angle"
    truth_pair = None
    if truth_col is not None:
        truth_pair = (np.asarray(adata_src.obs[truth_col], dtype=np.float64),
                      np.asarray(adata_tgt.obs[truth_col], dtype=np.float64))
    result = align(xs, xt, p=weights(adata_src, source_weights),
                   q=weights(adata_tgt, target_weights), as_distances=as_distances,
                   truth=truth_pair, **kwargs)
    if result.n != adata_src.n_obs:
        raise ValueError("source AnnData has n_obs = %d but the geometry %r has %d nodes; use a "
                         "geometry with one row per cell" % (adata_src.n_obs, src_spec, result.n))
    run = result._run
    run.source = getattr(adata_src, "filename", None) and str(adata_src.filename) or "<AnnData>"
    run.target = getattr(adata_tgt, "filename", None) and str(adata_tgt.filename) or "<AnnData>"
    run.source_rep, run.target_rep = src_spec, tgt_spec
    if truth_pair is not None:
        run.truth = "obs:%s vs obs:%s" % (truth_col, truth_col)
    out = adata_src.copy() if copy else adata_src
    out.obsm[key_added + "_plan"] = result.plan
    out.obsm[key_added + "_match"] = np.asarray(result.matching)
    uns = {}
    for name, value in result.report_scalars():
        uns[name] = value
    uns["report_json"] = result.to_json()
    out.uns[key_added] = uns
    return out if copy else result


# --------------------------------------------------------------------------------- utilities

def knn_graph(points, k=30, *, connect=True):
    """Undirected exact kNN graph of n x d points as a scipy.sparse.csr_matrix (n x n).

    Edge i - j when j is among i's k nearest or i among j's; weight = Euclidean distance; both
    directions stored; stitched until connected unless connect=False. C-contiguous float32 /
    float64 points are read in place; other layouts and dtypes are converted first (one copy)."""
    import scipy.sparse as sp
    a = np.asarray(points)
    data, indices, indptr = _core.knn_graph_arrays(a, int(k), bool(connect))
    return sp.csr_matrix((data, indices, indptr), shape=(a.shape[0], a.shape[0]), copy=False)


def gw_loss(dx, dy, plan):
    """The exact GW loss sum_{ijkl} (Dx_ik - Dy_jl)^2 T_ij T_kl of a dense plan (n x k) for
    distance matrices Dx (n x n) and Dy (k x k), used as given. O(n^2 k + n k^2); for small
    inputs. Arrays of any float dtype and layout (converted to float64 once)."""
    if _is_sparse(plan):
        plan = plan.toarray()
    return _core.gw_loss(np.asarray(dx), np.asarray(dy), np.asarray(plan))
