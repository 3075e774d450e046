"""File formats: BIF networks, GOBNILP ``.dat`` data and UAI competition models;
``text`` checks and decodes every file they read.  The submodules are imported
on first use."""
from ..lazy import on_first_use

__all__ = ["bif", "dat", "text", "uai"]
__getattr__, __dir__ = on_first_use(__name__, __all__, {})
