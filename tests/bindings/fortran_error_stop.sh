#!/usr/bin/env bash
# A failure without `stat` stops the Fortran program (exit status 1) with the
# library's message, naming the call and the task.
set -u
out=$("$1" stop 2>&1)
rc=$?
expected="tessera: tess_kernel_get(nosuch f32 [8,8,2]): unknown operator 'nosuch'"
if [ $rc -ne 1 ]; then echo "FAIL: exit status $rc, expected 1; output: $out"; exit 1; fi
case "$out" in
  *"not stopped"*) echo "FAIL: the program went on after the failure"; exit 1 ;;
  *"$expected"*) echo "stopped with: $expected" ;;
  *) echo "FAIL: expected '$expected' in: $out"; exit 1 ;;
esac
