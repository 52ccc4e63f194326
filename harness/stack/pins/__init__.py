"""What each entry installs: the matrix's pins, a team's pins, resolution, locks, the plan."""
