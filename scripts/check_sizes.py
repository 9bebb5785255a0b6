#!/usr/bin/env python3
"""Keeps the code in pieces a reader can hold: no function in src/, apps/ or
python/ longer than MAX_FUNCTION lines (lizard's length: from the line of its
name to its closing brace, blank lines and comments included), and no source
file (.cc, .h) in src/, apps/, python/ or include/ longer than MAX_FILE lines.
Prints each one over, with its size; exits 1 if there is any.

    python3 scripts/check_sizes.py    (make check runs it with the venv's python)
"""
import pathlib
import sys

import lizard

MAX_FUNCTION = 100
MAX_FILE = 800
ROOT = pathlib.Path(__file__).resolve().parent.parent


def sources(folders):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".cc", ".h") and path.is_file():
                yield path


def main():
    over = []
    files = 0
    functions = 0
    for path in sources(["src", "apps", "python", "include"]):
        files += 1
        lines = path.read_text(encoding="utf-8").count("\n")
        relative = path.relative_to(ROOT)
        if lines > MAX_FILE:
            over.append(f"{relative}: {lines} lines (at most {MAX_FILE} a file)")
        if relative.parts[0] == "include":
            continue
        for function in lizard.analyze_file(str(path)).function_list:
            functions += 1
            if function.length > MAX_FUNCTION:
                over.append(f"{relative}:{function.start_line}: {function.name} is "
                            f"{function.length} lines (at most {MAX_FUNCTION} a function)")
    for line in over:
        print(line, file=sys.stderr)
    if over:
        print(f"check_sizes: {len(over)} over; split them along their steps", file=sys.stderr)
        return 1
    print(f"check_sizes: {files} files, {functions} functions, none over "
          f"{MAX_FILE} / {MAX_FUNCTION} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
