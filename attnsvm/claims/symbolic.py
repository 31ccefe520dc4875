"""Shared sympy tools of the proof outlines (`lemmas/<id>.py`).

Sizes stay symbolic: `total(expr, t, T)` is sum_{t=1}^T expr for a symbolic T, term by term
(factors free of t come out, a KroneckerDelta picks its term, the rest stays an unevaluated
Sum that later terms can cancel), so an identity checked with it holds for every number of
tokens (or every dimension, with `j` and `d`). `residuals(...)` turns a step's residuals into
the JSON-ready dict a `Step.verify` returns.
"""

from __future__ import annotations

import sympy as sp

T = sp.Symbol("T", integer=True, positive=True)      # tokens per input
d = sp.Symbol("d", integer=True, positive=True)      # embedding dimension
t = sp.Symbol("t", integer=True, positive=True)      # token index
u = sp.Symbol("u", integer=True, positive=True)      # second token index
o = sp.Symbol("o", integer=True, positive=True)      # the optimal (selected) token, 1 <= o <= T
j = sp.Symbol("j", integer=True, positive=True)      # coordinate index
k = sp.Symbol("k", integer=True, positive=True)      # second coordinate index


def in_range(expr: sp.Expr) -> sp.Expr:
    """Each Piecewise a KroneckerDelta sum produced, replaced by its first branch: the picked
    index lies in the summation range (true wherever `total` and `resolve` are used here)."""
    return expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: e.args[0][0])


def total(expr: sp.Expr, i: sp.Symbol = t, n: sp.Expr = T) -> sp.Expr:
    """sum_{i=1}^{n} expr for a symbolic n, term by term."""
    out = sp.Integer(0)
    for term in sp.Add.make_args(sp.expand(expr)):
        free, dep = term.as_independent(i, as_Add=False)
        out += free * (n if dep == 1 else in_range(sp.Sum(dep, (i, 1, n)).doit()))
    return out


def resolve(expr: sp.Expr) -> sp.Expr:
    """Evaluate the sums of Kronecker deltas that differentiating a Sum produces."""
    return in_range(expr.replace(lambda e: isinstance(e, sp.Sum) and e.has(sp.KroneckerDelta), lambda e: e.doit()))


def softmax(a: sp.IndexedBase, i: sp.Symbol = t, n: sp.Expr = T):
    """(s, Z): s(x) = exp(a_x)/Z, Z = sum_{i=1}^n exp(a_i), for a symbolic number of tokens n."""
    Z = sp.Sum(sp.exp(a[i]), (i, 1, n))
    return (lambda x: sp.exp(a[x]) / Z), Z


def on_simplex(expr: sp.Expr, s: sp.IndexedBase, i: sp.Symbol = t, n: sp.Expr = T) -> sp.Expr:
    """expr with sum_{i=1}^n s_i = 1 (softmax weights)."""
    return sp.expand(expr.subs(sp.Sum(s[i], (i, 1, n)), 1))


def residuals(**parts) -> dict:
    """A step's verify result: each part is a residual that must vanish (expression, explicit matrix
    or matrix expression of symbolic size) or a bool that must be True; ok when all do."""
    detail, ok = {}, True
    for name, value in parts.items():
        if isinstance(value, bool):
            good = value
            detail[name] = value
        elif isinstance(value, sp.MatrixBase):
            value = value.applyfunc(sp.expand)
            good = value.is_zero_matrix is True
            detail[name] = "0" if good else str(value.tolist())
        elif isinstance(value, sp.MatrixExpr):
            value = sp.expand(value.doit())
            good = value == 0 or getattr(value, "is_ZeroMatrix", False)
            detail[name] = "0" if good else str(value)
        elif isinstance(value, sp.Basic):
            value = sp.expand(value)
            good = value == 0
            detail[name] = str(value)
        else:
            raise TypeError(f"residual {name!r} is a {type(value).__name__}: give a sympy expression or a bool")
        ok &= good
    return {"ok": bool(ok), **detail}


def exp_free(expr: sp.Expr, logits, E) -> sp.Expr:
    """exp(a_t) -> E_t > 0 (a_t = log E_t): every exponential becomes a monomial, then rational
    cancellation decides the identity exactly (for explicit, fixed sizes)."""
    return sp.cancel(sp.together(expr.subs({x: sp.log(e) for x, e in zip(logits, E)})))
