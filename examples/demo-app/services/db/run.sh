#!/bin/sh
# db: a stand-in database. Records live in /data (a volume), seeded on first
# start; a heartbeat file and log line show it is alive.
set -eu
interval=${DB_HEARTBEAT_SECONDS:-5}
if [ ! -f /data/records ]; then
    cp /app/seed/records /data/records
    echo "db: seeded /data with $(wc -l </data/records) records"
fi
echo "db: ready, $(wc -l </data/records) records"
while :; do
    date -u +%Y-%m-%dT%H:%M:%SZ >/data/heartbeat
    echo "db: heartbeat $(cat /data/heartbeat), $(wc -l </data/records) records"
    sleep "$interval"
done
