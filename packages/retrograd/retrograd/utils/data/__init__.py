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

import typing as _typing  # noqa: E402
if not _typing.TYPE_CHECKING:   # (a type checker would accept every name)
    from retrograd._missing import module_getattr as _module_getattr
    __getattr__ = _module_getattr("torch.utils.data", __name__)   # torch names retrograd lacks say why
