#!/usr/bin/env bash
# multigpu_h200.sh - heat3d 1024^3 f32 split over two GPUs against one, on a
# GPU host, with the copy bandwidth calibrated in the same run. It times, on
# one GPU, the whole grid (the reference of both scalings) and the slab one
# GPU of a two-way split computes (strong: 512 planes and a halo plane;
# weak: 1024 and a halo plane); where two GPUs are present, one halo
# exchange through the NCCL transport alone (one plane each way, and four
# for heat3d4's fused steps), and the split runs themselves (tessera run
# --ranks 2: strong on 1024^3, also without overlap, and weak on
# 2048x1024x1024), whose waits for halos give the exchange time not hidden
# behind the interior. With one GPU the split rows say why they are missing.
#
# usage: tests/bench/multigpu_h200.sh [--tessera PATH] [--bench-halo PATH] [--out DIR]
#                                     [--backend cuda|cpu] [--small] [--steps N]
#   --tessera     the tessera binary (default $TESSERA, else build/tessera)
#   --bench-halo  the built bench_halo_nccl (default: tests/bench_halo_nccl beside the binary)
#   --small       a 64^3 grid (what tests/cli/cli_multigpu_bench.sh runs on the cpu)
# Writes calibrate.txt, run-*.txt, halo.txt and table.txt to --out (default
# data/bench/multigpu-DATE); builds nothing. About 3 minutes on two H200s.
set -euo pipefail

tessera=${TESSERA:-build/tessera} bench_halo="" out="" backend=cuda small=0 steps=100
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a value}; shift 2 ;;
    --bench-halo) bench_halo=${2:?--bench-halo needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --steps) steps=${2:?--steps needs a value}; shift 2 ;;
    --small) small=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "multigpu_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
case $backend in cuda|cpu) ;; *) echo "multigpu_h200.sh: error: --backend is cuda or cpu, not '$backend'" >&2; exit 2 ;; esac
[ -x "$tessera" ] || { echo "multigpu_h200.sh: error: no tessera binary at $tessera" >&2; exit 1; }
bench_halo=${bench_halo:-$(dirname "$tessera")/tests/bench_halo_nccl}
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

# "MS_PER_STEP GBS WAIT_S" of heat3d on PLANES x n x n (WAIT_S: seconds waiting for halos, split runs)
step_ms() {
    local planes=$1 name=$2
    shift 2
    echo "== heat3d ${planes}x${n}x${n} $*, $steps steps" >&2
    if ! "$tessera" run heat3d --shape "${planes}x${n}x${n}" --backend "$backend" --steps "$steps" "$@" \
            > "$out/run-$name.txt" 2>&1; then
        echo "multigpu_h200.sh: heat3d ${planes}x${n}x${n} $* failed: $(tail -1 "$out/run-$name.txt")" >&2
        return 0
    fi
    local t w
    t=$(sed -n 's/^ *time .* s, \([0-9.]*\) ms per step, \([0-9.]*\) GB\/s effective/\1 \2/p' "$out/run-$name.txt")
    w=$(sed -n 's/^ *halos .*, \([0-9.]*\) s waiting/\1/p' "$out/run-$name.txt")
    echo "$t ${w:-0}"
}
read -r t_whole gbs_whole _ < <(step_ms "$n" whole)
[ -n "${t_whole:-}" ] || { echo "multigpu_h200.sh: error: the whole grid did not run" >&2; exit 1; }
read -r t_strong _ < <(step_ms $((half + 1)) slab-strong)
read -r t_weak _ < <(step_ms $((n + 1)) slab-weak)

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

split_strong="" split_plain="" split_weak=""
if [ -n "$h1" ]; then   # two GPUs: the split runs themselves
    split_strong=$(step_ms "$n" split-strong --ranks 2)
    split_plain=$(step_ms "$n" split-strong-plain --ranks 2 --split overlap=none)
    split_weak=$(step_ms $((2 * n)) split-weak --ranks 2)
fi

device=$([ "$backend" = cuda ] && echo "one GPU" || echo "the cpu")
python3 - "$copy" "$t_whole" "$gbs_whole" "${t_strong:-}" "${t_weak:-}" "${h1:-}" "${h4:-}" "$n" \
    "$(head -1 "$out/halo.txt")" "$device" "$steps" "$split_strong" "$split_plain" "$split_weak" <<'PY' | tee "$out/table.txt"
import sys
a = sys.argv[1:]
num = lambda v: float(v) if v else None
copy, t1, gbs1, ts, tw = num(a[0]), num(a[1]), num(a[2]), num(a[3]), num(a[4])
h1 = num(a[5]) / 1e3 if a[5] else None   # ms
h4 = num(a[6]) / 1e3 if a[6] else None
n, why, device, steps = int(a[7]), a[8], a[9], int(a[10])
split = [[float(x) for x in v.split()] if v.strip() else None for v in a[11:14]]   # ms/step, GB/s, s waiting
ms = lambda v: f"{v:.3f} ms/step" if v is not None else "failed (see its run file)"
rows = [("copy bandwidth (tessera calibrate, this run)", f"{copy:,.4g} GB/s"),
        (f"heat3d {n}^3 f32 on {device}", f"{t1:.3f} ms/step, {gbs1:,.4g} GB/s = {100 * gbs1 / copy:.1f}% of copy"),
        (f"its slab in a 2-way split, {n // 2 + 1}x{n}x{n} (strong)", ms(ts)),
        (f"its slab in a 2-way split, {n + 1}x{n}x{n} (weak)", ms(tw))]
if h1 is None:
    rows.append(("halo exchange and split runs over two GPUs", "not measured: " + why))
else:
    rows.append(("halo exchange alone, 1 plane each way (NCCL)", f"{1e3 * h1:.1f} us"))
    if h4 is not None:
        rows.append(("halo exchange alone, 4 planes each way (heat3d4)", f"{1e3 * h4:.1f} us"))
    strong, plain, weak = split
    if strong:
        exposed = 1e3 * strong[2] / steps   # ms per step waiting after the interior
        rows += [(f"split {n}^3 over 2 GPUs (strong)", f"{strong[0]:.3f} ms/step, efficiency "
                  f"{100 * t1 / (2 * strong[0]):.1f}% (target >= 90%)"),
                 ("  exchange hidden behind the interior", f"{100 * max(0.0, 1 - exposed / h1):.0f}% "
                  f"(waited {1e3 * exposed:.1f} us per step of a {1e3 * h1:.1f} us exchange)")]
    else:
        rows.append((f"split {n}^3 over 2 GPUs (strong)", "failed (see run-split-strong.txt)"))
    if plain:
        rows.append(("  the same without overlap", f"{plain[0]:.3f} ms/step, efficiency {100 * t1 / (2 * plain[0]):.1f}%"))
    rows.append((f"split {2 * n}x{n}x{n} over 2 GPUs (weak)",
                 f"{weak[0]:.3f} ms/step, efficiency {100 * t1 / weak[0]:.1f}% (target >= 95%)" if weak
                 else "failed (see run-split-weak.txt)"))
width = max(len(r[0]) for r in rows)
for what, value in rows:
    print(f"{what:<{width}}  {value}")
PY
