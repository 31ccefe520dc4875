"""tfsvm-seq2seq: which problem predicts the limit, and when every selection is feasible.

- per_query_svm: predicting with the single-query problem of tfsvm-frobenius (only query x_i1
  per input, as self-attention classification does) misses the limit of sequence-to-sequence
  training, which must separate the selected token for every query x_ik: 1 - corr(W_H,
  W_mm^single(alpha_H)) stays large while the per-query W_mm fits (the check's own part).
- overparameterized: with d < T, or more difference rows n T (T - 1) than d^2, some selection
  alpha has no separating W (an exact Farkas certificate)."""

from attnsvm.claims import gaussian
from attnsvm.claims.registry import Search

SEARCHES = {
    "per_query_svm": Search(instances=lambda dropped: gaussian.sequences(("gd",), "single", n=(1, 2), T=3, d=(2, 3)),
                            note="NGD on the sequence loss; the single-query SVM (query x_i1) mispredicts its limit"),
    "overparameterized": Search(instances=lambda dropped: gaussian.sequences(("feasibility",), "seq", n=(1, 3),
                                                                             T=(2, 4), d=(2, 3)),
                                note="d < T or n T (T - 1) > d^2: an alpha with an exact Farkas certificate"),
}
