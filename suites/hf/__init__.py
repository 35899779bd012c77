"""The hf suite (suite.py declares it)."""
