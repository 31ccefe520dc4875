"""The SVMs of paper A's Section 3 (joint training of the head v and the attention p; Theorems 5
and 6, Lemma 13; docs/statements.md#theorem5): the label SVM on the selected tokens
r_i = x_{i,alpha_i}, Assumption C decided exactly on three computable parts (C1 vertices, C2
first-order mixing, C3 mixtures on a grid), the support set S, the relaxed problem (10), the
rate threshold kappa* of Theorem 6 and the competitor (78) of Lemma 13. Every answer is exact
(`decided`: these problems are small, so exact arithmetic solves them outright, `exact.solve_exact`,
else a float solve and its KKT or Farkas certificate, `svm.certificates`) and memoized on the
dataset, so the hypotheses and the conclusion of a check share them.

C1-C3 (`assumption_c` over a set of inputs I: all inputs for Theorem 5, the support set for
Theorem 6):

- C1, vertices: alpha_I is the unique maximiser of the label margin 1/||v_mm(beta)|| over all
  pure selections beta_I (T^|I| <= 64, each label SVM certified by exact KKT or Farkas);
- C2, first-order mixing: with v_mm = v_mm(alpha) (exact), every input of I is a support
  vector with a strictly positive multiplier in some optimal dual (`positive_multipliers`)
  and its selected token strictly out-scores its others under v_mm. Moving mass pi to token t
  of input i changes the margin at rate lambda_i Y_i v_mm^T (x_it - x_{i,alpha_i}) < 0 (Danskin),
  so every mixing direction shrinks the margin to first order.
- C3, mixtures: every attention mixture s (s_i in the simplex) whose non-optimal mass on some
  input is q, for q on the grid MIX_GRID, has a strictly smaller margin, certified exactly.
  This is a finite check: for a fixed unit v the margin min_i Y_i v^T r_i(s) is linear in each
  s_i and maximised input by input, so the largest margin over the mixtures with mass >= q on
  input j is the largest over the label SVMs with inputs i != j pure (any beta_i) and input j
  mixing x_{j,alpha_j} with one x_jt at mass exactly q (or pure at t) (`mixtures_shrink`).
The same reduction shows that C1 + C2 already imply C over every mixture, with a linear rate
(margin <= 1/||v_mm|| - c q): a mixture keeping margin 1/||v_mm|| forces v = v_mm and needs an
input whose selected score exceeds 1 (a non-support input) or a competing pure selection; and
C2's positive multiplier makes the rate at q -> 0 positive (Danskin). C3 is the explicit
check of that consequence on the grid (tests pin that it never disagrees).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from attnsvm import svm
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.svm import certificates
from attnsvm.svm.exact import SMALL_ENTRIES, solve_exact
from attnsvm.svm.margin import MarginProblem

SELECTION_LIMIT = 64        # T^|I| above this: Assumption C is not decided (treated as not met)


LABEL_CACHE = 20000          # label SVMs kept by content (instance spaces and mutants repeat datasets)
_LABEL: dict = {}


def decided(problem: MarginProblem):
    """(result, certificate) of a margin problem, exact either way: a small one (at most
    `exact.SMALL_ENTRIES` row entries, as `geometry.select`) solved in exact arithmetic
    (`exact.solve_exact`: the optimum with its KKT certificate, or a Farkas certificate, in a
    few rational steps; far cheaper than quadprog's answer plus its certificate, and than the
    LP an infeasible one needs for its Farkas vector), else quadprog and its certificate."""
    if problem.A.size <= SMALL_ENTRIES:
        out = solve_exact(problem)
        if out is not None and out[0].status != "error":
            return out
    res = svm.solve(problem)
    return res, certificates.certify(res)


def _label_problem(R: np.ndarray, Y: np.ndarray, exact_R: np.ndarray) -> MarginProblem:
    """The label SVM's rows Y_i r_i (as `svm.label_svm`), exact rows included."""
    eA = np.array([[Fraction(int(y)) * x for x in r] for y, r in zip(Y, exact_R)], dtype=object)
    return MarginProblem(Y[:, None] * R, tuple(range(len(Y))), eA, None, "label-SVM")


