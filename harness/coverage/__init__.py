"""Coverage of Optax's public surface: every public callable read statically with griffe (surface),
accounted for in the committed ledger (ledger, ledger.toml), against the contracts that exist (contracts)."""
