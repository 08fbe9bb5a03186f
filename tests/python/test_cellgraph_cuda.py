"""gwalign.cellgraph on CUDA device arrays (gwalign's DeviceBuffer, and torch CUDA tensors when
torch has CUDA) against the CPU kernels on the same data. Skipped without a visible CUDA device;
ctest runs this file under the labels "python" and "gpu" (scripts/gpu-check.sh)."""

import numpy as np
import pytest

from gwalign import cellgraph

pytestmark = pytest.mark.skipif(cellgraph.device_count() == 0,
                                reason="no CUDA device is visible to gwalign")

# float64 diffusion: the device and the CPU run the same K Chebyshev steps in another summation
# order (atomics-free CSR rows, but FMA contraction differs): relative rounding ~1e-15 per step.
DIFFUSION_TOL_F64 = 1e-12
DIFFUSION_TOL_F32 = 2e-5
# Aggregation by atomics sums in a varying order (double accumulators).
ATOMICS_TOL = 1e-12


def cuda():
    return cellgraph._core.cellgraph.cuda


def stream():
    return cuda().Stream.create(0)


def upload(a, s):
    return cellgraph.DeviceBuffer.from_numpy(np.ascontiguousarray(a), s)


def masker_with_types(rng, n=400):
    masker = cellgraph.EdgeMasker(n)
    for t, e in enumerate((3000, 700)):
        masker.add_type("t%d" % t, rng.integers(0, n, e).astype(np.int32),
                        rng.integers(0, n, e).astype(np.int32))
    return masker


def random_batch(rng, n, b):
    sizes = rng.integers(0, 6, b)
    ptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    ids = rng.integers(0, n, ptr[-1]).astype(np.int32)
    return ids, ptr


def test_device_buffer_round_trips_every_dtype_and_exposes_the_array_interface():
    rng = np.random.default_rng(10)
    s = stream()
    for a in (rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=5),
              rng.integers(-9, 9, 7).astype(np.int32), rng.integers(-9, 9, 7),
              rng.integers(0, 2, 9).astype(np.uint8)):
        buf = upload(a, s)
        np.testing.assert_array_equal(buf.numpy(), a)
        cai = buf.__cuda_array_interface__
        assert tuple(cai["shape"]) == a.shape and cai["data"][0] == buf.ptr != 0


def test_keep_masks_and_removal_lists_equal_the_cpu_on_random_batches():
    rng = np.random.default_rng(11)
    masker = masker_with_types(rng)
    s = stream()
    for _ in range(5):
        ids, ptr = random_batch(rng, 400, int(rng.integers(1, 40)))
        d_ids, d_ptr = upload(ids, s), upload(ptr, s)
        for t in range(masker.num_types):
            out = cellgraph.DeviceBuffer.empty([(len(ptr) - 1) * masker.num_edges(t)], "uint8", s)
            got = masker.keep_mask(t, d_ids, d_ptr, out=out, stream=s.handle)
            assert got is out  # written in place
            np.testing.assert_array_equal(out.numpy(), masker.keep_mask(t, ids, ptr))
        for (pos, rp), (want_pos, want_ptr) in zip(
                masker.removed_edges(d_ids, d_ptr, stream=s.handle),
                masker.removed_edges(ids, ptr)):
            np.testing.assert_array_equal(pos.numpy(), want_pos)
            np.testing.assert_array_equal(rp.numpy(), want_ptr)


def test_an_invalid_device_batch_raises_the_cpu_error_when_checked():
    masker = masker_with_types(np.random.default_rng(12))
    s = stream()
    ids, ptr = upload(np.array([5, 999], np.int32), s), upload(np.array([0, 2], np.int64), s)
    with pytest.raises(ValueError, match="999"):
        masker.keep_mask(0, ids, ptr, stream=s.handle)


@pytest.mark.parametrize("dtype,tol", [(np.float64, DIFFUSION_TOL_F64),
                                       (np.float32, DIFFUSION_TOL_F32)])
def test_heat_diffusion_on_device_arrays_equals_the_cpu(dtype, tol):
    rng = np.random.default_rng(13)
    sizes, seq, c = np.array([30, 0, 17], np.int32), 32, 6
    ptr, srcs, dsts = [0], [], []
    for n in sizes:
        e = 4 * n
        s_, d_ = rng.integers(0, max(n, 1), e), rng.integers(0, max(n, 1), e)
        srcs.append(np.r_[s_, d_][:2 * e])
        dsts.append(np.r_[d_, s_][:2 * e])
        ptr.append(ptr[-1] + 2 * e)
    src, dst = np.concatenate(srcs).astype(np.int32), np.concatenate(dsts).astype(np.int32)
    op = cellgraph.HeatDiffusion(sizes, np.array(ptr, np.int64), src, dst, seq_len=seq, beta=0.7)
    x = rng.normal(size=(3, seq, c)).astype(dtype)
    s = stream()
    dx = upload(x, s)
    dy = op.apply(dx, stream=s.handle)
    s.synchronize()
    np.testing.assert_allclose(dy.numpy(), op.apply(x), rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="\\[B, S, C\\]"):
        op.apply(upload(x[:, :5], s), stream=s.handle)


