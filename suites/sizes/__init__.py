"""The sizes suite (suite.py declares it)."""
