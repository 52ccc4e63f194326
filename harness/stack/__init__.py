"""What runs on the host: the matrix, Python interpreters, lock files, installing and running entries,
and the upgrade orchestration. Never imports JAX: it only starts processes that do."""
