"""``python -m keras_adl.cli``: the ``keras-adl`` command."""

import sys

from keras_adl.cli import main

sys.exit(main())
