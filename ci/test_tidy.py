#!/usr/bin/env python3
"""Tests ci/tidy.py on trees planted in temporary directories.

usage: ci/test_tidy.py ROOT    (runs ROOT/ci/tidy.py; Python 3 standard library only)
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import traceback

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
TIDY = os.path.join(ROOT, "ci", "tidy.py")

_spec = importlib.util.spec_from_file_location("tidy", TIDY)
tidy = importlib.util.module_from_spec(_spec)
sys.modules["tidy"] = tidy  # dataclasses look the module up by name
_spec.loader.exec_module(tidy)


def function(name: str, lines: int, signature: str = "int {name}(int x) {{") -> str:
    """A C++ function of exactly `lines` lines, from its signature line to its closing brace."""
    assert lines >= 3
    body = ["  x += %d;" % i for i in range(lines - 3)]
    return "\n".join([signature.format(name=name)] + body + ["  return x;", "}"]) + "\n"


def run_tidy(files: dict[str, str], baseline: str | None = None, *extra: str) -> tuple[int, str, str]:
    """Plants `files` (path -> text) and an optional baseline in a fresh tree and runs tidy.py on it."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        if baseline is not None:
            os.makedirs(os.path.join(root, "ci"), exist_ok=True)
            with open(os.path.join(root, "ci", "tidy-baseline.txt"), "w", encoding="utf-8") as f:
                f.write(baseline)
        result = subprocess.run([sys.executable, TIDY, root, *extra], capture_output=True, text=True, timeout=60)
        baseline_after = ""
        baseline_path = os.path.join(root, "ci", "tidy-baseline.txt")
        if os.path.exists(baseline_path):
            with open(baseline_path, encoding="utf-8") as f:
                baseline_after = f.read()
        return result.returncode, result.stdout + result.stderr, baseline_after


def functions_in(text: str) -> dict[str, int]:
    found = tidy.find_functions("core/x.cc", tidy.strip_code(text))
    tidy.number_overloads(found)
    return {fn.name: fn.lines for fn in found}


def expect(condition: bool, what: str, output: str = "") -> None:
    if not condition:
        raise AssertionError(what + ("\n--- output ---\n" + output if output else ""))


# --- The ratchet, end to end. ---


def test_75_line_function_fails():
    code, out, _ = run_tidy({"core/a.cc": function("long_one", 75)})
    expect(code == 1, "a 75-line function must fail", out)
    expect("core/a.cc:1: function long_one is 75 lines" in out, "the error must name file, line and function", out)


def test_60_line_function_passes():
    code, out, _ = run_tidy({"core/a.cc": function("fine", 60), "net/b.cc": function("also_fine", 70)})
    expect(code == 0, "60- and 70-line functions must pass", out)


def test_baselined_long_function_passes():
    code, out, _ = run_tidy({"sim/a.cc": function("legacy", 75)}, "# comment\n\nsim/a.cc:legacy:75\n")
    expect(code == 0, "a baselined function at its baseline length must pass", out)


def test_baselined_function_that_grew_fails():
    code, out, _ = run_tidy({"sim/a.cc": function("legacy", 80)}, "sim/a.cc:legacy:75\n")
    expect(code == 1, "a baselined function that grew must fail", out)
    expect("grew past its baseline of 75" in out, "the error must say it grew", out)


def test_baselined_function_that_shrank_or_vanished_is_a_note():
    files = {"core/a.cc": function("legacy", 50)}
    code, out, _ = run_tidy(files, "core/a.cc:legacy:90\ncore/gone.cc:old:100\n")
    expect(code == 0, "shrinking or removing a baselined function must not fail", out)
    expect("core/a.cc:legacy:90 can be removed from baseline" in out, "a shrunk entry must be reported", out)
    expect("core/gone.cc:old:100 can be removed from baseline" in out, "a vanished entry must be reported", out)


def test_update_baseline_writes_long_functions():
    files = {"core/a.cc": function("b_long", 72) + function("a_long", 90) + function("short", 10)}
    code, out, baseline = run_tidy(files, None, "--update-baseline")
    expect(code == 0, "--update-baseline must leave a passing tree", out)
    entries = [line for line in baseline.splitlines() if line and not line.startswith("#")]
    expect(entries == ["core/a.cc:a_long:90", "core/a.cc:b_long:72"], "baseline entries: %r" % entries, out)


