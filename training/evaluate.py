"""``python -m training.evaluate``: the evaluation command, kept at its old path (it lives in :mod:`grinch_env.evaluation.evaluate`)."""

import sys

from grinch_env.evaluation.evaluate import *  # noqa: F403 - the old module's names
from grinch_env.evaluation.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
