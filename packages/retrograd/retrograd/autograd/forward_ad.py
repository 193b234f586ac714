"""``retrograd.autograd.forward_ad``: the retrograd-forward-ad distribution
under torch's path, so that ``import retrograd.autograd.forward_ad as fwAD``
works as ``import torch.autograd.forward_ad as fwAD`` does.

This module replaces itself in ``sys.modules`` with ``retrograd.forward_ad``:
both names are one module object. Without the distribution, importing it
raises an ImportError that names what to install.
"""
import sys

from retrograd import _optional

sys.modules[__name__] = _optional.require("forward_ad", "retrograd-forward-ad")
