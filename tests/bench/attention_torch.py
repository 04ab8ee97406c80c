#!/usr/bin/env python3
"""attention_torch.py - the PyTorch anchor of the attention benchmark:
torch.nn.functional.scaled_dot_product_attention under each of its flash and
cuDNN backends, on the same shapes as tessera, timed with CUDA events (the
median of repeats of back-to-back calls). Prints one JSON object per line:
{"op", "shape", "causal", "kv_heads", "flash_ms", "cudnn_ms", "tflops"
(per backend), "gbps" (per backend)}, FLOPs and bytes counted as tessera
counts them (4 B H D times the visible query-key pairs; Q, K, V and O once,
the log-sum-exp of each row). A backend that cannot run a case prints null
for it and says why on stderr.

usage: attention_torch.py [--repeats N] CASE...
       CASE: attention:BxHxSqxSkvxD[:causal][:kv=N] or attention_decode:BxHxSkvxD[:kv=N]
"""
import argparse
import json
import statistics
import sys


def parse_case(text):
    parts = text.split(":")
    op, dims = parts[0], [int(d) for d in parts[1].split("x")]
    causal = "causal" in parts[2:]
    kv = next((int(p[3:]) for p in parts[2:] if p.startswith("kv=")), 0)
    if op == "attention_decode":
        b, h, skv, d = dims
        sq = 1
    elif op == "attention":
        b, h, sq, skv, d = dims
    else:
        raise ValueError(f"unknown operator '{op}'")
    return op, parts[1], b, h, sq, skv, d, causal, kv or h


def visible_pairs(sq, skv, causal):
    if not causal:
        return sq * skv
    return sq * (skv - sq + 1) + sq * (sq - 1) // 2


def time_ms(torch, fn, repeats):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # calls per sample: about 2 ms of work
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    calls = max(1, min(200, int(2.0 / max(start.elapsed_time(end), 1e-3))))
    samples = []
    for _ in range(repeats):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) / calls)
    return statistics.median(samples)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args(argv)
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    for text in args.cases:
        op, shape, b, h, sq, skv, d, causal, kv = parse_case(text)
        q = torch.randn(b, h, sq, d, dtype=torch.bfloat16, device="cuda")
        k = torch.randn(b, kv, skv, d, dtype=torch.bfloat16, device="cuda")
        v = torch.randn(b, kv, skv, d, dtype=torch.bfloat16, device="cuda")
        flops = 4.0 * b * h * d * visible_pairs(sq, skv, causal)
        nbytes = 2.0 * (2 * b * h * sq * d + 2 * b * kv * skv * d) + 4.0 * b * h * sq
        row = {"op": op, "shape": shape, "causal": causal, "kv_heads": kv}
        for name, backend in backends.items():
            try:
                with sdpa_kernel([backend]):
                    # causal cases have Sq = Skv, where torch's mask (top left) is tessera's (bottom right)
                    fn = (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=kv != h))
                    ms = time_ms(torch, fn, args.repeats)
                row[f"{name}_ms"] = ms
                row[f"{name}_tflops"] = flops / ms / 1e9
                row[f"{name}_gbps"] = nbytes / ms / 1e6
            except Exception as e:  # a backend that refuses the case
                print(f"attention_torch.py: {text}: {name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                      file=sys.stderr)
                row[f"{name}_ms"] = row[f"{name}_tflops"] = row[f"{name}_gbps"] = None
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
