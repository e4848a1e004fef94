#!/usr/bin/env python3
"""count-executor.py: what hostbridge-executor links, counted room by room
(or, with --binary NAME, what another binary of ours links: hostbridge-pin,
whose pins are what containers get, is trusted code too).

Method (docs/ARCHITECTURE.md, "Rooms and their size" shows its figures):
  1. The objects: the linker's map of the real binary
     (BUILD/executor/hostbridge-executor.map, written by -Wl,-Map in
     executor/CMakeLists.txt; NAME.map wherever under BUILD NAME's
     CMakeLists.txt writes it, for --binary NAME). Its "Archive member included" section names
     every member the linker took from an archive, its LOAD lines every
     object given on the command line. Members of archives outside BUILD
     (libstdc++, libgcc) are not ours and are not counted.
  2. Each object's source and headers: the compiler's own dependency file
     next to the object (OBJECT.d, gcc -MD, which CMake asks for). Only files
     under SOURCE count; the system's and the generated ones do not.
  3. A room is the CMake target the object was compiled for (its archive
     libTARGET.a, or the binary's own CMakeFiles/TARGET.dir): the build
     decides, not the folder. A header belongs to the room whose linked
     source has the same path without its extension (executor/spool.hpp to
     executor/spool.cpp's room); a header with no such source to the room
     most linked sources of its folder belong to, else to the room of the
     first linked source, in path order, that includes it.
  4. Lines: "code" counts the lines that keep something once comments are
     taken out (a line that is blank, or holds only a comment or part of
     a block comment, is not code); "wc" is the plain wc -l. String and
     character literals, raw strings too, are read as code, never as the
     start of a comment.
  5. The core is the rooms listed in CORE_ROOMS below: what decides whether
     and what to run. Every other room is an engine room, or what the
     rooms share below them (ipc, fds).

Usage: count-executor.py BUILD SOURCE [--binary NAME] [--json] [--budget CORE ALL]
With --budget it exits 1 when the core's or the whole set's code lines
exceed them (another binary has no core: 0). --sources prints the counted files, one per line.
"""
import json
import os
import re
import sys

# The deciding core: the executor's own library and what it shares with the
# admin tool (bridge.json, policy, audit log, held records, integrity gate),
# and the binary's main.
CORE_ROOMS = ("hostbridge-executor", "hb_executor_core", "hb_common")


