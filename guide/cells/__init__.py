"""The shared cells: see guide/sync.py."""
