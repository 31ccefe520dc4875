"""What a command will cost, estimated from the sizes before the work starts, and refused in one
line over a stated limit unless the user lifts the limits explicitly (`--allow-large`).

Memory: the exact data (Fractions in object arrays), their float copies and the solver's rows
take about BYTES_PER_ENTRY per entry of X (measured: 460 on n = 200, T = 50, d = 50 and
n = 2000, T = 5, d = 50, beside a start-up of 320 MB), plus a d x d W. Work: the update rules
touch every entry of X once per step, plus a fixed cost per step (STEP_OVERHEAD entries: on
tiny data a step is ~70-180 us of Python and torch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnsvm.errors import UserError

MEMORY_LIMIT = 4 * 2**30            # bytes a command may be estimated to use
WORK_LIMIT = 2 * 10**9              # entry-steps a run may be estimated to take (minutes, not hours)
BYTES_PER_ENTRY = 600
START_UP = 350 * 2**20              # the interpreter, torch, numpy, sympy
STEP_OVERHEAD = 1000
ALLOW = "--allow-large"


@dataclass(frozen=True)
class Shape:
    """A dataset's sizes, read from its JSON before anything is built (0 where malformed:
    validation reports that). `w_given`: W is stored (d x d exact entries), not the identity."""

    n: int
    T: int
    d: int
    w_given: bool = False

    @classmethod
    def of(cls, obj: Any) -> Shape:
        def length(x) -> int:
            return len(x) if isinstance(x, list) else 0

        X = obj.get("X") if isinstance(obj, dict) else None
        first = X[0] if length(X) else None
        token = first[0] if length(first) else None
        return cls(length(X), length(first), length(token), isinstance(obj, dict) and obj.get("W") is not None)

    @property
    def entries(self) -> int:
        return self.n * self.T * self.d

    def memory(self) -> int:
        w = self.d * self.d * (BYTES_PER_ENTRY if self.w_given else 16)
        return START_UP + BYTES_PER_ENTRY * self.entries + w

    def describe(self) -> str:
        return f"n = {self.n}, T = {self.T}, d = {self.d}" + (", W given" if self.w_given else "")


def admit(shape: Shape, steps: int = 0, allow: bool = False) -> None:
    """Refuse (UserError) a command on data of `shape` running `steps` update steps when its
    estimated memory or work is over the limits, unless `allow` (the user's `--allow-large`)."""
    if allow:
        return
    memory = shape.memory()
    if memory > MEMORY_LIMIT:
        raise UserError(f"{shape.describe()}: estimated {memory / 2**30:.3g} GiB of memory, over the limit of "
                        f"{MEMORY_LIMIT / 2**30:g} GiB; pass {ALLOW} to run anyway")
    work = steps * (shape.entries + STEP_OVERHEAD)
    if work > WORK_LIMIT:
        raise UserError(f"{shape.describe()}, {steps} steps: estimated {work:.3g} entry-steps of work, over the "
                        f"limit of {WORK_LIMIT:.3g}; use fewer --steps or pass {ALLOW} to run anyway")
