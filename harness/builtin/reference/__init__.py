"""Independent NumPy float64 references of Optax's update rules, written from their documented formulas."""
