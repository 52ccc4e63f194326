"""The answer a reviewer needs from the pull-request check, computed from the model of the team's repository
alone (tests/integration/test_pull_request_flow.py): what each branch pins and declares, its code, and the stack
and code its golden values were recorded with. It never asks the harness: each check's outcome on either side is
the stand-in stack's physics (support.golden_stack.value) against the recorded value.
"""

from __future__ import annotations

import dataclasses

from support import golden_stack

GROUPS = {"jax": ("jax", "jaxlib"), "optax": ("optax",)}  # what a single-package entry bumps alone
MODULES = ("alpha", "beta")  # simulated_stack.make_project's contract modules, three checks each
CHECKS = [f"{m}/test_{m}_{n}" for m in MODULES for n in ("first", "second", "third")]


Writer = tuple[str, "str | None"] | None  # the command and reason a family's golden file says wrote it; None: none


@dataclasses.dataclass
class Branch:
    """One branch's committed state, as the model knows it."""

    pins: dict[str, str]  # what requirements.txt (the pins file) pins
    declared: dict[str, str]  # what requirements.in declares: another pin is a stale lock
    code: str  # the team's code (trainer/optim.py)
    golden_pins: dict[str, str]  # the stack its golden values were recorded on
    golden_code: str  # the code they were recorded with
    # What wrote each family's golden file (the last recording that rewrote it), by family.
    writers: dict[str, Writer] = dataclasses.field(default_factory=lambda: dict.fromkeys(MODULES))
    # The golden values where the branch left main (their merge base): (pins, code) they were recorded with;
    # None for main itself.
    fork: tuple[dict[str, str], str] | None = None

    @property
    def stale(self) -> bool:
        return self.declared != self.pins

    def recorded(self, pins: dict[str, str], accepted: Writer) -> None:
        """A recording on `pins` with the branch's code, as support.golden_stack.record writes it: a family's file
        is rewritten (its writer now `accepted`) when its values or stack differ, or when it gives a reason to an
        acceptance that had none."""
        for family in MODULES:
            checks = [c for c in CHECKS if c.startswith(f"{family}/")]
            moved = any(golden_stack.value(c, pins, self.code) != golden_stack.value(c, self.golden_pins,
                                                                                     self.golden_code) for c in checks)
            was = self.writers[family]
            reason_added = accepted is not None and accepted[1] and was is not None and not was[1]
            if moved or golden_stack.stack(pins) != golden_stack.stack(self.golden_pins) or reason_added:
                self.writers[family] = accepted if accepted is not None else was  # nothing accepted: kept
        self.golden_pins, self.golden_code = dict(pins), self.code


@dataclasses.dataclass(frozen=True)
class Expected:
    """What the check must answer."""

    refused: bool  # exit 2: the pins files disagree
    exit_status: int
    accepted: tuple[str, ...] = ()  # fail on the base only because the golden values are the candidate's
    failing_on_baseline: tuple[str, ...] = ()  # the team's code changed since the recording
    changed: tuple[str, ...] = ()  # by the bump
    causes: dict[str, str] = dataclasses.field(default_factory=dict)  # accepted or changed id -> the bump said
    rerecorded: tuple[tuple[str, str], ...] = ()  # (family, key) of each golden value the branch changed
    unexplained: tuple[tuple[str, str], ...] = ()  # of those, the ones its file says no reason for


def bumped(base: dict[str, str], cand: dict[str, str]) -> tuple[str, ...]:
    return tuple(g for g, packages in GROUPS.items() if any(base[p] != cand[p] for p in packages))


def bump_text(group: str, base: dict[str, str], cand: dict[str, str]) -> str:
    """'optax 1.0.0 → 1.4.0', 'jax/jaxlib 0.5.0 → 0.6.0' (the stand-in bumps move jax and jaxlib together)."""
    return f"{'jax/jaxlib' if group == 'jax' else group} {base[group]} → {cand[group]}"


def cause(check: str, base: Branch, head: Branch, recorded: str, passes: bool) -> str:
    """The bump that moves the check as it moved on the candidate: each group bumped alone on the base's pins
    that fails it (a change) or passes it (accepted); with one group bumped, that group (no single entries)."""
    groups = bumped(base.pins, head.pins)
    if len(groups) > 1:
        groups = tuple(g for g in groups if passes == (golden_stack.value(
            check, dict(base.pins, **{p: head.pins[p] for p in GROUPS[g]}), head.code) == recorded))
    if not groups:
        return "only with the bumps together"
    return " and ".join(bump_text(g, base.pins, head.pins) for g in groups) + " (each alone)" * (len(groups) > 1)


def rerecorded(head: Branch) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The golden values the branch holds otherwise than where it left main, and those written without a reason."""
    if head.fork is None:
        return [], []
    pins, code = head.fork
    moved = [(c.split("/", 1)[0], c.split("/", 1)[1]) for c in CHECKS
             if golden_stack.value(c, head.golden_pins, head.golden_code) != golden_stack.value(c, pins, code)]
    return moved, [(f, k) for f, k in moved if not (head.writers[f] and head.writers[f][1])]


def expected(base: Branch, head: Branch) -> Expected:
    """The PR check on `head` (the branch's working tree, all committed) against `base`'s pins (main's)."""
    if head.stale or base.stale:
        return Expected(refused=True, exit_status=2)
    accepted, failing, changed, causes = [], [], [], {}
    recorded_on = golden_stack.stack(head.golden_pins)
    for check in CHECKS:
        recorded = golden_stack.value(check, head.golden_pins, head.golden_code)
        on_base = golden_stack.value(check, base.pins, head.code) == recorded
        on_cand = golden_stack.value(check, head.pins, head.code) == recorded
        if not on_base and on_cand and recorded_on == golden_stack.stack(head.pins) != golden_stack.stack(base.pins):
            accepted.append(check)
            causes[check] = cause(check, base, head, recorded, passes=True)
        elif not on_base:
            failing.append(check)
        elif not on_cand:
            changed.append(check)
            causes[check] = cause(check, base, head, recorded, passes=False)
    moved, unexplained = rerecorded(head)
    # re-recorded = "fail" (the table's default): a value changed without a reason fails an otherwise passing check
    status = int(bool(failing or changed or unexplained))
    return Expected(False, status, tuple(accepted), tuple(failing), tuple(changed), causes, tuple(moved),
                    tuple(unexplained))
