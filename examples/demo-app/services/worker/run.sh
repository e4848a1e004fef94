#!/bin/sh
# worker: runs a job every few seconds; each job calls the api by its name on
# the application network, so a broken network shows up in the log.
set -u
interval=${WORKER_INTERVAL_SECONDS:-3}
n=0
# /tmp survives `podman restart`: health must see a job of this run.
rm -f /tmp/last-ok
echo "worker: started, one job every ${interval}s"
while :; do
    n=$((n + 1))
    if timeout 2 wget -q -O /dev/null http://api:8080/ 2>/dev/null; then
        date +%s >/tmp/last-ok
        echo "worker: job $n done (api ok)"
    else
        echo "worker: job $n failed: api unreachable"
    fi
    sleep "$interval"
done
