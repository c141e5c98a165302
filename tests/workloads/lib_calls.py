"""Library calls from Python, for tests/e2e/test_libflops.py: steps marked
with mfu.step() and no declared FLOPs, whose BLAS calls mfu-record counts.

usage: lib_calls.py numpy [--steps N]
       lib_calls.py torch [--steps N] [--conv]

numpy: step s does kind s % 4 (float64 unless said):
  0: a @ b, a 200x300, b 300x100      one GEMM, 2 * 200 * 300 * 100 FLOPs
  1: the same in float32
  2: a @ v, v 300                     one GEMV, 2 * 200 * 300
  3: a.T @ a                          numpy's choice (a SYRK in numpy 1.24)
torch: training steps of an MLP, Linear(64, 128) - ReLU - Linear(128, 10),
  batch 32, SGD, one intra-op thread; --conv adds a last step with a
  Conv2d(3, 8, 3) forward on a 4x3x16x16 batch (no gradient).

Prints one number per step (a sum of its results, repr), so a test can
compare the output with and without mfu-record."""
import argparse

import mfu


def run_numpy(steps):
    import numpy as np
    a = (np.arange(200 * 300, dtype=np.float64).reshape(200, 300) % 17) / 7 - 1
    b = (np.arange(300 * 100, dtype=np.float64).reshape(300, 100) % 13) / 11 - 0.5
    a32, b32, v = a.astype(np.float32), b.astype(np.float32), b[:, 0].copy()
    for s in range(steps):
        with mfu.step():
            kind = s % 4
            if kind == 0:
                r = a @ b
            elif kind == 1:
                r = a32 @ b32
            elif kind == 2:
                r = a @ v
            else:
                r = a.T @ a
        print(repr(float(r.sum())))


def run_torch(steps, conv):
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    for _ in range(steps):
        with mfu.step():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        print(repr(float(loss)))
    if conv:
        c, img = torch.nn.Conv2d(3, 8, 3), torch.randn(4, 3, 16, 16)
        with mfu.step():
            with torch.no_grad():
                out = c(img)
        print(repr(float(out.sum())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('lib', choices=('numpy', 'torch'))
    ap.add_argument('--steps', type=int, default=4)
    ap.add_argument('--conv', action='store_true')
    args = ap.parse_args()
    if args.lib == 'numpy':
        run_numpy(args.steps)
    else:
        run_torch(args.steps, args.conv)


if __name__ == '__main__':
    main()
