"""Hypotheses of paper C's covered settings and runs (docs/statements.md#rates-global, #rates-polyak,
#rates-joint): the support condition and the absence of other W-LMMs (decided with exact
certificates on the W-SVM, `attnsvm.svm.wlift`, shared with `w_svm.gmm_feasible`), the small
random start of rates-polyak, and the normalized step and Gaussian-like data of rates-joint.
Instances carry the parameters of `attnsvm.dynamics.rates.instances` (seed, init_alpha,
init_scale, steps, eta) or of rates-joint's space (rule, ...)."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm import wlift

SMALL = 0.1         # start_near_zero: a random W_0 of scale at most this


def _n1_or_all_support(inst) -> bool:
    """n = 1, or W_mm(opt) is feasible and every one of its constraints is active (exact certificate)."""
    ds = inst.dataset
    if ds.n == 1:
        return True
    sel = wlift.w_select(ds, model.optimal_tokens(ds))
    return sel.feasible and sel.certified and sel.certificate.kind == "kkt" and \
        len(sel.certificate.active) == sel.result.problem.A.shape[0]


def other_w_lmms(ds) -> list[tuple[int, ...]] | None:
    """The token choices alpha != opt that are locally optimal for the W-SVM (Definition 2 on the
    lifted problem, exact), ties counted when n >= 2: every SVM-neighbour t of every input scores
    at most gamma_{i,alpha_i}. None when some selection could not be certified (undecided).

    Ties count because they trap: under Assumption B with T >= 3 the non-optimal tokens of an input
    share one score, and a selection whose only neighbours are tied with it (score gap exactly 0,
    not locally optimal by the strict Definition 2) still attracts normalized GD and Polyak from
    small random starts, in float64 and in mpmath alike (NOTES.md; tests/test_rates_laws.py pins
    one): the tied neighbours carry no gradient (gamma_t = f_i), the optimal token's term is
    exponentially small, and the other input's term steers. In a quick-budget sample of 2048
    covered instances all 14 failures of NGD or Polyak ended on such a selection.

    With n = 1 and Assumption B there are none, without a solve: a feasible alpha != opt has an
    active constraint (else its W-SVM solution could be scaled down), and every SVM-neighbour t of
    the one input scores at least gamma_alpha (the optimal token higher, the others tied with
    alpha), so alpha is not strictly locally optimal; and a tie does not trap a single input (its
    gradient always favours the optimal token: the core paper's Theorem 2(b)). The tests check
    this against the enumeration."""
    if ds.n == 1 and model.assumption_b(ds):
        return []

    def compute():
        opt = tuple(int(a) for a in model.optimal_tokens(ds))
        sels = wlift.w_selections(ds)
        if not all(s.certified for s in sels):
            return None
        return [s.alpha for s in sels if s.alpha != opt and s.feasible and
                (s.locally_optimal or (ds.n >= 2 and s.gap is not None and s.gap >= 0))]
    return ds.memo("rates.other_w_lmms", compute)


def _no_other_w_lmm(inst) -> bool:
    return other_w_lmms(inst.dataset) == []


def _start_near_zero(inst) -> bool:
    return inst.params.get("init_alpha") is None and inst.params["init_scale"] <= SMALL


def _labels_on_signal(inst) -> bool:
    ds = inst.dataset
    return bool(np.all(ds.X[:, 0, 0] * ds.Y > 0))


N1_OR_ALL_SUPPORT = Hypothesis("n1_or_all_support", "n = 1, or every non-optimal token is a support vector of "
                               "W_mm(opt) (every constraint active, exact certificate)", _n1_or_all_support)
NO_OTHER_W_LMM = Hypothesis("no_other_w_lmm", "no selection other than opt is locally optimal for the W-SVM, "
                            "ties counted when n >= 2 (every SVM-neighbour scoring at most alpha_i; exact): a descent "
                            "method converges locally to any such LMM (core Theorem 3), and tie-degenerate ones trap "
                            "NGD and Polyak", _no_other_w_lmm)
START_NEAR_ZERO = Hypothesis("start_near_zero", f"W_0 random (not on another selection's W_mm) of scale <= {SMALL}",
                             _start_near_zero)
NORMALIZED_STEP = Hypothesis("normalized_step", "the rule is normalized GD on (W, v)",
                             lambda inst: inst.params["rule"] == "ngd")
LABELS_ON_SIGNAL = Hypothesis("labels_on_signal", "x_i1 = Y_i e_1 for every input (Gaussian-like data, separable)",
                              _labels_on_signal)

HYPOTHESES = table(N1_OR_ALL_SUPPORT, NO_OTHER_W_LMM, START_NEAR_ZERO, NORMALIZED_STEP, LABELS_ON_SIGNAL)
