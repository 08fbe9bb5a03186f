"""Keeps the peers' BLAS from running on its generic fallback kernels.

Debian 12's OpenBLAS (0.3.21) picks its kernels by CPU model. A model newer than it knows (e.g.
Intel Xeon family 6 model 207, Emerald Rapids) falls back to "Prescott" (SSE3) kernels: there a
150 x 150 float64 GEMM runs 2.3x slower than with the SkylakeX kernels the CPU supports, and POT's
exact GW over the 780 pairs of a 40-shape collection took 0.258 s per pair instead of 0.150
(bench/RESULTS.md, "Peers and their BLAS") -- a comparison that would flatter gwalign.

call() (before the script's timed work) asks OpenBLAS, through threadpoolctl, which kernels it
chose; when that is Prescott but the CPU has AVX-512 (SkylakeX kernels) or AVX2 + FMA (Haswell),
it re-executes the script with OPENBLAS_CORETYPE set accordingly, once, and says so on stderr. A
user's own OPENBLAS_CORETYPE is never changed. describe() names the kernels in use, for reports.
"""
import os
import sys

_GENERIC = {"prescott", "core2", "penryn", "dunnington", "nehalem", "generic", "katmai"}


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _openblas_architecture():
    try:
        import numpy  # noqa: F401  (loads the BLAS threadpoolctl inspects)
        import threadpoolctl
    except ImportError:
        return None
    for pool in threadpoolctl.threadpool_info():
        if pool.get("internal_api") == "openblas":
            return pool.get("architecture")
    return None


def describe():
    """The OpenBLAS kernels in use (e.g. 'SkylakeX'), or None when unknown / not OpenBLAS."""
    return _openblas_architecture()


def call():
    """Re-executes this script with better OpenBLAS kernels when OpenBLAS fell back to generic."""
    if os.environ.get("OPENBLAS_CORETYPE") or os.environ.get("GWALIGN_PEER_BLAS_CHECKED"):
        return
    architecture = _openblas_architecture()
    if architecture is None or architecture.lower() not in _GENERIC:
        return
    flags = _cpu_flags()
    if {"avx512f", "avx512dq", "avx512bw", "avx512vl"} <= flags:
        core = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        core = "Haswell"
    else:
        return
    print(f"peer BLAS: OpenBLAS chose its generic {architecture} kernels on this CPU; "
          f"re-running with OPENBLAS_CORETYPE={core} so the peer is not handicapped",
          file=sys.stderr)
    env = dict(os.environ, OPENBLAS_CORETYPE=core, GWALIGN_PEER_BLAS_CHECKED="1")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)
