"""PyTorch for the trainer's modules, or an ImportError that says how to install it.

Every torch module of :mod:`levysde.rnn` imports ``torch`` from here, so a missing torch is
always the same one-line message (``pip install 'levysde[rnn]'``).
"""
from __future__ import annotations

from levysde.rnn import INSTALL_HINT

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as exc:  # exercised in a subprocess test without torch
    raise ImportError(INSTALL_HINT) from exc

__all__ = ["torch", "nn", "F"]
