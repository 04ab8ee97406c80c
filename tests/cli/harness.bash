# harness.bash - sourced by the CLI tests (tests/cli/*.sh): the binary under
# test, a scratch directory and database removed on exit, counted checks, and
# the closing "N passed, N failed" line.
set -u
tessera=$1
scratch=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$scratch"' EXIT
export TESSERA_DB="$scratch/records.db"
failures=0
total=0

# check DESCRIPTION COMMAND...: the command must succeed
check() {
    local what=$1
    shift
    total=$((total + 1))
    if ! "$@"; then echo "FAIL: $what"; failures=$((failures + 1)); fi
}

# Prints the summary and exits with the result.
finish() {
    echo "$((total - failures)) passed, $failures failed"
    [ "$failures" -eq 0 ]
    exit
}
