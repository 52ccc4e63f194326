"""Judging reports against the baseline and saying so: compare, the shared views, text, Markdown,
HTML and the command line. Reads reports through the typed model; never imports JAX or NumPy."""
