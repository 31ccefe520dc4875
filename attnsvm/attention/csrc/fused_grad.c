/* Fused cancellation-free gradient of the linear-head risk: the arithmetic of
   attnsvm.gradients.linear_head_grad(stats=False) in two passes over the keys, around the loss
   derivative. Built, loaded and checked against the eager path by attnsvm.fused.

   Instance-minor layout, so that every loop runs over the B instances of the batch (vectorized,
   no branches): keys Kt (d, T, n, B), scores G (T, n, B), pT (d, B); (n, B) arrays per input;
   float64, C-contiguous; IEEE semantics (no fast-math). On x86-64 glibc the exp and log loops
   use glibc's vector math (libmvec, see vexp). Exponents below FLUSH are flushed to 0, which
   keeps the vector exp on its fast path and the arithmetic out of subnormals; the eager path
   flushes below -745 (float64 underflow), so the two differ only by terms under e^-700 of the
   largest (of the runner-up token's within an input, of the heaviest input's across inputs). */

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

/* exp(x), flushed to 0 below FLUSH; exp itself never sees an argument below FLUSH. */
static inline double flushed_exp(double x)
{
    const double keep = x >= FLUSH ? 1.0 : 0.0;          /* (a multiply, not a branch: vectorizes) */
    return vexp(x > FLUSH ? x : FLUSH) * keep;
}

/* Pass 1. Per input i of every instance b: logits a_t = <k_t, p>, the max-logit token ref
   (first on ties), the runner-up logit ru; u_t = exp(a_t - ru) (0 at ref) into u (T, n, B);
   z2 = ru - a_ref <= 0; rest = sum_t u_t (in [1, T-1]); S = 1 + e^z2 rest = 1 / s_ref (so the
   saturation log(1 - s_ref) = z2 - log S + log rest, attnsvm.fused); t1 = sum_t u_t (gamma_t - gamma_ref) / S;
   excess = f - gamma_ref = e^z2 t1 and the margin f = gamma_ref + excess = <s, gamma> without
   cancellation (pass 2 needs excess itself: f - gamma_ref would round it away); g_ref = gamma_ref.
   p is (B, d), transposed into pT (d, B); ref holds token indices as doubles (compared with
   doubles in vector loops); `top` is B doubles of scratch. */
void attnsvm_margins(const double *restrict Kt, const double *restrict G, const double *restrict p,
                     long B, long n, long T, long d, double *restrict pT,
                     double *restrict u, double *restrict ref, double *restrict z2, double *restrict S,
                     double *restrict rest, double *restrict t1, double *restrict excess, double *restrict margin,
                     double *restrict g_ref, double *restrict top)
{
    for (long b = 0; b < B; b++)
        for (long j = 0; j < d; j++) pT[j * B + b] = p[b * d + j];
    for (long i = 0; i < n; i++) {
        double *r = ref + i * B, *ru = z2 + i * B, *gr = g_ref + i * B;
        for (long t = 0; t < T; t++) {                    /* logits, with the top two on the fly */
            double *a = u + (t * n + i) * B;
            const double *K = Kt + (t * n + i) * B, *g = G + (t * n + i) * B;
            for (long b = 0; b < B; b++) a[b] = K[b] * pT[b];
            for (long j = 1; j < d; j++) {
                const double *Kj = K + j * T * n * B, *pj = pT + j * B;
                for (long b = 0; b < B; b++) a[b] += Kj[b] * pj[b];
            }
            if (t == 0) {
                for (long b = 0; b < B; b++) { top[b] = a[b]; ru[b] = -INFINITY; r[b] = 0.0; gr[b] = g[b]; }
                continue;
            }
            const double tf = (double)t;
            for (long b = 0; b < B; b++) {                /* selects on loaded values: vectorizes */
                const double ab = a[b], tb = top[b], rb = ru[b];
                const int hit = ab > tb;                  /* strict: the first max-logit token on ties */
                ru[b] = hit ? tb : (ab > rb ? ab : rb);
                top[b] = hit ? ab : tb;
                r[b] = hit ? tf : r[b];
                gr[b] = hit ? g[b] : gr[b];
            }
        }
        double *s = S + i * B, *rs = rest + i * B, *tt = t1 + i * B, *ex = excess + i * B, *f = margin + i * B;
        for (long b = 0; b < B; b++) { rs[b] = 0.0; tt[b] = 0.0; }
        for (long t = 0; t < T; t++) {
            double *a = u + (t * n + i) * B;
            const double *g = G + (t * n + i) * B;
            const double tf = (double)t;
            for (long b = 0; b < B; b++)                  /* (three loops: each one vectorizes) */
                a[b] = r[b] == tf ? 2 * FLUSH : a[b] - ru[b];
            for (long b = 0; b < B; b++)
                a[b] = flushed_exp(a[b]);
            for (long b = 0; b < B; b++) {
                rs[b] += a[b];                            /* rest = sum_t u_t */
                tt[b] += (g[b] - gr[b]) * a[b];           /* sum_t u_t (gamma_t - gamma_ref) */
            }
        }
        for (long b = 0; b < B; b++) {
            ru[b] -= top[b];                              /* z2 = ru - a_ref, in place */
            const double e2 = flushed_exp(ru[b]);
            s[b] = 1.0 + e2 * rs[b];
            tt[b] /= s[b];
            ex[b] = e2 * tt[b];
            f[b] = gr[b] + ex[b];
        }
    }
}

