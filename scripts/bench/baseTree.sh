#!/usr/bin/env bash
# Builds the bench of another tree (a git ref of this repository, e.g. the commit before issue 27 was merged) into a
# temporary folder, for scenarios that compare against it (resume.ts `resumeCost`: BENCH_BASE_TREE). It extracts the
# ref with `git archive` (no worktree, no checkout), links this tree's node_modules, compiles the bench and prints the
# compiled bench folder.
#   BENCH_BASE_TREE=$(scripts/bench/baseTree.sh 868a443) npm run bench -- resumeCost
set -euo pipefail
ref=${1:?usage: scripts/bench/baseTree.sh <git-ref>}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/lango-bench-base.XXXXXX)
git -C "$root" archive "$ref" | tar -x -C "$dir"
ln -s "$(readlink -f "$root/node_modules")" "$dir/node_modules"
(cd "$dir" && node node_modules/typescript/bin/tsc -p scripts/bench/tsconfig.json >&2)
echo "$dir/scripts/bench/.build/scripts/bench"
