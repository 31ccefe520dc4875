"""Transformers as SVMs, Section 7 (our reconstruction, `attnsvm.dynamics.seq2seq`): with every
token a query (output k = v^T X_i^T S(X_i W x_ik), labels Y_ik), the implicit bias is the
max-margin problem with ONE BLOCK OF CONSTRAINTS PER QUERY,

    W_mm(alpha) = argmin ||W||_F s.t. (x_{i,alpha_ik} - x_it)^T W x_ik >= 1, all i, k, t != alpha_ik,

(here: all T tokens visible; `checks/tfsvm_causal.py`: t <= k). Three parts, one per instance
(param `part`), with this check's own proxy constants (`PROXY`, `seq2seq.Proxy`):

- `gd`: normalized GD (step eta, steps x horizon iterations, `starts` seeded inits) converges in
  direction to W_mm(alpha_H) of the tokens alpha_H it selects at the horizon (the authors'
  measurement, as tfsvm-frobenius), judged per start by `dynamics.wlimits.judge`: once saturated
  (max over queries of 1 - max softmax < sat), gap = 1 - corr(W_H, W_mm(alpha_H)) <= tol holds; a
  larger gap fails only if its limit extrapolated from H/4, H/2, H (Aitken) also exceeds tol, and
  again at 2 H and 4 H (CONFIRM); an undecided instance gets those horizons too (EXTEND);
  unsaturated runs, rising gaps (by more than `rise` = 0.1% over the last octave) and SVMs without an
  exact certificate are untrusted, and so is a start not at a limit (`seq2seq.gd_reports`): alpha_H
  not locally optimal for the per-query SVM (exact; only such directions are limits), or a log
  unselected mass that fell by less than log 2 over the last octave (held by finite logit gaps,
  e.g. a finite-norm stationary point: 1 - mass 6e-4 passes the 1e-3 saturation test for ever).
  The quick witnesses refuted before this (causal seed 1, seq2seq seed 2) are such transients.
- `path`: the regularization path W(R) = argmin_{||W||_F <= R} L(W) (`dynamics.paths.linear_paths`
  on the risk as a core problem, every instance of one shape in one solve, R = 2^k ||W_mm(opt)||,
  started from W_mm(opt), the single-query SVM's direction and two seeded random directions)
  converges to W_mm(opt) under strict optimality (the core Theorem 1 for the n T inputs (i, k)):
  1 - corr at the largest radius <= path_tol and non-increasing over the last radii holds
  (`paths.monotone`); a plateau above fails (`paths.plateau`).
- `feasibility`: generic data with the dimension count OVERPARAMETERIZED (d >= T here, d >= T - 1
  causal, and at most d^2 difference rows) make W_mm(alpha) feasible for EVERY alpha: decided
  exactly by the full row rank of the difference rows vec((x_it - x_{i,r}) x_ik^T), else by an
  exact Farkas certificate for some alpha.

`svm` names the problem the statement predicts with: 'seq' (here) / 'causal' (one block per
query), 'single' (the single-query problem of tfsvm-frobenius: the first query x_i1; causal:
the last query) or 'full' (causal runs against the unmasked problem). Hypothesis `per_query_svm`
(and, causal, `causal_mask`) requires the per-query one: the stored witnesses show the others
mispredicting the limit. The necessity searches are counterexamples/tfsvm_seq2seq.py.
"""

from attnsvm.dynamics import seq2seq

PROXY = seq2seq.Proxy(eta=0.25, steps=400, init=0.1, sat=1e-3, tol=0.01, plateau=1e-3, rise=1e-3, path_tol=1e-2, grid=6,
                      iters=40, last=3, path_plateau=1e-3, max_alphas=64)
PARTS = ("gd", "gd", "feasibility", "path")      # a quarter of the instances solve a path (the costly part)
CONFIRM = (2, 4)     # longer horizons (factors) at which a failing instance is re-judged
EXTEND = (2, 4)      # ... and an undecided one
EVALUATIONS = 1000   # a quarter of them solve a path (17-35 ms each): about 3 CPU-s at quick


STATEMENT = ("sequence-to-sequence self-attention (every token a query, query k sees every t): normalized GD converges "
             "in direction to W_mm(alpha) of its selected tokens, the regularization path to W_mm(opt), and "
             "over-parameterisation makes W_mm(alpha) feasible for every alpha; W_mm has one block of "
             "constraints per query")

claim = seq2seq.make_claim("tfsvm-seq2seq", False, STATEMENT, PROXY, PARTS, EVALUATIONS, CONFIRM, EXTEND)
