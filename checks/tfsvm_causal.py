"""Transformers as SVMs, Section 7, causal form (our reconstruction, `attnsvm.dynamics.seq2seq`):
query k attends to tokens t <= k only, and the implicit bias is the per-query max-margin problem
restricted to them,

    W_mm(alpha) = argmin ||W||_F s.t. (x_{i,alpha_ik} - x_it)^T W x_ik >= 1, all i, k, t <= k, t != alpha_ik

(query 0 sees one token and has no constraint). The parts and proxies are tfsvm-seq2seq's
(`seq2seq.conclude`) with the mask on, with this check's own constants (`PROXY`): normalized GD
-> W_mm(alpha_H) of its selected tokens, the regularization path -> W_mm(opt) under strict
optimality, and feasibility for every alpha when d >= T - 1 and the n T (T - 1)/2 difference rows
fit in d^2. Hypotheses `per_query_svm` (not the last query's single-query problem) and
`causal_mask` (not the unmasked problem) name the predicting SVM; their witnesses show both
mispredicting the limit (counterexamples/tfsvm_causal.py)."""

from attnsvm.dynamics import seq2seq

PROXY = seq2seq.Proxy(eta=0.25, steps=400, init=0.1, sat=1e-3, tol=0.01, plateau=1e-3, rise=1e-3, path_tol=1e-2, grid=6,
                      iters=40, last=3, path_plateau=1e-3, max_alphas=64)
PARTS = ("gd", "gd", "feasibility", "path")      # a quarter of the instances solve a path (the costly part)
CONFIRM = (2, 4)
EXTEND = (2, 4)
EVALUATIONS = 1000


STATEMENT = ("causal self-attention (every token a query, query k sees t <= k): normalized GD converges in direction "
             "to W_mm(alpha) of its selected tokens, the regularization path to W_mm(opt), and over-parameterisation "
             "makes W_mm(alpha) feasible for every alpha; W_mm has one block of constraints per query, "
             "against the tokens it sees")

claim = seq2seq.make_claim("tfsvm-causal", True, STATEMENT, PROXY, PARTS, EVALUATIONS, CONFIRM, EXTEND)
