#!/usr/bin/env python3
"""The executor's size, held to its budgets (docs/ARCHITECTURE.md, "Rooms").

count_executor_test.py --method SCRIPT: the counting script on a scratch tree
  whose figures are known: block comments over several lines, comment
  markers inside strings and raw strings, a header with and without a
  source of its own, an object of the toolchain's, a source the link did
  not take.
count_executor_test.py SCRIPT BUILD SOURCE CORE ALL: the real binary. The
  sources the script counts must be exactly the compile units whose debug
  information the binary carries (readelf, an account of the link the
  script does not read), and the core's and the whole set's code lines
  must be within CORE and ALL.
"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile


def load(script):
    spec = importlib.util.spec_from_file_location("count_executor", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)
    return full


# code lines: 7 (the include, the raw string's three lines, int a, the
# line after the block comment, the last); wc -l: 12.
SOURCE_A = r'''// a line comment
#include "executor/a.hpp"
/* a block comment
   over three lines */
const char* s = R"x(
// not a comment: inside a raw string
)x";
int a = 1;  /* a comment after code */

/*
 */ int b() {
    return 0; }
'''
HEADER_A = '''#pragma once
// a header of its own source: a's room
int b();
'''  # code 2, wc 3
HEADER_SHARED = '''/* shared.hpp: no source of its own */
const char* t = "/* not a comment */ // nor this";
'''  # code 1, wc 2
SOURCE_B = '''#include "ipc/shared.hpp"
int c() { return 0; }  // "a quote in a comment
'''  # code 2, wc 2
SOURCE_MAIN = '''#include "executor/a.hpp"

int main() { return b(); }
'''  # code 2, wc 3
UNLINKED = "int never_linked() { return 1; }\n"

MAP = '''Archive member included to satisfy reference by file (symbol)

libhb_executor_core.a(a.cpp.o)
                              CMakeFiles/hostbridge-executor.dir/main.cpp.o (b())
../ipc/libhb_ipc.a(b.cpp.o)   libhb_executor_core.a(a.cpp.o) (c())
/usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.a(new_op.o)
                              ../ipc/libhb_ipc.a(b.cpp.o) (operator new(unsigned long))

Discarded input sections

 .text          0x0000000000000000        0x0 CMakeFiles/hostbridge-executor.dir/main.cpp.o

Memory Configuration

Linker script and memory map

LOAD /usr/lib/x86_64-linux-gnu/crt1.o
LOAD CMakeFiles/hostbridge-executor.dir/main.cpp.o
LOAD libhb_executor_core.a
LOAD ../ipc/libhb_ipc.a
'''

# The pin binary's: its main, and b.cpp from hb_ipc (from engines/podman/).
PIN_MAP = '''Archive member included to satisfy reference by file (symbol)

../../ipc/libhb_ipc.a(b.cpp.o)
                              CMakeFiles/hostbridge-pin.dir/pin_main.cpp.o (c())

Linker script and memory map

LOAD CMakeFiles/hostbridge-pin.dir/pin_main.cpp.o
LOAD ../../ipc/libhb_ipc.a
'''


def check_method(script):
    module = load(script)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        src, build = os.path.join(tmp, "src"), os.path.join(tmp, "src", "build")
        a = write(src, "executor/a.cpp", SOURCE_A)
        ah = write(src, "executor/a.hpp", HEADER_A)
        shared = write(src, "ipc/shared.hpp", HEADER_SHARED)
        b = write(src, "ipc/b.cpp", SOURCE_B)
        main = write(src, "executor/main.cpp", SOURCE_MAIN)
        write(src, "executor/unlinked.cpp", UNLINKED)
        write(build, "executor/hostbridge-executor.map", MAP)
        objects = {
            "executor/CMakeFiles/hb_executor_core.dir/a.cpp.o": [a, ah, "/usr/include/stdio.h"],
            "executor/CMakeFiles/hostbridge-executor.dir/main.cpp.o": [main, ah],
            # Relative to the target's binary dir, as ccache's base_dir writes them.
            "ipc/CMakeFiles/hb_ipc.dir/b.cpp.o": ["../../ipc/b.cpp", "../../ipc/shared.hpp"],
            "executor/CMakeFiles/hb_executor_core.dir/unlinked.cpp.o":
                [os.path.join(src, "executor/unlinked.cpp")],
        }
        for obj, deps in objects.items():
            write(build, obj, "")
            write(build, obj + ".d", obj + ": " + " \\\n ".join(deps) + "\n")
        result = module.Counter(build, src).count()

        expect_rooms = {
            "hb_executor_core": {"code": 7 + 2, "wc": 12 + 3},
            "hostbridge-executor": {"code": 2, "wc": 3},
            "hb_ipc": {"code": 2 + 1, "wc": 2 + 2},
        }
        got = {r: {"code": e["code"], "wc": e["wc"]} for r, e in result["rooms"].items()}
        if got != expect_rooms:
            failures.append(f"rooms: expected {expect_rooms}, got {got}")
        if result["sources"] != ["executor/a.cpp", "executor/main.cpp", "ipc/b.cpp"]:
            failures.append(f"sources: {result['sources']}")
        if result["core"] != {"code": 11, "wc": 18}:
            failures.append(f"core: expected code 11, wc 18, got {result['core']}")
        if result["all"] != {"code": 14, "wc": 22}:
            failures.append(f"all: expected code 14, wc 22, got {result['all']}")
        # The budget is what the script's exit status says.
        for budget, status in (((11, 14), 0), ((10, 14), 1), ((11, 13), 1)):
            run = subprocess.run([sys.executable, script, build, src, "--budget",
                                  str(budget[0]), str(budget[1])], capture_output=True, text=True)
            if run.returncode != status:
                failures.append(f"--budget {budget}: exit {run.returncode}, expected {status}")
        # --binary: another binary's map, where its CMakeLists.txt wrote it;
        # its paths relative to that dir. It has no core.
        write(build, "engines/podman/hostbridge-pin.map", PIN_MAP)
        write(build, "engines/podman/CMakeFiles/hostbridge-pin.dir/pin_main.cpp.o", "")
        pin_main = write(src, "engines/podman/pin_main.cpp", SOURCE_MAIN)
        write(build, "engines/podman/CMakeFiles/hostbridge-pin.dir/pin_main.cpp.o.d",
              "x.o: " + pin_main + " " + ah + "\n")
        pin = module.Counter(build, src, "hostbridge-pin").count()
        got = {r: {"code": e["code"], "wc": e["wc"]} for r, e in pin["rooms"].items()}
        expect = {"hostbridge-pin": {"code": 2 + 2, "wc": 3 + 3}, "hb_ipc": {"code": 3, "wc": 4}}
        if got != expect:
            failures.append(f"--binary rooms: expected {expect}, got {got}")
        if pin["core"] != {"code": 0, "wc": 0} or pin["all"] != {"code": 7, "wc": 10}:
            failures.append(f"--binary: core {pin['core']}, all {pin['all']}")
        run = subprocess.run([sys.executable, script, build, src, "--binary", "hostbridge-pin"],
                             capture_output=True, text=True)
        if run.returncode != 0 or "all hostbridge-pin links" not in run.stdout:
            failures.append(f"--binary on the command line: {run.returncode} {run.stdout}")
        if module.Counter(build, src).count()["all"] != {"code": 14, "wc": 22}:
            failures.append("--binary's map changed the executor's count")
    return failures


def under_source(name, comp_dir, source):
    """A compile unit's path below SOURCE, or None. ccache's base_dir makes
    the name relative, and a cached object keeps the directory of the
    worktree that compiled it first: so a relative name is read without its
    leading ../, as the path below SOURCE it ends with."""
    if os.path.isabs(name):
        path = os.path.realpath(name)
        return os.path.relpath(path, source) if path.startswith(source + os.sep) else None
    parts = [p for p in os.path.normpath(name).split(os.sep) if p not in ("..", ".")]
    while parts:
        if os.path.isfile(os.path.join(source, *parts)):
            return os.path.join(*parts)
        parts = parts[1:]
    return None


def compile_units(binary, source):
    """Sources under SOURCE the binary's DWARF names as compile units."""
    out = subprocess.run(["readelf", "--debug-dump=info", "--dwarf-depth=1", binary],
                         capture_output=True, text=True, check=True).stdout
    units = set()
    unit = None  # the attributes of the compile unit being read
    for line in out.splitlines() + ["<0>: end"]:
        if re.match(r"\s*<0>", line):
            if unit and "name" in unit:
                path = under_source(unit["name"], unit.get("comp_dir", ""), source)
                if path:
                    units.add(path)
            unit = {} if "DW_TAG_compile_unit" in line else None
            continue
        m = re.match(r"\s*<[0-9a-f]+>\s+DW_AT_(name|comp_dir)\s*:\s*(?:\([^)]*\):\s*)?(.*)$", line)
        if unit is not None and m:
            unit.setdefault(m.group(1), m.group(2).strip())
    return units


