#!/usr/bin/env python3
"""ctest-replay.py: times ctest's scheduling of this suite, without its tests.

Usage: tools/ctest-replay.py BUILD_DIR COST_DATA SCALE [JOBS]

Writes a throwaway CMake project in which each test of BUILD_DIR (as
`ctest --show-only=json-v1` lists it, with its COST, PROCESSORS,
RUN_SERIAL and RESOURCE_LOCK) is `sleep` for SCALE times the seconds
COST_DATA (a Testing/Temporary/CTestCostData.txt, e.g. a fresh clone's
after `.ci/run`) records for it, then runs it as ./run-tests does
(`ctest -j JOBS`, default twice the cores) in a build directory with no
timing data, as in a fresh clone, and prints the wall time. The same
COST_DATA against two BUILD_DIRs (before and after a change of test
properties), run side by side, compares the schedules
(docs/PERFORMANCE.md, "Where CI's time goes"). Each test also costs
ctest a process start, which the sleeps do not scale: compare runs of one
SCALE only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    build, cost_file, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
    jobs = sys.argv[4] if len(sys.argv) == 5 else str(2 * os.cpu_count())
    listed = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=build,
                                       check=True, capture_output=True, text=True).stdout)
    cost = {}
    with open(cost_file) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 3:
                cost[fields[0]] = float(fields[2])
    lines = ["cmake_minimum_required(VERSION 3.25)", "project(replay NONE)", "enable_testing()"]
    for i, test in enumerate(listed["tests"]):
        name = test["name"]
        # A parameterized gtest's listed name carries "  # GetParam() = ...".
        bare = name.split("  #")[0]
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        seconds = cost.get(bare, cost.get(name, 0.0)) * scale
        tname = "t%04d_%s" % (i, re.sub(r"[^A-Za-z0-9_.]", "_", bare))
        lines.append("add_test(NAME %s COMMAND sleep %.4f)" % (tname, seconds))
        kept = []
        for key in ("COST", "PROCESSORS", "RUN_SERIAL", "RESOURCE_LOCK"):
            if key not in props:
                continue
            value = props[key]
            if isinstance(value, list):
                value = '"%s"' % ";".join(value)
            elif isinstance(value, bool):
                value = "TRUE" if value else "FALSE"
            elif key == "COST":
                value = "%g" % (value * scale)
            kept.append("%s %s" % (key, value))
        if kept:
            lines.append("set_tests_properties(%s PROPERTIES %s)" % (tname, " ".join(kept)))
    with tempfile.TemporaryDirectory(prefix="hb-ctest-replay-") as work:
        with open(os.path.join(work, "CMakeLists.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run(["cmake", "-S", work, "-B", work + "/b"], check=True,
                       stdout=subprocess.DEVNULL)
        start = time.monotonic()
        subprocess.run(["ctest", "-j", jobs, "-Q"], cwd=work + "/b", check=True)
        print("%d tests, scale %g, ctest -j %s: %.1f s" %
              (len(listed["tests"]), scale, jobs, time.monotonic() - start))


main()
