"""The proof outline of sequence-to-sequence and causal attention (Transformers as SVMs, Section 7;
docs/statements.md#tfsvm-seq2seq), shared by `lemmas/tfsvm_seq2seq.py` and `lemmas/tfsvm_causal.py`
(the causal outline is the same with the mask on), so neither outline imports the other.

The proof is a reduction: the risk is the core linear-head risk of the n T inputs (i, k) with
keys vec(x_it x_ik^T) (a causal query's visible tokens repeated equally often, which leaves a
softmax unchanged), so (ATT-SVM) of those inputs is the per-query W-SVM and the core Theorems 1
and 3 give the limits. sympy checks the vectorisation (symbolic d), the repetition identity
(symbolic number of tokens and repetitions) and the full-row-rank feasibility argument
(symbolic sizes); the limits are cited, normalized GD and the dimension count are supported
numerically by the checks.
"""

from __future__ import annotations

import sympy as sp

from attnsvm.claims.identities import vectorisation
from attnsvm.claims.outline import Step
from attnsvm.claims.symbolic import residuals

RECONSTRUCTION = ("the model (output k = v^T X^T S(X W x_ik), labels Y_ik), the per-query W-SVM, the causal mask t <= "
                  "k and the dimension count (d >= T, or d >= T - 1 causal, and at most d^2 difference rows) are our "
                  "reconstruction of Section 7: the paper text available here gives no formulas")


def repetition() -> dict:
    """Repeating each of m tokens r times leaves the softmax output unchanged: sum_t r e^{a_t} gamma_t /
    sum_t r e^{a_t} = sum_t e^{a_t} gamma_t / sum_t e^{a_t} (symbolic m, r): causal masking as an exact core problem."""
    m, r = sp.symbols("m r", positive=True, integer=True)
    t = sp.Symbol("t", integer=True, positive=True)
    a, g = sp.IndexedBase("a", real=True), sp.IndexedBase("gamma", real=True)
    lhs = sp.Sum(r * sp.exp(a[t]) * g[t], (t, 1, m)) / sp.Sum(r * sp.exp(a[t]), (t, 1, m))
    rhs = sp.Sum(sp.exp(a[t]) * g[t], (t, 1, m)) / sp.Sum(sp.exp(a[t]), (t, 1, m))
    return residuals(output=sp.simplify(sp.factor_terms(lhs) - rhs))


def full_rank_feasible() -> dict:
    """With the difference rows D (m x N, symbolic m, N) of full row rank, W = D^T (D D^T)^{-1} b meets D W = b
    for any logit differences b: choosing b = u - u_r with u_alpha = 1, u_t = 0 meets every constraint of every
    alpha with equality (symbolic sizes)."""
    m, N = sp.symbols("m N", positive=True, integer=True)
    D, b = sp.MatrixSymbol("D", m, N), sp.MatrixSymbol("b", m, 1)
    return residuals(solves=sp.simplify(D * D.T * (D * D.T).I * b - b))


def steps(causal: bool, check: str) -> tuple[Step, ...]:
    mask = "query k's visible tokens t <= k, each repeated lcm(1..T)/(k + 1) times" if causal else "all T tokens"
    return (
        Step("vec: the logit x_it^T W x_ik is <vec(x_it x_ik^T), vec(W)>, ||vec W|| = ||W||_F, and the per-query "
             "constraint (x_{i,alpha_ik} - x_it)^T W x_ik >= 1 is the (ATT-SVM) row of input (i, k) (symbolic d)",
             "symbolic", vectorisation),
        Step(f"the risk is the core linear-head risk of the n T inputs (i, k) with keys vec(x_it x_ik^T) over {mask}: "
             "equal repetition leaves every softmax output unchanged (symbolic number of tokens and repetitions)",
             "symbolic", repetition),
        Step("the core Theorem 1 on the inputs (i, k): under strict optimality the regularization path converges in "
             "direction to W_mm(opt), the per-query SVM", "cited",
             reference="core paper Theorem 1 (lemmas/theorem1.py); Transformers as SVMs, Section 7", by=("theorem1",)),
        Step("the core Theorem 3 on the inputs (i, k): GD from the cone of a locally optimal alpha converges to "
             "W_mm(alpha); normalized GD from small inits converges to W_mm(alpha_H) of its selected tokens", "numeric",
             reference=f"{check} (part gd: NGD, 1 - corr(W_H, W_mm(alpha_H)) <= 0.01 on saturated runs; part path: "
                       "regpath, 1 - corr(W(R), W_mm(opt)) <= 0.01)", by=("theorem3", "tfsvm-frobenius")),
        Step("feasibility: if the difference rows vec((x_it - x_{i,r}) x_ik^T) have full row rank, W = D^T (D "
             "D^T)^{-1} b realises any logit differences, so W_mm(alpha) exists for every alpha (symbolic sizes)",
             "symbolic", full_rank_feasible),
        Step("generic data with d >= " + ("T - 1" if causal else "T") + " and at most d^2 difference rows (n T (T - 1)"
             + ("/2" if causal else "") + ") give full row rank", "numeric",
             reference=f"{check} (part feasibility: exact FLINT rank of the difference rows on Gaussian data)",
             by=("tfsvm-feasibility",)),
    )
