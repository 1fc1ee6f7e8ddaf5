"""Compiled kernels (Cython). Import the typed wrappers, not these modules, from product code."""
