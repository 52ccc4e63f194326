"""Checkpoints across versions: a run saved before the upgrade resumes after it, and a rollback reads what
the new stack saved.

The training is harness/builtin/checkpointing.py's (an NNX MLP in float32 or bfloat16 parameters, an
injected schedule, global-norm clipping, AdamW, MultiSteps with K=3), stopped mid-accumulation and saved
with Orbax. Both directions check two things: whether every leaf restores as written (a dtype cast, a
dropped or missing leaf, a shape: a dtype/state change named by leaf, with what to do), and the run
resumed from it (losses, parameters, counters) within the golden ulps of each value's dtype.

* resume: the baseline's checkpoint, recorded by `nox -s golden` into golden/checkpoints/<dtype>/ beside
  its continuation's golden values, restored by this entry's stack.
* rollback: the checkpoint an entry wrote (the folder its job names, or --harness-rollback-from: the
  candidate's, when the upgrade runs the baseline on it after the candidate; else this entry's own), restored by this stack and continued,
  against the continuation its writer recorded.
* saved: this entry's own checkpoint, written into the run's reports (HARNESS_CHECKPOINTS) for the rollback.

The family trains once per dtype (the `own` fixture: train, save, restore, continue) and its checks share
that run; the training step compiles once per dtype (checkpointing.build), so the family adds little to an
entry's time.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

nnx = pytest.importorskip("flax.nnx")
from harness import env_vars  # noqa: E402
from harness.builtin import checkpointing as ck  # noqa: E402
from harness.contract import job, restore_diff  # noqa: E402

pytestmark = pytest.mark.family("checkpoints")
RESUMED_STEPS = ck.TOTAL // ck.K - ck.SAVE_AT // ck.K  # optimizer steps taken after the restore
_recorded: set[str] = set()  # dtypes whose baseline checkpoint this run recorded (once, not once per check)


def _golden_folder(check, request, dtype: str) -> Path:
    """The baseline's checkpoint. Recording writes it when it is missing, or again with --accept-changes
    (a new baseline); a recorded checkpoint is never replaced otherwise."""
    if not check.recording:
        return check.store.folder("checkpoints") / dtype
    folder = check.store.recording_folder("checkpoints") / dtype
    if dtype not in _recorded and (not folder.exists() or request.config.getoption("--harness-accept-changes")):
        ck.write(folder, dtype, "baseline")
        _recorded.add(dtype)
    return folder


@pytest.fixture(scope="module")
def own(request, tmp_path_factory):
    """This entry's own training run by dtype, saved and resumed once and shared by the checks: written into
    the run's reports when HARNESS_CHECKPOINTS names a folder (a rollback reads it), else into pytest's
    temporary folder, removed after the module."""
    root = os.environ.get(env_vars.CHECKPOINTS)
    base = Path(root) if root else tmp_path_factory.mktemp("checkpoints")
    written: dict[str, ck.Written] = {}

    def of(dtype: str) -> ck.Written:
        if dtype not in written:
            written[dtype] = ck.write(base / dtype, dtype, request.config.getoption("--harness-entry"))
        return written[dtype]

    yield of
    if not root:
        shutil.rmtree(base, ignore_errors=True)


def _layout(check, folder: Path, reader: str, dtype: str, baseline_writes: bool) -> None:
    """Every leaf of the checkpoint restores as written into this stack's fresh model and optimizer. The
    layout on the baseline's side is the expected one (the verdict's before)."""
    check.describe_input(f"a {dtype} model's checkpoint by {ck.writer_text(folder)}, restored by {reader}")
    written = ck.written_specs(folder / ck.CHECKPOINT)
    expected = ck.target_specs(ck.state(*ck.build(dtype)))
    found = restore_diff.differences(written, expected)
    theirs, ours = restore_diff.layout(written), restore_diff.layout(expected)
    before, after = (theirs, ours) if baseline_writes else (ours, theirs)
    check.exact("checkpoint leaves (path, dtype, shape)", after, before,
                message=restore_diff.message(found, ck.writer_text(folder), reader))


def _golden(check, golden_key: str, key: str, value, steps: int) -> None:
    why = ck.ADAM_STEP_WHY if key.startswith("params/") else None
    check.golden(golden_key, value, scale=ck.scale(key, value, steps), why=why)


def _resumed(folder: Path, dtype: str) -> dict:
    model, optimizer = ck.build(dtype, seed=100)  # fresh, and different from what was saved
    ck.restore(folder / ck.CHECKPOINT, model, optimizer)
    return ck.continuation(ck.train(model, optimizer, range(ck.SAVE_AT, ck.TOTAL)), model, optimizer)


@pytest.mark.parametrize("dtype", ck.DTYPES)
def test_resume_layout(check, request, dtype):
    """The baseline's checkpoint (saved mid-accumulation) restores into this stack leaf for leaf: no leaf
    cast to another dtype, dropped, missing or of another shape."""
    folder = _golden_folder(check, request, dtype)
    _layout(check, folder, ck.this_stack(request.config.getoption("--harness-entry")), dtype, baseline_writes=True)


@pytest.mark.parametrize("dtype", ck.DTYPES)
def test_resume_continuation(check, request, dtype):
    """Resumed from the baseline's checkpoint, this stack trains on as the baseline did: the loss of each
    continued microbatch, the final parameters and MultiSteps' counters are golden."""
    folder = _golden_folder(check, request, dtype)
    check.describe_input(f"a {dtype} model resumed from {ck.writer_text(folder)}'s checkpoint")
    for key, value in _resumed(folder, dtype).items():
        if key == "counters":
            check.golden_exact(f"{dtype}/resumed/{key}", value)
        else:
            _golden(check, f"{dtype}/resumed/{key}", key, value, RESUMED_STEPS)