/* The derivative lp = loss'(margin) of a library loss (attnsvm.losses): 1 logistic
   -1 / (1 + e^f), 2 exponential -e^-f, 3 correlation -1. Other losses are taken in torch. */
void attnsvm_loss_deriv(long loss, const double *restrict margin, double *restrict lp, long count)
{
    for (long k = 0; k < count; k++)
        lp[k] = loss == 1 ? -1.0 / (1.0 + vexp(margin[k])) : loss == 2 ? -vexp(-margin[k]) : -1.0;
}

/* Pass 2, given lp = loss'(margin): uc_t = u_t (gamma_t - gamma_ref) - u_t excess
   = u_t (gamma_t - f), overwriting u; log_F_i = log(|lp_i| / S_i) + z2_i = log |lp_i| s_{i,ru};
   M_b = max_i log(sum_t |uc_t|) + log_F_i (-inf when every term is 0); weights w_t = fac_i uc_t,
   w_ref = -fac_i t1_i, fac_i = sign(lp_i) e^min(log_F_i - M_b, 700) (0 for an input whose terms
   are all 0; the cap is gradients.MAX_EXP); scaled = sum_it w_it k_it (into dirT, (d, B)); direction (B, d) = scaled / ||scaled|| where
   ||scaled|| > bound_b (else 0); log_norm = log max(||scaled||, bound_b) + M_b - log n; selected
   (B, n) = ref as integers. `work` holds 2 n B + B doubles. */
void attnsvm_direction(const double *restrict Kt, const double *restrict G, double *restrict u,
                       const double *restrict ref, const double *restrict z2, const double *restrict S,
                       const double *restrict t1, const double *restrict excess, const double *restrict g_ref,
                       const double *restrict lp, const double *restrict bound, long B, long n, long T, long d,
                       double *restrict work, double *restrict dirT, double *restrict direction,
                       double *restrict log_norm, int64_t *restrict selected)
{
    double *mass = work, *logF = work + n * B, *M = work + 2 * n * B;
    for (long b = 0; b < B; b++) M[b] = -INFINITY;
    for (long i = 0; i < n; i++) {
        double *m = mass + i * B, *lf = logF + i * B;
        const double *ex = excess + i * B, *gr = g_ref + i * B;
        for (long b = 0; b < B; b++) m[b] = 0.0;
        for (long t = 0; t < T; t++) {
            double *a = u + (t * n + i) * B;
            const double *g = G + (t * n + i) * B;
            for (long b = 0; b < B; b++) {
                const double x = (g[b] - gr[b]) * a[b] - a[b] * ex[b];
                a[b] = x;
                m[b] += fabs(x);
            }
        }
        for (long b = 0; b < B; b++) {
            lf[b] = vlog(fabs(lp[i * B + b]) / S[i * B + b]) + z2[i * B + b];
            const double lm = vlog(m[b]) + lf[b];
            M[b] = lm > M[b] ? lm : M[b];
        }
    }
    for (long j = 0; j < d; j++)
        for (long b = 0; b < B; b++) dirT[j * B + b] = 0.0;
    for (long i = 0; i < n; i++) {
        double *fac = logF + i * B;
        const double *m = mass + i * B, *l = lp + i * B, *r = ref + i * B, *tt = t1 + i * B;
        for (long b = 0; b < B; b++) {
            const double x = fac[b] - (M[b] == -INFINITY ? 0.0 : M[b]);
            fac[b] = m[b] > 0.0 ? copysign(flushed_exp(x > -FLUSH ? -FLUSH : x), l[b]) : 0.0;
        }
        for (long t = 0; t < T; t++) {
            double *a = u + (t * n + i) * B;
            for (long b = 0; b < B; b++) a[b] = r[b] == (double)t ? -fac[b] * tt[b] : fac[b] * a[b];
            for (long j = 0; j < d; j++) {
                const double *K = Kt + ((j * T + t) * n + i) * B;
                double *o = dirT + j * B;
                for (long b = 0; b < B; b++) o[b] += a[b] * K[b];
            }
        }
    }
    double *norm = mass;
    for (long b = 0; b < B; b++) norm[b] = 0.0;
    for (long j = 0; j < d; j++)
        for (long b = 0; b < B; b++) norm[b] += dirT[j * B + b] * dirT[j * B + b];
    for (long b = 0; b < B; b++) {
        norm[b] = sqrt(norm[b]);
        log_norm[b] = log(norm[b] > bound[b] ? norm[b] : bound[b]) + M[b] - log((double)n);
        norm[b] = norm[b] > bound[b] ? 1.0 / norm[b] : 0.0;
    }
    for (long b = 0; b < B; b++)
        for (long j = 0; j < d; j++) direction[b * d + j] = dirT[j * B + b] * norm[b];
    for (long b = 0; b < B; b++)
        for (long i = 0; i < n; i++) selected[b * n + i] = (int64_t)ref[i * B + b];
}
