"""Transformers as SVMs, claim 1 (paper B; docs/statements.md#tfsvm-frobenius): the W-parameterised attention trained by
normalized GD converges in direction to the Frobenius max-margin W_mm(alpha) of the tokens
alpha it selects (the authors' measurement: alpha = the max-softmax tokens at the end).

Proxy (`attnsvm.dynamics.wlimits`, with this check's own tolerances): NGD (lr `eta`, `steps` x
horizon iterations, `starts` seeded random inits of scale `init_scale`); for each start whose
attention is saturated (max_i (1 - max_t s_it) < SAT), gap = 1 - corr(W_H, W_mm(alpha_H)); the
start holds when gap <= TOL; it fails when gap > TOL and the gap's limit, extrapolated from H/4,
H/2, H by Aitken's delta-squared (exact for power-law decay; a plateau within PLATEAU extrapolates
to itself), also exceeds TOL; otherwise it is untrusted (None: still converging or oscillating,
or risen by more than RISE over the last octave: in transition between selections), as are
unsaturated runs, untrusted runs and SVM statuses other than optimal. A refutation must
persist when the run is repeated at CONFIRM x the horizon, and an undecided instance is re-run
at EXTEND x (engine options). All instances of one shape run as one batch. The nuclear-norm
optimum W*_mm is measured alongside for (K, Q) runs (the necessity search,
counterexamples/tfsvm_frobenius.py)."""

from attnsvm import dynamics
from attnsvm.claims import Claim, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import gaussian_datasets, instances, just, seeds
from attnsvm.dynamics import wlimits

TOL = 0.01
SAT = 1e-3
PLATEAU = 1e-3
RISE = 0.1      # a gap risen by more than this fraction over the last octave: in transition (undecided)
CONFIRM = 4     # a refutation is re-run at CONFIRM and CONFIRM^2 x the horizon and must persist
EXTEND = 4      # an undecided instance is re-run at EXTEND and EXTEND^2 x the horizon
ETA, STEPS, STARTS = 0.5, 120, 2


def reports(insts, budget):
    """Per instance, each start's `wlimits.report` against W_mm (and W*_mm for (K, Q) runs)."""
    return wlimits.train_reports(insts, budget, lambda p: dynamics.NormalizedGD(p["eta"]), "fro",
                                 both_of=lambda inst: inst.params["param"] != "W")


@batched
def converges_to_w_mm(insts, budget):
    return [wlimits.judge(r, "gap", TOL, SAT, PLATEAU, RISE) for r in reports(insts, budget)]


def w_instances(n=(1, 3), T=(2, 3), d=(2, 3), param="W", m=None, steps=STEPS, starts=STARTS):
    """Gaussian datasets (a drawn seed) and a W- or (K, Q)-parameterised NGD run's settings."""
    return instances(gaussian_datasets(n=n, T=T, d=d), param=just(param), m=just(m), eta=just(ETA), steps=just(steps),
                     init_scale=just(0.1), seed=seeds(), starts=just(starts))


claim = Claim(
    name="tfsvm-frobenius",
    evaluations=1100,
    statement="W-parameterised normalized GD converges in direction to W_mm(alpha) (Frobenius), "
              "alpha its selected tokens",
    hypotheses=hyp.of("tfsvm-frobenius"),
    conclusion=converges_to_w_mm,
    instances=lambda dropped: w_instances(),
    measures=("worst_gap",),
    confirm=(CONFIRM, CONFIRM ** 2),
    extend=(EXTEND, EXTEND ** 2),
    tolerances={"gap": TOL, "saturation": SAT, "plateau": PLATEAU, "rise": RISE},
    proxy=f"1 - corr(W_H, W_mm(alpha_H)) <= {TOL} at H = steps x horizon NGD iterations (eta {ETA}), every "
          f"saturated start (1 - max softmax < {SAT}); a larger gap refutes only if its Aitken-extrapolated "
          f"limit from H/4, H/2, H also exceeds the tolerance, and again at {CONFIRM} x H (else untrusted: still "
          f"converging; an undecided instance is re-run at {EXTEND} x H)",
)
