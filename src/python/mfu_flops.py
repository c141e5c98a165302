"""FLOP and byte helpers for declaring model FLOPs and bytes (mfu.flops).

    import mfu

    flops = mfu.flops.transformer(layers=32, d_model=4096, num_heads=32,
                                  num_kv_heads=8, ffn_dim=11008, gated=True,
                                  vocab=32000, seq_len=2048, batch=8)
    with mfu.step(flops=flops):
        ...

Formulas (pure Python, exact integers):
    matmul(m, n, k, batch)       2 m n k batch
    gemm, gemv, conv2d,          as the helpers of mfu.h (mfu_flops_gemm()...)
    attention, train
    transformer(...)             the MaxText-style training-step count:
                                 3 x forward (forward + 2 x backward) of the
                                 learnable weights (QKV with grouped-query
                                 heads, output projection, FFN, unembedding)
                                 plus attention (QK^T and AV); prefill and
                                 decode count one forward
    param_bytes(n, dtype)        the bytes of n parameters
    kv_cache_bytes(...)          the bytes of the K and V cache

Counting (needs PyTorch, imported only when used):
    count(fn, *args, backward=False, elementwise=False, **kwargs)
    counting(elementwise=False)  the same as a context manager

This file is the module mfu.flops: it comes with mfu.py and must sit next
to it. It has no dependency of its own and does not import mfu.
"""

import operator
import sys

__all__ = [
    "matmul",
    "gemm",
    "gemv",
    "conv2d",
    "attention",
    "train",
    "transformer",
    "param_bytes",
    "kv_cache_bytes",
    "count",
    "counting",
    "FlopCount",
]

MODES = ("train", "prefill", "decode")


def _int(name, value, minimum=1):
    """value as a Python int >= minimum, or a ValueError naming the argument.
    Anything with __index__ (numpy integers) is accepted, and a float that
    is a whole number (7e9 parameters); bool is not (True is an int to
    Python), nor a fraction (2.5 would hide a rounding)."""
    if isinstance(value, bool):
        raise ValueError("%s must be an integer, not a bool (%r)" % (name, value))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError("%s must be an integer, not %s (%r)"
                         % (name, type(value).__name__, value)) from None
    if v < minimum:
        raise ValueError("%s must be %s, not %d"
                         % (name, "positive" if minimum == 1 else ">= %d" % minimum, v))
    return v


def matmul(m, n, k, batch=1):
    """FLOPs of batch products of an (m x k) by a (k x n) matrix:
    2 * m * n * k * batch (a multiply-add is 2 FLOPs)."""
    return 2 * _int("m", m, 0) * _int("n", n, 0) * _int("k", k, 0) * _int("batch", batch, 0)


def gemm(m, n, k):
    """C[m x n] += A[m x k] B[k x n]: 2 m n k, as mfu_flops_gemm() in mfu.h."""
    return matmul(m, n, k)


def gemv(m, n):
    """y[m] += A[m x n] x[n]: 2 m n, as mfu_flops_gemv()."""
    return 2 * _int("m", m, 0) * _int("n", n, 0)


