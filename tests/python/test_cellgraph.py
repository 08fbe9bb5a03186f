"""gwalign.cellgraph on numpy arrays against plain numpy / scipy oracles, and its zero-copy paths."""

import numpy as np
import pytest
import scipy.linalg

from gwalign import cellgraph

# Diffusion in float64 with K = 64 against the dense matrix exponential: the Chebyshev tail is
# below 1e-100 at beta' = 0.5, so only rounding of K sparse products remains.
DIFFUSION_TOL_F64 = 1e-12
# float32 signals: K products in float32 round to ~1e-6 relative.
DIFFUSION_TOL_F32 = 2e-5


def random_graph(rng, n, e):
    return rng.integers(0, n, e).astype(np.int32), rng.integers(0, n, e).astype(np.int32)


def test_edge_masks_drop_exactly_the_edges_touching_perturbed_genes():
    rng = np.random.default_rng(1)
    n = 300
    types = [random_graph(rng, n, 2000), random_graph(rng, n, 500)]
    masker = cellgraph.EdgeMasker(n)
    for t, (s, d) in enumerate(types):
        assert masker.add_type("type%d" % t, s, d) == t
    ids = np.array([3, 17, 17, 250, 9], dtype=np.int32)  # duplicates are fine
    ptr = np.array([0, 2, 2, 5], dtype=np.int64)          # sample 1 is empty
    removed = masker.removed_edges(ids, ptr)
    for t, (s, d) in enumerate(types):
        e = len(s)
        want_keep = np.ones(3 * e, dtype=np.uint8)
        for b in range(3):
            pert = set(ids[ptr[b]:ptr[b + 1]].tolist())
            dropped = np.array([s[i] in pert or d[i] in pert for i in range(e)])
            want_keep[b * e:(b + 1) * e][dropped] = 0
        np.testing.assert_array_equal(masker.keep_mask(t, ids, ptr), want_keep)
        positions, rptr = removed[t]
        np.testing.assert_array_equal(positions, np.flatnonzero(want_keep == 0))
        np.testing.assert_array_equal(rptr, [0] + [np.sum(want_keep[:(b + 1) * e] == 0)
                                                   for b in range(3)])


def test_keep_mask_writes_into_the_callers_buffer_and_reads_int32_ids_in_place():
    rng = np.random.default_rng(2)
    s, d = random_graph(rng, 100, 400)
    masker = cellgraph.EdgeMasker(100)
    masker.add_type("t", s, d)
    ids, ptr = np.array([5, 6], dtype=np.int32), np.array([0, 1, 2], dtype=np.int64)
    buf = np.full(2 * 400, 7, dtype=np.uint8)
    out = masker.keep_mask(0, ids, ptr, out=buf)
    assert np.shares_memory(out, buf) and set(np.unique(buf)) <= {0, 1}
    # int64 ids (converted once) give the same mask as int32 ids (read in place).
    np.testing.assert_array_equal(masker.keep_mask(0, ids.astype(np.int64), ptr), buf)
    with pytest.raises(ValueError, match="B \\* E"):
        masker.keep_mask(0, ids, ptr, out=np.zeros(10, dtype=np.uint8))


def test_out_of_range_perturbed_id_is_a_value_error_naming_it():
    masker = cellgraph.EdgeMasker(10)
    masker.add_type("t", np.array([0, 1], dtype=np.int32), np.array([1, 2], dtype=np.int32))
    with pytest.raises(ValueError, match="12"):
        masker.removed_edges(np.array([12], dtype=np.int32), np.array([0, 1]))


def dense_heat(n, s, d, w, beta):
    a = np.zeros((n, n))
    np.add.at(a, (s, d), w)
    deg = a.sum(axis=1)
    inv = np.where(deg > 0, 1 / np.sqrt(np.where(deg > 0, deg, 1)), 0)
    lap = np.eye(n) - inv[:, None] * a * inv[None, :]
    return scipy.linalg.expm(-beta * lap)


@pytest.mark.parametrize("dtype,tol", [(np.float64, DIFFUSION_TOL_F64),
                                       (np.float32, DIFFUSION_TOL_F32)])
def test_heat_diffusion_equals_the_dense_matrix_exponential(dtype, tol):
    rng = np.random.default_rng(3)
    sizes, seq, c, beta = [12, 7, 0], 14, 5, 1.0
    srcs, dsts, ws, ptr = [], [], [], [0]
    for n in sizes:
        e = 3 * n
        s, d = rng.integers(0, max(n, 1), e), rng.integers(0, max(n, 1), e)
        s, d = np.r_[s, d], np.r_[d, s]  # undirected: both directions
        w = rng.uniform(0.5, 2.0, e)
        srcs.append(s[:2 * e] if n else s[:0])
        dsts.append(d[:2 * e] if n else d[:0])
        ws.append(np.r_[w, w] if n else w[:0])
        ptr.append(ptr[-1] + len(srcs[-1]))
    src = np.concatenate(srcs).astype(np.int32)
    dst = np.concatenate(dsts).astype(np.int32)
    w = np.concatenate(ws).astype(np.float32)
    x = rng.normal(size=(3, seq, c)).astype(dtype)
    out = np.empty_like(x)
    y = cellgraph.heat_diffusion(np.array(sizes, np.int32), np.array(ptr, np.int64), src, dst, x,
                                 weights=w, out=out, beta=beta)
    assert np.shares_memory(y, out)
    for b, n in enumerate(sizes):
        sl = slice(ptr[b], ptr[b + 1])
        want = dense_heat(n, src[sl], dst[sl], w[sl].astype(np.float64), beta) @ x[b, :n].astype(
            np.float64)
        np.testing.assert_allclose(y[b, :n], want, rtol=tol, atol=tol)
        assert np.all(y[b, n:] == 0)  # padding rows are exact zeros


