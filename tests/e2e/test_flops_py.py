#!/usr/bin/env python3
"""Tests of mfu.flops (src/python/mfu_flops.py) and mfu.step(flops="count")
(issue 13, item 3): the formulas against hand computation and MaxText's
expression, the byte helpers, counting PyTorch calls, and counted steps
recorded by mfu-record.

The formulas run in this interpreter. The PyTorch parts need a Python with
torch (MFU_TORCH_PYTHON, else this interpreter, else /usr/bin/python3, as
test_torch.py) and run in it as child processes; without one they are
skipped (unittest skips: the rest always runs, so the file never exits 77).

Environment (meson test sets them): MFU_PYTHON_DIR (the directory of mfu.py),
MFU_RECORD (mfu-record), MFU_SRCDIR.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, TempDirTest, as_nobody, nobody_reachable, prog, python_with, query, record  # noqa: E402

PYDIR = os.environ.get('MFU_PYTHON_DIR') or os.path.join(SRCDIR, 'src', 'python')
sys.path.insert(0, PYDIR)
import mfu_flops as flops  # noqa: E402

PY = python_with('torch')
NO_TORCH = 'no Python with torch (install python3-torch, or set MFU_TORCH_PYTHON)'


def run_py(python, code, pythonpath=PYDIR, env=None):
    """Run code in a new interpreter with pythonpath first on PYTHONPATH."""
    e = dict(os.environ if env is None else env)
    for k in ('MFU_LIBRARY', 'MFU_RING_FD'):
        e.pop(k, None)
    e['PYTHONPATH'] = pythonpath
    return subprocess.run([python, '-c', textwrap.dedent(code)], env=e, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


class Matmul(unittest.TestCase):
    def test_values(self):
        self.assertEqual(flops.matmul(3, 5, 7), 210)
        self.assertEqual(flops.matmul(3, 5, 7, batch=4), 840)
        big = flops.matmul(2**40, 2**40, 2**40)
        self.assertEqual(big, 2**121)          # exact: Python ints
        self.assertIs(type(big), int)
        self.assertEqual(flops.matmul(0, 5, 7), 0)

    def test_helpers_of_mfu_h(self):
        # the values tests/unit/test_header.c checks for the C helpers
        self.assertEqual(flops.gemm(2, 3, 4), 48)
        self.assertEqual(flops.gemv(3, 5), 30)
        self.assertEqual(flops.conv2d(2, 3, 8, 10, 10, 3, 3), 2 * 2 * 8 * 10 * 10 * 3 * 3 * 3)
        self.assertEqual(flops.conv2d(1, 4, 4, 1, 1, 1, 1, groups=4), 8)
        self.assertEqual(flops.attention(2, 4, 16, 32, 8), 4 * 2 * 4 * 16 * 32 * 8)
        self.assertEqual(flops.train(7, 11), 6 * 7 * 11)
        with self.assertRaises(ValueError) as cm:
            flops.conv2d(1, 4, 6, 1, 1, 1, 1, groups=4)
        self.assertIn('groups (4) must divide in_c (4) and out_c (6)', str(cm.exception))

    def test_bad_arguments(self):
        for args in ((3.5, 5, 7), (True, 5, 7), (-1, 5, 7), ("3", 5, 7)):
            with self.assertRaises(ValueError, msg=args) as cm:
                flops.matmul(*args)
            self.assertIn('m must be', str(cm.exception))
        self.assertEqual(flops.matmul(3.0, 5, 7), 210)   # a whole number given as a float


# A small decoder: 2 layers, d 8, 2 heads of 4, FFN 16, vocab 10.
SMALL = dict(layers=2, d_model=8, num_heads=2, ffn_dim=16, vocab=10)
# Per token and layer: QKV 2*8*(2+2*2)*4 = 384, output 2*2*4*8 = 128,
# FFN 2*8*16 + 2*16*8 = 512; per token 2 layers * 1024 = 2048 and the
# unembedding 2*8*10 = 160.
SMALL_WEIGHTS_PER_TOKEN = 2 * (384 + 128 + 512)
SMALL_EMBEDDING_PER_TOKEN = 160


class Transformer(unittest.TestCase):
    def test_maxtext(self):
        # MaxText's calculate_tflops_training_per_device, read in
        # src/maxtext/utils/maxtext_utils.py of AI-Hypercomputer/maxtext at
        # commit e591f30cbbf2 (maxtext-v0.2.4-10, 2026-08-22): its dense
        # (non-MoE, non-MLA) branch, decoder block "llama2" (the default
        # branch), gradient_accumulation_steps 1, no DPO, MTP or vision.
        # A Llama-2-7B shape with grouped-query attention.
        per_device_batch_size, max_target_length = 2, 2048
        emb_dim, num_query_heads, num_kv_heads, head_dim = 4096, 32, 8, 128
        mlp_dim, mlp_activations, vocab_size = 11008, ['silu', 'linear'], 32000
        num_decoder_layers = 32
        kv_multiplier = 2                               # share_kv_projections False
        ffn1_flops = (2 * per_device_batch_size * max_target_length * mlp_dim * emb_dim
                      * len(mlp_activations))
        ffn2_flops = 2 * per_device_batch_size * max_target_length * mlp_dim * emb_dim
        total_ffn_flops = ffn1_flops + ffn2_flops
        total_ffn_flops_all_layers = total_ffn_flops * num_decoder_layers
        qkv_flops = (2 * per_device_batch_size * max_target_length * emb_dim
                     * (num_query_heads + kv_multiplier * num_kv_heads) * head_dim)
        noncausal_attention_flops = (4 * per_device_batch_size * max_target_length**2
                                     * num_query_heads * head_dim)
        projection_flops = (2 * per_device_batch_size * max_target_length * emb_dim
                            * num_query_heads * head_dim)
        causal_attention_flops = noncausal_attention_flops / 2
        embedding_flops = 2 * per_device_batch_size * max_target_length * emb_dim * vocab_size
        learnable_weight_tflops = ((total_ffn_flops_all_layers
                                    + (qkv_flops + projection_flops) * num_decoder_layers
                                    + embedding_flops) * 3 / 10**12)
        attention_tflops = causal_attention_flops * num_decoder_layers * 3 / 10**12
        total_tflops = learnable_weight_tflops + attention_tflops

        got = flops.transformer(layers=32, d_model=4096, num_heads=32, num_kv_heads=8,
                                head_dim=128, ffn_dim=11008, gated=True, vocab=32000,
                                seq_len=2048, batch=2, breakdown=True)
        self.assertAlmostEqual(got['total'] / 1e12, total_tflops, delta=total_tflops * 1e-12)
        self.assertAlmostEqual(got['attention'] / 1e12, attention_tflops,
                               delta=attention_tflops * 1e-12)
        self.assertAlmostEqual((got['weights'] + got['embedding']) / 1e12, learnable_weight_tflops,
                               delta=learnable_weight_tflops * 1e-12)
        self.assertEqual(got['embedding'], 3 * embedding_flops)

    def test_causal_prefill_and_train(self):
        s = 4
        attention = 2 * 4 * (s * s // 2) * 2 * 4     # layers 4 pairs h hd, pairs s^2/2
        fwd = s * (SMALL_WEIGHTS_PER_TOKEN + SMALL_EMBEDDING_PER_TOKEN) + attention
        self.assertEqual(flops.transformer(**SMALL, seq_len=s, mode='prefill'), fwd)
        self.assertEqual(flops.transformer(**SMALL, seq_len=s), 3 * fwd)
        self.assertEqual(flops.transformer(**SMALL, seq_len=s, batch=5), 15 * fwd)
        b = flops.transformer(**SMALL, seq_len=s, mode='prefill', breakdown=True)
        self.assertEqual(b, {'weights': s * SMALL_WEIGHTS_PER_TOKEN, 'attention': attention,
                             'embedding': s * SMALL_EMBEDDING_PER_TOKEN, 'total': fwd})

    def test_not_causal(self):
        s = 4
        got = flops.transformer(**SMALL, seq_len=s, mode='prefill', causal=False, breakdown=True)
        self.assertEqual(got['attention'], 2 * 4 * s * s * 2 * 4)

    def test_sliding_window(self):
        # s 6, window 3: the queries at positions 0..5 see 1, 2, 3, 3, 3, 3 keys
        s, w = 6, 3
        pairs = 1 + 2 + 3 + 3 + 3 + 3
        got = flops.transformer(**SMALL, seq_len=s, window=w, mode='prefill', breakdown=True)
        self.assertEqual(got['attention'], 2 * 4 * pairs * 2 * 4)
        self.assertEqual(got['weights'], s * SMALL_WEIGHTS_PER_TOKEN)
        train = flops.transformer(**SMALL, seq_len=s, window=w, breakdown=True)
        self.assertEqual(train['attention'], 3 * got['attention'])
        # a window of 1: each token sees itself only
        one = flops.transformer(**SMALL, seq_len=s, window=1, mode='prefill', breakdown=True)
        self.assertEqual(one['attention'], 2 * 4 * s * 2 * 4)
        # a window as wide as the sequence or wider is no window
        full = flops.transformer(**SMALL, seq_len=s, mode='prefill')
        for w in (s, s + 1, 10**6):
            self.assertEqual(flops.transformer(**SMALL, seq_len=s, window=w, mode='prefill'), full)

    def test_grouped_query_attention(self):
        # 4 heads of 2 sharing 1 K/V head: QKV 2*8*(4+2*1)*2 = 192 per token
        # and layer, output 2*4*2*8 = 128, attention 4 pairs * 4 * 2
        got = flops.transformer(layers=1, d_model=8, num_heads=4, num_kv_heads=1, ffn_dim=16,
                                vocab=0, seq_len=2, mode='prefill', breakdown=True)
        self.assertEqual(got['weights'], 2 * (192 + 128 + 512))
        self.assertEqual(got['attention'], 4 * 2 * 4 * 2)      # pairs 2*2/2 = 2
        self.assertEqual(got['embedding'], 0)
        mha = flops.transformer(layers=1, d_model=8, num_heads=4, ffn_dim=16, vocab=0,
                                seq_len=2, mode='prefill', breakdown=True)
        self.assertEqual(mha['weights'] - got['weights'], 2 * 2 * 8 * 2 * 3 * 2)

    def test_gated_ffn_and_head_dim(self):
        got = flops.transformer(layers=1, d_model=8, num_heads=2, head_dim=3, ffn_dim=16,
                                gated=True, vocab=0, seq_len=1, mode='prefill', breakdown=True)
        # QKV 2*8*6*3 = 288, output 2*2*3*8 = 96, FFN 2*8*16*2 + 2*16*8 = 768
        self.assertEqual(got['weights'], 288 + 96 + 768)
        self.assertEqual(got['attention'], 4 * 2 * 3 // 2)       # pairs 1/2

    def test_decode(self):
        # one token per sequence, 3 sequences, a cache of 10 positions
        got = flops.transformer(**SMALL, mode='decode', context=10, batch=3, breakdown=True)
        self.assertEqual(got['weights'], 3 * SMALL_WEIGHTS_PER_TOKEN)
        self.assertEqual(got['embedding'], 3 * SMALL_EMBEDDING_PER_TOKEN)
        self.assertEqual(got['attention'], 2 * 3 * 4 * 10 * 2 * 4)
        win = flops.transformer(**SMALL, mode='decode', context=10, window=4, breakdown=True)
        self.assertEqual(win['attention'], 2 * 4 * 4 * 2 * 4)
        self.assertEqual(flops.transformer(**SMALL, mode='decode', context=10, seq_len=1),
                         flops.transformer(**SMALL, mode='decode', context=10))

    def test_bad_arguments(self):
        cases = [
            (dict(SMALL, seq_len=4, num_kv_heads=3), 'num_kv_heads (3) must divide num_heads (2)'),
            (dict(SMALL, seq_len=4, d_model=9), 'give head_dim'),
            (dict(SMALL, seq_len=0), 'seq_len must be positive'),
            (dict(SMALL, seq_len=4.5), 'seq_len must be an integer'),
            (dict(SMALL, seq_len=4, layers=True), 'layers must be an integer, not a bool'),
            (dict(SMALL, seq_len=4, vocab=-1), 'vocab must be >= 0'),
            (dict(SMALL, seq_len=4, mode='infer'), 'mode must be one of train, prefill, decode'),
            (dict(SMALL), 'needs seq_len'),
            (dict(SMALL, mode='decode'), 'needs context'),
            (dict(SMALL, mode='decode', context=4, seq_len=4), 'leave seq_len out'),
            (dict(SMALL, seq_len=4, context=4), 'context is for mode="decode" only'),
            (dict(SMALL, seq_len=4, window=2, causal=False), 'sliding window needs causal=True'),
            (dict(SMALL, seq_len=4, window=0), 'window must be positive'),
        ]
        for kw, message in cases:
            with self.assertRaises(ValueError, msg=kw) as cm:
                flops.transformer(**kw)
            self.assertIn(message, str(cm.exception), kw)
        with self.assertRaises(TypeError):
            flops.transformer(2, 8, 2, 16, 10, 4)               # keywords only


class Bytes(unittest.TestCase):
    def test_param_bytes(self):
        n = 1000
        for dtype, size in (('fp64', 8000), ('fp32', 4000), ('float32', 4000), ('fp16', 2000),
                            ('bf16', 2000), ('BF16', 2000), ('fp8', 1000), ('int8', 1000),
                            ('int4', 500)):
            self.assertEqual(flops.param_bytes(n, dtype), size, dtype)
        self.assertEqual(flops.param_bytes(n), 2000)            # bf16 by default
        self.assertEqual(flops.param_bytes(7e9, 'fp32'), 28 * 10 ** 9)  # a whole float is fine
        self.assertEqual(flops.param_bytes(7, 'int4'), 4)       # two a byte, rounded up

    def test_dtype_objects(self):
        class TorchLike:                   # torch 1.x: no itemsize, str() torch.NAME
            def __init__(self, name):
                self.name = name

            def __str__(self):
                return 'torch.' + self.name

        class NumpyLike:
            itemsize = 4

        self.assertEqual(flops.param_bytes(10, TorchLike('bfloat16')), 20)
        self.assertEqual(flops.param_bytes(10, TorchLike('float8_e4m3fn')), 10)
        self.assertEqual(flops.param_bytes(10, NumpyLike()), 40)
        with self.assertRaises(ValueError) as cm:
            flops.param_bytes(10, 'fp12')
        self.assertIn("unknown dtype 'fp12'", str(cm.exception))

    def test_kv_cache_bytes(self):
        # K and V: 2 * 32 layers * 8 heads * 128 * 4096 positions * 2 sequences, bf16
        self.assertEqual(flops.kv_cache_bytes(32, 8, 128, 4096, batch=2),
                         2 * 32 * 8 * 128 * 4096 * 2 * 2)
        self.assertEqual(flops.kv_cache_bytes(1, 1, 1, 3, dtype='int4'), 3)
        with self.assertRaises(ValueError):
            flops.kv_cache_bytes(0, 8, 128, 10)


class TrackerHelpers(unittest.TestCase):
    """The helpers of issue 28 item 4, against hand counts."""

    def test_attention(self):
        b, h, s, d = 2, 4, 16, 8
        fwd = 4 * b * h * s * s * d                       # Q K^T and P V, no mask
        self.assertEqual(flops.attention(b, h, s, s, d), fwd)
        self.assertEqual(flops.attention(b, h, s, s, d, causal=True), fwd // 2)
        # forward + 2 x backward; flash's backward redoes Q K^T (2.5 x forward)
        self.assertEqual(flops.attention(b, h, s, s, d, backward=True), 3 * fwd)
        self.assertEqual(flops.attention(b, h, s, s, d, backward=True, recompute='flash'),
                         fwd + 5 * fwd // 2)
        self.assertEqual(flops.attention(b, h, s, s, d, backward=True, recompute=True), 4 * fwd)
        self.assertEqual(flops.attention(b, h, s, s, d, causal=True, backward=True,
                                         recompute='full'), 2 * fwd)
        # 3 new queries after 5 cached positions: 3 * 5 + 3^2 / 2 pairs
        self.assertEqual(flops.attention(1, 1, 3, 8, 2, causal=True), 4 * 2 * (15 + 4.5))
        # window 2 over 4 positions: 1 + 2 + 2 + 2 keys, exactly
        self.assertEqual(flops.attention(1, 1, 4, 4, 1, causal=True, window=2), 4 * 7)
        # the same pairs as transformer()'s attention part (prefill, one layer)
        t = flops.transformer(layers=1, d_model=32, num_heads=4, ffn_dim=8, vocab=0, seq_len=16,
                              batch=2, mode='prefill', breakdown=True)
        self.assertEqual(t['attention'], flops.attention(2, 4, 16, 16, 8, causal=True))
        for kw, message in ((dict(recompute=True), 'give backward=True'),
                            (dict(backward=True, recompute='some'), 'recompute must be'),
                            (dict(window=2), 'needs causal=True')):
            with self.assertRaises(ValueError) as cm:
                flops.attention(1, 1, 4, 4, 1, **kw)
            self.assertIn(message, str(cm.exception), kw)
        with self.assertRaises(ValueError):
            flops.attention(1, 1, 5, 4, 1, causal=True)        # more queries than keys

    def test_train_factor(self):
        self.assertEqual(flops.train_factor(), 3)
        self.assertEqual(flops.train_factor(checkpointing=True), 4)
        self.assertEqual(flops.train_factor(0.25), 3.25)
        self.assertEqual(flops.train(7, 11), 6 * 7 * 11)
        self.assertEqual(flops.train(7, 11, checkpointing=True), 8 * 7 * 11)
        self.assertEqual(flops.train(7, 11, checkpointing=0.5), 7 * 7 * 11)
        for bad in (2, -0.1, 'full'):
            with self.assertRaises(ValueError):
                flops.train_factor(bad)

    def test_transformer_checkpointing(self):
        kw = dict(layers=2, d_model=8, num_heads=2, ffn_dim=16, vocab=10, seq_len=4, batch=3)
        fwd = flops.transformer(mode='prefill', breakdown=True, **kw)
        full = flops.transformer(checkpointing=True, breakdown=True, **kw)
        sel = flops.transformer(checkpointing='selective', breakdown=True, **kw)
        # layers recomputed (x 4), the unembedding outside them is not (x 3)
        self.assertEqual(full, {'weights': 4 * fwd['weights'], 'attention': 4 * fwd['attention'],
                                'embedding': 3 * fwd['embedding'],
                                'total': 4 * (fwd['weights'] + fwd['attention'])
                                + 3 * fwd['embedding']})
        self.assertEqual(sel['weights'], 3 * fwd['weights'])
        self.assertEqual(sel['attention'], 4 * fwd['attention'])
        self.assertEqual(flops.transformer(checkpointing=False, **kw), flops.transformer(**kw))
        with self.assertRaises(ValueError):
            flops.transformer(checkpointing=True, mode='prefill', **kw)
        with self.assertRaises(ValueError):
            flops.transformer(checkpointing='some', **kw)

    def test_param_bytes_of_tensors(self):
        class T:                         # the part of a torch tensor param_bytes reads
            def __init__(self, n, size, grad=True):
                self.n, self.size_, self.requires_grad = n, size, grad

            def numel(self):
                return self.n

            def element_size(self):
                return self.size_

        class Model:
            def __init__(self, tensors):
                self.tensors = tensors

            def parameters(self):
                return iter(self.tensors)

        class NumpyLike:                 # numpy: size and dtype.itemsize
            def __init__(self, n, itemsize):
                self.size = n
                self.dtype = type('D', (), {'itemsize': itemsize})()

        m = Model([T(10, 4), T(6, 2, grad=False), T(3, 2)])
        self.assertEqual(flops.param_bytes(m), 40 + 12 + 6)
        self.assertEqual(flops.param_bytes(m, trainable_only=True), 40 + 6)
        self.assertEqual(flops.param_bytes(m, 'fp8'), 19)           # dtype given: all of it
        self.assertEqual(flops.param_bytes(m, 'int4', trainable_only=True), 7)
        self.assertEqual(flops.param_count(m), 19)
        self.assertEqual(flops.param_count(m, trainable_only=True), 13)
        self.assertEqual(flops.param_bytes([T(5, 8)]), 40)          # an iterable of tensors
        self.assertEqual(flops.param_bytes([NumpyLike(5, 2)]), 10)
        self.assertEqual(flops.param_bytes(Model([])), 0)
        with self.assertRaises(ValueError):
            flops.param_bytes(10, trainable_only=True)
        with self.assertRaises(ValueError):
            flops.param_bytes(object())

    @unittest.skipIf(PY is None, NO_TORCH)
    def test_param_bytes_of_a_torch_model(self):
        r = run_py(PY, """
            import json, torch, mfu
            m = torch.nn.Sequential(torch.nn.Linear(10, 20), torch.nn.Linear(20, 3).to(torch.bfloat16))
            m[0].bias.requires_grad_(False)
            m.register_buffer('not_a_param', torch.zeros(100))
            tied = torch.nn.Linear(4, 4, bias=False)
            twice = torch.nn.Sequential(tied, tied)          # one tensor, listed once
            print(json.dumps([mfu.flops.param_bytes(m), mfu.flops.param_bytes(m, trainable_only=True),
                              mfu.flops.param_count(m), mfu.flops.param_bytes(m, 'fp32'),
                              mfu.flops.param_bytes(twice), mfu.flops.param_count(twice)]))
            """)
        self.assertEqual(r.returncode, 0, r.stderr)
        # fp32: 10 * 20 weights + 20 biases; bf16: 20 * 3 + 3
        self.assertEqual(json.loads(r.stdout), [220 * 4 + 63 * 2, 200 * 4 + 63 * 2, 283, 283 * 4,
                                                16 * 4, 16])


class Module(TempDirTest):
    def test_mfu_flops_is_the_module(self):
        r = run_py(sys.executable, """
            import mfu, mfu_flops
            from mfu import flops
            assert mfu.flops is mfu_flops is flops
            print(mfu.flops.matmul(2, 3, 4))
        """)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), '48')

    def test_import_mfu_flops_statement_is_lazy(self):
        """import mfu.flops and from mfu.flops import work (mfu is a module,
        not a package), and import mfu alone does not run mfu_flops.py."""
        d = self.path('copy')
        os.mkdir(d)
        shutil.copy(os.path.join(PYDIR, 'mfu.py'), d)
        with open(os.path.join(PYDIR, 'mfu_flops.py')) as f:
            text = f.read()
        with open(os.path.join(d, 'mfu_flops.py'), 'w') as f:
            f.write('print("mfu_flops runs")\n' + text)
        r = run_py(sys.executable, """
            import sys, mfu
            print("imported")
            import mfu.flops
            from mfu.flops import matmul
            import mfu_flops
            assert mfu.flops is mfu_flops is sys.modules["mfu.flops"]
            print(matmul(2, 3, 4), mfu.flops.gemv(3, 5))
            """, pythonpath=d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split('\n'), ['imported', 'mfu_flops runs', '48 30', ''])

    def test_mfu_py_alone(self):
        """mfu.py copied without mfu_flops.py: markers work, mfu.flops and
        step(flops="count") raise ImportError when used."""
        d = self.dir
        shutil.copy(os.path.join(PYDIR, 'mfu.py'), d)
        r = run_py(sys.executable, """
            import mfu
            with mfu.step(flops=5):
                pass
            assert not hasattr(mfu, "nothing")
            for what in ("mfu.flops", "mfu.step(flops='count').__enter__()"):
                try:
                    eval(what)
                except ImportError as e:
                    print("ImportError:", e)
        """, pythonpath=d)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 2, r.stdout)
        for line in lines:
            self.assertIn('ImportError: mfu.flops needs mfu_flops.py next to mfu.py (%s)' % d, line)

    def test_bad_flops_string(self):
        import mfu
        with self.assertRaises(ValueError) as cm:
            mfu.step(flops='counted')
        self.assertIn('flops must be a number, None or "count"', str(cm.exception))


class WithoutTorch(unittest.TestCase):
    """torch made unimportable (sys.modules['torch'] = None), whatever this
    Python has."""

    def run_blocked(self, code):
        return run_py(sys.executable, "import sys\nsys.modules['torch'] = None\n" + textwrap.dedent(code))

    def test_count_says_torch_is_missing(self):
        r = self.run_blocked("""
            import mfu
            try:
                mfu.flops.count(print, 1)
            except RuntimeError as e:
                print(e)
        """)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('mfu.flops.count needs PyTorch, which this Python', r.stdout)
        self.assertEqual(flops.matmul(1, 1, 1), 2)     # the formulas need nothing

    def test_counted_step_fails_at_entry(self):
        r = self.run_blocked("""
            import mfu
            try:
                with mfu.step(flops="count"):
                    print("body ran")
            except RuntimeError as e:
                print(e)
        """)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn('body ran', r.stdout)
        self.assertIn('mfu.step(flops="count") counts PyTorch operators', r.stdout)
        self.assertIn('mfu.step(flops=N)', r.stdout)
        self.assertIn('mfu-record counts the FLOPs of BLAS and oneDNN calls', r.stdout)


# Every count of TorchCount, computed in one torch process (one import).
COUNTS = r"""
import json
import torch
import mfu

