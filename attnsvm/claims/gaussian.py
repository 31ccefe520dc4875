"""Gaussian instance spaces whose datasets are built once per (seed, sizes, options): a search's
targeted phase replays mutated choice records, many of which clamp back to a record it has
tried, and each replay used to rebuild the dataset (its exact rationals: about a millisecond).
The cache returns the same immutable `Dataset`, so its memoized SVM answers are shared too;
an instance's outcome does not change."""

from __future__ import annotations

import functools

from attnsvm.attention.data import Dataset
from attnsvm.claims.claim import Instance
from attnsvm.claims.spaces import Chooser, Space
from attnsvm.claims.strategies import gaussian_dataset

CACHE = 8192


@functools.lru_cache(maxsize=CACHE)
def dataset(seed: int, n: int, T: int, d: int, cross_queries: bool = False) -> Dataset:
    """`strategies.gaussian_dataset(seed, n, T, d, cross_queries=...)`, built once."""
    return gaussian_dataset(seed, n, T, d, cross_queries=cross_queries)


def _size(c: Chooser, x):
    return c.integer(x[0], x[1], "size") if isinstance(x, tuple) else x


def datasets(n, T, d, cross=(False,), seed_hi: int = 2**31 - 1) -> Space:
    """Gaussian datasets from a drawn seed (as `strategies.gaussian_datasets`: the seed first, then
    the sizes n, T, d, each an int or a (lo, hi) range), self-attention or, when `cross` offers
    True, cross-attention with Gaussian queries (a pick)."""
    def generate(c: Chooser) -> Dataset:
        seed = c.integer(0, seed_hi, "seed")
        nn, TT, dd = _size(c, n), _size(c, T), _size(c, d)
        return dataset(seed, nn, TT, dd, c.sampled_from(list(cross)) if len(cross) > 1 else cross[0])

    return Space(generate, f"Gaussian datasets n {n}, T {T}, d {d}" + (", self- or cross-attention" if len(cross) > 1
                                                                       else ", cross-attention" if cross[0] else ""))


def instances(data: Space, **params) -> Space:
    """Instances of `data` with parameters given as Spaces (`strategies.just`, `seeds`, ...), in order."""
    def generate(c: Chooser) -> Instance:
        ds = data.generate(c)
        return Instance(ds, {k: v.generate(c) for k, v in params.items()})

    return Space(generate, data.description + ("; params " + ", ".join(params) if params else ""), params=dict(params))


def sequences(parts=("gd", "path", "feasibility"), svm: str = "seq", n=(1, 2), T=(2, 3), d=(2, 3),
              starts: int = 2) -> Space:
    """Gaussian sequences for the sequence-to-sequence checks (`dynamics.seq2seq`): the part an
    instance concludes, a dataset from a drawn seed (sizes in the given ranges), one label per
    query, the predicting SVM `svm`, a seed for the runs' inits and paths' starts, `starts` runs."""
    from attnsvm.claims.strategies import just, sampled_from, seeds

    def generate(c: Chooser) -> Instance:
        part = c.sampled_from(list(parts))
        seed = c.integer(0, 2**31 - 1, "seed")
        nn, TT, dd = _size(c, n), _size(c, T), _size(c, d)
        labels = [[c.sampled_from([1, -1]) for _ in range(TT)] for _ in range(nn)]
        return Instance(dataset(seed, nn, TT, dd), {"labels": labels, "part": part, "svm": svm,
                                                    "seed": c.integer(0, 2**16, "seed"), "starts": starts})

    return Space(generate, f"Gaussian sequences n {n}, T {T}, d {d}, labels per query; part in {list(parts)}; "
                           f"svm {svm}",
                 params={"labels": Space(lambda c: None, "one label per query"), "part": sampled_from(list(parts)),
                         "svm": sampled_from(["seq", "causal", "single", "full"]), "seed": seeds(0, 2**16),
                         "starts": just(starts)})
