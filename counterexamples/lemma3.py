"""Lemma 3 has no hypothesis to drop (it holds for every input, direction and reference token;
the constant 2 is attained, see tests/test_core_lemmas.py), so there is no necessity search."""

SEARCHES: dict = {}