torch.manual_seed(0)
torch.set_num_threads(1)
count = mfu.flops.count
out = {}

lin = torch.nn.Linear(8, 4)
x = torch.randn(3, 8)
out['linear'] = count(lin, x).by_op
out['linear_backward'] = count(lin, x, backward=True).by_op
out['linear_backward_input_grad'] = count(lin, x.clone().requires_grad_(), backward=True).by_op
out['linear_3d'] = count(lin, torch.randn(2, 3, 8)).total
with torch.inference_mode():
    out['linear_inference'] = count(lin, x).total
out['bmm'] = count(torch.bmm, torch.randn(2, 3, 4), torch.randn(2, 4, 5)).total
out['matmul_broadcast'] = count(torch.matmul, torch.randn(2, 3, 4), torch.randn(4, 5)).total
out['baddbmm'] = count(torch.baddbmm, torch.randn(2, 3, 5), torch.randn(2, 3, 4),
                       torch.randn(2, 4, 5)).total

net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                          torch.nn.Linear(4 * 6 * 6, 5))
img = torch.randn(2, 3, 8, 8)
out['convnet'] = count(net, img).by_op
out['convnet_backward'] = count(net, img, backward=True).by_op
out['convnet_backward_input_grad'] = count(net, img.clone().requires_grad_(), backward=True).by_op
with torch.no_grad():
    out['convnet_elementwise'] = count(net, img, elementwise=True).by_op
