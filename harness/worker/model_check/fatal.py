"""The one error check-model's own code raises: bad input, said in one line."""

from __future__ import annotations


class Fatal(Exception):
    """Bad input: the message is the one line the user sees."""
