"""Transformers as SVMs, claim 2 (SPEC.md B): the (K, Q)-parameterisation W = K Q^T measures W by
its nuclear norm, min {(||K||_F^2 + ||Q||_F^2)/2 : K Q^T = W} = ||W||_* (m >= rank W), so the
(K, Q) regularization path (||K||^2 + ||Q||^2 <= 2R) is the nuclear-ball path of W and its
max-margin limit is W*_mm. sympy checks (2 x 2, W = R(theta) diag(s1, s2) R(phi)^T):
(a) the balanced factorisation K = R(theta) S^{1/2}, Q = R(phi) S^{1/2} has K Q^T = W and
    (||K||^2 + ||Q||^2)/2 = s1 + s2 = ||W||_*  (upper bound attained);
(b) AM-GM: (a^2 + b^2)/2 - a b = (a - b)^2 / 2 >= 0, which with ||K Q^T||_* <= ||K||_F ||Q||_F
    (trace duality + Cauchy-Schwarz) gives the lower bound;
(c) for n = 1 the two SVMs coincide: the constraints see W only through w = W z, and
    W = w z^T / ||z||^2 has ||W||_F = ||W||_* = ||w|| / ||z||, the least possible value of either
    norm given W z = w (||W||_* >= ||W||_2 >= ||w|| / ||z||). A difference needs n >= 2.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def _rot(a):
    return sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])


def derive() -> Derivation:
    th, ph = sp.symbols("theta phi", real=True)
    s1, s2 = sp.symbols("s1 s2", positive=True)
    W = _rot(th) * sp.diag(s1, s2) * _rot(ph).T
    K = _rot(th) * sp.diag(sp.sqrt(s1), sp.sqrt(s2))
    Q = _rot(ph) * sp.diag(sp.sqrt(s1), sp.sqrt(s2))
    fro2 = lambda M: sum(e ** 2 for e in M)
    factor = sp.simplify(K * Q.T - W)
    balanced = sp.simplify(sp.trigsimp((fro2(K) + fro2(Q)) / 2 - (s1 + s2)))
    # R(theta), R(phi) orthogonal, so s1, s2 are W's singular values and ||W||_* = s1 + s2
    svals = sp.simplify(sp.trigsimp(_rot(th).T * _rot(th) - sp.eye(2))) + sp.simplify(sp.trigsimp(_rot(ph).T * _rot(ph) - sp.eye(2)))
    a, b = sp.symbols("a b", nonnegative=True)
    amgm = sp.simplify((a ** 2 + b ** 2) / 2 - a * b - (a - b) ** 2 / 2)
    w = sp.Matrix(sp.symbols("w0:3", real=True))
    z = sp.Matrix(sp.symbols("z0:3", real=True))
    zz = (z.T * z)[0]
    W1 = w * z.T / zz
    n1_constraint = sp.simplify(W1 * z - w)
    n1_fro = sp.simplify(fro2(W1) - (w.T * w)[0] / zz)
    # rank one: the only nonzero singular value squared is tr(W1^T W1), so ||W1||_* = ||W1||_F
    n1_rank = sp.simplify(sp.Matrix(W1).rank() - 1)
    ok = factor == sp.zeros(2, 2) and balanced == 0 and svals == sp.zeros(2, 2) and amgm == 0 and \
        n1_constraint == sp.zeros(3, 1) and n1_fro == 0 and n1_rank == 0
    return Derivation(
        "min {(||K||_F^2 + ||Q||_F^2)/2 : K Q^T = W} = ||W||_*: the (K, Q) path is the nuclear-norm path, "
        "limit W*_mm; for n = 1 W*_mm and W_mm coincide",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"residual_factorisation": str(factor.tolist()), "residual_balanced_norm": str(balanced),
         "residual_orthogonality": str(svals.tolist()), "residual_am_gm": str(amgm),
         "residual_n1_constraint": str(n1_constraint.T.tolist()), "residual_n1_norm": str(n1_fro),
         "n1_rank_minus_1": str(n1_rank),
         "closing_step": "||K Q^T||_* <= ||K||_F ||Q||_F (trace duality, Cauchy-Schwarz) <= (||K||^2+||Q||^2)/2 "
                         "(AM-GM) with equality at the balanced factorisation (needs m >= rank W); the path "
                         "argument of SPEC.md A Theorem 1 with this norm gives W*_mm"},
    )
