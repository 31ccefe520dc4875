"""Dynamics and kernels: batched problems (`problem`), update rules (`rules`, optax style),
runs (`trajectory`), finite-horizon limits (`limits`), regularization paths (`regpath`), W and
(K, Q) parameterisations (`cross`), Lemma 6's constant (`smoothness`), rate fits (`trends`)."""

from attnsvm.dynamics.problem import Problem, default_device
from attnsvm.dynamics.rules import (
                                    GD,
                                    RULES,
                                    BlockNormalizedGD,
                                    Identity,
                                    NormalizedGD,
                                    Parameterisation,
                                    PerInstance,
                                    Polyak,
                                    UpdateRule,
)
from attnsvm.dynamics.trajectory import (
                                    SMALL,
                                    UNDERFLOW,
                                    Trajectory,
                                    intra_op_threads,
                                    record_schedule,
                                    run,
)

__all__ = ["Problem", "default_device", "RULES", "GD", "BlockNormalizedGD", "Identity", "NormalizedGD",
           "Parameterisation", "PerInstance", "Polyak", "UpdateRule", "SMALL", "UNDERFLOW", "Trajectory",
           "intra_op_threads", "record_schedule", "run"]
