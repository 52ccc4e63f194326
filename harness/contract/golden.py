"""The golden store: values recorded from the baseline entry, one human-diffable JSON file per family.

Arrays are stored in harness.contract.encoding's exact form, so the bits survive a write and a read.
Error contracts store the exception type name, or null for "no error".
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from harness import env_vars, golden_layout, host_emulation
from harness.atomic import atomic_write_text
from harness.contract import environment, options
from harness.contract.families import Family
from harness.contract.noise_entry import kept_noise, noise_only, without_noise
from harness.contract.encoding import decode_array
from harness.errors import HarnessError
from harness.host_emulation import EMULATED
from harness.model import departure, host as hosts
from harness.model.report import STACK_VERSION_KEYS

FORMAT_VERSION = 1


def record_command(accept: bool = False, builtin: bool = False) -> str:
    """The command that records golden values where this run is: a team's project (the `upgrade-harness`
    command sets HARNESS_PROJECT for its sessions; `builtin`: the built-in families, which it records only
    when asked) or this checkout's nox session."""
    if os.environ.get(env_vars.PROJECT):
        flags = [f for f, wanted in (("--record-builtin", builtin), ("--accept-changes", accept)) if wanted]
        return " ".join(["upgrade-harness golden", *flags])
    return "nox -s golden" + (" -- --accept-changes" if accept else "")


REPLACES = "replaces"  # a recording's change: an unreadable golden file written anew, whole
REMOVED = "removed"  # a recording's change: a departure no longer observed (its statement holds again)


class GoldenProblem(HarnessError):
    """A golden file or entry is missing or unreadable: the check cannot be judged."""


