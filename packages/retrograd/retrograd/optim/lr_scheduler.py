"""rg.optim.lr_scheduler: learning-rate schedules."""

__all__: list[str] = []
