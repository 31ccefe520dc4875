"""Hypotheses on Lemma 1's lifted runs (docs/statements.md#lemma1): GD on p and GD on W for the
logits X_i W u, set up by params 'u', 'p0', 'W0', 'eta', 'eta_W'."""

import numpy as np

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table

ATOL = 1e-12            # W_0 = p_0 u^T/||u||^2 entrywise, and eta_W = eta/||u||^2 relative to eta


def _arrays(inst):
    P = inst.params
    return np.array(P["u"], float), np.array(P["p0"], float), np.array(P["W0"], float)


def _rank_one_start(inst) -> bool:
    u, p0, W0 = _arrays(inst)
    return bool(np.allclose(W0, np.outer(p0, u) / (u @ u), rtol=0, atol=ATOL))


def _step_scaling(inst) -> bool:
    u, _, _ = _arrays(inst)
    return bool(abs(inst.params["eta_W"] - inst.params["eta"] / (u @ u)) <= ATOL * inst.params["eta"])


RANK_ONE_START = Hypothesis("rank_one_start", "W_0 = p_0 u^T / ||u||^2", _rank_one_start)
STEP_SCALING = Hypothesis("step_scaling", "the W step is eta / ||u||^2", _step_scaling)

HYPOTHESES = table(RANK_ONE_START, STEP_SCALING)
