"""The first 20 questions of a bundled set's scored part, through `bench --speed`'s own loop
(`speed_table.run_set`), in this process: one JSON line with the wall time, the question and
generation medians and the answers. Two of these at once measure a setting beside a second process.

    python docs/experiments/twenty_questions.py squad2_articles results/threads2/alone.jsonl
    DELTASEEK_THREADS=2 python docs/experiments/twenty_questions.py musique results/threads2/pair.jsonl
"""

import json
import statistics
import sys
import time

from deltaseek.bundled import labeled_set
from deltaseek.optimize.speed_table import run_set

if __name__ == "__main__":
    name, rows_out = sys.argv[1], sys.argv[2]
    started = time.time()
    with open(rows_out, "w", encoding="utf-8") as out:
        rows = run_set(name, str(labeled_set(name)), 20, out)
    print(json.dumps({"set": name, "wall": round(time.time() - started, 1),
                      "median": round(statistics.median(r["seconds"] for r in rows), 3),
                      "generation": round(statistics.median(r["time"]["generation"] for r in rows), 3),
                      "answers": [r["answer"] for r in rows]}))
