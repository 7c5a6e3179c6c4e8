#!/bin/sh
# Rewrites the marked facts of the README and docs/documents.md (the demo's figures) from the
# demo fleet, as
# tests/all/docs.rs checks them: `gpuledger docs --write` changes only the text between
# the markers.
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet -- docs --write README.md docs/documents.md \
  --snapshot fixtures/demo/cluster.yaml --config fixtures/demo/.gpuledger.yaml "$@"
