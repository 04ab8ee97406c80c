#!/usr/bin/env bash
# run_stencil_fuzz.sh - builds the stencil format's libFuzzer target with
# clang (AddressSanitizer and UndefinedBehaviorSanitizer) and fuzzes it for
# a bounded time, starting from the stencil library.
#
#   tests/fuzz/run_stencil_fuzz.sh [SECONDS] [WORK_DIR]
#
# SECONDS defaults to 60; WORK_DIR (default build-fuzz) keeps the binary,
# the growing corpus and any crashing input (crash-*). Exits 0 when the
# time ran out without a finding, 77 without clang, 2 when the target does
# not build, another non-zero status on a finding.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
work=${2:-$root/build-fuzz}
if ! command -v clang > /dev/null; then
    echo "skipped: clang not found"
    exit 77
fi
mkdir -p "$work/corpus"
cp "$root"/stencils/templates/*.stencil "$work/corpus/"
clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root" -I"$root/core" \
    "$root/tests/fuzz/fuzz_stencil_parse.c" "$root"/stencils/spec*.c "$root"/stencils/gen_*.c \
    "$root"/core/{error,strbuf,fsutil,space,task,types,host_parallel}.c \
    $(gsl-config --libs) -lpthread -lm -o "$work/fuzz_stencil_parse" ||
    { echo "the fuzzing target does not build"; exit 2; }
cd "$work"
# libFuzzer's own exit status for a finding is 77, which means "skipped" here.
./fuzz_stencil_parse -max_total_time="$seconds" -timeout=10 -error_exitcode=1 -timeout_exitcode=1 -rss_limit_mb=2048 -max_len=4096 \
    -dict="$root/tests/fuzz/stencil.dict" corpus
