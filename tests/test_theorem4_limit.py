"""Theorem 4's check on the instance `attnsvm check all --budget standard --seed 0` once refuted:
q = p_mm((0, 0)), a feasible selection that is not locally optimal, correlation loss, mu = 0.05.
The path restricted to cone_mu(q) is bounded: the sector's global minimiser is p* with
||p*|| = 465.24 (scipy and mpmath agree), 0.93 degrees from q (gap 1 - corr = 1.3048e-4), and
its loss -1.8593316 is below L_q = -0.5930, the limit of L along q (q's top tokens (0, 0)). On
R = 16..256 the gap decelerates toward 1.3e-4 (1.1e-3, 3.9e-4, 2.0e-4, 1.5e-4, 1.37e-4), which
the old rule "gap < delta = 0.025 and non-increasing" read as converging to q."""

import numpy as np
import pytest

from attnsvm.claims import Instance
from attnsvm.claims.budget import BUDGETS
from attnsvm.dynamics import paths
from attnsvm.results.checks import theorem4 as T4

WITNESS = {
    "dataset": {"name": "gaussian-seed1329677529",
                "X": [[["-7036870916312999/9007199254740992", "-8925937553318879/18014398509481984"],
                       ["879148395620563/562949953421312", "8808349200849109/9007199254740992"],
                       ["2359965711404391/18014398509481984", "-6941675763941421/36028797018963968"]],
                      [["-3454071285184123/9007199254740992", "-4932745779919767/4503599627370496"],
                       ["-5492630078517431/9007199254740992", "-2835739696741117/2251799813685248"],
                       ["5416789021442383/4503599627370496", "-5459865523249153/36028797018963968"]]],
                "Y": [1, -1], "v": ["-8267414528364829/72057594037927936", "8562770543595939/4503599627370496"],
                "W": [[1, 0], [0, 1]]},
    "params": {"q": ["-6642262355175483638188691423232/206249563756507943250460405955",
                     "10422142004931242770185400090624/206249563756507943250460405955"],
               "mu": 0.05, "R0": 1.0, "loss": "correlation", "seed": 1279}}


def _instance() -> Instance:
    return Instance.from_json(WITNESS)


def _budget(horizon: float):
    return BUDGETS["standard"].extended(horizon / BUDGETS["standard"].horizon)


def test_witness_meets_the_hypotheses():
    assert T4.claim.meets(_instance())


@pytest.mark.parametrize("horizon", [2.0, 8.0])
def test_the_path_has_loss_below_the_limit_along_q(horizon):
    """At the horizon the search first failed it (x2) and the one the witness was confirmed at (x8),
    a feasible point of the restricted path has a loss below L_q: the path cannot converge to q."""
    out = T4.claim.conclusion(_instance(), _budget(horizon))
    assert out.holds is True and out.detail["branch"] == "loss below the limit at q", out.detail
    assert out.detail["limit_loss_at_q"] == pytest.approx(-0.5930242571859, abs=1e-12)
    assert out.detail["least_path_loss"] < -1.6
    assert out.detail["lmm_directions_in_cone"] == 0


def test_a_gap_settling_near_q_is_not_a_failure():
    """Without the loss proof, the gap rule alone must not call the x8 path (decelerating toward
    1.3e-4, 0.93 degrees from q) a path converging to q."""
    inst = _instance()
    out = T4.claim.conclusion(inst, _budget(8.0))
    gaps = out.detail["gap"]
    assert gaps[-1] == pytest.approx(1.3708e-4, rel=1e-3) and gaps[-1] < out.detail["delta"]
    assert all(b < a for a, b in zip(gaps, gaps[1:]))             # non-increasing: the old rule failed it
    radii, q = np.array(out.detail["radii"]), T4.direction(inst)
    assert T4.decide(_solved_with_gaps(q, radii, gaps), radii, q, out.detail["delta"]).holds is None


