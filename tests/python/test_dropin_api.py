"""The drop-ins' public API: every gwalign.torchgw and gwalign.gromov function has its reference's
signature and returns its reference's types, so code written for the reference runs unchanged.

gwalign.gromov is compared with the installed POT (Debian's python3-pot 0.8.2) directly: the same
inspect.signature, and the same return and log value types on the same inputs (numpy, and torch
when installed). The reference sampled-GW package (TorchGW 0.4, GitHub chansigit/torchgw) is not
installable here, so its public signatures and return annotations are restated below from its
documentation (README "API", docs/quickstart.rst, the functions' docstrings and annotations).
"""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp

from gwalign import gromov, torchgw
from conftest import spiral_pair

P = inspect.Parameter
REQUIRED = P.empty

# TorchGW's parameters after its p, q: shared by sampled_gw and sampled_lowrank_gw.
_SOLVER_KEYWORDS = [
    ("distance_mode", "dijkstra"), ("dist_source", None), ("dist_target", None),
    ("n_landmarks", 50), ("fgw_alpha", 0.0), ("C_linear", None), ("s_shared", None), ("M", 50),
    ("alpha", 0.9), ("max_iter", 500), ("tol", 1e-5), ("epsilon", 0.001), ("k", 30),
    ("min_iter_before_converge", 50), ("device", None), ("verbose", False),
    ("verbose_every", 20), ("log", False)]
_SOLVER_TAIL = [("semi_relaxed", False), ("rho", 1.0), ("multiscale", False), ("n_coarse", None),
                ("lambda_ema_beta", None), ("mixed_precision", False)]
_SIDES = [("X_source", None), ("X_target", None), ("p", None), ("q", None)]
_PLAN = "torch.Tensor | tuple[torch.Tensor, dict]"

# name -> (positional-or-keyword parameters, keyword-only parameters, return annotation), each
# parameter (name, default).
TORCHGW_REFERENCE = {
    "sampled_gw": (_SIDES, _SOLVER_KEYWORDS + [("differentiable", False),
                                               ("grad_mode", "implicit")] + _SOLVER_TAIL, _PLAN),
    "sampled_lowrank_gw": (_SIDES, [("rank", 20), ("lr_max_iter", 5),
                                    ("lr_dykstra_max_iter", 50)] + _SOLVER_KEYWORDS + _SOLVER_TAIL,
                           _PLAN),
    "build_knn_graph": ([("X", REQUIRED), ("k", 30)], [], "csr_matrix"),
    "joint_embedding": ([("anchor_name", REQUIRED), ("data_by_name", REQUIRED),
                         ("graphs_by_name", REQUIRED), ("transport_plans", REQUIRED),
                         ("lambda_reg", 1.0), ("out_dim", 30)], [], "dict[str, np.ndarray]"),
}


def test_torchgw_exports_exactly_the_reference_public_functions():
    assert sorted(torchgw.__all__) == sorted(TORCHGW_REFERENCE)


@pytest.mark.parametrize("name", sorted(TORCHGW_REFERENCE))
def test_torchgw_signature_and_return_annotation_are_the_reference(name):
    positional, keyword_only, annotation = TORCHGW_REFERENCE[name]
    want = ([(n, P.POSITIONAL_OR_KEYWORD, d) for n, d in positional]
            + [(n, P.KEYWORD_ONLY, d) for n, d in keyword_only])
    sig = inspect.signature(getattr(torchgw, name))
    params = list(sig.parameters.values())
    # Only addition allowed: a trailing **kwargs (gwalign's own options, sampled_gw).
    if params and params[-1].kind == P.VAR_KEYWORD:
        params = params[:-1]
    assert [(p.name, p.kind, p.default) for p in params] == want
    assert sig.return_annotation == annotation


def _small_pair():
    xs, xt, _, _ = spiral_pair()
    return xs[::5].astype(np.float32), xt[::5].astype(np.float32)  # 80 x 2, 100 x 3


def test_torchgw_sampled_gw_returns_a_float64_tensor_and_with_log_a_tensor_and_dict():
    torch = pytest.importorskip("torch", reason="the reference returns torch tensors")
    xs, xt = _small_pair()
    for mixed_precision in (False, True):
        T = torchgw.sampled_gw(xs, xt, k=5, M=30, max_iter=20, seed=1,
                               mixed_precision=mixed_precision)
        assert isinstance(T, torch.Tensor) and T.dtype == torch.float64
        assert tuple(T.shape) == (80, 100) and T.device.type == "cpu"
    out = torchgw.sampled_gw(torch.from_numpy(xs), torch.from_numpy(xt), k=5, M=30, max_iter=20,
                             log=True, seed=1)
    assert isinstance(out, tuple) and len(out) == 2
    T, log = out
    assert isinstance(T, torch.Tensor) and isinstance(log, dict)
    assert set(log) == {"err_list", "n_iter", "gw_cost"}
    assert isinstance(log["err_list"], list) and all(isinstance(e, float) for e in log["err_list"])
    assert isinstance(log["n_iter"], int) and isinstance(log["gw_cost"], float)


