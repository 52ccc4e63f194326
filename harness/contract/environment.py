"""What stack a report was produced on: versions, the full package list, platform and JAX backend.

Imports JAX only inside jax_platform(), so the harness's own tooling runs without it.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata as md
import importlib.util
import os
import platform
import sys
from pathlib import Path

from harness.model import host as hosts
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


# The OpenBLAS under scipy's LAPACK (which jaxlib's QR, eigh and SVD call) names its kernel through one of these,
# by scipy's build: scipy-openblas's prefixed names (LP64, ILP64), then a plain OpenBLAS's.
_CORENAME = ("scipy_openblas_get_corename", "scipy_openblas_get_corename64_", "openblas_get_corename",
             "openblas_get_corename64_")


@functools.cache  # read once a process
def blas_kernel() -> str | None:
    """The kernel scipy's OpenBLAS runs on this CPU (as OPENBLAS_CORETYPE may force it): the library scipy's wheel
    bundles, asked directly; None where scipy or its OpenBLAS is not there (another BLAS)."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent.parent / "scipy.libs"
    for library in sorted(folder.glob("lib*openblas*.so*")) if folder.is_dir() else ():
        try:
            found = ctypes.CDLL(str(library))
        except OSError:
            continue
        for name in _CORENAME:
            function = getattr(found, name, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                named = function()
                return named.decode().strip() if named else None
    return None


@functools.cache  # read once a process: a golden mismatch asks for it
def host() -> hosts.Host:
    """This machine as a report and a golden file's provenance name it (harness.model.host): its CPU, what XLA
    compiles for under this process's XLA_FLAGS, the BLAS kernel."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            cpuinfo = f.read()
    except OSError:  # not Linux: the model only, its features not known
        return hosts.Host(cpu=platform.processor() or platform.machine() or "unknown", machine=platform.machine(),
                          numerics_features=None, blas=blas_kernel())
    return hosts.describe(cpuinfo, platform.machine(), os.environ.get("XLA_FLAGS", ""), blas_kernel())


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
