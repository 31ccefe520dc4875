"""rates-joint: with the normalized step replaced by fixed-step GD (eta 1) on (W, v), the loss decays
only like 1/t (-log L ~ log t): its fitted exponent against t is ~0.2, below the law's 1/3."""

from attnsvm.claims.registry import Search
from attnsvm.dynamics import joint

SEARCHES = {
    "normalized_step": Search(instances=lambda dropped: joint.instances(rule="gd"),
                              note="joint fixed-step GD: L = O(1/t), fitted exponent of -log L ~0.2 < 1/3"),
}
