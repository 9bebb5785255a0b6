#!/usr/bin/env python3
"""Checks the layer ladder of docs/DESIGN.md in the includes, where CMake cannot:
a layer's sources and headers include cadclip headers of the layers below it
only, another layer's private headers (src/<layer>/*.h) only where SHARED
allows it, and third-party headers only where their layer owns them (OCCT in
cad and synth, FAISS and SQLite in index, cpp-httplib in serve, SentencePiece
in text; OCCT, FAISS and cpp-httplib never in public headers). Prints each
violation with its file and line; exits 1 if there is any."""
import pathlib
import re
import sys

BELOW = {
    "core": [],
    "data": ["core"],
    "cad": ["data"],
    # The synthetic data generator: its parts are modelled, featurized and
    # written through cad.
    "synth": ["cad"],
    "text": ["core"],
    "model": ["data", "text"],
    "eval": ["model"],
    "train": ["model", "eval"],
    "index": ["eval", "model", "cad"],
    "serve": ["index", "cad"],
    # The Python module (python/, beside apps): every layer but apps.
    "python": ["serve", "train", "index", "synth"],
}
# Private headers of one layer that a layer above may include, with who may.
# The cad layer's API over OCCT shapes serves the generator, which builds its
# parts as OCCT shapes; OCCT types never reach include/cadclip/.
SHARED = {"cad/occt_shape.h": {"synth"}}
# Where a layer's files live when not in include/cadclip/<layer> and src/<layer>.
SOURCES = {"python": "python"}
# Third-party headers and the layers allowed to include them (in .cc files only
# when `public` is False).
THIRD_PARTY = [
    (re.compile(r"\.hxx>"), {"cad", "synth"}, False, "Open CASCADE"),
    (re.compile(r"<faiss/"), {"index"}, False, "FAISS"),
    (re.compile(r"<sqlite3\.h>"), {"index"}, False, "SQLite"),
    (re.compile(r"<httplib\.h>"), {"serve"}, False, "cpp-httplib"),
    (re.compile(r"<sentencepiece"), {"text"}, False, "SentencePiece"),
]


def allowed(layer):
    seen, todo = {layer}, list(BELOW[layer])
    while todo:
        below = todo.pop()
        if below not in seen:
            seen.add(below)
            todo.extend(BELOW[below])
    return seen


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    problems = []
    include = re.compile(r'#include\s+[<"]cadclip/([a-z_]+)/')
    private = re.compile(r'#include\s+"(([a-z_]+)/[^"]+)"')
    for layer in BELOW:
        ok = allowed(layer)
        files = [(p, True) for p in (root / "include/cadclip" / layer).rglob("*.h")]
        sources = root / SOURCES.get(layer, f"src/{layer}")
        files += [(p, False) for p in sources.rglob("*") if p.suffix in (".h", ".cc")]
        for path, public in files:
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                where = f"{path.relative_to(root)}:{number}"
                m = include.search(line)
                if m and m.group(1) not in ok:
                    problems.append(f"{where}: layer '{layer}' includes layer '{m.group(1)}', "
                                    f"which is not below it (allowed: {sorted(ok)})")
                m = private.search(line)
                if (m and m.group(2) in BELOW and m.group(2) != layer
                        and layer not in SHARED.get(m.group(1), ())):
                    problems.append(f"{where}: layer '{layer}' includes '{m.group(1)}', a header "
                                    f"private to layer '{m.group(2)}' (shared ones: {SHARED})")
                for pattern, owners, public_ok, name in THIRD_PARTY:
                    if line.lstrip().startswith("#include") and pattern.search(line):
                        if layer not in owners:
                            problems.append(f"{where}: {name} belongs to layer(s) {sorted(owners)}, "
                                            f"not '{layer}'")
                        elif public and not public_ok:
                            problems.append(f"{where}: {name} types stay out of public headers; "
                                            f"move the include to a .cc file")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_layers: {len(problems)} violation(s)")
        return 1
    print("check_layers: every include respects the layer ladder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
