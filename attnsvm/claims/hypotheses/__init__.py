"""The papers' hypotheses, one definition each, registered under a qualified name
`<family>.<name>`: the family is the module of this package that defines it (`att_svm` for
(ATT-SVM), `w_svm` for the W-SVM of Transformers as SVMs, `loss`, `scores`, `data`, `dynamics`,
...), so `att_svm.gmm_feasible` and `w_svm.gmm_feasible` are two predicates with two names.

A result's registry entry names its hypotheses by qualified name (`Entry.hypotheses`, plain
data); its claim takes them from here (`of("theorem3")`), so they are declared once. The short
name (after the dot) names the claim's rows (`drop:<name>`) and witness files.

A family module defines its hypotheses with `Hypothesis(name, description, holds)` and lists
them in `HYPOTHESES = table(...)`; predicates read `inst.dataset` and `inst.params` only.
"""

from __future__ import annotations

import importlib

from attnsvm.claims.claim import Hypothesis
from attnsvm.errors import UserError


def table(*hypotheses: Hypothesis) -> dict[str, Hypothesis]:
    """A family's hypotheses by short name (names must be distinct)."""
    out = {h.name: h for h in hypotheses}
    if len(out) != len(hypotheses):
        raise ValueError("two hypotheses of one family share a name")
    return out


def get(qualified: str) -> Hypothesis:
    """The hypothesis registered as `<family>.<name>`."""
    family, _, name = qualified.rpartition(".")
    try:
        found = importlib.import_module(f"{__name__}.{family}").HYPOTHESES if family else {}
    except ModuleNotFoundError:
        found = {}
    if name not in found:
        raise UserError(f"unknown hypothesis {qualified!r} (expected <family>.<name>, e.g. att_svm.gmm_feasible)")
    return found[name]


def of(result_id: str) -> tuple[Hypothesis, ...]:
    """The hypotheses of a registered result, in its registry order."""
    from attnsvm.claims import registry

    return tuple(get(q) for q in registry.entry(result_id).hypotheses)


from attnsvm.claims.registry import short  # noqa: E402, F401  (re-exported: the row name of a qualified hypothesis)
