#!/usr/bin/env bash
# Renders every Graphviz diagram under docs/diagrams to PNG (needs `dot`: apt-get install graphviz).
set -euo pipefail
cd "$(dirname "$0")/diagrams"
for source in *.dot; do
  dot -Tpng -Gdpi=110 "$source" -o "${source%.dot}.png"
  echo "rendered docs/diagrams/${source%.dot}.png"
done
