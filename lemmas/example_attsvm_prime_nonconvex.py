"""Appendix D's example: (ATT-SVM') is not convex when an optimal set has two tokens. One input,
T = 3, keys k_1 = e1, k_2 = -e1 (the optimal set O = {1, 2}) and k_3 = 0 (reconstruction: the
keys are lost in the extraction; these are the simplest ones matching "the solution set is
{e1, -e1} and their convex combination violates the constraints").

The constraint is max(p_1, -p_1) >= 1, i.e. |p_1| >= 1, so ||p||^2 = p_1^2 + sum_{j >= 2} p_j^2 >= 1
with equality exactly at p = +-e1 (sympy, symbolic d); the midpoint 0 has constraint value 0 < 1.
The exact solver (`svm.generalized`, two pieces certified by rational KKT) finds the same set."""

from fractions import Fraction

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.strategies import keyed_dataset
from attnsvm.claims.symbolic import d, j, residuals, total
from attnsvm.svm import generalized

STATEMENT = ("n = 1, keys e1, -e1, 0 with O = {1, 2}: the solution set of (ATT-SVM') is {e1, -e1} and the midpoint 0 "
             "violates its constraint, so (ATT-SVM') is not convex")

INSTANCE = dict(keys=[[[1, 0], [-1, 0], [0, 0]]], scores=[[1, 1, 0]], labels=[1])


def norm_bound() -> dict:
    """With p_1^2 >= 1 (the constraint |p_1| >= 1): ||p||^2 - 1 = (p_1^2 - 1) + sum_{j=2}^d p_j^2 >= 0, zero iff
    p_1 = +-1 and p_j = 0 for j >= 2 (symbolic d); the midpoint of e1 and -e1 is 0, whose value max(0, -0) = 0 < 1."""
    p = sp.IndexedBase("p", real=True)
    x = sp.Symbol("x", nonnegative=True)                         # p_1^2 = 1 + x
    rest = total(p[j + 1] ** 2, j, d - 1)
    norm2 = (1 + x) + rest
    mid = [(a + b) / 2 for a, b in zip((1, 0), (-1, 0))]
    value = sp.Max(mid[0], -mid[0]) - 0
    squares = isinstance(rest, sp.Sum) and bool(rest.function.is_nonnegative)     # a sum of squares of reals
    return residuals(excess=sp.expand(norm2 - 1 - x - rest), excess_nonnegative=bool(x.is_nonnegative and squares),
                     midpoint_violates=bool(value < 1))


def solver_agrees() -> dict:
    """The exact solver on the instance: both pieces certified, solution set {e1, -e1}, midpoint witness."""
    ds = keyed_dataset(**INSTANCE, name="appendix-D-example")
    sol = generalized.att_svm_prime(ds, [[0, 1]])
    e1 = (Fraction(1), Fraction(0), Fraction(0))
    m1 = tuple(-a for a in e1)
    ok = (sol.certified and sol.value2 == 1 and sorted(sol.solutions) == sorted([e1, m1])
          and sol.convexity.startswith("not convex") and not generalized.feasible_point(ds, [[0, 1]], (0, 0, 0)))
    return {"ok": bool(ok), "solutions": [[str(a) for a in x] for x in sol.solutions], "convexity": sol.convexity}


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("|p_1| >= 1 forces ||p|| >= 1 with equality only at +-e1; their midpoint 0 is infeasible (symbolic d)",
             "symbolic", norm_bound),
        Step("the exact (ATT-SVM') solver on the instance: two pieces, each certified by rational KKT, solution set "
             "{e1, -e1}, exact midpoint witness", "exact", solver_agrees),
    ), "the example's keys are lost in extraction; e1, -e1, 0 is our reconstruction")
