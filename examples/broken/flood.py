"""A broken environment program: it answers with a line of 2 MiB, past the 1 MiB reply limit.

dewpoint env check (or a run) names it: message-limit."""
import sys

for line in sys.stdin:
    sys.stdout.write("x" * (2 << 20))
    sys.stdout.flush()
