"""``python -m grinch_env.evaluation``: the evaluation command (:func:`grinch_env.evaluation.evaluate.main`)."""

import sys

from grinch_env.evaluation.evaluate import main

sys.exit(main())
