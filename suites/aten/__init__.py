"""The aten suite (suite.py declares it)."""
