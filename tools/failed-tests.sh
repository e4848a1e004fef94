#!/bin/sh
# failed-tests.sh BUILD_DIR: what each test that failed in BUILD_DIR's last
# ctest run printed, in short, for the very end of ./run-tests' output. CI
# keeps only the last part of a run's output, which is otherwise ctest's
# summary naming the test and nothing of why: here, per failed test, its
# failing check lines (FAIL:, gtest's Failure and FAILED) and its last lines.
set -eu
[ $# -eq 1 ] || { echo "usage: failed-tests.sh BUILD_DIR" >&2; exit 64; }
dir=$1/Testing/Temporary
[ -s "$dir/LastTestsFailed.log" ] || exit 0
log=$dir/LastTest.log
[ -r "$log" ] || { echo "failed-tests: no $log" >&2; exit 0; }
echo
echo "=== why: what each failed test printed (the whole of it: $log)"
cut -d: -f2- "$dir/LastTestsFailed.log" | while IFS= read -r name; do
    echo "--- $name"
    awk -v name="$name" '
        $2 == "Test:" && $3 == name { found = 1; next }
        found && !out && /^Output:/ { out = 1; getline; next }
        found && out && /^<end of output>/ { exit }
        found && out { line[n++] = $0 }
        END {
            if (!found) { print "(not in the log)"; exit }
            shown = 0
            for (i = 0; i < n && shown < 30; i++)
                if (line[i] ~ /FAIL|Failure|Timeout|[Ee]rror:|SKIP/) { print line[i]; shown++ }
            print "... its last lines:"
            for (i = (n > 12 ? n - 12 : 0); i < n; i++) print line[i]
        }' "$log"
done
