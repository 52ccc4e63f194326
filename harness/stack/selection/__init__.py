"""Which built-in contract families a team's run needs: those covering the Optax callables its code calls."""
