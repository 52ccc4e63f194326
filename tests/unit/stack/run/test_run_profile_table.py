"""The whole upgrade's profile (--harness-phases): an entry's rows read from its processes' phase files."""

from harness.model.phase_times import ProcessPhases, Source, Timing
from harness.stack.run import run_profile
from harness.stack.run.run_profile import EntryTime


def _row(lines, name):
    line = next(line for line in lines if line.strip().startswith(name))
    return [float(v) for v in line[len(line.rstrip()) - 16:].split()]


def test_the_session_ends_after_the_later_of_the_suite_and_the_data_parallel_run_beside_it():
    """The data-parallel process starts beside the suite and ends first: the session's end is timed from the
    suite's end (it was from the family's, which put most of the suite's time under "session end")."""
    session = ProcessPhases(Source.SESSION, 0.0, 100.0, 60.0, work_started_at=1.0, work_cpu_s=0.5)
    suite = ProcessPhases(Source.SUITE, 2.0, 98.0, 50.0, [Timing("total", 96.0, 50.0)])
    family = ProcessPhases(Source.MULTI_DEVICE, 2.5, 12.0, 3.0, [Timing("total", 9.5, 3.0)])
    entry = EntryTime("candidate", 101.0, False, {Source.SESSION: session, Source.SUITE: suite,
                                                  Source.MULTI_DEVICE: family})
    lines = run_profile.entry_rows(entry, 0)
    (end,) = _row(lines, "session end")
    assert end == 2.0  # 100 - 98, not 100 - 12