def test_torchgw_sampled_lowrank_gw_rejects_semi_relaxed_first_then_is_unsupported():
    xs, xt = _small_pair()
    with pytest.raises(ValueError, match="semi_relaxed"):
        torchgw.sampled_lowrank_gw(xs, xt, semi_relaxed=True)
    with pytest.raises(NotImplementedError, match="sampled_lowrank_gw"):
        torchgw.sampled_lowrank_gw(xs, xt, rank=10)


def test_torchgw_build_knn_graph_returns_a_csr_matrix():
    xs, _ = _small_pair()
    g = torchgw.build_knn_graph(xs, k=5)
    assert isinstance(g, sp.csr_matrix) and g.shape == (80, 80)


def test_torchgw_joint_embedding_returns_a_dict_of_numpy_arrays_for_numpy_and_torch_plans():
    xs, xt = _small_pair()
    plan = np.full((80, 100), 1.0 / 8000)
    plans = [plan]
    try:
        import torch
        plans.append(torch.from_numpy(plan))  # what sampled_gw returns
    except ImportError:
        pass
    graphs = {"src": torchgw.build_knn_graph(xs, k=5), "tgt": torchgw.build_knn_graph(xt, k=5)}
    for T in plans:
        emb = torchgw.joint_embedding("tgt", {"src": xs, "tgt": xt}, graphs, {("src", "tgt"): T},
                                      out_dim=4)
        assert isinstance(emb, dict) and set(emb) == {"src", "tgt"}
        for name, n in (("src", 80), ("tgt", 100)):
            assert isinstance(emb[name], np.ndarray) and emb[name].shape == (n, 4)
            assert np.all(np.isfinite(emb[name]))  # code written for the reference


# ----------------------------------------------------------------------------------- gromov

GROMOV = ["gromov_wasserstein", "gromov_wasserstein2", "entropic_gromov_wasserstein",
          "entropic_gromov_wasserstein2", "fused_gromov_wasserstein", "fused_gromov_wasserstein2"]


@pytest.fixture(scope="module")
def pot():
    return pytest.importorskip("ot", reason="POT (python3-pot) is not installed")


def test_gromov_exports_the_six_pot_functions():
    assert sorted(gromov.__all__) == sorted(GROMOV)


@pytest.mark.parametrize("name", GROMOV)
def test_gromov_signature_is_pots(pot, name):
    assert inspect.signature(getattr(gromov, name)) == inspect.signature(getattr(pot.gromov, name))


def _arguments(pot, name, convert):
    xs, xt, _, _ = spiral_pair()
    a, b = xs[::20], xt[::25]  # 20 x 2, 20 x 3
    c1 = pot.dist(a, a, metric="euclidean")
    c2 = pot.dist(b, b, metric="euclidean")
    m = pot.dist(a[:, :1], b[:, :1])
    p, q = pot.unif(20), pot.unif(20)
    args = [c1 / c1.max(), c2 / c2.max(), p, q]
    if name.startswith("fused"):
        args = [m] + args
    args = [convert(x) for x in args]
    if name.startswith("entropic"):
        args += ["square_loss", 5e-3]
    return args


def _types(value):
    """The type structure of a return value: tuples and dicts element by element, list entries
    as the set of their types."""
    if isinstance(value, tuple):
        return ("tuple", [_types(v) for v in value])
    if isinstance(value, dict):
        return ("dict", {k: _types(v) for k, v in value.items()})
    if isinstance(value, list):
        return ("list", sorted({type(v).__name__ for v in value}))
    return type(value).__module__ + "." + type(value).__name__


@pytest.mark.parametrize("name", GROMOV)
@pytest.mark.parametrize("inputs", ["numpy", "torch"])
def test_gromov_returns_pots_types_with_and_without_log(pot, name, inputs):
    convert = lambda x: x  # noqa: E731
    if inputs == "torch":
        torch = pytest.importorskip("torch", reason="torch is not installed")
        convert = torch.from_numpy
    args = _arguments(pot, name, convert)
    # POT's entropic functions take no extra keywords; the others pass gwalign options through.
    extra = {} if name.startswith("entropic") else {"seed": 1}
    for log in (False, True):
        ours = getattr(gromov, name)(*args, log=log, **extra)
        theirs = getattr(pot.gromov, name)(*args, log=log)
        assert _types(ours) == _types(theirs), "log=%s" % log
