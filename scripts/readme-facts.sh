#!/bin/sh
# Rewrites the README's marked facts (its demo figures) from the demo fleet, as
# tests/all/docs.rs checks them: `gpuledger docs --write` changes only the text between
# the markers.
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet -- docs --write README.md \
  --snapshot fixtures/demo/cluster.yaml --config fixtures/demo/.gpuledger.yaml "$@"
