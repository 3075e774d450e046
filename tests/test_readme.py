"""The README's code, as a newcomer runs it: every Python block in a fresh process."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    text = README.read_text()
    for match in re.finditer(r"```python\n(.*?)```", text, flags=re.S):
        yield text.count("\n", 0, match.start()) + 1, match.group(1)


@pytest.mark.parametrize("line, code", list(_blocks()), ids=lambda x: f"line {x}"
                         if isinstance(x, int) else "")
def test_every_python_block_of_the_readme_runs_in_a_fresh_process(line, code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=README.parent, timeout=600)
    assert done.returncode == 0, f"README.md, the block at line {line}:\n{done.stderr[-3000:]}"
