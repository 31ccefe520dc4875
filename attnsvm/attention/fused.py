"""The fused CPU kernel of the light gradient (csrc/fused_grad.c): the arithmetic of
`gradients.linear_head_grad(stats=False)` -- the step every update rule that reads only the
direction and norm takes between recorded steps -- as two C passes around the loss derivative
(in the kernel for the library losses, in torch for any other), instead of some 45 torch
kernels, on arrays blocked by chunks of CHUNK instances; and normalized GD's whole loop
(`FusedGrad.normalized_gd`), which takes every step of one chunk while its keys are in cache.
It is what brings a batched normalized-GD step near the cost of its own two mat-vecs
(benchmarks/bench_fig9.py).

The kernel works on numpy arrays and this module imports neither torch nor the eager path
unless asked to: `FusedGrad.of` serves `dynamics.Problem` (torch tensors in, a `Grad` out),
`FusedGrad.of_arrays` and `FusedGrad.normalized_gd` serve `attnsvm reproduce fig9`, which runs
its trials without importing torch at all.

The source is compiled with the system C compiler on first use into a per-user cache
($ATTNSVM_CACHE_DIR, else $XDG_CACHE_HOME/attnsvm, else ~/.cache/attnsvm), keyed by the
source, the flags and the CPU (-march=native), and loaded with ctypes; a build is written under
a temporary name and renamed, so concurrent workers never load half a file. Before first use
the kernel is checked against the eager path on a fixed batch (`_self_check`, which imports
torch); a pass is recorded beside the build (`<build>.checked`, holding a digest of the build,
the eager path's source and torch's version), so later processes skip the check until one of
those changes. Where the kernel cannot be built or fails that check, or ATTNSVM_FUSED=0,
`status()` says why and the eager torch path runs (also on GPU, where torch's kernels are the
fast path). The kernel is single-threaded; sweeps parallelise over processes
(attnsvm.interfaces.sweeps.shards).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import math
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attnsvm.cache import cache_dir

HERE = Path(__file__).parent
SOURCE = HERE / "csrc" / "fused_grad.c"
# value-neutral flags: let the lane loops vectorize
BASE_FLAGS = ("-O3", "-fno-trapping-math", "-fno-math-errno", "-fopenmp-simd", "-fPIC", "-shared")
EAGER_SOURCES = (HERE / "gradients.py", HERE / "losses.py", Path(__file__))   # what a self-check pass vouches against
ROUNDING = 1e-12                                    # gradients.ROUNDING (pinned in tests/test_fused_kernel.py)
UNDERFLOW = math.log(np.finfo(np.float64).tiny)     # dynamics.UNDERFLOW: a gradient below float64's range


def _cpu_features() -> str | None:
    """The CPU's feature line (what -march=native compiles for), None where unknown."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return line
    return None


def _flag_sets() -> list[tuple[str, ...]]:
    """Flags to try, fastest first: vector math (glibc's libmvec, x86-64) and -march=native
    where the CPU is known; then plain -O3."""
    vector = ("-DATTNSVM_LIBMVEC", "-lmvec") if platform.machine() in ("x86_64", "AMD64") else ()
    native = ("-march=native",) if _cpu_features() else ()
    sets = [BASE_FLAGS + native + vector, BASE_FLAGS + vector, BASE_FLAGS]
    return list(dict.fromkeys(sets))


def _build(cc: list[str], flags: tuple[str, ...]) -> tuple[ctypes.CDLL, Path]:
    """The kernel for these flags, loaded, and its file: from the cache, else compiled into it
    atomically (a cached file that does not load, e.g. cut short by a full disk, is replaced)."""
    key = hashlib.sha256(b"\0".join([SOURCE.read_bytes(), " ".join(cc).encode(), " ".join(flags).encode(),
                                      platform.machine().encode(), (_cpu_features() or "").encode()]))
    out = cache_dir() / f"fused_grad-{key.hexdigest()[:16]}.so"
    if out.exists():
        try:
            return _load(out), out
        except OSError:
            out.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".fused_grad-", suffix=".so")
    os.close(fd)
    try:
        proc = subprocess.run([*cc, *[f for f in flags if not f.startswith("-l")], str(SOURCE), "-o", tmp,
                               *[f for f in flags if f.startswith("-l")], "-lm"],
                              capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}, no output"])[-1]
            raise RuntimeError(f"{Path(cc[0]).name} failed: {last}")
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return _load(out), out


