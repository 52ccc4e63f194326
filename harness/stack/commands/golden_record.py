"""`nox -s golden` (`upgrade-harness golden`): the recording, all or nothing.

One recording writes from two pytest processes (the main suite's, and the multi-device family's beside it:
harness.stack.entry_side.multi_device), each its own golden files, and the checkpoints family writes its
baseline checkpoint into golden/checkpoints/. Each process refuses on its own what it cannot write, so without
more, a family that passed was written while another failed. Instead, the recording writes into a staged copy
of the project's pins, locks and golden values (harness.stack.staging), and its files move into place only when
the whole recording succeeded; a failed or interrupted one leaves the project as it was and its staged copy
removed. Under accept, which stages the recording itself (HARNESS_STAGE), it writes into accept's staged copy
and accept moves it with the pins and locks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.stack import project, staging
from harness.stack.workspace import Workspace

Say = Callable[[str], None]


def mirrored(ws: Workspace) -> list[Path]:
    """What a recording or an acceptance may change, copied into the stage first: the pins (this checkout's
    matrix.toml; a team's pins file is its own), the locks and the golden values."""
    found = project.load(ws)
    return ([ws.matrix] if ws.is_checkout else []) + [found.locks, found.golden]


def record(ws: Workspace, run: Callable[[Workspace], None], say: Say) -> None:
    """`run` the recording in `ws` staged: its changes moved into place once it returned, none if it raised."""
    if ws.stage is not None:  # accept's: accept moves what its recording staged, with the pins and locks
        run(ws)
        return
    with staging.exclusive(ws.root):
        staging.recover(ws.root, say)
        stage = staging.create(ws.root, mirrored(ws))
        try:
            run(ws.staged(stage.files))
            moves = staging.changed(stage)
        except BaseException:
            staging.discard(stage)
            say("golden: NOT written: the recording did not succeed (see above); nothing it recorded was moved "
                "into place, in either process: the project's golden values are as they were")
            raise
        staging.commit(stage, moves)
    moved = [m.path for m in moves]
    say(f"golden: moved into place at once: {', '.join(_folded(moved)) or 'nothing (all as recorded already)'}")


def _folded(paths: list[str]) -> list[str]:
    """The files moved, a checkpoint's many files as its folder: golden/checkpoints/float32/ (12 files)."""
    shown: dict[str, int] = {}
    for path in paths:
        parts = Path(path).parts
        key = f"{'/'.join(parts[:3])}/" if len(parts) > 3 else path
        shown[key] = shown.get(key, 0) + 1
    return [key if n == 1 else f"{key} ({n} files)" for key, n in shown.items()]
