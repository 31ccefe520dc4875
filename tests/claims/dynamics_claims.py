"""User-style dynamics claims built from the batched blocks (`attnsvm.claims.blocks`): normalized
GD from 0 for 1500 steps, judged against the GMM. With two inputs a second LMM can attract the
run, on about 0.6% of Gaussian instances with T = 2, d = 4 (rare: the engine must evaluate
thousands to find one); with one input and two tokens the GMM is the only LMM (true)."""

from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, batched, blocks
from attnsvm.claims.strategies import gaussian_datasets, instances
from attnsvm.svm import geometry

STRICT = Hypothesis("strict_optimality", "unique top score per input", lambda i: model.strict_optimality(i.dataset))
GMM = Hypothesis("gmm_feasible", "(ATT-SVM) with alpha = opt feasible, certified",
                 lambda i: blocks.direction_of(geometry.gmm(i.dataset)) is not None)


@batched
def ngd_aligns(insts, budget):
    """Holds when corr(p_H, p_mm(opt)) >= 0.99; fails when the run selected other tokens and
    aligns with their p_mm instead; otherwise undecided."""
    runs = blocks.run(insts, "ngd", steps=blocks.horizon(1500, budget), eta=0.1)
    to_gmm = runs.corr(blocks.gmm_directions(insts))
    opt = [tuple(int(a) for a in model.optimal_tokens(i.dataset)) for i in insts]
    to_selected = runs.corr([None if a == o else blocks.direction_of(geometry.select(i.dataset, a))
                             for i, a, o in zip(insts, runs.selected, opt)])
    held = to_gmm >= 0.99
    elsewhere = ~held & (to_selected >= 0.99)
    return blocks.outcomes(held, undecided=~(held | elsewhere) | ~runs.trusted, reasons="aligned with no SVM direction",
                           detail={"corr_gmm": to_gmm, "corr_selected": to_selected}, margin=to_gmm - 0.99)


rare_trap = Claim(
    "ngd-from-zero-two-inputs", "n = 2, T = 2, d = 4, Gaussian data, strict optimality, GMM feasible => NGD from 0 "
    "aligns with the GMM", (STRICT, GMM), ngd_aligns,
    lambda dropped: instances(gaussian_datasets(n=2, T=2, d=4)), confirm=(4.0,), expected=("REFUTED",))

one_input = Claim(
    "ngd-from-zero-one-input", "n = 1, T = 2, Gaussian data, strict optimality, GMM feasible => NGD from 0 aligns "
    "with the GMM", (STRICT, GMM), ngd_aligns,
    lambda dropped: instances(gaussian_datasets(n=1, T=2, d=(1, 4))), confirm=(4.0,))
