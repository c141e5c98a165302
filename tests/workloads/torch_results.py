"""A PyTorch training loop that prints its own per-step results (issue 28):
one JSON line per step with what `with mfu.step(flops="count") as s` gave
(s.result), and the step's time as the loop saw it from inside and from
outside the with block (perf_counter_ns).

usage: torch_results.py [--steps N] [--inprocess [--profile FILE]] [--optimizer]

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
a = ap.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 256), torch.randn(64, 256)
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
