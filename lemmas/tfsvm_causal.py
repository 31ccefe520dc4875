"""Transformers as SVMs, Section 7, causal form: query k sees tokens t <= k; the implicit bias is the
per-query max-margin problem restricted to them (our reconstruction). The outline is
the sequence outline's (`attnsvm.claims.sequence_outline`, shared with
`lemmas/tfsvm_seq2seq.py`) with the mask: the repetition identity makes the masked risk an
exact core problem."""

from attnsvm.claims.outline import Outline
from attnsvm.claims.sequence_outline import RECONSTRUCTION, steps


def outline() -> Outline:
    return Outline("causal self-attention (query k sees tokens t <= k): normalized GD converges in direction to "
                   "W_mm(alpha) of its selected tokens, the regularization path to W_mm(opt), and "
                   "over-parameterisation makes W_mm(alpha) feasible for every alpha; W_mm has one block of "
                   "constraints per query, against the tokens it sees", steps(True, "checks/tfsvm_causal.py"),
                   RECONSTRUCTION)
