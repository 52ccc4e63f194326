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

import re

from harness import platforms

FAMILY = "data_parallel"
MODULE = "harness.builtin.test_data_parallel"  # its checks' module, run by name (--pyargs)
FILE = "test_data_parallel.py"  # what the entry's main process leaves out
COUNT = 4  # devices the family's meshes ((4,), (2, 2), (4, 1)) use
SIMULATE = f"--xla_force_host_platform_device_count={COUNT}"
# The CPU devices every other built-in contract runs on, and its golden values were recorded on: JAX's default.
BUILTIN_COUNT = 1
_DEVICE_COUNT_FLAG = re.compile(r"(?:^|\s)--xla_force_host_platform_device_count(?:=\S*)?(?=\s|$)")


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


def without_device_count(xla_flags: str) -> str:
    """XLA_FLAGS less the CPU's device count: what the built-in contracts' process gets, so that a count a team
    exported (for its own data-parallel contracts) leaves them on the device they were recorded on."""
    return " ".join(_DEVICE_COUNT_FLAG.sub(" ", xla_flags).split())


def builtin_on_other_count(found: int, xla_flags: str) -> str:
    """Why a built-in contract is not judged in a process whose CPU has `found` devices, and the way out."""
    return (f"not judged: the built-in contracts' golden values were recorded on {BUILTIN_COUNT} CPU device and this "
            f"process has {found} (set by the project's code when its contracts imported it, through XLA_FLAGS or "
            f"jax_num_cpu_devices, or exported: XLA_FLAGS={xla_flags.strip()!r}): a run that holds both the "
            f"project's contracts and the built-in ones (`golden --record-builtin`) cannot give each its "
            f"devices. `upgrade` runs the built-in contracts in a process of their own, without the project's code, "
            f"on {BUILTIN_COUNT}")


def too_few_for(needed: int, found: int, backend: str) -> str:
    """Why a project's contract that needs `needed` devices cannot run on the `found` JAX gives it, and the fix."""
    return (f"this contract needs {needed} devices; JAX found {found} on {backend}. On the CPU, give them where the "
            f"project's training module imports jax, before it does: os.environ['XLA_FLAGS'] = "
            f"os.environ.get('XLA_FLAGS', '') + ' --xla_force_host_platform_device_count={needed}', or after it: "
            f"jax.config.update('jax_num_cpu_devices', {needed}) (the harness runs your contracts with what that "
            f"module sets); on an accelerator, a host with {needed}")
