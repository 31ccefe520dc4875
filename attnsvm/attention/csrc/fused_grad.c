/* Fused cancellation-free gradient of the linear-head risk: the arithmetic of
   attnsvm.gradients.linear_head_grad(stats=False) in two passes over the keys, around the loss
   derivative. Built, loaded and checked against the eager path by attnsvm.fused.

   Blocked layout: the batch is taken CH instances at a time (a chunk: one AVX-512 vector, two
   AVX2 ones), and every array holds its chunks one after another, the chunk's instances
   innermost: keys Kt (chunks, T, n, d, CH), scores G (chunks, T, n, CH), bound (chunks, CH),
   p and direction (chunks, CH, d). A chunk's scratch arrays are one contiguous block of the
   workspace, `W` doubles per chunk, at the offsets `off` (in the order of attnsvm.fused.ARRAYS):
   pT (d, CH), u (T, n, CH), per input (n, CH): ref, z2, S, rest, t1, excess, margin, g_ref, lp;
   work (2 n, CH), dirT (d, CH), direction (CH, d), log_norm (CH). Every loop runs over a
   chunk's lanes (vectorized whole, no branches), and the normalized-GD loop
   (attnsvm_normalized_gd) takes all its steps on one chunk before the next, so the chunk's keys
   stay in the nearest cache. float64; IEEE semantics (no fast-math). On x86-64 glibc the exp
   and log loops use glibc's vector math (libmvec, see vexp). Exponents below FLUSH are flushed
   to 0, which keeps the vector exp on its fast path and the arithmetic out of subnormals; the
   eager path flushes below -745 (float64 underflow), so the two differ only by terms under
   e^-700 of the largest (of the runner-up token's within an input, of the heaviest input's
   across inputs). */

#include <math.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GLIBC__) && defined(ATTNSVM_LIBMVEC)
/* glibc's exp and log under other names: the loops below call their vector variants (libmvec),
   and the compiler does not apply what it knows about exp, which would move the clamp of
   flushed_exp past the call and hand exp the arguments the clamp is there to keep from it
   (libmvec takes a slow scalar path for each such lane). */
__attribute__((simd("notinbranch"), const, nothrow)) double vexp(double) __asm__("exp");
__attribute__((simd("notinbranch"), const, nothrow)) double vlog(double) __asm__("log");
#else
#define vexp exp
#define vlog log
#endif

#define FLUSH (-700.0)
#define CH 8                                            /* instances per chunk (attnsvm.fused.CHUNK) */
/* A loop over a chunk's lanes, vectorized whole (built with -fopenmp-simd; else a plain loop). */
#define LANES _Pragma("omp simd") for (long c = 0; c < CH; c++)

enum { PT, U, REF, Z2, S, REST, T1, EXCESS, MARGIN, GREF, LP, WORK, DIRT, DIRECTION, LOGNORM };

/* exp(x), flushed to 0 below FLUSH; exp itself never sees an argument below FLUSH. */
static inline double flushed_exp(double x)
{
    const double keep = x >= FLUSH ? 1.0 : 0.0;          /* (a multiply, not a branch: vectorizes) */
    return vexp(x > FLUSH ? x : FLUSH) * keep;
}

/* Pass 1 on one chunk (keys K, scores G, scratch w). Per input i: logits a_t = <k_t, p>, the
   max-logit token ref (first on ties), the runner-up logit ru; u_t = exp(a_t - ru) (0 at ref);
   z2 = ru - a_ref <= 0; rest = sum_t u_t (in [1, T-1]); S = 1 + e^z2 rest = 1 / s_ref (so the
   saturation log(1 - s_ref) = z2 - log S + log rest, attnsvm.fused); t1 = sum_t u_t (gamma_t -
   gamma_ref) / S; excess = f - gamma_ref = e^z2 t1 and the margin f = gamma_ref + excess =
   <s, gamma> without cancellation (pass 2 needs excess itself: f - gamma_ref would round it
   away); g_ref = gamma_ref. ref holds token indices as doubles (compared with doubles in vector
   loops). p (CH, d) is first transposed into pT. */
