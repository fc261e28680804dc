"""Print the README's code blocks of one language (``sh``, ``python``), for .ci/run to run them
verbatim: ``python .ci/readme.py sh 0`` prints the first ``sh`` block, ``python .ci/readme.py
python`` every ``python`` block."""

import pathlib
import re
import sys

blocks = re.findall(rf"```{re.escape(sys.argv[1])}\n(.*?)```", (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(), re.S)
if not blocks:
    sys.exit(f"README.md has no ```{sys.argv[1]} block")
print(blocks[int(sys.argv[2])] if len(sys.argv) > 2 else "\n".join(blocks))
