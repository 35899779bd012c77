"""The ops suite (suite.py declares it)."""
