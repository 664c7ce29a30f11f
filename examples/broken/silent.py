"""A broken environment program: it never answers.

dewpoint env check (or a run) names it: deadline, after the step deadline (stepSeconds, 10 s)."""
import sys
import time

for line in sys.stdin:
    time.sleep(3600)
