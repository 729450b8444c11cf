"""Test suite of friday13-env (a package so that ``python -m tests.friday13.make_golden`` works)."""
