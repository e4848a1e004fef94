#!/bin/sh
# api: answers GET / with a small JSON document (busybox httpd + one CGI script).
set -eu
mkdir -p /www/cgi-bin /tmp/api
date -u +%Y-%m-%dT%H:%M:%SZ >/tmp/api/started_at
cp /app/index.cgi /www/cgi-bin/index.cgi
chmod 0755 /www/cgi-bin/index.cgi
echo "api: listening on :8080 (version ${APP_VERSION:-unknown})"
exec httpd -f -p 8080 -h /www
