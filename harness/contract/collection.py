"""Which collected items a harness run keeps: of the built-in families a team's selection takes in part,
the tests it names (the entry's job, harness.stack.selection); of every family, the checks an attribution or a
replay run is limited to (--harness-only), less those an emulated host's recording leaves out (--harness-except).
The rest are deselected, as pytest reports them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.contract import families, options

if TYPE_CHECKING:
    from harness.contract.session import Recorder


def keep_selected(config, items, recorder: Recorder | None) -> None:
    """Deselect what the run does not select, in place (the project's own families, known to `recorder`, are
    never taken in part)."""
    kept = options.builtin_tests(config)
    if kept is not None:
        partial = families.in_part(kept)
        own = recorder.own_contracts if recorder is not None else options.own_contracts(config)
        _deselect(config, items, lambda item: families.kept_builtin(item, kept, partial, own))
    selection = recorder.selection if recorder is not None else options.selection(config)
    if selection is not None:
        wanted = set(selection)
        _deselect(config, items, lambda item: families.check_id(item) in wanted)
    left_out = options.excepted(config)
    if left_out:
        _deselect(config, items, lambda item: families.check_id(item) not in left_out)


def _deselect(config, items, keep) -> None:
    """Leave the items `keep` refuses out of the run, as deselected (pytest counts and reports them so)."""
    config.hook.pytest_deselected(items=[item for item in items if not keep(item)])
    items[:] = [item for item in items if keep(item)]
