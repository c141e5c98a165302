"""Library calls from Python, for tests/e2e/test_libflops.py: steps marked
with mfu.step() and no declared FLOPs, whose BLAS calls mfu-record counts.

usage: lib_calls.py numpy [--steps N]
       lib_calls.py torch [--steps N] [--conv]
       lib_calls.py linalg [--n N]
       lib_calls.py scipy [--n N] [--big N]

numpy: step s does kind s % 4 (float64 unless said):
  0: a @ b, a 200x300, b 300x100      one GEMM, 2 * 200 * 300 * 100 FLOPs
  1: the same in float32
  2: a @ v, v 300                     one GEMV, 2 * 200 * 300
  3: a.T @ a                          numpy's choice (a SYRK in numpy 1.24)
torch: training steps of an MLP, Linear(64, 128) - ReLU - Linear(128, 10),
  batch 32, SGD, one intra-op thread; --conv adds two training steps of a
  convolutional network (CONV_NET below: padding, a stride, groups), batch
  8 of 3x16x16, SGD, and a last step with a Conv2d(3, 8, 3) forward on a
  4x3x16x16 batch (no gradient).
linalg: numpy.linalg and numpy.dot, one step each (n = --n, 300 unless said):
  0: solve(a, b), a n x n, b n x 4    LAPACK gesv
  1: inv(a)                            gesv with n right-hand sides
  2: cholesky(spd)                     potrf
  3: qr(c), c (n + 100) x n            geqrf, then orgqr
  4: lstsq(c, b)                       gelsd: FLOPs unknown
  5: eigvalsh(spd)                     syevd: FLOPs unknown
  6: dot(x, x), x 2^20 doubles         cblas_ddot
  7: solve in complex128               zgesv
  (numpy.linalg computes float32 in float64: scipy's step 5 is the
  float32 one)
scipy: scipy.linalg, one step each:
  0: lu(a)                             getrf
  1: solve(a2, b2), a2 --big x --big   getrf, getrs, and the condition
                                       estimate (gecon)'s level-1 calls
  2: inv(a)                            getrf, getri
  3: cho_solve(cho_factor(spd), b)     potrf, potrs
  4: lapack.dgels(c, b)                least squares by QR: gels
  5: lu(a) in float32                  sgetrf

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


def operands(n, np):
    """Well-conditioned operands from a fixed seed: a (n x n), spd (n x n,
    symmetric positive definite), c ((n + 100) x n), b (n x 4), and the
    same for c's rows, cb ((n + 100) x 4)."""
    rng = np.random.default_rng(24)
    a = rng.standard_normal((n, n)) + n * np.eye(n)
    g = rng.standard_normal((n, n))
    spd = g @ g.T + n * np.eye(n)
    c = rng.standard_normal((n + 100, n))
    return a, spd, c, rng.standard_normal((n, 4)), rng.standard_normal((n + 100, 4))


def run_linalg(n):
    import numpy as np
    a, spd, c, b, cb = operands(n, np)
    x = np.arange(1 << 20, dtype=np.float64) / (1 << 20) - 0.5
    steps = [
        lambda: np.linalg.solve(a, b),
        lambda: np.linalg.inv(a),
        lambda: np.linalg.cholesky(spd),
        lambda: np.linalg.qr(c)[0],
        lambda: np.linalg.lstsq(c, cb, rcond=None)[0],
        lambda: np.linalg.eigvalsh(spd),
        lambda: np.dot(x, x),
        lambda: np.linalg.solve(a + 0.5j * a.T, b + 0j),
    ]
    for f in steps:
        with mfu.step():
            r = f()
        print(repr(complex(np.sum(r))))


def run_scipy(n, big):
    import numpy as np
    import scipy.linalg as sl
    a, spd, c, b, cb = operands(n, np)
    a2, _, _, b2, _ = operands(big, np)
    steps = [
        lambda: sl.lu(a)[2],
        lambda: sl.solve(a2, b2),
        lambda: sl.inv(a),
        lambda: sl.cho_solve(sl.cho_factor(spd), b),
        lambda: sl.lapack.dgels(c, cb)[1],
        lambda: sl.lu(a.astype(np.float32))[2],
    ]
    for f in steps:
        with mfu.step():
            r = f()
        print(repr(float(np.sum(r))))


def conv_net(torch):
    """Conv2d(3, 16, 3, padding 1) - ReLU - Conv2d(16, 32, 3, stride 2,
    padding 1, groups 4) - ReLU - MaxPool2d(2) - Linear(32 * 4 * 4, 10), for
    3x16x16 images (tests/e2e/test_libflops.py counts its FLOPs by hand)."""
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))


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
        net = conv_net(torch)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
        for _ in range(2):
            with mfu.step():
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(net(x), y)
                loss.backward()
                opt.step()
            print(repr(float(loss)))
        c, img = torch.nn.Conv2d(3, 8, 3), torch.randn(4, 3, 16, 16)
        with mfu.step():
            with torch.no_grad():
                out = c(img)
        print(repr(float(out.sum())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('lib', choices=('numpy', 'torch', 'linalg', 'scipy'))
    ap.add_argument('--steps', type=int, default=4)
    ap.add_argument('--conv', action='store_true')
    ap.add_argument('--n', type=int, default=300)
    ap.add_argument('--big', type=int, default=2000)
    args = ap.parse_args()
    if args.lib == 'numpy':
        run_numpy(args.steps)
    elif args.lib == 'linalg':
        run_linalg(args.n)
    elif args.lib == 'scipy':
        run_scipy(args.n, args.big)
    else:
        run_torch(args.steps, args.conv)


if __name__ == '__main__':
    main()
