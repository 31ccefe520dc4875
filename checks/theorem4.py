"""Theorem 4 (only LMM directions are limits): with distinct scores and keys in general
position, for a unit q that is not an LMM direction, the path restricted to a cone around q,

    p(R) = argmin L(p)  s.t.  p in cone_mu(q),  R0 <= ||p|| <= R          (paper, eq. (9))

does not converge to q: either ||p(R)|| stays bounded or lim p(R)/R != q.

p(R) is computed by `attnsvm.dynamics.regpath.path` with the cone and the norm lower bound, on the grid
R_k = R0 2^k, k = 1..G (G = 5 at quick, +1 per horizon doubling), from q, points on the cone's
boundary, seeded points inside it and every LMM direction inside it. Half the q drawn are the
exact p_mm of a feasible selection that is not locally optimal (an SVM direction that Definition
2 rejects: the case the theorem is about), the rest random integer directions.

Proxy (named): gap_k = 1 - corr(p(R_k), q); delta = half the smaller of mu and the distance
1 - corr(q', q) to the nearest LMM direction q' != q inside the cone (the limit can only be an
LMM inside the cone or a point of its boundary, Theorem 7). The conclusion holds when, at the
largest radius, either ||p(R)|| < R (1 - 1e-6) and it has stopped growing (bounded branch), or
gap >= delta without decreasing by PLATEAU (relative) over the last three radii (the path
settled away from q). It fails when the gap is < delta and non-increasing over the last three
radii (the path approaches q). Otherwise the grid is extended (up to EXTEND doublings) and
then the instance is INCONCLUSIVE, as is any instance whose solves did not settle."""

import itertools
from fractions import Fraction

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import gaussian_datasets, keyed_dataset
from attnsvm.dynamics import Problem, regpath
from attnsvm.svm import geometry

PLATEAU = 1e-3
LAST = 3
EXTEND = 2
ITERS = 300


def distinct_scores(inst) -> bool:
    """gamma_it != gamma_itau for t != tau in every input (exact)."""
    return all(len(set(row)) == len(row) for row in model.exact_scores(inst.dataset))


def general_position(inst) -> bool:
    """Keys in general position (Theorem 7), exactly: for every alpha and every set of distinct
    rows k_{i,alpha_i} - k_it (t != alpha_i), a set of at most d rows is linearly independent and
    a set of d + 1 rows M has no p with M p = 1 (then no larger set has one either)."""
    ds = inst.dataset
    K = model.exact_keys(ds)
    if ds.T ** ds.n > 64:
        return False                                        # not decided exhaustively: treated as not met
    for alpha in itertools.product(range(ds.T), repeat=ds.n):
        rows = [[K[i, alpha[i]][c] - K[i, t][c] for c in range(ds.d)] for i in range(ds.n) for t in range(ds.T) if t != alpha[i]]
        for size in range(1, min(len(rows), ds.d + 1) + 1):
            for sub in itertools.combinations(rows, size):
                M = sp.Matrix(sub)
                if size <= ds.d and M.rank() < size:
                    return False
                if size == ds.d + 1 and M.rank() == M.row_join(sp.ones(size, 1)).rank():
                    return False
    return True


def direction(inst) -> np.ndarray:
    return np.array([float(Fraction(x)) for x in inst.params["q"]])


def _parallel(q_exact, x_exact) -> bool:
    """q and x point the same way, exactly (all 2x2 minors vanish, positive inner product)."""
    d = len(q_exact)
    minors = all(q_exact[i] * x_exact[j] == q_exact[j] * x_exact[i] for i in range(d) for j in range(i + 1, d))
    return minors and sum(a * b for a, b in zip(q_exact, x_exact)) > 0


def lmm_directions(ds) -> list:
    """Every locally optimal selection with an exact p_mm (exhaustive when T^n <= 4096)."""
    return [s for s in geometry.lmms(ds) if s.certified]


def q_not_lmm(inst) -> bool:
    """q is not the direction of any LMM (exact comparison with each certified p_mm)."""
    if not geometry.exhaustive(inst.dataset):
        return False
    q = [Fraction(x) for x in inst.params["q"]]
    return not any(_parallel(q, s.certificate.x) for s in lmm_directions(inst.dataset))