def label_result(ds: Dataset, beta, inputs):
    """The label SVM on the selected tokens x_{i,beta_i}, i in `inputs`, with its certificate.
    Memoized by content (the exact selected tokens and labels): a search meets the same small
    datasets many times, as new Dataset objects."""
    idx = list(inputs)
    key = tuple((tuple(ds.exact["X"][i, beta[i]]), ds.exact["Y"][i]) for i in idx)
    if key not in _LABEL:
        if len(_LABEL) >= LABEL_CACHE:
            _LABEL.clear()
        R = np.array([ds.X[i, beta[i]] for i in idx])
        eR = np.array([ds.exact["X"][i, beta[i]] for i in idx], dtype=object)
        _LABEL[key] = decided(_label_problem(R, ds.Y[idx], eR))
    return _LABEL[key]


def margin_key(ds, beta, inputs):
    """||v_mm(beta)||^2 exactly (smaller = larger margin), None when separation is impossible,
    False when the certificate did not verify."""
    res, cert = label_result(ds, beta, inputs)
    if not cert.verified:
        return False
    return sum(q * q for q in cert.x) if cert.kind == "kkt" else None


def vertex_optimal(ds, alpha, inputs) -> bool:
    """C1: alpha restricted to `inputs` is the unique maximiser of the label margin."""
    inputs = list(inputs)
    best = margin_key(ds, alpha, inputs)
    if best is None or best is False:
        return False
    for choice in itertools.product(range(ds.T), repeat=len(inputs)):
        beta = list(alpha)
        for i, t in zip(inputs, choice):
            beta[i] = t
        if beta == list(alpha):
            continue
        other = margin_key(ds, beta, inputs)
        if other is False or (other is not None and other <= best):
            return False
    return True


def mixing_shrinks(ds, alpha, inputs) -> bool:
    """C2: every input of `inputs` is a support vector with a strictly positive multiplier in
    some optimal dual, and its selected token strictly out-scores the others under v_mm."""
    inputs = list(inputs)
    res, cert = label_result(ds, alpha, inputs)
    if not (cert.verified and cert.kind == "kkt"):
        return False
    v = cert.x
    Y, X = ds.exact["Y"], ds.exact["X"]
    score = lambda i, t: Y[i] * sum(X[i, t][c] * v[c] for c in range(ds.d))
    if any(score(i, alpha[i]) != 1 for i in inputs):
        return False                                            # a non-support input: mixing is free there
    if any(score(i, t) >= score(i, alpha[i]) for i in inputs for t in range(ds.T) if t != alpha[i]):
        return False
    rows = [[Y[i] * X[i, alpha[i]][c] for c in range(ds.d)] for i in inputs]
    return positive_multipliers(rows, v)


VERTEX_SUPPORTS = 256       # candidate vertex supports past which `positive_multipliers` asks the LPs


