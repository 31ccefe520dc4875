"""The fused CPU kernel of the light gradient (csrc/fused_grad.c): the arithmetic of
`gradients.linear_head_grad(stats=False)` -- the step every update rule that reads only the
direction and norm takes between recorded steps -- as two C passes over instance-minor arrays
around the loss derivative (in the kernel for the library losses, in torch for any other),
instead of some 45 torch kernels. It is what brings a batched normalized-GD step near the cost of its own two mat-vecs
(benchmarks/bench_fig9.py).

The source is compiled with the system C compiler on first use into a per-user cache
($ATTNSVM_CACHE_DIR, else $XDG_CACHE_HOME/attnsvm, else ~/.cache/attnsvm), keyed by the
source, the flags and the CPU (-march=native), and loaded with ctypes; a build is written under
a temporary name and renamed, so concurrent workers never load half a file. Before first use
the kernel is checked against the eager path on a random batch (`_self_check`). Where it cannot be built or fails that check, or ATTNSVM_FUSED=0, `status()` says why
and the eager torch path runs (also on GPU, where torch's kernels are the fast path).
The kernel is single-threaded; sweeps parallelise over processes (attnsvm.interfaces.sweeps.shards).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from attnsvm.attention import losses
from attnsvm.attention.gradients import Grad, linear_head_grad, rounding_bound
from attnsvm.attention.losses import Loss

SOURCE = Path(__file__).parent / "csrc" / "fused_grad.c"
BASE_FLAGS = ("-O3", "-fPIC", "-shared")


def cache_dir() -> Path:
    if d := os.environ.get("ATTNSVM_CACHE_DIR"):
        return Path(d)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attnsvm"


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


def _build(cc: list[str], flags: tuple[str, ...]) -> ctypes.CDLL:
    """The kernel for these flags, loaded: from the cache, else compiled into it atomically (a
    cached file that does not load, e.g. cut short by a full disk, is replaced)."""
    key = hashlib.sha256(b"\0".join([SOURCE.read_bytes(), " ".join(cc).encode(), " ".join(flags).encode(),
                                      platform.machine().encode(), (_cpu_features() or "").encode()]))
    out = cache_dir() / f"fused_grad-{key.hexdigest()[:16]}.so"
    if out.exists():
        try:
            return _load(out)
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
    return _load(out)


def _load(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    V, L = ctypes.c_void_p, ctypes.c_long
    lib.attnsvm_margins.argtypes = [V] * 3 + [L] * 4 + [V] * 10
    lib.attnsvm_margins.restype = None
    lib.attnsvm_direction.argtypes = [V] * 11 + [L] * 4 + [V] * 5
    lib.attnsvm_direction.restype = None
    lib.attnsvm_loss_deriv.argtypes = [L, V, V, L]
    lib.attnsvm_loss_deriv.restype = None
    return lib


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
            lib = _build(cc, flags)
            problem = _self_check(lib)
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
ARRAYS = ("pT", "u", "ref", "z2", "S", "t1", "excess", "margin", "g_ref", "top", "lp", "work", "dirT",
          "direction", "log_norm")


def _sizes(B: int, n: int, T: int, d: int) -> tuple[int, ...]:
    """The size in doubles of each of ARRAYS in a call's workspace (see the C source)."""
    nB = n * B
    return (d * B, T * nB, nB, nB, nB, nB, nB, nB, nB, B, nB, 2 * nB + B, d * B, B * d, B)


