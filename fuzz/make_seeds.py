#!/usr/bin/env python3
"""Writes the seed corpus in fuzz/corpus/ (run once; the output is committed).

validate/: "<basename>\n<body>" inputs, valid requests and hostile ones.
wire/: a selector byte (0 verdict + service-count byte, 1 startup, 2 request,
3 screen request) then a message in the layout of ipc/wire_layout.hpp (3:
ipc/screen_wire.hpp).
screen/: Containerfiles, honest ones and one of each refusal.
loglines/: 8 window bytes, then `podman logs --timestamps` output.
image/: docker-archive tars as podman 4.3's `save` writes them (small
layers), and one renamed by a PAX record, one cut short.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
T = "2026-11-29T08:00:00Z"
MAGIC, VERSION = 0x48425231, 2


def name(verb):
    return f"20261129T080000Z-{verb}-0123456789abcdef.json"


def body(verb, arg=None, at=T):
    b = '{"verb":"%s"' % verb
    if arg is not None:
        b += ',"arg":"%s"' % arg
    return b + ',"requested_at":"%s"}\n' % at


def write(sub, fname, data):
    d = os.path.join(HERE, "corpus", sub)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    with open(os.path.join(d, fname), "wb") as f:
        f.write(data)


def validate_seeds():
    verbs = ["ping", "status", "health", "up", "down", "init", "join-network"]
    for v in verbs:
        write("validate", f"valid-{v}", name(v) + "\n" + body(v))
    for v, a in [("logs", "worker"), ("restart", "api"), ("rebuild", "web")]:
        write("validate", f"valid-{v}", name(v) + "\n" + body(v, a))
    window = '{"verb":"logs","arg":"web","lines":"%s","since":"%s","requested_at":"%s"}\n'
    write("validate", "valid-logs-window", name("logs") + "\n" + window % ("50", "1796245045602731173:2", T))
    write("validate", "logs-window-bad", name("logs") + "\n" + window % ("01", "1:01", T))
    write("validate", "restart-window", name("restart") + "\n" +
          '{"verb":"restart","arg":"web","since":"0:0","requested_at":"%s"}\n' % T)
    p = name("ping") + "\n"
    hostile = {
        "empty-body": name("restart") + "\n",
        "newline-body": p + "\n",
        "bom": p.encode() + b"\xef\xbb\xbf" + body("ping").encode(),
        "nul": p.encode() + b'{"verb":"pi\x00ng"}',
        "overlong": p.encode() + b'{"verb":"\xc0\xaf"}',
        "surrogate-escape": p + '{"verb":"\\ud800"}',
        "dup-key": p + '{"verb":"ping","verb":"ping","requested_at":"%s"}' % T,
        "dup-escaped": p + '{"verb":"ping","v\\u0065rb":"ping"}',
        "trailing-comma": p + '{"verb":"ping",}',
        "trailing-bytes": p + body("ping") + "x",
        "two-newlines": p + body("ping") + "\n",
        "array": p + "[1,2,3]",
        "deep": p + '{"x":' + "[" * 1000 + "]" * 1000 + "}",
        "huge-number": p + '{"verb":1e99999}',
        "unknown-key": p + '{"verb":"ping","requested_at":"%s","x":"y"}' % T,
        "not-a-string": p + '{"verb":["ping"],"requested_at":"%s"}' % T,
        "exec": name("exec") + "\n" + body("exec"),
        "shell-name": "20261129T080000Z-shell:web-0123456789abcdef.json\n" + body("ping"),
        "mismatch": p + body("status"),
        "cyrillic": p + body("p\u0456ng"),
        "arg-injection": name("restart") + "\n" + body("restart", "$(id);.."),
        "arg-65": name("restart") + "\n" + body("restart", "a" * 65),
        "rebuild-db": name("rebuild") + "\n" + body("rebuild", "db"),
        "feb-30": p + body("ping", at="2026-02-30T00:00:00Z"),
        "fraction": p + body("ping", at="2026-11-29T08:00:00.5Z"),
        "offset": p + body("ping", at="2026-11-29T08:00:00+01:00"),
        "too-large": p + "{" + " " * 4100 + "}",
        "no-newline": name("ping"),
    }
    for k, v in hostile.items():
        write("validate", k, v)


def verdict(outcome, verb, seq, arg, reason, t, lines=0, seen=0, since=-(2**63)):
    return struct.pack("<IHBBIHHqHHIq", MAGIC, VERSION, outcome, verb, seq, arg, reason, t,
                       lines, 0, seen, since)


def startup(services, buildable):
    mask = sum(1 << services.index(b) for b in buildable)
    out = struct.pack("<IHHQ", MAGIC, VERSION, len(services), mask)
    for s in services:
        out += bytes([len(s)]) + s.encode().ljust(64, b"\0")
    return out + b"\0" * (65 * (64 - len(services)))


def request(seq, basename):
    b = basename.encode()
    return struct.pack("<IHHI", MAGIC, VERSION, len(b), seq) + b.ljust(255, b"\0")


def wire_seeds():
    NO_ARG, NO_TIME = 0xFFFF, -(2**63)
    write("wire", "verdict-accept-restart", b"\0\x04" + verdict(1, 7, 1, 2, 0, 1795939200))
    write("wire", "verdict-accept-ping", b"\0\x04" + verdict(1, 1, 2, NO_ARG, 0, 0))
    write("wire", "verdict-deny-empty", b"\0\x04" + verdict(2, 0, 3, NO_ARG, 20, NO_TIME))
    write("wire", "verdict-deny-nosuch", b"\0\x04" + verdict(2, 7, 4, NO_ARG, 31, 5))
    write("wire", "verdict-quarantine", b"\0\x04" + verdict(3, 0, 5, NO_ARG, 6, NO_TIME))
    write("wire", "verdict-bad-arg", b"\0\x02" + verdict(1, 7, 6, 2, 0, 0))
    write("wire", "verdict-accept-logs-window",
          b"\0\x04" + verdict(1, 4, 7, 2, 0, 1795939200, 50, 2, 1796245045602731173))
    write("wire", "startup-sample", b"\x01" + startup(["api", "db", "web", "worker"], ["api", "web"]))
    write("wire", "startup-empty", b"\x01" + startup([], []))
    write("wire", "startup-one", b"\x01" + startup(["a" * 64], ["a" * 64]))
    write("wire", "request-restart", b"\x02" + request(7, name("restart")))
    write("wire", "request-long", b"\x02" + request(0xFFFFFFFF, "n" * 255))
    write("wire", "request-odd-bytes", b"\x02" + request(1, "\x01 ;$(x)..\n"))
    write("wire", "screen-request-images",
          b"\x03" + screen_request(3, ["alpine:latest", "docker.io/library/debian:12",
                                       "localhost/app_web:latest", "sha256:" + "c" * 64]))
    write("wire", "screen-request-none", b"\x03" + screen_request(1, []))


def screen_request(seq, images):
    out = struct.pack("<II", 0x48425332, seq) + bytes([len(images)])
    for i in images:
        out += bytes([len(i)]) + i.encode()
    return out


def screen_seeds():
    seeds = {
        "node-multi-stage": "# syntax=docker/dockerfile:1\nARG V=20\n"
        "FROM --platform=linux/amd64 node:20-slim AS deps\nWORKDIR /app\n"
        "COPY package.json ./\nRUN --mount=type=cache,target=/root/.npm npm ci\n"
        "FROM node:20-slim\nCOPY --from=deps --chown=1:1 /app /app\n"
        "HEALTHCHECK --interval=30s CMD [\"node\", \"h.js\"]\nCMD [\"node\", \"/app\"]\n",
        "python-continuations": "FROM python:3.12-slim\nRUN --mount=type=cache,target=/c,"
        "sharing=locked \\\n# a comment\n\n    pip install -r r.txt \\\n && true\n",
        "escape-backtick": "# escape=`\nFROM a\nRUN echo a `\n  && echo b\nRUN echo \\\n",
        "bind-mount": "FROM a\nRUN --mount=type=bind,source=h,target=/h cat /h/x\n",
        "cache-id": "FROM a\nARG X=../../../../home/u\n"
        "RUN --mount=type=cache,id=$X,target=/c ls /c\n",
        "heredoc": "FROM a\nRUN cat <<EOF\nRUN --mount=type=bind,source=h,target=/h x\nEOF\n",
        "onbuild-bind": "FROM a\nONBUILD RUN --mount=type=bind,target=/h true\n",
        "add-remote": "FROM a\nADD https://example.com/x /x\n"
        "ADD [\"git@github.com:a/b.git\", \"/y\"]\n",
        "from-transport": "ARG B=oci:/home/u/l\nFROM $B\nCOPY --from=dir:/x /a /b\n",
        "odd-flags": "FROM a\nRUN --mount=\"type=cache,target=/c\" --network=host "
        "--mount=type=cache,,sharing true\nCOPY --link . /x\n",
        "crlf": "FROM a\r\nRUN true\r\n",
        "bom-nbsp": "\ufeffFROM a\nRUN\u00a0--mount=type=bind,target=/h true\n",
        "continuation-at-eof": "FROM a\n\\\nONBUILD RUN echo \\\\",
        "no-from": "ENV A=b\nFROM a\n",
        "stages-and-images": "FROM alpine AS base\nFROM base AS two\nCOPY --from=0 /a /a\n"
        "COPY --from=localhost/app_web /b /b\nFROM scratch\nCOPY --from=two / /\n"
        "COPY --from=localhost/other_private /secret /x\nFROM sha256:" + "c" * 64 + "\n",
    }
    for k, v in seeds.items():
        write("screen", k, v)


def loglines_seeds():
    t1 = "2026-12-02T20:57:25.602731173Z"
    t2 = "2026-12-02T20:57:26.000000001+01:00"
    burst = "".join(f"{t1} line {i}\n" for i in range(5))
    write("loglines", "tail-burst", bytes([1, 3, 0, 0, 0, 2, 0, 0]) + burst.encode())
    write("loglines", "since-burst", bytes([0x11, 9, 4, 2, 0, 1, 0, 0]) + (burst + f"{t2} x\n").encode())
    write("loglines", "partial-and-warn",
          bytes([0x10, 0, 4, 0, 1, 0, 0, 0]) + f"WARN[0000] w\n{t1} part{t2}  rest\n{t2} unfin".encode())
    write("loglines", "long-line", bytes([0x10, 0, 4, 0, 0, 0, 0, 0]) + f"{t1} {'x' * 3000}\n".encode())


def tar_entry(name, data, kind=b"0"):
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:108] = b"0000444\0"
    h[124:136] = b"%011o\0" % len(data)
    h[156:157] = kind
    h[257:265] = b"ustar\x0000"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h) + data + b"\0" * (-len(data) % 512)


def image_seeds():
    hexid = "db56716c4d267580271fbcb45a105b16d8dc9294c9c5b8f81d4b86b04fc7b76d"
    config = b'{"config":{"Env":["PATH=/bin"],"OnBuild":["RUN echo trig","COPY . /app"]}}'
    layer = tar_entry("hello.txt", b"hello\n") + b"\0" * 1024
    end = b"\0" * 1024
    legacy = "0cca1f0ce47ddf60d2fa5daee9341a127caab8e6fe045a86e80e20d757bd38f5"
    archive = (tar_entry("90a7d9d9cc783c806465c5b97e2630e2d2f4ea36ca67da26c7ad72ce88055eec.tar", layer)
               + tar_entry(hexid + ".json", config)
               + tar_entry(legacy + "/layer.tar", b"", b"2")
               + tar_entry(legacy + "/json", b'{"id":"x"}')
               + tar_entry("manifest.json", b'[{"Config":"%s.json"}]' % hexid.encode())
               + end)
    write("image", "remote-save-onbuild", archive)
    write("image", "no-triggers", tar_entry(hexid + ".json", b'{"config":{}}') + end)
    pax = b"78 path=%s.json\n" % hexid.encode()
    write("image", "pax-renamed", tar_entry("PaxHeaders/x", pax, b"x")
          + tar_entry("innocent", config) + end)
    write("image", "cut-short", archive[:1500])


validate_seeds()
wire_seeds()
screen_seeds()
loglines_seeds()
image_seeds()
