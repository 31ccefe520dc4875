"""Lemma 6 with a step well above 2/L_p: GD overshoots and the descent inequality fails."""

from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import instances, integer_datasets, sampled_from, seeds
from attnsvm.dynamics.smoothness import moving

SEARCHES = {
    "step_size": Search(instances=lambda dropped: instances(
        integer_datasets(n=(1, 3), T=(2, 4), d=(1, 3), W="integer").filter(moving),
        loss=sampled_from(["logistic", "exponential", "correlation"]),
        eta_factor=sampled_from([8.0, 32.0, 128.0, 1024.0]), seed=seeds()),
        note="eta = 8..1024 / L_p (L_p is an upper bound: the failure needs eta above 2/L_true)"),
}
