"""Example user claims in attnsvm's vocabulary: `attnsvm check examples/my_claims.py`.

Each module-level Claim is checked; `expected` pins the verdict a user wants (exit 1 if not).
"""

from hypothesis import strategies as st

from attnsvm import geometry, model
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.strategies import instances, integer_datasets


def distinct_keys(inst):
    K = model.keys(inst.dataset)
    return all(len({tuple(k) for k in Ki}) == inst.dataset.T for Ki in K)


def single_input(inst):
    return inst.dataset.n == 1


def gmm_feasible(inst, budget):
    """With one input and pairwise distinct keys, the optimal token is separable... or is it?"""
    s = geometry.gmm(inst.dataset)
    return Outcome(s.feasible, certified=s.certified, detail={"status": s.result.status})


# False in general: a token inside the convex hull of the others cannot be separated.
separable = Claim(
    name="one-input-gmm-feasible",
    statement="n = 1 and distinct keys => (ATT-SVM) with alpha = opt is feasible",
    hypotheses=(Hypothesis("single_input", "n = 1", single_input),
                Hypothesis("distinct_keys", "the keys of an input are pairwise distinct", distinct_keys)),
    conclusion=gmm_feasible,
    instances=lambda dropped: instances(integer_datasets(n=1, T=st.integers(2, 4), d=st.integers(1, 2))),
    expected=("REFUTED",),
)


def two_tokens(inst):
    return inst.dataset.T == 2


# True: with two distinct keys the single constraint (k_opt - k_other)^T p >= 1 is always satisfiable.
two_token_separable = Claim(
    name="two-token-gmm-feasible",
    statement="n = 1, T = 2 and distinct keys => (ATT-SVM) with alpha = opt is feasible",
    hypotheses=(Hypothesis("single_input", "n = 1", single_input),
                Hypothesis("two_tokens", "T = 2", two_tokens),
                Hypothesis("distinct_keys", "the keys of an input are pairwise distinct", distinct_keys)),
    conclusion=gmm_feasible,
    instances=lambda dropped: instances(integer_datasets(n=1, T=2, d=st.integers(1, 3))),
    expected=("CERTIFIED",),
)
