"""``python -m grinch_env.web [--host H] [--port P]``: serve the page (see :mod:`grinch_env.web`)."""

import sys

from grinch_env.web import main

if __name__ == "__main__":
    sys.exit(main())
