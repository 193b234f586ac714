"""Loss layers: CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCEWithLogitsLoss, HuberLoss."""

__all__: list[str] = []
