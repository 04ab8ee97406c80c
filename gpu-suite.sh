#!/usr/bin/env bash
# gpu-suite.sh - builds tessera on a GPU host from a fresh copy of the tree,
# runs the GPU tests and the GPU benchmarks, and ends with a summary table.
#
#   ./gpu-suite.sh [RESULTS_DIR]        (default: data/bench/gpu-<date>)
#
# Needs gcc, cmake, the CUDA toolkit (headers and NVRTC) and an NVIDIA
# driver. Libraries the host lacks (netCDF, GSL, SQLite, jansson) come from
# the offline bundle in .bundle/ (made with `./deps-bundle.sh download .bundle`
# on a connected Debian 12 machine), unpacked into $TESSERA_DEPS_PREFIX
# (default /tmp/tessera-deps). TESSERA_SUITE_QUICK=1 runs smaller sweeps and
# shorter tuning runs; TESSERA_SUITE_CONFIGS=N sweeps N random heat3d configs
# (N/3 of sum); TESSERA_SUITE_TUNER=0 leaves the tuner out; TESSERA_SUITE_ONLY=LIST
# runs only the listed sections after the build (comma-separated, of: tests,
# sweeps, compile, tuner, rate, record, transfer, stencils, families). TESSERA_SUITE_RECORD
# sets the records' sample sizes (see the record section); TESSERA_SUITE_STENCILS
# the stencils tuned (see the stencil section); TESSERA_SUITE_FAMILIES the other families'
# and apps' benchmark scripts run (tests/bench/NAME_h200.sh; default: all of them), each for at
# most TESSERA_SUITE_FAMILY_S seconds. TESSERA_SUITE_CTEST_EXCLUDE: a regex of GPU tests left out.
#
# RESULTS_DIR receives: ctest logs, the benchmark sweeps as JSON lines, the
# tuner's JSON reports, and summary.txt (the table printed at the end).
set -uo pipefail

root=$(cd "$(dirname "$0")" && pwd)
results=${1:-$root/data/bench/gpu-$(date +%Y%m%d-%H%M%S)}
build=$root/build-gpu
jobs=$(nproc)
quick=${TESSERA_SUITE_QUICK:-}
only=${TESSERA_SUITE_ONLY:-}
want() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
mkdir -p "$results"
results=$(cd "$results" && pwd)
t0=$(date +%s)
say() { printf '\n== [%4ds] %s\n' $(($(date +%s) - t0)) "$*"; }
failures=()

# --- dependencies ---------------------------------------------------------------
say "dependencies"
if pkg-config --exists netcdf jansson 2>/dev/null && [ -e /usr/include/gsl/gsl_rng.h ] &&
    [ -e /usr/include/sqlite3.h ]; then
    echo "using the host's netCDF, GSL, SQLite and jansson"
