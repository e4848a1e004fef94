#!/usr/bin/env python3
# Writes display/marks.cpp, the combining marks (general categories Mn and
# Me) of the Unicode version python3's unicodedata knows, as runs:
#   python3 display/marks.py > display/marks.cpp && clang-format -i display/marks.cpp
import unicodedata

runs, start = [], None
for cp in range(0x110001):
    mark = cp < 0x110000 and unicodedata.category(chr(cp)) in ("Mn", "Me")
    if mark and start is None:
        start = cp
    elif not mark and start is not None:
        runs.append((start, cp - 1))
        start = None

print('#include "display/marks.hpp"\n')
print("#include <algorithm>\n#include <array>\n#include <utility>\n")
print("namespace hb::display {\nnamespace {\n")
print("// Unicode %s, general categories Mn and Me: the first and last code point" % unicodedata.unidata_version)
print("// of each run. Written by display/marks.py.")
print("constexpr std::array<std::pair<std::uint32_t, std::uint32_t>, %d> kMarks = {{" % len(runs))
print(" ".join("{0x%x, 0x%x}," % run for run in runs))
print("}};\n\n}  // namespace\n")
print("""bool is_combining_mark(std::uint32_t cp) {
    const auto after = std::upper_bound(kMarks.begin(), kMarks.end(), cp,
                                        [](std::uint32_t c, const auto& run) { return c < run.first; });
    return after != kMarks.begin() && cp <= std::prev(after)->second;
}

}  // namespace hb::display""")