out['conv_transpose'] = count(torch.nn.functional.conv_transpose2d, torch.randn(1, 4, 5, 5),
                              torch.randn(4, 2, 3, 3)).total
out['kwargs'] = count(torch.nn.functional.linear, x, weight=lin.weight).total

with mfu.flops.counting() as c:
    lin(x)
    lin(x)
out['counting'] = c.total
text = str(count(net, img, backward=True))
out['str_has_total'] = 'total' in text and 'aten.convolution_backward' in text
try:
    count(lambda: 3, backward=True)
except TypeError as e:
    out['backward_not_tensor'] = str(e)
net.zero_grad(set_to_none=True)
out['convnet_backward_elementwise'] = count(net, img, backward=True, elementwise=True).by_op

# The FlopCounterMode path (torch >= 2.1), with a stand-in that counts
# aten.mm only: mfu's own formulas add what its table lacks, and the
# pointwise operators.
import mfu_flops
from torch.utils._python_dispatch import TorchDispatchMode


class StandIn:
    def __init__(self, display=True):
        self.flop_registry = {torch.ops.aten.mm: None}
        counts = self.counts = {}

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                r = func(*args, **(kwargs or {}))
                if func._overloadpacket is torch.ops.aten.mm:
                    (m, k), n = args[0].shape, args[1].shape[1]
                    counts[func._overloadpacket] = counts.get(func._overloadpacket, 0) + 2 * m * k * n
                return r

        self.mode = Mode()

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)

    def get_flop_counts(self):
        return {'Global': dict(self.counts)}


