"""Tissue sections on AnnData: gwalign.spatial.align_slices and gwalign.transfer.

The same library calls as `gwalign slices` and `gwalign transfer` (spatial/ in the C++ tree): the
shared genes, the expression features (log1p of normalized counts, a joint PCA), fused GW per pair
of sections, a weighted Procrustes registration, and push / pull annotation transfer. Given the
same sections and options, the registered coordinates equal the CLI's.

    import gwalign.spatial
    plans, reports = gwalign.spatial.align_slices([a, b, c])        # obsm["spatial_aligned"]
    gwalign.transfer(a, b, plans[0], keys=["cell_type"], key_added="cell_type_from_a")
"""

from __future__ import annotations

import json

import numpy as np
import scipy.sparse as sp

from . import _core
from ._align import make_options

__all__ = ["align_slices", "map_atlas", "transfer"]


def _name(adata, s):
    filename = getattr(adata, "filename", None)
    return str(filename) if filename else "section %d" % s


def _coordinates(adata, key, name):
    if key not in adata.obsm:
        raise ValueError("%s has no obsm[%r] (the spot / cell coordinates); obsm keys: %s; name "
                         "another with spatial_key=" % (name, key, ", ".join(adata.obsm.keys()) or "none"))
    xy = np.asarray(adata.obsm[key], dtype=np.float64)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError("%s: obsm[%r] is %s; sections are aligned by n x 2 in-plane coordinates"
                         % (name, key, " x ".join(map(str, xy.shape))))
    if not np.all(np.isfinite(xy)):
        raise ValueError("%s: obsm[%r] holds a non-finite coordinate" % (name, key))
    return np.ascontiguousarray(xy)


def _expression_blocks(adatas, names):
    """X of every section restricted to the shared genes (float32, in the first section's order),
    as `gwalign slices` reads it."""
    shared, columns = _core.spatial_shared_genes([[str(v) for v in a.var_names] for a in adatas])
    if not shared:
        raise ValueError("no gene (var name) is shared by %s; the expression cost needs shared genes "
                         "(or give fused_weight=0)" % ", ".join(names))
    blocks = []
    for adata, cols in zip(adatas, columns):
        x = adata.X[:, np.asarray(cols, dtype=np.int64)]
        x = x.toarray() if sp.issparse(x) else np.asarray(x)
        blocks.append(np.ascontiguousarray(x, dtype=np.float32))
    return shared, blocks


def _representation(adatas, names, key, expression):
    """Every AnnData's obsm[key] (the same width everywhere) as the expression features, rows
    scaled to unit length for expression="cosine" -- as `--features obsm:KEY` reads them."""
    reps = []
    for adata, name in zip(adatas, names):
        if key not in adata.obsm:
            raise ValueError("%s has no obsm[%r]; obsm keys: %s" % (name, key, ", ".join(adata.obsm.keys()) or "none"))
        rep = np.ascontiguousarray(np.asarray(adata.obsm[key], dtype=np.float64))
        if rep.ndim != 2 or rep.shape[0] != adata.n_obs or not np.all(np.isfinite(rep)):
            raise ValueError("%s: obsm[%r] is not a finite matrix with one row per cell" % (name, key))
        if reps and rep.shape[1] != reps[0].shape[1]:
            raise ValueError("obsm[%r] is %d wide in %s but %d in %s; features= needs one representation "
                             "shared by all" % (key, rep.shape[1], name, reps[0].shape[1], names[0]))
        reps.append(_core.spatial_unit_rows(rep) if expression == "cosine" else rep)
    return reps


def _plan_matrix(pair):
    if "plan_dense" in pair:
        return sp.csr_matrix(pair.pop("plan_dense"))
    data, indices, indptr = pair.pop("plan_csr")
    return sp.csr_matrix((data, indices, indptr), shape=(pair["n"], pair["k"]))


