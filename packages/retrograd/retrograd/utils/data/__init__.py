"""rg.utils.data: datasets, samplers and the DataLoader, as torch.utils.data."""
from retrograd.utils.data import dataset, sampler, distributed, dataloader
from retrograd.utils.data.dataset import *  # noqa: F401,F403
from retrograd.utils.data.sampler import *  # noqa: F401,F403
from retrograd.utils.data.distributed import *  # noqa: F401,F403
from retrograd.utils.data.dataloader import *  # noqa: F401,F403

__all__: list[str] = []
__all__ += dataset.__all__
__all__ += sampler.__all__
__all__ += distributed.__all__
__all__ += dataloader.__all__
