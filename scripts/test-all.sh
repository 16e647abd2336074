#!/usr/bin/env bash
# Every test tier in order (npm run test:all), then how long each step took: the last lines of a CI log say
# where its time went, Jest's included.
set -euo pipefail
cd "$(dirname "$0")/.."

timings=()
step() { # name, command...
  local name=$1 started=$SECONDS
  shift
  "$@"
  timings+=("$(printf '%-34s %5d s' "$name" $((SECONDS - started)))")
}
report() {
  local status=$?
  printf '\n--- step times ---\n'
  printf '%s\n' "${timings[@]}"
  exit "$status"
}
trap report EXIT

jest() { node --max-old-space-size=12288 --experimental-vm-modules node_modules/jest/bin/jest.js "$@"; }

step 'typecheck' npx tsc --noEmit -p tsconfig.json
step 'lint' npm run --silent lint
step 'build' npm run --silent build
step 'jest: unit integration api browser' jest --selectProjects unit integration api browser --maxWorkers=2 --forceExit
step 'jest: resilience' jest --selectProjects resilience --runInBand --forceExit