static void margins_chunk(const double *restrict K, const double *restrict G, const double *restrict p,
                          long n, long T, long d, double *restrict w, const long *restrict off)
{
    double *restrict pT = w + off[PT], *restrict u = w + off[U];
    for (long c = 0; c < CH; c++)
        for (long j = 0; j < d; j++) pT[j * CH + c] = p[c * d + j];
    for (long i = 0; i < n; i++) {
        double top[CH], ru[CH], r[CH], gr[CH], rs[CH], tt[CH];
        for (long t = 0; t < T; t++) {                    /* logits, with the top two on the fly */
            const double *k = K + (t * n + i) * d * CH, *g = G + (t * n + i) * CH;
            double a[CH];
            LANES a[c] = k[c] * pT[c];
            for (long j = 1; j < d; j++)
                LANES a[c] += k[j * CH + c] * pT[j * CH + c];
            double *au = u + (t * n + i) * CH;
            LANES au[c] = a[c];
            if (t == 0) {
                LANES { top[c] = a[c]; ru[c] = -INFINITY; r[c] = 0.0; gr[c] = g[c]; }
                continue;
            }
            const double tf = (double)t;
            LANES {                                       /* selects: vectorizes */
                const int hit = a[c] > top[c];            /* strict: the first max-logit token on ties */
                ru[c] = hit ? top[c] : (a[c] > ru[c] ? a[c] : ru[c]);
                top[c] = hit ? a[c] : top[c];
                r[c] = hit ? tf : r[c];
                gr[c] = hit ? g[c] : gr[c];
            }
        }
        LANES { rs[c] = 0.0; tt[c] = 0.0; }
        for (long t = 0; t < T; t++) {
            double *a = u + (t * n + i) * CH;
            const double *g = G + (t * n + i) * CH;
            const double tf = (double)t;
            LANES {
                a[c] = flushed_exp(r[c] == tf ? 2 * FLUSH : a[c] - ru[c]);
                rs[c] += a[c];                            /* rest = sum_t u_t */
                tt[c] += (g[c] - gr[c]) * a[c];           /* sum_t u_t (gamma_t - gamma_ref) */
            }
        }
        double *z2 = w + off[Z2] + i * CH, *s = w + off[S] + i * CH, *rest = w + off[REST] + i * CH,
               *t1 = w + off[T1] + i * CH, *ex = w + off[EXCESS] + i * CH, *f = w + off[MARGIN] + i * CH,
               *ref = w + off[REF] + i * CH, *g_ref = w + off[GREF] + i * CH;
        LANES {
            const double z = ru[c] - top[c];
            const double e2 = flushed_exp(z);
            s[c] = 1.0 + e2 * rs[c];
            t1[c] = tt[c] / s[c];
            ex[c] = e2 * t1[c];
            f[c] = gr[c] + ex[c];
            z2[c] = z;
            rest[c] = rs[c];
            ref[c] = r[c];
            g_ref[c] = gr[c];
        }
    }
}

/* The derivative lp = loss'(margin) of a library loss (attnsvm.losses), on one chunk: 1 logistic
   -1 / (1 + e^f), 2 exponential -e^-f, 3 correlation -1. Other losses are taken in torch. */
static void loss_deriv_chunk(long loss, long n, double *restrict w, const long *restrict off)
{
    const double *restrict f = w + off[MARGIN];
    double *restrict lp = w + off[LP];
    for (long i = 0; i < n; i++)
        LANES lp[i * CH + c] = loss == 1 ? -1.0 / (1.0 + vexp(f[i * CH + c]))
                             : loss == 2 ? -vexp(-f[i * CH + c]) : -1.0;
}

