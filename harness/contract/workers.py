"""A contract run spread over pytest-xdist's workers (`-n N --dist loadfile`): one report, as one process writes it.

Why: the built-in suite is ~1,400 checks of small programs, each module independent of the others; on a machine
with more cores than runs (a 13-core TPU host's CPU, `nox -s tests` on a developer's machine) one process leaves
the other cores idle. pytest-xdist is the engine (the harness's own tests use it): each worker collects the whole
suite and runs whole modules (`--dist loadfile`, so a module's programs compile once, in one process), and the
controller, which runs no check, writes the report.

What a worker sends back (`config.workeroutput`, once its session ended): its check records, the Hypothesis
examples it ran, its timings, the project's own families it collected and the environment it measured (JAX's
platform is asked only where the contracts were collected). Warnings need nothing: xdist replays each worker's
warnings through the controller's `pytest_warning_recorded`, where the plugin logs them as in one process.

A recording is never spread: each process would write the golden files of the families it ran, and the staged
all-or-nothing recording (harness.stack.commands.golden_record) counts on one main process.
"""

from __future__ import annotations

import dataclasses
import json

from harness.model import codec
from harness.model.report import CheckRecord, Environment, PerformanceRecord

OUTPUT_KEY = "harness_part"  # in config.workeroutput: one worker's WorkerPart, as JSON text


def is_worker(config) -> bool:
    """A pytest-xdist worker's process: it runs checks, the controller writes the report."""
    return hasattr(config, "workerinput")


def is_controller(config) -> bool:
    """The process that hands modules to workers (`-n N` with N > 0): it runs no check itself."""
    return not is_worker(config) and bool(getattr(config.option, "numprocesses", None)) and \
        getattr(config.option, "dist", "no") != "no"


@dataclasses.dataclass(frozen=True)
class WorkerPart:
    """What one worker recorded, for the controller's report."""

    checks: list[CheckRecord]
    examples_run: int
    performance: dict[str, PerformanceRecord]
    own_families: list[str]
    environment: Environment | None  # None: the worker never measured it (it collected nothing)


def send(config, part: WorkerPart) -> None:
    """The worker's part, for the controller (read in its pytest_testnodedown)."""
    config.workeroutput[OUTPUT_KEY] = json.dumps(codec.to_json(part))


def received(node) -> WorkerPart | None:
    """A worker's part, once it went down; None when it sent none (it crashed: xdist reports that itself)."""
    text = getattr(node, "workeroutput", {}).get(OUTPUT_KEY)
    return None if text is None else codec.from_json(WorkerPart, json.loads(text))


def module_of(nodeid: str) -> str:
    """A check's module, by its node id: modules are the workers' units, and the report keeps them in order."""
    return nodeid.split("::", 1)[0]
