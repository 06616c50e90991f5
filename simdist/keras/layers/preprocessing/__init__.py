"""Preprocessing layers (Rescaling, Normalization, lookups, CategoryEncoding, Hashing)."""
