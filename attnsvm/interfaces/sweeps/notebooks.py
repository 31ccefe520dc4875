"""The Transformers-as-SVMs notebooks (umich-sota/TF-as-SVM) as data: their random generators
reimplemented draw for draw on torch's generator, and their SVM procedures as published, for
`attnsvm reproduce tfsvm-*`.

Generators. Each notebook seeds a fresh `torch.Generator` and draws in float32 (torch's
default), normalises in float32, picks `best_ids` in float32 and only then converts to float64;
so does `draw` here, and `tests/test_notebooks.py` pins a seed of each against values computed
by running the notebooks' own functions. Model initialisations in the notebooks come from
torch's unseeded global generator, so they are not part of any seed: `linear_init` draws the
same distribution (torch's `nn.Linear`, uniform in +-1/sqrt(d)) from a seeded numpy stream.

Solvers (the authors' conventions): `w_svm_solver` is `base.W_svm_solver` (cvxpy, its default
solver, one constraint per row as written; the value of an infeasible problem is None) and
`svm_equivalence` is `base_nonlinear.W_svm_solver` (the generalized SVM W_dir, the finite part
W_fin fitted to the final softmax's within-set log-ratios, and R by least squares);
`matrix_rank` is theirs, `numpy.linalg.matrix_rank(W, tol=1e-7)`, which returns 1 for None.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RANK_TOL = 1e-7          # the notebook's absolute tolerance of matrix_rank
SET_THRESHOLD = 1e-3     # multi-token notebook: tokens with softmax >= this are the selected set
BAND = (1e-3, 1e-6)      # multi-token notebook: a softmax value in (1e-6, 1e-3] discards a run


@dataclass(frozen=True)
class Draw:
    """One instance: tokens X (n,T,d), labels Y (n,), queries Z (n,d), head v (d,) (the value
    matrix V (d,d) of the multi-token notebook) and the notebook's best_ids (n,), all float64
    (best_ids int) from float32 draws."""

    X: np.ndarray
    Y: np.ndarray
    Z: np.ndarray
    v: np.ndarray
    best: np.ndarray


def _unit(x):
    import torch

    return x / torch.norm(x, dim=-1, keepdim=True)


def _out(X, Y, Z, v, best) -> Draw:
    return Draw(*(t.double().numpy() for t in (X, Y, Z, v)), best.numpy().astype(np.int64))


def rank_data(seed: int, n: int, T: int, d: int) -> Draw:
    """`data_generator(seed)` of svm_rank.ipynb and local_converge.ipynb (the same function):
    v, Y (+1 iff a Gaussian draw is positive), X, Z, rows of X, Z and v of unit norm."""
    import torch

    g = torch.Generator()
    g.manual_seed(seed)
    v = torch.randn(d, generator=g)
    v = v / torch.norm(v)
    Y = 2 * torch.ones(n) * (torch.randn(n, generator=g) > 0) - 1
    X = _unit(torch.randn((n, T, d), generator=g))
    Z = _unit(torch.randn((n, d), generator=g))
    return _out(X, Y, Z, v, ((X @ v) * Y.view(-1, 1)).argmax(dim=-1))


def multitoken_data(seed: int, n: int, T: int, d: int) -> Draw:
    """`data_generator(seed, mode='relu')` of multi_token_converge.ipynb: V (d,d) of unit
    Frobenius norm (returned as `v`), X, Y, Z; best_ids = argmax_t Y_i 1^T ReLU(x_it^T V)."""
    import torch

    g = torch.Generator()
    g.manual_seed(seed)
    V = torch.randn((d, d), generator=g)
    V = V / torch.norm(V)
    X = _unit(torch.randn((n, T, d), generator=g))
    Y = 2 * torch.ones(n) * (torch.randn(n, generator=g) > 0) - 1
    Z = _unit(torch.randn((n, d), generator=g))
    return _out(X, Y, Z, V, (torch.relu(X @ V).sum(-1) * Y.view(-1, 1)).argmax(dim=-1))


def picture_data(name: str) -> Draw:
    """The fixed data of visualization1.ipynb (n=2, T=3, d=2, seed 1) and visualization2.ipynb
    (n=2, T=5, d=2, seed 3): Y = 1, shifted Gaussian tokens (not normalised), unit queries."""
    import torch

    n, d, T, seed, scale = {"visualization1": (2, 2, 3, 1, 0.3), "visualization2": (2, 2, 5, 3, 0.5)}[name]
    g = torch.Generator()
    g.manual_seed(seed)
    v = torch.randn(d, generator=g)
    v = v / torch.norm(v)
    Y = torch.ones(n)
    X = scale * torch.randn((n, T, d), generator=g)
    if name == "visualization1":
        X[0] += torch.tensor([-1, 0])
        X[1] += torch.tensor([1, 0])
    else:
        X[0, 0] = torch.tensor([1, .5])
        X[1, 0] = torch.tensor([1, -0.5])
        X[:, 1:] += torch.tensor([-1, 0])
    Z = _unit(torch.randn((n, d), generator=g))
    return _out(X, Y, Z, v, ((X @ v) * Y.view(-1, 1)).argmax(dim=-1))


def linear_init(rng: np.random.Generator, d: int, shape) -> np.ndarray:
    """torch's nn.Linear(d, .) weight distribution, uniform in +-1/sqrt(d), from a seeded stream."""
    return rng.uniform(-1, 1, shape) / np.sqrt(d)


