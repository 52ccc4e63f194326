"""What runs inside a matrix entry's environment: the pytest plugin, the `check` API, the numerics
(measure, tolerances, golden values) and what a report records about the stack."""
