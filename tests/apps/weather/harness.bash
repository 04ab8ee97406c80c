# harness.bash - sourced by tessera-weather's tests: the programs under test,
# a scratch directory and database removed on exit, counted checks and the
# closing "N passed, N failed" line.
set -u
weather=$1
tessera=$2
here=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
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

# fails_with STATUS PATTERN command...: that exit status and the pattern in a one-line message
fails_with() {
    local status=$1 pattern=$2
    shift 2
    "$@" >"$scratch/out" 2>"$scratch/err"
    local rc=$?
    [ $rc -eq "$status" ] && grep -q -- "$pattern" "$scratch/err" && [ "$(wc -l <"$scratch/err")" -eq 1 ] ||
        { echo "  exit $rc: $(cat "$scratch/err")"; return 1; }
}

finish() {
    echo "$((total - failures)) passed, $failures failed"
    [ "$failures" -eq 0 ]
    exit
}
