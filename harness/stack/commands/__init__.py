"""What a user runs: upgrade, judge, accept, bisect, init, latest, golden changelog, pruning."""
