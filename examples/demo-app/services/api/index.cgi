#!/bin/sh
# GET / on the api: who answers, since when, in which version. ./stack only
# passes values made of [A-Za-z0-9._-], so they need no JSON escaping.
printf 'Content-Type: application/json\r\n\r\n'
printf '{"service":"api","status":"ok","version":"%s","started_at":"%s","hostname":"%s"}\n' \
    "${APP_VERSION:-unknown}" "$(cat /tmp/api/started_at)" "$(hostname)"
