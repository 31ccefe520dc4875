"""Hypotheses on the softmax attention at a point p of an instance (params['p'], and the tokens
params['alpha'] one per input): how much weight the attention puts on alpha (paper A,
Appendix C: docs/statements.md#lemma12)."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table

HALF = 0.5
FLOAT_MARGIN = 1e-12        # the selected mass must exceed 1/2 by this much (log-softmax in float64)


def selected_mass(inst) -> np.ndarray:
    """s_{i,alpha_i}(p) for every input, from the log-softmax of the logits K_i p."""
    ds, P = inst.dataset, inst.params
    a = model.keys(ds) @ np.asarray(P["p"], dtype=float)
    logs = a - np.logaddexp.reduce(a, axis=1, keepdims=True)
    return np.exp(logs[np.arange(ds.n), P["alpha"]])


SELECTS_ALPHA = Hypothesis("selects_alpha", "min_i s_{i,alpha_i}(p) > 1/2 (the path's selection, at a finite radius)",
                           lambda inst: bool(selected_mass(inst).min() > HALF + FLOAT_MARGIN))

HYPOTHESES = table(SELECTS_ALPHA)
