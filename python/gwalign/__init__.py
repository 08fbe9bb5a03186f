"""gwalign: sampled Gromov-Wasserstein alignment (C++ core, numpy / scipy / anndata API).

    import gwalign
    result = gwalign.align(points_a, points_b, knn=5, seed=1)   # or graphs, distance matrices
    result.plan, result.matching, result.report
    gwalign.align_anndata(adata_a, adata_b, rep="obsm:X_pca")   # obsm["gw_plan"], uns["gw"], ...
    print(gwalign.explain(points_a, points_b, knn=5))           # how align would solve it, why
    gwalign.joint_embedding({"a": X, "b": Y}, {("a", "b"): result.plan}, anchor="b")
    plans, reports = gwalign.spatial.align_slices([section_a, section_b])  # obsm["spatial_aligned"]
    gwalign.transfer(section_a, section_b, plans[0], keys=["cell_type"])   # obs, obsm, uns

Drop-in entry points: gwalign.gromov (POT 0.8's GW functions), gwalign.torchgw (the reference
sampled-GW package's sampled_gw / build_knn_graph). Graph-cell kernels: gwalign.cellgraph.
"""

# A build folder whose extension was not built, an extension built for another interpreter, or
# an interpreter without numpy: one ImportError that says which and how to fix it (_diagnose.py),
# raised here rather than an AttributeError later.
try:
    from . import _core
except ImportError as _error:
    from ._diagnose import core_import_error
    raise core_import_error(_error) from _error
try:
    from ._align import (Options, Result, Strategy, align, align_anndata, explain, gw_loss,
                         knn_graph, make_options, option_names, options_dict)
    from ._embedding import joint_embedding
    from . import spatial
    from .spatial import transfer
except ModuleNotFoundError as _error:
    if _error.name not in ("numpy", "scipy"):
        raise
    from ._diagnose import dependency_import_error
    raise dependency_import_error(_error) from _error

Progress = _core.Progress
__version__ = _core.__version__
#: True when this build has the CUDA backend compiled in (a device is still needed to use it).
has_cuda = _core.has_cuda

__all__ = ["Options", "Progress", "Result", "Strategy", "align", "align_anndata", "explain",
           "gw_loss", "knn_graph",
           "make_options", "option_names", "options_dict", "__version__", "has_cuda",
           "joint_embedding", "spatial", "transfer"]


def __getattr__(name):
    # gwalign.gromov / gwalign.torchgw / gwalign.cellgraph load on first use (torch-free import).
    if name in ("gromov", "torchgw", "cellgraph"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'gwalign' has no attribute %r" % name)
