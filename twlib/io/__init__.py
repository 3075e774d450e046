"""File formats: BIF networks (``twlib.io.bif``)."""
from . import bif

__all__ = ["bif"]
