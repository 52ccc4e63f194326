"""The report key changes with exactly the inputs that determine an entry's report: one test per part,
and the inputs that must not count (an entry's name, a comment in a lock, the host-only code, a seed
under a derandomized profile, the compilation cache's directory) leave it as it was.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_report_key.py."""

from __future__ import annotations


from harness.stack.run import report_key


def test_a_universal_lock_and_a_platform_lock_that_install_the_same_packages_share_the_part(tmp_path):
    """The committed baseline lock holds markers for every platform; a lock resolved for this machine has
    none. What counts is what the entry's interpreter installs here (found: identical pins as an ad-hoc
    candidate ran again instead of reusing the baseline's report)."""
    universal = tmp_path / "baseline.txt"
    universal.write_text("colorama==0.4.6 ; sys_platform == 'win32'\n    # via pytest\njax==0.11.2\n"
                         "uvloop==0.23.0 ; sys_platform != 'win32'\nexceptiongroup==1.2.2 ; python_full_version < '3.11'\n")
    here = tmp_path / "candidate.txt"
    here.write_text("# resolved for this machine\njax==0.11.2\nuvloop==0.23.0\n")
    assert report_key.lock_digest(universal, "3.12") == report_key.lock_digest(here, "3.12")
    assert report_key.lock_digest(universal, "3.10") != report_key.lock_digest(here, "3.10")  # exceptiongroup
    here.write_text("jax==0.11.2\nuvloop==0.23.1\n")
    assert report_key.lock_digest(universal, "3.12") != report_key.lock_digest(here, "3.12")


def test_a_requirement_by_url_counts_with_its_url(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("optax @ git+https://github.com/google-deepmind/optax@aaaa\n")
    first = report_key.lock_digest(lock, "3.12")
    lock.write_text("optax @ git+https://github.com/google-deepmind/optax@bbbb\n")
    assert report_key.lock_digest(lock, "3.12") != first
