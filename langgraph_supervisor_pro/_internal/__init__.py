"""Helpers shared by every part of the package (private): the async bridge and text folding."""
