"""AdamW."""

__all__: list[str] = []
