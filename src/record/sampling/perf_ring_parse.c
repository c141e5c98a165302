/* Decoding perf ring records (perf_ring_impl.h). */
#include "perf_ring_impl.h"

/* ---- parsing ---- */

/* A bounds-checked cursor: off <= len always. */
struct cur {
	const unsigned char *p;
	size_t len, off;
};

static int get_u64(struct cur *c, uint64_t *v)
{
	if (c->len - c->off < 8)
		return -EPROTO;
	memcpy(v, c->p + c->off, 8);
	c->off += 8;
	return 0;
}

static int get_u32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	if (c->len - c->off < 8)
		return -EPROTO;
	memcpy(a, c->p + c->off, 4);
	memcpy(b, c->p + c->off + 4, 4);
	c->off += 8;
	return 0;
}

static size_t sample_id_size(uint64_t st)
{
	size_t n = 0;

	n += (st & PERF_SAMPLE_TID) ? 8 : 0;
	n += (st & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (st & PERF_SAMPLE_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

/* The sample_id trailer: { pid, tid } { time } { id } { stream_id } { cpu,
 * res } { id (identifier) }, each when its bit is set. */
static int parse_sample_id(struct cur *c, uint64_t st, struct perf_rec *out)
{
	uint32_t res;
	int err = 0;

	if ((st & PERF_SAMPLE_TID) && !(err = get_u32x2(c, &out->pid, &out->tid)))
		out->has |= PERF_REC_HAS_TID;
	if (!err && (st & PERF_SAMPLE_TIME) && !(err = get_u64(c, &out->time)))
		out->has |= PERF_REC_HAS_TIME;
	if (!err && (st & PERF_SAMPLE_ID) && !(err = get_u64(c, &out->id)))
		out->has |= PERF_REC_HAS_ID;
	if (!err && (st & PERF_SAMPLE_STREAM_ID) && !(err = get_u64(c, &out->stream_id)))
		out->has |= PERF_REC_HAS_STREAM_ID;
	if (!err && (st & PERF_SAMPLE_CPU) && !(err = get_u32x2(c, &out->cpu, &res)))
		out->has |= PERF_REC_HAS_CPU;
	if (!err && (st & PERF_SAMPLE_IDENTIFIER) && !(err = get_u64(c, &out->id)))
		out->has |= PERF_REC_HAS_ID;
	return err;
}

static void split_callchain(struct perf_callchain *cc)
{
	const uint64_t **run = NULL;
	uint64_t *nrun = NULL;

	for (uint64_t i = 0; i < cc->nr; i++) {
		uint64_t ip = cc->ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			run = NULL;
			nrun = NULL;
			/* only the first run of each context: a second one
			 * (not produced by the kernel) would not be contiguous */
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL && !cc->kernel) {
				run = &cc->kernel;
				nrun = &cc->nkernel;
			} else if (ip == (uint64_t)PERF_CONTEXT_USER && !cc->user) {
				run = &cc->user;
				nrun = &cc->nuser;
			}
			if (run)
				*run = &cc->ips[i + 1];
			continue;
		}
		if (nrun)
			(*nrun)++;
	}
	if (cc->kernel && cc->nkernel == 0)
		cc->kernel = NULL;
	if (cc->user && cc->nuser == 0)
		cc->user = NULL;
}

static int parse_sample(struct cur *c, uint64_t st, struct perf_rec *out)
{
	uint32_t res;
	uint64_t nr;
	int err = 0;

	/* a PERF_SAMPLE_READ block's layout depends on read_format */
	if (st & PERF_SAMPLE_READ)
		return -EOPNOTSUPP;
	if ((st & PERF_SAMPLE_IDENTIFIER) && !(err = get_u64(c, &out->id)))
		out->has |= PERF_REC_HAS_ID;
	if (!err && (st & PERF_SAMPLE_IP))
		err = get_u64(c, &out->sample.ip);
	if (!err && (st & PERF_SAMPLE_TID) && !(err = get_u32x2(c, &out->pid, &out->tid)))
		out->has |= PERF_REC_HAS_TID;
	if (!err && (st & PERF_SAMPLE_TIME) && !(err = get_u64(c, &out->time)))
		out->has |= PERF_REC_HAS_TIME;
	if (!err && (st & PERF_SAMPLE_ADDR))
		err = get_u64(c, &out->sample.addr);
	if (!err && (st & PERF_SAMPLE_ID) && !(err = get_u64(c, &out->id)))
		out->has |= PERF_REC_HAS_ID;
	if (!err && (st & PERF_SAMPLE_STREAM_ID) && !(err = get_u64(c, &out->stream_id)))
		out->has |= PERF_REC_HAS_STREAM_ID;
	if (!err && (st & PERF_SAMPLE_CPU) && !(err = get_u32x2(c, &out->cpu, &res)))
		out->has |= PERF_REC_HAS_CPU;
	if (!err && (st & PERF_SAMPLE_PERIOD))
		err = get_u64(c, &out->sample.period);
	if (!err && (st & PERF_SAMPLE_CALLCHAIN)) {
		err = get_u64(c, &nr);
		/* compare counts, not nr * 8, which can wrap */
		if (!err && nr > (c->len - c->off) / 8)
			err = -EPROTO;
		if (!err) {
			out->sample.callchain.nr = nr;
			out->sample.callchain.ips = (const uint64_t *)(const void *)(c->p + c->off);
			c->off += (size_t)nr * 8;
			split_callchain(&out->sample.callchain);
		}
	}
	out->sample.user_mode = (out->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
	return err;
}

/* A NUL-terminated string at c->off that ends before @end. */
static int get_string(struct cur *c, size_t end, const char **s)
{
	const void *nul;

	if (end <= c->off)
		return -EPROTO;
	nul = memchr(c->p + c->off, '\0', end - c->off);
	if (!nul)
		return -EPROTO;
	*s = (const char *)(c->p + c->off);
	c->off = end;
	return 0;
}

/* A PERF_RECORD_MMAP or MMAP2's fields, the file name last. */
static int parse_mmap(struct cur *c, const struct perf_event_header *hdr, struct perf_rec *out)
{
	uint32_t maj_or_bid[2];
	int err;

	if ((err = get_u32x2(c, &out->mmap.pid, &out->mmap.tid)) ||
	    (err = get_u64(c, &out->mmap.addr)) || (err = get_u64(c, &out->mmap.len)) ||
	    (err = get_u64(c, &out->mmap.pgoff)))
		return err;
	if (hdr->type == PERF_RECORD_MMAP2) {
		/* a 24-byte union: maj, min, ino, ino_generation, or
		 * build_id_size, 3 reserved bytes, build_id[20] */
		if (c->len - c->off < 24)
			return -EPROTO;
		if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			out->mmap.has_build_id = 1;
			out->mmap.build_id_size = c->p[c->off];
			if (out->mmap.build_id_size > sizeof(out->mmap.build_id))
				return -EPROTO;
			memcpy(out->mmap.build_id, c->p + c->off + 4, sizeof(out->mmap.build_id));
			c->off += 24;
		} else {
			if ((err = get_u32x2(c, &maj_or_bid[0], &maj_or_bid[1])) ||
			    (err = get_u64(c, &out->mmap.ino)) ||
			    (err = get_u64(c, &out->mmap.ino_generation)))
				return err;
			out->mmap.maj = maj_or_bid[0];
			out->mmap.min = maj_or_bid[1];
		}
		if ((err = get_u32x2(c, &out->mmap.prot, &out->mmap.flags)))
			return err;
	}
	return get_string(c, c->len, &out->mmap.filename);
}

/* The fields of a record other than a sample, before its trailer. */
static int parse_body(struct cur *c, const struct perf_event_header *hdr, struct perf_rec *out)
{
	int err;

	switch (hdr->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		out->sw.out = !!(hdr->misc & PERF_RECORD_MISC_SWITCH_OUT);
		out->sw.preempt = out->sw.out && (hdr->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		if (hdr->type == PERF_RECORD_SWITCH_CPU_WIDE)
			return get_u32x2(c, &out->sw.next_prev_pid, &out->sw.next_prev_tid);
		return 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return parse_mmap(c, hdr, out);
	case PERF_RECORD_COMM:
		if ((err = get_u32x2(c, &out->comm.pid, &out->comm.tid)))
			return err;
		out->comm.exec = !!(hdr->misc & PERF_RECORD_MISC_COMM_EXEC);
		return get_string(c, c->len, &out->comm.comm);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if ((err = get_u32x2(c, &out->task.pid, &out->task.ppid)) ||
		    (err = get_u32x2(c, &out->task.tid, &out->task.ptid)))
			return err;
		return get_u64(c, &out->task.time);
	case PERF_RECORD_LOST:
		if ((err = get_u64(c, &out->lost.id)))
			return err;
		return get_u64(c, &out->lost.lost);
	case PERF_RECORD_LOST_SAMPLES:
		return get_u64(c, &out->lost.lost);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if ((err = get_u64(c, &out->throttle.time)) || (err = get_u64(c, &out->throttle.id)))
			return err;
		return get_u64(c, &out->throttle.stream_id);
	}
	return -EOPNOTSUPP;
}

int perf_record_parse(const struct perf_event_header *hdr, const void *data, size_t len,
		      uint64_t sample_type, int sample_id_all, struct perf_rec *out)
{
	struct cur c;
	size_t idsz, body_end;
	int err;

	memset(out, 0, sizeof(*out));
	out->type = hdr->type;
	out->misc = hdr->misc;
	if (hdr->size < sizeof(*hdr) || hdr->size - sizeof(*hdr) > len)
		return -EPROTO;
	if ((uintptr_t)data & 7)
		return -EINVAL;
	c.p = data;
	c.len = hdr->size - sizeof(*hdr);
	c.off = 0;

	if (hdr->type == PERF_RECORD_SAMPLE)
		return parse_sample(&c, sample_type, out);

	/* Every other record ends with the sample_id trailer (when
	 * sample_id_all), of a size fixed by sample_type: read it from the end
	 * and the record's own fields from the front, which must stop before
	 * it (this also finds where a padded string ends). */
	idsz = sample_id_all ? sample_id_size(sample_type) : 0;
	switch (hdr->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (c.len < idsz)
		return -EPROTO;
	body_end = c.len - idsz;
	if (idsz) {
		struct cur t = { .p = c.p, .len = c.len, .off = body_end };
		err = parse_sample_id(&t, sample_type, out);
		if (err)
			return err;
	}
	c.len = body_end;
	return parse_body(&c, hdr, out);
}
