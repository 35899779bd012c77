"""The distributed suite (suite.py declares it)."""