# ---------------------------------------------------------------- the authors' SVM procedures

def _form(X, Z, W, i: int, a: int, b: int):
    """The notebooks' constraint expression (x_ia - x_ib)^T W z_i, as written."""
    return (X[i, a] - X[i, b]).reshape(1, -1) @ W @ Z[i].reshape(-1, 1)


def w_svm_solver(X, Z, ids, fro: bool):
    """base.W_svm_solver(X, ids, cross_input=Z, cross_attn=True, fro=fro): min ||W|| ('fro' or
    'nuc') s.t. (x_it - x_{i,ids_i})^T W z_i <= -1, cvxpy's default solver. Returns (W.value
    (None when infeasible), status, solver); raises where cvxpy raises (their caller skips the seed)."""
    import cvxpy as cp

    n, T, d = X.shape
    W = cp.Variable((d, d))
    cons = [_form(X, Z, W, i, t, int(ids[i])) <= -1 for i in range(n) for t in range(T) if t != ids[i]]
    prob = cp.Problem(cp.Minimize(cp.norm(W, "fro" if fro else "nuc")), cons)
    prob.solve()
    return W.value, prob.status, prob.solver_stats.solver_name


def matrix_rank(W) -> int:
    """The notebooks' rank: numpy.linalg.matrix_rank(W, tol=1e-7) (1 for W = None)."""
    return int(np.linalg.matrix_rank(W, tol=RANK_TOL))


def svm_equivalence(X, Z, sfx, W_grad, fro: bool = True):
    """base_nonlinear.W_svm_solver: with O_i = {t : s_it >= 1e-3}, W_dir = argmin ||W|| s.t.
    (x_o - x_o')^T W z_i = 0 within O_i and (x_t - x_o)^T W z_i <= -1 (o in O_i, t not);
    W_fin = argmin ||W|| s.t. (x_b - x_a)^T W z_i = log(s_b / s_a) within O_i; R = argmin
    ||W_fin + R W_dir - W_grad||. Returns (W_dir, W_fin + R W_dir); raises as theirs does when a
    problem has no value (e.g. infeasible: their caller skips the run)."""
    import cvxpy as cp

    n, T, d = X.shape
    sel = sfx >= SET_THRESHOLD
    mode = "fro" if fro else "nuc"
    W_fin, W_dir = cp.Variable((d, d)), cp.Variable((d, d))
    fin, drc = [], []
    for i in range(n):
        for a in range(T):
            for b in range(a + 1, T):
                if sel[i, a] and sel[i, b]:
                    fin.append(_form(X, Z, W_fin, i, b, a) == np.log(sfx[i, b] / sfx[i, a]))
                    drc.append(_form(X, Z, W_dir, i, a, b) == 0)
                elif sel[i, a]:
                    drc.append(_form(X, Z, W_dir, i, b, a) <= -1)
                elif sel[i, b]:
                    drc.append(_form(X, Z, W_dir, i, a, b) <= -1)
    cp.Problem(cp.Minimize(cp.norm(W_fin, mode)), fin).solve()
    cp.Problem(cp.Minimize(cp.norm(W_dir, mode)), drc).solve()
    R = cp.Variable(1)
    wf, wd = np.array(W_fin.value), np.array(W_dir.value)
    cp.Problem(cp.Minimize(cp.norm(wf + R * wd - W_grad, "fro"))).solve()
    return wd, wf + R.value * wd