@pytest.mark.parametrize("method", ["sort", "atomics"])
def test_aggregate_by_gene_on_device_arrays_equals_the_cpu(method):
    rng = np.random.default_rng(14)
    b, t, h = 7, 25, 16
    emb = rng.normal(size=(b, t, h))
    ids = rng.integers(0, 50, size=(b, t)).astype(np.int32)
    lengths = rng.integers(0, t + 1, b).astype(np.int32)
    s = stream()
    genes, mean, counts = cellgraph.aggregate_by_gene(upload(emb, s), upload(ids, s),
                                                      upload(lengths, s), id_bound=50,
                                                      method=method, stream=s.handle)
    want = cellgraph.aggregate_by_gene(emb, ids, lengths)
    np.testing.assert_array_equal(genes.numpy(), want[0])
    np.testing.assert_array_equal(counts.numpy(), want[2])
    if method == "sort":
        np.testing.assert_array_equal(mean.numpy(), want[1])  # same order: bit for bit
    else:
        np.testing.assert_allclose(mean.numpy(), want[1], rtol=ATOMICS_TOL, atol=ATOMICS_TOL)


def test_torch_cuda_tensors_run_on_the_current_stream_without_copies():
    torch = pytest.importorskip("torch", reason="torch (python3-torch) is not installed")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    rng = np.random.default_rng(15)
    masker = masker_with_types(rng)
    ids, ptr = random_batch(rng, 400, 16)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t_ids = torch.from_numpy(ids).cuda()
        t_ptr = torch.from_numpy(ptr).cuda()
        out = torch.empty(16 * masker.num_edges(0), dtype=torch.uint8, device="cuda")
        pointer = out.data_ptr()
        got = masker.keep_mask(0, t_ids, t_ptr, out=out)
        assert got is out and out.data_ptr() == pointer
        removed = masker.removed_edges(t_ids, t_ptr)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), masker.keep_mask(0, ids, ptr))
    np.testing.assert_array_equal(removed[0][0].cpu().numpy(), masker.removed_edges(ids, ptr)[0][0])


def test_device_objects_cached_per_stream_outlive_the_stream_until_exit():
    """aggregate_by_gene caches its device aggregator per (device, stream) for the process, and an
    EdgeMasker / HeatDiffusion keeps its device copy per stream: these outlive a stream object
    the caller drops. Their destructors at interpreter exit once synchronized the destroyed stream
    and crashed in the driver (exit status -11 after every test passed, on an H100)."""
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent("""
        import gc
        import numpy as np
        from gwalign import cellgraph
        cuda = cellgraph._core.cellgraph.cuda
        rng = np.random.default_rng(3)
        s = cuda.Stream.create(0)
        up = lambda a: cellgraph.DeviceBuffer.from_numpy(np.ascontiguousarray(a), s)
        emb = rng.normal(size=(3, 10, 4))
        ids = rng.integers(0, 9, size=(3, 10)).astype(np.int32)
        lengths = np.array([10, 4, 0], np.int32)
        genes, mean, counts = cellgraph.aggregate_by_gene(up(emb), up(ids), up(lengths),
                                                          id_bound=9, stream=s.handle)
        s.synchronize()
        assert np.array_equal(mean.numpy(), cellgraph.aggregate_by_gene(emb, ids, lengths)[1])
        masker = cellgraph.EdgeMasker(20)
        masker.add_type("t", rng.integers(0, 20, 50).astype(np.int32),
                        rng.integers(0, 20, 50).astype(np.int32))
        pid, ptr = np.array([1, 2, 3], np.int32), np.array([0, 1, 3], np.int64)
        keep = masker.keep_mask(0, up(pid), up(ptr), stream=s.handle)
        s.synchronize()
        assert np.array_equal(keep.numpy(), masker.keep_mask(0, pid, ptr))
        del genes, mean, counts, keep, up, s  # the stream goes; the caches keep its users
        gc.collect()
        print("done")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "done" in proc.stdout, (proc.returncode, proc.stderr[-2000:])
