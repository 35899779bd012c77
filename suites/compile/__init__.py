"""The compile suite (suite.py declares it)."""
