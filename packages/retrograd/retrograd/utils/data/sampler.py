"""Samplers: the orders in which a DataLoader visits a dataset."""

__all__: list[str] = []
