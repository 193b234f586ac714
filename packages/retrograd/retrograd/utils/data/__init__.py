"""rg.utils.data: datasets and the DataLoader, as torch.utils.data."""
from retrograd.utils.data.dataset import *  # noqa: F401,F403
from retrograd.utils.data.sampler import *  # noqa: F401,F403
from retrograd.utils.data.dataloader import *  # noqa: F401,F403
from retrograd.utils.data import dataset as _dataset, sampler as _sampler, dataloader as _dataloader

__all__ = [*_dataset.__all__, *_sampler.__all__, *_dataloader.__all__]
del _dataset, _sampler, _dataloader
