#!/bin/sh
# web: renders the front page once at start, then serves it.
set -eu
mkdir -p /www
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
sed -e "s/@VERSION@/${APP_VERSION:-unknown}/" \
    -e "s/@STARTED@/$started/" /app/index.html.in >/www/index.html
echo "web: listening on :80 (version ${APP_VERSION:-unknown})"
exec httpd -f -p 80 -h /www
