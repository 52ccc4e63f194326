"""The environment variables through which the host side (nox sessions, `nox -s upgrade`) tells a
contract run what to do. One name each, read by both sides."""

REPORT = "HARNESS_REPORT"  # where the contract run writes its report
ENTRY = "HARNESS_ENTRY"  # the matrix entry's name
GOLDEN_DIR = "HARNESS_GOLDEN_DIR"  # the golden store
GOLDEN_SHOWN_AS = "HARNESS_GOLDEN_SHOWN_AS"  # the golden store as the project names it, when it is a staged copy
ONLY = "HARNESS_ONLY"  # a file of check ids: run just those (attribution, replay)
REUSED_PARTS = "HARNESS_REUSED_PARTS"  # the parts of an entry's report an earlier run computed: its session runs the others
BUILTIN_TESTS = "HARNESS_BUILTIN_TESTS"  # a file of built-in test ids: of their families, run just those (a team's selection)
PROFILE = "HARNESS_PROFILE"  # the Hypothesis profile: dev, ci, nightly
SEED = "HARNESS_HYPOTHESIS_SEED"  # one seed for every entry of an upgrade (random profiles)
REPLAY = "HARNESS_REPLAY"  # a JSON file: check id -> the @reproduce_failure arguments to replay
CANDIDATE = "HARNESS_CANDIDATE"  # an ad-hoc candidate, passed from `upgrade` to its child sessions
BASELINE_REPORT = "HARNESS_BASELINE_REPORT"  # the baseline report nox -s tests hands its own tests
REPORT_NAME = "HARNESS_REPORT_NAME"  # another report name for an entry's session (the baseline replay)
PROGRESS = "HARNESS_PROGRESS"  # a file where an entry writes its phase and checks done, for `upgrade` to show
PLAN = "HARNESS_PLAN"  # the upgrade's resolved plan (harness.stack.pins.plan): the child sessions' entries
REPORTS_DIR = "HARNESS_REPORTS_DIR"  # where reports go, when not reports/ (`nox -s upgrade -- --reports DIR`)
INVOKED_FROM = "HARNESS_INVOKED_FROM"  # the directory `upgrade-harness` was typed in (its nox runs in the project's root)
STAGE = "HARNESS_STAGE"  # accept's staged copy of the pins, locks and golden values (harness.stack.staging): read and written there
PROJECT = "HARNESS_PROJECT"  # a team's project root (its [tool.upgrade-harness] table); unset: this checkout
BASELINE_FROM = "HARNESS_BASELINE_FROM"  # `--baseline-from PATH`: the file the baseline's pins are read from
CONTRACT_DIRS = "HARNESS_CONTRACT_DIRS"  # `--contracts DIR` (repeatable), os.pathsep-separated
TEST_UV = "HARNESS_TEST_UV"  # the harness's own tests (`nox -s tests`): the runner's uv binary, for the example's tool venv
BUILTIN_GOLDEN_DIR = "HARNESS_BUILTIN_GOLDEN_DIR"  # a team's project: the tool's own golden values of the built-in contracts
WHEEL = "HARNESS_WHEEL"  # the harness wheel `upgrade` built once for its child sessions (an installed tool)
BUILTIN = "HARNESS_BUILTIN"  # `--builtin judge|report|all` or `--no-builtin` ("off"): harness.model.enums.BuiltinMode
RUN_PID = "HARNESS_RUN_PID"  # the upgrade's process: its entries die with it (harness.stack.run.lifeline)
RUN_ID = "HARNESS_RUN_ID"  # the upgrade run an entry belongs to: its reports carry it, it dies with that run
CHECKPOINTS = "HARNESS_CHECKPOINTS"  # where an entry writes its own checkpoints (reports/<run>/checkpoints/<report name>/)
ROLLBACK_FROM = "HARNESS_ROLLBACK_FROM"  # another entry's checkpoints folder the baseline restores (the rollback run); several, os.pathsep-separated, restored in one process (harness.contract.rollbacks)
PLATFORM = "HARNESS_PLATFORM"  # `--platform`: the JAX platform an entry's contracts run on (harness.platforms)
MULTI_DEVICE_PLATFORM = "HARNESS_MULTI_DEVICE_PLATFORM"  # `--multi-device-platform`: where the data-parallel family runs
PHASES_DIR = "HARNESS_PHASES_DIR"  # `upgrade --harness-phases`: where an entry's processes write their phases (harness.model.phase_times)
# An entry's job file (harness.model.entry_job): the entry and the run's options an upgrade or a CI row gives its session.
JOB = "HARNESS_JOB"
# A CI row's replay, selection, rollback and report name, once carried one variable each: now in the row's job
# file. A session told one of them without a job was started by a workflow an older tool wrote (refused).
REPLACED_BY_JOB = (REPORT_NAME, ONLY, REPLAY, ROLLBACK_FROM)
