"""Transformers as SVMs, Section 7 (sequence-to-sequence; `lemmas/tfsvm_causal.py` the causal form):
with every token a query, the implicit bias of GD and of the regularization path is the
max-margin problem with one block of constraints per query (our reconstruction: the summary in
papers/ names the setting, not its formulas; docs/statements.md#tfsvm-seq2seq).

The proof is a reduction: the risk is the core linear-head risk of the n T inputs (i, k) with
keys vec(x_it x_ik^T), so (ATT-SVM) of those inputs is the per-query W-SVM and the core Theorems 1
and 3 give the limits. The steps (sympy: the vectorisation, symbolic d; the repetition identity;
the full-row-rank feasibility argument, symbolic sizes) are shared with the causal outline in
`attnsvm.claims.sequence_outline`; the limits are cited, normalized GD and the dimension count are
supported numerically by the check.
"""

from attnsvm.claims.outline import Outline
from attnsvm.claims.sequence_outline import RECONSTRUCTION, steps


def outline() -> Outline:
    return Outline("sequence-to-sequence self-attention (every token a query): normalized GD converges in direction to "
                   "W_mm(alpha) of its selected tokens, the regularization path to W_mm(opt), and "
                   "over-parameterisation makes W_mm(alpha) feasible for every alpha; W_mm has one block of "
                   "constraints per query",
                   steps(False, "checks/tfsvm_seq2seq.py"), RECONSTRUCTION)
