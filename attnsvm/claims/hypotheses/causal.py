"""Hypotheses of causal attention (query k sees tokens t <= k; docs/statements.md#tfsvm-causal): the
causally masked forms of the `seq2seq` family (the per-query SVM itself is `seq2seq.per_query_svm`)
and the mask the predicting SVM must carry."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.claims.hypotheses.seq2seq import family

CAUSAL_MASK = Hypothesis("causal_mask", "the predicted SVM constrains query k only against tokens t <= k",
                         lambda inst: inst.params["svm"] != "full")

HYPOTHESES = table(CAUSAL_MASK, *family(causal=True).values())
