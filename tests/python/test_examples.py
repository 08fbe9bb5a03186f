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


def test_tissue_slices_example_saves_a_png_and_transfers_domains(cli, tmp_path):
    # Three small generated sections (396, 386, 422 cells): measured domain accuracies 0.611 and
    # 0.595 for the two pushes; five layers make a chance level near 0.25.
    cli("generate", "tissue", "--sections", 3, "-n", 400, "--seed", 1, "--out-dir", tmp_path / "in")
    out = tmp_path / "slices.png"
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(SOURCE_DIR / "python/examples/tissue_slices.py"),
                           *(str(tmp_path / "in" / f"section_{s}.h5ad") for s in range(3)),
                           "-o", str(out)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    accuracies = [float(line.rsplit("accuracy", 1)[1]) for line in proc.stdout.splitlines()
                  if "transfer" in line and "accuracy" in line]
    assert len(accuracies) == 2 and min(accuracies) > 0.5
