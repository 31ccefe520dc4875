"""(ATT-SVM') of the core paper's Appendix D (Theorem 8): max-margin separation of optimal SETS
O_i of tokens from the rest,

    p_mm in argmin ||p||  s.t.  max_{j in O_i} (k_ij - k_it)^T p >= 1   for all i, t not in O_i   (ATT-SVM')

(the formula is lost in the text extraction; this is our reconstruction from the proof of
Theorem 8 (D.1), where q_i^p -> 0 along R p needs each token outside O_i to be dominated by SOME
token of O_i, and from the paper's example that the problem is not convex: with a min over
O_i it would be an intersection of half-spaces, hence convex).

Pieces. The feasible set is the union over top choices alpha in prod_i O_i of the polyhedra
F(alpha) = {p : (k_{i,alpha_i} - k_it)^T p >= 1, t not in O_i}: a point of F(alpha) meets the
max constraint with j = alpha_i, and a feasible p lies in F(alpha) for alpha_i its largest
logit in O_i. So (ATT-SVM') is the minimum over alpha of convex QPs (`piece_problem`, the
(ATT-SVM) rows of alpha against the tokens outside the sets), each solved by `margin.solve` and
certified exactly by `certificates.certify` (KKT or Farkas): the optimal value Xi^2 and the
solution set {p_alpha : ||p_alpha||^2 = Xi^2} are exact (rational norms compared exactly).

Convexity (`Solution.convexity`), decided exactly where it is decided at all:
- 'convex: singleton sets': one piece, an (ATT-SVM)-type QP;
- 'convex: one piece contains the others': F(alpha) subset of F(alpha*) for every nonempty
  piece, each implied row certified by exact LP duals (lam >= 0, A_alpha^T lam = r, sum lam >= 1);
  the feasible set is then the polyhedron F(alpha*);
- 'not convex: ...': two exact feasible points (piece optima) whose midpoint violates a
  constraint of (ATT-SVM') exactly;
- 'undecided': neither test settles it.

The within-set tied variant (all of O_i at one logit: the generalized SVM of Transformers as
SVMs, Section 6) adds equalities; `set_rows` builds both kinds of rows for any key array and is
shared with `dynamics.cross.generalized_w_svm` (keys vec(x_it z_i^T)).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.errors import UserError
from attnsvm.svm.certificates import Certificate, certify
from attnsvm.svm.margin import MarginProblem, SVMResult, att_svm_problem, key_data, solve
from attnsvm.svm.rational import KeyDifferenceRows


def set_rows(K: np.ndarray, sets: Sequence[Sequence[int]]):
    """Rows of set separation on keys K (n, T, D): k_io - k_it for o in O_i and t not in O_i,
    tagged (i, o, t), in that order; and the within-set equality rows
    k_{i,min O_i} - k_io (o in O_i, o != min O_i). Returns (rows (m, D), tags, equality rows (e, D))."""
    n, T = K.shape[:2]
    rows, tags, eq = [], [], []
    for i, O in enumerate(sets):
        O = sorted(set(int(o) for o in O))
        for o in O:
            for t in range(T):
                if t not in O:
                    rows.append(K[i, o] - K[i, t])
                    tags.append((i, o, t))
        eq += [K[i, O[0]] - K[i, o] for o in O[1:]]
    D = int(np.prod(K.shape[2:]))
    return np.array(rows).reshape(len(rows), D), tuple(tags), np.array(eq).reshape(len(eq), D)


def check_sets(ds: Dataset, sets) -> tuple[tuple[int, ...], ...]:
    sets = tuple(tuple(sorted(set(int(o) for o in O))) for O in sets)
    if len(sets) != ds.n or any(not O or any(not 0 <= o < ds.T for o in O) for O in sets):
        raise UserError(f"sets must give a nonempty subset of [0, {ds.T}) for each of the {ds.n} inputs, got {sets}")
    return sets


def piece_problem(ds: Dataset, sets, alpha: Sequence[int]) -> MarginProblem:
    """F(alpha)'s QP: min ||p|| s.t. (k_{i,alpha_i} - k_it)^T p >= 1 for t not in O_i (alpha_i in O_i),
    the rows of `margin.att_svm_problem` restricted to the tokens outside the sets (exact rows kept)."""
    sets = check_sets(ds, sets)
    full = att_svm_problem(ds, alpha)
    keep = [j for j, (i, t) in enumerate(full.tags) if t not in sets[i]]
    pairs = [(i * ds.T + alpha[i], i * ds.T + t) for i, t in (full.tags[j] for j in keep)]
    return MarginProblem(full.A[keep], tuple(full.tags[j] for j in keep), None, None,
                         f"ATT-SVM'-piece(alpha={list(alpha)}, sets={[list(O) for O in sets]})",
                         exact_rows=KeyDifferenceRows(key_data(ds), pairs, ds.d), exp2=full.exp2)


@dataclass(frozen=True, eq=False)
class Piece:
    """One top choice alpha: its QP's result and exact certificate; `norm2` = ||p_alpha||^2 exactly."""

    alpha: tuple[int, ...]
    result: SVMResult
    certificate: Certificate

    @property
    def feasible(self) -> bool:
        return self.result.ok

    @property
    def certified(self) -> bool:
        return self.certificate.verified

    @property
    def x(self) -> tuple[Fraction, ...] | None:
        return self.certificate.x if self.feasible and self.certified else None

    @property
    def norm2(self) -> Fraction | None:
        x = self.x
        return None if x is None else sum((a * a for a in x), Fraction(0))


