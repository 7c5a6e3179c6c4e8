#!/usr/bin/env python3
"""Rewrites the rendered examples at the end of docs/github.md from the integration tests'
snapshots of the pull-request comment and the drift issue (tests/all/snapshots/), with commit ids
filled in. The test `github::the_docs_show_the_current_comment_and_issue` checks they agree."""
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
FILL = {
    "HEAD_SHA": "9f1c2d7e4b5a69880c1d2e3f4a5b6c7d8e9f0a1b",
    "HEAD_SHORT": "9f1c2d7e4b5a",
    "BASE_SHA": "3b6e0d1c2a4f5e6d7c8b9a0f1e2d3c4b5a697887",
    "VALID_AT": "2026-11-30T09:12:44Z",
    "REPORT_DIGEST": "5c1d0f3a9e2b7c44",
    "HEAD_7": "9f1c2d7",
    "BASE_7": "3b6e0d1",
}
HEADING = "## What the comment and the issue look like"


def body(name):
    text = (root / "tests/all/snapshots" / name).read_text()
    text = text.split("---\n", 2)[2]
    for k, v in FILL.items():
        text = text.replace(k, v)
    marker, content = text.split("\n", 1)
    return marker, content


def quote(s):
    return "\n".join(("> " + line).rstrip() for line in s.rstrip("\n").split("\n"))


comment_marker, comment = body("all__github__pr_comment.snap")
issue_marker, issue = body("all__github__drift_issue.snap")
docs = root / "docs/github.md"
head = docs.read_text().split(HEADING, 1)[0]
docs.write_text(f"""{head}{HEADING}

Rendered examples are below. Both come from the integration tests (`tests/all/github.rs`, whose
insta snapshots are the exact text), on the fixture repository in `tests/fixtures/drift/` and a
snapshot of its cluster; only the commit ids are filled in (`scripts/update-docs-examples.py`).

### The pull-request comment

A change that scales a Dynamo graph's decode role from 8 to 10 replicas, removes a parked model,
adopts an unmanaged fine-tuning job and adds a model. The first line is the hidden marker that finds
the comment again (scope, head commit, the commit's time, the run that posted it, a digest of the
report); it does not show on GitHub:

```
{comment_marker}
```

{quote(comment)}

### The drift issue

Opened by the nightly run when drift appeared, titled `GPU drift: gpu-east`, labelled
`gpuledger-drift`. It leads with the fleet's four counts and the tenant table, then the drift in
both directions. Its marker carries a digest of the drifting workloads, so a changed set is announced
with a short comment:

```
{issue_marker}
```

{quote(issue)}
""")
