"""What runs inside one matrix entry's nox session: its stack installed, its suite (and the data-parallel
process) run, why it ended early, the rollback runs, its phases' times. The run above starts entries."""
