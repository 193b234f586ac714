"""rg.optim.Optimizer: the base class of the optimizers."""

__all__: list[str] = []
