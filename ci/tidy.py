#!/usr/bin/env python3
"""Sluice's tidy check (style.md §3.7), Python 3 standard library only.

usage: ci/tidy.py ROOT [--update-baseline]

Over the C++ sources under ROOT/core, ROOT/net, ROOT/sim and ROOT/cli it
  - fails on a line over 120 columns and on a tab character;
  - fails on a function longer than 70 lines unless ci/tidy-baseline.txt lists it at that length or more: a
    ratchet in TigerBeetle's manner, where known long functions may shrink but never grow, and no new one may
    appear. A baselined function that shrank below the limit or vanished is reported as removable (no failure);
  - reports (no failure) a file over 600 lines.
--update-baseline rewrites ci/tidy-baseline.txt with the long functions found now.

Function lengths come from brace matching, not a parser: comments, string and character literals and
preprocessor lines are blanked first; then a `{` at namespace or class level whose header has a parameter list
(and no top-level `=`, which would make it an initializer or a lambda) opens a function body. A function's
length runs from the first line of its declaration to the line of its closing brace, both included.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass

MAX_FUNCTION_LINES = 70
MAX_COLUMNS = 120
MAX_FILE_LINES = 600
SOURCE_DIRS = ("core", "net", "sim", "cli")
CPP_SUFFIXES = (".h", ".hh", ".hpp", ".cc", ".cpp", ".cxx", ".ipp", ".inl")
BASELINE = os.path.join("ci", "tidy-baseline.txt")

IDENT_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
STRING_PREFIXES = ("", "u8", "u", "U", "L")


@dataclass
class Function:
    path: str
    name: str
    start_line: int
    end_line: int

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


# --- Stripping: comments, literals and preprocessor lines become blanks; line breaks stay where they were. ---


def _identifier_before(text: str, i: int) -> str:
    j = i
    while j > 0 and text[j - 1] in IDENT_CHARS:
        j -= 1
    return text[j:i]


def strip_code(text: str) -> str:
    """Blanks comments and literal contents (keeping the quotes) so that braces in them do not count."""
    out: list[str] = []
    i, n = 0, len(text)

    def blank(segment: str) -> str:
        return "".join(c if c == "\n" else " " for c in segment)

    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            prefix = _identifier_before(text, i)
            if prefix.endswith("R") and prefix[:-1] in STRING_PREFIXES:
                open_paren = text.find("(", i)
                delimiter = text[i + 1:open_paren] if open_paren >= 0 else ""
                close = text.find(")" + delimiter + '"', open_paren + 1) if open_paren >= 0 else -1
                j = n if close < 0 else close + len(delimiter) + 2
            else:
                j = i + 1
                while j < n and text[j] not in '"\n':
                    j += 2 if text[j] == "\\" else 1
                j = min(j + 1, n)
            out.append('"' + blank(text[i + 1:j - 1]) + '"')
            i = j
        elif c == "'" and (i == 0 or text[i - 1] not in IDENT_CHARS or _identifier_before(text, i) in STRING_PREFIXES):
            # A character literal; a ' after a digit or letter is a digit separator (1'000'000).
            j = i + 1
            while j < n and text[j] not in "'\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append("'" + blank(text[i + 1:j - 1]) + "'")
            i = j
        else:
            out.append(c)
            i += 1
    return blank_preprocessor("".join(out))


def blank_preprocessor(text: str) -> str:
    lines = text.split("\n")
    continued = False
    for k, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[k] = " " * len(line)
    return "\n".join(lines)


# --- Function finding. ---

ACCESS_RE = re.compile(r"\b(public|private|protected)\s*:(?!:)")
ATTRIBUTE_RE = re.compile(r"\[\[.*?\]\]", re.S)
OPERATOR_RE = re.compile(
    r"\boperator\s*(\(\s*\)|\[\s*\]|<=>|<<=|>>=|<<|>>|->\*?|&&|\|\||\+\+|--|[-+*/%^&|~!=<>]=?|,"
    r"|\bnew\b(\s*\[\s*\])?|\bdelete\b(\s*\[\s*\])?|\"\"\s*\w+|[\w:]+(\s*[*&]+)?)"
)
NAMESPACE_RE = re.compile(r"^(inline\s+)?namespace\b|^extern\s*\"\s*\"$")
CLASS_RE = re.compile(r"\b(class|struct|union)\b")
CLASS_NAME_RE = re.compile(r"\b(?:class|struct|union)\s+(?:alignas\s*\(\)\s*)?([A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)")
ENUM_RE = re.compile(r"\benum\b")
NAME_RE = re.compile(r"(~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*)\s*$")


def remove_template_prefixes(header: str) -> str:
    """Drops `template <...>` prefixes, matching the angle brackets."""
    while True:
        m = re.match(r"\s*template\s*<", header)
        if not m:
            return header
        depth, i = 1, m.end()
        while i < len(header) and depth > 0:
            depth += {"<": 1, ">": -1}.get(header[i], 0)
            i += 1
        header = header[i:]


def top_level(header: str) -> str:
    """The header with each (...) and [...] group reduced to "()" and each template <...> argument list dropped."""
    out: list[str] = []
    depth, angle = 0, 0
    for i, c in enumerate(header):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
            if depth == 0 and angle == 0:
                out.append("()")
        elif depth > 0:
            continue
        elif c == "<" and _identifier_before(header, i):
            angle += 1
        elif c == ">" and angle > 0:
            angle -= 1
        elif angle == 0:
            out.append(c)
    return "".join(out)


def drop_template_arguments(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"<[^<>()]*>", "", text)
    return text


def function_name(header: str) -> str | None:
    """The (qualified) name before the first top-level parameter list, or None when there is none."""
    depth, angle = 0, 0
    for i, c in enumerate(header):
        if c == "(":
            if depth == 0 and angle == 0:
                m = NAME_RE.search(drop_template_arguments(header[:i]))
                return re.sub(r"\s+", "", m.group(1)) if m else None
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == "<" and depth == 0 and _identifier_before(header, i):
            angle += 1
        elif c == ">" and depth == 0 and angle > 0:
            angle -= 1
    return None


def classify(raw_header: str) -> tuple[str, str | None]:
    """What a `{` opens, from the text before it: ("namespace"|"class"|"function"|"other", function name)."""
    header = ATTRIBUTE_RE.sub(" ", ACCESS_RE.sub(" ", raw_header)).strip()
    if NAMESPACE_RE.search(header):
        return "namespace", None
    header = remove_template_prefixes(header).strip()
    # Operator names hold (, =, < and >; a placeholder name keeps them from reading as syntax.
    operators: dict[str, str] = {}

    def placeholder(m: re.Match) -> str:
        symbol = re.sub(r"\s+", " ", m.group(1)).strip()
        key = "operator_%d_" % len(operators)
        operators[key] = "operator" + (" " + symbol if symbol[0] in IDENT_CHARS else symbol)
        return key

    header = OPERATOR_RE.sub(placeholder, header)
    before_paren = header.split("(", 1)[0]
    if ENUM_RE.search(before_paren):
        return "other", None
    if CLASS_RE.search(before_paren):
        m = CLASS_NAME_RE.search(top_level(header))
        return "class", re.sub(r"\s+", "", m.group(1)) if m and m.group(1) not in ("final", "alignas") else None
    if "(" not in header or re.search(r"(?<![=!<>])=(?!=)", top_level(header)):
        return "other", None
    name = function_name(header)
    if name is None:
        return "other", None
    for key, original in operators.items():
        name = name.replace(key, original)
    return "function", name


QUALIFIER_END_RE = re.compile(r"\b(const|volatile|noexcept|override|final|mutable|try)\s*$")
INIT_LIST_RE = re.compile(r"\(\)[^:]*?(?<!:):(?!:)")
LEADING_ACCESS_RE = re.compile(r"(\s*(public|private|protected)\s*:(?!:))*\s*")


def opens_brace_initializer(header: str) -> bool:
    """True for the `{` of a member brace-initializer such as `b_{x}` in `Foo() : a_(1), b_{x} {`."""
    before = header.rstrip()
    if not before or not (before[-1] in IDENT_CHARS or before[-1] == ">") or QUALIFIER_END_RE.search(before):
        return False
    flat = top_level(header)
    return INIT_LIST_RE.search(flat) is not None and not CLASS_RE.search(flat.split("(", 1)[0])


def find_functions(path: str, code: str) -> list[Function]:
    functions: list[Function] = []
    # Each scope is (kind, first line, function or class name); declarations are read only at namespace and class
    # level. A function defined inside a class is named with the class: Foo::Bar::run.
    scopes: list[tuple[str, int, str]] = [("namespace", 0, "")]
    header: list[str] = []
    header_lines: list[int] = []
    line = 1
    init_depth = 0  # open braces of a member brace-initializer in a constructor's initializer list
    for c in code:
        if c == "\n":
            line += 1
        kind = scopes[-1][0]
        if kind not in ("namespace", "class"):
            if c == "{":
                scopes.append(("block", line, ""))
            elif c == "}":
                closed = scopes.pop()
                if closed[0] == "function":
                    functions.append(Function(path, closed[2], closed[1], line))
            continue
        if init_depth > 0 or (c == "{" and opens_brace_initializer("".join(header))):
            init_depth += {"{": 1, "}": -1}.get(c, 0)
            header.append(c)
            header_lines.append(line)
            continue
        if c == "{":
            text = "".join(header)
            what, name = classify(text)
            if what == "function":
                start = LEADING_ACCESS_RE.match(text).end()
                classes = [scope[2] for scope in scopes if scope[0] == "class" and scope[2]]
                qualified = "::".join(classes + [name or ""])
                scopes.append(("function", header_lines[start] if start < len(text) else line, qualified))
            elif what in ("namespace", "class"):
                scopes.append((what, line, name or ""))
            else:
                scopes.append(("block", line, ""))
            header, header_lines = [], []
        elif c == "}":
            if len(scopes) > 1:
                scopes.pop()
            header, header_lines = [], []
        elif c == ";":
            header, header_lines = [], []
        else:
            header.append(c)
            header_lines.append(line)
    return functions


def number_overloads(functions: list[Function]) -> None:
    """A name defined more than once in one file gets #2, #3... in order of appearance, so keys stay unique."""
    seen: dict[str, int] = {}
    for f in functions:
        seen[f.name] = seen.get(f.name, 0) + 1
        if seen[f.name] > 1:
            f.name = "%s#%d" % (f.name, seen[f.name])


