"""Times gwalign.joint_embedding (bench/RESULTS.md, "Python package"): a 40,000 x 50 anchor, a
50,000-point child on a 10-neighbour ring graph, a CSR plan with 10 entries per row, dimension 30;
median / min / max of 5 runs with lambda_reg 0 and 1.

    PYTHONPATH=build/python /usr/bin/python3 bench/peers/joint_embedding_time.py
"""
import time, numpy as np, scipy.sparse as sp, gwalign
rng = np.random.default_rng(0)
n, m, d, dim, per_row = 50000, 40000, 50, 30, 10
a = rng.normal(size=(m, d))
rows = np.repeat(np.arange(n), per_row); cols = rng.integers(0, m, size=n * per_row)
T = sp.csr_matrix((rng.uniform(size=n * per_row), (rows, cols)), shape=(n, m))
# a ring-lattice graph with 10 neighbours per node stands in for the kNN graph
idx = np.arange(n); nb = np.concatenate([(idx + s) % n for s in (1,2,3,4,5,-1,-2,-3,-4,-5)])
g = sp.csr_matrix((np.ones(len(nb)), (np.tile(idx, 10), nb)), shape=(n, n))
for lam in (0.0, 1.0):
    times = []
    for _ in range(5):
        t = time.perf_counter()
        gwalign.joint_embedding({"a": a, "b": None}, {("b", "a"): T}, anchor="a", graphs={"b": g}, dimension=dim, lambda_reg=lam)
        times.append(time.perf_counter() - t)
    print("lambda %g: median %.3fs min %.3f max %.3f" % (lam, np.median(times), min(times), max(times)))
