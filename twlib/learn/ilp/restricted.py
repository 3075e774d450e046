"""The helper process of :func:`twlib.learn.ilp.solve`: the programme over a few families.

``python -m twlib.learn.ilp.restricted TASK ANSWER`` reads the pickled task (the
restricted :class:`~twlib.scores.ParentSetScores`, a start, seconds), solves the
programme over those families only, and pickles the network's parents to ``ANSWER``.
"""
from __future__ import annotations

import os
import pickle
import sys

from .programme import solve


def main(task_path: str, answer_path: str) -> None:
    with open(task_path, "rb") as src:
        task = pickle.load(src)
    res = solve(task["scores"], time_limit=max(task["seconds"], 1.0), start=task["start"],
                helper_share=0)
    with open(answer_path + ".part", "wb") as out:
        pickle.dump(res.parents, out)
    os.replace(answer_path + ".part", answer_path)


if __name__ == "__main__":
    main(*sys.argv[1:3])
