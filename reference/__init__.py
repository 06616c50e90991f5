"""simdist_reference: the oracle. Plain, slow, obviously correct statements of each rule.

Imports NumPy only, never simdist, so that simdist (and any other implementation of the
strategy API) can be property-tested against it.
"""