def test_aggregate_by_gene_equals_a_numpy_group_mean():
    rng = np.random.default_rng(4)
    b, t, h = 6, 20, 8
    emb = rng.normal(size=(b, t, h)).astype(np.float32)
    ids = rng.integers(0, 30, size=(b, t)).astype(np.int32)
    lengths = np.array([20, 0, 5, 13, 1, 20], dtype=np.int32)
    genes, mean, counts = cellgraph.aggregate_by_gene(emb, ids, lengths, skip_cls=True)
    valid = [(r, p) for r in range(b) for p in range(1, lengths[r])]
    want_genes = np.unique([ids[r, p] for r, p in valid])
    np.testing.assert_array_equal(genes, want_genes)
    for u, g in enumerate(want_genes):
        rows = [emb[r, p].astype(np.float64) for r, p in valid if ids[r, p] == g]
        assert counts[u] == len(rows)
        np.testing.assert_allclose(mean[u], np.mean(rows, axis=0), rtol=1e-6, atol=1e-7)
    assert mean.dtype == np.float32 and mean.flags.c_contiguous


def test_torch_tensors_in_and_out_share_memory_with_the_kernel():
    torch = pytest.importorskip("torch", reason="torch (python3-torch) is not installed")
    rng = np.random.default_rng(5)
    s, d = random_graph(rng, 50, 200)
    masker = cellgraph.EdgeMasker(50)
    masker.add_type("t", torch.from_numpy(s), torch.from_numpy(d))
    ids = torch.tensor([1, 2, 3], dtype=torch.int32)
    ptr = torch.tensor([0, 1, 3], dtype=torch.int64)
    out = torch.full((2 * 200,), 9, dtype=torch.uint8)
    masker.keep_mask(0, ids, ptr, out=out)
    np.testing.assert_array_equal(out.numpy(), masker.keep_mask(0, ids.numpy(), ptr.numpy()))
    x = torch.randn(1, 50, 4, dtype=torch.float64)
    y = torch.empty_like(x)
    src = torch.from_numpy(np.r_[s, d])
    dst = torch.from_numpy(np.r_[d, s])
    cellgraph.heat_diffusion(torch.tensor([50], dtype=torch.int32),
                             torch.tensor([0, 400], dtype=torch.int64), src, dst, x, out=y)
    want = cellgraph.heat_diffusion(np.array([50], np.int32), np.array([0, 400]), src.numpy(),
                                    dst.numpy(), x.numpy())
    np.testing.assert_array_equal(y.numpy(), want)


class FakeDeviceArray:
    """An object that says it lives in device memory (the CUDA Array Interface), to check how the
    device path is chosen and refused without dereferencing its pointer."""

    def __init__(self, shape, typestr):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (0xDEAD0000, False), "strides": None,
                                         "version": 2}


@pytest.mark.skipif(cellgraph.device_count() > 0, reason="a CUDA device is visible")
def test_device_arrays_without_a_device_are_refused_with_the_reason():
    masker = cellgraph.EdgeMasker(10)
    masker.add_type("t", np.array([0, 1], dtype=np.int32), np.array([1, 2], dtype=np.int32))
    ids, ptr = FakeDeviceArray((2,), "<i4"), FakeDeviceArray((3,), "<i8")
    want = ValueError if cellgraph._core.has_cuda else NotImplementedError
    match = "no CUDA device" if cellgraph._core.has_cuda else "built with CUDA"
    for call in (lambda: masker.keep_mask(0, ids, ptr), lambda: masker.removed_edges(ids, ptr),
                 lambda: cellgraph.aggregate_by_gene(FakeDeviceArray((1, 2, 3), "<f4"),
                                                     FakeDeviceArray((1, 2), "<i4"),
                                                     FakeDeviceArray((1,), "<i4"), id_bound=5)):
        with pytest.raises(want, match=match):
            call()


def test_the_device_of_host_memory_is_refused_not_guessed():
    # An array-interface object's device is asked of the CUDA runtime for its pointer (not taken
    # as 0): host memory is an error naming it, in a build without CUDA a NotImplementedError.
    host = np.zeros(8)
    if cellgraph._core.has_cuda:
        with pytest.raises(ValueError, match="is not CUDA device memory"):
            cellgraph._cuda.pointer_device(host.ctypes.data)
    else:
        with pytest.raises(NotImplementedError, match="built with CUDA"):
            cellgraph._cuda.pointer_device(host.ctypes.data)


def test_mixing_device_and_host_arrays_in_one_call_is_a_value_error():
    masker = cellgraph.EdgeMasker(10)
    masker.add_type("t", np.array([0, 1], dtype=np.int32), np.array([1, 2], dtype=np.int32))
    with pytest.raises(ValueError, match="mix of device and host"):
        masker.keep_mask(0, FakeDeviceArray((2,), "<i4"), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="mix of device and host"):
        masker.keep_mask(0, np.array([1, 2], np.int32), np.array([0, 1, 2]),
                         out=FakeDeviceArray((20,), "|u1"))
