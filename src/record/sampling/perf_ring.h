/*
 * perf ring: the target's sampling events, one ring buffer per online CPU,
 * and the parser for the records they deliver.
 *
 * Per CPU N two events are opened on the target (pid, cpu=N, inherit=1):
 *   - cpu-clock sampling at o->freq Hz with a frame-pointer callchain, which
 *     also carries the side-band records (context switches, mmap, comm,
 *     fork/exit); it owns the CPU's ring;
 *   - a context-switches software event sampled at every switch-out
 *     (sample_period=1) with a user callchain: where each off-CPU interval
 *     began. Its output is redirected into the same ring, so one ring holds
 *     one CPU's records in the order the kernel wrote them.
 * Both use the same sample_type (PERF_RING_SAMPLE_TYPE), which starts with
 * PERF_SAMPLE_IDENTIFIER: perf_ring_id_kind() tells which event a sample came
 * from. Rings of different CPUs are not ordered with respect to each other:
 * a consumer that needs one timeline merges them by time.
 * See docs/sampling.md for the attributes and why.
 */
#ifndef MFU_PERF_RING_H
#define MFU_PERF_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The sample_type of every event this module opens (sample_id_all is set). */
#define PERF_RING_SAMPLE_TYPE                                                       \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

struct perf_sampler;

struct perf_sampler_opts {
	unsigned freq;      /* cpu-clock samples per second of CPU time; 0: none (side-band only) */
	unsigned pages;     /* data pages per CPU ring, a power of two; 0: 128 */
	int enable_on_exec; /* open disabled, the kernel enables at the target's exec */
	int no_switch_samples; /* do not open the context-switch sampling event */
};

/* Defaults: 1000 Hz, 128 pages, enabled at once, with switch samples. */
#define PERF_SAMPLER_OPTS_DEFAULT { .freq = 1000, .pages = 128 }

/*
 * Open and map the sampling events on @pid (its threads and descendants
 * created afterwards are followed through inherit). @o may be NULL for the
 * defaults. The events are first tried with kernel samples and callchains;
 * when perf_event_paranoid refuses them, again with exclude_kernel
 * (perf_ring_user_only() says which). @why may be NULL with @whylen 0.
 * Failing to open the context-switch
 * sampling event is not an error: perf_ring_switch_samples() is then 0 and
 * perf_ring_note() says why. Returns 0 or -errno; on failure @why holds the
 * cause and what to do.
 */
int perf_ring_open_sampling(struct perf_sampler **out, pid_t pid,
			    const struct perf_sampler_opts *o, char *why, size_t whylen);

/* The same for a running process's threads @tids (each followed, with
 * inherit, into the threads it creates): the first thread's events own the
 * CPUs' rings, the others' are redirected into them. A thread that is gone
 * by then is skipped. For attaching (mfu-record -p). */
int perf_ring_open_sampling_tids(struct perf_sampler **out, const pid_t *tids, size_t ntids,
				 const struct perf_sampler_opts *o, char *why, size_t whylen);

/* Wrap @n rings the caller has mapped (@maps[i], @map_len bytes each, laid
 * out as the kernel does: a struct perf_event_mmap_page header page, the data
 * area at its data_offset / data_size) for CPUs @cpus[i]. For tests (a
 * synthetic ring) and for rings mapped elsewhere; perf_ring_close() leaves
 * the mappings alone. Returns 0 or -errno. */
int perf_ring_open_maps(struct perf_sampler **out, void *const maps[], const int cpus[], int n,
			size_t map_len);

/* Unmap and close everything. Accepts NULL. */
void perf_ring_close(struct perf_sampler *s);

/* Enable / disable all events (ioctl on each). Returns 0 or -errno. */
int perf_ring_enable(struct perf_sampler *s);
int perf_ring_disable(struct perf_sampler *s);

/* Called once per record. @hdr points at the record (header included), @rec
 * at its body (hdr + 1), hdr->size - sizeof(*hdr) bytes, 8-byte aligned.
 * Both are valid only during the call (a record that wraps around the ring's
 * end is passed from a bounce buffer). @cpu is the ring's CPU number. A
 * non-zero return stops the drain (the record counts as consumed). */
typedef int (*perf_ring_cb)(void *ctx, const struct perf_event_header *hdr, const void *rec,
			    int cpu);

/*
 * Pass every complete record of every CPU ring to @cb and hand the space back
 * to the kernel. Allocation-free. PERF_RECORD_LOST and LOST_SAMPLES are also
 * summed per ring (perf_ring_lost()). @cb may be NULL (records are only
 * counted and consumed). Returns the number of records passed,
 * @cb's non-zero return value, or -EPROTO for a corrupt ring (that ring's
 * unread data is then dropped).
 */
int perf_ring_drain(struct perf_sampler *s, perf_ring_cb cb, void *ctx);

