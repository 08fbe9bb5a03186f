"""The same settings through the CLI and through Python give the same strategy (gw::choose_strategy
decides for both) and, for a fixed seed and thread count, the same matching bit for bit."""

import json

import numpy as np
import pytest

import gwalign
from conftest import DATA, read_h5, spiral_pair

# (CLI flags, the same settings as gwalign.align keywords). The first is the example of the issue
# that found the two front ends running different solvers; the others cover auto's defaults, an
# exact-solver setting and an explicit support.
CASES = [
    (["--knn", "5", "--eps", "0.005", "--M", "80", "--max-iter", "300", "--mode", "landmark",
      "--seed", "1"],
     dict(knn=5, epsilon=0.005, num_anchors=80, max_iterations=300, distance_mode="landmark",
          seed=1)),
    (["--knn", "5", "--seed", "3"], dict(knn=5, seed=3)),
    (["--knn", "5", "--exact-tol", "1e-6"], dict(knn=5, exact_tolerance=1e-6)),
    (["--knn", "5", "--support", "sparse", "--support-size", "32"],
     dict(knn=5, support="sparse", support_size=32)),
]


@pytest.mark.parametrize("flags,keywords", CASES, ids=["issue-example", "defaults",
                                                       "exact-setting", "sparse"])
def test_cli_and_python_choose_the_same_strategy_and_matching(cli, tmp_path, flags, keywords):
    xs, ys, _, _ = spiral_pair()
    src, tgt = DATA / "spiral_400.h5", DATA / "swissroll_500.h5"
    threads = ["--threads", "2"]
    explained = cli("align", src, tgt, "--explain", *flags, *threads).stdout
    strategy = gwalign.explain(xs, ys, threads=2, **keywords)
    assert explained.strip() == strategy.explain().strip()

    out, report = tmp_path / "plan.h5", tmp_path / "run.json"
    cli("align", src, tgt, "-o", out, "--report", report, "--quiet", *flags, *threads)
    cli_matching = read_h5(out, "/matching")
    with open(report) as f:
        cli_strategy = json.load(f)["result"]["strategy"]
    result = gwalign.align(xs, ys, threads=2, progress=False, **keywords)
    assert json.loads(strategy.to_json()) == cli_strategy
    assert json.loads(result.strategy.to_json()) == cli_strategy
    np.testing.assert_array_equal(np.asarray(result.matching), cli_matching)


def test_explain_reports_the_sampled_loop_for_the_issue_example_on_both_front_ends(cli):
    xs, ys, _, _ = spiral_pair()
    strategy = gwalign.explain(xs, ys, **CASES[0][1])
    assert strategy.solver == "sampled"
    assert "num_anchors" in strategy.solver_reason
    assert "epsilon" in strategy.solver_reason
    text = cli("align", DATA / "spiral_400.h5", DATA / "swissroll_500.h5", "--explain",
               *CASES[0][0]).stdout
    assert text.startswith("solver     sampled")
