#!/usr/bin/env python3
"""A PyTorch MLP training loop marked with the mfu Python module, for the
code-class tests: big layers make it compute-bound (time in BLAS/oneDNN
kernels), tiny ones dispatch-bound (time in the interpreter and PyTorch's
dispatcher), and more than one intra-op thread adds the OpenMP runtime's
waiting threads.

    torch_mlp.py [--steps N] [--width W] [--batch B] [--threads T] [--phases] [--clock FILE]

Each step declares its model FLOPs: 6 x batch x weights (2 forward, 4
backward: the gradients of the inputs and of the weights), for a
width -> width -> width -> 10 MLP without biases. --phases marks the phases
forward (the model and the loss), backward and optimizer (with zero_grad)
on the main thread; torch's intra-op threads mark nothing. Prints
`torch_mlp: steps=N model_flops_per_step=X threads=T` to stderr at the end.
--clock FILE: writes "step delay_inside delay_around" per step, how long
the driver thread waited for a CPU (runnable, not running: its run_delay
in /proc/thread-self/schedstat, ns) between readings just inside the
step's markers, and between readings just outside them.
"""

import argparse
import os
import sys

try:
    import mfu
except ImportError:
    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "python")
    )
    import mfu

import torch


def run_delay_ns():
    """This thread's time waiting for a CPU so far (ns), 0 if unknown."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--clock", metavar="FILE")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    w = a.width
    model = torch.nn.Sequential(
        torch.nn.Linear(w, w, bias=False), torch.nn.ReLU(),
        torch.nn.Linear(w, w, bias=False), torch.nn.ReLU(),
        torch.nn.Linear(w, 10, bias=False))
    weights = sum(p.numel() for p in model.parameters())
    flops = 6.0 * a.batch * weights
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(a.batch, w)
    y = torch.randint(0, 10, (a.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()
    delay = run_delay_ns if a.clock else (lambda: 0)
    clock = []
    for s in range(a.steps):
        before = delay()
        with mfu.step(flops=flops):
            d0 = delay()
            if a.phases:
                with mfu.phase("forward"):
                    loss = loss_fn(model(x), y)
                with mfu.phase("backward"):
                    loss.backward()
                with mfu.phase("optimizer"):
                    opt.step()
                    opt.zero_grad()
            else:
                opt.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
            d1 = delay()
        clock.append((s, d1 - d0, delay() - before))
    if a.clock:
        with open(a.clock, "w") as f:
            for row in clock:
                f.write("%d %d %d\n" % row)
    print("torch_mlp: steps=%d model_flops_per_step=%.0f threads=%d" % (a.steps, flops, torch.get_num_threads()),
          file=sys.stderr)


if __name__ == "__main__":
    main()