/* Pass 2 on one chunk, given lp = loss'(margin): uc_t = u_t (gamma_t - gamma_ref) - u_t excess
   = u_t (gamma_t - f), overwriting u; log_F_i = log(|lp_i| / S_i) + z2_i = log |lp_i| s_{i,ru};
   M_b = max_i log(sum_t |uc_t|) + log_F_i (-inf when every term is 0); weights w_t = fac_i uc_t,
   w_ref = -fac_i t1_i, fac_i = sign(lp_i) e^min(log_F_i - M_b, 700) (0 for an input whose terms
   are all 0; the cap is gradients.MAX_EXP); scaled = sum_it w_it k_it (into dirT); direction
   (CH, d) = scaled / ||scaled|| where ||scaled|| > bound_b (else 0); log_norm =
   log max(||scaled||, bound_b) + M_b - log n. */
static void direction_chunk(const double *restrict K, const double *restrict G, const double *restrict bound,
                            long n, long T, long d, double *restrict w, const long *restrict off)
{
    double *restrict u = w + off[U], *restrict mass = w + off[WORK], *restrict logF = w + off[WORK] + n * CH,
           *restrict dirT = w + off[DIRT], *restrict log_norm = w + off[LOGNORM];
    const double *restrict ref = w + off[REF], *restrict z2 = w + off[Z2], *restrict S_ = w + off[S],
                 *restrict t1 = w + off[T1], *restrict excess = w + off[EXCESS], *restrict g_ref = w + off[GREF],
                 *restrict lp = w + off[LP];
    double M[CH], norm[CH];
    LANES M[c] = -INFINITY;
    for (long i = 0; i < n; i++) {
        double *m = mass + i * CH, *lf = logF + i * CH;
        const double *ex = excess + i * CH, *gr = g_ref + i * CH;
        LANES m[c] = 0.0;
        for (long t = 0; t < T; t++) {
            double *a = u + (t * n + i) * CH;
            const double *g = G + (t * n + i) * CH;
            LANES {
                const double x = (g[c] - gr[c]) * a[c] - a[c] * ex[c];
                a[c] = x;
                m[c] += fabs(x);
            }
        }
        LANES {
            lf[c] = vlog(fabs(lp[i * CH + c]) / S_[i * CH + c]) + z2[i * CH + c];
            const double lm = vlog(m[c]) + lf[c];
            M[c] = lm > M[c] ? lm : M[c];
        }
    }
    for (long j = 0; j < d; j++)
        LANES dirT[j * CH + c] = 0.0;
    for (long i = 0; i < n; i++) {
        double *fac = logF + i * CH;
        const double *m = mass + i * CH, *l = lp + i * CH, *r = ref + i * CH, *tt = t1 + i * CH;
        LANES {
            const double x = fac[c] - (M[c] == -INFINITY ? 0.0 : M[c]);
            const double keep = m[c] > 0.0 ? 1.0 : 0.0;   /* (a multiply, not a branch: vectorizes) */
            fac[c] = copysign(flushed_exp(x > -FLUSH ? -FLUSH : x), l[c]) * keep;
        }
        for (long t = 0; t < T; t++) {
            double *a = u + (t * n + i) * CH;
            LANES a[c] = r[c] == (double)t ? -fac[c] * tt[c] : fac[c] * a[c];
            const double *k = K + (t * n + i) * d * CH;
            for (long j = 0; j < d; j++)
                LANES dirT[j * CH + c] += a[c] * k[j * CH + c];
        }
    }
    const double log_n = log((double)n);
    LANES norm[c] = 0.0;
    for (long j = 0; j < d; j++)
        LANES norm[c] += dirT[j * CH + c] * dirT[j * CH + c];
    LANES {
        norm[c] = sqrt(norm[c]);
        log_norm[c] = vlog(norm[c] > bound[c] ? norm[c] : bound[c]) + M[c] - log_n;
        norm[c] = norm[c] > bound[c] ? 1.0 / norm[c] : 0.0;
    }
    double *direction = w + off[DIRECTION];
    for (long c = 0; c < CH; c++)
        for (long j = 0; j < d; j++) direction[c * d + j] = dirT[j * CH + c] * norm[c];
}

/* The arrays of chunk b: its keys, scores, bounds, p and workspace block. */
#define CHUNK_ARGS(b) Kt + (b) * d * T * n * CH, G + (b) * T * n * CH
#define WS(b) (ws + (b) * W)