def dumps(doc: dict) -> str:
    """JSON with one line per golden value, so a diff names exactly the values that changed."""
    head = {k: v for k, v in doc.items() if k != "values"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "values": {']
    items = list(doc["values"].items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, separators=(', ', ': '))}{comma}")
    lines.append(" }\n}\n")
    return "\n".join(lines)


def _with_hosts_measured_elsewhere(provenance: dict, recorded: dict) -> dict:
    """The recording's provenance, with the hosts the file says measured a dimension this recording did not emulate
    (`golden --measure-host` on a host with it): their host noise stays with the values it was measured for
    (harness.contract.noise.unmeasured_host_noise)."""
    before = recorded.get(EMULATED)
    if EMULATED not in provenance or not isinstance(before, dict):
        return provenance
    elsewhere = {d: hosts_ for d, hosts_ in before.items() if d not in provenance[EMULATED]}
    return dict(provenance, **{EMULATED: dict(sorted({**elsewhere, **provenance[EMULATED]}.items()))}) \
        if elsewhere else provenance


def _left_out(stores: list[GoldenStore]) -> frozenset[str]:
    """The check ids every one of a dimension's emulated runs left out (the LEFT_OUT file each folder holds; none
    without it: a run of every check)."""
    lists = []
    for store in stores:
        try:
            lists.append(options.ids_in(store.directory / host_emulation.LEFT_OUT))
        except OSError:
            return frozenset()
    return frozenset.intersection(*lists) if lists else frozenset()


class GoldenStore:
    """Reads golden/<family>.json lazily; collects recordings to write in one go.

    ``fallback`` is where a built-in family is read from when the project keeps no copy of its own: in a team's
    project, the tool's own golden values of the built-in contracts, so they need not live in the team's
    repository unless the team records its own (`upgrade-harness golden --record-builtin`, into
    <directory>/builtin/). A project's own family is read from <directory>/<name>.json only, whatever its name
    (harness.golden_layout). Recordings always go to `directory` and are compared with what it holds.
    """

    def __init__(self, directory: str | os.PathLike, fallback: str | os.PathLike | None = None,
                 noise_from: list[str | os.PathLike] = (),
                 host_noise_from: dict[str, list[str | os.PathLike]] | None = None,
                 shown_as: str | os.PathLike | None = None):
        self.directory = Path(directory)
        # The directory as the project names it, where `directory` is a recording's staged copy: what messages say.
        self.shown_as = Path(shown_as) if shown_as else None
        self.fallback = Path(fallback) if fallback else None
        self._files: dict[tuple[Family, bool], dict] = {}
        self._departures: dict[tuple[Family, bool], dict[str, departure.Departure]] = {}
        self.recorded: dict[Family, dict[str, dict]] = {}
        self.dropped: dict[Family, set[str]] = {}  # departures a recording found no longer observed, by family
        self.own_names: frozenset[str] = frozenset()  # the run's own families (an earlier copy's name is theirs)
        # A recording's: what the perturbed compilations of the same contracts recorded (harness.numerical_noise).
        self.perturbed = [GoldenStore(d) for d in noise_from]
        # A recording's: what the same contracts recorded on each emulated host, by dimension (harness.host_emulation).
        self.emulated = {hosts.Dimension(d): [GoldenStore(f) for f in folders]
                         for d, folders in (host_noise_from or {}).items() if folders}
        # ... and the checks each dimension's runs left out by the measured map (host_emulation.LEFT_OUT in each
        # folder; harness.stack.entry_side.host_map): their values were not asked there, not lost.
        self.host_left_out = {d: _left_out(stores) for d, stores in self.emulated.items()}
        self.noise_keys: set[tuple[Family, str]] = set()  # the values recorded with their noise asked
        self.host_noise_keys: set[tuple[Family, str]] = set()  # ... with their host noise asked
        self.left_out_keys: set[tuple[Family, str]] = set()  # ... of checks every emulated dimension left out
        self._across: dict[Family, bool] = {}
        self._hosts: dict[Family, frozenset[hosts.Dimension]] = {}

    def path(self, family: Family) -> Path:
        """Where the family's values are recorded: a team's copy of a built-in family in its own folder."""
        if family.own or self.fallback is None:
            return golden_layout.own_file(self.directory, family.name)
        return golden_layout.builtin_copy(self.directory, family.name)

    def _kept(self, family: Family) -> Path:
        """The project's own file of the family's values (for a built-in family, the team's copy, which may be
        an earlier copy beside the own families' files); the recording's path when there is none yet."""
        if family.own or self.fallback is None:
            return self.path(family)
        return golden_layout.team_copy(self.directory, family.name, self.own_names) or self.path(family)

    def source(self, family: Family) -> Path:
        """The file a family's values are read from: the project's, else (a built-in family) the tool's own."""
        kept = self._kept(family)
        shipped = None if family.own or self.fallback is None else self.fallback / f"{family.name}.json"
        return shipped if not kept.exists() and shipped is not None and shipped.exists() else kept

    def folder(self, name: str) -> Path:
        """A built-in family's folder of recorded files (the baseline's checkpoints) by name: the team's copy,
        an earlier copy of it, else the tool's own."""
        path = self.recording_folder(name)
        if path.exists() or self.fallback is None:
            return path
        earlier = self.directory / name
        return earlier if earlier.exists() or not (self.fallback / name).exists() else self.fallback / name

    def recording_folder(self, name: str) -> Path:
        """Where a recording writes a built-in family's folder."""
        return self.directory / name if self.fallback is None else self.directory / golden_layout.BUILTIN_COPIES / name

    def _recorder(self, family: Family) -> str:
        """The command that records this family: a built-in one (the tool ships its values) needs
        --record-builtin in a team's project, where `golden` records only the team's own by default."""
        return record_command(builtin=self.is_builtin(family))

    def is_builtin(self, family: Family) -> bool:
        """A built-in family in a team's project (there is a fallback), whose values the tool ships."""
        return not family.own and self.fallback is not None

    def shown(self, path: Path) -> Path:
        """A golden file as the project names it (never the staged copy a recording writes into)."""
        if self.shown_as is None or not Path(path).is_relative_to(self.directory):
            return Path(path)
        return self.shown_as / Path(path).relative_to(self.directory)

    def _load(self, family: Family, kept_only: bool = False) -> dict:
        if (family, kept_only) in self._files:
            return self._files[(family, kept_only)]
        path = self._kept(family) if kept_only else self.source(family)
        if not path.exists():
            raise GoldenProblem(
                f"golden file {self.shown(path)} does not exist; record it from the baseline with "
                f"`{self._recorder(family)}`.")
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict) or not isinstance(data.get("values"), dict):
                raise ValueError("top level must be an object with a 'values' object")
            if data.get("format") != FORMAT_VERSION:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT_VERSION}")
        except (OSError, ValueError) as exc:
            raise GoldenProblem(
                f"golden file {self.shown(path)} is unreadable ({exc}); restore it from git "
                f"(`git checkout -- {self.shown(path)}`) or record it again with `{self._recorder(family)}`."
            ) from None
        self._files[(family, kept_only)] = data
        return data

    def holds(self, family: Family, key: str) -> bool:
        """Whether the family's golden file holds the key (False where there is no readable file)."""
        try:
            return key in self._load(family)["values"]
        except GoldenProblem:
            return False

    def get(self, family: Family, key: str) -> dict:
        data = self._load(family)
        if key not in data["values"]:
            raise GoldenProblem(
                f"golden entry {key!r} is missing from {self.shown(self.source(family))}; "
                f"record it from the baseline with `{self._recorder(family)}`."
            )
        return data["values"][key]

    def get_array(self, family: Family, key: str) -> tuple[np.ndarray, dict]:
        entry = self.get(family, key)
        try:
            return decode_array(entry), entry
        except (KeyError, TypeError, ValueError) as exc:
            raise GoldenProblem(
                f"golden entry {key!r} in {self.shown(self.source(family))} is malformed ({exc}); "
                f"record it again with `{self._recorder(family)}`."
            ) from None

    def departures(self, family: Family, kept_only: bool = False) -> dict[str, departure.Departure]:
        """The family's recorded departures by key (harness.model.departure); none where its golden file is
        missing or unreadable (its golden values say so). `kept_only`: the project's own file (a recording's)."""
        found = self._departures.get((family, kept_only))
        if found is None:
            try:
                found = departure.in_values(self._load(family, kept_only)["values"])
            except GoldenProblem:
                found = {}
            self._departures[(family, kept_only)] = found
        return found

    def provenance(self, family: Family) -> dict:
        """Where the family's values were recorded (entry, versions, backend, host), as the file says."""
        return dict(self._load(family).get("provenance") or {})

    def across_stacks(self, family: Family) -> bool:
        """Whether this process's stack is another than the one the family's values were recorded on: only
        then may a golden value move within its numerical noise (the same stack is judged at its ulps)."""
        if family not in self._across:
            recorded = self.provenance(family).get("versions")  # none: a file from before it was recorded
            here = environment.versions()
            self._across[family] = bool(recorded) and any(recorded.get(k) != here.get(k) for k in STACK_VERSION_KEYS)
        return self._across[family]

    def perturbed_entries(self, family: Family, key: str, stores: list[GoldenStore] | None = None) -> list[dict | None]:
        """The key as each perturbed run (or each of `stores`: an emulated host's) recorded it (None where one did
        not: its file or key is absent)."""
        found = []
        for store in self.perturbed if stores is None else stores:
            try:
                found.append(store._load(family, kept_only=True)["values"].get(key))
            except GoldenProblem:
                found.append(None)
        return found

    def recording_host(self, family: Family) -> hosts.Host | None:
        """The host the family's values were recorded on, as its file names it (None: not named, or no file)."""
        try:
            return hosts.from_provenance(self.provenance(family).get("host"))
        except GoldenProblem:
            return None

    def host_differences(self, family: Family) -> frozenset[hosts.Dimension]:
        """The dimensions in which this host may compute the family's values otherwise than its recording host
        (harness.model.host.differences); none without a golden file."""
        if family not in self._hosts:
            try:
                self.provenance(family)
            except GoldenProblem:
                self._hosts[family] = frozenset()
            else:
                self._hosts[family] = hosts.differences(self.recording_host(family), environment.host())
        return self._hosts[family]

    def host_note(self, family: Family) -> str | None:
        """What a golden mismatch adds when the family's values were recorded on a host that computes otherwise;
        None without a golden file (a contract that only compares with another entry's values)."""
        return hosts.note(self.recording_host(family), environment.host())

    def record(self, family: Family, key: str, entry: dict) -> None:
        self.recorded.setdefault(family, {})[key] = entry

    def label(self, family: Family) -> str:
        """The family as its file is named in the golden directory: `training`, or `builtin/training` for a
        team's copy of the built-in one."""
        return self.path(family).relative_to(self.directory).with_suffix("").as_posix()

    def drop(self, family: Family, key: str) -> None:
        """A recorded departure no longer observed: removed from the family's file when it is written."""
        self.dropped.setdefault(family, set()).add(key)

    def changes(self) -> list[tuple[Family, str, str, Any, Any]]:
        """(family, key, 'added'|'changed', old, new) for every recording that differs from the
        project's own file (never the tool's: a team recording the built-ins adds its own copy);
        (family, key, 'removed', old, None) for a departure dropped from it; and (family, '*', 'replaces',
        why, None) for a file that exists but cannot be read: writing replaces it whole, so it is a change to
        accept, not values added."""
        out = []
        for family in sorted(self.dropped):
            old = self.departures(family, kept_only=True)
            out += [(family, key, REMOVED, self._load(family, kept_only=True)["values"][key], None)
                    for key in sorted(self.dropped[family]) if key in old]
        for family, values in sorted(self.recorded.items()):
            try:
                old = self._load(family, kept_only=True)["values"]
            except GoldenProblem as exc:
                if self._kept(family).exists():
                    out.append((family, "*", REPLACES, str(exc), None))
                old = {}
            for key, new in sorted(values.items()):
                if key not in old:
                    out.append((family, key, "added", None, new))
                elif without_noise(old[key]) != without_noise(new):
                    out.append((family, key, "changed", old[key], new))
        return out

    def _measured_anew(self, family: Family, provenance: dict) -> bool:
        """Whether this recording measured host noise on other emulated hosts than the family's file says (a value
        none of them moved has no host noise: the provenance is what tells it was measured)."""
        try:
            recorded = self._load(family, kept_only=True).get("provenance") or {}
        except GoldenProblem:
            return False
        return EMULATED in provenance and recorded.get(EMULATED) != \
            _with_hosts_measured_elsewhere(provenance, recorded)[EMULATED]

    def _reason_added(self, family: Family, provenance: dict) -> bool:
        """Whether this acceptance gives a reason to values an earlier one changed without any (the file is written
        with it, its values the same: a pull-request check lists the branch's re-recorded values with it)."""
        given = (provenance.get(golden_layout.ACCEPTED) or {}).get("reason")
        try:
            recorded = self._load(family, kept_only=True).get("provenance") or {}
        except GoldenProblem:
            return False
        return bool(given) and golden_layout.ACCEPTED in recorded and not recorded[golden_layout.ACCEPTED].get("reason")

    def noise_updates(self) -> list[tuple[Family, str]]:
        """(family, key) of every value recorded the same as the project's file holds it but for its measured
        noise (new, or measured again): written without --accept-changes, as the values themselves are kept."""
        out = []
        for family, values in sorted(self.recorded.items()):
            try:
                old = self._load(family, kept_only=True)["values"]
            except GoldenProblem:
                continue
            out += [(family, key) for key, new in sorted(values.items())
                    if key in old and noise_only(old[key], new)]
        return out

    def write(self, provenance: dict) -> list[Path]:
        """Merge recordings into the families whose values changed (a departure dropped too), whose noise was measured anew, or whose
        values were recorded on another stack than this one (the same values, now this stack's: a later run
        on it is judged at the golden ulps alone), atomically; return the paths written. A value recorded the
        same but whose noise this recording did not measure keeps the noise its file holds."""
        written = []
        changed_families = {family for family, *_ in self.changes()} | {family for family, _ in self.noise_updates()}
        for family in sorted(set(self.recorded) | set(self.dropped)):
            values = self.recorded.get(family, {})
            exists = self.path(family).exists()
            if exists and family not in changed_families and not self.across_stacks(family) \
                    and not self._measured_anew(family, provenance) and not self._reason_added(family, provenance):
                continue  # nothing new: leave the file (and its provenance) as it is
            try:
                kept = self._load(family, kept_only=True)
                merged = dict(kept["values"])
            except GoldenProblem:
                kept, merged = {}, {}
            accepted = (kept.get("provenance") or {}).get(golden_layout.ACCEPTED)
            if golden_layout.ACCEPTED not in provenance and accepted:  # the values' acceptance stays with them
                provenance_here = dict(provenance, **{golden_layout.ACCEPTED: accepted})
            else:
                provenance_here = provenance
            provenance_here = _with_hosts_measured_elsewhere(provenance_here, kept.get("provenance") or {})
            merged.update({key: kept_noise(merged.get(key), new) for key, new in values.items()})
            for key in self.dropped.get(family, ()):
                merged.pop(key, None)
            values = dict(sorted(merged.items()))
            doc = {
                "format": FORMAT_VERSION,
                "family": family.name,
                **({golden_layout.OWN_MARK: True} if family.own else {}),
                "provenance": dict(provenance_here, recorded_at=_dt.datetime.now(_dt.timezone.utc).isoformat(),
                                   # as the host will read them back: JSON's numbers, not the recording's
                                   **{golden_layout.VALUES_DIGEST: golden_layout.values_digest(
                                       json.loads(json.dumps(values)))}),
                "values": values,
            }
            atomic_write_text(self.path(family), dumps(doc))
            self._files[(family, True)] = self._files[(family, False)] = doc
            self._across.pop(family, None)
            self._hosts.pop(family, None)
            self._departures = {k: v for k, v in self._departures.items() if k[0] != family}
            written.append(self.path(family))
        return written