def test_130_column_line_fails():
    code, out, _ = run_tidy({"core/a.h": "// " + "x" * 127 + "\n"})
    expect(code == 1, "a 130-column line must fail", out)
    expect("core/a.h:1: line is 130 columns" in out, "the error must name the line", out)
    code, out, _ = run_tidy({"core/a.h": "// " + "x" * 117 + "\n"})
    expect(code == 0, "a 120-column line must pass", out)


def test_tab_fails():
    code, out, _ = run_tidy({"net/a.cc": "int f() {\n\treturn 1;\n}\n"})
    expect(code == 1 and "net/a.cc:2: tab character" in out, "a tab must fail", out)


def test_long_file_is_a_note():
    code, out, _ = run_tidy({"core/big.cc": "".join(function("f%d" % i, 10) for i in range(61))})
    expect(code == 0, "a long file must not fail", out)
    expect("core/big.cc: 610 lines, over 600" in out, "a long file must be reported", out)


def test_other_directories_are_ignored():
    code, out, _ = run_tidy({"tests/a.cc": function("test_body", 200), "core/ok.cc": function("f", 5)})
    expect(code == 0, "only core/, net/ and sim/ are checked", out)


# --- Brace matching. ---


def test_braces_in_comments_and_strings_do_not_count():
    text = textwrap.dedent(
        """\
        // A comment with an open brace: {
        /* and a block comment with more {{{
           over two lines { */
        int a(int x) {
          const char* open = "{{{ \\" {";  // }
          char c = '{';
          const char* raw = R"json({"a": {"b": 1})json";
          int million = 1'000'000;  /* } */
          return x + c + million;
        }
        """
    )
    text += function("b", 40) + "const char* kText = \"}}}\";\n" + function("c", 40)
    expect(functions_in(text) == {"a": 7, "b": 40, "c": 40}, "functions: %r" % functions_in(text))
    code, out, _ = run_tidy({"core/a.cc": text})
    expect(code == 0, "braces in comments and strings must not make a function look long", out)


def test_classes_namespaces_and_initializers():
    text = textwrap.dedent(
        """\
        #include <vector>
        #define BODY { {
        namespace sluice {
        namespace {
        const int kTable[] = {1, 2, 3};
        auto kLambda = [](int x) { return x; };
        }  // namespace

        template <class T>
        class Holder final : public Base<T> {
         public:
          Holder(int a, int b) : a_(a), b_{b}, v_{1, 2} {
            a_ += 1;
          }
          bool operator<(const Holder& other) const { return a_ < other.a_; }
          Holder& operator=(const Holder&) = default;
          std::vector<int> values() const
          {
            return v_;
          }

         private:
          struct Inner {
            int get() { return 1; }
          };
          int a_ = 0;
          int b_{0};
          std::vector<int> v_;
        };

        int Holder<int>::outside(std::function<void(int)> f) {
          return 0;
        }

        enum class Kind : int { kA, kB };
        extern "C" {
        int c_function(void) { return 0; }
        }
        }  // namespace sluice
        """
    )
    found = functions_in(text)
    want = {
        "Holder::Holder": 3,
        "Holder::operator<": 1,
        "Holder::values": 4,
        "Holder::Inner::get": 1,
        "Holder::outside": 3,
        "c_function": 1,
    }
    expect(found == want, "functions: %r, want %r" % (found, want))


def test_overloads_get_numbered():
    text = function("f", 5) + function("f", 80, "int {name}(double x) {{")
    expect(functions_in(text) == {"f": 5, "f#2": 80}, "functions: %r" % functions_in(text))


def main() -> int:
    tests = [(name, test) for name, test in sorted(globals().items()) if name.startswith("test_") and callable(test)]
    failed = 0
    for name, test in tests:
        try:
            test()
        except Exception:  # a failed expectation or a crash in tidy.py: both are failures
            failed += 1
            print("FAIL %s" % name)
            traceback.print_exc()
    passed = len(tests) - failed
    print("tidy tests: %d passed%s" % (passed, ", %d failed" % failed if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
