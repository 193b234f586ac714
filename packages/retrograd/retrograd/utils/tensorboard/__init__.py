"""rg.utils.tensorboard: SummaryWriter, as torch.utils.tensorboard.

The writer writes TensorBoard's event files with the ``tensorboard``
package's protocol buffers and event-file writer; install it with
``pip install tensorboard``. Importing this module does not need it;
constructing a :class:`SummaryWriter` without it raises ImportError.
"""
from retrograd.utils.tensorboard.writer import SummaryWriter

__all__ = ["SummaryWriter"]
