#!/usr/bin/env bash
# The main job on the bundled sample data (what `make run` shows).
set -euo pipefail
bin=${1:-build/bin}
"$bin/example_quickstart"
