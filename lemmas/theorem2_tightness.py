"""Appendix E (Figure 8): Theorem 2(b) needs n = 1. On the hand instance of SPEC.md
(n = 2, T = 2, so Assumption B holds; W = I, Y = (1, 1), v = (1, -3)),

    X_1 = [(1, 0), (0, 0)]:  k_opt - k_other = e_1,       scores (1, 0)
    X_2 = [(0, 0), (2, 1)]:  k_other - k_opt = (2, 1),    scores (0, -1)

an exact argument shows that GD with the logistic loss and ANY step eta > 0, started anywhere
in R = {p_1 >= 0, p_1 + p_2 >= kappa}, kappa = log(12 (1 + e)) ~ 3.80, never converges in
direction to the GMM (1, -3):

1. GMM = p_mm(opt) = (1, -3) with duals (7, 3) and LMM = p_mm((opt, other)) = (1, 0) with
   duals (1, 0): exact KKT systems (sympy); the LMM's input-2 constraint has value 2 > 1, so
   its selected (lower-score) token has no SVM-neighbour and the LMM is locally optimal;
2. with w_1 = p_1, w_2 = 2 p_1 + p_2 and c_i = |loss'(f_i)| sigma(w_i) sigma(-w_i) (score gaps
   are 1), the exact gradient is -dL/dp_1 = (c_1 - 2 c_2)/2 and -d(L)/dp_1 - dL/dp_2 =
   (c_1 - 3 c_2)/2 (sympy residuals 0);
3. sigma(w) sigma(-w) <= e^{-w} always and >= e^{-w}/4 for w >= 0; |loss'(f_1)| = sigma(-f_1)
   >= sigma(-1) = 1/(1 + e) since f_1 in [0, 1]; |loss'(f_2)| <= 1. In R, w_2 = p_1 + (p_1 +
   p_2) >= 0, so c_2/c_1 <= 4 (1 + e) e^{-(p_1 + p_2)} <= 4 (1 + e) e^{-kappa} = 1/3 (residual 0);
4. hence in R each GD step raises p_1 and does not lower p_1 + p_2: R is invariant, and along
   the GMM direction p_1 + p_2 = -2 ||p||/sqrt(10) < 0, so p_t/||p_t|| cannot tend to it.
   (GD from e.g. p_0 = 0 does converge to the GMM: measured by the check.)
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def kkt(rows: list[tuple[int, int]], active: list[int]) -> tuple[sp.Matrix, list, list]:
    """Exact KKT point of min ||p|| s.t. A p >= 1 with the given active rows: (p, duals, values)."""
    A = sp.Matrix(rows)
    AS = A.extract(active, [0, 1])
    mu = (AS * AS.T).LUsolve(sp.ones(len(active), 1))
    p = AS.T * mu
    duals = [0] * len(rows)
    for k, j in enumerate(active):
        duals[j] = mu[k]
    return p, duals, list(A * p)


def gradient_residuals() -> tuple[sp.Expr, sp.Expr]:
    p1, p2 = sp.symbols("p1 p2", real=True)
    sig = lambda x: 1 / (1 + sp.exp(-x))
    loss = lambda u: sp.log(1 + sp.exp(-u))
    dloss = lambda u: -sig(-u)
    # input 1: logits (p1, 0), scores (1, 0); input 2: logits (0, 2 p1 + p2), scores (0, -1)
    s1 = sig(p1)
    f1 = s1
    w2 = 2 * p1 + p2
    s2_other = sig(w2)
    f2 = -s2_other
    L = (loss(f1) + loss(f2)) / 2
    c1 = -dloss(f1) * sig(p1) * sig(-p1)
    c2 = -dloss(f2) * sig(w2) * sig(-w2)
    r1 = -sp.diff(L, p1) - (c1 - 2 * c2) / 2
    r2 = -sp.diff(L, p1) - sp.diff(L, p2) - (c1 - 3 * c2) / 2
    E1, E2 = sp.symbols("E1 E2", positive=True)

    def reduce(r):
        r = r.subs({p2: sp.log(E2) - 2 * p1}).subs({p1: sp.log(E1)})
        return sp.simplify(sp.cancel(sp.together(sp.expand(r))))

    return reduce(r1), reduce(r2)


def bounds() -> dict:
    """The elementary inequalities of step 3, as signs of exact expressions (E = e^w > 0)."""
    E = sp.Symbol("E", positive=True)
    u = sp.Symbol("u", nonnegative=True)
    upper = sp.expand((1 + E) ** 2 - E ** 2)                         # sigma sigma <= e^-w  <=>  > 0
    lower = sp.factor(sp.expand((4 * E ** 2 - (1 + E) ** 2).subs(E, 1 + u)))   # >= e^-w/4 for w >= 0
    kappa = sp.log(12 * (1 + sp.E))
    ratio = sp.simplify(4 * (1 + sp.E) * sp.exp(-kappa) - sp.Rational(1, 3))
    return {"upper": (str(upper), bool(upper.is_positive)), "lower": (str(lower), bool(lower.is_nonnegative)),
            "kappa": (str(kappa), float(kappa)), "ratio_residual": str(ratio),
            "ok": bool(upper.is_positive) and bool(lower.is_nonnegative) and ratio == 0}


def derive() -> Derivation:
    rows_opt = [(1, 0), (-2, -1)]                 # k_opt - k_other for inputs 1 and 2
    rows_lmm = [(1, 0), (2, 1)]                   # input 2 selects its other token
    gmm, gmm_duals, gmm_vals = kkt(rows_opt, [0, 1])
    lmm, lmm_duals, lmm_vals = kkt(rows_lmm, [0])
    r1, r2 = gradient_residuals()
    b = bounds()
    ok = (list(gmm) == [1, -3] and all(x >= 0 for x in gmm_duals) and all(v >= 1 for v in gmm_vals)
          and list(lmm) == [1, 0] and all(x >= 0 for x in lmm_duals) and all(v >= 1 for v in lmm_vals)
          and lmm_vals[1] > 1 and r1 == 0 and r2 == 0 and b["ok"])
    return Derivation(
        "hand instance (n = 2, T = 2): GMM (1, -3) and a locally optimal LMM (1, 0); GD with any step from "
        "R = {p_1 >= 0, p_1 + p_2 >= log(12(1+e))} stays in R, so it never converges in direction to the GMM",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"gmm": [str(x) for x in gmm], "gmm_duals": [str(x) for x in gmm_duals], "gmm_constraint_values": [str(x) for x in gmm_vals],
         "lmm": [str(x) for x in lmm], "lmm_duals": [str(x) for x in lmm_duals], "lmm_constraint_values": [str(x) for x in lmm_vals],
         "lmm_neighbours": "input 1: its other token (score 0 < 1); input 2: none (constraint value 2 > 1)",
         "gradient_residuals": [str(r1), str(r2)], "bounds": {k: v for k, v in b.items() if k != "ok"},
         "closing_step": "R is invariant under every GD step; p_1 + p_2 >= kappa > 0 on R, while it tends to "
                         "-infinity along the GMM direction"},
    )
