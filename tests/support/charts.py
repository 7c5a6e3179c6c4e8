#!/usr/bin/env python3
"""Chart fixtures for gpuledger's remote-render tests, made by the real Helm engine.

    charts.py DEST CHART_DIR... [push:ARCHIVE=oci://HOST/PATH]...

Packages each chart directory into DEST (`helm package`), writes DEST/index.yaml for them
(`helm repo index`), pushes each named archive of DEST to the OCI registry (`helm push
--plain-http`, the registry being a local one), and prints each archive's file name. Everything is
Helm v4's own code through the PyPI package helm-python-sdk (import name `helm_python`); nothing
here packages, indexes or pushes by itself.
"""

import os
import sys

from helm_python import chart, registry


def main(argv):
    dest, rest = argv[0], argv[1:]
    os.makedirs(dest, exist_ok=True)
    pushes = [a[len("push:"):] for a in rest if a.startswith("push:")]
    for d in (a for a in rest if not a.startswith("push:")):
        path = chart.package(d, destination=dest)
        print(os.path.basename(path))
    registry.repo_index_generate(dest)
    for p in pushes:
        archive, remote = p.split("=", 1)
        registry.push(os.path.join(dest, archive), remote, plain_http=True)


if __name__ == "__main__":
    main(sys.argv[1:])