def positive_multipliers(rows, x) -> bool:
    """Some lam > 0 (every entry strictly) has sum_j lam_j rows_j = x, exactly, for rows with
    <rows_j, x> > 0 each (the active rows of a margin problem at its optimum x: then
    {lam >= 0 : sum_j lam_j rows_j = x} is a polytope, no nonzero mu >= 0 has sum mu_j rows_j = 0).
    Its vertices are the nonnegative solutions on linearly independent supports, so each lam_j
    can be positive iff it is at some vertex, and some lam > 0 exists iff every j is (their
    average): decided by enumerating the supports of at most rank-many rows in exact arithmetic
    (a few for these small problems), else by `certificates.positive_dual`'s LPs, whose verdict
    is the same."""
    import flint

    R = [[Fraction(a) for a in r] for r in rows]
    X = [Fraction(a) for a in x]
    m, d = len(R), len(X)
    if m == 0:
        return all(a == 0 for a in X)
    if any(sum((a * b for a, b in zip(r, X)), Fraction(0)) <= 0 for r in R):
        return certificates.positive_dual(rows, x) is not None
    sizes = range(1, min(m, d) + 1)
    if sum(math.comb(m, k) for k in sizes) > VERTEX_SUPPORTS:
        return certificates.positive_dual(rows, x) is not None
    covered: set[int] = set()
    xt = flint.fmpq_mat(d, 1, [flint.fmpq(a.numerator, a.denominator) for a in X])
    for k in sizes:
        for S in itertools.combinations(range(m), k):
            RS = flint.fmpq_mat(k, d, [flint.fmpq(a.numerator, a.denominator) for j in S for a in R[j]])
            try:
                lam = (RS * RS.transpose()).solve(RS * xt)          # independent rows: the least-squares fit
            except ZeroDivisionError:
                continue                                             # dependent rows: not a vertex support
            if RS.transpose() * lam != xt or any(lam[i, 0] < 0 for i in range(k)):
                continue
            covered.update(j for i, j in enumerate(S) if lam[i, 0] > 0)
        if len(covered) == m:
            return True
    return len(covered) == m


MIX_GRID = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))


def mixed_margin_key(ds, choice, inputs):
    """||v||^2 of the label SVM over `inputs` whose feature for input i is the mixture
    sum_t choice[i][t] x_it (choice[i]: exact weights summing to 1), exactly; None when no v
    separates, False when the certificate did not verify."""
    idx = list(inputs)
    eR = np.array([[sum((w * ds.exact["X"][i, t][c] for t, w in enumerate(choice[i]) if w), Fraction(0))
                    for c in range(ds.d)] for i in idx], dtype=object)
    R = np.array([[float(a) for a in r] for r in eR])
    cert = decided(_label_problem(R, ds.Y[idx], eR))[1]
    if not cert.verified:
        return False
    return sum(q * q for q in cert.x) if cert.kind == "kkt" else None


def mixtures_shrink(ds, alpha, inputs, grid=MIX_GRID) -> bool:
    """Assumption C over mixtures, on a grid of masses: every attention mixture with non-optimal
    mass q in `grid` on some input has a strictly smaller label margin than alpha (exact).

    For a fixed unit v the margin min_i Y_i v^T r_i(s) is maximised input by input, and linearly
    in s_i, so the largest margin over the mixtures whose input j keeps non-optimal mass >= q is
    the largest over finitely many label SVMs: inputs i != j pure (any beta_i) and input j either
    pure at t != alpha_j or (1 - q) x_{j,alpha_j} + q x_jt (the module docstring). Each is
    solved and certified here at every q of the grid."""
    inputs = list(inputs)
    best = margin_key(ds, alpha, inputs)
    if best is None or best is False:
        return False
    for j in inputs:
        others = [i for i in inputs if i != j]
        for t in range(ds.T):
            if t == alpha[j]:
                continue
            for beta in itertools.product(range(ds.T), repeat=len(others)):
                for q in grid:
                    choice = {i: [Fraction(int(b == s)) for s in range(ds.T)] for i, b in zip(others, beta)}
                    choice[j] = [1 - q if s == alpha[j] else q if s == t else Fraction(0) for s in range(ds.T)]
                    key = mixed_margin_key(ds, choice, inputs)
                    if key is False or (key is not None and key <= best):
                        return False
    return True


def support_set(ds, alpha) -> list[int]:
    """Inputs whose selected token is a support vector of the label SVM (exact active set)."""
    _, cert = label_result(ds, alpha, range(ds.n))
    return sorted(cert.active)


