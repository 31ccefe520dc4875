"""Theorem 1 without strict optimality: tied top scores.

The search draws the paper's Figure-1 construction (keys and scores independent) with one
input of three tokens, two of them tied at the top score. p_mm(opt) then separates the
first tied token (opt takes the first index on ties) from both others, but mixing two tied
tokens costs nothing, so the path only has to push the low-score token away: it converges
to the direction that best separates the tied PAIR from the low token (Appendix D's
(ATT-SVM') with the optimal set O = {both tied tokens}), typically selecting the other tied
token. "Converges to p_mm(opt)" is then false (the witness's final direction is far from
p_mm(opt)); what the path does converge to is the (ATT-SVM') solution - the theorem's
conclusion is undefined without strict optimality, not its mechanism.

Assumption A is not searched (only library losses are encoded; a non-decreasing loss
has no stored form) and neither is GMM feasibility (without it p_mm does not exist, so the
conclusion cannot be evaluated)."""

from attnsvm.attention import model
from attnsvm.claims.registry import Search
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import keyed_dataset
from attnsvm.results.checks.theorem1 import path_instances


def tied_datasets() -> Space:
    """One input of three tokens with distinct integer keys in [-3, 3]^2 and scores (top, top,
    low), low < top: strict optimality fails by construction."""
    def generate(c):
        keys = [[c.integer(-3, 3, "entry"), c.integer(-3, 3, "entry")] for _ in range(3)]
        if len({tuple(k) for k in keys}) < 3:
            c.reject()
        top, low = c.integer(0, 2, "entry"), c.integer(-2, 1, "entry")
        ds = keyed_dataset([keys], [[top, top, low]], [1], name="tied-top")
        if not model.scores(ds)[0, 2] < model.scores(ds)[0, 0]:
            c.reject()
        return ds

    return Space(generate, "one input, three distinct integer keys in [-3, 3]^2, scores (top, top, low), low < top")


SEARCHES = {
    "strict_optimality": Search(instances=lambda dropped: path_instances(tied_datasets()),
                                note="two tied top-score tokens: the path separates the tied pair from the rest, "
                                     "not p_mm(opt)'s chosen token from its twin"),
}
