"""Transformers as SVMs, claim 6 (SPEC.md B; Section 6 / Appendix D): with a nonlinear head the
attention limit W_t = W^fin + R_t W^mm (R_t -> infinity) selects a SET O_i per input: the
generalized SVM W^mm (>= 1 margins from O_i to the rest, 0 within O_i) masks the other tokens
out, and the finite part W^fin fixes the composition inside O_i.

sympy checks, for T = 3 tokens, O = {0, 1}, logits a_t = b_t + R m_t with m_0 = m_1 (the
equality constraint) and m_0 - m_2 = 1 + delta, delta >= 0 (the margin constraint):
(a) lim_{R->oo} s_0 = e^{b_0} / (e^{b_0} + e^{b_1}): the composition inside O is the softmax of
    the finite logits alone;
(b) lim_{R->oo} s_2 = 0: the token outside O is masked;
(c) the within-set logit difference a_0 - a_1 = b_0 - b_1 does not involve R (it sees W only
    through its component in S_fin, the span of the equality rows).
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def derive() -> Derivation:
    R = sp.Symbol("R", positive=True)
    b = sp.symbols("b0:3", real=True)
    m = sp.Symbol("m", real=True)
    delta = sp.Symbol("delta", nonnegative=True)
    a = [b[0] + R * m, b[1] + R * m, b[2] + R * (m - 1 - delta)]
    Zs = sum(sp.exp(x) for x in a)
    s0, s2 = sp.exp(a[0]) / Zs, sp.exp(a[2]) / Zs
    # divide by e^{R m}: with u = e^{-R (1 + delta)} -> 0+ as R -> oo (1 + delta > 0)
    u = sp.Symbol("u", positive=True)
    den = sp.exp(b[0]) + sp.exp(b[1]) + sp.exp(b[2]) * u
    rewrite = [sp.simplify(sp.powsimp(sp.expand(s0 - sp.exp(b[0]) / den.subs(u, sp.exp(-R * (1 + delta)))), force=True)),
               sp.simplify(sp.powsimp(sp.expand(s2 - sp.exp(b[2]) * sp.exp(-R * (1 + delta)) / den.subs(u, sp.exp(-R * (1 + delta)))), force=True))]
    comp = sp.simplify(sp.limit(sp.exp(b[0]) / den, u, 0, "+") - sp.exp(b[0]) / (sp.exp(b[0]) + sp.exp(b[1])))
    mask = sp.simplify(sp.limit(sp.exp(b[2]) * u / den, u, 0, "+"))
    within = sp.simplify(a[0] - a[1] - (b[0] - b[1]))
    ok = all(r == 0 for r in rewrite) and comp == 0 and mask == 0 and within == 0
    return Derivation(
        "W = W^fin + R W^mm (generalized SVM): as R -> oo the softmax masks tokens outside O_i and inside O_i equals "
        "the softmax of W^fin's logits",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"residual_rewrite_in_u": str(rewrite), "residual_composition_limit": str(comp), "limit_masked_token": str(mask), "residual_within_set": str(within),
         "sizes": "T = 3, O = {0, 1}, margin 1 + delta, delta >= 0",
         "closing_step": "which sets O_i and which W^fin a head leads to is not derived: the check measures them "
                         "(GD/NGD limits) and tests the generalized-SVM prediction of the direction"},
    )
