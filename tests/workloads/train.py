#!/usr/bin/env python3
"""A small numpy-free training loop marked with the mfu Python module.

The Python counterpart of mlp.c, for recording Python programs end to end:
a 16 -> 32 (ReLU) -> 4 MLP, softmax cross-entropy, batch 8, plain SGD, on
synthetic data from a fixed seed (labels from a random linear teacher), in
pure-Python lists. Each step is an mfu.step with phases data, forward,
backward and optimizer, and declares its model FLOPs the way mlp.c does (see
docs/demo.md): forward 2*B*P, backward 2*B*P + 2*B*P2 (no input gradient for
the first layer), optimizer 2*P, with P the number of weights (no biases).
Bytes: every fp64 weight read once (forward) and written once (optimizer).

    train.py [--steps N] [--quiet] [--print-losses] [--data-sleep-ms MS]

Finds mfu.py on sys.path, else in ../../src/python relative to this file.
Prints `train: steps=N model_flops_per_step=X model_bytes_per_step=Y` to
stderr at the end.
"""

import argparse
import math
import os
import random
import sys
import time

try:
    import mfu
except ImportError:
    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "python")
    )
    import mfu

N_IN, N_HID, N_OUT, BATCH = 16, 32, 4, 8
LR = 0.1
POOL = 512
P1, P2 = N_IN * N_HID, N_HID * N_OUT
PARAMS = P1 + P2
WORD = 8  # Python floats are fp64

FWD_FLOPS = 2 * BATCH * PARAMS
BWD_FLOPS = 2 * BATCH * PARAMS + 2 * BATCH * P2
OPT_FLOPS = 2 * PARAMS
STEP_FLOPS = FWD_FLOPS + BWD_FLOPS + OPT_FLOPS
FWD_BYTES = WORD * PARAMS
OPT_BYTES = WORD * PARAMS
STEP_BYTES = FWD_BYTES + OPT_BYTES


def matmul(a, b):
    """a (m x k) times b (k x n), i-k-j order: m*n*k multiplies and adds."""
    n = len(b[0])
    out = []
    for row in a:
        c = [0.0] * n
        for p, x in enumerate(row):
            bp = b[p]
            for j in range(n):
                c[j] += x * bp[j]
        out.append(c)
    return out


def transpose(a):
    return [list(col) for col in zip(*a)]


def make_data(rng):
    teacher = [[rng.gauss(0, 1) for _ in range(N_OUT)] for _ in range(N_IN)]
    xs = [[rng.gauss(0, 1) for _ in range(N_IN)] for _ in range(POOL)]
    scores = matmul(xs, teacher)
    ys = [max(range(N_OUT), key=s.__getitem__) for s in scores]
    return xs, ys


def init_weights(rng):
    w1 = [[rng.gauss(0, math.sqrt(2 / N_IN)) for _ in range(N_HID)] for _ in range(N_IN)]
    w2 = [[rng.gauss(0, math.sqrt(2 / N_HID)) for _ in range(N_OUT)] for _ in range(N_HID)]
    return w1, w2


def forward(x, y, w1, w2):
    h = [[v if v > 0 else 0.0 for v in row] for row in matmul(x, w1)]
    logits = matmul(h, w2)
    probs, loss = [], 0.0
    for row, label in zip(logits, y):
        mx = max(row)
        e = [math.exp(v - mx) for v in row]
        s = sum(e)
        p = [v / s for v in e]
        loss -= math.log(max(p[label], 1e-300))
        probs.append(p)
    return h, probs, loss / len(x)


def backward(x, y, h, probs, w2):
    dz2 = [[(p - (c == label)) / BATCH for c, p in enumerate(row)] for row, label in zip(probs, y)]
    g2 = matmul(transpose(h), dz2)  # dW2 = H^T dZ2
    dh = matmul(dz2, transpose(w2))  # dH = dZ2 W2^T
    dz1 = [[d if hv > 0 else 0.0 for d, hv in zip(drow, hrow)] for drow, hrow in zip(dh, h)]
    g1 = matmul(transpose(x), dz1)  # dW1 = X^T dZ1; dL/dX is not needed
    return g1, g2


@mfu.phase("optimizer", flops=OPT_FLOPS, bytes=OPT_BYTES)
def sgd(ws, gs):
    for w, g in zip(ws, gs):
        for wrow, grow in zip(w, g):
            for j, gv in enumerate(grow):
                wrow[j] -= LR * gv


def positive_int(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a positive integer, got %r" % s)
    if v < 1:
        raise argparse.ArgumentTypeError("expected a positive integer, got %r" % s)
    return v


def non_negative_float(s):
    try:
        v = float(s)
    except ValueError:
        v = -1.0
    if not v >= 0 or math.isinf(v):
        raise argparse.ArgumentTypeError("expected a non-negative number, got %r" % s)
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(prog="train.py", description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=positive_int, default=20, help="training steps (default 20)")
    ap.add_argument("--quiet", action="store_true", help="no loss lines on stderr")
    ap.add_argument("--print-losses", action="store_true", help='print "step loss" lines to stdout')
    ap.add_argument(
        "--data-sleep-ms",
        type=non_negative_float,
        default=0.0,
        help="sleep this long in each data phase (simulated I/O wait)",
    )
    args = ap.parse_args(argv)

    rng = random.Random(0x6D6675)
    xs, ys = make_data(rng)
    w1, w2 = init_weights(rng)
    loss = float("nan")
    for step in range(1, args.steps + 1):
        with mfu.step(flops=STEP_FLOPS, bytes=STEP_BYTES):
            with mfu.phase("data"):
                idx = [rng.randrange(POOL) for _ in range(BATCH)]
                x = [list(xs[i]) for i in idx]
                y = [ys[i] for i in idx]
                if args.data_sleep_ms:
                    time.sleep(args.data_sleep_ms / 1000)
            with mfu.phase("forward", flops=FWD_FLOPS, bytes=FWD_BYTES):
                h, probs, loss = forward(x, y, w1, w2)
            with mfu.phase("backward", flops=BWD_FLOPS, bytes=0):
                g1, g2 = backward(x, y, h, probs, w2)
            sgd((w1, w2), (g1, g2))
        if args.print_losses:
            print("%d %.6f" % (step, loss))
        if not args.quiet and (step == 1 or step % 10 == 0 or step == args.steps):
            print("train: step %d loss %.4f" % (step, loss), file=sys.stderr)
    print(
        "train: steps=%d model_flops_per_step=%d model_bytes_per_step=%d"
        % (args.steps, STEP_FLOPS, STEP_BYTES),
        file=sys.stderr,
    )
    return 0 if math.isfinite(loss) else 1


if __name__ == "__main__":
    sys.exit(main())
