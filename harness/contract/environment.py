"""What stack a report was produced on: versions, the full package list, platform and JAX backend.

Imports JAX only inside jax_platform(), so the harness's own tooling runs without it.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import os
import platform
import sys

from harness.model import host_cpu as cpu
from harness.model.report import VERSION_KEYS


def _version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def versions() -> dict:
    out = {"python": platform.python_version()}
    out.update({key: _version(key.replace("_", "-")) for key in VERSION_KEYS if key != "python"})
    return out


def packages() -> dict[str, str]:
    """Every installed distribution with its version, sorted by name: of two copies, the one import finds (the
    first on sys.path, as a host's JAX on PYTHONPATH comes before the environment's)."""
    found = {}
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(name.lower().replace("_", "-"), dist.version)
    return dict(sorted(found.items()))


def first_found(names) -> dict[str, tuple[str, str]]:
    """name -> (version, folder) of each package as `import` finds it: the first copy on sys.path (a host's JAX
    on PYTHONPATH before the environment's). Also asked by an entry's session before its suite, in the entry's
    Python (harness.stack.entry_side.preinstalled)."""
    found = {}
    for name in names:
        try:
            dist = md.distribution(name.replace("_", "-"))
        except md.PackageNotFoundError:
            continue
        found[name] = (dist.version, os.path.realpath(str(dist.locate_file(""))))
    return found


def preinstalled() -> dict[str, str]:
    """Of the stack's packages (and libtpu), those imported from outside this environment: name -> the folder
    (a host's own JAX on PYTHONPATH, which every entry imports and the judged pins take as given)."""
    inside = os.path.realpath(sys.prefix) + os.sep
    return {name: where for name, (_, where) in first_found([*VERSION_KEYS, "libtpu"]).items()
            if not (where + os.sep).startswith(inside)}


def machine() -> dict:
    return {
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python_implementation": platform.python_implementation(),
        "python_executable": sys.executable,
    }


@functools.cache  # read once a process: a golden mismatch asks for it
def host_cpu() -> dict:
    """This machine's CPU and its numerics features (harness.model.host_cpu), for a golden file's provenance."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return cpu.describe(f.read())
    except OSError:  # not Linux: the model only, its features not known
        return {"cpu": platform.processor() or platform.machine() or "unknown", "numerics_features": None}


def jax_platform() -> dict:
    """The JAX backend and the numerics switches that change results."""
    try:
        import jax
    except Exception as exc:  # a broken install is itself worth reporting
        return {"backend": None, "error": f"{type(exc).__name__}: {exc}"}
    devices = jax.devices()
    return {
        "backend": jax.default_backend(),
        "device_kinds": sorted({d.device_kind for d in devices}),
        "device_count": len(devices),
        "jax_enable_x64": bool(jax.config.jax_enable_x64),
        "default_matmul_precision": str(jax.config.jax_default_matmul_precision),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "compilation_cache_dir": str(jax.config.jax_compilation_cache_dir or ""),
    }