def best_selection(ds):
    """The pure selection with the largest label margin (smallest ||v_mm||^2, exact), if any
    (each label SVM decided exactly, `label_result`: an infeasible one costs a few rational steps,
    not an LP)."""
    key = _content(ds)
    if key not in _BEST:
        if len(_BEST) >= LABEL_CACHE:
            _BEST.clear()
        keys = [(margin_key(ds, b, range(ds.n)), b) for b in itertools.product(range(ds.T), repeat=ds.n)]
        keys = [(k, b) for k, b in keys if k not in (None, False)]
        _BEST[key] = list(min(keys)[1]) if keys else None
    return None if _BEST[key] is None else list(_BEST[key])


_BEST: dict = {}


def shift_conditions(ds, alpha) -> list[tuple]:
    """Per non-support input i and token t != alpha_i, exactly: (m_i, c_it, v.v, P.P) with
    m_i = Y_i v_mm^T x_{i,alpha_i} (> 1), c_it = (k_{i,alpha_i} - k_it)^T P, P = p_relax exact."""
    _, lab = label_result(ds, alpha, range(ds.n))
    _, rel = relaxed_target(ds, alpha)
    v, P = lab.x, rel.x
    S = set(support_set(ds, alpha))
    Y, X, K = ds.exact["Y"], ds.exact["X"], model.exact_keys(ds)
    vv, PP = sum(a * a for a in v), sum(a * a for a in P)
    out = []
    for i in range(ds.n):
        if i in S:
            continue
        m = Y[i] * sum(X[i, alpha[i]][c] * v[c] for c in range(ds.d))
        for t in range(ds.T):
            if t != alpha[i]:
                out.append((m, sum((K[i, alpha[i]][c] - K[i, t][c]) * P[c] for c in range(ds.d)), vv, PP))
    return out


def kappa_star(ds, alpha) -> float:
    """The smallest r/R for which p_relax is the limit along r = kappa R (0 when no non-support
    token binds): max over non-support (i, t) of ||v_mm|| (1 - c_it) / (||P|| (m_i - 1))."""
    vals = [np.sqrt(float(vv)) * float(1 - c) / (np.sqrt(float(PP)) * float(m - 1))
            for m, c, vv, PP in shift_conditions(ds, alpha)]
    return max([0.0] + vals)


def shifted_direction(ds, alpha, kappa: float) -> np.ndarray | None:
    """The predicted limit of p/R along r = kappa R (Theorem 6's finding): argmax over ||u|| <= 1 of
    min_{i,t} [(k_{i,alpha_i} - k_it)^T u + kappa (m_i - 1)/||v_mm||] (an SOCP, solved by Clarabel
    directly: max s s.t. a_it^T u + b_it >= s, (1, u) in the second-order cone); equals p_relax's
    direction when kappa > kappa*. Memoized on the dataset (the extended horizons ask again)."""
    alpha = tuple(int(a) for a in alpha)
    return ds.memo(("shifted_direction", alpha, float(kappa)), lambda: _shifted_direction(ds, alpha, float(kappa)))


def _shifted_direction(ds, alpha, kappa: float) -> np.ndarray | None:
    import clarabel
    from scipy import sparse

    v = label_result(ds, alpha, range(ds.n))[0].x
    m = ds.Y * np.einsum("nd,d->n", ds.X[np.arange(ds.n), alpha], v)
    K = model.keys(ds)
    rows = [(K[i, alpha[i]] - K[i, t], kappa * (m[i] - 1) / np.linalg.norm(v)) for i in range(ds.n) for t in range(ds.T)
            if t != alpha[i]]
    d, r = ds.d, len(rows)
    A = np.zeros((r + 1 + d, d + 1))                     # x = (u, s); A x + slack = b
    A[:r, :d] = -np.array([a for a, _ in rows])          # a^T u + b - s >= 0
    A[:r, d] = 1.0
    A[r + 1:, :d] = -np.eye(d)                           # (1, u) in the second-order cone
    b = np.concatenate([[c for _, c in rows], [1.0], np.zeros(d)])
    q = np.zeros(d + 1)
    q[d] = -1.0
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    sol = clarabel.DefaultSolver(sparse.csc_matrix((d + 1, d + 1)), q, sparse.csc_matrix(A), b,
                                 [clarabel.NonnegativeConeT(r), clarabel.SecondOrderConeT(d + 1)], settings).solve()
    if str(sol.status) != "Solved":
        return None
    u = np.asarray(sol.x)[:d]
    return u / np.linalg.norm(u)


