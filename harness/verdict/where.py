"""Where an upgrade was judged: the headline names an accelerator (`--platform`), and two entries that ran
on different platforms are never compared (a chip's numbers against a CPU's would be the platform's drift,
not the bump's)."""

from __future__ import annotations

from harness import platforms
from harness.model.report import JaxPlatform, Report


def device(platform: JaxPlatform) -> str:
    count = platform.device_count or 0
    kinds = "/".join(platform.device_kinds or [platform.backend or "?"])
    return f"{count} {kinds}" if count else kinds


def on_accelerator(base: Report) -> bool:
    """Whether the baseline's checks ran on an accelerator (not the CPU, and JAX said where)."""
    return base.environment.jax.backend not in (None, platforms.CPU)


def suffix(base: Report) -> str:
    """" (judged on tpu: 1 TPU v5 lite)" when the baseline's checks ran on an accelerator; "" on the CPU."""
    main = base.environment.jax
    return f" (judged on {main.backend}: {device(main)})" if on_accelerator(base) else ""


def mismatch(base: Report, others: list[Report]) -> str | None:
    """Why the candidate cannot be judged against the baseline: their checks ran on different backends."""
    if not others:
        return None
    theirs, ours = others[0].environment.jax.backend, base.environment.jax.backend
    if None in (theirs, ours) or theirs == ours:
        return None
    return (f"the baseline ran on {ours} and {others[0].entry.name} on {theirs}: a platform's own drift is not the "
            f"bump's; run both on one (--platform)")
