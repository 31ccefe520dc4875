"""rates-global: the searches start the runs on the max-margin direction of another token choice
(a candidate LMM), where a non-global limit can hold them. Feasibility of W_mm(opt) is not
searched: without it W_mm does not exist.

Only `no_other_w_lmm` has a necessity witness. With it kept, searches dropping Assumption B or
the support condition found no failure (standard budget, NOTES.md): the earlier witnesses for
those two were LMM traps, i.e. violations of `no_other_w_lmm`, which our first reconstruction
lacked; in our reading the paper's data settings are ways to rule out other LMMs."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "no_other_w_lmm": Search(note="a locally optimal selection other than opt: runs started on its W_mm stay there"),
}
