#!/usr/bin/env python3
"""A PyTorch MLP training loop marked with the mfu Python module, for the
code-class tests: big layers make it compute-bound (time in BLAS/oneDNN
kernels), tiny ones dispatch-bound (time in the interpreter and PyTorch's
dispatcher), and more than one intra-op thread adds the OpenMP runtime's
waiting threads.

    torch_mlp.py [--steps N] [--width W] [--batch B] [--threads T] [--phases]

Each step declares its model FLOPs: 6 x batch x weights (2 forward, 4
backward: the gradients of the inputs and of the weights), for a
width -> width -> width -> 10 MLP without biases. --phases marks the phases
forward (the model and the loss), backward and optimizer (with zero_grad)
on the main thread; torch's intra-op threads mark nothing. Prints
`torch_mlp: steps=N model_flops_per_step=X threads=T` to stderr at the end.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--phases", action="store_true")
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
    if a.phases:
        for _ in range(a.steps):
            with mfu.step(flops=flops):
                with mfu.phase("forward"):
                    loss = loss_fn(model(x), y)
                with mfu.phase("backward"):
                    loss.backward()
                with mfu.phase("optimizer"):
                    opt.step()
                    opt.zero_grad()
    else:
        for _ in range(a.steps):
            with mfu.step(flops=flops):
                opt.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
    print("torch_mlp: steps=%d model_flops_per_step=%.0f threads=%d" % (a.steps, flops, torch.get_num_threads()),
          file=sys.stderr)


if __name__ == "__main__":
    main()
