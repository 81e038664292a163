#!/usr/bin/env python3
"""Paste the scorecard of a markdown report into a results page.

    python3 scripts/paste-scorecard.py results/report.md docs/results.md

The page's scorecard (from its first line that starts "| claim " to the end
of the notes under it, where the next "## " heading begins) is replaced by
the report's, as the report printed it: its table and notes. The page's own
text above the table is left as it is. `make report` runs this after making
the report; internal/cli's TestCommittedReportIsCurrent fails when the two
differ.
"""
import sys

HEADING = "## Scorecard. The study's claims, model by model\n\n"


def main(report_path, page_path):
    report = open(report_path, encoding="utf-8").read()
    if HEADING not in report:
        sys.exit(f"paste-scorecard: {report_path} has no line {HEADING.strip()!r}")
    scorecard = report.split(HEADING, 1)[1].split("\n## ", 1)[0].rstrip("\n") + "\n"
    page = open(page_path, encoding="utf-8").read()
    start = page.find("\n| claim ")
    if start < 0:
        sys.exit(f"paste-scorecard: {page_path} has no scorecard table (a line starting '| claim ')")
    end = page.find("\n## ", start)
    if end < 0:
        sys.exit(f"paste-scorecard: {page_path} has no '## ' heading after its scorecard")
    page = page[: start + 1] + scorecard + page[end:]
    with open(page_path, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: paste-scorecard.py REPORT.md PAGE.md")
    main(sys.argv[1], sys.argv[2])
