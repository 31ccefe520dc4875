"""attnsvm: symbolic-plus-numeric proof checking for attention as max-margin token selection.

Core modules: `data` (datasets), `model`, `losses`, `heads`, `gradients` (cancellation-free,
log-domain), `fused` (the same gradient as a compiled CPU kernel, for unrecorded steps),
`dynamics` (update rules and batched runs), `cross` (W and (K, Q)), `svm` and
`certificates` (margin problems, exact KKT/Farkas), `geometry` (Definition 2), `regpath`,
`claims` (the engine), `hypotheses`, `strategies`, `registry`, `runner`, `cli`.
"""

__version__ = "0.1.0"
