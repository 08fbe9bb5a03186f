"""gwalign.spatial.map_atlas: a generated dissociated atlas mapped onto a section of the same
synthetic tissue, cell types carried by gwalign.transfer and scored against the section's truth,
the same plan as `gwalign map`, and one-line errors on bad input; align_slices' features= and
registration= arguments against `gwalign slices --features / --registration`."""

import numpy as np
import pytest
import scipy.io

import gwalign
import gwalign.spatial
from conftest import run_cli

ad = pytest.importorskip("anndata")

_run = run_cli


@pytest.fixture(scope="module")
def mapping(tmp_path_factory):
    root = tmp_path_factory.mktemp("mapping")
    _run("generate", "tissue", "--sections", 1, "-n", 900, "--atlas", 1200, "--seed", 2, "--out-dir", root / "in")
    atlas = ad.read_h5ad(root / "in" / "atlas.h5ad")
    section = ad.read_h5ad(root / "in" / "section_0.h5ad")
    _run("map", root / "in" / "atlas.h5ad", root / "in" / "section_0.h5ad", "--out-dir", root / "cli",
         "--transfer", "celltype")
    plan, report = gwalign.spatial.map_atlas(atlas, section)
    return dict(root=root, atlas=atlas, section=section, plan=plan, report=report)


def test_map_atlas_gives_the_cli_plan(mapping):
    cli_plan = scipy.io.mmread(str(mapping["root"] / "cli" / "plan.mtx")).tocsr()
    plan = mapping["plan"].tocsr()
    assert plan.shape == (mapping["atlas"].n_obs, mapping["section"].n_obs) == cli_plan.shape
    # The CLI writes each row's 10 largest entries (--top-k), Python the whole plan: the same
    # library calls on the same float32 counts, so the CLI's entries are Python's to the file's 17
    # significant digits, and they are each row's largest.
    rows, cols = cli_plan.nonzero()
    np.testing.assert_allclose(np.asarray(plan[rows, cols]).ravel(), np.asarray(cli_plan[rows, cols]).ravel(),
                               rtol=1e-12, atol=0)
    dense = plan.toarray()
    for i in range(0, plan.shape[0], 97):
        kept = cli_plan[i].toarray().ravel()
        assert dense[i][kept == 0].max(initial=0.0) <= kept.max() + 1e-300
    assert mapping["report"]["strategy"]["support"] == "dense"  # 1,200 x ~900 is under the dense limit
    assert mapping["report"]["options"]["rho_a"] == pytest.approx(gwalign._core.MAPPING_RHO_A)


def test_cell_types_reach_the_section_as_through_the_cli(mapping):
    section = mapping["section"].copy()
    gwalign.transfer(mapping["atlas"], section, mapping["plan"], keys=["celltype"],
                     key_added="celltype_transferred")
    truth = mapping["section"].obs["celltype"].astype(str).to_numpy()
    mine = section.obs["celltype_transferred"].astype(str).to_numpy()
    cli = ad.read_h5ad(mapping["root"] / "cli" / "section_0.h5ad").obs["celltype_transferred"].astype(str).to_numpy()
    # Measured 1.0 at this size, both from the whole plan and from the CLI's top-10 rows (8 types;
    # a plan unrelated to expression scores about the largest type's share, 0.2).
    assert np.mean(mine == truth) > 0.95
    assert np.mean(cli == truth) > 0.95


def test_bad_input_raises_one_line_value_errors(mapping):
    atlas, section = mapping["atlas"], mapping["section"]
    cases = [
        (dict(adatas=(section, atlas)), "obsm['spatial']"),  # the "section" given has no coordinates
        (dict(adatas=(atlas, section), fused_weight=0.0), "fused_weight"),
        (dict(adatas=(atlas, section), atlas_rep="X_scVI"), "X_scVI"),
        (dict(adatas=(atlas, section), expression="kl"), "expression"),
    ]
    for kwargs, fragment in cases:
        a, s = kwargs.pop("adatas")
        with pytest.raises(ValueError) as info:
            gwalign.spatial.map_atlas(a, s, **kwargs)
        assert fragment in str(info.value) and "\n" not in str(info.value)


def test_features_key_uses_the_given_representation_as_the_cli_does(mapping, tmp_path):
    """features="spatial_true": the generator's true positions as both sides' representation (the
    atlas's cells carry theirs too); the plan equals `gwalign map --features obsm:spatial_true`'s
    entries, and differs from the expression PCA's."""
    root = mapping["root"]
    _run("map", root / "in" / "atlas.h5ad", root / "in" / "section_0.h5ad", "--out-dir", tmp_path / "cli",
         "--features", "obsm:spatial_true")
    cli_plan = scipy.io.mmread(str(tmp_path / "cli" / "plan.mtx")).tocsr()
    plan, _ = gwalign.spatial.map_atlas(mapping["atlas"], mapping["section"], features="spatial_true")
    rows, cols = cli_plan.nonzero()
    np.testing.assert_allclose(np.asarray(plan.tocsr()[rows, cols]).ravel(),
                               np.asarray(cli_plan[rows, cols]).ravel(), rtol=1e-12, atol=0)
    assert abs(plan - mapping["plan"]).max() > 1e-6
    with pytest.raises(ValueError) as info:
        gwalign.spatial.map_atlas(mapping["atlas"], mapping["section"], features="X_scVI")
    assert "X_scVI" in str(info.value) and "\n" not in str(info.value)


def test_align_slices_features_key_matches_slices_features(tmp_path):
    _run("generate", "tissue", "--sections", 2, "-n", 600, "--seed", 4, "--out-dir", tmp_path / "in")
    paths = [tmp_path / "in" / "section_0.h5ad", tmp_path / "in" / "section_1.h5ad"]
    _run("slices", *paths, "--out-dir", tmp_path / "cli", "--features", "obsm:spatial_true", "--expression", "cosine")
    sections = [ad.read_h5ad(p) for p in paths]
    gwalign.spatial.align_slices(sections, features="spatial_true", expression="cosine")
    cli = ad.read_h5ad(tmp_path / "cli" / "section_1.h5ad")
    np.testing.assert_allclose(sections[1].obsm["spatial_aligned"], cli.obsm["spatial_aligned"], rtol=0, atol=1e-9)


def test_align_slices_registration_argument_matches_the_cli(tmp_path):
    """registration="search" on balanced sections: the pattern search of `--registration search`,
    the same registered coordinates; an unknown mode is a one-line error."""
    _run("generate", "tissue", "--sections", 2, "-n", 700, "--seed", 5, "--out-dir", tmp_path / "in")
    paths = [tmp_path / "in" / "section_0.h5ad", tmp_path / "in" / "section_1.h5ad"]
    _run("slices", *paths, "--out-dir", tmp_path / "cli", "--registration", "search", "--search-extent", 0.3)
    sections = [ad.read_h5ad(p) for p in paths]
    _, reports = gwalign.spatial.align_slices(sections, registration="search", search_extent=0.3)
    assert reports[0]["registration_method"] == "search"
    cli = ad.read_h5ad(tmp_path / "cli" / "section_1.h5ad")
    np.testing.assert_allclose(sections[1].obsm["spatial_aligned"], cli.obsm["spatial_aligned"], rtol=0, atol=1e-9)
    with pytest.raises(ValueError) as info:
        gwalign.spatial.align_slices(sections, registration="icp")
    assert "icp" in str(info.value) and "\n" not in str(info.value)
