"""Hypotheses of sequence-to-sequence attention (every token a query; docs/statements.md#tfsvm-seq2seq),
on an instance with per-query `labels`, the `part` it concludes ('gd', 'path', 'feasibility') and
the `svm` it predicts with. `family(causal)` builds them for all T tokens visible (this family) or
for the causal mask t <= k (`causal`); the predicates differ (tokens seen, the dimension count),
so the two families register them under different qualified names."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.dynamics.seq2seq import SeqData, rows_needed, solved


def seq(inst, causal: bool) -> SeqData:
    return SeqData.of(inst.dataset, inst.params["labels"], causal)


def family(causal: bool) -> dict[str, Hypothesis]:
    def overparameterized(inst) -> bool:
        if inst.params["part"] != "feasibility":
            return True
        S = seq(inst, causal)
        return S.d >= S.T - (1 if causal else 0) and rows_needed(S) <= S.d * S.d

    def strict_optimality(inst) -> bool:
        return inst.params["part"] != "path" or seq(inst, causal).strict_optimality()

    def opt_feasible(inst) -> bool:
        if inst.params["part"] != "path":
            return True
        S = seq(inst, causal)
        return solved(S.svm_problem(S.optimal(), "all"))[0] is not None

    return {
        "strict_optimality": Hypothesis("strict_optimality", "part path: every query's top visible score is attained "
                                        "once (exact)", strict_optimality),
        "opt_feasible": Hypothesis("opt_feasible", "part path: the per-query SVM for opt is feasible (exact KKT)",
                                   opt_feasible),
        "overparameterized": Hypothesis("overparameterized", "part feasibility: d >= T" + (" - 1" if causal else "")
                                        + " and at most d^2 difference rows", overparameterized),
    }


PER_QUERY_SVM = Hypothesis("per_query_svm", "the predicted SVM has one block of constraints per query token",
                           lambda inst: inst.params["svm"] != "single")

HYPOTHESES = table(PER_QUERY_SVM, *family(causal=False).values())