def align_slices(adatas, *, fused_weight=0.9, expression="pca", pca_dims=30, features=None, overlap=None,
                 reference=None, spatial_key="spatial", key_added="spatial_aligned", z_spacing=1.0,
                 refine=0, allow_reflection=False, registration="auto", search_extent=0.4, copy=False,
                 **solver_options):
    """Align serial tissue sections into one frame (PASTE's pairwise alignment and stacking).

    adatas: two or more AnnData, each with n x 2 coordinates in obsm[spatial_key] and counts in X.
    For each pair (consecutive sections, or each section and `reference`), fused GW aligns the
    in-plane geometries with an expression cost on the shared genes (expression "pca": Euclidean
    on a joint PCA of log1p-normalized counts, pca_dims components; "cosine": their angle), weighted
    by fused_weight (PASTE's alpha = 0.1 on the geometry is 0.9); features="KEY" uses every
    section's obsm[KEY] (a joint X_pca, X_scVI) instead of the PCA. The plan registers the moving
    section onto the fixed one (weighted Procrustes); the first section (or the reference) sets
    the frame, and section s gets z = s x z_spacing. overlap: None (balanced), a fraction in
    (0, 1] of each section's mass (partial transport), or "auto" (estimated per pair); with an
    overlap below 1 or "auto", each pair is registered by the pattern search of `gwalign slices
    --registration auto` (a geometric plan's rotation, an expression search for the position,
    then the partial plan in the registered frame; reports[p]["registration_method"]);
    registration="plan" keeps the plan's fit, "search" searches for every pair (also balanced
    ones: 0.009 of the diameter instead of 0.056 on 90%-overlap sections, at about twice the
    time), search_extent the translations searched (+- that fraction of the diameter). refine:
    rounds that solve again with the registered coordinates beside the expression features.
    solver_options: gw::Options fields by name (seed, knn, num_landmarks, ...), as gwalign.align;
    distance_mode defaults to "landmark", as in `gwalign slices`.

    Writes obsm[key_added] (n x 3 float64: x, y, z) into each AnnData, or into copies when
    copy=True (the inputs untouched). Returns (plans, reports), or (adatas, plans, reports) with
    copy=True: plans[p] is a scipy.sparse.csr_matrix whose rows are reports[p]["fixed"]'s cells and
    columns reports[p]["moving"]'s; reports[p] holds the fused loss, the registration residual,
    rotation, translation, overlap mass, timings and "solve" (the solve's report).
    """
    adatas = list(adatas)
    if len(adatas) < 2:
        raise ValueError("align_slices needs at least two sections, got %d" % len(adatas))
    names = [_name(a, s) for s, a in enumerate(adatas)]
    if reference is not None and not 0 <= int(reference) < len(adatas):
        raise ValueError("reference must be a section index in [0, %d), got %r" % (len(adatas), reference))
    if expression not in ("pca", "cosine"):
        raise ValueError("expression must be 'pca' or 'cosine', got %r" % (expression,))
    if "partial_mass" in solver_options:
        raise ValueError("partial_mass is set per pair by overlap= in align_slices")
    coordinates = [_coordinates(a, spatial_key, n) for a, n in zip(adatas, names)]
    options = make_options(None, **solver_options)
    options.fused_weight = fused_weight
    if "distance_mode" not in solver_options:
        options.distance_mode = "landmark"
    rep_key, features = features, []
    if fused_weight > 0 and rep_key is not None:
        features = _representation(adatas, names, rep_key, expression)
    elif fused_weight > 0:
        _, blocks = _expression_blocks(adatas, names)
        features, _, _ = _core.spatial_expression_features(blocks, expression, int(pca_dims),
                                                           int(options.seed))
    aligned, pairs = _core.spatial_align_sections(
        names, coordinates, features, options, overlap, -1 if reference is None else int(reference),
        float(z_spacing), int(refine), bool(allow_reflection), str(registration), float(search_extent))
    plans, reports = [], []
    for pair in pairs:
        plans.append(_plan_matrix(pair))
        pair["solve"] = json.loads(pair.pop("solve_json"))
        reports.append(pair)
    out = [a.copy() for a in adatas] if copy else adatas
    for adata, xyz in zip(out, aligned):
        adata.obsm[key_added] = np.asarray(xyz)
    return (out, plans, reports) if copy else (plans, reports)


