#!/usr/bin/env python3
"""Paste the scorecard of a markdown report, and its rollout answers, into a
results page.

    python3 scripts/paste-scorecard.py results/report.md docs/results.md

The page's scorecard (from its first line that starts "| claim " to the end
of the notes under it, where the next "## " heading begins) is replaced by
the report's, as the report printed it: its table and notes. When the report
has rollout answers, the page's (from its first line that starts
"| rollout claim " to the end of the one-line notes under the table) are
replaced by the report's the same way. The page's own text around the two
is left as it is. `make report` runs this after making the report;
internal/cli's TestCommittedReportIsCurrent fails when the two differ.
"""
import sys

HEADING = "## Scorecard. The study's claims, model by model\n\n"
ANSWERS = "## Rollout answers. Each rollout claim, run by run\n\n"


def section(report, heading):
    """The report's section under heading, to the next "## " heading."""
    return report.split(heading, 1)[1].split("\n## ", 1)[0].rstrip("\n") + "\n"


def paste_answers(page, answers, page_path):
    start = page.find("\n| rollout claim ")
    if start < 0:
        sys.exit(f"paste-scorecard: {page_path} has no rollout answers table (a line starting '| rollout claim ')")
    lines = page[start + 1 :].split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("|"):
        i += 1
    if i < len(lines) and lines[i] == "":
        j = i + 1
        while j < len(lines) and lines[j].startswith("- "):
            j += 1
        if j > i + 1:
            i = j
    rest = "\n".join(lines[i:])
    return page[: start + 1] + answers + rest


def main(report_path, page_path):
    report = open(report_path, encoding="utf-8").read()
    if HEADING not in report:
        sys.exit(f"paste-scorecard: {report_path} has no line {HEADING.strip()!r}")
    scorecard = section(report, HEADING)
    page = open(page_path, encoding="utf-8").read()
    start = page.find("\n| claim ")
    if start < 0:
        sys.exit(f"paste-scorecard: {page_path} has no scorecard table (a line starting '| claim ')")
    end = page.find("\n## ", start)
    if end < 0:
        sys.exit(f"paste-scorecard: {page_path} has no '## ' heading after its scorecard")
    page = page[: start + 1] + scorecard + page[end:]
    if ANSWERS in report:
        page = paste_answers(page, section(report, ANSWERS), page_path)
    with open(page_path, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: paste-scorecard.py REPORT.md PAGE.md")
    main(sys.argv[1], sys.argv[2])
