"""The numbers attnsvm's numerics agree on, defined once (float64 throughout).

EPS: float64's relative resolution. LOG_TINY: the log of the smallest normal float64 (about
-708.4): a quantity whose log is below it has left float64's range. LOG_FLUSH: where the
log-domain gradient flushes a term (e^-700 below the largest): terms below it are not
represented, so comparisons of risks that differ only there are undecided. DIV_FLOOR: the
smallest denominator a norm-ratio is divided by (a zero vector gives 0, never NaN).
"""

import math

import numpy as np

EPS = float(np.finfo(np.float64).eps)              # 2.2e-16
TINY = float(np.finfo(np.float64).tiny)            # 2.2e-308
LOG_TINY = math.log(TINY)                          # -708.4
LOG_FLUSH = -700.0                                 # terms this far (in log) below the largest are flushed
DIV_FLOOR = 1e-300                                 # denominators of correlations and ratios are clamped here
