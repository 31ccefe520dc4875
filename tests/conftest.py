import functools
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def outline_report():
    """id -> the runner's report of that result's checked proof outline, computed once per session (per worker)."""
    from attnsvm.claims import registry, runner

    return functools.cache(lambda id: runner.derivation_report(registry.entry(id)))
