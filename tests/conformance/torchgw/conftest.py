"""Our own fixtures for the reference package's tests (scripts/torchgw-conformance.sh): its tests use
these fixture names; the data are ours.

two_datasets: (X_src, X_tgt), two float32 150 x 3 point sets. test_fused_gw / test_pure_wasserstein
  take torch.cdist(X_src, X_tgt), so both sides must share the dimension. X_src is a noisy planar
  spiral lifted to 3-D (third coordinate small noise); X_tgt is a noisy swiss roll (spiral in the
  x-z plane, uniform height in y). Same angle parametrisation, different seeds.
  REFGW_FIXTURE=normal swaps in two i.i.d. standard-normal 150 x 3 sets (a robustness re-run).
two_clusters: 200 x 2 float32, two Gaussian blobs of 100 points (unit spread) 20 apart, so a kNN
  graph with small k is disconnected before stitching.
"""
import os

import numpy as np
import pytest


def _angles(n):
    return np.linspace(0.0, 9.0, n)


@pytest.fixture
def two_datasets():
    n = 150
    if os.environ.get("REFGW_FIXTURE") == "normal":  # robustness check: i.i.d. Gaussian 150 x 3
        rng = np.random.default_rng(0)
        return (rng.normal(size=(n, 3)).astype(np.float32),
                rng.normal(size=(n, 3)).astype(np.float32))
    t = _angles(n)
    r = np.linspace(0.3, 1.0, n)
    rs = np.random.default_rng(7)
    src = np.stack([(r + 0.03 * rs.normal(size=n)) * np.cos(t),
                    (r + 0.03 * rs.normal(size=n)) * np.sin(t),
                    0.02 * rs.normal(size=n)], axis=1)
    rt = np.random.default_rng(8)
    tgt = np.stack([(r + 0.03 * rt.normal(size=n)) * np.cos(t),
                    rt.uniform(0.0, 1.0, size=n),
                    (r + 0.03 * rt.normal(size=n)) * np.sin(t)], axis=1)
    return src.astype(np.float32), tgt.astype(np.float32)


@pytest.fixture
def two_clusters():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(100, 2))
    b = rng.normal(size=(100, 2)) + np.array([20.0, 0.0])
    return np.concatenate([a, b]).astype(np.float32)
