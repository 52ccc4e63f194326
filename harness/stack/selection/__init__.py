"""Which built-in tests a team's run needs: those whose subject is an Optax callable its code calls (and the small
families its libraries take whole)."""
