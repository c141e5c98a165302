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
    attention, train             (attention: also causal, backward and the
                                 recompute of flash attention or checkpointing)
    train_factor(checkpointing)  3 (forward + 2 x backward), 4 with the
                                 forward recomputed (activation checkpointing)
    transformer(...)             the MaxText-style training-step count:
                                 3 x forward (forward + 2 x backward) of the
                                 learnable weights (QKV with grouped-query
                                 heads, output projection, FFN, unembedding)
                                 plus attention (QK^T and AV); prefill and
                                 decode count one forward
    param_bytes(n, dtype)        the bytes of n parameters, or of a model's
    param_bytes(model)           parameters by their dtypes
    param_count(model)           the number of a model's parameters
    kv_cache_bytes(...)          the bytes of the K and V cache

Counting (needs PyTorch, imported only when used):
    count(fn, *args, backward=False, elementwise=False, **kwargs)
    counting(elementwise=False)  the same as a context manager

This file is the module mfu.flops: it comes with mfu.py and must sit next
to it. It has no dependency of its own and does not import mfu.
"""

import operator
import re
import sys

__all__ = [
    "matmul",
    "gemm",
    "gemv",
    "conv2d",
    "attention",
    "train",
    "train_factor",
    "transformer",
    "param_bytes",
    "param_count",
    "kv_cache_bytes",
    "count",
    "counting",
    "FlopCount",
    "UNKNOWN_MIN_ELEMENTS",
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


def attention(batch, heads, q_len, kv_len, head_dim, *, causal=False, window=None,
              backward=False, recompute=False):
    """FLOPs of attention's two products, Q K^T and P V, for a fused kernel
    that no counter sees (flash attention, a custom kernel): forward
    4 batch heads pairs head_dim, where pairs is q_len kv_len without a
    mask, as mfu_flops_attention().

    causal=True: the queries are the last q_len of kv_len positions
    (q_len <= kv_len); pairs = q_len (kv_len - q_len) + q_len^2 / 2 (half
    of the square, the convention of transformer(); q_len = kv_len = s
    gives s^2 / 2). window (causal only, q_len = kv_len): each query sees
    at most window keys, itself included, exactly.

    backward=True adds the backward pass, 2 x forward (dP and dV, dQ and
    dK: four products for the forward's two), 3 x forward in all.
    recompute (with backward) adds what the backward does again:
    "flash" Q K^T once more (flash attention rebuilds P from Q and K:
    + forward / 2, the 2.5 x forward backward of the FlashAttention-2
    paper), True or "full" the whole forward (activation checkpointing:
    + forward). Recomputed FLOPs are not model FLOPs (MFU leaves them out,
    HFU counts them): docs/flops.md.
    """
    batch, heads = _int("batch", batch, 0), _int("heads", heads, 0)
    q_len, kv_len = _int("q_len", q_len, 0), _int("kv_len", kv_len, 0)
    head_dim = _int("head_dim", head_dim, 0)
    if window is not None:
        window = _int("window", window)
        if not causal:
            raise ValueError("a sliding window needs causal=True")
    if causal:
        if q_len > kv_len:
            raise ValueError("causal attention needs q_len (%d) <= kv_len (%d)" % (q_len, kv_len))
        if window is not None:
            if q_len != kv_len:
                raise ValueError("a sliding window needs q_len = kv_len (%d, %d)" % (q_len, kv_len))
            pairs_x2 = _causal_pairs_x2(q_len, window)
        else:
            pairs_x2 = 2 * q_len * (kv_len - q_len) + q_len * q_len
    else:
        pairs_x2 = 2 * q_len * kv_len
    half = batch * heads * head_dim * pairs_x2  # Q K^T alone: forward / 2
    if recompute not in (False, None, True, "full", "flash"):
        raise ValueError('recompute must be False, "flash" or True ("full"), not %r' % (recompute,))
    if recompute and not backward:
        raise ValueError("recompute is what the backward pass does again: give backward=True")
    if not backward:
        return 2 * half
    extra = 0 if not recompute else half if recompute == "flash" else 2 * half
    return 6 * half + extra


def train_factor(checkpointing=False):
    """FLOPs of a training step over those of its forward pass: 3 (forward
    1 + backward 2: the gradients of the inputs and of the weights each cost
    a forward), 4 with checkpointing=True (activation checkpointing runs the
    forward again before the backward), 3 + r for a fraction r of the
    forward recomputed (0 <= r <= 1). The recompute is work the hardware
    does but not model FLOPs: for MFU declare 3 x forward, 4 x forward is
    the numerator of HFU (docs/flops.md)."""
    if checkpointing is None or checkpointing is False:
        return 3
    if checkpointing is True:
        return 4
    if isinstance(checkpointing, (int, float)) and 0 <= checkpointing <= 1:
        return 3 + checkpointing
    raise ValueError("checkpointing must be False, True or the fraction of the forward "
                     "recomputed (0 to 1), not %r" % (checkpointing,))


def train(params, tokens, checkpointing=False):
    """A dense model's training step: 6 params tokens (2 forward, 4
    backward), attention not included, as mfu_flops_train(); 2
    train_factor(checkpointing) params tokens with recompute (8 with
    checkpointing=True)."""
    factor = train_factor(checkpointing)
    n = 2 * _int("params", params, 0) * _int("tokens", tokens, 0)
    return n * factor if isinstance(factor, int) else n * float(factor)


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
                mode="train", context=None, checkpointing=False, breakdown=False):
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

    checkpointing (train only) adds the forward the backward recomputes:
    True, every layer's (weights and attention x 4; the unembedding,
    outside the checkpointed layers, stays x 3); "selective", the attention
    products only (Megatron-LM's selective recompute: attention x 4).
    These are hardware FLOPs, not model FLOPs: leave checkpointing out for
    MFU (docs/flops.md).

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

    if checkpointing not in (False, None, True, "selective"):
        raise ValueError('checkpointing must be False, True or "selective", not %r' % (checkpointing,))
    if checkpointing and mode != "train":
        raise ValueError('checkpointing is for mode="train" only')
    if mode == "train":
        weights = (4 if checkpointing is True else 3) * weights
        attention = (4 if checkpointing else 3) * attention
        embedding = 3 * embedding
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


def _tensors(params, trainable_only):
    """The tensors of a model (anything with parameters(): a
    torch.nn.Module, whose parameters() lists a shared tensor once) or of
    an iterable of tensors, those with requires_grad when trainable_only."""
    it = params.parameters() if callable(getattr(params, "parameters", None)) else params
    try:
        tensors = list(it)
    except TypeError:
        raise ValueError("expected a number of parameters, a model (with parameters()) or an "
                         "iterable of tensors, not %s" % type(params).__name__) from None
    if trainable_only:
        tensors = [t for t in tensors if getattr(t, "requires_grad", True)]
    return tensors


def _elements(t):
    n = t.numel() if callable(getattr(t, "numel", None)) else getattr(t, "size", None)
    return _int("elements of a parameter", n, 0)


def _is_model(x):
    return callable(getattr(x, "parameters", None)) or (hasattr(x, "__iter__") and not isinstance(x, str))


def param_bytes(n_params, dtype=None, trainable_only=False):
    """Bytes of parameters: what a decode step reads to multiply by every
    weight once (the weights half of a decode step's model bytes).

    n_params a number: n_params elements of dtype (default bf16); int4
    packs two parameters a byte. n_params a model (torch.nn.Module, or
    anything with parameters()) or an iterable of tensors: the sum over
    its tensors of elements x the tensor's own element size (numel() x
    element_size(), numpy's size x itemsize), or of dtype when given;
    trainable_only=True counts only those with requires_grad."""
    if not _is_model(n_params):
        if trainable_only:
            raise ValueError("trainable_only needs a model or tensors, not a number of parameters")
        return _bytes(_int("n_params", n_params, 0), "bf16" if dtype is None else dtype)
    total = 0
    for t in _tensors(n_params, trainable_only):
        if dtype is not None:
            total += _bytes(_elements(t), dtype)
        elif callable(getattr(t, "element_size", None)):
            total += _elements(t) * t.element_size()
        else:
            total += _bytes(_elements(t), getattr(t, "dtype", None))
    return total


def param_count(model, trainable_only=False):
    """The number of parameters (elements) of a model (anything with
    parameters()) or an iterable of tensors; trainable_only=True counts
    only those with requires_grad. For train(param_count(model), tokens)."""
    return sum(_elements(t) for t in _tensors(model, trainable_only))


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


# An operator that has no formula here and is not known to do no matrix
# work is named (FlopCount.unknown) when one of its floating-point tensors
# has at least this many elements (a 64 x 64 matrix): its FLOPs are not
# counted, and may be most of the step's.
UNKNOWN_MIN_ELEMENTS = 4096


class FlopCount:
    """What count() or counting() counted: total (int) and by_op, a dict
    from operator name ("aten.mm", "aten.convolution_backward", ...) to its
    FLOPs; unknown, a dict from the name of each operator that ran with no
    formula here (a custom operator, an aten one this version does not know)
    and took a floating-point tensor of at least UNKNOWN_MIN_ELEMENTS
    elements, to its number of calls: the total leaves their FLOPs out
    (complete is False). str() gives a table, largest first."""

    def __init__(self):
        self.by_op = {}
        self.unknown = {}

    @property
    def total(self):
        return sum(self.by_op.values())

    @property
    def complete(self):
        """True when every operator that may carry FLOPs was counted."""
        return not self.unknown

    def _add(self, op, flops):
        if flops:
            self.by_op[op] = self.by_op.get(op, 0) + int(flops)

    def _unknown(self, op):
        self.unknown[op] = self.unknown.get(op, 0) + 1

    def unknown_text(self, limit=6):
        """The operators without a formula, most called first: "op (n
        calls), ...", at most limit of them and how many more."""
        rows = sorted(self.unknown.items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join("%s (%d call%s)" % (op, n, "" if n == 1 else "s") for op, n in rows[:limit])
        if len(rows) > limit:
            text += " and %d more" % (len(rows) - limit)
        return text

    def __repr__(self):
        if self.unknown:
            return "FlopCount(total=%d, by_op=%r, unknown=%r)" % (self.total, self.by_op, self.unknown)
        return "FlopCount(total=%d, by_op=%r)" % (self.total, self.by_op)

    def __str__(self):
        total = self.total
        rows = sorted(self.by_op.items(), key=lambda kv: (-kv[1], kv[0]))
        width = max([len(op) for op, _ in rows] + [len(op) for op in self.unknown] + [len("total")])
        lines = ["%-*s %20d  %5.1f%%" % (width, op, n, 100.0 * n / total) for op, n in rows]
        lines.append("%-*s %20d" % (width, "total", total))
        for op, n in sorted(self.unknown.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append("%-*s %20s  %d call%s, no formula: not counted"
                         % (width, op, "?", n, "" if n == 1 else "s"))
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


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _arg(args, kwargs, i, name, default):
    return args[i] if len(args) > i else kwargs.get(name, default)


def _addr(args, kwargs, out):           # addr(self, vec1, vec2): an outer product added, as BLAS's ger
    return 2 * out.numel()


def _addbmm(args, kwargs, out):         # addbmm(self, batch1[b, n, m], batch2[b, m, p]) -> [n, p]
    b1 = args[1]
    return _dot_flops(out, int(b1.shape[0]) * int(b1.shape[-1]))


def _linear_backward(args, kwargs, out):
    # linear_backward / mkldnn_linear_backward(self, grad_output, weight,
    # output_mask): the input's gradient (grad_output times weight) and the
    # weight's (grad_output^T times self), each the forward's products
    x, grad, w = args[0], args[1], args[2]
    mask = _arg(args, kwargs, 3, "output_mask", (True, True, True))
    fwd = 2 * grad.numel() * int(w.shape[-1])
    return fwd * (int(bool(mask[0])) + int(bool(mask[1])))


def _mkldnn_linear_backward_input(args, kwargs, out):   # (input_size, grad_output, weight)
    return 2 * args[1].numel() * int(args[2].shape[-1])


def _mkldnn_linear_backward_weights(args, kwargs, out):  # (grad_output, input, weight, bias_defined)
    return 2 * args[0].numel() * int(args[2].shape[-1])


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
    transposed = bool(_arg(args, kwargs, 6, "transposed", False))
    return 2 * _conv_macs(x.shape, w.shape, _first(out).shape, transposed)


def _conv_plain(args, kwargs, out):
    # the backends' convolutions (mkldnn_convolution, _slow_conv2d_forward,
    # cudnn_convolution, ...): (input, weight, ...), never transposed
    return 2 * _conv_macs(args[0].shape, args[1].shape, _first(out).shape, False)


def _conv_transposed(args, kwargs, out):  # slow_conv_transpose2d, cudnn_convolution_transpose, ...
    return 2 * _conv_macs(args[0].shape, args[1].shape, _first(out).shape, True)


def _conv_tbc(args, kwargs, out):
    # conv_tbc(input[time, batch, c_in], weight[k, c_in, c_out], bias, pad)
    w = args[1]
    return 2 * _first(out).numel() * int(w.shape[0]) * int(w.shape[1])


def _conv_tbc_backward(args, kwargs, out):
    # conv_tbc_backward(grad[time, batch, c_out], input, weight, bias, pad):
    # the input's and the weight's gradients
    w = args[2]
    return 2 * 2 * args[0].numel() * int(w.shape[0]) * int(w.shape[1])


def _conv_backward(transposed_at, mask_at):
    """A convolution's backward, (grad_out, input, weight, ...) with its
    transposed flag and output mask at these positions (None: not
    there): the input gradient and the weight gradient each take the
    forward's multiply-adds (the same products, summed along other axes);
    the bias gradient is a sum."""
    def flops(args, kwargs, out):
        grad_out, x, w = args[0], args[1], args[2]
        transposed = transposed_at is not None and bool(_arg(args, kwargs, transposed_at, "transposed", False))
        mask = (True, True) if mask_at is None else _arg(args, kwargs, mask_at, "output_mask", (True, True, True))
        macs = _conv_macs(x.shape, w.shape, grad_out.shape, transposed)
        return 2 * macs * (int(bool(mask[0])) + int(bool(mask[1])))
    return flops


# convolution_backward(grad_out, input, weight, bias_sizes, stride, padding,
# dilation, transposed, output_padding, groups, output_mask)
_convolution_backward = _conv_backward(7, 10)


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


def _seq_lens(t):
    """The lengths of the sequences of t: (batch..., seq, dim), (seq, dim),
    or a nested tensor of (seq_i, dim) (PyTorch's fast path with a padding
    mask: the padding is not computed)."""
    if getattr(t, "is_nested", False):
        return [int(r[0]) for r in t._nested_tensor_size().tolist()]
    if t.dim() == 2:
        return [int(t.shape[0])]
    return [int(t.shape[-2])] * _numel(t.shape[:-2])


def _mha_flops(q, k, v, embed_dim):
    """Multi-head attention with its projections, embedding d: Q, K and V
    projected (2 d^2 per token of each), Q K^T and (scores) V over all the
    heads (2 d per query-key pair each), the output projection (2 d^2 per
    query token); the softmax, the biases and the mask are not counted."""
    d = int(embed_dim)
    sq, sk, sv = _seq_lens(q), _seq_lens(k), _seq_lens(v)
    pairs = sum(a * b for a, b in zip(sq, sk))
    return 2 * d * d * (sum(sq) + sum(sk) + sum(sv)) + 4 * d * pairs + 2 * d * d * sum(sq)


def _mha(args, kwargs, out):
    # _native_multi_head_attention(query, key, value, embed_dim, num_head,
    # qkv_weight, qkv_bias, proj_weight, proj_bias, mask, need_weights, ...):
    # the inference fast path of nn.MultiheadAttention
    return _mha_flops(args[0], args[1], args[2], args[3])


def _encoder_layer(args, kwargs, out):
    # _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight,
    # qkv_bias, proj_weight, proj_bias, use_gelu, norm_first, eps,
    # norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
    # ffn_bias_1, ffn_weight_2, ffn_bias_2, mask, ...): nn.TransformerEncoderLayer's
    # inference fast path, self-attention then the two FFN products
    src, d, ffn = args[0], args[1], int(args[14].shape[0])
    return _mha_flops(src, src, src, d) + 4 * int(d) * ffn * sum(_seq_lens(src))


# Matrix products counted by the fallback mode (torch without
# FlopCounterMode), by aten operator name: those of torch 1.13's registry
# that multiply matrices, on any backend (the registry's names: mkldnn,
# cuDNN, MIOpen, MPS, NNPACK...), and the fused attention of later versions.
_MATRIX = {
    "mm": _mm,
    "addmm": _addmm,
    "_addmm_activation": _addmm,
    "bmm": _mm,
    "baddbmm": _addmm,
    "addbmm": _addbmm,
    "mv": _mm,
    "addmv": _addmm,
    "dot": _mm,
    "vdot": _mm,
    "addr": _addr,
    "mkldnn_linear": _linear,
    "mkldnn_linear_backward": _linear_backward,
    "mkldnn_linear_backward_input": _mkldnn_linear_backward_input,
    "mkldnn_linear_backward_weights": _mkldnn_linear_backward_weights,
    "linear_backward": _linear_backward,
    "convolution": _convolution,
    "_convolution": _convolution,
    "convolution_overrideable": _convolution,
    "_convolution_mode": _conv_plain,
    "mkldnn_convolution": _conv_plain,
    "_slow_conv2d_forward": _conv_plain,
    "thnn_conv2d": _conv_plain,
    "slow_conv3d": _conv_plain,
    "slow_conv3d_forward": _conv_plain,
    "slow_conv_dilated2d": _conv_plain,
    "slow_conv_dilated3d": _conv_plain,
    "_conv_depthwise2d": _conv_plain,
    "conv_depthwise3d": _conv_plain,
    "_nnpack_spatial_convolution": _conv_plain,
    "cudnn_convolution": _conv_plain,
    "cudnn_convolution_relu": _conv_plain,
    "cudnn_convolution_add_relu": _conv_plain,
    "miopen_convolution": _conv_plain,
    "miopen_depthwise_convolution": _conv_plain,
    "miopen_convolution_relu": _conv_plain,
    "miopen_convolution_add_relu": _conv_plain,
    "_mps_convolution": _conv_plain,
    "slow_conv_transpose2d": _conv_transposed,
    "slow_conv_transpose3d": _conv_transposed,
    "cudnn_convolution_transpose": _conv_transposed,
    "miopen_convolution_transpose": _conv_transposed,
    "_mps_convolution_transpose": _conv_transposed,
    "conv_tbc": _conv_tbc,
    "conv_tbc_backward": _conv_tbc_backward,
    "convolution_backward": _convolution_backward,
    # (grad_output, input, weight, stride, padding, dilation, transposed,
    # output_padding, groups, output_mask)
    "convolution_backward_overrideable": _conv_backward(6, 9),
    # (grad_output, self, weight, kernel_size, stride, padding, output_mask)
    "_slow_conv2d_backward": _conv_backward(None, 6),
    "_native_multi_head_attention": _mha,
    "_triton_multi_head_attention": _mha,
    "_transformer_encoder_layer_fwd": _encoder_layer,
    # torch 1.13's scaled dot product attention (q, k, v, ...)
    "_scaled_dot_product_attention": _sdpa,
    "_scaled_dot_product_attention_math": _sdpa,
    "_scaled_dot_product_attention_forward": _sdpa,
    "_flash_scaled_dot_product_attention": _sdpa,
    "_triton_scaled_dot_attention": _sdpa,
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


# Operators of the aten namespace that do no matrix work, by name (a
# family's fragment or a whole name; in-place forms end in "_"): views,
# data movement, creation and random numbers, reductions, normalizations,
# softmax, pooling, losses, indexing, comparisons, interpolation, the
# optimizers' foreach kernels. Memory-bound, counted by no model-FLOPs
# convention: never named as unknown. Made from torch 1.13's registry
# (torch._C._jit_get_all_schemas()).
_NO_MATRIX = re.compile(r"""
    norm|softmax|pool|loss|dropout|embedding|upsample|pad|index|scatter|gather|^cat$|stack|concat|
    copy|clone|view|reshape|split|select|slice|fill|empty|zeros|ones|full|^rand|normal|uniform|
    bernoulli|multinomial|poisson|binomial|exponential|geometric|cauchy|random|gamma|dirichlet|
    window$|arange|linspace|logspace|^eye$|cumsum|cumprod|cummax|cummin|logcumsumexp|sort|topk|
    unique|flip|roll|rot90|repeat|tile|expand|squeeze|permute|transpose|^t$|detach|alias|masked|
    nonzero|argwhere|^_foreach_|as_strided|narrow|unbind|chunk|resize|lift|^_?to_|^to$|
    contiguous|_local_scalar|^item$|grid_sampler|affine_grid|col2im|im2col|unfold|fold|shuffle|
    tril|triu|diag|one_hot|packed_sequence|searchsorted|bucketize|hist|bincount|kthvalue|median|
    ^mode$|quantile|nanmean|nansum|trace|take|put|^sum$|^mean$|^prod$|^amax$|^amin$|^max|^min|
    ^argmax$|^argmin$|^var|^std|^any$|^all$|count_nonzero|logsumexp|aminmax|^eq$|^ne$|^lt$|^gt$|
    ^le$|^ge$|greater|less|not_equal|equal|allclose|isclose|^is|logical|bitwise|^__|sign|^real$|
    ^imag$|conj|_neg_view|^resolve_|^abs$|^absolute$|^angle$|sparse|coalesce|indices|values|
    quantize|qparams|^q_|int_repr|nested|^set_?$|flatten|segment_reduce|_rowwise_prune|ravel|movedim|moveaxis|swap|^m?[TH]$|
    adjoint|broadcast|meshgrid|atleast|hstack|vstack|dstack|column_stack|row_stack|align|rename|
    size|stride|numel|threshold|clamp|clip|^zero$|^new_|scalar_tensor|^tensor$|^as_tensor$|
    type_as|^cpu$|^cuda$|^lerp|^where$|^fmod|^remainder|frexp|ldexp|modf|nan_to_num|heaviside|
    glu|pixel_|_amp_|_fused_adam|_fused_sgd|xlogy|^special_|^log|lgamma|digamma|polygamma|
    mvlgamma|^i0|^erf|igamma|sinc|^logit|shrink|^rrelu|prelu|^celu|^selu|^elu|gelu|^silu|^mish|
    ^hard|softplus|sigmoid|^tanh|^square|float_power|divide|multiply|subtract|negative|^fix$|
    trunc|rad2deg|deg2rad|radians|degrees|^arc|^exp|nextafter|hypot|^gcd|^lcm|copysign|^fmax|
    ^fmin|^maximum|^minimum|^positive|reciprocal|sqrt|_add_relu|addcmul|addcdiv|^fabs$|
    factorial|^relu|isin|vander|^cross$|linalg_cross|linalg_vector_norm|linalg_diagonal|^dist|
    cosine_similarity|pairwise_distance|^inner$|^outer$|^ger$|cartesian_prod|combinations|
    trapz|trapezoid|^diff$|gradient|^cov$|corrcoef|mkldnn_reorder|_transform_bias_rescale_qkv|
    _masked_softmax|_weight_norm_interface_backward|_record_function|cross_entropy|kl_div|polar|
    fake_quant|_fused_moving_avg|grad|storage|record_stream|pin_memory|^data$|^dim$|dense_dim|
    ^chalf$|^complex$|_cast_|_pack_sequence|_dual$|_fw_primal|_version|zerotensor|_assert|
    _shape_as_tensor|_batch_dim$|_sobol|_set_item|refine_names|_debug|qscheme|_nnz|^_dim[IV]$|
    _autocast|promote_types|result_type|can_cast|_saturate_weight|numpy_T|matrix_H|local_value|
    _list_to_tensor|_tensor_to_list|^_test_|_foobar|_cufft|_nnpack_available|cudnn_is_acceptable
""", re.X)

# Operators that do carry FLOPs but have no formula here (LAPACK-style
# linear algebra, FFTs, distances, the other backends' RNNs, the fused
# decoder of some versions): named when their tensors are big, whatever
# _NO_MATRIX says of their name (linalg_matrix_norm, nuclear_norm).
_NO_FORMULA = re.compile(r"""
    ^_?linalg_(?!vector_norm$|diagonal$|cross$|check_errors$|vander$)|^_?fft_(?!.*(freq|shift)$)|
    stft|cholesky|^lu(?!_unpack)|_lu_|^qr$|svd|
    ^_?(sym)?eig|inverse|^det$|logdet|slogdet|_det$|matrix_power|matrix_exp|lstsq|geqrf|orgqr|ormqr|
    (^|_)solve|cdist|pdist|_euclidean_dist|^_trilinear$|^bilinear$|nuclear_norm|
    _sparse_mm|_sparse_addmm|sparse_sampled_addmm|hspmm|^smm$|sspaddmm|_sparse_sparse_matmul|
    _native_decoder_only|_transformer_decoder_only|_cudnn_rnn$|_cudnn_rnn_backward|miopen_rnn|
    _thnn_fused_(lstm|gru)_cell|_thnn_differentiable|lstm_mps|mkldnn_rnn|
    _convolution_double_backward|mps_convolution_(transpose_)?backward|fbgemm_linear|
    matmul_backward|_flash_attention|_efficient_attention
""", re.X)


def _carries_unknown_flops(ns, base):
    """Whether an operator without a formula may do work worth counting:
    any operator of another namespace than aten (a custom one), and aten's
    unless it is known to do no matrix work."""
    if ns != "aten":
        return ns not in ("profiler", "prim", "prims")
    name = base.rstrip("_")
    return bool(_NO_FORMULA.search(name)) or not (name in _POINTWISE or _NO_MATRIX.search(name))


def _big_float(args, kwargs, torch):
    """Whether a floating-point tensor of at least UNKNOWN_MIN_ELEMENTS
    elements is among the arguments (or in a list of them)."""
    def big(x):
        if isinstance(x, torch.Tensor):
            try:
                return x.is_floating_point() and x.numel() >= UNKNOWN_MIN_ELEMENTS
            except (RuntimeError, NotImplementedError):
                return False
        if isinstance(x, (list, tuple)):
            return any(big(y) for y in x)
        return False
    return any(big(a) for a in args) or any(big(a) for a in kwargs.values())


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
        # only counter); elementwise: count pointwise operators; counted
        # elsewhere: the names ("aten.mm") another counter counts (torch's
        # FlopCounterMode), or None when they cannot be known (then no
        # operator is named as unknown).
        def __init__(self, result, formulas, composite, elementwise, counted_elsewhere=frozenset()):
            super().__init__()
            self.result = result
            self.formulas = formulas
            self.composite = composite
            self.elementwise = elementwise
            self.counted_elsewhere = counted_elsewhere

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
            elif (self.counted_elsewhere is not None and full not in self.counted_elsewhere
                  and _carries_unknown_flops(ns, base) and not _is_pointwise(torch, func, base)
                  and _big_float(args, kwargs, torch)):
                # no formula, and big tensors: its FLOPs may matter
                self.result._unknown(full)
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
    in it included); c is a FlopCount, complete when the block ends, whose
    unknown names the operators that ran without a formula (a custom
    operator...) on floating-point tensors of UNKNOWN_MIN_ELEMENTS elements
    or more. Uses torch.utils.flop_counter.FlopCounterMode where
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
            formulas, composite, elsewhere = _MATRIX, True, frozenset()
        else:
            self._torch_counter = fcm(display=False)
            known = _known_to(self._torch_counter)
            formulas = {} if known is None else {
                name: f for name, f in _MATRIX.items() if "aten." + name not in known}
            composite, elsewhere = False, known
        if formulas or self.elementwise or elsewhere is not None:
            # Under FlopCounterMode (entered first, so below it): every
            # operator FlopCounterMode runs, those of the decompositions it
            # makes included, comes here next. What one counts the other
            # does not; what neither counts is named when it may matter.
            modes.append(_counting_mode(torch)(self.result, formulas, composite, self.elementwise, elsewhere))
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
    FlopCount (.total, .by_op, .unknown). Counts matrix products (mm,
    addmm, bmm, baddbmm, addbmm, mv, addmv, dot, addr, matmul and linear as
    they reach the dispatcher, mkldnn_linear), convolutions of every
    backend and their backward (input and weight gradients, as asked for),
    the fused inference paths of nn.MultiheadAttention and
    nn.TransformerEncoderLayer (_native_multi_head_attention,
    _transformer_encoder_layer_fwd, nested tensors included), and
    scaled-dot-product attention kernels; pointwise operators only with
    elementwise=True. An operator with no formula that may carry FLOPs
    (not a view, copy, reduction, normalization, pooling...) and took a
    floating-point tensor of UNKNOWN_MIN_ELEMENTS elements or more is
    named in .unknown. RuntimeError if torch cannot be imported."""
    torch = _torch()
    with counting(elementwise=elementwise) as result:
        out = fn_or_module(*args, **kwargs)
        if backward:
            _backward(out, torch)
    return result
