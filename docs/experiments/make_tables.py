"""Render the tables of an experiment record from its results files, so no figure is typed by hand.

    python docs/experiments/make_tables.py paired A.jsonl B.jsonl        # two programs on the same questions
    python docs/experiments/make_tables.py summary R1.jsonl R2.jsonl ...  # one line per results file
    python docs/experiments/make_tables.py speed results/speed-*.jsonl    # `bench --speed` rows, one line per set

`paired` is `python -m deltaseek.optimize.paired`: each metric for A and B, B - A and its paired
bootstrap 95% interval. `summary` reads `deltaseek evaluate --out` rows (the same metrics, one
program at a time). `speed` reads the rows `deltaseek bench --speed` appends to
`results/speed-TIME.jsonl` and prints the speed table and where the time went, as the bench does.
`results/` is not committed: a record names the command that wrote each file it reads.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from deltaseek.errors import DatasetError
from deltaseek.optimize.paired import PAIRED_METRICS, format_paired, paired_table
from deltaseek.optimize.results_file import numbered_rows
from deltaseek.optimize.speed_table import format_table, set_summaries


def read_rows(path: str) -> list[dict]:
    """The rows of a JSONL results file; the last row of an id counts (as `--resume` does), of an id
    and a run where `bench --speed --reader-beside` ran each question twice."""
    rows: dict[str, dict] = {}
    try:
        for number, row in numbered_rows(path):
            rows[f"{row.get('id', number)}|{row.get('run', '')}"] = row
    except DatasetError as error:
        raise SystemExit(str(error)) from None
    return list(rows.values())


def summary_table(paths: list[str]) -> str:
    """One line per results file: the paired metrics measured on one program."""
    names = [metric.name for metric in PAIRED_METRICS]
    lines = ["| results file | questions | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for path in paths:
        rows = read_rows(path)
        cells = []
        for metric in PAIRED_METRICS:
            values = [metric.value(row) for row in rows if metric.applies(row)]
            cells.append(f"{metric.statistic(values):.3f}" if values else "-")
        lines.append(f"| {Path(path).name} | {len(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speed_tables(paths: list[str]) -> str:
    """`bench --speed`'s table from its rows, one line per set."""
    return format_table(set_summaries([row for path in paths for row in read_rows(path)]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="table", required=True)
    paired = sub.add_parser("paired", help="B - A with paired bootstrap intervals")
    paired.add_argument("a", help="results of program A (`deltaseek evaluate --out`)")
    paired.add_argument("b", help="results of program B, on the same questions")
    summary = sub.add_parser("summary", help="one line per results file")
    summary.add_argument("paths", nargs="+")
    speed = sub.add_parser("speed", help="`bench --speed` rows, one line per set")
    speed.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    for path in [args.a, args.b] if args.table == "paired" else args.paths:
        if not Path(path).is_file():
            raise SystemExit(f"{path}: no such results file (results/ is not committed: run the record's command)")
    if args.table == "paired":
        print(format_paired(paired_table(read_rows(args.a), read_rows(args.b)), args.a, args.b))
    elif args.table == "summary":
        print(summary_table(args.paths))
    else:
        print(speed_tables(args.paths))


if __name__ == "__main__":
    main()