def map_atlas(atlas, section, *, fused_weight=None, expression="pca", pca_dims=30, features=None,
              atlas_rep=None, spatial_key="spatial", **solver_options):
    """Map a dissociated single-cell atlas onto a tissue section (moscot's mapping problem).

    atlas: AnnData with counts in X (no coordinates needed); section: AnnData with n x 2
    coordinates in obsm[spatial_key] and counts in X. Fused GW couples the atlas's geometry (its
    cells' distances in an expression space: the joint PCA of the shared genes, or
    obsm[atlas_rep] such as "X_pca" or "X_scVI") with the section's in-plane geometry, the linear
    term being the expression cost on the shared genes (expression "pca" or "cosine", pca_dims
    components; features="KEY": obsm[KEY] of both instead) with weight fused_weight (default 0.9).
    As `gwalign map`: the atlas's marginal is relaxed (rho_a 0.1; an atlas holds the whole
    tissue's cell-type proportions, a section a part), the plan is dense up to 2.5e7 entries,
    and on the sparse support each section cell joins the supports of the 4 nearby atlas cells
    closest in expression, unless solver_options set rho_a, support or
    support_feature_candidates.
    solver_options: gw::Options fields by name, as gwalign.align.

    Returns (plan, report): plan a scipy.sparse.csr_matrix, rows the atlas's cells and columns the
    section's; report the solve's report (a dict). Carry labels with
    gwalign.transfer(atlas, section, plan, keys=["celltype"]).
    """
    names = [_name(atlas, 0).replace("section 0", "the atlas"), _name(section, 1).replace("section 1", "the section")]
    if fused_weight is None:
        fused_weight = _core.MAPPING_FUSED_WEIGHT
    if not 0 < fused_weight < 1:
        raise ValueError("fused_weight must be in (0, 1) for map_atlas (the expression cost and the "
                         "geometry both count), got %r" % (fused_weight,))
    if expression not in ("pca", "cosine"):
        raise ValueError("expression must be 'pca' or 'cosine', got %r" % (expression,))
    if "partial_mass" in solver_options:
        raise ValueError("partial_mass is not supported by map_atlas (every atlas cell is mapped)")
    coordinates = _coordinates(section, spatial_key, names[1])
    geometry = None
    if atlas_rep is not None:
        if atlas_rep not in atlas.obsm:
            raise ValueError("%s has no obsm[%r]; obsm keys: %s" % (names[0], atlas_rep,
                             ", ".join(atlas.obsm.keys()) or "none"))
        geometry = np.ascontiguousarray(np.asarray(atlas.obsm[atlas_rep], dtype=np.float64))
        if geometry.ndim != 2 or geometry.shape[0] != atlas.n_obs:
            raise ValueError("%s: obsm[%r] is not a matrix with one row per cell" % (names[0], atlas_rep))
    options = make_options(None, **solver_options)
    options.fused_weight = fused_weight
    if "distance_mode" not in solver_options:
        options.distance_mode = "landmark"
    if "rho_a" not in solver_options:
        options.rho_a = _core.MAPPING_RHO_A
    if "support_feature_candidates" not in solver_options:
        options.support_feature_candidates = _core.MAPPING_FEATURE_CANDIDATES
    if "support" not in solver_options and atlas.n_obs * section.n_obs <= _core.MAPPING_DENSE_MAX_ENTRIES:
        options.support = "dense"
    if features is not None:
        feats = _representation([atlas, section], names, features, expression)
    else:
        _, blocks = _expression_blocks([atlas, section], names)
        feats, _, _ = _core.spatial_expression_features(blocks, expression, int(pca_dims), int(options.seed))
    if geometry is None:
        geometry = feats[0]
    result = _core.spatial_map_atlas(names[0], geometry, feats[0], names[1], coordinates, feats[1], options)
    plan = _plan_matrix(result)
    return plan, json.loads(result["solve_json"])


# ----------------------------------------------------------------------------------- transfer

def _plan_csr(plan, n, k):
    if sp.issparse(plan):
        csr = sp.csr_matrix(plan)
    else:
        a = np.asarray(plan, dtype=np.float64)
        if a.ndim != 2:
            raise ValueError("plan must be an n x k matrix, got %d dimensions" % a.ndim)
        csr = sp.csr_matrix(a)
    if csr.shape != (n, k):
        raise ValueError("plan is %d x %d but adata_from has %d cells (rows) and adata_to %d (columns)"
                         % (csr.shape[0], csr.shape[1], n, k))
    csr.sum_duplicates()
    if not np.all(np.isfinite(csr.data)) or np.any(csr.data < 0):
        raise ValueError("plan holds a negative or non-finite mass; a transport plan is >= 0")
    return (np.ascontiguousarray(csr.data, dtype=np.float64),
            np.ascontiguousarray(csr.indices, dtype=np.int32),
            np.ascontiguousarray(csr.indptr, dtype=np.int64))


def _sender_values(adata, key, role):
    """('categorical', (codes, categories)) or ('continuous', (values n x c, store, columns))."""
    import pandas as pd
    if key == "X":
        x = adata.X
        return "continuous", (x.toarray() if sp.issparse(x) else np.asarray(x), "obsm",
                              [str(v) for v in adata.var_names])
    if key.startswith("obsm:"):
        name = key[5:]
        if name not in adata.obsm:
            raise ValueError("%s has no obsm[%r] to transfer; obsm keys: %s"
                             % (role, name, ", ".join(adata.obsm.keys()) or "none"))
        m = adata.obsm[name]
        cols = [str(c) for c in m.columns] if isinstance(m, pd.DataFrame) else None
        m = m.toarray() if sp.issparse(m) else np.asarray(m)
        return "continuous", (m.reshape(len(m), -1), "obsm", cols)
    if key not in adata.obs:
        raise ValueError("%s has no obs column %r to transfer; obs columns: %s (give obsm:KEY or X "
                         "for a matrix)" % (role, key, ", ".join(map(str, adata.obs.columns)) or "none"))
    column = adata.obs[key]
    if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object or \
            pd.api.types.is_string_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        cat = pd.Categorical(column)
        return "categorical", (np.asarray(cat.codes, dtype=np.int32), cat.categories, cat.ordered)
    return "continuous", (np.asarray(column, dtype=np.float64).reshape(-1, 1), "obs", None)


