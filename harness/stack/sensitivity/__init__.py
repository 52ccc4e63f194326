"""`nox -s sensitivity`: how many small changes to Optax's in-scope modules the contract suite notices.

cosmic-ray mutates a copy of those modules in a disposable environment (never an entry's) and runs the
contract families that test each module against every mutant; the report says which survived.
"""
