"""rollout_steps.csv of one run folder, for the step-counting scripts
(reply-echo.py, coderepair-steps.py), which run by path and so import this
from their own folder."""

import csv
import os


def read_steps(folder, env):
    """The folder's step rows; a run of another environment is refused by
    name, since each script counts what only its environment writes."""
    path = os.path.join(folder, "rollout_steps.csv")
    with open(path, newline="") as f:
        steps = list(csv.DictReader(f))
    if steps and steps[0]["env"] != env:
        raise SystemExit(f"{path}: env {steps[0]['env']!r}, want {env}")
    return steps