# Issue 24: the convolutional network of tests/workloads/lib_calls.py
# (padding, a stride, groups = 4), a training step (SGD).
nn = torch.nn
cnet = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                     nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=4), nn.ReLU(),
                     nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))
opt = torch.optim.SGD(cnet.parameters(), lr=0.01)
cx, cy = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))


def conv_step():
    opt.zero_grad()
    nn.functional.cross_entropy(cnet(cx), cy).backward()
    opt.step()


c = count(conv_step)
out['conv_train'], out['conv_train_unknown'] = c.by_op, c.unknown
with torch.inference_mode():
    out['conv_inference'] = count(cnet, cx).total

# The inference fast paths: nn.TransformerEncoderLayer and
# nn.MultiheadAttention in eval under no_grad, a stack of two layers with a
# padding mask (nested tensors: the padding is not computed).
B, S, D, H, F = 2, 12, 32, 4, 64
enc = nn.TransformerEncoderLayer(D, H, F, batch_first=True).eval()
mha = nn.MultiheadAttention(D, H, batch_first=True).eval()
stack = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, F, batch_first=True), 2).eval()
src, mem = torch.randn(B, S, D), torch.randn(B, 5, D)
pad = torch.zeros(B, S, dtype=torch.bool)
pad[0, 9:] = True
with torch.no_grad():
    out['encoder_eval'] = count(enc, src).by_op
    out['mha_eval'] = count(mha, src, src, src).by_op
    out['mha_cross_eval'] = count(mha, src, mem, mem, need_weights=False).total
    out['stack_padded'] = count(stack, src, src_key_padding_mask=pad).total
