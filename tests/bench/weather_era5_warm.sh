#!/usr/bin/env bash
# weather_era5_warm.sh TESSERA OUT [SOURCE]
# Warm tunes of tessera-weather's two kernels on the ERA5 grid (137 x 725 x 1440, f32, CUDA) from a
# 1-degree x 30-level source's records alone (SOURCE holds records-OP-30x185x360.jsonl; default
# data/bench/weather-h200-run3/round3-transfer), budget 8 in batches of 2, each in a freshly calibrated
# database. Writes calibrate.txt, tune-OP-137x725x1440-warm.json and the records under OUT.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 TESSERA OUT [SOURCE]" >&2; exit 2; }
T=$(realpath "$1"); out=$2
src=$(realpath "${3:-data/bench/weather-h200-run3/round3-transfer}")
export TESSERA_STENCIL_PATH=${TESSERA_STENCIL_PATH:-$PWD/apps/weather/stencils}
mkdir -p "$out"; cd "$out"
set -x
"$T" calibrate --backend cuda --db ./base.db > calibrate.txt
for op in sphdiff sphadv; do
  cp base.db $op.db
  "$T" db import "$src/records-$op-30x185x360.jsonl" --db ./$op.db
  timeout -s INT -k 3 100 "$T" tune $op --shape 137x725x1440 --dtype f32 --backend cuda --budget 8 --seconds 90 \
      --transfer auto --batch 2 --db ./$op.db --json > tune-$op-137x725x1440-warm.json
  "$T" db export --db ./$op.db --task $op:f32:137x725x1440 -o ./records-$op-137x725x1440-warm.jsonl
done
rm -f ./*.db ./*.db-wal ./*.db-shm
