"""The batched building blocks: an instance's results do not depend on its batch (bitwise), the
blocks agree with the library they wrap, and a claim built from them is searched in batches:
a dynamics claim that fails on well under 1% of its instances is REFUTED at quick, its true
neighbour is not."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsvm import dynamics
from attnsvm.claims import Verdict, blocks, check
from attnsvm.claims.claim import Instance
from attnsvm.claims.strategies import gaussian_dataset
from attnsvm.svm import geometry
from tests.claims import dynamics_claims as D

POOL = [Instance(gaussian_dataset(seed, n, T, d)) for seed, (n, T, d) in
        enumerate([(2, 2, 4), (1, 3, 2), (2, 3, 3), (2, 2, 4), (3, 2, 2), (1, 2, 1), (2, 3, 3), (1, 3, 2)] * 3)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, len(POOL) - 1), min_size=1, max_size=12, unique=True),
       st.sampled_from(["ngd", "gd", "polyak"]))
def test_an_instances_run_does_not_depend_on_its_batch(picks, rule):
    insts = [POOL[k] for k in picks]
    eta = {"ngd": 0.2, "gd": "lemma6", "polyak": None}[rule]
    together = blocks.run(insts, rule, 300, eta=eta)
    for k, inst in enumerate(insts):
        alone = blocks.run([inst], rule, 300, eta=eta)
        assert np.array_equal(alone.final[0], together.final[k]) and alone.status[0] == together.status[k]
        assert np.array_equal(alone.p[0], together.p[k]) and alone.selected[0] == together.selected[k]


def test_a_run_is_bitwise_the_same_in_a_batch_of_13_as_alone():
    """13 instances of one shape put 5 past a vector kernel's last full chunk (torch's scalar tail
    computes exp and log differently in the last bit, and Polyak drifted apart by up to 17);
    `dynamics.run` pads batches so no instance sits there."""
    for n, T, d in [(2, 3, 2), (3, 2, 2), (1, 5, 3)]:
        insts = [Instance(gaussian_dataset(seed, n, T, d)) for seed in range(13)]
        for rule, eta in [("polyak", None), ("gd", "lemma6"), ("ngd", 0.2)]:
            together = blocks.run(insts, rule, 400, eta=eta)
            for k, inst in enumerate(insts):
                alone = blocks.run([inst], rule, 400, eta=eta)
                assert np.array_equal(alone.p[0], together.p[k]) and np.array_equal(alone.value[0], together.value[k])


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, len(POOL) - 1), min_size=2, max_size=10, unique=True))
def test_a_batched_claims_outcomes_do_not_depend_on_the_batch(picks):
    insts = [POOL[k] for k in picks if D.STRICT.holds(POOL[k]) and D.GMM.holds(POOL[k])]
    budget = blocks_budget()
    together = D.ngd_aligns.over(insts, budget)
    assert together == [D.ngd_aligns(inst, budget) for inst in insts]


def blocks_budget():
    from attnsvm.claims import get_budget

    return get_budget("quick")


def test_a_run_is_the_library_run():
    inst = POOL[2]
    r = blocks.run([inst], "ngd", 200, eta=0.3, start=np.ones(inst.dataset.d))
    tr = dynamics.run(dynamics.Problem.from_datasets([inst.dataset]), dynamics.NormalizedGD(0.3),
                      np.ones(inst.dataset.d), 200, every=max(1, 200 // blocks.RECORDS))
    assert np.array_equal(r.final[0], tr.final[0].numpy()) and r.steps[0] == tr.steps
    q = geometry.gmm(inst.dataset).p_mm
    assert r.corr([q])[0] == pytest.approx(geometry.corr(tr.final[0].numpy(), q), abs=1e-15)
    assert r.corr([None])[0] != r.corr([None])[0]          # no target: NaN, never a number


def test_outcomes_carry_holds_undecided_applies_and_detail():
    outs = blocks.outcomes(np.array([True, False, True, True]), undecided=np.array([False, False, True, False]),
                           reasons=["", "", "still moving", ""], applies=np.array([True, True, True, False]),
                           detail={"corr": np.array([0.999, 0.2, np.nan, 0.5])}, margin=np.array([1.0, -1.0, 0.0, 2.0]))
    assert [o.holds for o in outs] == [True, False, None, None]
    assert outs[2].reason == "still moving" and outs[2].detail["corr"] is None
    assert outs[3].applies is False and outs[1].margin == -1.0 and outs[0].detail["corr"] == 0.999


def test_a_rare_dynamics_failure_is_refuted_at_quick_and_its_true_neighbour_is_not():
    rep = check(D.rare_trap, "quick", 0)
    assert rep.verdict is Verdict.REFUTED, rep.evidence
    w = rep.witness["outcome"]
    assert w["corr_selected"] >= 0.99 and w["corr_gmm"] < 0.99 and rep.witness["budget"]["horizon"] == 4.0
    true = check(D.one_input, "quick", 0)
    assert true.verdict in (Verdict.SUPPORTED, Verdict.CERTIFIED), true.evidence
    assert true.evidence["instances"] >= 1000 and true.evidence["batched"]


def test_the_kernel_stepped_loop_is_bitwise_the_same_in_a_batch_of_13_as_alone():
    """`trajectory.kernel_run` (fixed-step GD and (K, Q) normalized GD in numpy over the fused
    kernel) pads its batches as `run` does: its recorded steps' statistics come from torch."""
    from attnsvm.dynamics import cross
    from attnsvm.dynamics.limits import run_gd
    from attnsvm.dynamics.smoothness import smoothness_constant

    dss = [gaussian_dataset(seed, 2, 3, 2) for seed in range(13)]
    eta = [1 / smoothness_constant(ds) for ds in dss]
    together = run_gd(dynamics.Problem.from_datasets(dss), eta, np.zeros(2), 400, every=25)
    kq = cross.KQ(2, 2)
    theta = kq.random(np.random.default_rng(0), 0.1, len(dss)).numpy()
    kq_together = cross.kq_normalized_gd(cross.w_problem(dss), kq, theta, 300, 0.1, every=30)
    for k, ds in enumerate(dss):
        alone = run_gd(dynamics.Problem.from_datasets([ds]), [eta[k]], np.zeros(2), 400, every=25)
        assert torch.equal(alone.value[:, 0], together.value[:, k]) and torch.equal(alone.final[0], together.final[k])
        kq_alone = cross.kq_normalized_gd(cross.w_problem([ds]), kq, theta[k:k + 1], 300, 0.1, every=30)
        assert torch.equal(kq_alone.value[:, 0], kq_together.value[:, k])
