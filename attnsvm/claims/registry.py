"""The registry: the manifest of the papers' results (leanblueprint's content: each result's
statement, what its proof `uses`, its hypotheses and expected verdicts) and where its parts live.

For an id such as `theorem2-tightness` the parts live in modules named `theorem2_tightness`:
`lemmas/<mod>.py` (`outline() -> Outline`), `checks/<mod>.py` (`claim: Claim`) and
`counterexamples/<mod>.py` (`SEARCHES: dict[hypothesis, Search]`), with stored witnesses in
`counterexamples/witnesses/<id>--<name>.json`. Definitions and assumptions are nodes of the
dependency graph with a statement and no parts.

The manifest is plain data, so `attnsvm list` and the blueprint's graph need no heavy import;
tests check it against the modules (same hypotheses, same necessity searches).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from attnsvm.errors import UserError

A = "Max-Margin Token Selection in Attention Mechanism"
B = "Transformers as Support Vector Machines"
C = "Implicit Bias and Fast Convergence Rates for Self-attention"
KINDS = ("definition", "assumption", "lemma", "theorem", "example", "claim")


@dataclass(frozen=True)
class Entry:
    """One result. `hypotheses`: its claim's hypothesis names; `necessity`: those with a necessity
    search (expected REFUTED once dropped); `check`, `derivation`: expected verdicts; `uses`:
    ids its proof uses; `aliases`: other numbers it goes by (e.g. an appendix form)."""

    id: str
    title: str
    paper: str
    kind: str = "theorem"
    uses: tuple[str, ...] = ()
    hypotheses: tuple[str, ...] = ()
    necessity: tuple[str, ...] = ()
    check: tuple[str, ...] = ("SUPPORTED",)
    derivation: tuple[str, ...] = ("PARTIAL",)
    aliases: tuple[str, ...] = ()
    statement: str = field(default="", repr=False)

    @property
    def module(self) -> str:
        return self.id.replace("-", "_")

    @property
    def has_parts(self) -> bool:
        return self.kind not in ("definition", "assumption")


@dataclass(frozen=True)
class Search:
    """How to show a hypothesis is needed: an instance space aimed at violating it (None: the
    claim's own), and a note on what it looks for."""

    instances: Callable | None = None
    note: str = ""


NODES: list[Entry] = [
    Entry("definition1", "Definition 1: token scores and optimal tokens", A, "definition",
          statement="gamma_it = Y_i v^T x_it; opt_i in argmax_t gamma_it"),
    Entry("definition2", "Definition 2: SVM-neighbours and locally optimal tokens", A, "definition", uses=("definition1",),
          statement="T_i = active constraints of ATT-SVM(alpha); alpha is locally optimal when every neighbour scores "
                    "strictly lower than alpha_i; its p_mm is an LMM direction"),
    Entry("definition3", "Definition 3: directional neighbours", A, "definition", uses=("definition2",),
          statement="the tokens whose constraint is tight along a unit direction q (the directional margin)"),
    Entry("assumption-A", "Assumption A: the loss", A, "assumption",
          statement="on bounded intervals loss is strictly decreasing, loss' is M0-Lipschitz and |loss'| <= M1"),
    Entry("assumption-B", "Assumption B: one score for the non-optimal tokens", A, "assumption", uses=("definition1",),
          statement="gamma_it = gamma_itau < gamma_{i,opt_i} for all t, tau != opt_i"),
    Entry("assumption-C", "Assumption C: the selection maximises the label margin", A, "assumption",
          statement="selecting alpha maximises the label SVM's margin and mixing in other tokens strictly shrinks it"),
    Entry("assumption-D", "Assumption D: nonlinear head, optimal sets", A, "assumption",
          statement="the head's optimal token sets O_i are well defined (Appendix D)"),
]

RESULTS: list[Entry] = [
    Entry("lemma1", "Lemma 1: GD on p and on W = p u^T/||u||^2 coincide", A, "lemma",
          hypotheses=("rank_one_start", "step_scaling"), necessity=("rank_one_start", "step_scaling"), derivation=("PROVED",), uses=()),
    Entry("lemma2", "Lemma 2 / Lemma 11: (ATT-SVM) with alpha = opt is feasible", A, "lemma", uses=("definition1",),
          hypotheses=("common_label", "strict_optimality", "v_in_range_W"),
          necessity=("common_label", "strict_optimality", "v_in_range_W"), aliases=("lemma11",), derivation=("PROVED",)),
    Entry("lemma4", "Lemma 4: p_mm is a descent direction under Assumption B", A, "lemma",
          uses=("assumption-A", "assumption-B", "definition1"),
          hypotheses=("assumption_A", "strict_optimality", "assumption_B", "gmm_feasible"), necessity=("assumption_B",), derivation=("PROVED",)),
    Entry("lemma6", "Lemma 6: L_p-smoothness and the descent inequality", A, "lemma", uses=("assumption-A",),
          hypotheses=("assumption_A", "step_size"), necessity=("step_size",)),
    Entry("theorem1", "Theorem 1: the regularization path converges to the GMM", A,
          uses=("assumption-A", "definition1"),
          hypotheses=("assumption_A", "strict_optimality", "gmm_feasible"), necessity=("strict_optimality",)),
    Entry("theorem2", "Theorem 2: global GD convergence (n = 1, Assumption B)", A,
          uses=("assumption-A", "assumption-B", "lemma4", "lemma6"),
          hypotheses=("assumption_A", "strict_optimality", "assumption_B", "gmm_feasible", "single_input", "step_size"),
          necessity=("assumption_B",)),
    Entry("theorem2-tightness", "Appendix E: n = 1 is needed in Theorem 2(b)", A, "example", uses=("theorem2", "definition1", "definition2", "assumption-B"),
          hypotheses=("assumption_A", "two_inputs_two_tokens", "assumption_B", "gmm_feasible", "step_size"),
          check=("REFUTED",), derivation=("PROVED",)),
    Entry("theorem3", "Theorem 3: local GD convergence to an LMM from its cone", A,
          uses=("assumption-A", "definition2", "lemma6"),
          hypotheses=("assumption_A", "feasible", "locally_optimal"), necessity=("locally_optimal",)),
    Entry("theorem4", "Theorem 4 / Theorem 7: only LMM directions are limits of the path", A,
          uses=("assumption-A", "definition2", "definition3"),
          hypotheses=("assumption_A", "distinct_scores", "general_position", "q_not_lmm"),
          necessity=("q_not_lmm", "distinct_scores", "general_position"), aliases=("theorem7",)),
    Entry("theorem5", "Theorem 5: joint (v, p) path -> (v_mm, p_mm)", A, uses=("assumption-C",),
          hypotheses=("logistic_loss", "jointly_separable", "assumption_C"), necessity=("assumption_C",)),
    Entry("theorem6", "Theorem 6: non-support inputs relax to problem (10)", A, uses=("assumption-C", "theorem5"),
          hypotheses=("logistic_loss", "jointly_separable", "assumption_C_support", "r_dominates_R"),
          necessity=("r_dominates_R",)),
    Entry("tfsvm-frobenius", "W-parameterisation converges to W_mm (Frobenius)", B, uses=("theorem1", "theorem3"),
          hypotheses=("w_parameterisation",), necessity=("w_parameterisation",)),
    Entry("tfsvm-nuclear", "(K,Q)-parameterisation converges to W*_mm (nuclear norm)", B, uses=("theorem1",),
          hypotheses=("kq_parameterisation", "width_m_ge_d"), necessity=("kq_parameterisation", "width_m_ge_d")),
    Entry("tfsvm-feasibility", "d >= max(T-1, n) makes (Att-SVM) feasible for every alpha", B,
          hypotheses=("d_ge_T_minus_1", "d_ge_n", "generic"), necessity=("d_ge_T_minus_1", "d_ge_n")),
    Entry("tfsvm-rank", "rank(W_mm) <= n", B, hypotheses=("feasible",), derivation=("PROVED",)),
    Entry("tfsvm-mlp", "MLP heads select several tokens; the generalized SVM predicts the limit", B,
          uses=("assumption-D",)),
    Entry("rates-global", "NGD / Polyak converge globally to W_mm in the covered data settings", C,
          uses=("lemma4", "theorem2", "tfsvm-frobenius", "assumption-B", "definition1"),
          hypotheses=("assumption_B", "gmm_feasible", "n1_or_all_support"), necessity=("assumption_B", "n1_or_all_support")),
    Entry("rates-speedup", "NGD and Polyak reach corr 0.99 with W_mm faster than fixed-step GD", C, uses=("rates-global", "lemma6"),
          hypotheses=("assumption_B", "gmm_feasible", "n1_or_all_support", "gd_step_within_1_over_L"),
          necessity=("gd_step_within_1_over_L",)),
]

ENTRIES: list[Entry] = RESULTS          # the results with parts, in the order checks run
PARTS = ("lemmas", "checks", "counterexamples")
ROOT = Path(__file__).resolve().parents[2]
WITNESS_DIR = ROOT / "counterexamples" / "witnesses"
_BY_ID = {e.id: e for e in NODES + RESULTS}
_ALIASES = {a: e.id for e in NODES + RESULTS for a in e.aliases}


def entry(id: str) -> Entry:
    """The entry of a result id or alias (e.g. 'lemma11' -> lemma2)."""
    key = _ALIASES.get(id, id)
    if key not in _BY_ID:
        raise UserError(f"unknown result id {id!r}; `attnsvm list` shows the ids")
    return _BY_ID[key]


def all_nodes() -> list[Entry]:
    """Every node of the dependency graph: definitions, assumptions and results."""
    return NODES + RESULTS


def _part(package: str, e: Entry):
    return importlib.import_module(f"{package}.{e.module}")


def has(package: str, e: Entry) -> bool:
    return e.has_parts and importlib.util.find_spec(f"{package}.{e.module}") is not None


def outline(e: Entry):
    return _part("lemmas", e).outline


def claim(e: Entry):
    return _part("checks", e).claim


def searches(e: Entry) -> dict[str, Search]:
    return getattr(_part("counterexamples", e), "SEARCHES", {}) if has("counterexamples", e) else {}


def witness_path(e: Entry, name: str) -> Path:
    return WITNESS_DIR / f"{e.id}--{name}.json"


def claim_witnesses(e: Entry) -> list[Path]:
    """Stored counterexamples to the claim as stated (files `<id>--<name>.json` whose name is not
    a hypothesis with a necessity search), e.g. the tightness instances of Appendix E."""
    return sorted(p for p in WITNESS_DIR.glob(f"{e.id}--*.json") if p.stem.split("--", 1)[1] not in e.necessity)