def relaxed_target(ds, alpha):
    """Problem (10) for alpha over the support set S, with its certificate (memoized)."""
    return ds.memo(("relaxed_att_svm", tuple(alpha)),
                   lambda: decided(svm.relaxed_att_svm_problem(ds, alpha, support_set(ds, alpha))))


def tightened_problem(ds, alpha, S, eps: Fraction) -> MarginProblem:
    """(78): the rows of (10) with right-hand side 1 on S and eps elsewhere."""
    base = svm.relaxed_att_svm_problem(ds, alpha, S)
    keep = set(S)
    b = np.array([1.0 if i in keep else float(eps) for i, _ in base.tags])
    return MarginProblem(base.A, base.tags, None, None, f"(78)(alpha={alpha}, S={sorted(keep)}, eps={eps})", b,
                         exact_rows=base.exact_rows, exp2=base.exp2)


def norm2(x) -> Fraction:
    return sum((a * a for a in x), Fraction(0))


FIGURE3 = [[[0, 0], [1, 1]], [[0, 0], [1, -1]], [[0, 0], ["1/2", 1]]]


def figure3(last=("1/2", 1)) -> Dataset:
    """The paper's Figure 3 data: n = 3, T = 2, d = 2, labels (1, -1, 1), head init (-1, 0) (v
    only matters for the initial head; the joint path does not use it); last = (1/2, 3/2)
    gives Figure 3(b), where input 3 is not a support vector."""
    X = [FIGURE3[0], FIGURE3[1], [[0, 0], list(last)]]
    return Dataset.from_arrays(X, [1, -1, 1], [-1, 0], name=f"figure3(last={list(last)})")


def assumption_c(ds: Dataset, alpha, inputs) -> bool:
    """C1, C2 and C3 (mixtures on MIX_GRID) over `inputs` (module docstring); False when T^|inputs|
    exceeds SELECTION_LIMIT (not decided exhaustively)."""
    inputs = list(inputs)
    if not inputs or ds.T ** len(inputs) > SELECTION_LIMIT:
        return False
    key = (_content(ds), tuple(int(a) for a in alpha), tuple(inputs))
    if key not in _ASSUMPTION_C:
        if len(_ASSUMPTION_C) >= LABEL_CACHE:
            _ASSUMPTION_C.clear()
        _ASSUMPTION_C[key] = vertex_optimal(ds, alpha, inputs) and mixing_shrinks(ds, alpha, inputs) and \
            mixtures_shrink(ds, alpha, inputs)
    return _ASSUMPTION_C[key]


_ASSUMPTION_C: dict = {}


def _content(ds: Dataset) -> tuple:
    """The exact tokens and labels (what the label SVMs and Assumption C depend on), hashable."""
    return tuple(ds.exact["X"].ravel()), tuple(ds.exact["Y"]), ds.exact["X"].shape


def jointly_separable(ds: Dataset, alpha) -> bool:
    """(ATT-SVM)(alpha) and the label SVM on x_{i,alpha_i} are both feasible (exact KKT)."""
    att = att_svm(ds, alpha)[1]
    lab = label_result(ds, alpha, range(ds.n))[1]
    return att.verified and att.kind == "kkt" and lab.verified and lab.kind == "kkt"


def att_svm(ds: Dataset, alpha):
    """(ATT-SVM)(alpha) with its certificate, memoized on the dataset."""
    return ds.memo(("att_svm_certified", tuple(alpha)), lambda: decided(svm.att_svm_problem(ds, list(alpha))))
