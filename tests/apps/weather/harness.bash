# harness.bash - sourced by tessera-weather's tests: the CLI tests' harness
# (a scratch directory and database removed on exit, counted checks, the
# closing "N passed, N failed" line) with the tessera binary, plus the
# weather program, this test folder and fails_with.
weather=$1
here=$3
source "$(dirname "${BASH_SOURCE[0]}")/../../cli/harness.bash" "$2"

# fails_with STATUS PATTERN command...: that exit status and the pattern in a one-line message
fails_with() {
    local status=$1 pattern=$2
    shift 2
    "$@" >"$scratch/out" 2>"$scratch/err"
    local rc=$?
    [ $rc -eq "$status" ] && grep -q -- "$pattern" "$scratch/err" && [ "$(wc -l <"$scratch/err")" -eq 1 ] ||
        { echo "  exit $rc: $(cat "$scratch/err")"; return 1; }
}