def _load(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    V, L = ctypes.c_void_p, ctypes.c_long
    D = ctypes.c_double
    lib.attnsvm_margins.argtypes = [V] * 3 + [L] * 4 + [V, V, L]
    lib.attnsvm_direction.argtypes = [V] * 3 + [L] * 4 + [V, V, L]
    lib.attnsvm_loss_deriv.argtypes = [L, L, L, V, V, L]
    lib.attnsvm_normalized_gd.argtypes = [V, V, V, L, V, L, L, L, L, L, D, D, D, V, V, L, V]
    for f in (lib.attnsvm_margins, lib.attnsvm_direction, lib.attnsvm_loss_deriv, lib.attnsvm_normalized_gd):
        f.restype = None
    return lib


def _check_digest(build: Path) -> str:
    """What a self-check pass of `build` vouches for: the build itself, the eager path it was
    compared with, and the torch that ran that path (its version file, read without importing it)."""
    h = hashlib.sha256(build.read_bytes())
    for f in EAGER_SOURCES:
        h.update(f.read_bytes())
    spec = importlib.util.find_spec("torch")
    version = Path(spec.origin).parent / "version.py" if spec and spec.origin else None
    h.update(version.read_bytes() if version and version.exists() else b"no torch")
    return h.hexdigest()


def _checked(build: Path, digest: str) -> bool:
    try:
        return build.with_suffix(".checked").read_text() == digest
    except OSError:
        return False


def _mark_checked(build: Path, digest: str) -> None:
    """Record a self-check pass atomically; a cache we cannot write to only costs a check next time."""
    try:
        fd, tmp = tempfile.mkstemp(dir=build.parent, prefix=".fused_grad-", suffix=".checked")
        with os.fdopen(fd, "w") as fh:
            fh.write(digest)
        os.replace(tmp, build.with_suffix(".checked"))
    except OSError:
        pass


@functools.cache
def _kernel() -> tuple[ctypes.CDLL | None, str]:
    """(the loaded, self-checked kernel or None, what `status()` says)."""
    if os.environ.get("ATTNSVM_FUSED", "1") == "0":
        return None, "off (ATTNSVM_FUSED=0)"
    cc = shlex.split(os.environ.get("CC") or "") or [shutil.which("cc") or shutil.which("gcc") or "cc"]
    if not shutil.which(cc[0]):
        return None, f"off: no C compiler {cc[0]!r} found (set CC)"
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return None, f"off: cannot create the cache directory {cache_dir()} ({e.strerror}; set ATTNSVM_CACHE_DIR)"
    errors: dict[str, list[str]] = {}
    for flags in _flag_sets():
        try:
            lib, build = _build(cc, flags)
            digest = _check_digest(build)
            problem = None if _checked(build, digest) else _self_check(lib)
            if problem is None:
                _mark_checked(build, digest)
        except Exception as e:                  # any failure to build, load or check: the torch path runs
            problem = f"{e.__class__.__name__}: {e}" if not isinstance(e, RuntimeError) else str(e)
        if problem is None:
            return lib, f"on ({' '.join(cc)} {' '.join(flags[len(BASE_FLAGS):]) or 'baseline'})"
        errors.setdefault(problem, []).append(" ".join(flags))
    return None, "off: " + "; ".join(f"{problem} (flags {' | '.join(f)})" for problem, f in errors.items())


def library() -> ctypes.CDLL | None:
    """The loaded, self-checked kernel, or None (`status()` gives the reason)."""
    return _kernel()[0]


def status() -> str:
    """'on (...)' with the compiler and flags in use, or 'off...' with the reason."""
    return _kernel()[1]


def reset() -> None:
    """Forget the loaded kernel: the next use reads the environment and the cache again."""
    _kernel.cache_clear()


LOSS_CODES = {"logistic": 1, "exponential": 2, "correlation": 3}   # derivatives in the kernel
ARRAYS = ("pT", "u", "ref", "z2", "S", "rest", "t1", "excess", "margin", "g_ref", "lp", "work", "dirT",
          "direction", "log_norm")
CHUNK = 8                                           # the kernel's CH: instances per chunk


def _rows(n: int, T: int, d: int) -> tuple[int, ...]:
    """The rows (of CHUNK doubles) of each of ARRAYS in a chunk's workspace (see the C source)."""
    return (d, T * n, n, n, n, n, n, n, n, n, n, 2 * n, d, d, 1)


def rounding_bound(K: np.ndarray) -> np.ndarray:
    """`gradients.rounding_bound` on numpy keys (B,n,T,d): ROUNDING * 2n max_{i,t} ||k_it|| (B,)."""
    return np.linalg.norm(K, axis=-1).reshape(K.shape[0], -1).max(-1) * (2 * K.shape[1] * ROUNDING)


@dataclass(frozen=True)
class Run:
    """The end of a batched run (`FusedGrad.normalized_gd`): final p (B,d), and at it the
    max-logit tokens (B,n), the saturation log(1 - s_{i,alpha_i}) (B,n) and the statuses of
    `dynamics.Trajectory.status` ('ok', 'stalled', 'stationary', 'non-finite')."""

    p: np.ndarray
    selected: np.ndarray
    log_unsat: np.ndarray
    status: list[str]


@dataclass(frozen=True)
class FusedGrad:
    """The light gradient of a problem (keys K (B,n,T,d), scores gamma (B,n,T)) on the fused
    kernel. `arrays(p)` gives (direction (B,d), log_norm (B,), selected (B,n)) as numpy arrays;
    calling it with a torch p (B,d) gives the `Grad` (without statistics) of
    `linear_head_grad(K, gamma, p, loss, stats=False)`. The kernel's arrays are blocked by
    chunks of CHUNK instances (the C source), the batch padded with zero instances to a whole
    number of chunks (their results are dropped)."""

    lib: ctypes.CDLL
    shape: tuple              # (B, n, T, d)
    Kt: np.ndarray            # (chunks, T, n, d, CHUNK)
    G: np.ndarray             # (chunks, T, n, CHUNK)
    bound: np.ndarray         # (chunks * CHUNK,)
    loss: Any                 # a losses.Loss, or a library loss's name
    loss_code: int            # LOSS_CODES, 0: the derivative is taken in torch
    offsets: np.ndarray       # offset in doubles of each of ARRAYS in a chunk's workspace (C longs)
    size: int                 # a chunk's workspace in doubles

    @classmethod
    def of(cls, K, gamma, loss) -> FusedGrad | None:
        """The fused gradient of this torch problem, or None where the eager path must run: not
        a float64 CPU problem, T < 2, or no kernel (`status()`)."""
        import torch

        if K.device.type != "cpu" or K.dtype != torch.float64 or K.dim() != 4 or K.shape[2] < 2:
            return None
        lib = library()
        if lib is None:
            return None
        return cls.build(lib, K, gamma, loss)

    @classmethod
    def of_arrays(cls, K: np.ndarray, gamma: np.ndarray, loss: str) -> FusedGrad | None:
        """The fused gradient of numpy keys (B,n,T,d) and scores (B,n,T) under a library loss
        (by name), or None where the kernel does not run (`status()`); no torch involved."""
        if loss not in LOSS_CODES:
            raise ValueError(f"loss {loss!r}: the kernel takes {sorted(LOSS_CODES)} by name")
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 4 or K.shape[2] < 2:
            return None
        lib = library()
        if lib is None:
            return None
        return cls.build(lib, K, np.asarray(gamma, dtype=np.float64), loss)

    @classmethod
    def build(cls, lib: ctypes.CDLL, K, gamma, loss) -> FusedGrad:
        """K, gamma numpy arrays (loss: a library loss name) or torch tensors (loss: a `Loss`)."""
        B, n, T, d = K.shape
        chunks = -(-B // CHUNK)
        rows = _rows(n, T, d)
        offsets = np.cumsum((0,) + rows[:-1], dtype=np.int64) * CHUNK
        if isinstance(K, np.ndarray):
            code, bound = LOSS_CODES[loss], rounding_bound(K)
        else:
            from attnsvm.attention import losses
            from attnsvm.attention.gradients import rounding_bound as torch_bound

            code = LOSS_CODES.get(loss.name, 0) if loss is getattr(losses, loss.name, None) else 0
            bound = torch_bound(K).numpy()
            K, gamma = K.detach().numpy(), gamma.detach().numpy()
        Kt, G, bounds = (cls._blocked(K, chunks, (2, 1, 3)), cls._blocked(gamma, chunks, (2, 1)),
                         np.zeros(chunks * CHUNK))
        bounds[:B] = bound
        return cls(lib, (B, n, T, d), Kt, G, bounds, loss, code, np.ascontiguousarray(offsets, dtype=ctypes.c_long),
                   sum(rows) * CHUNK)

    @staticmethod
    def _blocked(x: np.ndarray, chunks: int, axes: tuple[int, ...]) -> np.ndarray:
        """x (B, ...) zero-padded to whole chunks, as (chunks, x's axes `axes`, CHUNK): keys
        (B,n,T,d) with axes (2, 1, 3) become (chunks, T, n, d, CHUNK), scores (B,n,T) with
        (2, 1) (chunks, T, n, CHUNK)."""
        out = np.zeros((chunks * CHUNK, *x.shape[1:]))
        out[:len(x)] = x
        return np.ascontiguousarray(out.reshape(chunks, CHUNK, *x.shape[1:]).transpose(0, *(a + 1 for a in axes), 1))

    @property
    def chunks(self) -> int:
        return self.Kt.shape[0]

    def workspace(self) -> np.ndarray:
        """A buffer for `arrays` (chunks, W): each chunk's scratch arrays, one block per chunk."""
        return np.empty((self.chunks, self.size))

    def view(self, ws: np.ndarray, name: str) -> np.ndarray:
        """The array `name` of every chunk, (chunks, rows, CHUNK)."""
        k = ARRAYS.index(name)
        start = int(self.offsets[k])
        rows = _rows(*self.shape[1:])[k]
        return ws[:, start:start + rows * CHUNK].reshape(self.chunks, rows, CHUNK)

    def _per_instance(self, ws: np.ndarray, name: str) -> np.ndarray:
        """A per-input array (n rows) of the workspace as (B, n)."""
        return self.view(ws, name).transpose(0, 2, 1).reshape(-1, self.shape[1])[:self.shape[0]]

    def _padded(self, p) -> np.ndarray:
        """p ((d,) or (B,d)) as a fresh (chunks * CHUNK, d) float64 array, zero on the padding."""
        B, d = self.shape[0], self.shape[-1]
        out = np.zeros((self.chunks * CHUNK, d))
        out[:B] = np.asarray(p, dtype=np.float64)
        return out

    def _results(self, ws: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(direction (B,d), log_norm (B,), selected (B,n) int64) of the last pass on ws."""
        B, d = self.shape[0], self.shape[-1]
        direction = self.view(ws, "direction").reshape(-1, d)[:B]
        log_norm = self.view(ws, "log_norm").reshape(-1)[:B]
        return direction, log_norm, self._per_instance(ws, "ref").astype(np.int64)

    def arrays(self, p: np.ndarray, ws: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(direction (B,d), log_norm (B,), selected (B,n) int64) at p (B,d), the pass's scratch
        left in `ws` (a fresh workspace unless given) for `log_unsat`."""
        B, n, T, d = self.shape
        ws = self.workspace() if ws is None else ws
        args = (ws.ctypes.data, self.offsets.ctypes.data, self.size)
        Kt, G, lib = self.Kt.ctypes.data, self.G.ctypes.data, self.lib
        # held while the kernel reads it (a bare temporary's memory is freed at once)
        padded = self._padded(p)
        lib.attnsvm_margins(Kt, G, padded.ctypes.data, self.chunks, n, T, d, *args)
        if self.loss_code:
            lib.attnsvm_loss_deriv(self.loss_code, self.chunks, n, *args)
        else:
            import torch

            lp = torch.from_numpy(self.view(ws, "lp"))
            lp.copy_(self.loss.deriv(torch.from_numpy(self.view(ws, "margin").copy())))
        lib.attnsvm_direction(Kt, G, self.bound.ctypes.data, self.chunks, n, T, d, *args)
        return self._results(ws)

    def log_unsat(self, ws: np.ndarray) -> np.ndarray:
        """log(1 - s_{i,ref}) (B,n) of the last `arrays` or `normalized_gd` pass on `ws`:
        z2 - log S + log rest, the saturation `linear_head_grad` reports (log_unsat), from the
        same pass."""
        z2, S, rest = (self._per_instance(ws, k) for k in ("z2", "S", "rest"))
        return z2 - np.log(S) + np.log(rest)

    def __call__(self, p) -> Any:
        """The `Grad` (torch, without statistics) at a torch p (B,d)."""
        import torch

        from attnsvm.attention.gradients import Grad

        direction, log_norm, selected = self.arrays(p.detach().to(torch.float64).contiguous().numpy())
        return Grad(None, torch.from_numpy(direction.copy()), torch.from_numpy(log_norm.copy()),
                    torch.from_numpy(selected), None)

    def normalized_gd(self, p0: np.ndarray, steps: int, lr: float, eps: float = 0.0) -> Run:
        """`steps` steps of p <- p - lr g / (||g|| + eps) from p0 ((d,) or (B,d)), g the gradient
        of each instance's risk, all on the kernel. eps = 0 is `dynamics.NormalizedGD(lr)` (same
        update, same status rule as `dynamics.run`); the authors' code uses eps = float64's
        machine epsilon, which shrinks the step once ||g|| nears eps (the factor
        ||g|| / (||g|| + eps) is taken from log_norm, so it is exact where ||g|| underflows)."""
        if not self.loss_code:
            raise ValueError(f"normalized_gd runs the library losses {sorted(LOSS_CODES)}, not {self.loss!r}")
        B, n, T, d = self.shape
        p = self._padded(np.broadcast_to(np.asarray(p0, dtype=np.float64), (B, d)))
        ws, flags = self.workspace(), np.zeros((self.chunks * CHUNK, 2))
        self.lib.attnsvm_normalized_gd(self.Kt.ctypes.data, self.G.ctypes.data, self.bound.ctypes.data, self.loss_code,
                                       p.ctypes.data, self.chunks, n, T, d, steps, lr,
                                       math.log(eps) if eps > 0 else -math.inf, UNDERFLOW,
                                       ws.ctypes.data, self.offsets.ctypes.data, self.size, flags.ctypes.data)
        p, flags = p[:B], flags[:B].astype(bool)
        finite = np.isfinite(p).all(-1)
        status = ["non-finite" if not f else "stalled" if s else "stationary" if st else "ok"
                  for f, st, s in zip(finite.tolist(), flags[:, 0].tolist(), flags[:, 1].tolist())]
        return Run(p, self._results(ws)[2], self.log_unsat(ws), status)


CHECK_TOL = 1e-9


def with_logits(K, p, logits):
    """K (B,n,T,d) moved along p (B,d) so that every input's logits <k_it, p> are `logits` (T,),
    the keys' components orthogonal to p kept: the configurations `_self_check` and the tests
    need, e.g. tied top two and the rest far below (torch tensors)."""
    import torch

    q = p / p.norm(dim=-1, keepdim=True)
    K = K - torch.einsum("bntd,bd->bnt", K, q)[..., None] * q[:, None, None, :]
    return K + torch.as_tensor(logits, dtype=K.dtype)[:, None] * (q / p.norm(dim=-1, keepdim=True))[:, None, None, :]


def _self_check(lib: ctypes.CDLL) -> str | None:
    """None if the kernel agrees with the eager path on a fixed batch, else what differs. The
    batch has logit gaps from 0.1 to ~10^3 (past float64's exp range), equal scores on the two
    largest logits (where f - gamma_ref is far below gamma_ref's rounding and must be carried
    apart) and inputs without gradient terms beside deeply saturated ones; it is run with a
    loss whose derivative the kernel takes and one it leaves to torch, and the saturation
    log(1 - s_ref) of the same pass is compared with the eager statistics."""
    import torch

    from attnsvm.attention import losses
    from attnsvm.attention.gradients import linear_head_grad

    g = torch.Generator().manual_seed(0)
    B, n, T, d = 16, 3, 5, 4
    K = torch.randn(B, n, T, d, dtype=torch.float64, generator=g)
    gamma = torch.randn(B, n, T, dtype=torch.float64, generator=g)
    p = torch.randn(B, d, dtype=torch.float64, generator=g) * torch.logspace(-1, 2.5, B, dtype=torch.float64)[:, None]
    top2 = torch.einsum("bntd,bd->bnt", K, p).topk(2, dim=-1).indices
    gamma[::2].scatter_(-1, top2[::2, :, 1:], gamma[::2].gather(-1, top2[::2, :, :1]))
    K[:3] = with_logits(K[:3], p[:3], [0.0, -3.0, -35.0, -40.0, -45.0])          # f - gamma_ref ~ e^-38
    gamma[:3, :, 1] = gamma[:3, :, 0]
    gamma[-3:, 0], K[-3:, 0] = 0.5, 0.0
    for loss in (losses.logistic, losses.custom(losses.logistic.value, "logistic-in-torch")):
        want = linear_head_grad(K, gamma, p, loss, stats=True)
        kernel = FusedGrad.build(lib, K, gamma, loss)
        ws = kernel.workspace()
        direction, log_norm, selected = kernel.arrays(p.numpy(), ws)
        if not np.array_equal(selected, want.selected.numpy()):
            return "self-check: selected tokens differ from the eager path"
        got = {"direction": direction, "log_norm": log_norm, "log_unsat": kernel.log_unsat(ws)}
        for name, value in got.items():
            ref = getattr(want, name).numpy()
            with np.errstate(invalid="ignore"):
                err = np.abs(np.where(np.isneginf(value) & np.isneginf(ref), 0.0, value - ref))
            scale = np.maximum(np.abs(ref), 1.0) if name != "direction" else 1.0
            if not (err <= CHECK_TOL * np.nan_to_num(scale, posinf=1.0)).all():
                return f"self-check: {name} differs from the eager path by {np.nanmax(err):.1e}"
    return None
