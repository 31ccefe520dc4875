"""The attention model (docs/statements.md#notation): keys, scores (Definition 1), optimal tokens, output f and
risk L for any head, with closed-form gradients in p, W and (K, Q).

`f(X) = h(X^T S(X W p))`; `L(p) = (1/n) sum_i loss(Y_i f(X_i))`. The closed forms use the
chain rule `grad_p = (1/n) sum_i loss'_i Y_i K_i^T S'(K_i p) X_i grad h(xi_i)`; with a linear
head this is the textbook `K_i^T S'(a_i) gamma_i`. For dynamics at saturation use
`attnsvm.attention.gradients` (cancellation-free, log-domain), not these.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import torch

from attnsvm.attention.data import Dataset, to_integers
from attnsvm.attention.heads import LinearHead
from attnsvm.attention.losses import Loss, get_loss

DTYPE = torch.float64


def t(a, device=None) -> torch.Tensor:
    """float64 tensor view of an array."""
    return torch.as_tensor(np.asarray(a, dtype=np.float64) if not torch.is_tensor(a) else a, dtype=DTYPE, device=device)


def keys(ds: Dataset) -> np.ndarray:
    """K_i = X_i W, shape (n, T, d); row t is k_it = W^T x_it."""
    return ds.X @ ds.W


def scores(ds: Dataset) -> np.ndarray:
    """gamma_it = Y_i v^T x_it (Definition 1), shape (n, T)."""
    return ds.Y[:, None] * (ds.X @ ds.v)


def optimal_tokens(ds: Dataset) -> np.ndarray:
    """opt_i = argmax_t gamma_it (first index on ties), computed on exact values."""
    g = exact_scores(ds)
    return np.array([max(range(ds.T), key=lambda k: (row[k], -k)) for row in g])


def integer_tokens(ds: Dataset) -> tuple[np.ndarray, int]:
    """The tokens as integers over one common denominator: X = Xn / dx, Xn of shape (n T, d)
    (object array of ints; computed once per dataset, shared by exact scores, keys and certificates)."""
    return ds.memo("integer_tokens", lambda: to_integers(ds.exact["X"].reshape(ds.n * ds.T, ds.d)))


def exact_scores(ds: Dataset) -> np.ndarray:
    """Scores in exact rational arithmetic (object array of Fractions; computed once per dataset,
    as integers over common denominators)."""
    def compute():
        Xn, dx = integer_tokens(ds)
        vn, dv = to_integers(ds.exact["v"])
        s = Xn.dot(vn).reshape(ds.n, ds.T)
        return np.array([[Fraction(int(y * a), dx * dv) for a in row] for y, row in zip(ds.exact["Y"], s)],
                        dtype=object)
    return ds.memo("exact_scores", compute)


def exact_keys(ds: Dataset) -> np.ndarray:
    """K_i = X_i W in exact rational arithmetic, shape (n, T, d), object dtype (computed once)."""
    def compute():
        Xn, dx = integer_tokens(ds)
        Wn, dw = to_integers(ds.exact["W"])
        K = Xn.dot(Wn)
        return np.array([Fraction(int(a), dx * dw) for a in K.ravel()], dtype=object).reshape(ds.n, ds.T, ds.d)
    return ds.memo("exact_keys", compute)


def strict_optimality(ds: Dataset) -> bool:
    """gamma_{i,opt_i} > gamma_it for every i and t != opt_i (exact)."""
    g = exact_scores(ds)
    for row in g:
        top = max(row)
        if sum(1 for x in row if x == top) > 1:
            return False
    return True


def assumption_b(ds: Dataset) -> bool:
    """Assumption B (docs/statements.md#assumption-B): in every input all non-optimal tokens share one score, strictly
    below the optimal one (exact)."""
    for row in exact_scores(ds):
        top = max(row)
        rest = {x for x in row if x != top}
        if sum(1 for x in row if x == top) > 1 or len(rest) > 1:
            return False
    return True


def attention(K: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """S(K p): softmax over tokens (stable; torch subtracts the max)."""
    return torch.softmax(K @ p, dim=-1)


def outputs(ds: Dataset, p, head=None, W=None) -> torch.Tensor:
    """f(X_i) = h(X_i^T S(X_i W p)) for every i; `W` overrides ds.W (may be a tensor)."""
    head = head or LinearHead(ds.v)
    X = t(ds.X)
    Wt = t(ds.W) if W is None else W
    s = attention(X @ Wt, t(p) if not torch.is_tensor(p) else p)
    return head(torch.einsum("nt,ntd->nd", s, X))


def risk(ds: Dataset, p, loss: Loss | str = "logistic", head=None, W=None) -> torch.Tensor:
    """L(p) = (1/n) sum_i loss(Y_i f(X_i)) (ERM)."""
    loss = get_loss(loss)
    return loss.value(t(ds.Y) * outputs(ds, p, head, W)).mean()


def _chain(s: torch.Tensor, X: torch.Tensor, Y: torch.Tensor, loss: Loss, head) -> tuple[torch.Tensor, torch.Tensor]:
    """Common factor of every closed-form gradient: loss'_i and S'(a_i) g_i, where
    g_it = Y_i x_it^T grad h(xi_i) are the effective scores (= gamma_it for a linear head)."""
    xi = torch.einsum("nt,ntd->nd", s, X)
    lp = loss.deriv(Y * head(xi))
    g = Y[:, None] * torch.einsum("ntd,nd->nt", X, head.grad(xi))
    return lp, s * (g - (s * g).sum(-1, keepdim=True))


def grad_p(ds: Dataset, p, loss: Loss | str = "logistic", head=None, W=None) -> torch.Tensor:
    """Closed-form grad_p L = (1/n) sum_i loss'_i K_i^T S'(K_i p) g_i for any head with `grad`."""
    loss, head = get_loss(loss), head or LinearHead(ds.v)
    X, Y = t(ds.X), t(ds.Y)
    K = X @ (t(ds.W) if W is None else W)
    lp, jac_g = _chain(torch.softmax(K @ t(p), dim=-1), X, Y, loss, head)
    return torch.einsum("n,ntd,nt->d", lp, K, jac_g) / ds.n


def cross_logits(X: torch.Tensor, W: torch.Tensor, Z: torch.Tensor) -> torch.Tensor:
    """a_it = x_it^T W z_i (cross-attention, paper B)."""
    return torch.einsum("ntd,de,ne->nt", X, W, Z)


def queries(ds: Dataset) -> np.ndarray:
    """z_i: the dataset's z, else self-attention z_i = x_i1."""
    return ds.z if ds.z is not None else ds.X[:, 0, :]


def _grad_W(X, Y, Z, W, loss: Loss, head) -> torch.Tensor:
    lp, jac_g = _chain(torch.softmax(cross_logits(X, W, Z), dim=-1), X, Y, loss, head)
    return torch.einsum("n,ntd,nt,ne->de", lp, X, jac_g, Z) / X.shape[0]


def risk_cross(ds: Dataset, W, loss: Loss | str = "logistic", head=None) -> torch.Tensor:
    """L(W) = (1/n) sum_i loss(Y_i h(X_i^T S(X_i W z_i)))."""
    loss, head = get_loss(loss), head or LinearHead(ds.v)
    X, Y = t(ds.X), t(ds.Y)
    s = torch.softmax(cross_logits(X, t(W), t(queries(ds))), dim=-1)
    return loss.value(Y * head(torch.einsum("nt,ntd->nd", s, X))).mean()


def grad_W_cross(ds: Dataset, W, loss: Loss | str = "logistic", head=None) -> torch.Tensor:
    """Closed-form grad_W of `risk_cross`: (1/n) sum_i loss'_i X_i^T S'(a_i) g_i z_i^T."""
    return _grad_W(t(ds.X), t(ds.Y), t(queries(ds)), t(W), get_loss(loss), head or LinearHead(ds.v))


def grad_W(ds: Dataset, W, u, loss: Loss | str = "logistic", head=None) -> torch.Tensor:
    """grad_W of L_W(W) = (1/n) sum_i loss(Y_i h(X_i^T S(X_i W u))) (Lemma 1): the
    cross-attention gradient with every query z_i = u (the dataset's W is not used)."""
    X = t(ds.X)
    Z = t(u).expand(ds.n, ds.d)
    return _grad_W(X, t(ds.Y), Z, t(W), get_loss(loss), head or LinearHead(ds.v))


def grad_KQ(ds: Dataset, Kmat, Qmat, loss: Loss | str = "logistic", head=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients in (K, Q) of the cross-attention risk with W = K Q^T (paper B):
    with G = grad_W L, grad_K = G Q and grad_Q = G^T K."""
    G = grad_W_cross(ds, t(Kmat) @ t(Qmat).T, loss, head)
    return G @ t(Qmat), G.T @ t(Kmat)