@pytest.mark.parametrize("dtype", ck.DTYPES)
def test_saved(check, own, dtype):
    """This entry's own checkpoint (written into the run's reports for the rollback) restores into fresh
    objects bit for bit, and the run resumed from it is golden (as written to disk for the rollback)."""
    written = own(dtype)
    saved, restored = written.saved, written.restored
    check.exact("restored leaves", sorted(restored), sorted(saved))
    for path, value in saved.items():
        check.identical(f"restored {path}", restored[path], value)
    for key, value in ck.read_continuation(written.folder).items():
        if key == "counters":
            check.golden_exact(f"{dtype}/saved/{key}", value)
        else:
            _golden(check, f"{dtype}/saved/{key}", key, value, ck.TOTAL // ck.K)


@pytest.mark.parametrize("dtype", ck.DTYPES)
def test_rollback_layout(check, request, own, dtype):
    """The checkpoint another entry wrote restores into this stack leaf for leaf, so a team can roll back.

    In an upgrade the baseline runs it on the candidate's checkpoint; an entry's own run reads its own."""
    folder, reader = _rollback_source(request, own, dtype)
    _layout(check, folder, reader, dtype, baseline_writes=False)


@pytest.mark.parametrize("dtype", ck.DTYPES)
def test_rollback_continuation(check, request, own, dtype):
    """Resumed on this stack (the baseline) from the checkpoint an entry wrote, training goes on as it
    went on for its writer: each value within the golden ulps of its dtype."""
    folder, _ = _rollback_source(request, own, dtype)
    check.describe_input(f"a {dtype} model resumed from {ck.writer_text(folder)}'s checkpoint")
    theirs = ck.read_continuation(folder)
    for key, value in _resumed(folder, dtype).items():
        if key == "counters":
            check.exact(f"{key} (resumed here vs its writer)", value.tolist(), theirs[key].tolist())
        else:
            why = ck.ADAM_STEP_WHY if key.startswith("params/") else None
            check.recorded(key, value, theirs[key], scale=ck.scale(key, theirs[key], RESUMED_STEPS), why=why)


def _rollback_source(request, own, dtype: str) -> tuple[Path, str]:
    """The folder to roll back from, and this stack's name: another entry's when the run names one."""
    others = job.options(request.config).rollback_from
    if len(others) > 1:
        pytest.fail(f"{len(others)} checkpoints folders to restore in one pytest session: a session restores one "
                    "(harness.contract.rollbacks runs a session per folder; or pass --harness-rollback-from FOLDER)")
    folder = others[0] / dtype if others else own(dtype).folder
    if not (folder / ck.CHECKPOINT).is_dir():
        pytest.fail(f"no checkpoint in {folder}: its writer did not save one (see that entry's report)")
    return folder, ck.this_stack(request.config.getoption("--harness-entry"))
