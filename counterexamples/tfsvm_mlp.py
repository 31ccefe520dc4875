"""tfsvm-mlp: the claim has no hypothesis to drop (any differentiable head; a linear head is the
special case of singleton sets), so there is no necessity search."""

SEARCHES: dict = {}