/* Number of rings (online CPUs at open). */
int perf_ring_count(const struct perf_sampler *s);
/* CPU number of ring @i. */
int perf_ring_cpu(const struct perf_sampler *s, int i);
/* Records the kernel dropped (sum of PERF_RECORD_LOST) in ring @i, or in all
 * rings for @i = -1; likewise for PERF_RECORD_LOST_SAMPLES. */
uint64_t perf_ring_lost(const struct perf_sampler *s, int i);
uint64_t perf_ring_lost_samples(const struct perf_sampler *s, int i);
/* 1 when the events were opened with exclude_kernel (no kernel samples or
 * kernel callchains), 0 when kernel mode is included. */
int perf_ring_user_only(const struct perf_sampler *s);
/* 1 when the context-switch sampling event is open. */
int perf_ring_switch_samples(const struct perf_sampler *s);
/* Degradations worth telling the user ("" if none). */
const char *perf_ring_note(const struct perf_sampler *s);
/* The cpu-clock event's attributes on ring 0 (for the database). */
const struct perf_event_attr *perf_ring_attr(const struct perf_sampler *s);

enum perf_ring_kind {
	PERF_RING_UNKNOWN = 0,
	PERF_RING_CPU_CLOCK,  /* a cpu-clock sample: the thread was on CPU at ip */
	PERF_RING_SWITCH_OUT, /* a context-switch sample: the thread left the CPU */
};

/* Which event sampled id @id (struct perf_rec.id) in the ring of CPU @cpu. */
enum perf_ring_kind perf_ring_id_kind(const struct perf_sampler *s, int cpu, uint64_t id);

/* A callchain inside a record. ips[] points into the record (valid as long as
 * the record is). The PERF_CONTEXT_* markers are kept in ips[]; kernel[] and
 * user[] are the address runs after PERF_CONTEXT_KERNEL and
 * PERF_CONTEXT_USER, markers excluded (NULL, 0 when absent). */
struct perf_callchain {
	const uint64_t *ips;
	uint64_t nr;
	const uint64_t *kernel;
	uint64_t nkernel;
	const uint64_t *user;
	uint64_t nuser;
};

/* Which of the sample_id fields of struct perf_rec are set. */
#define PERF_REC_HAS_TID  (1u << 0)
#define PERF_REC_HAS_TIME (1u << 1)
#define PERF_REC_HAS_ID   (1u << 2)
#define PERF_REC_HAS_CPU  (1u << 3)
#define PERF_REC_HAS_STREAM_ID (1u << 4)

/* A decoded record. Strings and callchains point into the record. */
struct perf_rec {
	uint32_t type; /* PERF_RECORD_* */
	uint16_t misc;
	unsigned has;  /* PERF_REC_HAS_*: the sample's fields or the sample_id */
	uint32_t pid, tid;
	uint64_t time; /* ns, on the event's clock (CLOCK_MONOTONIC here) */
	uint64_t id, stream_id;
	uint32_t cpu;
	union {
		struct {
			uint64_t ip, addr, period;
			int user_mode; /* misc says the ip is in user mode */
			struct perf_callchain callchain;
		} sample;
		struct {
			int out;     /* 1: switch-out, 0: switch-in */
			int preempt; /* switch-out while runnable (preempted) */
			uint32_t next_prev_pid, next_prev_tid; /* SWITCH_CPU_WIDE only */
		} sw;
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			int has_build_id;
			uint32_t maj, min;           /* MMAP2 without build id */
			uint64_t ino, ino_generation;
			uint8_t build_id_size;       /* MMAP2 with build id */
			uint8_t build_id[20];
			uint32_t prot, flags;        /* MMAP2 only */
			const char *filename;
		} mmap;
		struct {
			uint32_t pid, tid;
			int exec;
			const char *comm;
		} comm;
		struct {
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task; /* FORK, EXIT */
		struct {
			uint64_t id, lost;
		} lost; /* LOST (id = 0 for LOST_SAMPLES) */
		struct {
			uint64_t time, id, stream_id;
		} throttle; /* THROTTLE, UNTHROTTLE */
	};
};

/*
 * Decode one record: @data is the body after @hdr, @len the bytes readable at
 * @data (hdr->size - sizeof(*hdr) must fit in it), 8-byte aligned.
 * @sample_type and @sample_id_all are the producing event's attributes.
 * Pure and bounds-checked: never reads past @len. Handles SAMPLE (the fields
 * up to and including CALLCHAIN; later ones are ignored), SWITCH,
 * SWITCH_CPU_WIDE, MMAP, MMAP2, COMM, FORK, EXIT, LOST, LOST_SAMPLES,
 * THROTTLE, UNTHROTTLE. Returns 0, -EPROTO for a malformed record, -EINVAL
 * for misaligned @data, -EOPNOTSUPP for another record type or a sample_type
 * it cannot lay out (PERF_SAMPLE_READ); out->type and out->misc are set even
 * then.
 */
int perf_record_parse(const struct perf_event_header *hdr, const void *data, size_t len,
		      uint64_t sample_type, int sample_id_all, struct perf_rec *out);

#endif
