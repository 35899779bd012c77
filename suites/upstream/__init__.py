"""The upstream suite (suite.py declares it)."""
