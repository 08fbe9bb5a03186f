"""The notebook-style examples in python/examples/ run headless and produce their figures."""

import os
import subprocess
import sys

from conftest import DATA, SOURCE_DIR


def test_align_h5ad_example_saves_a_png_and_reaches_quality(tmp_path):
    out = tmp_path / "aligned.png"
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(SOURCE_DIR / "python/examples/align_h5ad.py"),
                           str(DATA / "tiny_source.h5ad"), str(DATA / "tiny_target.h5ad"),
                           "-o", str(out)], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    rho = float(proc.stdout.split("|rho| of the matched angles:")[1].split()[0])
    assert rho >= 0.99
