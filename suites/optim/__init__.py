"""The optim suite (suite.py declares it)."""
