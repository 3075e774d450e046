"""File formats: BIF networks (``twlib.io.bif``) and GOBNILP ``.dat`` data (``twlib.io.dat``)."""
from . import bif, dat

__all__ = ["bif", "dat"]