def check_docs(result, source, pin):
    """docs/ARCHITECTURE.md shows these figures room by room, and says the
    privilege each room keeps in words (a regeneration of the figures once
    overwrote seven of those rows with numbers, and no test saw it)."""
    failures = []
    doc = open(os.path.join(source, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
    figures = {}
    pin_figures = {}
    privileges = {}
    in_privileges = False
    in_pin = False
    for line in doc.splitlines():
        if line.startswith("| room | privilege it keeps |"):
            in_privileges = True
            continue
        if line.startswith("| `hostbridge-pin` room"):
            in_pin = True  # its own table: the same room names, its own figures
            continue
        if not line.startswith("|"):
            in_privileges = in_pin = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`([^`]+)`", cells[0])
        if in_privileges:
            for name in names:
                privileges[name] = cells[1] if len(cells) > 1 else ""
        elif names and len(cells) >= 3 and re.fullmatch(r"[\d,]+", cells[1]):
            (pin_figures if in_pin else figures)[names[0]] = (cells[1], cells[2])
    def text(n):
        return f"{n:,}"
    for room, counted in sorted(result["rooms"].items()):
        want = (text(counted["code"]), text(counted["wc"]))
        if figures.get(room) != want:
            failures.append(f"ARCHITECTURE.md shows {room} as {figures.get(room)}, counted {want}")
        if room in ("hb_ipc", "hb_fds") or room in result["core_rooms"]:
            continue  # shared below every room, or the core's own row
        said = privileges.get(room, "")
        if not re.search(r"[A-Za-z]{3}", said):
            failures.append(f"ARCHITECTURE.md's privilege table says nothing in words of {room}: {said!r}")
    for room, counted in sorted(pin["rooms"].items()):
        want = (text(counted["code"]), text(counted["wc"]))
        if pin_figures.get(room) != want:
            failures.append(f"ARCHITECTURE.md's hostbridge-pin table shows {room} as "
                            f"{pin_figures.get(room)}, counted {want}")
    for label, total in (("the core", result["core"]), ("everything linked", result["all"]),
                         ("everything it links", pin["all"])):
        row = re.search(r"^\| \*\*" + label + r"\*\* \| \*\*([\d,]+)\*\* \| \*\*([\d,]+)\*\*", doc, re.M)
        want = (text(total["code"]), text(total["wc"]))
        if not row or row.groups() != want:
            failures.append(f"ARCHITECTURE.md shows {label} as {row.groups() if row else None}, counted {want}")
    return failures


def check_real(script, build, source, core_budget, all_budget):
    module = load(script)
    source = os.path.realpath(source)
    result = module.Counter(build, source).count()
    failures = []
    units = compile_units(os.path.join(build, "bin", "hostbridge-executor"), source)
    if not units:
        failures.append("the binary carries no compile unit of ours (built without -g?)")
    counted = set(result["sources"])
    if counted != units:
        failures.append(f"counted but not linked: {sorted(counted - units)}; "
                        f"linked but not counted: {sorted(units - counted)}")
    print(f"core {result['core']['code']} code lines ({result['core']['wc']} wc -l), "
          f"budget {core_budget}; all {result['all']['code']} ({result['all']['wc']} wc -l), "
          f"budget {all_budget}; {len(counted)} sources")
    if result["core"]["code"] > core_budget:
        failures.append(f"the core is {result['core']['code']} code lines, over {core_budget}")
    if result["all"]["code"] > all_budget:
        failures.append(f"everything linked is {result['all']['code']} code lines, over {all_budget}")
    # The pin binary, counted the same way: what moved out of the executor
    # is still counted, in its own binary (docs/ARCHITECTURE.md).
    pin = module.Counter(build, source, "hostbridge-pin").count()
    pin_units = compile_units(os.path.join(build, "bin", "hostbridge-pin"), source)
    if not pin_units or set(pin["sources"]) != pin_units:
        failures.append(f"hostbridge-pin: counted {sorted(pin['sources'])}, "
                        f"linked {sorted(pin_units)}")
    print(f"hostbridge-pin: {pin['all']['code']} code lines ({pin['all']['wc']} wc -l)")
    return failures + check_docs(result, source, pin)


def main(argv):
    if argv[:1] == ["--method"] and len(argv) == 2:
        failures = check_method(argv[1])
    elif len(argv) == 5:
        failures = check_real(argv[0], argv[1], argv[2], int(argv[3]), int(argv[4]))
    else:
        print(__doc__, file=sys.stderr)
        return 64
    for failure in failures:
        print("count_executor: " + failure)
    if not failures:
        print("count_executor: ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
