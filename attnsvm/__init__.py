"""attnsvm: symbolic-plus-numeric proof checking for attention as max-margin token selection.

Layers, bottom up:

- `attention/`: the model and data (datasets, the attention model, losses, heads, the
  cancellation-free gradient and its fused kernel);
- `svm/`: SVMs and certificates (margin problems, exact KKT / Farkas certificates, the token
  geometry of Definition 2);
- `dynamics/`: update rules, batched runs, finite-horizon limits, regularization paths, the W and
  (K, Q) parameterisations;
- `claims/`: the claims engine (claims, search, verdicts, witnesses, registry, runner);
- `interfaces/`: the command line, reports, plots and the papers' experiments.

The results themselves live beside the package: `lemmas/` (proof outlines), `checks/` (claims),
`counterexamples/` (necessity searches and stored witnesses).
"""

__version__ = "0.1.0"
