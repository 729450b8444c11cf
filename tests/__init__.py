"""Test suite of friday13-env (a package so that ``python -m tests.make_golden`` works)."""
