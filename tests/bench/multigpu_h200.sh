#!/usr/bin/env bash
# multigpu_h200.sh - what a split of heat3d over two GPUs costs, measured on a
# GPU host: the copy bandwidth calibrated in the same run; heat3d 1024^3 f32
# per step on one GPU (the reference of both scalings) and on the slab one
# GPU of a two-way split computes (strong scaling: 512 planes and a halo
# plane; weak: 1024 planes and a halo plane); and, where two GPUs are
# present, one halo exchange through tessera's NCCL transport (one plane each
# way, and four for heat3d4's fused steps). The split run over two GPUs is
# not built yet (tessera run --ranks runs on the cpu), so the scaling
# efficiencies and the share of the exchange hidden behind the interior's
# compute are projected from these measurements and labelled so.
#
# usage: tests/bench/multigpu_h200.sh [--tessera PATH] [--bench-halo PATH] [--out DIR]
#                                     [--backend cuda|cpu] [--small] [--steps N]
#   --tessera     the tessera binary (default build/tessera)
#   --bench-halo  the built bench_halo_nccl (default build/tests/bench_halo_nccl)
#   --small       a 64^3 grid (what tests/cli/cli_multigpu_bench.sh runs on the cpu)
# Writes calibrate.txt, run-*.txt, halo.txt and table.txt to --out (default
# data/bench/multigpu-DATE); builds nothing.
set -euo pipefail

tessera=build/tessera bench_halo=build/tests/bench_halo_nccl out="" backend=cuda small=0 steps=100
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a value}; shift 2 ;;
    --bench-halo) bench_halo=${2:?--bench-halo needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --steps) steps=${2:?--steps needs a value}; shift 2 ;;
    --small) small=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "multigpu_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
case $backend in cuda|cpu) ;; *) echo "multigpu_h200.sh: error: --backend is cuda or cpu, not '$backend'" >&2; exit 2 ;; esac
[ -x "$tessera" ] || { echo "multigpu_h200.sh: error: no tessera binary at $tessera" >&2; exit 1; }
out=${out:-data/bench/multigpu-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA_DB=${TESSERA_DB:-$out/records.db}

n=1024
[ "$small" = 1 ] && n=64
half=$((n / 2))

echo "== calibrate ($backend)" >&2
"$tessera" calibrate --backend "$backend" > "$out/calibrate.txt"
copy=$(sed -n 's/^ *copy bandwidth *\([0-9.]*\) GB\/s.*/\1/p' "$out/calibrate.txt")
[ -n "$copy" ] || { echo "multigpu_h200.sh: error: no copy bandwidth in $out/calibrate.txt" >&2; exit 1; }

# ms per step of heat3d on PLANES x n x n (one GPU), from tessera run's time line
step_ms() {
    local planes=$1 name=$2
    echo "== heat3d ${planes}x${n}x${n}, $steps steps" >&2
    "$tessera" run heat3d --shape "${planes}x${n}x${n}" --backend "$backend" --steps "$steps" > "$out/run-$name.txt"
    sed -n 's/^ *time .* s, \([0-9.]*\) ms per step, \([0-9.]*\) GB\/s effective/\1 \2/p' "$out/run-$name.txt"
}
read -r t_whole gbs_whole < <(step_ms "$n" whole)
read -r t_strong _ < <(step_ms $((half + 1)) strong)
read -r t_weak _ < <(step_ms $((n + 1)) weak)

echo "== halo exchange over two GPUs" >&2
halo_rc=0
if [ -x "$bench_halo" ]; then
    "$bench_halo" "$n" "$n" 1,4 1,2,4 > "$out/halo.txt" 2>&1 || halo_rc=$?
else
    echo "no bench_halo_nccl at $bench_halo" > "$out/halo.txt"
    halo_rc=1
fi
# the best chunking's median, in us, for a depth
halo_us() { sed -n "s/^halo .* depth $1 chunks [0-9]* bytes [0-9]*: median \([0-9.]*\) us.*/\1/p" "$out/halo.txt" | sort -g | head -1; }
h1=$([ "$halo_rc" = 0 ] && halo_us 1 || true)
h4=$([ "$halo_rc" = 0 ] && halo_us 4 || true)
[ "$halo_rc" = 0 ] || [ "$halo_rc" = 77 ] ||
    echo "multigpu_h200.sh: the halo benchmark failed (exit $halo_rc), see $out/halo.txt" >&2

device=$([ "$backend" = cuda ] && echo "one GPU" || echo "the cpu")
python3 - "$copy" "$t_whole" "$gbs_whole" "$t_strong" "$t_weak" "${h1:-}" "${h4:-}" "$n" "$(head -1 "$out/halo.txt")" \
    "$device" <<'PY' | tee "$out/table.txt"
import sys
copy, t1, gbs1, ts, tw = (float(v) for v in sys.argv[1:6])
h1 = float(sys.argv[6]) / 1e3 if sys.argv[6] else None   # ms
h4 = float(sys.argv[7]) / 1e3 if sys.argv[7] else None
n, why, device = int(sys.argv[8]), sys.argv[9], sys.argv[10]
rows = [("copy bandwidth (tessera calibrate, this run)", f"{copy:,.4g} GB/s"),
        (f"heat3d {n}^3 f32 on {device}", f"{t1:.3f} ms/step, {gbs1:,.4g} GB/s = {100 * gbs1 / copy:.1f}% of copy"),
        (f"slab of a 2-way split, {n // 2 + 1}x{n}x{n} (strong)", f"{ts:.3f} ms/step"),
        (f"slab of a 2-way split, {n + 1}x{n}x{n} (weak)", f"{tw:.3f} ms/step")]
if h1 is None:
    rows.append(("halo exchange over two GPUs", "not measured: " + why))
else:
    rows.append(("halo exchange, 1 plane each way (NCCL)", f"{1e3 * h1:.1f} us"))
    if h4 is not None:
        rows.append(("halo exchange, 4 planes each way (heat3d4)", f"{1e3 * h4:.1f} us"))
    # the interior (all but the plane next to the neighbour) runs while the halo is in flight
    interior_s, interior_w = ts * (n // 2 - 1) / (n // 2 + 1), tw * (n - 1) / (n + 1)
    exposed_s, exposed_w = max(0.0, h1 - interior_s), max(0.0, h1 - interior_w)
    rows += [("exchange hidden behind the interior, strong (projected)", f"{100 * min(1.0, interior_s / h1):.0f}%"),
             ("strong-scaling efficiency 1 -> 2 GPUs (projected)", f"{100 * t1 / (2 * (ts + exposed_s)):.1f}%"),
             ("weak-scaling efficiency 1 -> 2 GPUs (projected)", f"{100 * t1 / (tw + exposed_w):.1f}%")]
width = max(len(r[0]) for r in rows)
for what, value in rows:
    print(f"{what:<{width}}  {value}")
print("projected: from the measurements above; no split run over two GPUs is built yet")
PY
