"""Transformers as SVMs, claim 1 (SPEC.md B): the W-parameterisation is the p-problem of the
core paper in dimension d^2, so its max-margin direction is the Frobenius W_mm.

sympy checks, for symbolic x, z, W (d = 3) and a symbolic softmax s (T = 2):
(a) x^T W z = <vec(x z^T), vec(W)> (row-major vec): the logits are linear in p = vec(W) with
    keys k_it = vec(x_it z_i^T);
(b) ||vec(W)||_2^2 = ||W||_F^2, and the (ATT-SVM) rows (k_{i,alpha} - k_it)^T p are the W-SVM
    rows <(x_{i,alpha} - x_it) z_i^T, W>: (ATT-SVM) in p-space IS the Frobenius W-SVM;
(c) the W-gradient sum_t c_t x_t z^T (c = loss' S'(a) gamma) is the reshaped p-gradient
    sum_t c_t k_t: GD / NGD on W are GD / NGD on p.
Closing step: the core paper's regularization-path and local-convergence theorems (SPEC.md A,
Theorems 1 and 3) then apply verbatim with ||p|| = ||W||_F.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def derive() -> Derivation:
    d, T = 3, 2
    W = sp.Matrix(d, d, lambda r, c: sp.Symbol(f"w{r}{c}", real=True))
    vecW = W.reshape(1, d * d).T
    z = sp.Matrix(sp.symbols(f"z0:{d}", real=True))
    xs = [sp.Matrix(sp.symbols(f"x{t}_0:{d}", real=True)) for t in range(T)]
    keys = [(x * z.T).reshape(1, d * d).T for x in xs]
    logits = sp.simplify(sp.Matrix([(x.T * W * z)[0] - (k.T * vecW)[0] for x, k in zip(xs, keys)]))
    norm = sp.expand((vecW.T * vecW)[0] - sum(w ** 2 for w in W))
    A = (xs[0] - xs[1]) * z.T                                   # W-SVM row, <A, W> = tr(A^T W)
    rows = sp.expand(((keys[0] - keys[1]).T * vecW)[0] - (A.T * W).trace())
    s = sp.symbols(f"s0:{T}", positive=True)
    gam = sp.symbols(f"g0:{T}", real=True)
    lp = sp.Symbol("lp", real=True)
    Sp = sp.diag(*s) - sp.Matrix(s) * sp.Matrix(s).T
    c = lp * Sp * sp.Matrix(gam)
    gW = sum((c[t] * xs[t] * z.T for t in range(T)), sp.zeros(d, d))
    gp = sum((c[t] * keys[t] for t in range(T)), sp.zeros(d * d, 1))
    grad = sp.expand(gW.reshape(d * d, 1) - gp)
    ok = logits == sp.zeros(T, 1) and norm == 0 and rows == 0 and grad == sp.zeros(d * d, 1)
    return Derivation(
        "W-parameterised attention = p-problem with keys vec(x_it z_i^T); its (ATT-SVM) is the Frobenius W-SVM",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"residual_logits": str(logits.T.tolist()), "residual_norm": str(norm), "residual_svm_rows": str(rows),
         "residual_gradient": str(grad.T.tolist()) if grad != sp.zeros(d * d, 1) else "0",
         "sizes": f"d = {d}, T = {T}, symbolic softmax s and loss' lp",
         "closing_step": "SPEC.md A Theorems 1 (path -> GMM) and 3 (GD from an LMM cone -> that LMM) in R^{d^2} "
                         "with ||p|| = ||W||_F give the Frobenius W_mm limits"},
    )