def code_lines(text):
    """Lines of C or C++ that keep something once comments are removed."""
    count = 0
    i, n = 0, len(text)
    in_block = False
    line_has_code = False
    while i < n:
        c = text[i]
        if c == "\n":
            if line_has_code:
                count += 1
            line_has_code = False
            i += 1
            continue
        if in_block:
            if text.startswith("*/", i):
                in_block = False
                i += 2
            else:
                i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            in_block = True
            i += 2
            continue
        if c.isspace():
            i += 1
            continue
        line_has_code = True
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(', text[i:i + 24])
        if raw:
            end = text.find(")" + raw.group(1) + '"', i + raw.end())
            end = n if end < 0 else end + len(raw.group(1)) + 2
            # A raw string's lines are code, every one of them.
            count += text.count("\n", i, end)
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        i += 1
    if line_has_code:
        count += 1
    return count


def wc_lines(text):
    return text.count("\n")


def linked_objects(map_file):
    """(archive or None, object) pairs the map says were linked."""
    objects = []
    section = None
    with open(map_file, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("Archive member included"):
                section = "archive"
                continue
            if line.startswith(("Discarded input sections", "Memory Configuration",
                                "Linker script and memory map", "Allocating common symbols")):
                section = "load" if line.startswith("Linker script") else None
                continue
            if section == "archive" and line and not line[0].isspace():
                m = re.match(r"^(.*\.a)\(([^()]*)\)", line.split()[0])
                if m:
                    objects.append((m.group(1), m.group(2)))
            elif section == "load" and line.startswith("LOAD "):
                path = line[5:].strip()
                if path.endswith(".o"):
                    objects.append((None, path))
    return objects


def depfile_files(depfile):
    """The source and headers a gcc -MD dependency file names."""
    with open(depfile, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    first = text.split("\n", 1)[0]
    _, _, deps = first.partition(": ")
    return [d for d in deps.split() if d]


class Counter:
    def __init__(self, build, source, binary="hostbridge-executor"):
        self.build = os.path.realpath(build)
        self.source = os.path.realpath(source)
        self.binary = binary
        self.map_file = os.path.join(self.build, "executor", binary + ".map")
        if binary != "hostbridge-executor":
            found = [os.path.join(root, binary + ".map") for root, _, files in os.walk(self.build)
                     if binary + ".map" in files]
            self.map_file = sorted(found)[0] if found else self.map_file
        # The linker ran where the map is: the paths in it are relative to there.
        self.link_dir = os.path.dirname(self.map_file)

    def _object_path(self, archive, member):
        """The object file on disk, and the room (target) it was compiled for."""
        if archive is None:
            path = os.path.normpath(os.path.join(self.link_dir, member))
            if not path.startswith(self.build + os.sep):
                return None, None  # the C runtime's start files
            m = re.search(r"CMakeFiles/([^/]+)\.dir/", path)
            return path, m.group(1)
        archive_path = os.path.normpath(os.path.join(self.link_dir, archive))
        if not archive_path.startswith(self.build + os.sep):
            return None, None  # the toolchain's archives: not ours
        target = re.sub(r"^lib|\.a$", "", os.path.basename(archive_path))
        objdir = os.path.join(os.path.dirname(archive_path), "CMakeFiles", target + ".dir")
        for root, _, files in os.walk(objdir):
            if member in files:
                return os.path.join(root, member), target
        raise SystemExit(f"count-executor: {member} of {archive} not found under {objdir}")

    def collect(self):
        """{path under SOURCE: room}, and the linked sources (the .cpp files)."""
        if not os.path.exists(self.map_file):
            raise SystemExit(f"count-executor: no link map {self.map_file} (build {self.binary})")
        sources = {}  # source path -> room
        includes = {}  # source path -> its project headers
        for archive, member in linked_objects(self.map_file):
            obj, room = self._object_path(archive, member)
            if obj is None:
                continue
            deps = depfile_files(obj + ".d")
            # A relative path is the compiler's, which ran in the target's
            # binary dir (ccache's base_dir makes the paths relative).
            compiled_in = obj[:obj.index(os.sep + "CMakeFiles" + os.sep)]
            ours = []
            for dep in deps:
                path = os.path.realpath(os.path.join(compiled_in, dep))
                if path.startswith(self.source + os.sep) and not path.startswith(self.build + os.sep):
                    ours.append(os.path.relpath(path, self.source))
            src = next(p for p in ours if not p.endswith((".hpp", ".h")))
            sources[src] = room
            includes[src] = [p for p in ours if p != src]
        rooms = dict(sources)
        for src in sorted(sources):
            for header in includes[src]:
                if header in rooms:
                    continue
                stem = os.path.splitext(header)[0]
                sibling = next((s for s in sources if os.path.splitext(s)[0] == stem), None)
                if sibling:
                    rooms[header] = sources[sibling]
                    continue
                folder = [sources[s] for s in sorted(sources)
                          if os.path.dirname(s) == os.path.dirname(header)]
                rooms[header] = (max(folder, key=folder.count) if folder else sources[src])
        return rooms, sorted(sources)

    def count(self):
        rooms, sources = self.collect()
        table = {}
        for path, room in sorted(rooms.items()):
            with open(os.path.join(self.source, path), encoding="utf-8") as f:
                text = f.read()
            entry = table.setdefault(room, {"code": 0, "wc": 0, "files": {}})
            c, w = code_lines(text), wc_lines(text)
            entry["code"] += c
            entry["wc"] += w
            entry["files"][path] = {"code": c, "wc": w}
        core_rooms = CORE_ROOMS if self.binary == "hostbridge-executor" else ()
        core = {k: sum(table[r][k] for r in table if r in core_rooms) for k in ("code", "wc")}
        total = {k: sum(t[k] for t in table.values()) for k in ("code", "wc")}
        return {"binary": self.binary, "rooms": table, "core": core, "all": total,
                "sources": sources, "core_rooms": list(core_rooms)}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 64
    budget = None
    binary = "hostbridge-executor"
    if "--binary" in argv:
        at = argv.index("--binary")
        binary = argv[at + 1]
        args = [a for a in args if a != binary]
    if "--budget" in argv:
        at = argv.index("--budget")
        budget = (int(argv[at + 1]), int(argv[at + 2]))
        args = [a for a in args if a not in argv[at + 1:at + 3]]
    result = Counter(args[0], args[1], binary).count()
    if "--json" in argv:
        print(json.dumps(result, indent=1))
    elif "--sources" in argv:
        print("\n".join(result["sources"]))
    else:
        print(f"{'room':<28} {'code':>6} {'wc -l':>6}  files")
        core_rooms = result["core_rooms"]
        for room, entry in sorted(result["rooms"].items(),
                                  key=lambda kv: (kv[0] not in core_rooms, kv[0])):
            mark = "core " if room in core_rooms else "     "
            print(f"{mark}{room:<23} {entry['code']:>6} {entry['wc']:>6}  {len(entry['files'])}")
        if core_rooms:
            print(f"{'core':<28} {result['core']['code']:>6} {result['core']['wc']:>6}")
        print(f"{'all ' + binary + ' links':<28} {result['all']['code']:>6} {result['all']['wc']:>6}")
    if budget:
        over = []
        if result["core"]["code"] > budget[0]:
            over.append(f"core {result['core']['code']} > {budget[0]}")
        if result["all"]["code"] > budget[1]:
            over.append(f"all {result['all']['code']} > {budget[1]}")
        if over:
            print("count-executor: over budget: " + ", ".join(over), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
