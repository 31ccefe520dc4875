"""The registry: the manifest of the papers' results (leanblueprint's content: each result's
statement, what its proof `uses`, its hypotheses and expected verdicts) and where its parts live.

For an id such as `theorem2-tightness` the parts live in modules named `theorem2_tightness`:
`lemmas/<mod>.py` (`outline() -> Outline`), `checks/<mod>.py` (`claim: Claim`) and
`counterexamples/<mod>.py` (`SEARCHES: dict[hypothesis, Search]`), with stored witnesses in
`counterexamples/witnesses/<id>--<name>.json`. Definitions and assumptions are nodes of the
dependency graph with a statement and no parts.

The manifest is plain data, so `attnsvm list` and the blueprint's graph need no heavy import;
tests check it against the modules (same hypotheses, same necessity searches).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from attnsvm.errors import UserError

A = "Max-Margin Token Selection in Attention Mechanism"
B = "Transformers as Support Vector Machines"
C = "Implicit Bias and Fast Convergence Rates for Self-attention"
KINDS = ("definition", "assumption", "lemma", "theorem", "example", "claim")


@dataclass(frozen=True)
class Entry:
    """One result. `hypotheses`: its claim's hypothesis names; `necessity`: those with a necessity
    search (expected REFUTED once dropped); `check`, `derivation`: expected verdicts; `uses`:
    ids its proof uses; `aliases`: other numbers it goes by (e.g. an appendix form); `statement`: the
    result as encoded, `source`: where it sits in its paper (both stated at length, with what is
    reconstructed, in docs/statements.md#<id>)."""

    id: str
    title: str
    paper: str
    kind: str = "theorem"
    uses: tuple[str, ...] = ()
    hypotheses: tuple[str, ...] = ()
    necessity: tuple[str, ...] = ()
    check: tuple[str, ...] = ("SUPPORTED",)
    derivation: tuple[str, ...] = ("PARTIAL",)
    aliases: tuple[str, ...] = ()
    statement: str = field(default="", repr=False)
    source: str = field(default="", repr=False)

    @property
    def module(self) -> str:
        return self.id.replace("-", "_")

    @property
    def has_parts(self) -> bool:
        return self.kind not in ("definition", "assumption")


@dataclass(frozen=True)
class Search:
    """How to show a hypothesis is needed: an instance space aimed at violating it (None: the
    claim's own), and a note on what it looks for."""

    instances: Callable | None = None
    note: str = ""


NODES: list[Entry] = [
    Entry("definition1", "Definition 1: token scores and optimal tokens", A, "definition",
          statement="gamma_it = Y_i v^T x_it; opt_i in argmax_t gamma_it (first index on ties); the GMM is "
                    "p_mm(opt), the solution of (ATT-SVM) for alpha = opt",
          source="A, Section 2.1, Definition 1; (ATT-SVM)"),
    Entry("definition2", "Definition 2: SVM-neighbours and locally optimal tokens", A, "definition",
          uses=("definition1",),
          statement="T_i = active constraints of ATT-SVM(alpha); alpha is locally optimal when every neighbour scores "
                    "strictly lower than alpha_i; its p_mm is an LMM direction",
          source="A, Section 2.2, Definition 2; cones (7), (8)"),
    Entry("definition3", "Definition 3: directional neighbours", A, "definition", uses=("definition2",),
          statement="for q != 0: selected tokens argmax_t k_it^T q, directional margin Gamma(q) = "
                    "min_{i, t != alpha_i} (k_{i,alpha_i} - k_it)^T q, directional neighbours the rows attaining it; "
                    "q is neighbour-optimal when every neighbour scores below its selected token (reconstruction: "
                    "one margin over all inputs)",
          source="A, Appendix B.5.1, Definition 3, eqs. (59)-(61)"),
    Entry("assumption-A", "Assumption A: the loss", A, "assumption",
          statement="on bounded intervals loss is strictly decreasing, loss' is M0-Lipschitz and |loss'| <= M1 "
                    "(read as loss' < 0 there, which the proofs use)",
          source="A, Section 2, Assumption A; L_p eq. (6)"),
    Entry("assumption-B", "Assumption B: one score for the non-optimal tokens", A, "assumption", uses=("definition1",),
          statement="gamma_it = gamma_itau < gamma_{i,opt_i} for all t, tau != opt_i",
          source="A, Section 2.1, Assumption B"),
    Entry("assumption-C", "Assumption C: the selection maximises the label margin", A, "assumption",
          statement="selecting alpha maximises the label SVM's margin and mixing in other tokens strictly shrinks it "
                    "(encoded as C1-C3: unique best pure selection, positive multipliers, mixtures shrink the margin)",
          source="A, Section 3.1, Assumption C; (SVM)"),
    Entry("assumption-D", "Assumption D: nonlinear head, optimal sets", A, "assumption",
          statement="sets O_i with q_i^p = sum_{t not in O_i} s_it(p), q^p = max_i q_i^p: for every mu > 0 there is "
                    "Q_mu > 0 with q^{p'} <= Q_mu and q^{p'} <= (q^p)^{1 + mu} => L(p') < L(p) (mixing non-optimal "
                    "tokens hurts; reconstruction, Appendix D)",
          source="A, Appendix D, Assumption D; eq. (83)"),
]

RESULTS: list[Entry] = [
    Entry("lemma1", "Lemma 1: GD on p and on W = p u^T/||u||^2 coincide", A, "lemma",
          hypotheses=("lifting.rank_one_start", "lifting.step_scaling"), necessity=("rank_one_start", "step_scaling"),
          derivation=("PROVED",), uses=(),
          statement="for u != 0 and any differentiable loss and head: GD on p with step eta and GD on W with step "
                    "eta/||u||^2 from W_0 = p_0 u^T/||u||^2 satisfy W_t = p_t u^T/||u||^2 for every t (the "
                    "proof's identity: grad L_W(W) = grad L_p(W u) u^T)",
          source="A, Section 1.1, Lemma 1; proof Appendix A.2"),
    Entry("lemma2", "Lemma 2 / Lemma 11: (ATT-SVM) with alpha = opt is feasible", A, "lemma", uses=("definition1",),
          hypotheses=("data.common_label", "scores.strict_optimality", "data.v_in_range_W"),
          necessity=("common_label", "strict_optimality", "v_in_range_W"), aliases=("lemma11",), derivation=("PROVED",),
          statement="labels of one common sign s, gamma_{i,opt_i} > gamma_it for t != opt_i and v in range(W) (Lemma "
                    "11; a full-rank W is Lemma 2) => (ATT-SVM) with alpha = opt is feasible, witnessed by p "
                    "= s W^+ v / Gamma, Gamma the least score gap (reconstruction: one common label sign, "
                    "which the witness needs)",
          source="A, Section 2.1, Lemma 2; Appendix B.6, Lemma 11"),
    Entry("lemma4", "Lemma 4: p_mm is a descent direction under Assumption B", A, "lemma",
          uses=("assumption-A", "assumption-B", "definition1"),
          hypotheses=("loss.assumption_A", "scores.strict_optimality", "scores.assumption_B", "att_svm.gmm_feasible"),
          necessity=("assumption_B",), derivation=("PROVED",),
          statement="Assumptions A and B, the GMM p_mm = p_mm(opt) feasible => <grad L(p), p_mm> < 0 for every p: p_mm "
                    "is a global descent direction (Assumption A read as loss' < 0)",
          source="A, Appendix B.1, Lemma 4, eqs. (17)-(22)"),
    Entry("lemma6", "Lemma 6: L_p-smoothness and the descent inequality", A, "lemma", uses=("assumption-A",),
          hypotheses=("loss.assumption_A", "dynamics.step_size"), necessity=("step_size",),
          statement="Assumption A => L is L_p-smooth with L_p = (1/n) sum_i (M0 ||v||^2 ||W||^2 ||X_i||^4 + 3 M1 ||v|| "
                    "||W||^2 ||X_i||^3) (our reconstruction, spectral norms), and GD with eta <= 1/L_p has "
                    "L(p_{t+1}) <= L(p_t) - (eta/2)||grad L(p_t)||^2",
          source="A, Appendix B.1, Lemma 6; eq. (6), proof (24)-(30)"),
    Entry("theorem1", "Theorem 1: the regularization path converges to the GMM", A,
          uses=("assumption-A", "definition1", "assumption-D", "lemma14", "theorem8"),
          hypotheses=("loss.assumption_A", "scores.strict_optimality", "att_svm.gmm_feasible"),
          necessity=("strict_optimality",),
          statement="Assumption A, gamma_{i,opt_i} > gamma_it for t != opt_i, (ATT-SVM) for opt feasible => p(R)/R -> "
                    "p_mm(opt)/||p_mm(opt)|| as R -> oo, p(R) = argmin_{||p|| <= R} L(p)",
          source="A, Section 2.1, Theorem 1, path eq. (2); proof Appendix B.2"),
    Entry("theorem2", "Theorem 2: global GD convergence (n = 1, Assumption B)", A,
          uses=("assumption-A", "assumption-B", "lemma4", "lemma5", "lemma6"),
          hypotheses=("loss.assumption_A", "scores.strict_optimality", "scores.assumption_B", "att_svm.gmm_feasible",
                      "descent.single_input", "dynamics.step_size"),
          necessity=("assumption_B",),
          statement="Assumptions A and B, (ATT-SVM) for opt feasible, GD with eta <= 1/L_p from any p_0: (a) ||p_t|| "
                    "-> oo (any n); (b) if n = 1, p_t/||p_t|| -> p_mm(opt)/||p_mm(opt)||",
          source="A, Section 2.1, Theorem 2; proof Appendix B.3, eqs. (51)-(52)"),
    Entry("theorem2-tightness", "Appendix E: n = 1 is needed in Theorem 2(b)", A, "example",
          uses=("theorem2", "definition1", "definition2", "assumption-B"),
          hypotheses=("loss.assumption_A", "data.two_inputs_two_tokens", "scores.assumption_B", "att_svm.gmm_feasible",
                      "dynamics.step_size"),
          check=("REFUTED",), derivation=("PROVED",),
          statement="claim expected REFUTED: for n = 2 inputs of T = 2 tokens (Assumption B holds trivially) GD with "
                    "eta <= 1/L_p converges in direction to the GMM from every start; on our hand instance "
                    "the region {p_1 >= 0, p_1 + p_2 >= log(12(1+e))} is invariant under GD with any step, "
                    "so GD from (5, 0) never reaches the GMM (1, -3)'s direction: it tends to the LMM (1, 0)",
          source="A, Appendix E, Figure 8"),
    Entry("theorem3", "Theorem 3: local GD convergence to an LMM from its cone", A,
          uses=("assumption-A", "definition2", "lemma6", "lemma7", "theorem2"),
          hypotheses=("loss.assumption_A", "att_svm.feasible", "att_svm.locally_optimal"),
          necessity=("locally_optimal",),
          statement="Assumption A, alpha locally optimal (Definition 2) => there are mu in (0, 1) and R_mu such that "
                    "GD with eta <= 1/L_p from any p_0 in C_{mu,R_mu}(p_mm(alpha)) has ||p_t|| -> oo and "
                    "p_t/||p_t|| -> p_mm(alpha)/||p_mm(alpha)|| (checked with GD at the cone's empirical "
                    "Lipschitz step)",
          source="A, Section 2.2, Theorem 3, cones (7)-(8); proof Appendix B.4"),
    Entry("theorem4", "Theorem 4 / Theorem 7: only LMM directions are limits of the path", A,
          uses=("assumption-A", "definition2", "definition3", "lemma8", "lemma9", "lemma10"),
          hypotheses=("loss.assumption_A", "scores.distinct_scores", "directional.general_position",
                      "regpath.q_not_lmm"),
          necessity=("q_not_lmm", "distinct_scores", "general_position"), aliases=("theorem7",),
          statement="distinct scores, keys in general position (Theorem 7), q a unit direction parallel to no LMM => "
                    "for every mu > 0 and R0 the path p(R) = argmin {L(p) : p in cone_mu(q), R0 <= ||p|| <= "
                    "R} of (9) stays bounded or does not converge in direction to q",
          source="A, Section 2.3, Theorem 4, eq. (9); Appendix B.5.2, Theorem 7"),
    Entry("theorem5", "Theorem 5: joint (v, p) path -> (v_mm, p_mm)", A, uses=("assumption-C", "theorem8"),
          hypotheses=("loss.logistic_loss", "joint.jointly_separable", "joint.assumption_C"),
          necessity=("assumption_C",),
          statement="logistic loss, (ATT-SVM) for alpha and the label SVM on r_i = x_{i,alpha_i} feasible, Assumption "
                    "C (encoded as C1-C3) => the joint path (v, p)(r, R) = argmin {L(v, p) : ||v|| <= r, "
                    "||p|| <= R} has v/r -> v_mm/||v_mm|| and p/R -> p_mm(alpha)/||p_mm(alpha)|| as r, R -> "
                    "oo (checked on rays r = kappa R)",
          source="A, Section 3.1, Theorem 5; proof Appendix C.1"),
    Entry("theorem6", "Theorem 6: non-support inputs relax to problem (10)", A,
          uses=("assumption-C", "theorem5", "lemma12", "lemma13"),
          hypotheses=("loss.logistic_loss", "joint.jointly_separable", "joint.assumption_C_support",
                      "joint.r_dominates_R"),
          necessity=("r_dominates_R",),
          statement="logistic loss, the joint path selects alpha, v_mm the label SVM on x_{i,alpha_i} with support set "
                    "S, Assumption C over S, r = kappa R with kappa > kappa* (our hypothesis r_dominates_R) "
                    "=> v -> v_mm and p -> p_relax in direction, p_relax = argmin ||p|| s.t. (k_{i,alpha_i} "
                    "- k_it)^T p >= 1 (i in S), >= 0 (i not in S), problem (10)",
          source="A, Section 3.2, Theorem 6, problem (10); proof Appendix C.2"),
    Entry("tfsvm-frobenius", "W-parameterisation converges to W_mm (Frobenius)", B, uses=("theorem1", "theorem3"),
          hypotheses=("dynamics.w_parameterisation", "data.independent_queries"),
          necessity=("w_parameterisation", "independent_queries"),
          statement="linearly independent queries (so L(W) has no finite stationary point: tfsvm-landscape) => "
                    "attention with logits x_it^T W z_i, W trained by normalized GD, converges in direction to "
                    "W_mm(alpha) = argmin ||W||_F s.t. (x_{i,alpha_i} - x_it)^T W z_i >= 1, alpha the tokens "
                    "it selects (reconstruction)",
          source="B, Sections 3-5 (as summarised), claim (1)"),
    Entry("tfsvm-nuclear", "(K,Q)-parameterisation converges to W*_mm (nuclear norm)", B, uses=("theorem1", "theorem8"),
          hypotheses=("dynamics.kq_parameterisation", "dynamics.width_m_ge_d", "w_svm.discriminating"),
          necessity=("kq_parameterisation", "width_m_ge_d"),
          statement="attention trained in (K, Q), W = K Q^T of width m >= d, by normalized GD converges in direction "
                    "to a nuclear-norm max-margin W*_mm(alpha) = argmin ||W||_* (same constraints) of the "
                    "tokens it selects, not to the Frobenius W_mm where the two differ (reconstruction)",
          source="B, Section 3 (as summarised), claim (2)"),
    Entry("tfsvm-feasibility", "d >= max(T-1, n) makes (Att-SVM) feasible for every alpha", B,
          hypotheses=("data.d_ge_T_minus_1", "data.d_ge_n", "data.generic"), necessity=("d_ge_T_minus_1", "d_ge_n"),
          statement="d >= T - 1, d >= n and generic data (exact general position of the tokens and queries) => the "
                    "W-SVM (Att-SVM) is feasible for every alpha",
          source="B, Section 5.2 (as summarised), claim (3)"),
    Entry("tfsvm-rank", "rank(W_mm) <= n", B, hypotheses=("w_svm.feasible",), derivation=("PROVED",),
          statement="if the W-SVM for alpha is feasible, rank(W_mm(alpha)) <= n (its constraints see W only through "
                    "the W z_i, so W_mm lies in the span of the queries); checked on an independently solved "
                    "W_mm",
          source="B, the KKT form of W_mm (as summarised), claim (5)"),
    Entry("tfsvm-mlp", "MLP heads select several tokens; the generalized SVM predicts the limit", B,
          # a quarter of multi-token runs undecided: either side (NOTES.md)
          uses=("assumption-D", "theorem8"), check=("SUPPORTED", "INCONCLUSIVE"),
          statement="with an MLP head, normalized GD on W from 0 converges to W^fin + R_t W^mm(O): O_i the selected "
                    "sets, W^mm(O) the generalized SVM separating each set from the other tokens and tying "
                    "the tokens within it, W^fin the risk minimiser over the within-set span "
                    "(reconstruction; only runs that select a set of two or more tokens count)",
          source="B, Section 6 (as summarised), claim (6); A, Appendix D"),
    Entry("rates-global", "NGD / Polyak converge globally to W_mm in the covered data settings", C,
          uses=("lemma4", "theorem1", "theorem2", "theorem3", "tfsvm-frobenius", "assumption-B", "definition1",
                "definition2"),
          hypotheses=("scores.assumption_B", "w_svm.gmm_feasible", "rates.n1_or_all_support", "rates.no_other_w_lmm"),
          necessity=("no_other_w_lmm",),
          statement="in the covered settings (our reconstruction: Assumption B, W_mm(opt) feasible, n = 1 or every "
                    "non-optimal token a support vector, and no other W-LMM, ties counted when n >= 2), normalized "
                    "GD and the Polyak step (f_star = L_inf = mean_i loss(gamma_{i,opt})) converge in direction to "
                    "W_mm(opt) from every start",
          source="C, abstract: global convergence"),
    Entry("rates-speedup", "NGD and Polyak converge to W_mm at a faster rate than fixed-step GD", C,
          uses=("rates-global", "lemma6", "theorem3"),
          hypotheses=("scores.assumption_B", "w_svm.gmm_feasible", "rates.n1_or_all_support", "rates.no_other_w_lmm"),
          statement="in the covered settings of rates-global, normalized GD and the Polyak step converge in direction "
                    "to W_mm(opt) at a faster rate (log-log slope of 1 - corr(W_t, W_mm)) than fixed-step GD "
                    "at every stable step from 1/L_p to 64/L_p (reconstruction)",
          source="C, abstract: speed-up over GD"),
    Entry("lemma3", "Lemma 3 (key lemma): the softmax covariance is its reference-token sum up to 2 Gamma A "
                    "(1 - s_o)^2", A, "lemma", uses=("definition1",), derivation=("PROVED",),
          statement="|a^T diag(s) gamma - a^T s s^T gamma - sum_{t != o} (a_o - a_t) s_t (gamma_o - gamma_t)| <= "
                    "2 Gamma A (1 - s_o)^2 for a = K q, s = S(K p) (reconstruction: A = max_t |a_t|)",
          source="A, Appendix A.1, Lemma 3, eq. (16)"),
    Entry("lemma7", "Lemma 7: local gradient condition L1-L3 on the cone of an LMM", A, "lemma",
          uses=("assumption-A", "definition2", "lemma3", "lemma4"),
          hypotheses=("loss.assumption_A", "att_svm.feasible", "att_svm.locally_optimal"),
          necessity=("locally_optimal",),
          statement="alpha locally optimal: no stationary point in C_{mu,R}(p_mm) (L1); C max_i(1 - s_i) >= -<grad "
                    "L(p), q> >= c min_i(1 - s_i) > 0 and ||grad L(p)|| <= M1 Gamma A_bar max_i(1 - s_i) (L2, "
                    "reconstructed constants); <-grad L, p^> <= (1 + pi) <-grad L, p_mm^> for ||p|| >= R_pi (L3)",
          source="A, Appendix B.1, Lemma 7, eqs. (31a)-(31c), (32)-(50)"),
    Entry("theorem8", "Theorem 8: the path with a nonlinear head converges to (ATT-SVM')", A,
          uses=("assumption-A", "assumption-D", "example-attsvm-prime-nonconvex"),
          hypotheses=("loss.assumption_A", "prime.assumption_D", "prime.prime_feasible"), necessity=("assumption_D",),
          statement="Assumption D with sets O_i, (ATT-SVM') feasible => dist(p(R)/R, P^mm/Xi) -> 0, P^mm the solution "
                    "set of (ATT-SVM'): min ||p|| s.t. max_{j in O_i} (k_ij - k_it)^T p >= 1, t not in O_i",
          source="A, Appendix D, Theorem 8, (ATT-SVM'); proof D.1, eq. (84)"),
    Entry("tfsvm-regpath-w", "W regularization path -> W_mm(opt); in an LMM's cone -> that LMM", B,
          uses=("theorem1", "theorem4", "definition2", "assumption-A"),
          hypotheses=("loss.assumption_A", "w_svm.feasible", "w_svm.locally_optimal", "regpath.global_is_opt"),
          necessity=("locally_optimal", "global_is_opt"),
          statement="min L(W) over ||W||_F <= R converges in direction to W_mm(opt) (strict, feasible); confined to "
                    "cone_mu(W_mm(alpha)) and ||W|| >= R0 it converges to W_mm(alpha) for locally optimal alpha",
          source="B, Section 3 (as summarised), claim (1)"),
    Entry("example-attsvm-prime-nonconvex",
          "Appendix D: (ATT-SVM') is not convex when an optimal set has two tokens", A, "example",
          hypotheses=("optimal_sets.non_singleton_set",), check=("REFUTED",), derivation=("PROVED",),
          statement="n = 1, keys e1, -e1, 0, O = {1, 2}: the solution set of (ATT-SVM') is {e1, -e1}, whose midpoint 0 "
                    "is infeasible (reconstructed keys)",
          source="A, Appendix D, example after (ATT-SVM')"),
    Entry("lemma5", "Lemma 5: gradient correlation condition for n = 1 under Assumption B", A, "lemma",
          uses=("assumption-A", "assumption-B", "definition1", "lemma4"),
          hypotheses=("loss.assumption_A", "scores.strict_optimality", "scores.assumption_B", "att_svm.gmm_feasible",
                      "data.single_input"),
          necessity=("single_input", "assumption_B"),
          statement="n = 1, Assumptions A and B: for every pi > 0 there is R_pi with <grad L(p), p/||p||> >= (1 + pi) "
                    "<grad L(p), p_mm/||p_mm||> whenever ||p|| >= R_pi (reconstruction)",
          source="A, Appendix B.1, Lemma 5, eq. (23)"),
    Entry("lemma14", "Lemma 14: linear label mixing implies Assumption D", A, "lemma",
          uses=("assumption-A", "assumption-D", "definition1"),
          hypotheses=("loss.assumption_A", "prime.label_mixing", "prime.prime_feasible"), necessity=("label_mixing",),
          statement="gamma*_i - C q_i <= Y_i f_p(X_i) <= gamma*_i - c q_i (0 < c <= C) and -loss' in [m, M], m > 0 => "
                    "Assumption D with Q_mu = (1/2)(m c/(n M C))^{(1+mu)/mu} (reconstruction)",
          source="A, Appendix D.2, Lemma 14, eq. (85)"),
    Entry("lemma8", "Lemma 8: the larger directional margin wins along rays (neighbour-optimal, same selection)", A,
          "lemma",
          uses=("assumption-A", "definition1", "definition3"),
          hypotheses=("loss.assumption_A", "directional.same_selection", "directional.margin_order",
                      "directional.p_neighbor_optimal", "directional.q_neighbor_optimal"),
          necessity=("same_selection", "margin_order", "q_neighbor_optimal"),
          statement="unit p, q with the same unique selected tokens, both neighbour-optimal, Gamma(p) > Gamma(q) => "
                    "L(R p) < L(R q) for all large R (reconstruction of the lost formulas)",
          source="A, Appendix B.5.1, Lemma 8, eqs. (62)-(65)"),
    Entry("lemma9", "Lemma 9: better directional neighbours beat the selection baseline", A, "lemma",
          uses=("assumption-A", "definition1", "definition3", "lemma8"),
          hypotheses=("loss.assumption_A", "directional.unique_selection", "directional.neighbors_better"),
          necessity=("neighbors_better",),
          statement="unit q with unique selected tokens alpha whose directional neighbours all score higher => "
                    "L(R q) < (1/n) sum_i loss(gamma_{i,alpha_i}) for all large R (reconstruction)",
          source="A, Appendix B.5.2, Lemma 9, eqs. (69)-(70)"),
    Entry("lemma10", "Lemma 10: at most d directional neighbours in general position", A, "lemma",
          uses=("definition3",), hypotheses=("directional.general_position",), necessity=("general_position",),
          derivation=("PROVED",),
          statement="keys in general position => sum_i |T_i(q)| <= d for every direction q != 0",
          source="A, Appendix B.5.2, Lemma 10"),
    Entry("lemma12", "Lemma 12: a path that selects alpha ends in the quadrant (77)", A, "lemma",
          hypotheses=("softmax.selects_alpha",), necessity=("selects_alpha",), derivation=("PROVED",),
          statement="s_{i,alpha_i}(p(r, R)) -> 1 => (k_{i,alpha_i} - k_it)^T p(r, R) >= 0 for all i, t != alpha_i and "
                    "all large R (reconstruction; checked pointwise: s_{i,alpha_i}(p) > 1/2 => (77))",
          source="A, Appendix C.2, Lemma 12, eq. (77)"),
    Entry("tfsvm-regpath-kq", "(K, Q) regularization path -> nuclear-norm W*_mm (rank <= m when m < d)", B,
          uses=("tfsvm-nuclear", "theorem1", "assumption-A"),
          hypotheses=("loss.assumption_A", "scores.strict_optimality", "w_svm.gmm_feasible",
                      "dynamics.kq_parameterisation", "regpath.svms_differ"),
          necessity=("kq_parameterisation",),
          statement="min L(K Q^T) over ||K||_F^2 + ||Q||_F^2 <= 2R converges in direction to W*_mm(opt) (nuclear norm) "
                    "for m >= d and to the rank-<= m nuclear SVM for m < d; checked where W_mm and that limit differ",
          source="B, Section 3 (as summarised), claim (2)"),
    Entry("lemma13", "Lemma 13: on the quadrant (77) the joint path tends to (v_mm, p_relax)", A, "lemma",
          uses=("lemma12", "theorem5", "assumption-C"),
          hypotheses=("joint.label_separable", "joint.relaxed_feasible", "joint.att_svm_feasible"),
          necessity=("att_svm_feasible",),
          statement="on the joint path restricted to (77), v -> v_mm and p -> p_relax (problem (10)) in direction; "
                    "checked: its competitor (78) exists for eps in (0, 1] with ||p^eps||^2 <= ||(1 - eps) "
                    "p_relax + eps p_mm||^2",
          source="A, Appendix C.2, Lemma 13, eqs. (78)-(82)"),
    Entry("tfsvm-seq2seq", "Sequence-to-sequence attention: GD and the path select by the per-query SVM", B,
          uses=("tfsvm-frobenius", "theorem1", "theorem3", "tfsvm-feasibility"),
          hypotheses=("seq2seq.per_query_svm", "seq2seq.strict_optimality", "seq2seq.opt_feasible",
                      "seq2seq.overparameterized"),
          necessity=("per_query_svm", "overparameterized"),
          statement="every token x_ik a query (labels Y_ik): NGD on W converges in direction to W_mm(alpha) of its "
                    "selected tokens and the regularization path to W_mm(opt), W_mm = argmin ||W||_F s.t. "
                    "(x_{i,alpha_ik} - x_it)^T W x_ik >= 1 for all i, k, t != alpha_ik (one block per query); d >= T "
                    "and n T (T - 1) <= d^2 make every alpha feasible for generic data (reconstruction of Section 7)",
          source="B, Section 7 (as summarised)"),
    Entry("tfsvm-causal", "Causal attention: GD and the path select by the masked per-query SVM", B,
          uses=("tfsvm-seq2seq", "tfsvm-frobenius", "theorem1", "theorem3", "tfsvm-feasibility"),
          hypotheses=("seq2seq.per_query_svm", "causal.causal_mask", "causal.strict_optimality", "causal.opt_feasible",
                      "causal.overparameterized"),
          necessity=("per_query_svm", "causal_mask", "overparameterized"),
          statement="query k sees tokens t <= k: NGD converges in direction to W_mm(alpha) of its selected tokens and "
                    "the path to W_mm(opt), W_mm with constraints (x_{i,alpha_ik} - x_it)^T W x_ik >= 1 for t <= k, t "
                    "!= alpha_ik only; d >= T - 1 and n T (T - 1)/2 <= d^2 make every alpha feasible "
                    "(reconstruction of Section 7)",
          source="B, Section 7 (as summarised)"),
    Entry("tfsvm-landscape", "Over-parameterisation: no stationary points; spurious LMMs fade as d grows", B,
          uses=("tfsvm-frobenius", "tfsvm-feasibility", "definition2", "assumption-A"),
          hypotheses=("data.independent_queries", "scores.not_all_tied"), necessity=("independent_queries",),
          statement="linearly independent queries (d >= n) and no all-tied input => L(W) has no stationary point "
                    "(d >= T-1 not needed); spurious LMMs, present at d = max(T-1, n), become rare as d grows",
          source="B, Section 5.2 (as summarised), claims (3)-(4)"),
    Entry("tfsvm-global", "Score gap + aligned initial gradient: GD from 0 converges to W_mm(opt)", B,
          uses=("lemma4", "theorem3", "tfsvm-regpath-w", "assumption-A", "definition1", "tfsvm-frobenius"),
          hypotheses=("loss.assumption_A", "scores.strict_optimality", "scores.score_gap",
                      "w_risk.initial_gradient_aligned", "data.independent_queries", "w_svm.gmm_feasible"),
          necessity=("score_gap", "initial_gradient_aligned", "independent_queries"),
          statement="gamma_opt - max_{t != opt} gamma_t >= spread of the others, (x_opt - x_t)^T (-grad L(0)) z_i > 0 "
                    "and linearly independent queries (over-parameterisation, d >= n) => normalized GD from W_0 = 0 "
                    "converges in direction to W_mm(opt) (reconstructed conditions)",
          source="B, Section 4 (as summarised), claim (4)"),
    Entry("rates-ngd", "NGD: 1 - corr(W_t, W_mm) <= C log(t)/t in the covered settings (law reconstructed)", C,
          uses=("rates-global", "lemma4", "theorem3", "assumption-B"),
          hypotheses=("scores.assumption_B", "w_svm.gmm_feasible", "rates.n1_or_all_support", "rates.no_other_w_lmm"),
          necessity=("no_other_w_lmm",),     # n1_or_all_support: necessity not established (NOTES.md)
          statement="in the covered settings of rates-global, normalized GD has 1 - corr(W_t, W_mm(opt)) <= C log(t)/t "
                    "(our reconstruction of paper C's rate), judged by the fitted exponent",
          source="C, abstract: finite-time rates"),
    Entry("rates-polyak", "Polyak: 1 - corr(W_t, W_mm) <= C log(t)/t in the covered settings (law reconstructed)", C,
          uses=("rates-global", "rates-ngd", "rates-speedup", "lemma4", "theorem3", "assumption-B"),
          hypotheses=("scores.assumption_B", "w_svm.gmm_feasible", "rates.n1_or_all_support", "rates.no_other_w_lmm",
                      "rates.start_near_zero"),
          necessity=("no_other_w_lmm",),     # n1_or_all_support, start_near_zero: necessity not established (NOTES.md)
          statement="in the covered settings of rates-global, the Polyak step (f_star = L_inf) has 1 - corr(W_t, "
                    "W_mm(opt)) <= C log(t)/t (our reconstruction), judged by the fitted exponent",
          source="C, abstract: finite-time rates (Polyak)"),
    Entry("rates-sparsity",
          "NGD / Polyak sparsify attention exponentially: 1 - s_opt <= C exp(-c t) (law reconstructed)", C,
          uses=("rates-ngd", "rates-polyak", "rates-global", "theorem3"),
          hypotheses=("scores.assumption_B", "w_svm.gmm_feasible", "rates.n1_or_all_support", "rates.no_other_w_lmm"),
          necessity=("no_other_w_lmm",),     # n1_or_all_support: necessity not established (NOTES.md)
          statement="in the covered settings, mean_i (1 - s_i,opt(W_t)) <= C exp(-c t), c = eta/(Z ||W_mm||^2) for NGD "
                    "and rho_0/(Z^2 ||W_mm||^2) for Polyak (our reconstruction), judged by the fitted rate",
          source="C, abstract: sparsification rate"),
    Entry("rates-joint", "Joint (W, v) NGD: W -> W_mm, decoder in margin, L <= exp(-c t^(1/3)) (reconstructed)", C,
          uses=("rates-global", "lemma4"),
          hypotheses=("rates.normalized_step", "rates.labels_on_signal", "rates.start_near_zero"),
          necessity=("normalized_step",),     # start_near_zero: witness in NOTES.md, no search (1 start in 10 there)
          statement="joint normalized GD on (W, v) from a start near zero on Gaussian-like data (reconstruction): W "
                    "converges in direction to "
                    "W_mm(opt), the decoder's normalized margin to the label SVM's, and the loss "
                    "decays like exp(-t^(1/3))",
          source="C, public summaries: joint training"),
]

ENTRIES: list[Entry] = RESULTS          # the results with parts, in the order checks run
PARTS = ("lemmas", "checks", "counterexamples")
RESULTS_PACKAGE = "attnsvm.results"     # the repository's lemmas/, checks/, counterexamples/ (pyproject package-dir)
WITNESS_DIR = (Path(importlib.util.find_spec(f"{RESULTS_PACKAGE}.counterexamples").submodule_search_locations[0])
               / "witnesses")
_BY_ID = {e.id: e for e in NODES + RESULTS}
_ALIASES = {a: e.id for e in NODES + RESULTS for a in e.aliases}


def short(hypothesis: str) -> str:
    """The row name of a hypothesis (`drop:<name>`, witness files): its qualified name
    `<family>.<name>` without the family."""
    return hypothesis.rpartition(".")[2]


def entry(id: str) -> Entry:
    """The entry of a result id or alias (e.g. 'lemma11' -> lemma2)."""
    key = _ALIASES.get(id, id)
    if key not in _BY_ID:
        raise UserError(f"unknown result id {id!r}; `attnsvm list` shows the ids")
    return _BY_ID[key]


def all_nodes() -> list[Entry]:
    """Every node of the dependency graph: definitions, assumptions and results."""
    return NODES + RESULTS


def _part(package: str, e: Entry):
    """The module of one of a result's parts, always under `attnsvm.results` (never a top-level
    `checks` or `lemmas` that the working directory may hold). A declared part that cannot be
    imported raises, so the runner gives it an error row instead of skipping it."""
    return importlib.import_module(f"{RESULTS_PACKAGE}.{package}.{e.module}")


def has(package: str, e: Entry) -> bool:
    """Whether result `e` declares a part in `package` (every result does; definitions and
    assumptions have none). Declared, not looked up: a missing module is an error, not a skip."""
    return e.has_parts and package in PARTS


def outline(e: Entry):
    return _part("lemmas", e).outline


def claim(e: Entry):
    return _part("checks", e).claim


def searches(e: Entry) -> dict[str, Search]:
    return getattr(_part("counterexamples", e), "SEARCHES", {}) if has("counterexamples", e) else {}


def witness_path(e: Entry, name: str) -> Path:
    return WITNESS_DIR / f"{e.id}--{name}.json"


def claim_witnesses(e: Entry) -> list[Path]:
    """Stored counterexamples to the claim as stated (files `<id>--<name>.json` whose name is not
    a hypothesis with a necessity search), e.g. the tightness instances of Appendix E."""
    return sorted(p for p in WITNESS_DIR.glob(f"{e.id}--*.json") if p.stem.split("--", 1)[1] not in e.necessity)