def cone_starts(q, mu, lmm_dirs, rng, count: int = 3) -> np.ndarray:
    """q, `count` points on the cone's boundary, `count` inside, and the LMM directions inside."""
    qh = q / np.linalg.norm(q)
    c = 1 - mu
    out = [qh]
    for _ in range(count):
        w = rng.normal(size=q.shape)
        w -= (w @ qh) * qh
        out.append(c * qh + np.sqrt(1 - c * c) * w / np.linalg.norm(w))
    out += list(geometry.sample_cone(qh, mu, 1.0, rng, size=count))
    out += [x / np.linalg.norm(x) for x in lmm_dirs if geometry.corr(x, qh) >= c]
    return np.array(out)


def restricted_path(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    q, mu, R0 = direction(inst), float(P["mu"]), float(P["R0"])
    qx = [Fraction(x) for x in P["q"]]
    lmms = lmm_directions(ds)
    others = [s.p_mm for s in lmms if not _parallel(qx, s.certificate.x)]
    inside = [1 - geometry.corr(x, q) for x in others if geometry.corr(x, q) >= 1 - mu]
    delta = min([mu] + inside) / 2
    starts = cone_starts(q, mu, [s.p_mm for s in lmms], np.random.default_rng(P["seed"]))
    G = 5 + max(0, int(round(np.log2(budget.horizon))))
    for extra in range(EXTEND + 1):
        radii = R0 * 2.0 ** np.arange(1, G + extra + 1)
        path = regpath.path(Problem.from_datasets([ds], P["loss"]), radii, starts, cone=(q, mu), min_radius=R0, iters=ITERS)
        out = _decide(path, radii, q, delta)
        if out.holds is not None or out.reason != UNDECIDED:
            break
    out.detail.update(q=q.tolist(), mu=mu, R0=R0, delta=delta, lmm_directions_in_cone=len(inside) + (len(lmms) - len(others)))
    return out


UNDECIDED = "undecided at the largest radius: the gap to q is still moving"


def _decide(path, radii, q, delta) -> Outcome:
    gaps = (1 - path.corr(torch.as_tensor(q))[:, 0]).clamp_min(0).tolist()
    norms = path.p[:, 0].norm(dim=-1).tolist()
    ok = regpath.settled(path)
    tail = slice(len(gaps) - LAST, len(gaps))
    detail = {"radii": radii.tolist(), "gap": gaps, "norm_over_R": [float(n / r) for n, r in zip(norms, radii)],
              "status": [s[0] for s in path.status], "residual": path.residual[:, 0].tolist(),
              "final_direction": (path.p[-1, 0] / path.p[-1, 0].norm()).tolist()}
    if not all(ok[tail]):
        return Outcome(None, detail=detail, reason="restricted path solve did not settle on the last radii")
    last, n = gaps[tail], norms[tail]
    if n[-1] < radii[-1] * (1 - 1e-6) and n[-1] <= n[-2] * (1 + 1e-6):
        return Outcome(True, detail={**detail, "branch": "bounded"})
    if last[-1] >= delta and last[-1] >= last[0] * (1 - PLATEAU):
        return Outcome(True, detail={**detail, "branch": "direction away from q"})
    if last[-1] < delta and all(b <= a * (1 + 1e-6) + 1e-12 for a, b in zip(last, last[1:])):
        return Outcome(False, detail={**detail, "branch": "approaches q"})
    return Outcome(None, detail=detail, reason=UNDECIDED)


def _q_strings(x) -> list:
    return [str(Fraction(v).limit_denominator(10 ** 6)) if isinstance(v, float) else str(v) for v in x]


def svm_non_lmm_directions(ds) -> list:
    """The exact p_mm of every feasible selection that is not locally optimal: SVM directions
    that are not LMM directions, the hardest q for the theorem (the path restricted around them
    has a max-margin direction to head for)."""
    found = []
    for alpha in itertools.product(range(ds.T), repeat=ds.n):
        s = geometry.select(ds, alpha)
        if s.feasible and s.certified and not s.locally_optimal:
            found.append(s)
    return found


def _random_q_instances() -> Space:
    """Gaussian datasets (general position and distinct scores almost surely) and q of two kinds:
    'svm': the exact p_mm of a feasible selection that is not locally optimal (the hard case);
    'random': small integer entries (generically not an LMM direction). Datasets without a
    non-LMM SVM direction fall back to a random q."""
    datasets = gaussian_datasets(n=(1, 2), T=(2, 3), d=2)

    def generate(c) -> Instance:
        ds = datasets.generate(c)
        kind = c.sampled_from(["svm", "random"])
        hard = svm_non_lmm_directions(ds) if kind == "svm" else []
        if hard:
            q = [str(x) for x in hard[c.integer(0, len(hard) - 1, "index")].certificate.x]
        else:
            q = [str(c.integer(-4, 4, "entry")) for _ in range(ds.d)]
            if not any(int(x) for x in q):
                c.reject()
        return Instance(ds, {"q": q, "mu": c.sampled_from([0.05, 0.02]), "R0": 1.0,
                             "loss": c.sampled_from(sorted(LOSSES)), "seed": c.integer(0, 2**16, "seed")})

    return Space(generate, "Gaussian datasets n 1..2, T 2..3, d 2; q a non-LMM SVM direction or a random integer vector")


@st.composite
def lmm_q_instances(draw):
    """q is exactly an LMM direction (its exact p_mm): the path restricted around it converges to it."""
    ds = draw(gaussian_datasets(n=st.integers(1, 2), T=st.integers(2, 3), d=st.just(2)))
    lm = lmm_directions(ds)
    q = [str(x) for x in lm[draw(st.integers(0, len(lm) - 1))].certificate.x] if lm else ["1", "0"]
    return Instance(ds, {"q": q, "mu": draw(st.sampled_from([0.05, 0.02])), "R0": 1.0,
                         "loss": draw(st.sampled_from(sorted(LOSSES))), "seed": draw(st.integers(0, 2**16))})


@st.composite
def tied_neighbour_instances(draw):
    """Distinct scores dropped: one input, keys k1 = 0, k2 = (a, -c), k3 = (0, -b) with 0 < c < b,
    scores (1, 1, 0) (tokens 1 and 2 tied), q = e_2. alpha = 1 has the tied token 2 as an
    active SVM-neighbour, so q = (k1 - k3)/||k1 - k3|| is no LMM direction, yet mixing the tied
    token is free and q maximises the separation of token 3."""
    b = draw(st.integers(2, 4))
    c = draw(st.integers(1, b - 1))
    a = draw(st.integers(1, 3))
    ds = keyed_dataset([[[0, 0], [a, -c], [0, -b]]], [[1, 1, 0]], [1], name="tied-neighbour")
    return Instance(ds, {"q": ["0", "1", "0"], "mu": 0.05, "R0": 1.0, "loss": draw(st.sampled_from(sorted(LOSSES))),
                         "seed": draw(st.integers(0, 2**16))})


@st.composite
def repeated_key_instances(draw):
    """General position dropped: one input whose two best tokens share one key (the row
    k_1 - k_2 = 0): no selection of them is feasible, so there is no LMM at all, and the path
    separates the pair from token 3 along q = (k_pair - k_3)."""
    x = draw(st.integers(1, 3))
    ds = keyed_dataset([[[0, 0], [0, 0], [x, 0]]], [[2, 1, 0]], [1], name="repeated-key")
    return Instance(ds, {"q": ["-1", "0", "0"], "mu": 0.05, "R0": 1.0, "loss": draw(st.sampled_from(sorted(LOSSES))),
                         "seed": draw(st.integers(0, 2**16))})


def _instances(dropped):
    if "q_not_lmm" in dropped:
        return lmm_q_instances()
    if "distinct_scores" in dropped:
        return tied_neighbour_instances()
    if "general_position" in dropped:
        return repeated_key_instances()
    return _random_q_instances()


claim = Claim(
    name="theorem4",
    evaluations=20,
    statement="distinct scores, keys in general position, q not an LMM direction => the path restricted to "
              "cone_mu(q) with ||p|| >= R0 does not converge to q (bounded, or lim p(R)/R != q)",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        Hypothesis("distinct_scores", "gamma_it != gamma_itau for t != tau (exact)", distinct_scores),
        Hypothesis("general_position", "keys in general position (Theorem 7), decided exactly", general_position),
        Hypothesis("q_not_lmm", "q is parallel to no LMM p_mm (exact, all selections)", q_not_lmm),
    ),
    conclusion=restricted_path,
    instances=_instances,
    proxy=f"gap = 1 - corr(p(R), q) on R = R0 2^k, k = 1..5 (+1 per horizon doubling, up to {EXTEND} more while "
          f"undecided), p(R) by regpath in cone_mu(q) with ||p|| >= R0; holds if bounded (||p(R)|| < R and not growing) "
          f"or gap >= delta and not decreasing by {PLATEAU} over the last {LAST} radii, delta = min(mu, distance to "
          f"the nearest other LMM direction in the cone)/2; fails if gap < delta and non-increasing there",
)
