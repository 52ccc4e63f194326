"""A team's CI: the GitHub workflows `upgrade-harness init --ci github` writes into its repository."""
