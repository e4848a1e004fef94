#!/usr/bin/env bash
# PREPARE step for bench-drain.sh: writes $BENCH_DIR/bridge.json for the
# spool it just built, so hostbridge-executor drains the same requests as
# watcher.bash. Needs PARSER (the hostbridge-parser binary) in the environment.
set -euo pipefail
: "${PARSER:?PARSER must name hostbridge-parser}"
mapfile -t services < <(tr " " "\n" <<< "$SERVICE_ENUM" | sort)
mapfile -t buildable < <(tr " " "\n" <<< "$BUILDABLE_SERVICES" | sort)
json_list() { local out="" w; for w in "$@"; do out+="${out:+,}\"$w\""; done; printf '[%s]' "$out"; }
mkdir -p "$BENCH_DIR/run"
cat > "$BENCH_DIR/bridge.json" <<JSON
{
  "version": 1, "slug": "bench", "project_dir": "$REPO_ROOT", "spool_dir": "$SPOOL",
  "state_dir": "$STATE_DIR", "policy_file": "$POLICY_FILE", "parser": "$PARSER",
  "allow_root": true, "file_mode": "0644", "agent_gid": null,
  "backend": {"kind": "stack", "argv": ["$STACK_BIN"]},
  "services": $(json_list "${services[@]}"), "buildable": $(json_list "${buildable[@]}"),
  "tcb": [], "run_dir": "$BENCH_DIR/run",
  "limits": {"mutating": {"count": 1000000, "seconds": 60}, "read_only": {"count": 1000000, "seconds": 60},
             "ttl_seconds": 600, "future_skew_seconds": 120},
  "timeouts": {"default": 300, "rebuild": 1200},
  "drain": {"time_budget_seconds": 1800, "linger_seconds": 0},
  "retention": {"archive_days": 7, "responses_days": 1},
  "systemd": {"enabled": false, "systemd_run": ""},
  "join_network": null
}
JSON
