"""The interface every search of the MPE portfolio implements.

An engine searches the same flat tables (:mod:`twlib.inference.flat`) as the
others and shares their incumbent: ``scalars[0]`` holds its value and ``best``
its assignment, one pair of arrays passed to every engine of a run, so that an
assignment found by any of them prunes in all.  Its state lives in arrays, so a
compiled loop can stop after a budget of work and resume where it stopped; the
scheduler (:mod:`twlib.inference.portfolio`) gives each engine turns of time.

==============  ==================================================================
member          meaning
==============  ==================================================================
``name``        the engine's name in the scheduler and in a result's stats
``reset()``     back to the root, forgetting what it proved (the tables may
                have changed; the incumbent is the caller's)
``run(budget)`` work for up to ``budget`` units (nodes, LP tests, kicks);
                returns how many it did
``incumbent``   the value of the best assignment it knows
``bound()``     a proved upper bound on the optimum: ``inf`` when it proves none
``finished``    it has proved the incumbent optimal
``stalled``     it cannot go on (a store is full) and has not finished
``work_done``   units done since the reset
==============  ==================================================================

>>> from twlib.inference.dive import DiveSearch
>>> issubclass(DiveSearch, Engine)
True
"""
from __future__ import annotations

import numpy as np

__all__ = ["Engine"]


class Engine:
    """Base class of the portfolio's searches (see the module).  A subclass
    implements :meth:`reset` and :meth:`run`; the defaults read the shared
    incumbent from ``self.scalars[0]``, finished from ``self.state[FINISHED]``
    and prove nothing."""

    name = ""
    FINISHED = 1            # the index of the finished flag in ``state``

    def reset(self) -> None:
        raise NotImplementedError

    def run(self, budget: int) -> int:
        raise NotImplementedError

    @property
    def incumbent(self) -> float:
        return float(self.scalars[0])

    def bound(self) -> float:
        return np.inf

    @property
    def finished(self) -> bool:
        return bool(self.state[self.FINISHED])

    @property
    def stalled(self) -> bool:
        return False

    @property
    def work_done(self) -> int:
        return 0
