"""bench/rules_speed.py runs and ends with the line other implementations are compared by."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_rules_speed_last_line():
    result = subprocess.run([sys.executable, "bench/rules_speed.py", "--games", "5", "--positions", "2"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"games_per_s=\d+ analysis_us=\d+", result.stdout.splitlines()[-1])
