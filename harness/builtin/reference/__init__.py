"""Independent NumPy float64 references of Optax's update rules, written from their documented formulas
(the docstrings and the papers they cite), not from Optax's code: one pure function per rule."""
