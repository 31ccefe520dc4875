"""The registry: result ids -> their three parts and expected verdicts.

For an id such as `theorem2-tightness` the parts live in modules named `theorem2_tightness`:
`lemmas/<mod>.py` (`derive() -> Derivation`), `checks/<mod>.py` (`claim: Claim`) and
`counterexamples/<mod>.py` (`SEARCHES: dict[hypothesis, Search]`), with stored witnesses
in `counterexamples/witnesses/<id>--<hypothesis>.json`.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hypothesis import strategies as st

from attnsvm.errors import UserError


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    paper: str
    check: tuple[str, ...] = ("SUPPORTED", "CERTIFIED")
    derivation: tuple[str, ...] = ("PROVED",)

    @property
    def module(self) -> str:
        return self.id.replace("-", "_")


@dataclass(frozen=True)
class Search:
    """How to show a hypothesis is needed: an instance strategy aimed at violating it (None:
    the claim's own strategy), and the verdict expected once it is dropped."""

    instances: Callable[[frozenset], st.SearchStrategy] | None = None
    expected: tuple[str, ...] = ("REFUTED",)
    note: str = ""


A = "Max-Margin Token Selection in Attention Mechanism"
B = "Transformers as Support Vector Machines"
C = "Implicit Bias and Fast Convergence Rates for Self-attention"

ENTRIES: list[Entry] = [
    Entry("lemma1", "Lemma 1: GD on p and on W = p u^T/||u||^2 coincide", A),
    Entry("lemma2", "Lemma 2 / Lemma 11: (ATT-SVM) with alpha = opt is feasible", A, check=("CERTIFIED",)),
    Entry("lemma4", "Lemma 4: p_mm is a descent direction under Assumption B", A),
    Entry("lemma6", "Lemma 6: L_p-smoothness and the descent inequality", A),
    Entry("theorem1", "Theorem 1: the regularization path converges to the GMM", A),
    Entry("theorem2", "Theorem 2: global GD convergence (n = 1, Assumption B)", A),
    Entry("theorem2-tightness", "Appendix E: n = 1 is needed in Theorem 2(b)", A, check=("REFUTED",)),
    Entry("theorem3", "Theorem 3: local GD convergence to an LMM from its cone", A),
    Entry("theorem4", "Theorem 4: only LMM directions are limits of the path", A),
    Entry("theorem5", "Theorem 5: joint (v, p) path -> (v_mm, p_mm)", A),
    Entry("theorem6", "Theorem 6: non-support inputs relax to problem (10)", A),
    Entry("tfsvm-frobenius", "W-parameterisation converges to W_mm (Frobenius)", B),
    Entry("tfsvm-nuclear", "(K,Q)-parameterisation converges to W*_mm (nuclear norm)", B),
    Entry("tfsvm-feasibility", "d >= max(T-1, n) makes (Att-SVM) feasible for every alpha", B, check=("CERTIFIED",)),
    Entry("tfsvm-rank", "rank(W_mm) <= n", B),
    Entry("tfsvm-mlp", "MLP heads select several tokens; the generalized SVM predicts the limit", B),
    Entry("rates-global", "NGD / Polyak converge globally to W_mm in the covered data settings", C),
    Entry("rates-speedup", "NGD and Polyak reach corr 0.99 with W_mm faster than fixed-step GD", C),
]

PARTS = ("lemmas", "checks", "counterexamples")
_BY_ID = {e.id: e for e in ENTRIES}
ROOT = Path(__file__).resolve().parents[2]
WITNESS_DIR = ROOT / "counterexamples" / "witnesses"


def entry(id: str) -> Entry:
    try:
        return _BY_ID[id]
    except KeyError:
        raise UserError(f"unknown result id {id!r}; `attnsvm list` shows the ids") from None


def _part(package: str, e: Entry):
    return importlib.import_module(f"{package}.{e.module}")


def derivation(e: Entry):
    return _part("lemmas", e).derive


def claim(e: Entry):
    return _part("checks", e).claim


def searches(e: Entry) -> dict[str, Search]:
    return getattr(_part("counterexamples", e), "SEARCHES", {})


def witness_path(e: Entry, hypothesis: str) -> Path:
    return WITNESS_DIR / f"{e.id}--{hypothesis}.json"


def claim_witnesses(e: Entry) -> list[Path]:
    """Stored counterexamples to the claim as stated (files `<id>--<name>.json` whose name is not
    a hypothesis with a necessity search), e.g. the tightness instances of Appendix E."""
    hyps = set(searches(e))
    return sorted(p for p in WITNESS_DIR.glob(f"{e.id}--*.json") if p.stem.split("--", 1)[1] not in hyps)


def available() -> list[Entry]:
    """Entries whose three modules exist."""
    return [e for e in ENTRIES if all(importlib.util.find_spec(f"{pkg}.{e.module}") for pkg in PARTS)]
