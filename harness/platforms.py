"""The platforms an entry's contracts run on (`--platform`), and what a platform cannot run.

A check that needs what its platform lacks (float64 where the chip has no 64-bit float, complex128 with
it) is recorded as "not on this platform" before it runs: on a TPU v5e the complex128 check aborted the
whole pytest process (SIGABRT while compiling), and every check after it was lost. A check says what it
needs with the `needs` marker (`@pytest.mark.needs(platforms.FLOAT64)`); a test in harness/builtin that
turns x64 on without the marker fails the harness's own tests.

Plain Python on purpose: both sides import it (the entries' sessions set JAX_PLATFORMS from it, the
plugin decides what runs).
"""

from __future__ import annotations

import os

from collections.abc import Iterable, Mapping

CPU, GPU, TPU = "cpu", "gpu", "tpu"
PLATFORMS = (CPU, GPU, TPU)  # JAX_PLATFORMS values --platform takes; cpu: the default, the golden values in golden/

FLOAT64, COMPLEX128 = "float64", "complex128"  # what a check may need (jax.enable_x64 with such arrays)
NEEDS = (FLOAT64, COMPLEX128)

# What each JAX backend has no type for. A TPU has no 64-bit float: XLA's TPU compiler rejects or aborts on
# F64/C128 (the complex128 check aborted the process on a v5e). A GPU and the CPU have both.
LACKS: dict[str, frozenset[str]] = {TPU: frozenset({FLOAT64, COMPLEX128})}

# A run on the CPU told to refuse what a platform lacks, as that platform would ("float64,complex128"):
# how the harness's tests exercise the refusal without an accelerator.
FAKE_LACKS = "HARNESS_PLATFORM_LACKS"

NOT_HERE = "not on this platform"  # the start of a refused check's reason, which the verdict counts


def said_not_here(message: str | None) -> bool:
    """A skipped check's message is the platform's refusal (pytest prefixes it "Skipped: ")."""
    return NOT_HERE in (message or "")


def lacks(backend: str | None, environ: Mapping[str, str]) -> frozenset[str]:
    """What the run's platform cannot run: its backend's own lacks, and any a fake platform adds."""
    faked = {part.strip() for part in environ.get(FAKE_LACKS, "").split(",") if part.strip()}
    unknown = faked - set(NEEDS)
    if unknown:
        raise ValueError(f"{FAKE_LACKS}={environ[FAKE_LACKS]!r}: {', '.join(sorted(unknown))} is not a need a check "
                         f"can declare; use {', '.join(NEEDS)}")
    return LACKS.get(backend or "", frozenset()) | faked


def refusal(needs: Iterable[str], backend: str | None, lacking: frozenset[str]) -> str | None:
    """Why a check needing `needs` does not run here, or None when it can."""
    missing = sorted(set(needs) & lacking)
    if not missing:
        return None
    return f"{NOT_HERE}: {backend or 'this backend'} has no {' or '.join(missing)}"


def jax_platforms(platform: str) -> str:
    """JAX_PLATFORMS for an entry on `platform`: an accelerator with the CPU beside it. Measured on a TPU v5e
    (jax 0.10.2): with JAX_PLATFORMS=tpu alone, the checks whose step makes a host callback (optax's verbose
    line searches, sam, sophia, prodigy's and d-adaptation's estimates, the Flax training trajectory: 8 checks)
    failed with "jax.debug.callback failed to find a local CPU device"; the computation itself stays on the chip."""
    return platform if platform == CPU else f"{platform},{CPU}"


def entries_at_once(platform: str | None, asked: int) -> int:
    """Entries an upgrade runs at once (`--jobs`): one on an accelerator, whose entries hold its device one after
    another (one program at a time can open a TPU chip, a second stops with libtpu's lockfile error; on a GPU
    each JAX process takes most of its memory); their multi-device family stays on the CPU, beside them."""
    return 1 if platform in (GPU, TPU) else asked



def compilation_cache(venv: str, platform: str | None) -> str:
    """JAX's persistent compilation cache for an entry's processes. On the CPU, one per environment: entries run
    there at once, and JAX writes an entry in place (a process reading it while another writes it sees part of
    it). On an accelerator, one for all of a project's environments on that platform: their entries run one after
    another (entries_at_once), so the candidate loads the programs the baseline (and the recording before it)
    compiled and a release left unchanged; a chip compiles each program for longer than the CPU. A key holds the
    program, the jax/jaxlib versions, the device and XLA's flags: a program loaded is the program compiled."""
    if platform in (GPU, TPU):
        return os.path.join(os.path.dirname(venv), f"jax-compilation-cache-{platform}")
    return os.path.join(venv, "jax-compilation-cache")
