"""A PyTorch training loop that prints its own per-step results (issue 28):
one JSON line per step with what `with mfu.step(flops="count") as s` gave
(s.result), and the step's time as the loop saw it from inside and from
outside the with block (perf_counter_ns).

usage: torch_results.py [--steps N] [--width W] [--batch B] [--inprocess [--profile FILE]]
                        [--optimizer]

--width, --batch: the model's hidden width and the batch (256 and 64 by default:
steps of about 1 ms; 2048 and 512 give steps of tens of ms).

--inprocess: mfu.enable() first (the peak from the machine profile).
--optimizer: the step is mfu.TrackedOptimizer's track_step(model=...)."""
import argparse
import json
import sys
import time

import torch

import mfu

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=12)
ap.add_argument("--inprocess", action="store_true")
ap.add_argument("--profile")
ap.add_argument("--optimizer", action="store_true")
ap.add_argument("--width", type=int, default=256)
ap.add_argument("--batch", type=int, default=64)
a = ap.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
w = a.width
model = torch.nn.Sequential(torch.nn.Linear(w, 2 * w), torch.nn.ReLU(), torch.nn.Linear(2 * w, w))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(a.batch, w), torch.randn(a.batch, w)
if a.inprocess:
    mfu.enable(profile=a.profile)
if a.optimizer:
    opt = mfu.TrackedOptimizer(opt, model=model, flops="count")

for i in range(a.steps):
    outer0 = time.perf_counter_ns()
    with (opt.track_step() if a.optimizer else mfu.step(flops="count")) as s:
        inner0 = time.perf_counter_ns()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        inner1 = time.perf_counter_ns()
    outer1 = time.perf_counter_ns()
    r = s.result
    print(json.dumps(dict(r.as_dict(), mfu_repr=repr(s.mfu), inner_ns=inner1 - inner0,
                          outer_ns=outer1 - outer0)), flush=True)
last = mfu.last_step()
print(json.dumps({"last_step": last.step if last else None}), flush=True)
sys.exit(0)
