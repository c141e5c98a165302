#!/usr/bin/env python3
"""Write the fuzzers' seed corpora: a few valid inputs per target.

usage: tests/fuzz/make-corpus.py [OUTDIR]   (default: tests/fuzz/corpus)

Deterministic: running it again rewrites the same files. Each seed is a
valid (or deliberately odd but well-formed) input of its target's format,
described in the comment at the top of tests/fuzz/NAME.c.
"""
import os
import struct
import sys

# ---- fuzz_markers: raw struct mring_record images (576 bytes) ----

STEP_BEGIN, STEP_END, STEP_MODEL, PHASE_BEGIN, PHASE_END, PHASE_MODEL, LOSS = range(1, 8)
F_NAME_TRUNCATED, F_NO_COUNTERS, F_NULL_NAME = 1, 2, 4
F_AFTER_LOSS, F_LOST_STEP, F_LOST_PHASE = 8, 0x10, 0x20
F_LIB = 0x40


def mrec(kind, pid, tid, t, name=b'', flags=0, a=0.0, b=0.0, ngroups=2, data=None, lost=0, lib=None, snap=0):
    """A record as libmfu writes it, with the counter layout of
    tests/unit/test_markers.c: group 0 at data[0..4], group 1 at data[5..9]."""
    if data is None:
        data = [0] * 50
        data[0:5] = [2, t, t, t, t // 1000]
        data[5:10] = [2, t, t // 2, t, t // 20]
    head = struct.pack('<QBBBBIiiQdd', 0, kind, flags, len(name.rstrip(b'\0')), ngroups, lost,
                       pid, tid, t, a, b)
    body = struct.pack('<50Q', *data)
    # the library-call counts (MRING_F_LIB): calls, then FLOPs per precision
    tail = struct.pack('<Q6QQ', snap, *(lib or [0] * 6), 0)
    rec = head + body + name.ljust(64, b'\0')[:64] + tail
    assert len(rec) == 576
    return rec


def markers_seeds():
    ms = 1000000
    yield 'step_phases', b''.join([
        mrec(STEP_BEGIN, 10, 10, 1 * ms),
        mrec(STEP_MODEL, 10, 10, 1 * ms + 100, a=1e9, b=4e6),
        mrec(PHASE_BEGIN, 10, 10, 2 * ms, b'forward'),
        mrec(PHASE_MODEL, 10, 10, 2 * ms + 10, a=5e8, b=1e6),
        mrec(PHASE_BEGIN, 10, 11, 2 * ms + 50, b'loader'),
        mrec(PHASE_END, 10, 10, 3 * ms, b'forward'),
        mrec(STEP_END, 10, 12, 4 * ms),                          # 'loader' left open
    ])
    # at most 7 records (4,032 bytes) per seed: seeds stay under 4 KiB
    yield 'misuse_steps', b''.join([
        mrec(STEP_END, 20, 20, 1 * ms),                          # end without begin
        mrec(STEP_BEGIN, 20, 20, 2 * ms),
        mrec(STEP_BEGIN, 20, 20, 3 * ms),                        # begin while open
        mrec(STEP_MODEL, 20, 20, 11 * ms, a=float('inf')),
        mrec(STEP_END, 20, 20, 12 * ms, flags=F_NO_COUNTERS, ngroups=0, data=[0] * 50),
        mrec(99, 20, 20, 13 * ms),                               # unknown kind
        mrec(STEP_BEGIN, 20, 20, 15 * ms),                       # open at exit
    ])
    yield 'lib_flops', b''.join([
        mrec(STEP_BEGIN, 30, 30, 1 * ms, flags=F_LIB, lib=[4, 0, 100, 0, 0, 0], snap=1),
        mrec(PHASE_BEGIN, 30, 30, 2 * ms, b'gemm', flags=F_LIB, lib=[4, 0, 100, 0, 0, 0]),
        mrec(PHASE_END, 30, 30, 3 * ms, b'gemm', flags=F_LIB, lib=[6, 2 ** 64 - 1, 300, 0, 0, 7]),
        mrec(STEP_END, 30, 30, 4 * ms, flags=F_LIB, lib=[3, 0, 50, 0, 0, 0], snap=9),  # went down
        mrec(STEP_BEGIN, 30, 30, 5 * ms, flags=F_LIB, lib=[3, 0, 50, 0, 0, 0], snap=10),
        mrec(STEP_END, 30, 30, 6 * ms, lib=[9, 9, 9, 9, 9, 9], snap=11),               # no F_LIB
    ])
    yield 'misuse_phases', b''.join([
        mrec(PHASE_BEGIN, 20, 20, 4 * ms, b'outer'),
        mrec(PHASE_BEGIN, 20, 20, 5 * ms, b'inner'),
        mrec(PHASE_END, 20, 20, 6 * ms, b'outer'),               # inner left open
        mrec(PHASE_END, 20, 20, 7 * ms, b'nothing'),             # end without begin
        mrec(PHASE_BEGIN, 20, 21, 8 * ms, b'', flags=F_NULL_NAME),
        mrec(PHASE_BEGIN, 20, 21, 9 * ms, b'x' * 63, flags=F_NAME_TRUNCATED),
        mrec(PHASE_MODEL, 20, 21, 10 * ms, a=float('nan'), b=-1.0),
    ])
    # several processes (a data-loader fork) and reused tids
    recs = []
    for pid in (30, 31):
        t = pid * ms
        recs.append(mrec(STEP_BEGIN, pid, pid, t))
        recs.append(mrec(PHASE_BEGIN, pid, 130, t + 10, b'batch'))  # tid 130 in both
        recs.append(mrec(PHASE_END, pid, 130, t + 20, b'batch'))
    recs.append(mrec(STEP_END, 30, 30, 40 * ms))
    yield 'processes', b''.join(recs)
    # odd counter readings: a group read with the wrong nr, time going back,
    # a name that fills the field without a NUL
    bad = [0] * 50
    bad[0:5] = [7, 5, 0, 1, 2]
    bad[5:10] = [2, 0, 0, 0, 0]
    # replayed with moved tids (tail byte 0: 40 more rounds): 41 threads with
    # an open phase make the thread table grow; then with moved pids too
    # (tail byte 1, bit 0), ending idle threads' phases in 20 processes
    yield 'many_threads', b''.join([
        mrec(PHASE_BEGIN, 50, 1000, 1 * ms, b'worker'),
    ]) + bytes([40, 0])
    yield 'many_processes', b''.join([
        mrec(STEP_BEGIN, 60, 2000, 1 * ms),
        mrec(PHASE_BEGIN, 60, 2000, 2 * ms, b'load'),
        mrec(PHASE_END, 60, 2000, 3 * ms, b'load'),
        mrec(STEP_END, 60, 2000, 4 * ms),
    ]) + bytes([20, 1])
    # one phase begun 65 times on one thread (tail byte 1, bit 1: nothing
    # moved): deeper than the 64 levels kept
    yield 'deep_nesting', mrec(PHASE_BEGIN, 70, 70, 1 * ms, b'level') + bytes([64, 2])
    # records a full ring dropped: the next record of the thread says so,
    # and a thread leaving right after a loss sends a notice
    lost = F_AFTER_LOSS | F_LOST_STEP | F_LOST_PHASE
    yield 'loss', b''.join([
        mrec(STEP_BEGIN, 80, 80, 1 * ms),
        mrec(PHASE_BEGIN, 80, 80, 2 * ms, b'fwd'),
        mrec(PHASE_END, 80, 80, 4 * ms, b'fwd', flags=lost, lost=3),
        mrec(STEP_END, 80, 80, 5 * ms),
        mrec(PHASE_BEGIN, 80, 81, 6 * ms, b'load'),
        mrec(LOSS, 80, 81, 7 * ms, flags=F_AFTER_LOSS | F_LOST_PHASE, lost=0xffffffff, ngroups=0),
        mrec(PHASE_END, 80, 80, 8 * ms, b'bwd', flags=F_AFTER_LOSS | F_LOST_PHASE, lost=1),
    ])
    yield 'odd_readings', b''.join([
        mrec(STEP_BEGIN, 40, 40, 5 * ms),
        mrec(STEP_END, 40, 40, 1 * ms, data=bad),
        mrec(PHASE_BEGIN, 40, 0, 6 * ms, b'n' * 64),
        mrec(PHASE_END, 40, 0, 7 * ms, b'n' * 64),
    ])


# ---- fuzz_ring: slot count, caps, then operations on the shared ring ----

OP_W, OP_S, OP_P, OP_R, OP_D, OP_H, OP_L, OP_C = range(8)
HDR_NSLOTS, HDR_HEAD, HDR_TAIL, HDR_MAGIC, HDR_SIZES, HDR_GROUPS = 24, 64, 128, 0, 12, 48


def ring_in(nslots_log2, procs, threads, *ops):
    """fuzz_ring's input: nslots = 2 << nslots_log2, the caps (1 + n)."""
    return bytes([nslots_log2, procs - 1, threads - 1]) + b''.join(ops)


def op_p(kind, pid=1, tid=1, t=1, flags=0, ab=0x1b):
    # ab: flops model_values[ab % 8], bytes model_values[(ab >> 3) % 8]
    return bytes([OP_P, kind - 1, flags, pid, tid, t, ab])


def op_w(off, data):
    return bytes([OP_W, off, len(data)]) + data


def op_d(n=0):
    return bytes([OP_D, n])


def q(v):
    return struct.pack('<Q', v % (1 << 64))


def ring_seeds():
    step = [op_p(STEP_BEGIN, t=1), op_p(STEP_MODEL, t=2), op_p(PHASE_BEGIN, t=3), op_p(PHASE_END, t=4),
            op_p(STEP_END, t=5)]
    yield 'honest', ring_in(3, 4, 8, *step, op_d())
    # a ring of 2 slots drained as it fills, lapping it many times
    yield 'laps', ring_in(0, 2, 2, *[op_p(k, t=i + 1) + op_d(1) for i, k in
                                   enumerate([STEP_BEGIN, PHASE_BEGIN, PHASE_END, STEP_END] * 6)])
    # a writer killed inside a marker: a hole, skipped at the end
    yield 'hole', ring_in(2, 4, 8, op_p(STEP_BEGIN), bytes([OP_C, 1]), op_p(STEP_END, t=9))
    # the header's fixed fields changed between reads
    yield 'nslots_changed', ring_in(2, 4, 8, *step[:2], op_d(), op_w(HDR_NSLOTS, q(1 << 30)), *step[2:], op_d())
    yield 'sizes_changed', ring_in(2, 4, 8, *step[:2], op_d(), op_w(HDR_SIZES, b'\xff\xff\xff\xff'), *step[2:])
    yield 'magic_changed', ring_in(2, 4, 8, op_w(HDR_MAGIC, b'\0' * 8), *step, op_d())
    yield 'groups_changed', ring_in(2, 4, 8, *step[:3], op_d(2), op_w(HDR_GROUPS, bytes([250] * 16)), *step[3:], op_d())
    # head far ahead, behind, and the shared tail past the head
    yield 'head_far', ring_in(2, 4, 8, *step, bytes([OP_H]) + q(1 << 40), op_d())
    yield 'head_back', ring_in(2, 4, 8, *step, op_d(2), bytes([OP_H]) + q(-1), op_d())
    yield 'tail_ahead', ring_in(2, 4, 8, *step[:2], op_d(), op_w(HDR_TAIL, q(3)), *step[2:], op_d())
    # the lost count going down
    yield 'lost_down', ring_in(2, 4, 8, bytes([OP_L]) + q(7), *step, bytes([OP_L]) + q(3), op_d())
    # a slot made to look published beyond the head
    yield 'seq_forged', ring_in(2, 4, 8, *step, op_d(), bytes([OP_S, 1]) + q(7), op_d())
    # a raw record at the head's slot, published with its own seq
    yield 'raw_record', ring_in(2, 4, 8, bytes([OP_R]) + q(1)[:8] + mrec(PHASE_BEGIN, 1, 1, 10, b'raw')[8:],
                                op_d())
    # forged pids and tids past small caps
    yield 'caps', ring_in(4, 1, 1, *[op_p(STEP_BEGIN, pid=p, tid=p) for p in range(4)],
                          *[op_p(PHASE_BEGIN, pid=0, tid=t, t=2) for t in range(5)], op_d())
    # declared values no machine reaches
    yield 'implausible', ring_in(2, 4, 8, op_p(STEP_BEGIN), op_p(STEP_MODEL, ab=0x2d), op_p(STEP_END), op_d())
    # records that tell of a loss
    yield 'loss', ring_in(2, 4, 8, op_p(PHASE_BEGIN), op_p(PHASE_END, flags=F_AFTER_LOSS | F_LOST_PHASE),
                          op_p(LOSS, flags=F_AFTER_LOSS | F_LOST_STEP), op_d())


# ---- fuzz_perf_record: sample_type (u64), flags (u8), header, body ----

S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID = \
    1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x200
S_IDENTIFIER = 0x10000
RING_ST = S_IDENTIFIER | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_CALLCHAIN
PROBES_ST = S_IDENTIFIER | S_IP | S_TID | S_TIME
R_MMAP, R_LOST, R_COMM, R_EXIT, R_THROTTLE, R_UNTHROTTLE, R_FORK = 1, 2, 3, 4, 5, 6, 7
R_SAMPLE, R_MMAP2, R_LOST_SAMPLES, R_SWITCH, R_SWITCH_CPU_WIDE = 9, 10, 13, 14, 15
MISC_USER, MISC_SWITCH_OUT, MISC_PREEMPT, MISC_BUILD_ID, MISC_COMM_EXEC = \
    2, 0x2000, 0x4000, 0x4000, 0x2000
CTX_KERNEL, CTX_USER = (1 << 64) - 128, (1 << 64) - 512


def sample_id(pid=100, tid=101, t=123456789, cpu=1, ident=0x77):
    # RING_ST's sample_id fields: TID, TIME, CPU, IDENTIFIER
    return struct.pack('<IIQIIQ', pid, tid, t, cpu, 0, ident)


def cstr(s):
    b = s.encode() + b'\0'
    return b + b'\0' * (-len(b) % 8)


def prec(st, sid_all, rtype, misc, body):
    hdr = struct.pack('<IHH', rtype, misc, 8 + len(body))
    return struct.pack('<QB', st, sid_all) + hdr + body


def perf_seeds():
    chain = [CTX_KERNEL, 0xffffffff81000010, 0xffffffff81000020, CTX_USER,
             0x401000, 0x401100, 0x401200]
    body = struct.pack('<QQIIQIIQQ', 0x77, 0x401000, 100, 101, 123456789, 1, 0, 1000001,
                       len(chain)) + struct.pack('<%dQ' % len(chain), *chain)
    yield 'sample_callchain', prec(RING_ST, 1, R_SAMPLE, MISC_USER, body)
    yield 'probe_hit', prec(PROBES_ST, 0, R_SAMPLE, MISC_USER,
                            struct.pack('<QQIIQ', 0x99, 0x401234, 200, 201, 987654321))
    yield 'switch_out', prec(RING_ST, 1, R_SWITCH, MISC_SWITCH_OUT | MISC_PREEMPT, sample_id())
    yield 'switch_cpu_wide', prec(RING_ST, 1, R_SWITCH_CPU_WIDE, 0,
                                  struct.pack('<II', 300, 301) + sample_id())
    yield 'mmap2', prec(RING_ST, 1, R_MMAP2, MISC_USER,
                        struct.pack('<IIQQQIIQQII', 100, 100, 0x400000, 0x2000, 0, 8, 1, 1234,
                                    0, 5, 2) + cstr('/usr/bin/true') + sample_id())
    yield 'mmap2_build_id', prec(RING_ST, 1, R_MMAP2, MISC_USER | MISC_BUILD_ID,
                                 struct.pack('<IIQQQ', 100, 100, 0x7f0000000000, 0x1000, 0x1000)
                                 + bytes([20, 0, 0, 0]) + bytes(range(1, 21))
                                 + struct.pack('<II', 5, 2) + cstr('/lib/libc.so.6') + sample_id())
    yield 'mmap', prec(RING_ST, 0, R_MMAP, MISC_USER,
                       struct.pack('<IIQQQ', 100, 100, 0x400000, 0x1000, 0) + cstr('/bin/sh'))
    yield 'comm_exec', prec(RING_ST, 1, R_COMM, MISC_COMM_EXEC,
                            struct.pack('<II', 100, 100) + cstr('wl_mlp') + sample_id())
    yield 'fork', prec(RING_ST, 1, R_FORK, 0,
                       struct.pack('<IIIIQ', 102, 100, 102, 100, 5555) + sample_id())
    yield 'exit', prec(RING_ST, 1, R_EXIT, 0,
                       struct.pack('<IIIIQ', 102, 100, 102, 100, 6666) + sample_id())
    yield 'lost', prec(RING_ST, 1, R_LOST, 0, struct.pack('<QQ', 0x77, 42) + sample_id())
    yield 'lost_samples', prec(RING_ST, 1, R_LOST_SAMPLES, 0, struct.pack('<Q', 7) + sample_id())
    yield 'throttle', prec(RING_ST | S_ID | S_STREAM_ID, 1, R_THROTTLE, 0,
                           struct.pack('<QQQ', 111, 0x77, 0x78)
                           + struct.pack('<IIQQQIIQ', 1, 2, 3, 0x77, 0x78, 1, 0, 0x77))


# ---- fuzz_alias: "NAME SPEC" lines, an empty line, the alias ----

def alias_seeds():
    intel = ('event config:0-7\numask config:8-15\nedge config:18\ninv config:23\n'
             'thresh config:24-31\n')
    yield 'intel_imc', intel + '\nevent=0x04,umask=0x03'
    yield 'intel_free_running', intel + '\nevent=0xff,umask=0x20\n'
    yield 'intel_edge', intel + '\nevent=0x1,edge,inv,thresh=3'
    yield 'amd_umc', 'event config:0-7\nrdwrmask config:8-9\n\nevent=0x0a,rdwrmask=0x1'
    yield 'amd_df', ('event config:0-7,32-35,59-60\numask config:8-15\n\n'
                     'event=0x187,umask=0x38')
    yield 'config_words', 'ext config1:0-15\nfilt config2:0-63\n\nconfig=0xff,config1=7,ext=3,filt=9'


# ---- fuzz_usdt: small ELF images with .note.stapsdt ----

def elf_image(is64=True, le=True, notes=(), base_fix=0, with_base=True):
    """An ELF executable: one PT_LOAD R+X over the whole file at 0x400000,
    sections .text, .data (the semaphores), .note.stapsdt, .stapsdt.base,
    .shstrtab. notes: (pc_offset_in_text, sem_offset_in_data or None,
    provider, name, args)."""
    e = '<' if le else '>'
    asz = 8 if is64 else 4
    a = 'Q' if is64 else 'I'
    vbase = 0x400000
    ehsz, phsz, shsz = (64, 56, 64) if is64 else (52, 32, 40)
    text_off = ehsz + phsz
    text = b'\x90' * 32 + b'\xc3'
    text = text + b'\0' * (-len(text) % 8)
    data_off = text_off + len(text)
    data = b'\0' * 16
    base_off = data_off + len(data)
    base_data = b'\0' * 8
    base_vaddr = vbase + base_off
    note_off = base_off + len(base_data)
    nb = b''
    for pc_off, sem_off, prov, name, args in notes:
        desc = struct.pack(e + a * 3, vbase + text_off + pc_off, base_vaddr - base_fix,
                           0 if sem_off is None else vbase + data_off + sem_off)
        desc += prov.encode() + b'\0' + name.encode() + b'\0' + args.encode() + b'\0'
        nb += struct.pack(e + 'III', 8, len(desc), 3) + b'stapsdt\0'
        nb += desc + b'\0' * (-len(desc) % 4)
    names = [b'', b'.text', b'.data', b'.stapsdt.base', b'.note.stapsdt', b'.shstrtab']
    shstr = b'\0'.join(names) + b'\0'
    idx = {}
    pos = 0
    for n in names:
        idx[n] = pos
        pos += len(n) + 1
    shstr_off = note_off + len(nb)
    sh_off = shstr_off + len(shstr)
    sh_off += -sh_off % 8
    end = sh_off + shsz * len(names)
    ident = b'\x7fELF' + bytes([2 if is64 else 1, 1 if le else 2, 1, 0]) + b'\0' * 8
    hdr = ident + struct.pack(e + 'HHI' + a * 3 + 'IHHHHHH', 2, 62 if is64 else 3, 1,
                              vbase + text_off, ehsz, sh_off, 0, ehsz, phsz, 1, shsz,
                              len(names), len(names) - 1)
    if is64:
        ph = struct.pack(e + 'IIQQQQQQ', 1, 5, 0, vbase, vbase, end, end, 0x1000)
    else:
        ph = struct.pack(e + 'IIIIIIII', 1, 0, vbase, vbase, end, end, 5, 0x1000)

    def sh(name, typ, flags, addr, off, size, align):
        if is64:
            return struct.pack(e + 'IIQQQQIIQQ', idx[name], typ, flags, addr, off, size, 0, 0,
                               align, 0)
        return struct.pack(e + 'IIIIIIIIII', idx[name], typ, flags, addr, off, size, 0, 0,
                           align, 0)

    shdrs = sh(b'', 0, 0, 0, 0, 0, 0)
    shdrs += sh(b'.text', 1, 6, vbase + text_off, text_off, len(text), 16)
    shdrs += sh(b'.data', 1, 3, vbase + data_off, data_off, len(data), 8)
    shdrs += sh(b'.stapsdt.base' if with_base else b'.shstrtab', 1, 2, base_vaddr, base_off,
                1, 1)
    shdrs += sh(b'.note.stapsdt', 7, 0, 0, note_off, len(nb), 4)
    shdrs += sh(b'.shstrtab', 3, 0, 0, shstr_off, len(shstr), 1)
    img = hdr + ph + text + data + base_data + nb + shstr
    img += b'\0' * (sh_off - len(img)) + shdrs
    assert len(img) == end
    return img


def usdt_seeds():
    notes = [(0, 0, 'mfu', 'step', '-4@%esi 8@%rax'), (8, None, 'mfu', 'phase', ''),
             (16, 2, 'app', 'batch', '8@-16(%rbp)')]
    yield 'elf64_le', elf_image(True, True, notes)
    yield 'elf32_le', elf_image(False, True, notes[:2])
    yield 'elf64_be', elf_image(True, False, notes[:1])
    yield 'elf64_prelinked', elf_image(True, True, notes, base_fix=0x100)
    yield 'elf64_no_base', elf_image(True, True, notes[1:], with_base=False)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus')
    gens = {'fuzz_markers': markers_seeds, 'fuzz_ring': ring_seeds, 'fuzz_perf_record': perf_seeds,
            'fuzz_alias': alias_seeds, 'fuzz_usdt': usdt_seeds}
    for target, gen in gens.items():
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for name, blob in gen():
            if isinstance(blob, str):
                blob = blob.encode()
            assert len(blob) < 4096, (target, name, len(blob))
            with open(os.path.join(d, name), 'wb') as f:
                f.write(blob)


if __name__ == '__main__':
    main()