@dataclass(frozen=True, eq=False)
class Solution:
    """(ATT-SVM') on one dataset: every piece; `certified` when every piece is; `feasible`;
    `value2` = Xi^2 (exact); `solutions` the exact solution set (distinct points); `convexity`
    and its `evidence` (module docstring)."""

    sets: tuple[tuple[int, ...], ...]
    pieces: tuple[Piece, ...]
    convexity: str
    evidence: dict

    @property
    def certified(self) -> bool:
        return all(p.certified for p in self.pieces)

    @property
    def feasible(self) -> bool:
        return any(p.feasible for p in self.pieces)

    @property
    def value2(self) -> Fraction | None:
        vals = [p.norm2 for p in self.pieces if p.norm2 is not None]
        return min(vals) if vals and self.certified else None

    @property
    def solutions(self) -> list[tuple[Fraction, ...]]:
        v = self.value2
        out: list[tuple[Fraction, ...]] = []
        for p in self.pieces:
            if v is not None and p.norm2 == v and p.x not in out:
                out.append(p.x)
        return out

    def unit_solutions(self) -> np.ndarray:
        """The solution set divided by Xi, as floats (k, d)."""
        v = self.value2
        return np.array([[float(a) for a in x] for x in self.solutions]) / np.sqrt(float(v)) if v else np.zeros((0, 0))

    def to_json(self) -> dict:
        return {"sets": [list(O) for O in self.sets], "certified": self.certified, "feasible": self.feasible,
                "value2": None if self.value2 is None else str(self.value2),
                "solutions": [[str(a) for a in x] for x in self.solutions], "convexity": self.convexity,
                "pieces": [{"alpha": list(p.alpha), "status": p.result.status, "certified": p.certified,
                            "norm2": None if p.norm2 is None else str(p.norm2)} for p in self.pieces],
                **self.evidence}


def constraint_values(ds: Dataset, sets, p: Sequence[Fraction]) -> list[Fraction]:
    """max_{j in O_i} (k_ij - k_it)^T p for every i and t not in O_i, exactly (p rational)."""
    K = model.exact_keys(ds)
    logits = [[sum((K[i, t, k] * p[k] for k in range(ds.d)), Fraction(0)) for t in range(ds.T)] for i in range(ds.n)]
    return [max(logits[i][j] for j in O) - logits[i][t] for i, O in enumerate(sets) for t in range(ds.T) if t not in O]


def feasible_point(ds: Dataset, sets, p: Sequence[Fraction]) -> bool:
    return all(c >= 1 for c in constraint_values(ds, sets, p))


def _implied(piece: Piece, row: Sequence[Fraction]) -> bool:
    """Exactly: row^T p >= 1 on all of F(alpha) (nonempty), by LP duality: lam >= 0 with
    A_alpha^T lam = row and sum lam >= 1, found by an LP and re-solved exactly on its support."""
    import scipy.optimize
    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix

    A = piece.result.problem.exact().fractions()                          # (m, d) Fractions
    m = len(A)
    Af = np.array([[float(a) for a in r] for r in A]).T
    res = scipy.optimize.linprog(-np.ones(m), A_eq=Af, b_eq=np.array([float(a) for a in row]), bounds=(0, None),
                                 method="highs-ds")
    if res.status != 0 or -res.fun < 1 - 1e-9:
        return False
    supp = np.flatnonzero(res.x > 1e-12 * max(1.0, res.x.max())).tolist()
    if not supp:
        return False
    q = lambda a: QQ(Fraction(a).numerator, Fraction(a).denominator)
    M = DomainMatrix([[q(a) for a in A[k]] for k in supp], (len(supp), len(row)), QQ)
    r = DomainMatrix([[q(a)] for a in row], (len(row), 1), QQ)
    try:
        sol = (M * M.transpose()).lu_solve(M * r)
    except Exception:  # singular support: not certified
        return False
    lam = [Fraction(int(sol[k, 0].element.numerator), int(sol[k, 0].element.denominator)) for k in range(len(supp))]
    ok_sum = all(sum((l * A[k][c] for l, k in zip(lam, supp)), Fraction(0)) == row[c] for c in range(len(row)))
    return ok_sum and all(l >= 0 for l in lam) and sum(lam, Fraction(0)) >= 1


