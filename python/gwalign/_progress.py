"""Progress display for long solves: a tqdm bar when tqdm is installed, a user callable, or off."""

from __future__ import annotations


def make_progress(progress):
    """(callback for _core.solve, finish()) for progress = True | False | None | callable.

    The callback runs at the solver's host checks (every check_every iterations) with the GIL
    held; returning False stops the solve (termination "cancelled")."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, lambda: None
    bar = {}

    def update(p):
        if "bar" not in bar:
            bar["bar"] = tqdm(total=p.max_iterations, desc="gwalign", unit="it", leave=False)
        b = bar["bar"]
        b.update(p.iteration - b.n)
        b.set_postfix(cost="%.4g" % p.cost, eps="%.2g" % p.epsilon, refresh=False)
        return True

    def finish():
        if "bar" in bar:
            bar["bar"].close()

    return update, finish
