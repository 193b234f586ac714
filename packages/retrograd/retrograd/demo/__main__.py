"""``python -m retrograd.demo``."""