def _candidates(piece: Piece) -> list[tuple[Fraction, ...]]:
    """Exact points of F(alpha): its optimum x and x +- C n for an exact basis n of the null space
    of its rows (lines inside F(alpha)) scaled to 16 (1 + max|x|) in max-norm."""
    from sympy import Matrix, Rational

    x = piece.x
    A = piece.result.problem.exact().fractions()
    out = [x]
    if len(A):
        basis = Matrix([[Rational(a.numerator, a.denominator) for a in r] for r in A]).nullspace()
    else:
        basis = [Matrix([1 if k == j else 0 for k in range(len(x))]) for j in range(len(x))]
    C = 16 * (1 + max(abs(a) for a in x))
    for nvec in basis:
        nf = [Fraction(int(sv.p), int(sv.q)) for sv in nvec]
        scale = C / max(abs(a) for a in nf)
        out += [tuple(a + sgn * scale * b for a, b in zip(x, nf)) for sgn in (1, -1)]
    return out


def _convexity(ds: Dataset, sets, pieces: list[Piece]) -> tuple[str, dict]:
    if all(len(O) == 1 for O in sets):
        return "convex: singleton sets", {}
    if not all(p.certified for p in pieces):
        return "undecided", {"reason": "a piece is not certified"}
    live = [p for p in pieces if p.feasible]
    cands = {p.alpha: _candidates(p) for p in live}
    for a, b in itertools.combinations(live, 2):                       # exact non-convexity witness
        for xa, xb in itertools.product(cands[a.alpha], cands[b.alpha]):
            mid = tuple((u + w) / 2 for u, w in zip(xa, xb))
            if not feasible_point(ds, sets, mid):
                return "not convex: two feasible points with an infeasible midpoint", {
                    "witness_points": [[str(u) for u in xa], [str(u) for u in xb]],
                    "witness_alphas": [list(a.alpha), list(b.alpha)], "midpoint": [str(u) for u in mid]}
    if not live:
        return "convex: empty", {}
    K = model.exact_keys(ds)
    for top in live:
        rows = [[K[i, o, k] - K[i, t, k] for k in range(ds.d)] for i, o, t in
                [(i, top.alpha[i], t) for i, t in top.result.problem.tags]]
        if all(p is top or all(_implied(p, r) for r in rows) for p in live):
            return "convex: one piece contains the others", {"containing_alpha": list(top.alpha)}
    return "undecided", {"reason": "no piece certified to contain the others, no midpoint witness"}


def att_svm_prime(ds: Dataset, sets, solver: str = "quadprog", convexity: bool = True) -> Solution:
    """(ATT-SVM') for the sets O_i by enumerating the prod_i |O_i| pieces (small cases), each
    solved and certified exactly; `convexity=False` skips the convexity tests."""
    sets = check_sets(ds, sets)
    pieces = []
    for alpha in itertools.product(*sets):
        res = solve(piece_problem(ds, sets, alpha), solver)
        pieces.append(Piece(tuple(alpha), res, certify(res)))
    conv, ev = _convexity(ds, sets, pieces) if convexity else ("not tested", {})
    return Solution(sets, tuple(pieces), conv, ev)


def top_sets(ds: Dataset) -> tuple[tuple[int, ...], ...]:
    """O_i = argmax_t gamma_it, every tied top-score token (exact scores, Definition 1)."""
    g = model.exact_scores(ds)
    return tuple(tuple(t for t in range(ds.T) if row[t] == max(row)) for row in g)


def solution(ds: Dataset, sets) -> Solution:
    """(ATT-SVM') for the sets, every piece certified, without the convexity tests; memoized on
    the dataset (a hypothesis and the conclusion share it)."""
    key = ("att_svm_prime", tuple(tuple(O) for O in sets))
    return ds.memo(key, lambda: att_svm_prime(ds, sets, convexity=False))


# ---- heads h(x) = phi(v^T x) of Appendix D (Theorem 8, Lemma 14) --------------------------------

HEADS = ("linear", "tanh", "cubic")

def _phi(head: str):
    """phi, phi' and phi(u) - phi(u - c) without cancellation (torch, elementwise)."""
    import torch

    return {
        "linear": (lambda u: u, lambda u: torch.ones_like(u), lambda u, c: c),
        "tanh": (torch.tanh, lambda u: 1 - torch.tanh(u) ** 2,
                 lambda u, c: torch.sinh(c) / (torch.cosh(u) * torch.cosh(u - c))),
        "cubic": (lambda u: u + u ** 3, lambda u: 1 + 3 * u ** 2,
                  lambda u, c: c * (1 + u ** 2 + u * (u - c) + (u - c) ** 2)),
    }[head]


def head_loss(loss: str, head: str):
    """loss o phi: the risk of the head h(x) = phi(v^T x) (phi odd, strictly increasing) as a
    linear-head risk, since Y h(X^T s) = phi(<s, gamma>) for Y = +-1; its increment is computed
    without cancellation (phi(u) - phi(u - c) in closed form)."""
    from attnsvm.attention import losses

    base = losses.get_loss(loss)
    if head == "linear":
        return base
    phi, dphi, drop = _phi(head)
    return losses.Loss(f"{loss}o{head}", value=lambda u: base.value(phi(u)),
                       deriv=lambda u: base.deriv(phi(u)) * dphi(u),
                       increment=lambda u, c: losses.increment(base, phi(u), drop(u, c)))