def _solved_with_gaps(q, radii, gaps, norms=None):
    """A settled path on `radii` whose points make the given gaps to q (2-d, rotated from q)."""
    qh = q / np.linalg.norm(q)
    perp = np.array([-qh[1], qh[0]])
    th = np.arccos(1 - np.asarray(gaps, dtype=np.float64))
    r = np.asarray(radii if norms is None else norms, dtype=np.float64)
    p = r[:, None] * (np.cos(th)[:, None] * qh + np.sin(th)[:, None] * perp)
    G = len(radii)
    return paths.Solved((p,), np.asarray(radii, dtype=np.float64), ["converged"] * G, np.zeros(G), [1] * G)


@pytest.mark.parametrize("gaps,holds", [
    ([1e-3, 4e-4, 2.0e-4, 1.5e-4, 1.37e-4], None),    # decelerating toward a positive level: undecided
    ([1e-3, 2e-4, 1.3e-4, 1.3e-4, 1.3e-4], True),      # settled 1.3e-4 from q (below delta): a limit != q
    ([1e-2, 2e-3, 5e-4, 1.2e-4, 3e-5], False),         # falling like R^-2 below delta: approaches q
    ([1e-6, 1e-9, 0.0, 0.0, 0.0], False),              # at q to float resolution
    ([0.04, 0.04, 0.04, 0.04, 0.04], True),            # on the cone's boundary
])
def test_gap_rules(gaps, holds):
    q = np.array([1.0, 2.0])
    radii = 2.0 ** np.arange(1, 6)
    assert T4.decide(_solved_with_gaps(q, radii, gaps), radii, q, 0.025).holds is holds


def test_a_loss_at_or_above_the_limit_proves_nothing():
    """The loss proof needs a strict drop below L_q beyond float64's rounding; a path whose gap
    falls to 0 still fails with a loss equal to L_q."""
    q = np.array([1.0, 2.0])
    radii = 2.0 ** np.arange(1, 6)
    solved = _solved_with_gaps(q, radii, [1e-2, 2e-3, 5e-4, 1.2e-4, 3e-5])
    assert T4.decide(solved, radii, q, 0.025, limit=-0.5, least=-0.5 - 1e-12).holds is False
    assert T4.decide(solved, radii, q, 0.025, limit=-0.5, least=-0.5 - 1e-6).holds is True


INTERIOR_WITNESS = {   # `attnsvm check all --budget quick --seed 4` refuted it before the INTERIOR rule
    "dataset": {"name": "gaussian-seed590482797",
                "X": [[["-1218416547951755/1125899906842624", "-8124724119686981/36028797018963968"],
                       ["-7648266071115961/18014398509481984", "-8809032679512201/4503599627370496"],
                       ["-8097340582665315/4503599627370496", "1896475910263871/36028797018963968"]]],
                "Y": [1], "v": ["737293355599103/1125899906842624", "2290431826370339/9007199254740992"],
                "W": [[1, 0], [0, 1]]},
    "params": {"q": ["-1", "-3"], "mu": 0.05, "R0": 1.0, "loss": "correlation", "seed": 0}}


@pytest.mark.parametrize("horizon", [1.0, 4.0])
def test_a_flat_interior_stop_is_not_a_failure(horizon):
    """n = 1, correlation loss, q = (-1, -3): at the last radii the solver stops strictly inside the
    ball (||p|| ~ 0.79 R, still growing) where the risk equals L_q to 5e-14: flat at float64's
    resolution, not a minimiser; the falling gap there (0.020, 0.0014, 0.0012) refuted the claim."""
    quick = BUDGETS["quick"]
    out = T4.claim.conclusion(Instance.from_json(INTERIOR_WITNESS), quick.extended(horizon))
    assert out.holds is not False, out.detail


def test_interior_growing_points_are_undecided():
    q = np.array([1.0, 2.0])
    radii = 2.0 ** np.arange(1, 6)
    gaps = [1e-2, 2e-3, 5e-4, 1.2e-4, 3e-5]
    assert T4.decide(_solved_with_gaps(q, radii, gaps), radii, q, 0.025).holds is False
    inside = _solved_with_gaps(q, radii, gaps, norms=0.79 * radii)
    out = T4.decide(inside, radii, q, 0.025)
    assert out.holds is None and out.reason == T4.INTERIOR
