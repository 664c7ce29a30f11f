"""A broken environment program: it answers every request with a line that is not JSON.

dewpoint env check (or a run) names it: bad-reply, quoting the line."""
import json
import sys

for line in sys.stdin:
    if json.loads(line)["op"] == "close":
        break
    print("hello, this is not JSON", flush=True)
