"""File formats: BIF networks, GOBNILP ``.dat`` data and UAI competition models."""
from . import bif, dat, uai

__all__ = ["bif", "dat", "uai"]
