"""Hypotheses on how a run is set up: its step size (Lemma 6, docs/statements.md#lemma6) and
its parameterisation (W or W = K Q^T, docs/statements.md#tfsvm-nuclear)."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table

STEP_SIZE = Hypothesis(
    "step_size", "fixed-step GD has eta = eta_factor / L_p with 0 < eta_factor <= 1 (Lemma 6); normalized GD takes "
    "steps of fixed length", lambda inst: inst.params.get("rule", "gd") != "gd" or 0 < inst.params["eta_factor"] <= 1)
W_PARAMETERISATION = Hypothesis("w_parameterisation", "the trained variable is W itself (not W = K Q^T)",
                                lambda inst: inst.params["param"] == "W")
KQ_PARAMETERISATION = Hypothesis("kq_parameterisation", "the trained variables are K, Q with W = K Q^T",
                                 lambda inst: inst.params["param"] == "KQ")
WIDTH_M_GE_D = Hypothesis("width_m_ge_d", "K, Q in R^{d x m} with m >= d (the rank constraint of W = K Q^T is void)",
                          lambda inst: inst.params["param"] != "KQ" or inst.params["m"] >= inst.dataset.d)

HYPOTHESES = table(STEP_SIZE, W_PARAMETERISATION, KQ_PARAMETERISATION, WIDTH_M_GE_D)
