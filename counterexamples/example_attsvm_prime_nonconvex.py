"""The example's claim ("(ATT-SVM') is convex") has one hypothesis, a set of two or more tokens;
dropping it leaves singleton sets, where (ATT-SVM') is one convex QP: no necessity search. The
refutation is the stored hand witness `example-attsvm-prime-nonconvex--hand.json` (the paper's
instance) and the check's own search."""

SEARCHES: dict = {}
