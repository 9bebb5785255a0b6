"""`python -m cadclip ...` runs the cadclip command this package was built with
(cadclip/bin/cadclip), so that a venv with the package has the command too."""

import os
import sys

from . import executable


def main() -> None:
    binary = executable()
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"the cadclip executable {binary} is missing; reinstall the package "
                         "(make build)")
    sys.stdout.flush()
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
