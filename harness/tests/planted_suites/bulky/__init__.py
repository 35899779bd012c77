"""The bulky suite (suite.py declares it)."""
