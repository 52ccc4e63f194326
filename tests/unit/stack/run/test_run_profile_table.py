"""The whole upgrade's profile (--harness-phases): an entry's rows read from its processes' phase files."""

from harness.model import phase_times
from harness.model.enums import ReportPart
from harness.model.phase_times import ProcessPhases, Source, Timing
from harness.stack.run import run_profile
from harness.stack.run.run_profile import EntryTime


def _row(lines, name):
    line = next(line for line in lines if line.strip().startswith(name))
    return [float(v) for v in line[run_profile.WIDTH:run_profile.WIDTH + 16].split()]


def test_the_session_ends_after_the_later_of_the_suite_and_the_data_parallel_run_beside_it():
    """The data-parallel process starts beside the suite and ends first: the session's end is timed from the
    suite's end (it was from the family's, which put most of the suite's time under "session end")."""
    session = ProcessPhases(Source.SESSION, 0.0, 100.0, 60.0, work_started_at=1.0, work_cpu_s=0.5)
    suite = ProcessPhases(Source.SUITE, 2.0, 98.0, 50.0, [Timing("total", 96.0, 50.0)])
    family = ProcessPhases(Source.MULTI_DEVICE, 2.5, 12.0, 3.0, [Timing("total", 9.5, 3.0)])
    entry = EntryTime("candidate", 101.0, False, [session, suite, family])
    lines = run_profile.entry_rows(entry, 0)
    (end,) = _row(lines, "session end")
    assert end == 2.0  # 100 - 98, not 100 - 12


def test_an_entry_run_in_two_parts_shows_each_parts_suite(tmp_path):
    """A team's entry runs the built-in contracts and its own in a pytest process each (harness.stack.
    entry_side.parts): both suites' phases are kept and shown, the built-in part's not overwritten by the
    team's (it was: its minute of checks then showed as the install's)."""
    session = ProcessPhases(Source.SESSION, 0.0, 80.0, 70.0, work_started_at=1.0, work_cpu_s=0.5)
    builtin = ProcessPhases(Source.SUITE, 3.0, 65.0, 60.0, [Timing("checks (70 items)", 58.0, 57.0),
                                                            Timing("total", 62.0, 60.0)], part=ReportPart.BUILTIN)
    own = ProcessPhases(Source.SUITE, 66.0, 75.0, 8.0, [Timing("checks (3 items)", 7.0, 6.8),
                                                        Timing("total", 9.0, 8.0)], part=ReportPart.OWN)
    for process in (own, session, builtin):
        phase_times.write(tmp_path, process)
    entry = EntryTime("candidate", 81.0, False, phase_times.read(tmp_path))
    assert [(p.source, p.part) for p in entry.processes] == [
        (Source.SESSION, ReportPart.ALL), (Source.SUITE, ReportPart.BUILTIN), (Source.SUITE, ReportPart.OWN)]
    lines = run_profile.entry_rows(entry, 0)
    assert _row(lines, "suite (builtin part): checks (70 items)") == [58.0, 57.0]
    assert _row(lines, "suite (own part): checks (3 items)") == [7.0, 6.8]
    assert _row(lines, "install") == [2.0, 1.5]  # from the session's start of work to the first suite's; 70 - 0.5 - 68
    (end,) = _row(lines, "session end")
    assert end == 5.0  # after the later suite


def test_every_row_keeps_its_numbers_in_their_columns_three_levels_down():
    """The longest phase names a suite writes, of a part, under a follow-up (depth 3): the label never pushes the
    wall and CPU columns right (it did by 9 characters when the parts' labels were added)."""
    session = ProcessPhases(Source.SESSION, 0.0, 80.0, 70.0, work_started_at=1.0, work_cpu_s=0.5)
    longest = [Timing("collection (contract modules and their imports)", 4.0, 4.0),
               Timing("end (final report, summary, temporary files)", 0.2, 0.1), Timing("total", 62.0, 60.0),
               Timing("report writing (every write, within the phases above)", 0.3, 0.3)]
    suites = [ProcessPhases(Source.SUITE, 3.0, 65.0, 60.0, longest, part=part)
              for part in (ReportPart.BUILTIN, ReportPart.OWN)]
    lines = run_profile.entry_rows(EntryTime("candidate-rollback", 81.0, False, [session, *suites]), 3)
    for line in lines[1:]:
        label, numbers = line[:run_profile.WIDTH], line[run_profile.WIDTH:run_profile.WIDTH + 16]
        assert label.endswith(" ") and numbers.strip(), line
        [float(v) for v in numbers.split()]
