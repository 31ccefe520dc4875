"""Transformers as SVMs, Section 7, causal form (our reconstruction, `attnsvm.dynamics.seq2seq`):
query k attends to tokens t <= k only, and the implicit bias is the per-query max-margin problem
restricted to them,

    W_mm(alpha) = argmin ||W||_F s.t. (x_{i,alpha_ik} - x_it)^T W x_ik >= 1, all i, k, t <= k, t != alpha_ik

(query 0 sees one token and has no constraint). The parts, proxies and tolerances are those of
`checks/tfsvm_seq2seq.py` with the mask on: normalized GD -> W_mm(alpha_H) of its selected
tokens, the regularization path -> W_mm(opt) under strict optimality, and feasibility for
every alpha when d >= T - 1 and the n T (T - 1)/2 difference rows fit in d^2. Hypotheses
`per_query_svm` (not the last query's single-query problem) and `causal_mask` (not the
unmasked problem) name the predicting SVM; their witnesses show both mispredicting the limit."""

from attnsvm.results.checks.tfsvm_seq2seq import build

claim = build(causal=True)
