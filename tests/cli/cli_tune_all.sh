#!/usr/bin/env bash
# tune-all: a task list tuned with shares by priority, a library of every
# task, malformed lines refused before anything runs, and a run killed
# mid-way that resumes where it stopped.
source "$(dirname "$0")/harness.bash"
evals() {   # evals DB TASK_KEY: the task's evaluations in the records (0 if none)
    [ -e "$1" ] || { echo 0; return; }
    "$tessera" db export --db "$1" --task "$2" 2>/dev/null | wc -l
}
library_tasks() {   # library_tasks FILE: the task keys of a kernel library, sorted
    python3 -c "
import json, sys
doc = json.load(open(sys.argv[1]))
print(' '.join(sorted(e['task'] for e in doc['kernels'])))" "$1"
}

cat >"$scratch/tasks.txt" <<'EOF'
# three tiny tasks on the CPU
heat3d 8x8x8 f32 cpu

sum 1000 cpu 2      # priority 2: twice the share
softmax 4x64 f32 cpu
EOF
keys="heat3d:f32:8x8x8 softmax:f32:4x64:error_budget=0 sum:f32:1000"

# --- a full run -------------------------------------------------------------
"$tessera" tune-all "$scratch/tasks.txt" --budget 2 --strategy random -o "$scratch/lib.json" \
    >"$scratch/full.txt" 2>"$scratch/full.err"
check "a full run exits 0 ($(cat "$scratch/full.err"))" test $? -eq 0
check "heat3d got its share of 2" test "$(evals "$TESSERA_DB" heat3d:f32:8x8x8)" -eq 2
check "sum, of priority 2, got twice that" test "$(evals "$TESSERA_DB" sum:f32:1000)" -eq 4
check "softmax got its share" test "$(evals "$TESSERA_DB" softmax:f32:4x64:error_budget=0)" -eq 2
check "the summary says each was tuned" test "$(grep -c ' tuned$' "$scratch/full.txt")" -eq 3
check "the summary gives the evaluations" grep -Eq '^sum:f32:1000 +4 +[0-9.e-]+ +tuned$' "$scratch/full.txt"
check "the library holds every task" test "$(library_tasks "$scratch/lib.json")" = "$keys"

# Again with the same shares: nothing is left to do.
"$tessera" tune-all "$scratch/tasks.txt" --budget 2 >"$scratch/again.txt" 2>"$scratch/again.err"
check "a repeated run exits 0" test $? -eq 0
check "it skips every task" test "$(grep -c ' skipped$' "$scratch/again.txt")" -eq 3
check "and says why" grep -q "skipping sum:f32:1000: .* already hold 4 evaluations (its share: 4)" "$scratch/again.err"
check "and runs nothing" test "$(evals "$TESSERA_DB" sum:f32:1000)" -eq 4

# --- malformed lines: a usage error naming file:line, nothing run ------------
bad() {   # bad NAME LINE_TEXT EXPECTED_MESSAGE
    printf 'sum 1000\n%s\n' "$2" >"$scratch/$1.txt"
    "$tessera" tune-all "$scratch/$1.txt" --db "$scratch/bad.db" >"$scratch/$1.out" 2>&1
    local rc=$?
    check "$1: exit 2 ($rc)" test $rc -eq 2
    check "$1: names the line and says why" grep -q "$scratch/$1.txt:2: .*$3" "$scratch/$1.out"
}
bad no_shape "heat3d" "expected OP SHAPE"
bad unknown_op "heat4d 8x8x8" "unknown operator 'heat4d'"
bad bad_shape "heat3d 8x8xq" "shape"
bad bad_dtype "heat3d 8x8x8 f33" "f33"
bad bad_attr "rmsnorm:eps=abc 4x64" "eps"
bad zero_priority "sum 1000 f32 cpu 0" "priority '0'"
bad out_of_order "sum 1000 cpu f32" "'f32' after the backend"
bad too_many "sum 1000 f32 cpu 1 2" "at most 5 words"
bad no_generator "heat3d 8x8x8 f32 nosuch" "nosuch"
check "nothing ran for a malformed list" test ! -e "$scratch/bad.db"
printf '# only a comment\n\n' >"$scratch/empty.txt"
"$tessera" tune-all "$scratch/empty.txt" --db "$scratch/bad.db" 2>"$scratch/empty.err"
check "a list without tasks is a usage error" test $? -eq 2
check "which says so" grep -q "holds no task" "$scratch/empty.err"
"$tessera" tune-all "$scratch/none.txt" 2>"$scratch/none.err"
check "a missing list fails (1)" test $? -eq 1
check "naming it" grep -q "cannot open $scratch/none.txt" "$scratch/none.err"
"$tessera" tune-all "$scratch/tasks.txt" --strategy nosuch --db "$scratch/bad.db" 2>/dev/null
check "an unknown strategy is a usage error" test $? -eq 2
"$tessera" tune-all "$scratch/tasks.txt" -o "$scratch/no/dir/lib.json" --db "$scratch/bad.db" 2>/dev/null
check "an unwritable library path fails before anything runs" test $? -eq 1 -a ! -e "$scratch/bad.db"