def conv2d(batch, in_c, out_c, out_h, out_w, k_h, k_w, groups=1):
    """A 2-D convolution, forward: 2 batch out_c out_h out_w (in_c / groups)
    k_h k_w, as mfu_flops_conv2d(); groups must divide in_c and out_c."""
    groups = _int("groups", groups)
    in_c, out_c = _int("in_c", in_c), _int("out_c", out_c)
    if in_c % groups or out_c % groups:
        raise ValueError("groups (%d) must divide in_c (%d) and out_c (%d)" % (groups, in_c, out_c))
    return (2 * _int("batch", batch, 0) * out_c * _int("out_h", out_h, 0) * _int("out_w", out_w, 0)
            * (in_c // groups) * _int("k_h", k_h) * _int("k_w", k_w))


def attention(batch, heads, q_len, kv_len, head_dim):
    """Q K^T and P V, forward, without a mask: 4 batch heads q_len kv_len
    head_dim, as mfu_flops_attention() (transformer() handles causal masks
    and windows)."""
    return (4 * _int("batch", batch, 0) * _int("heads", heads, 0) * _int("q_len", q_len, 0)
            * _int("kv_len", kv_len, 0) * _int("head_dim", head_dim, 0))


def train(params, tokens):
    """A dense model's training step: 6 params tokens (2 forward, 4
    backward), attention not included, as mfu_flops_train()."""
    return 6 * _int("params", params, 0) * _int("tokens", tokens, 0)


def _causal_pairs_x2(seq_len, window):
    """Twice the number of (query, key) pairs of one causal sequence: the
    factor 2 keeps the half of the full mask an integer."""
    if window is None or window >= seq_len:
        # The published convention (MaxText, Megatron-LM, NeMo): half of
        # the S x S score matrix, S^2 / 2 pairs. The exact count with the
        # diagonal, S (S + 1) / 2, is S / 2 more (a relative 1 / (S + 1)).
        return seq_len * seq_len
    # The query at position p attends to min(p + 1, window) keys, itself
    # included: sum over p = seq_len * window - window * (window - 1) / 2.
    return 2 * seq_len * window - window * (window - 1)


def transformer(*, layers, d_model, num_heads, ffn_dim, vocab, seq_len=None, batch=1,
                num_kv_heads=None, head_dim=None, gated=False, causal=True, window=None,
                mode="train", context=None, breakdown=False):
    """Model FLOPs of one step of a decoder-only transformer (all arguments
    keyword-only).

    Per token and layer the forward pass multiplies by the learnable
    weights: QKV 2 d (h + 2 h_kv) hd, output projection 2 h hd d, FFN
    2 d f (2 if gated else 1) + 2 f d; once per token the unembedding
    2 d vocab (the embedding lookup is a gather, no FLOPs). Attention,
    per layer and sequence: 4 pairs h hd (QK^T and AV), where pairs is
    seq_len^2 without a causal mask, seq_len^2 / 2 with one (MaxText's
    convention), and with a sliding window narrower than seq_len exactly
    sum over positions p of min(p + 1, window).

    mode="train" (default): 3 x the forward pass (forward + 2 x backward)
    of batch sequences of seq_len tokens, as MaxText's
    calculate_tflops_training_per_device. mode="prefill": one forward pass
    of the same. mode="decode": one new token for each of batch sequences,
    attending to context positions (the KV cache, the new token included;
    at most window of them); seq_len is not used.

    num_kv_heads defaults to num_heads (grouped-query attention when fewer;
    it must divide num_heads), head_dim to d_model / num_heads. vocab may
    be 0 (no unembedding). Returns the total as an int, or with
    breakdown=True a dict with "weights" (QKV, projection and FFN of all
    layers), "attention", "embedding" (the unembedding) and "total".
    """
    layers = _int("layers", layers)
    d_model = _int("d_model", d_model)
    num_heads = _int("num_heads", num_heads)
    ffn_dim = _int("ffn_dim", ffn_dim)
    vocab = _int("vocab", vocab, 0)
    batch = _int("batch", batch)
    num_kv_heads = num_heads if num_kv_heads is None else _int("num_kv_heads", num_kv_heads)
    if num_heads % num_kv_heads:
        raise ValueError("num_kv_heads (%d) must divide num_heads (%d)" % (num_kv_heads, num_heads))
    if head_dim is None:
        if d_model % num_heads:
            raise ValueError("d_model (%d) is not a multiple of num_heads (%d): give head_dim"
                             % (d_model, num_heads))
        head_dim = d_model // num_heads
    else:
        head_dim = _int("head_dim", head_dim)
    if mode not in MODES:
        raise ValueError("mode must be one of %s, not %r" % (", ".join(MODES), mode))
    if window is not None:
        window = _int("window", window)
        if not causal:
            raise ValueError("a sliding window needs causal=True")

    if mode == "decode":
        if context is None:
            raise ValueError('mode="decode" needs context (the KV cache length, new token included)')
        context = _int("context", context)
        if seq_len not in (None, 1):
            raise ValueError('mode="decode" counts one new token per sequence: leave seq_len out')
        tokens = batch
        keys = context if window is None else min(context, window)
        pairs_x2 = 2 * keys
    else:
        if seq_len is None:
            raise ValueError('mode="%s" needs seq_len' % mode)
        seq_len = _int("seq_len", seq_len)
        if context is not None:
            raise ValueError('context is for mode="decode" only')
        tokens = batch * seq_len
        pairs_x2 = _causal_pairs_x2(seq_len, window) if causal else 2 * seq_len * seq_len

    qkv = 2 * d_model * (num_heads + 2 * num_kv_heads) * head_dim
    projection = 2 * num_heads * head_dim * d_model
    ffn = 2 * d_model * ffn_dim * (2 if gated else 1) + 2 * ffn_dim * d_model
    weights = layers * (qkv + projection + ffn) * tokens
    embedding = 2 * d_model * vocab * tokens
    # 4 pairs h hd per layer and sequence, with pairs given doubled
    attention = layers * batch * 2 * num_heads * head_dim * pairs_x2

    if mode == "train":
        weights, attention, embedding = 3 * weights, 3 * attention, 3 * embedding
    total = weights + attention + embedding
    if breakdown:
        return {"weights": weights, "attention": attention, "embedding": embedding, "total": total}
    return total


# Bits per element, by the names param_bytes() and kv_cache_bytes() accept.
_DTYPE_BITS = {
    "fp64": 64, "float64": 64, "double": 64,
    "fp32": 32, "float32": 32,
    "fp16": 16, "float16": 16, "half": 16,
    "bf16": 16, "bfloat16": 16,
    "fp8": 8, "float8": 8,
    "int8": 8, "uint8": 8,
    "int4": 4, "uint4": 4,
}


def _bits(dtype):
    """Bits per element of dtype: a name above, a torch dtype
    (torch.bfloat16, torch.float8_e4m3fn...) or anything with an itemsize
    in bytes (numpy dtypes)."""
    if isinstance(dtype, str):
        name = dtype.lower()
    else:
        size = getattr(dtype, "itemsize", None)
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            return 8 * size
        # torch 1.x dtypes have no itemsize; their str() is "torch.NAME".
        name = str(dtype).lower()
        if name.startswith("torch."):
            name = name[len("torch."):]
    if name in _DTYPE_BITS:
        return _DTYPE_BITS[name]
    if name.startswith("float8"):
        return 8
    raise ValueError("unknown dtype %r: use one of fp64, fp32, fp16, bf16, fp8, int8, int4, "
                     "or a torch or numpy dtype" % (dtype,))


def _bytes(elements, dtype):
    # int4 packs two elements in a byte; an odd count needs one byte more.
    return (elements * _bits(dtype) + 7) // 8


def param_bytes(n_params, dtype="bf16"):
    """Bytes of n_params parameters of dtype: what a decode step reads to
    multiply by every weight once (the weights half of a decode step's
    model bytes). int4 packs two parameters a byte."""
    return _bytes(_int("n_params", n_params, 0), dtype)


def kv_cache_bytes(layers, kv_heads, head_dim, context, batch=1, dtype="bf16"):
    """Bytes of the K and V cache a decode step reads: 2 (K and V) x layers
    x kv_heads x head_dim x context x batch elements of dtype."""
    elements = (2 * _int("layers", layers) * _int("kv_heads", kv_heads) * _int("head_dim", head_dim)
                * _int("context", context, 0) * _int("batch", batch))
    return _bytes(elements, dtype)


# --- Counting a PyTorch call ------------------------------------------------


def _torch(what="mfu.flops.count"):
    """torch, or a RuntimeError saying that `what` needs it."""
    try:
        import torch
    except ImportError as e:
        raise RuntimeError("%s needs PyTorch, which this Python (%s) cannot import (%s)"
                           % (what, _executable(), e)) from None
    return torch


def _executable():
    return sys.executable or "python"


class FlopCount:
    """What count() or counting() counted: total (int) and by_op, a dict
    from operator name ("aten.mm", "aten.convolution_backward", ...) to its
    FLOPs. str() gives a table, largest first."""

    def __init__(self):
        self.by_op = {}

    @property
    def total(self):
        return sum(self.by_op.values())

    def _add(self, op, flops):
        if flops:
            self.by_op[op] = self.by_op.get(op, 0) + int(flops)

    def __repr__(self):
        return "FlopCount(total=%d, by_op=%r)" % (self.total, self.by_op)

    def __str__(self):
        total = self.total
        rows = sorted(self.by_op.items(), key=lambda kv: (-kv[1], kv[0]))
        width = max([len(op) for op, _ in rows] + [len("total")])
        lines = ["%-*s %20d  %5.1f%%" % (width, op, n, 100.0 * n / total) for op, n in rows]
        lines.append("%-*s %20d" % (width, "total", total))
        return "\n".join(lines)


def _numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _dot_flops(out, k):
    """2 FLOPs per multiply-add: every element of out is a k-long dot product."""
    return 2 * out.numel() * int(k)


def _mm(args, kwargs, out):
    return _dot_flops(out, args[0].shape[-1])


def _addmm(args, kwargs, out):          # addmm(bias, a, b): the bias add is not counted
    return _dot_flops(out, args[1].shape[-1])


def _matmul(args, kwargs, out):         # matmul(a, b), any ranks
    return _dot_flops(out, args[0].shape[-1])


def _linear(args, kwargs, out):         # linear(x, weight[out, in], bias)
    return _dot_flops(out, args[1].shape[-1])


def _conv_macs(x_shape, w_shape, out_shape, transposed):
    """Multiply-adds of a convolution. The weight is [c_out, c_in / groups,
    *kernel] ([c_in, c_out / groups, *kernel] when transposed): each point of
    the output (of the input, transposed) takes prod(weight) / c_out (c_in)
    of them, for all c_out (c_in) channels: N x spatial x prod(weight)."""
    spatial = (x_shape if transposed else out_shape)[2:]
    return int(x_shape[0]) * _numel(spatial) * _numel(w_shape)


def _convolution(args, kwargs, out):
    # convolution(input, weight, bias, stride, padding, dilation, transposed, ...)
    x, w = args[0], args[1]
    transposed = bool(args[6]) if len(args) > 6 else bool(kwargs.get("transposed", False))
    return 2 * _conv_macs(x.shape, w.shape, out.shape, transposed)


def _convolution_backward(args, kwargs, out):
    # convolution_backward(grad_out, input, weight, bias_sizes, stride, padding,
    # dilation, transposed, output_padding, groups, output_mask): the input
    # gradient and the weight gradient each take the forward's multiply-adds
    # (the same products, summed along other axes); the bias gradient is a sum.
    grad_out, x, w = args[0], args[1], args[2]
    transposed = bool(args[7]) if len(args) > 7 else bool(kwargs.get("transposed", False))
    mask = args[10] if len(args) > 10 else kwargs.get("output_mask", (True, True, True))
    macs = _conv_macs(x.shape, w.shape, grad_out.shape, transposed)
    return 2 * macs * (int(bool(mask[0])) + int(bool(mask[1])))


def _sdpa_shapes(args):
    q, k, v = args[0], args[1], args[2]
    batch = _numel(q.shape[:-2])
    return batch, q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]


def _sdpa(args, kwargs, out):
    # QK^T and (scores)V, whole matrices: a causal mask is not taken off.
    b, sq, sk, d, dv = _sdpa_shapes(args)
    return 2 * b * sq * sk * (d + dv)


def _sdpa_backward(args, kwargs, out):
    # (grad_out, q, k, v, ...): scores again, grad of V and of the scores,
    # grad of Q and of K: five products.
    b, sq, sk, d, dv = _sdpa_shapes(args[1:])
    return 2 * b * sq * sk * (3 * d + 2 * dv)


# Matrix products counted by the fallback mode (torch without
# FlopCounterMode), by aten operator name.
_MATRIX = {
    "mm": _mm,
    "addmm": _addmm,
    "bmm": _mm,
    "baddbmm": _addmm,
    "convolution": _convolution,
    "_convolution": _convolution,
    "convolution_backward": _convolution_backward,
    "_scaled_dot_product_flash_attention": _sdpa,
    "_scaled_dot_product_efficient_attention": _sdpa,
    "_scaled_dot_product_cudnn_attention": _sdpa,
    "_scaled_dot_product_flash_attention_for_cpu": _sdpa,
    "_scaled_dot_product_flash_attention_backward": _sdpa_backward,
    "_scaled_dot_product_efficient_attention_backward": _sdpa_backward,
    "_scaled_dot_product_cudnn_attention_backward": _sdpa_backward,
    "_scaled_dot_product_flash_attention_for_cpu_backward": _sdpa_backward,
}

# Composite operators that normally reach the counting mode already split
# into the products above; counted whole only where torch cannot split them.
_COMPOSITE = {
    "linear": _linear,
    "matmul": _matmul,
}

# Pointwise operators (one FLOP per element of their floating-point output
# when elementwise=True), in- and out-of-place. torch >= 2 also tags them.
_POINTWISE = frozenset("""
    add sub rsub mul div neg abs reciprocal pow sqrt rsqrt exp exp2 expm1 log
    log1p log2 log10 sin cos tan asin acos atan atan2 sinh cosh tanh asinh
    acosh atanh erf erfc erfinv sigmoid logit relu relu6 leaky_relu elu selu
    celu gelu silu mish hardtanh hardswish hardsigmoid softplus softshrink
    hardshrink threshold clamp clamp_min clamp_max maximum minimum fmax fmin
    where lerp addcmul addcdiv fmod remainder floor ceil round trunc frac
    sign sgn square xlogy hypot copysign nan_to_num
    threshold_backward gelu_backward silu_backward sigmoid_backward
    tanh_backward leaky_relu_backward elu_backward hardtanh_backward
    hardswish_backward hardsigmoid_backward softplus_backward mish_backward
""".split())


def _op_names(func):
    """("aten.mm", "aten", "mm") for the operator func (an OpOverload)."""
    packet = getattr(func, "_overloadpacket", func)
    full = str(packet)
    ns, _, base = full.rpartition(".")
    return full, ns, base


def _is_pointwise(torch, func, base):
    tag = getattr(getattr(torch, "Tag", None), "pointwise", None)
    if tag is not None and tag in getattr(func, "tags", ()):
        return True
    return base.rstrip("_") in _POINTWISE


def _first_float_numel(out, torch):
    if isinstance(out, (tuple, list)):
        out = out[0] if out else None
    if isinstance(out, torch.Tensor) and out.is_floating_point():
        return out.numel()
    return 0


_mode_class = None


def _counting_mode(torch):
    """The TorchDispatchMode subclass that counts (made once, after torch
    is imported: the base class comes from torch)."""
    global _mode_class
    if _mode_class is not None:
        return _mode_class
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Counter(TorchDispatchMode):
        # formulas: the aten products to count, by name; composite: split
        # composite operators that arrive whole (only when this mode is the
        # only counter); elementwise: count pointwise operators.
        def __init__(self, result, formulas, composite, elementwise):
            super().__init__()
            self.result = result
            self.formulas = formulas
            self.composite = composite
            self.elementwise = elementwise

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            full, ns, base = _op_names(func)
            formula = None
            pointwise = False
            if ns == "aten":
                formula = self.formulas.get(base)
                pointwise = formula is None and self.elementwise and _is_pointwise(torch, func, base)
                if formula is None and not pointwise and self.composite:
                    # A composite operator that reached us whole (under
                    # inference_mode, say): run its decomposition under this
                    # mode, so its products are counted one by one.
                    decompose = getattr(func, "decompose", None)
                    if decompose is not None:
                        with self:
                            r = decompose(*args, **kwargs)
                        if r is not NotImplemented:
                            return r
                    formula = _COMPOSITE.get(base)
            out = func(*args, **kwargs)
            if formula is not None:
                self.result._add(full, formula(args, kwargs, out))
            elif pointwise:
                self.result._add(full, _first_float_numel(out, torch))
            return out

    _mode_class = _Counter
    return _Counter


def _flop_counter_mode():
    """torch's own FlopCounterMode (torch >= 2.1), or None."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    return FlopCounterMode


def _known_to(counter):
    """The operator names ("aten.mm") a FlopCounterMode counts, or None if
    its table cannot be found (then nothing is added to what it counts)."""
    table = getattr(counter, "flop_registry", None)
    if table is None:
        module = sys.modules.get(type(counter).__module__)
        table = getattr(module, "flop_registry", None) or getattr(module, "flop_mapping", None)
    if not isinstance(table, dict):
        return None
    return {str(op) for op in table}


class counting:
    """``with mfu.flops.counting() as c:`` counts the FLOPs of the PyTorch
    operators run inside the block by this thread (a backward pass started
    in it included); c is a FlopCount, complete
    when the block ends. Uses torch.utils.flop_counter.FlopCounterMode where
    torch has it (>= 2.1), plus mfu's own formulas for the products its
    table lacks (CPU flash attention in some versions); else a
    TorchDispatchMode of mfu's own. elementwise=True also counts pointwise
    operators, one FLOP per output element. RuntimeError if torch cannot be
    imported."""

    def __init__(self, elementwise=False):
        self.elementwise = bool(elementwise)
        self.result = FlopCount()
        self._modes = []
        self._torch_counter = None

    def __enter__(self):
        torch = _torch("mfu.flops.counting")
        fcm = _flop_counter_mode()
        self.result = FlopCount()
        modes = []
        if fcm is None:
            formulas, composite = _MATRIX, True
        else:
            self._torch_counter = fcm(display=False)
            known = _known_to(self._torch_counter)
            formulas = {} if known is None else {
                name: f for name, f in _MATRIX.items() if "aten." + name not in known}
            composite = False
        if formulas or self.elementwise:
            # Under FlopCounterMode (entered first, so below it): every
            # operator FlopCounterMode runs, those of the decompositions it
            # makes included, comes here next. What one counts the other
            # does not.
            modes.append(_counting_mode(torch)(self.result, formulas, composite, self.elementwise))
        if self._torch_counter is not None:
            modes.append(self._torch_counter)
        for i, m in enumerate(modes):
            try:
                m.__enter__()
            except BaseException:
                for entered in reversed(modes[:i]):
                    entered.__exit__(None, None, None)
                self._torch_counter = None
                raise
        self._modes = modes
        return self.result

    def __exit__(self, *exc):
        modes, self._modes = self._modes, []
        for m in reversed(modes):
            m.__exit__(*exc)
        if self._torch_counter is not None:
            for op, n in self._torch_counter.get_flop_counts().get("Global", {}).items():
                self.result._add(str(op), n)
            self._torch_counter = None
        return False


def _backward(out, torch):
    t = out[0] if isinstance(out, (tuple, list)) and out else out
    if not isinstance(t, torch.Tensor):
        raise TypeError("count(backward=True) needs a tensor output (or a tuple or list that "
                        "starts with one), not %s" % type(out).__name__)
    if not t.requires_grad:
        raise ValueError("count(backward=True): the output does not require grad (no parameter "
                         "or input of the call requires grad, or it ran under no_grad)")
    (t if t.numel() == 1 else t.sum()).backward()


def count(fn_or_module, *args, backward=False, elementwise=False, **kwargs):
    """Count the FLOPs of fn_or_module(*args, **kwargs) by PyTorch operator
    (see counting()); with backward=True also of the backward pass of its
    output (.backward() on a one-element output, else .sum().backward(),
    inside the count: gradients accumulate in .grad as usual). Returns a
    FlopCount (.total, .by_op). Counts matrix products (mm, addmm, bmm,
    baddbmm, matmul and linear as they reach the dispatcher), convolutions
    and their backward (input and weight gradients, as asked for), and
    scaled-dot-product attention kernels; pointwise operators only with
    elementwise=True. RuntimeError if torch cannot be imported."""
    torch = _torch()
    with counting(elementwise=elementwise) as result:
        out = fn_or_module(*args, **kwargs)
        if backward:
            _backward(out, torch)
    return result
