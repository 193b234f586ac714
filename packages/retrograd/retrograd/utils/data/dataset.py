"""Datasets: Dataset, TensorDataset, Subset, random_split."""

__all__: list[str] = []