def _out_names(keys, key_added):
    if key_added is None:
        return {k: (k[5:] if k.startswith("obsm:") else k) for k in keys}
    if isinstance(key_added, str):
        if len(keys) != 1:
            raise ValueError("key_added=%r names one output but %d keys are transferred; give a dict "
                             "{key: name}" % (key_added, len(keys)))
        return {keys[0]: key_added}
    missing = [k for k in keys if k not in key_added]
    if missing:
        raise ValueError("key_added has no name for %s" % ", ".join(map(repr, missing)))
    return {k: key_added[k] for k in keys}


def _write_categorical(out, name, categories, ordered, probs, label, confidence, mass):
    import pandas as pd
    class_names = [str(c) for c in categories]
    out.obs[name] = pd.Categorical.from_codes(np.asarray(label), categories=categories, ordered=ordered)
    out.obs[name + "_confidence"] = np.asarray(confidence)
    out.obs[name + "_mass"] = np.asarray(mass)
    out.obsm[name + "_probabilities"] = pd.DataFrame(
        np.asarray(probs)[:, :len(class_names)], index=out.obs_names, columns=class_names)
    out.uns[name + "_classes"] = np.asarray(class_names, dtype=object)


def _write_continuous(out, name, key, averaged, store, columns):
    import pandas as pd
    if store == "obs":
        out.obs[name] = averaged[:, 0]
    elif columns is not None and key != "X":
        out.obsm[name] = pd.DataFrame(averaged, index=out.obs_names, columns=columns)
    else:
        out.obsm[name] = averaged
        if key == "X":
            out.uns[name + "_var_names"] = np.asarray(columns, dtype=object)


def transfer(adata_from, adata_to, plan, keys, *, direction="push", key_added=None, copy=False):
    """Carry annotations through a transport plan (moscot's push and pull).

    plan: n x k (scipy.sparse or dense), rows adata_from's cells, columns adata_to's (as
    align_slices returns them: rows the fixed section, columns the moving one). direction "push"
    carries adata_from's annotations onto adata_to's cells (written into adata_to); "pull" carries
    adata_to's onto adata_from's (written into adata_from). keys: obs columns, "obsm:KEY" or "X".
    key_added: None (outputs named after the key), a name (one key), or a dict {key: name}.

    A categorical (or string / bool) obs column NAME gives obs[NAME] (categorical, the argmax of
    the plan-weighted class probabilities; missing where the plan does not reach),
    obs[NAME + "_confidence"] (that probability), obsm[NAME + "_probabilities"] (a DataFrame, one
    column per class) and uns[NAME + "_classes"] (the class names). A numeric obs column, obsm
    matrix or X gives plan-weighted averages (obs[NAME], or obsm[NAME]; X goes to obsm[NAME] with
    uns[NAME + "_var_names"]), NaN where unreached. Receiving cells' plan mass goes to
    obs[NAME + "_mass"] for categorical keys.

    copy=True returns an annotated copy of the receiving AnnData and leaves both inputs untouched;
    otherwise the receiver is annotated in place and None is returned.
    """
    import pandas as pd
    if direction not in ("push", "pull"):
        raise ValueError("direction must be 'push' (adata_from -> adata_to) or 'pull' "
                         "(adata_to -> adata_from), got %r" % (direction,))
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise ValueError("give at least one key to transfer")
    n, k = adata_from.n_obs, adata_to.n_obs
    data, indices, indptr = _plan_csr(plan, n, k)
    sender, receiver = (adata_from, adata_to) if direction == "push" else (adata_to, adata_from)
    role = "adata_from" if direction == "push" else "adata_to"
    names = _out_names(keys, key_added)
    values = [_sender_values(sender, key, role) for key in keys]  # all checked before writing
    # Every result is computed before anything is written: a failure leaves the receiver as it was.
    writes = []
    for key, (kind, payload) in zip(keys, values):
        name = names[key]
        if kind == "categorical":
            codes, categories, ordered = payload
            probs, label, confidence, mass, _ = _core.spatial_transfer_categorical(
                data, indices, indptr, n, k, codes, max(len(categories), 1), direction)
            writes.append((_write_categorical, name, (categories, ordered, probs, label, confidence, mass)))
        else:
            matrix, store, columns = payload
            averaged, _, _ = _core.spatial_transfer_continuous(
                data, indices, indptr, n, k, np.ascontiguousarray(matrix, dtype=np.float64), direction)
            writes.append((_write_continuous, name, (key, np.asarray(averaged), store, columns)))
    out = receiver.copy() if copy else receiver
    for write, name, result in writes:
        write(out, name, *result)
    return out if copy else None
