"""The multi-device contract family and the process it runs in: which family, how many devices, and what
its pytest process is told so that JAX sees them.

The data-parallel family needs several devices; the entry's main pytest process keeps JAX's default
(one CPU device here), so the single-device results stay as they are. The entry runs the family in a
second pytest process (harness.stack.entry_side.multi_device) whose environment this module composes:
on "cpu" (the default) XLA simulates COUNT host devices; on an accelerator platform the real devices
are used, and the family fails to start when there are fewer than COUNT.

Plain Python on purpose: both sides import it (the entry's session, the plugin, the family's module).
"""

from __future__ import annotations

from harness import platforms

FAMILY = "data_parallel"
MODULE = "harness.builtin.test_data_parallel"  # its checks' module, run by name (--pyargs)
FILE = "test_data_parallel.py"  # what the entry's main process leaves out
COUNT = 4  # devices the family's meshes ((4,), (2, 2), (4, 1)) use
SIMULATE = f"--xla_force_host_platform_device_count={COUNT}"


def process_environment(platform: str, environ) -> dict[str, str]:
    """The variables the family's pytest process gets besides the entry's: the platform, and on cpu the
    simulated devices appended to any XLA_FLAGS the user set (a flag given twice: XLA takes the last)."""
    if platform not in platforms.PLATFORMS:
        raise ValueError(f"multi-device platform {platform!r}: choose one of {', '.join(platforms.PLATFORMS)}")
    env = {"JAX_PLATFORMS": platform}
    if platform == platforms.CPU:
        env["XLA_FLAGS"] = " ".join(f for f in (environ.get("XLA_FLAGS", "").strip(), SIMULATE) if f)
    return env


def too_few(found: int, backend: str) -> str:
    """Why the family cannot run, and the fix."""
    return (f"the {FAMILY} family needs {COUNT} devices; JAX found {found} on {backend}. The entry runs it with "
            f"{COUNT} simulated CPU devices ({SIMULATE}) unless --multi-device-platform names an accelerator: "
            f"give it one with at least {COUNT} devices, or use cpu")
