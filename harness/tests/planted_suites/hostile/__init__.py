"""The hostile suite (suite.py declares it)."""