out['encoder_train'] = count(enc.train(), src, backward=True).total

# Other products of torch 1.13's registry
out['addr'] = count(torch.addr, torch.randn(6, 5), torch.randn(6), torch.randn(5)).total
out['addmv'] = count(torch.addmv, torch.randn(6), torch.randn(6, 5), torch.randn(5)).total
out['mv'] = count(torch.mv, torch.randn(6, 5), torch.randn(5)).total
out['dot'] = count(torch.dot, torch.randn(7), torch.randn(7)).total
out['addbmm'] = count(torch.addbmm, torch.randn(3, 5), torch.randn(4, 3, 6), torch.randn(4, 6, 5)).total
out['conv1d_backward'] = count(nn.Conv1d(4, 6, 5, stride=2, dilation=2), torch.randn(2, 4, 40),
                               backward=True).total

# Operators with no formula: a custom one (torch.library) on a 64 x 64
# matrix, the same on a small one (not named), and one of aten's (bilinear's
# _trilinear, torch.linalg.solve)
lib = torch.library.Library("mfutest", "DEF")
lib.define("mymm(Tensor a, Tensor b) -> Tensor")
lib.impl("mymm", lambda a, b: a @ b, "CPU")
big, small = torch.randn(64, 64), torch.randn(8, 8)
c = count(torch.ops.mfutest.mymm, big, big)
out['custom_big'] = [c.total, c.unknown, c.complete, str(c)]
c = count(torch.ops.mfutest.mymm, small, small)
out['custom_small'] = [c.total, c.unknown, c.complete]
c = count(lambda: torch.ops.mfutest.mymm(big, big) + lin(x).sum())
out['custom_and_linear'] = [c.total, c.unknown]
out['trilinear'] = count(nn.Bilinear(64, 64, 8), torch.randn(80, 64), torch.randn(80, 64)).unknown
out['solve'] = count(torch.linalg.solve, torch.randn(80, 80), torch.randn(80, 60)).unknown
out['min_elements'] = mfu.flops.UNKNOWN_MIN_ELEMENTS

