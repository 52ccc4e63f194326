"""`python -m harness compare BASE.json OTHER.json [...]`: the verdict from session reports."""

import sys

USAGE = "usage: python -m harness compare BASE.json OTHER.json [...] [--markdown FILE] [--json FILE] [--html FILE] [--replay FILE] [--builtin judge|report]"


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "compare":
        print(USAGE, file=sys.stderr)
        return 2
    from harness.verdict import cli

    return cli.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
