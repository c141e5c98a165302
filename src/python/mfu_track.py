"""Integrations of mfu's per-step results (mfu.step ... .result) with training
loops, without any hard dependency: mfu.TrackedOptimizer (a torch.optim
optimizer whose track_step() marks and measures the step), mfu.MFUCallback
(a Hugging Face Trainer callback that adds MFU, MBU and step time to the
Trainer's logs) and mfu.Every (a plain every=N, log=callable hook for any
loop). Imported by mfu on first use of one of these names.

Each reports over a window of steps (the steps since it last reported):
mfu = their FLOPs / (their wall time x the peak), as mfu-report's summary
aggregates steps, and step_ms their mean wall time. Steps are measured under
mfu-record, or after mfu.enable() (the in-process mode); otherwise every
figure is left out (never 0)."""

import contextlib

import mfu


class _Window(object):
    """The steps since the last report."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.n = 0
        self.wall_ms = 0.0
        self.flops = 0.0
        self.bytes = 0.0
        self.n_flops = self.n_bytes = 0
        self.last = None

    def add(self, r):
        if r is None:
            return
        self.n += 1
        self.wall_ms += r.wall_ms
        self.last = r
        if r.flops is not None:
            self.n_flops += 1
            self.flops += r.flops
        if r.model_bytes is not None:
            self.n_bytes += 1
            self.bytes += r.model_bytes

    def figures(self, prefix=""):
        """{prefix + "mfu", "mbu", "step_ms", "flops_per_s"} over the window:
        a figure is there only when every step of the window had what it
        needs (FLOPs or bytes, a peak), so it is never an undercount."""
        out = {}
        if not self.n:
            return out
        r, secs = self.last, self.wall_ms / 1e3
        out[prefix + "step_ms"] = self.wall_ms / self.n
        if self.n_flops == self.n and secs > 0:
            out[prefix + "flops_per_s"] = self.flops / secs
            if r.peak_flops:
                out[prefix + "mfu"] = self.flops / (secs * r.peak_flops)
        if self.n_bytes == self.n and secs > 0 and r.peak_bw:
            out[prefix + "mbu"] = self.bytes / (secs * r.peak_bw)
        return out


class Every(object):
    """A hook for any loop: call it after each step (with the step's result,
    or nothing for mfu.last_step()); every `every` steps it calls
    log(dict) with prefix + "mfu", "mbu", "step_ms", "flops_per_s" over
    those steps, and "step" (the last one's number, unprefixed), and
    returns the dict (else None).

        hook = mfu.Every(10, log=print)
        for batch in loader:
            with mfu.step(flops="count") as s:
                train(batch)
            hook(s.result)

    With TensorBoard: log=lambda d: [w.add_scalar(k, v, d["step"]) for k, v
    in d.items() if k != "step"]."""

    def __init__(self, every=1, log=print, prefix=""):
        if int(every) < 1:
            raise ValueError("mfu.Every: every must be >= 1, not %r" % (every,))
        self.every = int(every)
        self.log = log
        self.prefix = prefix
        self._w = _Window()

    def __call__(self, result=None):
        self._w.add(result if result is not None else mfu.last_step())
        if self._w.n < self.every:
            return None
        d = self._w.figures(self.prefix)
        d["step"] = self._w.last.step
        self._w.reset()
        if self.log is not None:
            self.log(d)
        return d


class TrackedOptimizer(object):
    """A torch.optim optimizer whose track_step() marks one training step
    and measures it (mfu.step: flops=, bytes=, "count" as there):

        opt = mfu.TrackedOptimizer(torch.optim.AdamW(model.parameters()), model=model,
                                   flops="count", every=10, log=print)
        for x, y in loader:
            with opt.track_step() as s:
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
            print(s.mfu)

    Phases, where it can tell them apart: "optimizer" around step() (and
    zero_grad()); with model=, "forward" around the model's forward call
    and "backward" from when the gradient reaches the model's output until
    step() (a hook on that output; left out when autograd runs it on
    another thread than the step's). Everything else is the optimizer's:
    attributes and methods are passed through (opt.param_groups,
    opt.state_dict(), an LR scheduler can take it... or its .optimizer).
    every=N, log=callable: as mfu.Every, after each tracked step."""

    def __init__(self, optimizer, model=None, flops=None, bytes=None, every=None, log=print, prefix=""):
        self.__dict__["optimizer"] = optimizer
        self.__dict__["_flops"] = flops
        self.__dict__["_bytes"] = bytes
        self.__dict__["_step_obj"] = None
        self.__dict__["_backward_open"] = False
        self.__dict__["_thread"] = None
        self.__dict__["_hooks"] = []
        self.__dict__["_every"] = Every(every, log, prefix) if every else None
        if model is not None:
            self._hook_model(model)

    def __getattr__(self, name):
        return getattr(self.__dict__["optimizer"], name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["optimizer"], name, value)

    def _hook_model(self, model):
        import threading

        def pre(module, inputs):
            if self._step_obj is not None:
                mfu.phase_begin("forward")

        def post(module, inputs, output):
            if self._step_obj is None:
                return
            mfu.phase_end("forward")
            # the gradient of the output is the first thing the backward
            # computes for the model: the backward phase begins there
            if getattr(output, "requires_grad", False) and hasattr(output, "register_hook"):
                output.register_hook(self._backward_begins)

        self._hooks.append(model.register_forward_pre_hook(pre))
        self._hooks.append(model.register_forward_hook(post))
        self.__dict__["_threading"] = threading

    def _backward_begins(self, grad):
        # phases are the calling thread's: a hook run by autograd on another
        # thread cannot open one that step() closes
        if (self._step_obj is not None and not self._backward_open
                and self._threading.get_ident() == self._thread):
            mfu.phase_begin("backward")
            self.__dict__["_backward_open"] = True
        return None

    def _close_backward(self):
        if self._backward_open:
            mfu.phase_end("backward")
            self.__dict__["_backward_open"] = False

    @contextlib.contextmanager
    def track_step(self, flops=None, bytes=None):
        """One training step: a context manager giving the mfu.step object
        (its .mfu, .result... once the block is left). flops= and bytes=
        override the optimizer's for this step."""
        import threading

        s = mfu.step(flops=flops if flops is not None else self._flops,
                     bytes=bytes if bytes is not None else self._bytes,
                     key=("mfu.TrackedOptimizer", id(self)))
        self.__dict__["_thread"] = threading.get_ident()
        with s:
            self.__dict__["_step_obj"] = s
            try:
                yield s
            finally:
                self._close_backward()
                self.__dict__["_step_obj"] = None
        if self._every is not None:
            self._every(s.result)

    def step(self, *args, **kwargs):
        self._close_backward()
        if self._step_obj is None:
            return self.optimizer.step(*args, **kwargs)
        with mfu.phase("optimizer"):
            return self.optimizer.step(*args, **kwargs)

    def zero_grad(self, *args, **kwargs):
        self._close_backward()
        if self._step_obj is None:
            return self.optimizer.zero_grad(*args, **kwargs)
        with mfu.phase("optimizer"):
            return self.optimizer.zero_grad(*args, **kwargs)

    def remove_hooks(self):
        """Take the hooks off the model."""
        for h in self._hooks:
            h.remove()
        del self._hooks[:]


class MFUCallback(object):
    """A Hugging Face transformers Trainer callback (the TrainerCallback
    methods, duck-typed: transformers is not imported) that marks each
    optimizer step as an mfu step and adds prefix + "mfu", "mbu" and
    "step_ms" (and "flops_per_s") to the logs dict of each logging step,
    over the steps since the previous one, so that WandB, TensorBoard or
    MLflow get them through the Trainer.

        cb = mfu.MFUCallback(flops=6 * n_params * tokens_per_step)
        trainer = Trainer(..., callbacks=[cb])
        cb.install(trainer)   # first in line: before the reporting callbacks

    The Trainer calls the reporting callbacks (report_to) before the ones
    passed in callbacks=, with the same logs dict: install() moves this one
    to the front, so that they see what it adds. flops= and bytes= are per
    optimizer step (all its gradient-accumulation micro-batches); "count"
    counts the first one's PyTorch operators (mfu.step). Phases: "optimizer"
    from on_pre_optimizer_step to on_optimizer_step (transformers 4.40+
    calls them; older ones do not, and the step has no phases).

    Written against transformers' trainer_callback.py method names and
    signatures, and tested with a driver that calls them as Trainer does
    (transformers is not installable where mfu is tested)."""

    def __init__(self, flops=None, bytes=None, prefix="throughput/"):
        self.flops = flops
        self.bytes = bytes
        self.prefix = prefix
        self._step = None
        self._phase = False
        self._w = _Window()

    def install(self, trainer):
        """Put this callback first in trainer's list (adding it if needed).
        Returns self."""
        cbs = trainer.callback_handler.callbacks
        if self in cbs:
            cbs.remove(self)
        cbs.insert(0, self)
        return self

    def on_step_begin(self, args, state, control, **kwargs):
        if self._step is None:
            self._step = mfu.step(flops=self.flops, bytes=self.bytes, key=("mfu.MFUCallback", id(self)))
            self._step.__enter__()

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        if self._step is not None and not self._phase:
            mfu.phase_begin("optimizer")
            self._phase = True

    def on_optimizer_step(self, args, state, control, **kwargs):
        if self._phase:
            mfu.phase_end("optimizer")
            self._phase = False

    def on_step_end(self, args, state, control, **kwargs):
        self.on_optimizer_step(args, state, control)
        s, self._step = self._step, None
        if s is not None:
            s.__exit__(None, None, None)
            self._w.add(s.result)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None:
            return
        logs.update(self._w.figures(self.prefix))
        self._w.reset()

    def on_train_end(self, args, state, control, **kwargs):
        # a step left open by an exception or an early stop ends here
        self.on_step_end(args, state, control)