@dataclass(frozen=True)
class FusedGrad:
    """The light gradient of a problem (keys K (B,n,T,d), scores gamma (B,n,T)) on the fused
    kernel: called with p (B,d), the `Grad` (without statistics) of
    `linear_head_grad(K, gamma, p, loss, stats=False)`. Each call works in one fresh buffer."""

    lib: ctypes.CDLL
    Kt: torch.Tensor          # (d, T, n, B)
    G: torch.Tensor           # (T, n, B)
    bound: torch.Tensor       # (B,)
    loss: Loss
    loss_code: int            # LOSS_CODES, 0: the derivative is taken in torch
    offsets: dict             # byte offset of each of ARRAYS in the workspace
    size: int                 # the workspace's size in doubles

    @classmethod
    def of(cls, K: torch.Tensor, gamma: torch.Tensor, loss: Loss) -> FusedGrad | None:
        """The fused gradient of this problem, or None where the eager path must run: not a
        float64 CPU problem, T < 2, or no kernel (`status()`)."""
        if K.device.type != "cpu" or K.dtype != torch.float64 or K.dim() != 4 or K.shape[2] < 2:
            return None
        lib = library()
        if lib is None:
            return None
        return cls.build(lib, K, gamma, loss)

    @classmethod
    def build(cls, lib: ctypes.CDLL, K: torch.Tensor, gamma: torch.Tensor, loss: Loss) -> FusedGrad:
        B, n, T, d = K.shape
        sizes = _sizes(B, n, T, d)
        starts = [sum(sizes[:k]) for k in range(len(sizes) + 1)]
        code = LOSS_CODES.get(loss.name, 0) if loss is getattr(losses, loss.name, None) else 0
        return cls(lib, K.permute(3, 2, 1, 0).contiguous(), gamma.permute(2, 1, 0).contiguous(),
                   rounding_bound(K).contiguous(), loss, code,
                   {name: 8 * start for name, start in zip(ARRAYS, starts)}, starts[-1])

    def __call__(self, p: torch.Tensor) -> Grad:
        d, T, n, B = self.Kt.shape
        p = p.to(torch.float64).contiguous()
        ws = torch.empty(self.size, dtype=torch.float64)
        selected = torch.empty(B, n, dtype=torch.long)
        base, o = ws.data_ptr(), self.offsets
        at = {name: base + off for name, off in o.items()}
        Kt, G = self.Kt.data_ptr(), self.G.data_ptr()
        self.lib.attnsvm_margins(Kt, G, p.data_ptr(), B, n, T, d, at["pT"], at["u"], at["ref"], at["z2"], at["S"],
                                 at["t1"], at["excess"], at["margin"], at["g_ref"], at["top"])
        if self.loss_code:
            self.lib.attnsvm_loss_deriv(self.loss_code, at["margin"], at["lp"], n * B)
        else:
            lp = ws[o["lp"] // 8:o["lp"] // 8 + n * B]
            lp.copy_(self.loss.deriv(ws[o["margin"] // 8:o["margin"] // 8 + n * B]))
        self.lib.attnsvm_direction(Kt, G, at["u"], at["ref"], at["z2"], at["S"], at["t1"], at["excess"], at["g_ref"],
                                   at["lp"], self.bound.data_ptr(), B, n, T, d, at["work"], at["dirT"],
                                   at["direction"], at["log_norm"], selected.data_ptr())
        k, m = o["direction"] // 8, o["log_norm"] // 8
        return Grad(None, ws[k:k + B * d].view(B, d), ws[m:m + B], selected, None)


CHECK_TOL = 1e-9


def with_logits(K: torch.Tensor, p: torch.Tensor, logits) -> torch.Tensor:
    """K (B,n,T,d) moved along p (B,d) so that every input's logits <k_it, p> are `logits` (T,),
    the keys' components orthogonal to p kept: the configurations `_self_check` and the tests
    need, e.g. tied top two and the rest far below."""
    q = p / p.norm(dim=-1, keepdim=True)
    K = K - torch.einsum("bntd,bd->bnt", K, q)[..., None] * q[:, None, None, :]
    return K + torch.as_tensor(logits, dtype=K.dtype)[:, None] * (q / p.norm(dim=-1, keepdim=True))[:, None, None, :]


def _self_check(lib: ctypes.CDLL) -> str | None:
    """None if the kernel agrees with the eager path on a random batch, else what differs. The
    batch has logit gaps from 0.1 to ~10^3 (past float64's exp range), equal scores on the two
    largest logits (where f - gamma_ref is far below gamma_ref's rounding and must be carried
    apart) and inputs without gradient terms beside deeply saturated ones; it is run with a
    loss whose derivative the kernel takes and one it leaves to torch."""
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
        want = linear_head_grad(K, gamma, p, loss, stats=False)
        got = FusedGrad.build(lib, K, gamma, loss)(p)
        if not torch.equal(got.selected, want.selected):
            return "self-check: selected tokens differ from the eager path"
        for name in ("direction", "log_norm"):
            err = (getattr(got, name) - getattr(want, name)).abs().max().item()
            if not err <= CHECK_TOL:
                return f"self-check: {name} differs from the eager path by {err:.1e}"
    return None
