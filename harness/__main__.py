"""`python -m harness compare BASE.json OTHER.json [...]`: the verdict from session reports.
`python -m harness coverage`: Optax's public surface against the coverage ledger."""

import sys

USAGE = "usage: python -m harness coverage [--site-packages DIR] | python -m harness compare BASE.json OTHER.json [...] [--markdown FILE] [--json FILE] [--html FILE] [--replay FILE] [--builtin judge|report]"


def main(argv: list[str]) -> int:
    if argv and argv[0] == "coverage":
        from harness.coverage import cli as coverage

        return coverage.main(argv[1:])
    if not argv or argv[0] != "compare":
        print(USAGE, file=sys.stderr)
        return 2
    from harness.verdict import cli

    return cli.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