mfu_flops._flop_counter_mode = lambda: StandIn
out['standin_linear_backward'] = count(lin, x, backward=True).by_op
net.zero_grad(set_to_none=True)
out['standin_convnet_backward_elementwise'] = count(net, img, backward=True, elementwise=True).by_op
# next to FlopCounterMode: what neither counts is still named
out['standin_custom'] = count(torch.ops.mfutest.mymm, big, big).unknown
print(json.dumps(out))
"""


def conv_flops(n, c_in, c_out, out_spatial, kernel, groups=1):
    """A convolution's products: 2 N C_out prod(out) (C_in / G) prod(kernel)."""
    f = 2 * n * c_out * (c_in // groups)
    for x in list(out_spatial) + list(kernel):
        f *= x
    return f


def mha_flops(d, q_lens, k_lens):
    """Multi-head attention with its projections (docs/flops.md): Q, K, V
    projected (2 d^2 a token each), Q K^T and (scores) V (2 d a pair each),
    the output projection (2 d^2 a query token)."""
    pairs = sum(a * b for a, b in zip(q_lens, k_lens))
    return 2 * d * d * (sum(q_lens) + 2 * sum(k_lens)) + 4 * d * pairs + 2 * d * d * sum(q_lens)


@unittest.skipIf(PY is None, NO_TORCH)
class TorchCount(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = run_py(PY, COUNTS)
        if r.returncode != 0:
            raise AssertionError('the counting script failed:\n' + r.stderr)
        cls.c = json.loads(r.stdout.splitlines()[-1])

    def test_linear(self):
        fwd = 2 * 3 * 8 * 4                              # batch 3, 8 -> 4
        self.assertEqual(self.c['linear'], {'aten.addmm': fwd})
        # backward: the weight gradient (a product as big as the forward); the
        # input's gradient only when the input requires grad: 2x or 3x
        self.assertEqual(sum(self.c['linear_backward'].values()), 2 * fwd)
        self.assertEqual(self.c['linear_backward'], {'aten.addmm': fwd, 'aten.mm': fwd})
        self.assertEqual(sum(self.c['linear_backward_input_grad'].values()), 3 * fwd)
        self.assertEqual(self.c['linear_3d'], 2 * 6 * 8 * 4)
        self.assertEqual(self.c['linear_inference'], fwd)        # aten.linear whole
        self.assertEqual(self.c['kwargs'], fwd)
        self.assertEqual(self.c['counting'], 2 * fwd)

    def test_batched_products(self):
        self.assertEqual(self.c['bmm'], 2 * 2 * 3 * 4 * 5)
        self.assertEqual(self.c['matmul_broadcast'], 2 * 2 * 3 * 4 * 5)
        self.assertEqual(self.c['baddbmm'], 2 * 2 * 3 * 4 * 5)

    def test_conv_net(self):
        conv = 2 * 2 * (6 * 6) * 4 * (3 * 3 * 3)         # N out-pixels c_out (c_in k k)
        fc = 2 * 2 * 144 * 5
        self.assertEqual(sum(self.c['convnet'].values()), conv + fc)
        self.assertEqual(self.c['convnet'].get('aten.convolution'), conv)
        # backward: the conv's weight gradient only (its input needs none),
        # the linear layer's input and weight gradients
        b = self.c['convnet_backward']
        self.assertEqual(b.get('aten.convolution_backward'), conv)
        self.assertEqual(sum(b.values()), conv + fc + conv + 2 * fc)
        bi = self.c['convnet_backward_input_grad']
        self.assertEqual(bi.get('aten.convolution_backward'), 2 * conv)
        self.assertEqual(sum(bi.values()), conv + fc + 2 * conv + 2 * fc)
        # elementwise: the ReLU's 2*4*6*6 outputs, one FLOP each
        e = self.c['convnet_elementwise']
        self.assertEqual(e.get('aten.relu'), 2 * 4 * 6 * 6)
        self.assertEqual(sum(e.values()), conv + fc + 2 * 4 * 6 * 6)
        # transposed: every input pixel times the whole 4x2x3x3 weight
        self.assertEqual(self.c['conv_transpose'], 2 * 25 * 4 * 2 * 9)

    def test_next_to_flop_counter_mode(self):
        self.assertEqual(self.c['standin_linear_backward'], self.c['linear_backward'])
        self.assertIn('aten.threshold_backward', self.c['convnet_backward_elementwise'])
        self.assertEqual(self.c['standin_convnet_backward_elementwise'],
                         self.c['convnet_backward_elementwise'])

    def test_printable_and_errors(self):
        self.assertTrue(self.c['str_has_total'])
        self.assertIn('needs a tensor output', self.c['backward_not_tensor'])

    def test_conv_training_step(self):
        # the hand count that the library count of test_libflops.py also
        # matches: both convolutions forward and weight gradient, the second
        # one's input gradient, the Linear layer's three products
        conv1 = conv_flops(8, 3, 16, (16, 16), (3, 3))
        conv2 = conv_flops(8, 16, 32, (8, 8), (3, 3), groups=4)
        linear = 3 * 2 * 8 * 10 * 512
        c = self.c['conv_train']
        self.assertEqual(sum(c.values()), 2 * conv1 + 3 * conv2 + linear)
        self.assertEqual(sum(c.values()), 7323648)
        self.assertEqual(c['aten.convolution'], conv1 + conv2)
        self.assertEqual(c['aten.convolution_backward'], conv1 + 2 * conv2)
        self.assertEqual(self.c['conv_train_unknown'], {})
        # conv2d whole under inference_mode: its decomposition counted
        self.assertEqual(self.c['conv_inference'], conv1 + conv2 + linear // 3)

    def test_fused_attention(self):
        B, S, D, F = 2, 12, 32, 64
        mha = mha_flops(D, [S] * B, [S] * B)
        ffn = 4 * D * F * B * S
        self.assertEqual(self.c['encoder_eval'], {'aten._transformer_encoder_layer_fwd': mha + ffn})
        self.assertEqual(self.c['mha_eval'], {'aten._native_multi_head_attention': mha})
        self.assertEqual(self.c['mha_cross_eval'], mha_flops(D, [S] * B, [5] * B))
        # padded: 9 and 12 tokens, two layers
        self.assertEqual(self.c['stack_padded'],
                         2 * (mha_flops(D, [9, 12], [9, 12]) + 4 * D * F * (9 + 12)))
        # in training the same layer is split into products: forward as in
        # eval, backward twice that (weights and inputs), but for the input
        # gradient of the QKV projection (src needs none)
        self.assertEqual(self.c['encoder_train'], 3 * (mha + ffn) - 2 * D * 3 * D * B * S)

    def test_other_products(self):
        self.assertEqual(self.c['addr'], 2 * 6 * 5)
        self.assertEqual(self.c['addmv'], 2 * 6 * 5)
        self.assertEqual(self.c['mv'], 2 * 6 * 5)
        self.assertEqual(self.c['dot'], 2 * 7)
        self.assertEqual(self.c['addbmm'], 2 * 4 * 3 * 6 * 5)
        # kernel 5 dilated 2 (9 wide), stride 2: 16 outputs; the input needs no gradient
        self.assertEqual(self.c['conv1d_backward'], 2 * conv_flops(2, 4, 6, (16,), (5,)))

    def test_unknown_operators_are_named(self):
        total, unknown, complete, text = self.c['custom_big']
        self.assertEqual(total, 0)
        self.assertEqual(unknown, {'mfutest.mymm': 1})
        self.assertFalse(complete)
        self.assertIn('mfutest.mymm', text)
        self.assertIn('not counted', text)
        # below UNKNOWN_MIN_ELEMENTS (a 64 x 64 matrix): not worth naming
        self.assertEqual(self.c['min_elements'], 4096)
        self.assertEqual(self.c['custom_small'], [0, {}, True])
        self.assertEqual(self.c['custom_and_linear'], [2 * 3 * 8 * 4, {'mfutest.mymm': 1}])
        self.assertEqual(self.c['trilinear'], {'aten._trilinear': 1})
        self.assertEqual(list(self.c['solve']), ['aten._linalg_solve_ex'])
        self.assertEqual(self.c['standin_custom'], {'mfutest.mymm': 1})


# A tiny training loop with counted steps (16 -> 32 -> 4 MLP). Prints the
# count of one step at batch 8 as JSON.
LOOP = r"""
import json
import torch
import mfu

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def train(x):
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad()


x8, x16 = torch.randn(8, 16), torch.randn(16, 16)
for x in (x8, x8, x16):          # steps 0-2: step 2 reuses step 0's count
    with mfu.step(flops="count"):
        train(x)
for x in (x16, x16):             # steps 3-4: another call site; declarations add up
    with mfu.step(flops="count", bytes=1000):
        train(x)
        mfu.step_model(flops=5)


@mfu.step(flops="count")
def decorated(x):
    train(x)


decorated(x8)                    # steps 5-6
decorated(x16)
for x in (x8, x16, x8):          # steps 7-9: a key per shape
    with mfu.step(flops="count", key=tuple(x.shape)):
        train(x)
print(json.dumps({"count8": mfu.flops.count(train, x8).total,
                  "count16": mfu.flops.count(train, x16).total}))
"""


@unittest.skipIf(PY is None, NO_TORCH)
class CountedSteps(TempDirTest):
    def test_recorded(self):
        script = self.path('loop.py')
        with open(script, 'w') as f:
            f.write(LOOP)
        db = self.path('run.sqlite')
        env = dict(os.environ, PYTHONPATH=PYDIR, MFU_NO_CALIBRATE='1')
        p = record(['-o', db], [PY, script], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        counts = json.loads(p.stdout.splitlines()[-1])
        # by hand, per sample: forward 2*16*32 + 2*32*4 = 1280; backward the
        # weight gradients 1280 and the hidden layer's input gradient 2*32*4
        per_sample = 1280 + 1280 + 256
        f8, f16 = 8 * per_sample, 16 * per_sample
        self.assertEqual(counts, {'count8': f8, 'count16': f16})
        rows = query(db, 'SELECT step, model_flops, model_bytes FROM step ORDER BY step')
        got = [(r['step'], r['model_flops'], r['model_bytes']) for r in rows]
        want = [(0, f8, None), (1, f8, None), (2, f8, None),
                (3, f16 + 5, 1000), (4, f16 + 5, 1000),
                (5, f8, None), (6, f8, None),
                (7, f8, None), (8, f16, None), (9, f8, None)]
        self.assertEqual(got, want)


# Issue 24: counted steps of PyTorch's inference fast path, of a custom
# operator counting has no formula for, and of pointwise work only; then
# (with --mismatch) a declaration well below the library's count.
FAST = r"""
import json
import sys
import warnings
import torch
import mfu

warnings.simplefilter("always")
torch.manual_seed(0)
torch.set_num_threads(1)
B, S, D, H, F = 4, 32, 128, 8, 256
enc = torch.nn.TransformerEncoderLayer(D, H, F, batch_first=True).eval()
src = torch.randn(B, S, D)
lib = torch.library.Library("mfutest", "DEF")
lib.define("mymm(Tensor a, Tensor b) -> Tensor")
lib.impl("mymm", lambda a, b: a @ b, "CPU")
n = 512 if "--mismatch" in sys.argv else 128
a = torch.randn(n, n)
with torch.no_grad():
    if "--mismatch" in sys.argv:
        lin = torch.nn.Linear(64, 64)
        for _ in range(2):
            with mfu.step(flops="count"):              # steps 0-1: the linear layer, and 2 n^3 uncounted
                lin(torch.randn(8, 64))
                torch.ops.mfutest.mymm(a, a)
        sys.exit(0)
    for _ in range(3):
        with mfu.step(flops="count"):                  # steps 0-2: the fused encoder layer
            enc(src)
    for _ in range(2):
        with mfu.step(flops="count"):                  # steps 3-4: a custom operator only
            torch.ops.mfutest.mymm(a, a)
    for _ in range(2):
        with mfu.step(flops="count"):                  # steps 5-6: no FLOPs it counts
            torch.relu(a)
"""


@unittest.skipIf(PY is None, NO_TORCH)
class CountedFastPath(TempDirTest):
    """mfu.step(flops="count") never declares a silent 0 (issue 24)."""

    def record(self, args=(), nobody=False):
        script = self.path('fast.py')
        with open(script, 'w') as f:
            f.write(FAST)
        db = self.path('run.sqlite')
        if os.path.exists(db):
            os.unlink(db)
        env = dict(os.environ, PYTHONPATH=PYDIR, MFU_NO_CALIBRATE='1', HOME=self.dir)
        cmd = [PY, script] + list(args)
        if nobody:
            # mfu-record, mfu.py and libmfu from copies nobody can reach
            cp = nobody_reachable(self, [prog('MFU_RECORD'), PYDIR])
            env = dict(cp.env, PYTHONPATH=cp[PYDIR], MFU_NO_CALIBRATE='1', HOME=self.dir)
            p = subprocess.run(as_nobody([cp[prog('MFU_RECORD')], '-o', db, '--'] + cmd), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        else:
            p = record(['-o', db], cmd, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db, p

    def notes(self, db):
        return [(r['kind'], r['text']) for r in
                query(db, "SELECT kind, text FROM note WHERE kind LIKE 'flops_count%' ORDER BY id")]

    def check_fast_path(self, db, stderr):
        rows = query(db, 'SELECT step, model_flops, lib_flops, lib_calls_unknown, flops, flops_source '
                         'FROM step ORDER BY step')
        self.assertEqual(len(rows), 7)
        B, S, D, F = 4, 32, 128, 256
        enc = mha_flops(D, [S] * B, [S] * B) + 4 * D * F * B * S
        for r in rows[:3]:
            # aten._transformer_encoder_layer_fwd counted whole: the
            # declaration is the library's count of its GEMMs (exactly here;
            # the test allows 1%), not the 0 it was
            self.assertEqual(r['model_flops'], enc, r)
            self.assertAlmostEqual(r['lib_flops'], enc, delta=0.01 * enc, msg=r)
            self.assertEqual(r['flops_source'], 'declared')
        for r in rows[3:5]:
            # the custom operator: nothing declared, the library's count
            # of its GEMM (a 128 x 128 product) stands
            self.assertIsNone(r['model_flops'], r)
            self.assertEqual(r['lib_flops'], 2 * 128 ** 3, r)
            self.assertEqual(r['flops_source'], 'library')
        for r in rows[5:]:
            # a ReLU: nothing counted, nothing declared (no 0)
            self.assertIsNone(r['model_flops'], r)
            self.assertIsNone(r['flops_source'], r)
        notes = self.notes(db)
        self.assertEqual([k for k, t in notes], ['flops_count', 'flops_count_missing', 'flops_count_missing'])
        self.assertIn('declared %d FLOPs per step' % enc, notes[0][1])
        self.assertIn('aten._transformer_encoder_layer_fwd 100%', notes[0][1])
        self.assertIn('declared nothing', notes[1][1])
        self.assertIn('no formula in mfu.flops (mfutest.mymm (1 call))', notes[1][1])
        self.assertIn('keep the FLOPs of their library calls', notes[1][1])
        self.assertIn('declared nothing: it counted no FLOPs', notes[2][1])
        line = next(i + 1 for i, text in enumerate(FAST.split('\n')) if '# steps 0-2' in text)
        self.assertEqual(notes[0][1].split(' at ')[1].split(' ')[0], '%s:%d' % (self.path('fast.py'), line))
        # and a warning for each of the last two, on the program's stderr
        self.assertEqual(stderr.count('RuntimeWarning: mfu: mfu.step(flops="count")'), 2, stderr)

    def test_fast_path_and_unknown_operators(self):
        db, p = self.record()
        self.check_fast_path(db, p.stderr)
        # the report: nothing declared 0, no mismatch
        r = subprocess.run([os.environ['MFU_REPORT'], '--db', db, '--format', 'json', 'notes'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        kinds = [n['kind'] for n in json.loads(r.stdout)]
        self.assertNotIn('flops_mismatch', kinds)

    def test_unprivileged(self):
        db, p = self.record(nobody=True)
        self.check_fast_path(db, p.stderr)

    def test_mismatch_names_the_count(self):
        db, p = self.record(['--mismatch'])
        rows = query(db, 'SELECT model_flops, lib_flops FROM step ORDER BY step')
        self.assertEqual([r['model_flops'] for r in rows], [2 * 8 * 64 * 64] * 2)
        self.assertEqual([r['lib_flops'] for r in rows], [2 * 8 * 64 * 64 + 2 * 512 ** 3] * 2)
        r = subprocess.run([os.environ['MFU_REPORT'], '--db', db, '--format', 'json', 'notes'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        notes = {n['kind']: n for n in json.loads(r.stdout)}
        self.assertIn('mfutest.mymm (1 call)', notes['flops_count_missing']['text'])
        self.assertIn('their FLOPs are not in it', notes['flops_count_missing']['text'])
        text = notes['flops_mismatch']['text']
        self.assertIn('check what mfu.step(flops="count") counted', text)
        self.assertNotIn('mfu_step_model', text)


if __name__ == '__main__':
    unittest.main()
