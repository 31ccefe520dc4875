"""SVMs and certificates: margin problems as values (`margin`), exact KKT / Farkas
certificates (`certificates`), token geometry of Definition 2 (`geometry`)."""

from attnsvm.svm.margin import (
                                ACTIVE_TOL,
                                MarginProblem,
                                SVMResult,
                                att_svm,
                                att_svm_keys,
                                att_svm_problem,
                                label_svm,
                                relaxed_att_svm,
                                relaxed_att_svm_problem,
                                solve,
                                w_svm,
                                w_svm_arrays,
                                w_svm_problem,
)

__all__ = ["ACTIVE_TOL", "MarginProblem", "SVMResult", "att_svm", "att_svm_keys", "att_svm_problem", "label_svm",
           "relaxed_att_svm", "relaxed_att_svm_problem", "solve", "w_svm", "w_svm_arrays", "w_svm_problem"]
