"""Start points for descent claims, as parts of instance spaces (`attnsvm.claims.spaces`): a grid
in the key plane of the paper's Figure 1 construction, and starts aimed at a locally optimal
selection other than the optimal tokens (theorem2, theorem2-tightness: docs/statements.md#theorem2)."""

from __future__ import annotations

import numpy as np

from attnsvm.attention import model
from attnsvm.claims.spaces import Chooser
from attnsvm.svm import att_svm_keys, geometry


def key_plane(c: Chooser, ds, count: int = 2) -> list[list[float]]:
    """`count` starts with coordinates in {-2, -1.5, ..., 2} on the keys' coordinates (the first
    d - 1), 0 on the last (the score coordinate of a keyed dataset, which keys do not see)."""
    return [[c.integer(-4, 4, "entry") / 2 for _ in range(ds.d - 1)] + [0.0] for _ in range(count)]


def other_lmm_directions(ds) -> list[np.ndarray]:
    """p_mm(alpha) of the numerically locally optimal alpha != opt (float solve, no certificate:
    only used to aim starts; verdicts never rest on it), computed once per dataset."""
    def compute():
        g, opt, K, out = model.scores(ds), tuple(model.optimal_tokens(ds)), model.keys(ds), []
        for alpha in geometry.candidate_alphas(ds, 256):
            res = att_svm_keys(K, alpha) if alpha != opt else None
            if res is not None and res.ok:
                gaps = [g[i, alpha[i]] - g[i, t] for i, t in res.active_tags]
                if min(gaps, default=np.inf) > 0:
                    out.append(res.x)
        return out
    return ds.memo("other_lmm_directions", compute)


def aimed(c: Chooser, ds, others: list[np.ndarray]) -> list[list[float]]:
    """One start at r p_mm(alpha) for a locally optimal alpha != opt (one of `others`; r in {2, 3,
    4}: margin r), then one start of `key_plane`: aimed at a non-global limit."""
    q = others[c.integer(0, len(others) - 1, "index")]
    return [(c.sampled_from([2.0, 3.0, 4.0]) * q).tolist(), key_plane(c, ds, 1)[0]]
