"""A broken environment program: it answers reset, then exits with code 3.

dewpoint env check (or a run) names it: exited, with the exit code and what it wrote to stderr."""
import json
import sys

req = json.loads(sys.stdin.readline())
print(json.dumps({"context": [req["tokenizer"]["specials"]["bos"]]}), flush=True)
print("giving up after reset", file=sys.stderr, flush=True)
sys.exit(3)