# --- a failing task does not stop the others ---------------------------------
printf 'sum 1000 f32 cpu\nheat3d 8x8x8 f32 cuda\n' >"$scratch/mixed.txt"
if "$tessera" devices 2>/dev/null | grep -q "^cuda: unavailable"; then   # else a GPU test would tune it
    "$tessera" tune-all "$scratch/mixed.txt" --budget 2 --db "$scratch/mixed.db" >"$scratch/mixed.out" 2>&1
    check "a run with a failed task exits 1" test $? -eq 1
    check "the failed task is marked" grep -Eq '^heat3d 8x8x8 +0 +- +failed$' "$scratch/mixed.out"
    check "with its reason" grep -q "line 2 (heat3d 8x8x8): .*cuda" "$scratch/mixed.out"
    check "and the other task still ran" test "$(evals "$scratch/mixed.db" sum:f32:1000)" -eq 2
fi

# --- killed with SIGKILL mid-way, then resumed --------------------------------
# A database and compile cache of their own, so the kernels compile again
# and the run is slow enough to be killed during its second or third task.
export TESSERA_CACHE="$scratch/cache"
cat >"$scratch/resume.txt" <<'EOF'
heat3d 8x8x8 f32 cpu 1
sum 1000 f32 cpu 2
softmax 4x64 f32 cpu 3
EOF
db="$scratch/resume.db"
"$tessera" tune-all "$scratch/resume.txt" --budget 2 --strategy random --db "$db" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do   # until the second task has begun
    [ "$(evals "$db" sum:f32:1000)" -ge 1 ] && break
    sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
declare -A before share=([heat3d:f32:8x8x8]=2 [sum:f32:1000]=4 [softmax:f32:4x64:error_budget=0]=6)
for k in $keys; do before[$k]=$(evals "$db" "$k"); done
check "the first task finished before the kill (${before[heat3d:f32:8x8x8]})" test "${before[heat3d:f32:8x8x8]}" -eq 2
check "the second was part way (${before[sum:f32:1000]} of 4)" test "${before[sum:f32:1000]}" -ge 1 -a "${before[sum:f32:1000]}" -lt 4
check "the last had not begun (${before[softmax:f32:4x64:error_budget=0]})" \
    test "${before[softmax:f32:4x64:error_budget=0]}" -eq 0

"$tessera" tune-all "$scratch/resume.txt" --budget 2 --strategy random --db "$db" -o "$scratch/resumed.json" \
    >"$scratch/resume.out" 2>"$scratch/resume.err"
check "the resumed run exits 0 ($(cat "$scratch/resume.err"))" test $? -eq 0
for k in $keys; do
    if [ "${before[$k]}" -ge "${share[$k]}" ]; then
        check "$k, done before the kill, is skipped" grep -Eq "^$k +${before[$k]} .* skipped$" "$scratch/resume.out"
        check "and said so" grep -q "skipping $k:" "$scratch/resume.err"
    else
        check "$k (${before[$k]} of ${share[$k]} before) is tuned" grep -Eq "^$k .* tuned$" "$scratch/resume.out"
        [ "${before[$k]}" -gt 0 ] && check "$k is said to resume" grep -q "resuming $k: ${before[$k]} of" "$scratch/resume.err"
    fi
    check "$k holds exactly its share now" test "$(evals "$db" "$k")" -eq "${share[$k]}"
done
check "the library holds every task" test "$(library_tasks "$scratch/resumed.json")" = "$keys"

finish
