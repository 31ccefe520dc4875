"""Hypotheses on the W-parameterised risk L(W) of Transformers as SVMs (docs/statements.md#tfsvm-global):
the first step of gradient descent from W = 0."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table


def initial_gradient(ds, loss: str) -> np.ndarray:
    """grad_W L at W = 0 (`model.grad_W_cross` there, in numpy): the softmax is uniform, so
    G = (1/n) sum_i loss'(Y_i v^T xbar_i) Y_i sum_t (1/T) (v^T x_it - v^T xbar_i) x_it z_i^T."""
    import torch

    from attnsvm.attention.losses import get_loss

    X, Y, Z = ds.X, ds.Y, model.queries(ds)
    g = X @ ds.v                                                    # v^T x_it
    lp = get_loss(loss).deriv(torch.from_numpy(Y * g.mean(-1))).numpy()
    jac = (g - g.mean(-1, keepdims=True)) / ds.T
    return np.einsum("n,ntd,nt,ne->de", lp * Y, X, jac, Z) / ds.n


def initial_gradient_margins(ds, loss: str) -> np.ndarray:
    """(x_{i,opt} - x_it)^T (-grad L(0)) z_i for every i and t != opt_i."""
    G = initial_gradient(ds, loss)
    Z, opt = model.queries(ds), model.optimal_tokens(ds)
    return np.array([(ds.X[i, opt[i]] - ds.X[i, t]) @ (-G) @ Z[i]
                     for i in range(ds.n) for t in range(ds.T) if t != opt[i]])


INITIAL_GRADIENT_ALIGNED = Hypothesis(
    "initial_gradient_aligned", "(x_opt - x_t)^T (-grad L(0)) z_i > 0 for every i, t != opt_i",
    lambda inst: bool((initial_gradient_margins(inst.dataset, inst.params["loss"]) > 0).all()))

HYPOTHESES = table(INITIAL_GRADIENT_ALIGNED)
