"""Other hosts one machine can emulate, and how far a golden value may move on a host that differs from its
recording's: its host noise.

A golden value is a statement about the recording host as much as about the library: the same pins give a QR
factor whose small elements differ by 104 ulp under another OpenBLAS kernel, and Adam's updates that differ by
tens of ulps without fused multiply-add (harness.model.host names the dimensions, with what was measured).
So `golden` records the same contracts again on each host this machine can emulate (EMULATIONS: a BLAS kernel
chosen with OPENBLAS_CORETYPE (four kernels here: SkylakeX, Haswell, Sandybridge, Katmai), XLA's vector instructions capped with `--xla_cpu_max_isa`) and keeps with each
value the largest move of each dimension: its host noise, absolute, per dimension.

On a host that differs from the recording's in some dimensions, a golden value outside its ulps but within
FACTOR times its noise in those dimensions is host drift, not a broken baseline: the check passes there, says
so, and the verdict judges the candidate against this machine's baseline values instead of the recording
(harness.verdict.host_drift), so no change of the candidate hides inside the allowance. Beyond it, the
baseline is broken (CANNOT JUDGE). On the recording's own host no allowance applies.

Not emulated: native 16-bit arithmetic (no flag turns avx512_bf16 off for XLA), and XLA below AVX, whose float16
code does not link (`--xla_cpu_max_isa=SSE4_2`: "Symbols not found: __extendhfsf2"): a limit, not a host judged.

Plain Python on purpose: the golden session (host) runs the emulations, the contract side judges with them.
"""

from __future__ import annotations

import dataclasses

from harness.model.host import Dimension, Host

HOST_NOISE = "host_noise"  # a golden entry's field: {dimension: the largest move on an emulated host}, absolute
# In an emulated host's recording folder: the check ids its run left out (--harness-except), by the measured map of
# which checks a host moves (harness.stack.entry_side.host_map); the recording keeps their values' host noise as it was.
LEFT_OUT = "left-out.txt"
# The checks no host moved when recorded, in this many buckets: a run on an emulated host takes one of them, turning
# with each commit, so each such check runs there once in SAMPLE_OF (harness.stack.entry_side.host_map).
SAMPLE_OF = 8
EMULATED = "host_noise_from"  # a golden file's provenance: {dimension: [emulations measured]}

# How far beyond its measured host noise a value may move on a host that differs. The emulations are the
# dimension's own hosts (kernels of the same OpenBLAS, XLA's own ISA levels); 4x, as for a stack's numerical
# noise (harness.numerical_noise), leaves room for a kernel or code generator not emulated here (Arm's) that
# rounds a little more differently.
FACTOR = 4.0


@dataclasses.dataclass(frozen=True)
class Emulation:
    """A host this machine can be made to compute like: what to set, which CPU features it needs, and why."""

    name: str  # short, for folder names and messages
    dimension: Dimension
    blas: str | None = None  # OPENBLAS_CORETYPE
    blas_named: str | None = None  # the kernel OpenBLAS then names (Prescott's is "Katmai"), when another name
    max_isa: str | None = None  # XLA's --xla_cpu_max_isa
    needs: frozenset[str] = frozenset()  # /proc/cpuinfo flags the CPU must have (a kernel it cannot run crashes)
    why: str = ""

    def applies(self, host: Host, flags: frozenset[str]) -> bool:
        """Whether this machine can emulate it and it is another host than this one (x86 only: the names are)."""
        if host.machine != "x86_64" or not self.needs <= flags:
            return False
        if self.blas is not None:
            return host.blas is None or host.blas.lower() != (self.blas_named or self.blas).lower()
        if self.dimension == Dimension.FMA:
            return bool(host.fma)
        return host.vector == "AVX512"  # the vector cap: only below what the CPU has

    def environment(self, environ: dict[str, str]) -> dict[str, str]:
        """The variables a run under it gets besides `environ`: the kernel, or XLA_FLAGS with the cap after the
        user's own flags (XLA takes the last of a flag given twice)."""
        if self.blas is not None:
            return {"OPENBLAS_CORETYPE": self.blas}
        flags = " ".join(f for f in (environ.get("XLA_FLAGS", "").strip(), f"--xla_cpu_max_isa={self.max_isa}") if f)
        return {"XLA_FLAGS": flags}


EMULATIONS: tuple[Emulation, ...] = (
    Emulation("blas-skylakex", Dimension.BLAS, blas="SkylakeX", needs=frozenset({"avx512f"}),
              why="OpenBLAS's AVX-512 kernels (Intel Xeon since Skylake, AMD Zen 4 and later)"),
    Emulation("blas-haswell", Dimension.BLAS, blas="Haswell", needs=frozenset({"avx2", "fma"}),
              why="OpenBLAS's AVX2 kernels (Intel since 2013; AMD Zen runs them)"),
    Emulation("blas-sandybridge", Dimension.BLAS, blas="Sandybridge", needs=frozenset({"avx"}),
              why="OpenBLAS's AVX kernels (Intel Sandy and Ivy Bridge; Nehalem's round alike)"),
    Emulation("blas-prescott", Dimension.BLAS, blas="Prescott", blas_named="Katmai", needs=frozenset({"pni"}),
              why="OpenBLAS's SSE3 kernels, which it names Katmai: the generic x86-64 kernel"),
    Emulation("vector-avx2", Dimension.VECTOR, max_isa="AVX2", needs=frozenset({"avx512f"}),
              why="XLA's code limited to AVX2, as on a laptop or server without AVX-512"),
    Emulation("no-fma", Dimension.FMA, max_isa="AVX", needs=frozenset({"avx", "fma"}),
              why="XLA's code limited to AVX: no fused multiply-add (and no AVX2), as on x86 CPUs before 2013 and "
                  "some low-power ones"),
)


DIMENSION_NAMES = frozenset(d.value for d in Dimension)


def applicable(host: Host, flags: frozenset[str]) -> list[Emulation]:
    """The emulations this machine can run that are another host than its own."""
    return [e for e in EMULATIONS if e.applies(host, flags)]


def allowance(noise, dimensions: frozenset[Dimension]) -> tuple[float, list[Dimension]]:
    """FACTOR times the largest host noise a golden entry's `noise` ({dimension: move}) holds for the dimensions
    in which this host differs from the recording's, and those dimensions; (0, []) when it holds none."""
    if not isinstance(noise, dict):
        return 0.0, []
    found = {Dimension(d): float(v) for d, v in noise.items()
             if d in DIMENSION_NAMES and Dimension(d) in dimensions
             and isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0}
    if not found:
        return 0.0, []
    return FACTOR * max(found.values()), sorted(found)
