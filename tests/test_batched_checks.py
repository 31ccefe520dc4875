"""Every built-in check stated over batches gives each instance the outcome it gets alone: its
conclusion on a batch equals its conclusion on each instance in a batch of one (the engine's
batched and one-at-a-time searches then agree). Instances are drawn from the check's own space
(seeded) and must meet its hypotheses."""

import numpy as np
import pytest

from attnsvm.claims import get_budget, registry
from attnsvm.claims.spaces import Space

BATCHED = [e for e in registry.ENTRIES if registry.claim(e).is_batched]


def _draw(claim, count: int, seed: int = 0):
    space = claim.instances(claim.dropped)
    assert isinstance(space, Space), "a batched check searches a Space (exhaustive and sampled phases)"
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(50 * count):
        drawn = space.sample(rng, None)
        if drawn is not None and claim.meets(drawn[0]):
            found.append(drawn[0])
            if len(found) == count:
                break
    return found


@pytest.mark.parametrize("e", BATCHED, ids=lambda e: e.id)
def test_a_batched_checks_outcome_does_not_depend_on_its_batch(e):
    claim = registry.claim(e)
    insts = _draw(claim, 6)
    assert len(insts) >= 2, f"{e.id}: too few instances meet the hypotheses to compare"
    budget = get_budget("quick")
    together = claim.conclusion.over(insts, budget)
    for inst, out in zip(insts, together):
        assert claim.conclusion(inst, budget) == out, inst
