"""The contract suite: runs inside a matrix entry's environment; harness.plugin writes the report."""

pytest_plugins = ["harness.contract.plugin"]
