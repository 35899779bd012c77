"""The modules suite (suite.py declares it)."""