/* Pass 1 on every chunk (p (chunks, CH, d)); see margins_chunk. */
void attnsvm_margins(const double *restrict Kt, const double *restrict G, const double *restrict p,
                     long chunks, long n, long T, long d, double *restrict ws, const long *restrict off, long W)
{
    for (long b = 0; b < chunks; b++)
        margins_chunk(CHUNK_ARGS(b), p + b * CH * d, n, T, d, WS(b), off);
}

/* The loss derivative on every chunk; see loss_deriv_chunk. */
void attnsvm_loss_deriv(long loss, long chunks, long n, double *restrict ws, const long *restrict off, long W)
{
    for (long b = 0; b < chunks; b++)
        loss_deriv_chunk(loss, n, WS(b), off);
}

/* Pass 2 on every chunk; see direction_chunk. */
void attnsvm_direction(const double *restrict Kt, const double *restrict G, const double *restrict bound,
                       long chunks, long n, long T, long d, double *restrict ws, const long *restrict off, long W)
{
    for (long b = 0; b < chunks; b++)
        direction_chunk(CHUNK_ARGS(b), bound + b * CH, n, T, d, WS(b), off);
}

/* An update's value kept apart from the addition that follows it: no fused multiply-add, so
   p + delta rounds as numpy's and torch's separate product and sum do. */
static inline double opaque(double x)
{
    __asm__ volatile("" : "+m"(x));
    return x;
}

/* `steps` steps of normalized GD, p <- p - lr g / (||g|| + eps), on every instance under a
   library loss (1-3, as loss_deriv_chunk), all steps on one chunk before the next; then one
   more pass at the final p, so the workspace holds its margins (saturation), max-logit tokens
   and gradient. eps = 0 when log_eps = -inf: delta = direction * -lr; else delta = direction *
   (-lr e^-log(1 + e^(log_eps - log_norm))) = -lr g / (||g|| + eps), the factor taken from
   log_norm (exact where ||g|| underflows). flags (chunks, CH, 2): after the last step,
   [stationary (p + delta == p in every coordinate), stalled (stationary with log_norm below
   `underflow`)], as attnsvm.dynamics.run. p (chunks, CH, d) is updated in place. */
void attnsvm_normalized_gd(const double *restrict Kt, const double *restrict G, const double *restrict bound,
                           long loss, double *restrict p, long chunks, long n, long T, long d, long steps,
                           double lr, double log_eps, double underflow, double *restrict ws,
                           const long *restrict off, long W, double *restrict flags)
{
    const int with_eps = log_eps > -INFINITY;
    for (long b = 0; b < chunks; b++) {
        double *pc = p + b * CH * d, *w = WS(b);
        const double *dc = w + off[DIRECTION], *ln = w + off[LOGNORM];
        for (long k = 0;; k++) {
            margins_chunk(CHUNK_ARGS(b), pc, n, T, d, w, off);
            loss_deriv_chunk(loss, n, w, off);
            direction_chunk(CHUNK_ARGS(b), bound + b * CH, n, T, d, w, off);
            if (k == steps)
                break;
            for (long c = 0; c < CH; c++) {
                double factor = -lr;
                if (with_eps) {                           /* numpy's logaddexp(0, x) */
                    const double x = log_eps - ln[c];
                    const double softplus = x > 0 ? x + log1p(exp(-x)) : x <= 0 ? log1p(exp(x)) : x;
                    factor = -lr * exp(-softplus);
                }
                int still = 1;
                for (long j = 0; j < d; j++) {
                    const double delta = opaque(dc[c * d + j] * factor);
                    const double next = pc[c * d + j] + delta;
                    still &= next == pc[c * d + j];
                    pc[c * d + j] = next;
                }
                if (k == steps - 1) {
                    flags[2 * (b * CH + c)] = still;
                    flags[2 * (b * CH + c) + 1] = still && ln[c] < underflow;
                }
            }
        }
    }
}
