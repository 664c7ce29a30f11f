"""A broken environment program: it starts, leaves a detached child behind, and answers every step
with its own error.

dewpoint env check (or a run) names it: environment, with its detail and its stderr; the companion
kills the child with the session."""
import json
import subprocess
import sys

# A child in a session of its own, named after this file so that a test can look for it.
subprocess.Popen(["sh", "-c", "sleep 600; exit 0 # always_error.py child"], start_new_session=True)
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "close":
        break
    if req["op"] == "reset":
        print(json.dumps({"context": [req["tokenizer"]["specials"]["bos"]]}), flush=True)
    else:
        print("step refused on purpose", file=sys.stderr, flush=True)
        print(json.dumps({"status": "error", "detail": "this environment always fails"}), flush=True)
