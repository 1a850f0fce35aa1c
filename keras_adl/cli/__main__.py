"""``python -m keras_adl.cli``: the ``keras-adl`` command."""

import sys

from keras_adl.cli import main

if __name__ == "__main__":
    sys.exit(main())