# --- The checks. ---


def source_files(root: str) -> list[str]:
    found = []
    for top in SOURCE_DIRS:
        for directory, subdirs, files in os.walk(os.path.join(root, top)):
            subdirs.sort()
            for name in sorted(files):
                if name.endswith(CPP_SUFFIXES):
                    found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return found


def read_baseline(path: str) -> dict[tuple[str, str], int]:
    baseline: dict[tuple[str, str], int] = {}
    if not os.path.exists(path):
        return baseline
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            entry = raw.strip()
            if not entry or entry.startswith("#"):
                continue
            file_path, _, rest = entry.partition(":")
            name, _, lines = rest.rpartition(":")
            if not file_path or not name or not lines.isdigit():
                raise SystemExit(
                    "%s:%d: malformed baseline entry (want path:function_name:lines): %s" % (path, number, entry)
                )
            baseline[(file_path, name)] = int(lines)
    return baseline


def write_baseline(path: str, long_functions: list[Function]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("# Functions over %d lines that ci/tidy.py tolerates: path:function_name:lines.\n" % MAX_FUNCTION_LINES)
        f.write("# They may shrink, never grow, and none may join. Rewrite: python3 ci/tidy.py . --update-baseline\n")
        for fn in sorted(long_functions, key=lambda fn: (fn.path, fn.name)):
            f.write("%s:%s:%d\n" % (fn.path, fn.name, fn.lines))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="the repository root")
    parser.add_argument("--update-baseline", action="store_true", help="rewrite %s from the current tree" % BASELINE)
    args = parser.parse_args(argv)
    root = args.root
    baseline_path = os.path.join(root, BASELINE)

    errors: list[str] = []
    notes: list[str] = []
    all_functions: list[Function] = []
    files = source_files(root)
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        for number, line in enumerate(lines, 1):
            if "\t" in line:
                errors.append("%s:%d: tab character (indent with spaces)" % (rel, number))
            if len(line) > MAX_COLUMNS:
                errors.append("%s:%d: line is %d columns, over %d" % (rel, number, len(line), MAX_COLUMNS))
        if len(lines) > MAX_FILE_LINES:
            notes.append("%s: %d lines, over %d: consider splitting the file" % (rel, len(lines), MAX_FILE_LINES))
        functions = find_functions(rel, strip_code(text))
        number_overloads(functions)
        all_functions.extend(functions)

    long_functions = [fn for fn in all_functions if fn.lines > MAX_FUNCTION_LINES]
    if args.update_baseline:
        write_baseline(baseline_path, long_functions)
        print("tidy: wrote %d entries to %s" % (len(long_functions), BASELINE))
    baseline = read_baseline(baseline_path)

    current = {(fn.path, fn.name): fn for fn in all_functions}
    for fn in long_functions:
        allowed = baseline.get((fn.path, fn.name))
        where = "%s:%d: function %s is %d lines" % (fn.path, fn.start_line, fn.name, fn.lines)
        if allowed is None:
            errors.append("%s, over %d: split it (the baseline holds only old ones)" % (where, MAX_FUNCTION_LINES))
        elif fn.lines > allowed:
            errors.append("%s: it grew past its baseline of %d lines; shrink it" % (where, allowed))
        elif fn.lines < allowed:
            notes.append("%s, under its baseline of %d: lower it with --update-baseline" % (where, allowed))
    for (path, name), allowed in sorted(baseline.items()):
        fn = current.get((path, name))
        if fn is None:
            notes.append("%s:%s:%d can be removed from baseline (the function is gone)" % (path, name, allowed))
        elif fn.lines <= MAX_FUNCTION_LINES:
            notes.append("%s:%s:%d can be removed from baseline (now %d lines)" % (path, name, allowed, fn.lines))

    for note in notes:
        print("note: " + note)
    for error in errors:
        print("error: " + error)
    print(
        "tidy: %s: %d files, %d functions, %d over %d lines (%d in baseline), %d errors, %d notes"
        % ("FAILED" if errors else "ok", len(files), len(all_functions), len(long_functions), MAX_FUNCTION_LINES,
           len(baseline), len(errors), len(notes))
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
