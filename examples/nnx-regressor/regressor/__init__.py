"""A small Flax NNX regressor and the way this project trains it (regressor.train)."""