elif ls "$root"/.bundle/*.deb > /dev/null 2>&1; then
    eval "$(bash "$root/deps-bundle.sh" unpack "$root/.bundle" "${TESSERA_DEPS_PREFIX:-/tmp/tessera-deps}")" ||
        { echo "cannot unpack the dependency bundle"; exit 1; }
else
    echo "netCDF/GSL/SQLite/jansson are missing and there is no bundle in .bundle/ (see deps-bundle.sh)"
    exit 1
fi
# The driver's libraries may live outside the loader's cache (containers mount them).
if ! ldconfig -p | grep -q 'libcuda.so.1 '; then
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64-nvidia; do
        [ -e "$d/libcuda.so.1" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
    done
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.draw \
    --format=csv 2>&1 | tee "$results/gpu.txt"

# --- build ------------------------------------------------------------------------
say "build ($jobs jobs)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release > "$results/cmake.log" 2>&1 &&
    cmake --build "$build" -j "$jobs" >> "$results/cmake.log" 2>&1
build_rc=$?
grep -E "CUDAToolkit|warning|error" "$results/cmake.log" | head -20
if [ $build_rc -ne 0 ]; then
    tail -40 "$results/cmake.log"
    echo "build failed"
    exit 1
fi
export TESSERA_CACHE=$build/kernel-cache TESSERA_DB=$results/records.db
rm -rf "$TESSERA_CACHE"

# --- tests ------------------------------------------------------------------------
if want tests; then
    say "tests: ctest -L gpu, and the NVRTC template test"
    (cd "$build" && ctest -L gpu ${TESSERA_SUITE_CTEST_EXCLUDE:+-E "$TESSERA_SUITE_CTEST_EXCLUDE"} \
        --output-on-failure 2>&1 | tee "$results/ctest-gpu.log")
    (cd "$build" && ctest -R test_cuda_templates --output-on-failure 2>&1 | tee "$results/ctest-templates.log")
    for log in ctest-gpu ctest-templates; do
        grep -q "100% tests passed" "$results/$log.log" || failures+=("$log")
        grep -q "(Skipped)" "$results/$log.log" && failures+=("$log: skipped tests")
    done
fi

# --- benchmarks: sweeps of the cuda spaces against the calibrated copy --------------
bench=$build/bench_cuda
if want sweeps; then
    cc -std=c11 -O2 -fopenmp -D_GNU_SOURCE -I"$root" -I"$root/core" -I"$root/tests" ${TESSERA_DEPS_CFLAGS:-} \
        "$root/tests/gpu/bench_cuda.c" -L"$build" ${TESSERA_DEPS_LDFLAGS:-} -ltessera -lgsl -lgslcblas -lm \
        -Wl,-rpath,"$build" -o "$bench" || failures+=("bench build")
fi
sweeps=$results/sweeps.jsonl
if [ -n "$quick" ]; then
    n_heat=300 n_sum=100 tune_big=60 tune_small=100 tune_sum=40 tune_limit=60
else
    n_heat=400 n_sum=200 tune_big=200 tune_small=300 tune_sum=100 tune_limit=240
fi
if [ -n "${TESSERA_SUITE_CONFIGS:-}" ]; then n_heat=$TESSERA_SUITE_CONFIGS n_sum=$((n_heat / 3)); fi
run_bench() {
    "$bench" "$@" 2>&1 | tee -a "$results/bench.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failures+=("bench $*")
}
if want sweeps; then
    say "sweeps of the cuda spaces"
    run_bench sweep heat3d 512x512x512 f32 $n_heat "$jobs" "$sweeps"
    run_bench sweep sum 1073741824 f32 $n_sum "$jobs" "$sweeps"
    run_bench sweep heat3d 512x512x512 f64 $((n_heat / 3)) "$jobs" "$sweeps"
    run_bench sweep sum 268435456 f64 $((n_sum / 2)) "$jobs" "$sweeps"
    # Compile throughput from an empty cache: one process, then one per core.
    for w in 1 "$jobs"; do
        TESSERA_CACHE=$(mktemp -d) run_bench compile heat3d 256x256x256 f32 $((w == 1 ? 24 : 320)) "$w"
    done
fi
if want compile; then
    say "compile pool: small kernels, heat3d and sum configs, 1 process and one per core"
    for op in small heat3d sum; do
        [ $op = small ] && n=$((16 * jobs)) || n=$((8 * jobs))
        TESSERA_CACHE=$(mktemp -d) timeout 200 "$build/tests/bench_compile_pool" cuda $n "$jobs" $op 2>&1 |
            tee -a "$results/compile-pool.txt" || failures+=("compile pool $op")
    done
fi

# --- the tuner end to end (calibrate, tune) ------------------------------------------
cli=$build/tessera
"$cli" devices > "$results/devices.txt" 2>&1
has_cuda() { grep -q '^cuda:.*sm_' "$results/devices.txt"; }
has_cuda || { echo "the tuner sees no cuda device (devices.txt)"; failures+=("tessera devices"); }
if [ "${TESSERA_SUITE_TUNER:-1}" != 0 ] && want tuner && has_cuda; then
    say "tuner" 
    timeout $tune_limit "$cli" calibrate --backend cuda 2>&1 | tee "$results/calibrate.txt"
    timeout $tune_limit "$cli" tune heat3d --shape 512x512x512 --dtype f32 --backend cuda --budget $tune_big --json \
        > "$results/tune-heat3d-512.json" 2> "$results/tune-heat3d-512.err" || failures+=("tune heat3d 512")
    start=$(date +%s%N)
    timeout $tune_limit "$cli" tune heat3d --shape 256x256x256 --dtype f32 --backend cuda --budget $tune_small --json \
        > "$results/tune-heat3d-256.json" 2> "$results/tune-heat3d-256.err" || failures+=("tune heat3d 256")
    ms=$((($(date +%s%N) - start) / 1000000))
    echo "tune heat3d 256^3, $tune_small candidates: $ms ms wall (compile + verify + time)" |
        tee "$results/tune-rate.txt"
    timeout $tune_limit "$cli" tune sum --shape 1073741824 --dtype f32 --backend cuda --budget $tune_sum --json \
        > "$results/tune-sum.json" 2> "$results/tune-sum.err" || failures+=("tune sum")
fi

# --- end-to-end rate, spaces recorded for replay, warm starts on related shapes ----------
if [ -n "$quick" ]; then rate_n=150 warm_args="--repeats 3 --budget 20"; else rate_n=300 warm_args="--repeats 5 --budget 25"; fi
# Spaces recorded for replay: "OP SHAPE SAMPLE" entries separated by commas.
record_list=${TESSERA_SUITE_RECORD:-"heat3d 256x256x256 600,sum 67108864 720"}
if [ "${TESSERA_SUITE_TUNER:-1}" != 0 ] && has_cuda; then
    if want rate; then
        say "end-to-end rate once the compile pool is warm (fresh kernel cache)"
        TESSERA_CACHE=$(mktemp -d) timeout 240 "$build/tests/bench_tune_rate" cuda heat3d 256x256x256 $rate_n 2>&1 |
            tee "$results/tune-rate-warm.txt" || failures+=("bench_tune_rate")
    fi
    if want record; then
        say "spaces recorded for replay (tessera record)"
        IFS=, read -ra records <<< "$record_list"
        for spec in "${records[@]}"; do
            set -- $spec
            timeout 300 "$cli" record "$1" --shape "$2" --backend cuda --budget "$3" --db "$results/record.db" \
                -o "$results/space-$1-$2.jsonl" 2>&1 | tail -1 | tee -a "$results/record.txt" ||
                failures+=("record $1 $2")
        done
    fi

    if want transfer; then
        say "warm starts: related shapes and operators, cold against warm, several seeds"
        # shellcheck disable=SC2086
        timeout 480 "$root/tests/bench/bench_transfer_hw.sh" --tessera "$cli" --backend cuda $warm_args \
            --out "$results/transfer-hw" > "$results/transfer-hw.log" 2>&1 || failures+=("bench_transfer_hw")
    fi
fi

# --- the stencil library on cuda: tuned, against the calibrated copy and a naive kernel ---
if want stencils; then
    cli=$build/tessera
    [ -n "$quick" ] && stencil_n=30 || stencil_n=60
    say "stencils: calibrate, a hand-written naive heat3d, then tessera tune per stencil ($stencil_n evaluations)"
    "$cli" calibrate --backend cuda 2>&1 | tee "$results/calibrate-stencils.txt"
    timeout 120 "$build/tests/bench_naive_heat3d" 512 2>&1 | tee "$results/naive-heat3d.txt" || failures+=("naive heat3d")
    # "OP SHAPE DTYPE [PINNED]" entries separated by commas; PINNED (NAME=VALUE items joined
    # by "+") goes to --fix.
    stencil_list=${TESSERA_SUITE_STENCILS:-"heat3d 512x512x512 f32,heat3d 512x512x512 f64,box3d27 512x512x512 f32,\
star3d25 512x512x512 f32,varcoef3d 512x512x512 f32,hdiff 80x256x256 f32,hdiff 80x512x512 f32,\
heat2d 8192x8192 f32,advect2d 8192x8192 f32,heat3d4 512x512x512 f32,heat3d4 512x512x512 f32 time_block=2,\
heat3d4 512x512x512 f32 time_block=4,heat3d4 512x512x512 f32 time_block=4+ppt_x=2"}
    IFS=, read -ra stencils <<< "$stencil_list"
    for spec in "${stencils[@]}"; do
        set -- $spec
        fix=${4:-}
        fix=${fix//+/,}
        name="stencil-$1-$2-$3${fix:+-${fix//[=,]/}}"
        timeout 150 "$cli" tune "$1" --shape "$2" --dtype "$3" --backend cuda --budget $stencil_n --transfer off \
            ${fix:+--fix "$fix"} --db "$results/stencils.db" --json > "$results/$name.json" 2> "$results/$name.err" ||
            failures+=("stencil $spec")
    done
fi

# --- the other families and the apps: each one's own benchmark script, time-limited -----
if want families; then
    family_s=${TESSERA_SUITE_FAMILY_S:-240}
    for fam in ${TESSERA_SUITE_FAMILIES:-rowwise fluid md weather attention gemm gemm_skinny}; do
        script=$root/tests/bench/${fam}_h200.sh
        [ -x "$script" ] || { echo "no benchmark script for $fam"; continue; }
        say "$fam: $script (at most $family_s s)"
        case $fam in
        fluid) args=(--tessera "$build/tessera" --fluid "$build/tessera-fluid") ;;
        md) args=(--tessera "$build/tessera" --md "$build/tessera-md") ;;
        weather) args=(--tessera "$build/tessera" --weather "$build/tessera-weather" --seconds $((family_s - 5))) ;;
        rowwise) args=(--torch-forms eager) ;;   # compiled forms take minutes of their own
        gemm) args=(--wgmma) ;;                  # each large case in its own sub-space: all of them at 20 s take 320 s
        *) args=() ;;
        esac
        # shellcheck disable=SC2086
        TESSERA=$build/tessera TESSERA_DB=$results/$fam/records.db timeout "$family_s" "$script" "${args[@]}" \
            --out "$results/$fam" ${TESSERA_SUITE_FAMILY_ARGS:-} > "$results/$fam.log" 2>&1 ||
            failures+=("$fam benchmark (exit $?)")
        tail -25 "$results/$fam.log"
    done
fi

# --- summary ----------------------------------------------------------------------------
say "summary"
TESSERA_ROOT=$root python3 - "$results" "${failures[@]+"${failures[@]}"}" <<'EOF' | tee "$results/summary.txt"
import json, os, re, sys
results, failures = sys.argv[1], sys.argv[2:]
def read(name):
    p = os.path.join(results, name)
    return open(p).read() if os.path.exists(p) else ""
rows = []
for line in read("ctest-gpu.log").splitlines() + read("ctest-templates.log").splitlines():
    m = re.search(r"Test\s+#\d+: (\S+) \.+\s*(.*?)\s+([\d.]+) sec", line)
    if m: rows.append((m.group(1), m.group(2).replace("*", "").strip(), m.group(3) + " s"))
print("%-28s %-16s %s" % ("test", "result", "time"))
for r in rows: print("%-28s %-16s %s" % r)
print()
print("%-34s %10s %10s %8s  %s" % ("benchmark", "copy GB/s", "best GB/s", "of copy", "best config"))
best = {}
for line in read("sweeps.jsonl").splitlines():
    r = json.loads(line)
    k = (r["op"], r["dtype"], r["n"])
    if r["status"] == "ok" and (k not in best or r["time_ms"] < best[k]["time_ms"]): best[k] = r
for k, r in best.items():
    print("%-34s %10.0f %10.0f %7.1f%%  %s" % ("%s %s n=%d" % k, r["copy_gbps"], r["gbps"],
          100 * r["gbps"] / r["copy_gbps"], r["config"]))
for line in read("bench.log").splitlines():
    if line.startswith("COMPILE"): print(line)
print(read("compile-pool.txt").strip())
for name in ("tune-heat3d-512.json", "tune-heat3d-256.json", "tune-sum.json"):
    text = read(name)
    try:
        j = json.loads(text)
        b = j.get("best", {})
        print("%-22s best %.4f ms, %.0f GB/s, %.1f%% of ceiling %.0f GB/s, %s evaluations, statuses %s" % (
            name, b.get("time_ms", 0), b.get("gbps", 0), 100 * j.get("fraction_of_ceiling", 0),
            j.get("ceiling_gbps", 0), j.get("evaluations"), j.get("statuses")))
    except ValueError:
        if text or os.path.exists(os.path.join(results, name)): print("%-22s no JSON report" % name)
print(read("tune-rate.txt").strip())
print(read("tune-rate-warm.txt").strip())
print(read("record.txt").strip())
for line in read("transfer-hw/summary.txt").splitlines():
    if line and not line.startswith("  per seed"): print(line)
print(read("naive-heat3d.txt").strip().splitlines()[-1] if read("naive-heat3d.txt").strip() else "")
names = sorted(n for n in os.listdir(results) if n.startswith("stencil-") and n.endswith(".json"))
def steps(op):   # time steps per call of a library stencil: its bandwidth per step is that many times higher
    path = os.path.join(os.environ["TESSERA_ROOT"], "stencils", "templates", op + ".stencil")
    spec = open(path).read() if os.path.exists(path) else ""
    m = re.search(r"^steps\s+(\d+)", spec, re.M)
    return int(m.group(1)) if m else 1
if names:
    print("%-34s %10s %10s %8s %10s  %s" % ("stencil (tuned on cuda)", "copy GB/s", "GB/s", "of copy", "vs default", "best config"))
for name in names:
    try:
        j = json.loads(read(name))
        b = j["best"]
        label = "%s %s %s%s" % (j["op"], j["shape"], j["dtype"], name[:-5].split(j["dtype"])[-1])
        # No speedup when the template's default is not in the pinned sub-space.
        vs = "%9.2fx" % j["speedup_over_default"] if j["speedup_over_default"] > 0 else "%10s" % "-"
        print("%-34s %10.0f %10.0f %7.1f%% %s  %s" % (label, j["ceiling_gbps"],
              b["gbps"], 100 * j["fraction_of_ceiling"], vs, b["config_text"]))
        n = steps(j["op"])
        if n > 1:
            print("%-34s %10s %10.0f %7.2fx copy per step (%d steps per call)" % ("", "", n * b["gbps"],
                  n * j["fraction_of_ceiling"], n))
    except (ValueError, KeyError, TypeError):
        print("%-34s no result (%s)" % (name, read(name.replace(".json", ".err")).strip()[-120:]))
for fam in sorted(os.listdir(results)):   # the families' own tables (the families section)
    for table in ("table.txt", "summary.txt"):
        text = read(os.path.join(fam, table)).strip()
        if text and os.path.isdir(os.path.join(results, fam)):
            print("\n== %s (%s/%s)\n%s" % (fam, fam, table, text))
            break
print("failures: " + (", ".join(failures) if failures else "none"))
EOF
[ ${#failures[@]} -eq 0 ]
