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
if not _typing.TYPE_CHECKING:   # (type checkers keep flagging unknown names)
    def __getattr__(name: str) -> _typing.NoReturn:
        # a torch name retrograd deliberately lacks says so (the omissions
        # table, loaded on a miss only)
        import importlib
        raise importlib.import_module("retrograd._omissions").missing("torch.utils.data", __name__, name)
