"""README.md's Python section runs as written, in a fresh interpreter, against this build.

The lines are read from README.md itself (its "## Python" section: every ```sh block is run by
bash, every ```python block by the interpreter), from the source folder (they read data/), with
the README's `build/python` replaced by this build's python/ folder and `/usr/bin/python3` by the
interpreter the package was built for (the same one on a Debian machine, where CMake finds it).
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import gwalign
from conftest import SOURCE_DIR

BINARY_DIR = os.environ.get("GWALIGN_BINARY_DIR")
# The README's alignment (spiral -> swiss roll, 5-NN graphs, defaults otherwise) recovers the
# angles to |rho| ~0.999; a broken solve or a lost geometry falls far below.
MIN_ABS_RHO = 0.99


def python_section_blocks():
    text = (SOURCE_DIR / "README.md").read_text()
    start = text.index("\n## Python\n")
    end = text.index("\n## ", start + 1)
    section = text[start:end]
    return re.findall(r"^```(sh|python)\n(.*?)^```$", section, flags=re.S | re.M)


def fresh_env():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    return env


def for_this_build(code):
    return (code.replace("PYTHONPATH=build/python ", "PYTHONPATH=%s/python " % BINARY_DIR)
                .replace("/usr/bin/python3", sys.executable))


@pytest.mark.skipif(not BINARY_DIR, reason="GWALIGN_BINARY_DIR unset (run through ctest)")
def test_readme_python_section_shell_lines_import_this_build_and_align_the_bundled_data():
    blocks = [code for kind, code in python_section_blocks() if kind == "sh"]
    assert blocks, "README.md's Python section has no ```sh block"
    assert all("PYTHONPATH=build/python /usr/bin/python3" in code for code in blocks)
    for code in blocks:
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", for_this_build(code)],
                              capture_output=True, text=True, env=fresh_env(), cwd=SOURCE_DIR)
        assert proc.returncode == 0, "README lines failed:\n%s\n%s" % (code, proc.stderr)
        out = proc.stdout
        if "__version__" in code:
            version, path = out.split()[:2]
            assert version == gwalign.__version__
            assert pathlib.Path(path).resolve().is_relative_to(pathlib.Path(BINARY_DIR).resolve())
        if "abs_rho" in code:
            assert float(out.split("|rho| =")[1].split()[0]) >= MIN_ABS_RHO


@pytest.mark.skipif(not BINARY_DIR, reason="GWALIGN_BINARY_DIR unset (run through ctest)")
def test_readme_python_section_python_block_runs_in_a_fresh_interpreter():
    blocks = [code for kind, code in python_section_blocks() if kind == "python"]
    assert blocks, "README.md's Python section has no ```python block"
    env = fresh_env()
    env["PYTHONPATH"] = os.path.join(BINARY_DIR, "python")
    for code in blocks:
        # The block's last names are checked so that a block cut short cannot pass.
        check = ("\nassert r.plan.shape == (400, 500)\n"
                 "assert emb['a'].shape[0] == 400 and 'gw_plan' in adata_a.obsm\n"
                 "assert list(keep) == [0, 0, 1]\n")
        proc = subprocess.run([sys.executable, "-c", code + check], capture_output=True,
                              text=True, env=env, cwd=SOURCE_DIR)
        assert proc.returncode == 0, "README block failed:\n%s\n%s" % (code, proc.stderr)
