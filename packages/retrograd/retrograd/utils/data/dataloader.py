"""DataLoader and the default collate."""

__all__: list[str] = []
