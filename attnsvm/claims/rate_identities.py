"""Symbolic identities that the outlines of paper C's rate results share (`lemmas/rates_*.py`),
defined once so that those outlines depend on the library and never on each other's modules
(docs/statements.md#rates-global and after). Each returns `symbolic.residuals(...)`:

- `descent_direction`: Lemma 4's covariance identity under Assumption B and its sign at the logits of
  W_mm(opt) (`identities.covariance_under_B`, `identities.descent_sign`; symbolic T): W_mm(opt) is a
  global descent direction (rates-global, step 1; repeated by rates-ngd and rates-polyak);
- `progress_per_step`: a normalized step along a positive combination of the z_it gains at least 1/Z
  along W_mm (rates-ngd, step 2; repeated by rates-polyak and rates-sparsity);
- `linear_growth`: the per-step gains telescope (rates-ngd, step 3; repeated likewise);
- `corr_gap_bound`: 1 - corr(W, W_mm) <= ||r||^2 / (2 a^2) for W = a u + r (rates-ngd, step 4;
  repeated by rates-polyak).
"""

from __future__ import annotations

import sympy as sp

from attnsvm.claims import identities
from attnsvm.claims.symbolic import residuals, t, total


def descent_direction() -> dict:
    """Lemma 4's covariance identity and its sign at the logits of W_mm(opt) (symbolic T)."""
    identity, sign = identities.covariance_under_B(), identities.descent_sign()
    return {"ok": identity["ok"] and sign["ok"], **{f"identity_{k}": v for k, v in identity.items() if k != "ok"},
            **{f"sign_{k}": v for k, v in sign.items() if k != "ok"}}


def progress_per_step() -> dict:
    """d = sum_t w_t z_t / ||sum_t w_t z_t|| with w_t >= 0, z_t . W_mm = 1 + c_t (c_t >= 0, the SVM constraints)
    and ||sum_t w_t z_t|| = Z sum_t w_t - e (e >= 0, triangle inequality): Z <d, W_mm> ||.|| - ||.|| =
    Z sum_t w_t c_t + e >= 0, i.e. <d, W_mm> >= 1/Z (symbolic number of terms)."""
    T1 = sp.Symbol("T_minus_1", integer=True, positive=True)
    w, c = sp.IndexedBase("w", nonnegative=True), sp.IndexedBase("c", nonnegative=True)
    Z, e = sp.Symbol("Z", positive=True), sp.Symbol("e", nonnegative=True)
    inner = total(w[t] * (1 + c[t]), t, T1)
    norm = Z * total(w[t], t, T1) - e
    slack = Z * inner - norm
    expected = Z * total(w[t] * c[t], t, T1) + e
    return residuals(slack=slack - expected, slack_nonnegative=bool(expected.is_nonnegative))


def linear_growth() -> dict:
    """<W_t, u> = <W_0, u> + sum_{k<t} eta <d_k, u> >= <W_0, u> + eta t / (Z m), u = W_mm/m, m = ||W_mm||:
    the per-step gains eta/(Z m) + e_k (e_k >= 0) telescope (symbolic t)."""
    eta, Z, m = sp.symbols("eta Z m", positive=True)
    k, n = sp.Symbol("k", integer=True, positive=True), sp.Symbol("n_steps", integer=True, positive=True)
    e = sp.IndexedBase("e", nonnegative=True)
    gained = total(eta / (Z * m) + e[k], k, n)                    # steps k = 1..t
    excess = sp.expand(gained - eta * n / (Z * m))
    return residuals(telescoped=excess - total(e[k], k, n), excess_nonnegative=bool(excess.is_nonnegative))


def corr_gap_bound() -> dict:
    """W = a u + r, r orthogonal to the unit u, a > 0: 1 - corr = 1 - 1/sqrt(1 + x) with x = ||r||^2/a^2, and
    x/2 - (1 - 1/sqrt(1 + x)) = (1 - y)^2 (1 + 2y) / (2 y^2) >= 0 with y = 1/sqrt(1 + x) in (0, 1]."""
    y = sp.Symbol("y", positive=True)
    x = 1 / y ** 2 - 1
    slack = x / 2 - (1 - y)
    factored = (1 - y) ** 2 * (1 + 2 * y) / (2 * y ** 2)
    return residuals(factorisation=sp.simplify(slack - factored), slack_nonnegative=bool(factored.is_nonnegative))
