"""The host a value was computed on, and the ways two hosts differ that change what the same pins compute.

Measured on the pinned baseline (docs/tolerances.md, "Across hosts"), the same program computes other values on
another host through four things, each a `Dimension`:

* `blas`: the OpenBLAS kernel scipy's LAPACK runs (jaxlib's QR, eigh, SVD call it), which the CPU chooses, or
  OPENBLAS_CORETYPE: a QR factor's small elements moved up to 104 ulp at the value between kernels;
* `vector`: the widest vector instructions XLA compiles for (AVX-512, AVX2, ...; `--xla_cpu_max_isa` caps it):
  nothing moved between AVX-512 and AVX2;
* `fma`: fused multiply-add, which lets XLA round a*b+c once: without it (`--xla_cpu_max_isa=AVX`) 507 golden
  values moved, 57 beyond their golden ulps (Adam's family, mechanize, gelu's derivative);
* `numerics16`: native 16-bit arithmetic (avx512_bf16, avx512_fp16, AMX; Arm's bf16 and fphp), with which XLA
  rounds every bfloat16 intermediate where other hosts keep float32 inside a fusion; no flag emulates it.

A golden file's provenance names its recording host, a report its own; a golden value that fails on a host
that differs is judged against the host noise its recording measured for the dimensions that differ
(harness.host_emulation). Pure parsing and comparing: the callers read /proc/cpuinfo, XLA_FLAGS and the BLAS.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any

from harness.model.fields import optional


class Dimension(enum.StrEnum):
    """One way two hosts can differ that changes computed values (the module's docstring says how much)."""

    BLAS = "blas"
    VECTOR = "vector"
    FMA = "fma"
    NUMERICS16 = "numerics16"

    @property
    def said(self) -> str:
        return _SAID[self]


_SAID = {Dimension.BLAS: "BLAS kernel", Dimension.VECTOR: "vector instructions", Dimension.FMA: "fused multiply-add",
         Dimension.NUMERICS16: "native 16-bit arithmetic"}

# x86 and Arm names of the native 16-bit arithmetic features; and fma (64-bit Arm always has it: no flag names it).
NUMERICS_FEATURES = frozenset({"fma", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16", "bf16", "fphp",
                               "asimdhp"})
_SIXTEEN_BIT = NUMERICS_FEATURES - {"fma"}

# XLA's `--xla_cpu_max_isa` levels, lowest first, and the vector width each means here. AVX-512's sub-levels
# (VNNI, BF16) and AMX compile AVX-512 vectors: one width.
_ISA_LEVELS = ("SSE4_2", "AVX", "AVX2", "AVX512", "AVX512_VNNI", "AVX512_BF16", "AMX", "AMX_FP16")
_WIDTH = {"SSE4_2": "SSE4_2", "AVX": "AVX", "AVX2": "AVX2"}
_MAX_ISA = re.compile(r"--xla_cpu_max_isa=(\S+)")


@dataclasses.dataclass(frozen=True)
class Host:
    """What a report or a golden recording was computed on: the CPU, what XLA compiles for there (its vector
    instructions and fused multiply-add, after any `--xla_cpu_max_isa` cap) and the BLAS kernel."""

    cpu: str  # the model, as /proc/cpuinfo names it
    machine: str  # x86_64, aarch64
    numerics_features: list[str] | None  # NUMERICS_FEATURES it has; None where not known
    vector: str | None = optional()  # AVX512, AVX2, AVX, SSE4_2 on x86; NEON on Arm; None where not known
    fma: bool | None = optional()  # fused multiply-add, as XLA may use it (after the cap)
    blas: str | None = optional()  # OpenBLAS's kernel under scipy's LAPACK (Haswell, SkylakeX, ...)

    def text(self) -> str:
        """'AMD EPYC (x86_64, AVX512, FMA, avx512_bf16; OpenBLAS Haswell)'."""
        sixteen = [f for f in self.numerics_features or () if f in _SIXTEEN_BIT]
        isa = [self.machine, *([self.vector] if self.vector else []), *(["FMA"] if self.fma else
                                                                       ["no FMA"] if self.fma is False else [])]
        said = ", ".join(isa + sixteen) + (f"; OpenBLAS {self.blas}" if self.blas else "")
        return f"{self.cpu} ({said})"


def cpu_fields(cpuinfo: str) -> dict[str, str]:
    """The first processor's model and features, from /proc/cpuinfo's text (x86 and Arm names)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("model name", "flags", "Features", "CPU implementer", "CPU part"):
            fields.setdefault(name.strip(), value.strip())
    return fields


def _cap(xla_flags: str) -> str | None:
    """The `--xla_cpu_max_isa` level XLA_FLAGS gives (the last one: XLA takes the last of a flag), upper case."""
    found = _MAX_ISA.findall(xla_flags or "")
    return found[-1].upper() if found else None


def _vector(flags: set[str], machine: str, cap: str | None) -> tuple[str | None, bool | None]:
    """The vector instructions XLA compiles for and whether it may fuse multiply-adds, on x86 from the CPU's flags
    under the cap; on Arm NEON with fused multiply-add (every 64-bit Arm CPU has both)."""
    if machine in ("aarch64", "arm64"):
        return "NEON", True
    if not flags:
        return None, None
    level = ("AVX512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "AVX" if "avx" in flags
             else "SSE4_2")
    if cap in _ISA_LEVELS and _ISA_LEVELS.index(cap) < _ISA_LEVELS.index(level):
        level = cap
    return _WIDTH.get(level, "AVX512"), "fma" in flags and _ISA_LEVELS.index(level) >= _ISA_LEVELS.index("AVX2")


def describe(cpuinfo: str, machine: str = "x86_64", xla_flags: str = "", blas: str | None = None) -> Host:
    """The host from /proc/cpuinfo's text, the machine's architecture, XLA_FLAGS (its ISA cap) and the BLAS
    kernel (None where not known)."""
    fields = cpu_fields(cpuinfo)
    model = fields.get("model name") or (
        f"Arm {fields['CPU implementer']} part {fields.get('CPU part', '?')}" if "CPU implementer" in fields else "unknown")
    features = fields.get("flags") or fields.get("Features")
    flags = set(features.split()) if features else set()
    vector, fma = _vector(flags, machine, _cap(xla_flags))
    return Host(cpu=model, machine=machine,
                numerics_features=None if features is None else sorted(NUMERICS_FEATURES.intersection(flags)),
                vector=vector, fma=fma, blas=blas)


def from_provenance(recorded: Any) -> Host | None:
    """The host a golden file's provenance names (its "host"), or None where it names none or is unreadable; a
    file recorded before the vector instructions and the BLAS kernel were noted has them None."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("cpu"), str):
        return None
    features = recorded.get("numerics_features")
    fma = recorded.get("fma")
    return Host(cpu=recorded["cpu"], machine=str(recorded.get("machine") or "x86_64"),
                numerics_features=sorted(features) if isinstance(features, list) else None,
                vector=recorded.get("vector") if isinstance(recorded.get("vector"), str) else None,
                fma=fma if isinstance(fma, bool) else None,
                blas=recorded.get("blas") if isinstance(recorded.get("blas"), str) else None)


def provenance(host: Host) -> dict:
    """The host as a golden file's provenance keeps it (the fields not known left out)."""
    return {k: v for k, v in dataclasses.asdict(host).items() if v is not None}


# What each dimension reads of a host (None: not known there).
_READ = {Dimension.BLAS: lambda h: h.blas, Dimension.VECTOR: lambda h: h.vector, Dimension.FMA: lambda h: h.fma,
         Dimension.NUMERICS16: lambda h: None if h.numerics_features is None
         else frozenset(h.numerics_features) & _SIXTEEN_BIT}


def differences(recorded: Host | None, here: Host) -> frozenset[Dimension]:
    """The dimensions in which `here` may compute other values than `recorded`: each one that differs or that
    either host does not know; every one where the recording host is not known or is another architecture."""
    if recorded is None or recorded.machine != here.machine:
        return frozenset(Dimension)
    return frozenset(d for d, read in _READ.items() if read(recorded) is None or read(recorded) != read(here))


def _unknown(recorded: Host, here: Host) -> frozenset[Dimension]:
    """The dimensions one of the two hosts did not note (an older file): nothing is said of them."""
    return frozenset(d for d, read in _READ.items() if read(recorded) is None or read(here) is None)


def difference_text(recorded: Host, here: Host) -> str:
    """How `here` differs from `recorded`, in words: 'BLAS kernel Haswell here, SkylakeX where recorded'."""
    if recorded.machine != here.machine:
        return f"another architecture ({here.machine} here, {recorded.machine} where recorded)"
    parts = []
    for name, mine, theirs in (("BLAS kernel", here.blas, recorded.blas), ("vector instructions", here.vector,
                                                                          recorded.vector)):
        if mine != theirs:
            parts.append(f"{name} {mine or 'unknown'} here, {theirs or 'not noted'} where recorded")
    if here.fma != recorded.fma:
        parts.append("fused multiply-add " + {True: "here, not where recorded", False: "where recorded, not here",
                                              None: "not known here"}[here.fma])
    theirs16 = set(recorded.numerics_features or ()) & _SIXTEEN_BIT
    mine16 = set(here.numerics_features or ()) & _SIXTEEN_BIT
    if mine16 != theirs16:
        said = [f"has {', '.join(sorted(mine16 - theirs16))}" if mine16 - theirs16 else "",
                f"lacks {', '.join(sorted(theirs16 - mine16))}" if theirs16 - mine16 else ""]
        parts.append("this machine " + " and ".join(p for p in said if p))
    return "; ".join(parts) or f"another CPU ({recorded.cpu} where recorded)"


def note(recorded: Host | None, here: Host) -> str | None:
    """What a golden mismatch adds when its values were recorded on a host that computes otherwise; None on the
    same host, or when the recording host is not noted (recorded before hosts were)."""
    if recorded is None or not differences(recorded, here) - _unknown(recorded, here):
        return None
    return (f"the golden values were recorded on another host ({recorded.text()}): {difference_text(recorded, here)}; "
            "XLA and the BLAS round differently there (docs/tolerances.md, \"Across hosts\"): a value a few ulps "
            "off may be the machine, not the stack")
