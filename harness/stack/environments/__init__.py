"""The entries' environments: interpreters, the harness they install, one entry's session."""
