/*
 * The marker ring: a shared-memory ring of fixed-size marker records, written
 * by libmfu inside the target (many threads, possibly many processes) and
 * drained by mfu-record.
 *
 * It is a bounded multi-producer queue (Vyukov's design): each slot carries a
 * sequence number; a producer claims position p with one compare-and-swap on
 * `head` when slot p's sequence says it is free, writes the record, then
 * publishes it by making the slot's sequence p + 1. The consumer reads
 * the slot at its position t when its sequence is t + 1, then frees it by
 * making it t + nslots (it keeps t to itself, and writes it to `tail` only
 * for others to see: struct mring_consumer below). The sequence is stored
 * less the slot's index (p - (p & (nslots - 1))): a slot free for the first
 * lap holds 0, so a ring in zeroed memory needs no slot written to be ready,
 * and none of its pages is touched (allocated) before a record goes there. A producer never waits: if the ring is full it counts the
 * record in `lost` and returns; the thread's next published record carries
 * MRING_F_AFTER_LOSS, so the recorder knows which thread lost records where
 * (docs/reliability.md). A producer killed between claim and publish
 * leaves a hole that the consumer counts as lost once the target has gone;
 * the slot names the claiming thread (mring_consumer_skip_hole()).
 *
 * Everything here crosses a process boundary: the header and record carry a
 * magic, a version and their sizes, and tests/unit/test_marker_ring.c pins
 * the layout.
 */
#ifndef MFU_MARKER_RING_H
#define MFU_MARKER_RING_H

#include <stdint.h>
#include <stddef.h>

#define MRING_MAGIC 0x676e69725566d6dULL /* "mfUring" */
#define MRING_VERSION 6 /* 6: seq stored less the slot index; 5: lib[6], calls whose FLOPs are unknown; 4: lib_snap, lib[] (library-call FLOPs); 3: lost, MRING_LOSS */
#define MRING_MAX_GROUPS 8   /* counter groups read at each boundary */
#define MRING_DATA_WORDS 50  /* u64 words for all groups' readings */
#define MRING_NAME_MAX 64    /* bytes in a record's name, with the NUL */
#define MRING_LIB_WORDS 7    /* library-call counts: calls, FLOPs per precision, calls of unknown FLOPs (libflops.h) */

/* Environment variables through which mfu-record hands its resources to the
 * target: the marker ring's memfd and the fds of the counter group leaders,
 * "G0,G1,...": group 0 holds the software events; groups 1.. hold hardware
 * events, in groups small enough for the PMU to schedule each one whole
 * (the kernel time-shares groups that do not fit together: multiplexing). */
#define MFU_ENV_RING_FD "MFU_RING_FD"
#define MFU_ENV_GROUP_FD "MFU_GROUP_FD"
/* What those fds are, so that libmfu can tell its own from a descriptor a
 * launcher closed or reused for another file (the number alone proves
 * nothing): the ring memfd's "DEV:INO", and each group leader's perf event
 * id (PERF_EVENT_IOC_ID), "ID0,ID1,..." in the order of MFU_GROUP_FD ("-"
 * where that has none). */
#define MFU_ENV_RING_ID "MFU_RING_ID"
#define MFU_ENV_GROUP_ID "MFU_GROUP_ID"

enum mring_kind {
	MRING_STEP_BEGIN = 1,
	MRING_STEP_END = 2,
	MRING_STEP_MODEL = 3,
	MRING_PHASE_BEGIN = 4,
	MRING_PHASE_END = 5,
	MRING_PHASE_MODEL = 6,
	/* No marker: a thread that dropped records and published nothing since
	 * says so when it exits (the record carries MRING_F_AFTER_LOSS). */
	MRING_LOSS = 7,
};

/* record flags */
#define MRING_F_NAME_TRUNCATED 0x1 /* the name was longer than the field */
#define MRING_F_NO_COUNTERS 0x2    /* a counter group could not be read */
#define MRING_F_NULL_NAME 0x4      /* a NULL name was passed */
/* This thread dropped records (the ring was full) since its previous
 * published one: @lost of them, right before this record. What it dropped
 * is said by the two flags after it; the recorder cannot pair this thread's
 * boundaries (nor its process's steps) across the gap. */
#define MRING_F_AFTER_LOSS 0x8
#define MRING_F_LOST_STEP 0x10     /* among them a step begin, end or model */
#define MRING_F_LOST_PHASE 0x20    /* among them a phase begin, end or model */
/* lib[] holds the process's library-call counts (the counting library is
 * loaded in it); without it they are unknown, not 0. */
#define MRING_F_LIB 0x40
/* The boundary carries no counter reading by design (ngroups 0): the
 * markers of a process mfu-record joined with -p, which cannot read the
 * counters the recorder opened on its threads. The recorder interpolates
 * the counts from its own readings, as for a probe's boundary. */
#define MRING_F_UNREAD 0x80

/* One marker record: 576 bytes. data[] holds one reading per counter group,
 * back to back, each laid out exactly as perf's read() of a
 * PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
 * PERF_FORMAT_TOTAL_TIME_RUNNING group: { nr, time_enabled, time_running,
 * values[nr] }. Group g starts at word mring_header.group_offset[g], so the
 * marker reads each group straight into the slot. A group that could not be
 * read has nr = 0 there. */
struct mring_record {
	uint64_t seq;          /* ring sequence less the slot's index (written
				* last, release) */
	uint8_t kind;          /* enum mring_kind */
	uint8_t flags;         /* MRING_F_* */
	uint8_t name_len;      /* bytes of name (without NUL) */
	uint8_t ngroups;       /* groups read into data[] */
	uint32_t lost;         /* with MRING_F_AFTER_LOSS: records this thread
				* dropped right before this one, else 0 */
	int32_t pid;
	int32_t tid;
	uint64_t time_ns;      /* CLOCK_MONOTONIC: before the reads for a begin,
				* after them otherwise (the interval holds both) */
	double a;              /* model FLOPs for *_MODEL */
	double b;              /* model bytes for *_MODEL */
	uint64_t data[MRING_DATA_WORDS];
	char name[MRING_NAME_MAX]; /* phase name, NUL-terminated */
	/* With MRING_F_LIB: the process's library-call counters as they were
	 * at this boundary (they only grow): calls, then FLOPs (int8: ops) of
	 * fp64, fp32, bf16, fp16 and int8, then the calls among them whose
	 * FLOPs are unknown (libflops.h, LIBFLOPS_W_*). A step begin or end
	 * also copies the per-function counters into a snapshot: lib_snap is
	 * its id (0: none). */
	uint64_t lib_snap;
	uint64_t lib[MRING_LIB_WORDS];
};

/* The ring's header, at offset 0 of the shared memory; the slots follow at
 * offset header_size. head and tail sit on their own cache lines. */
struct mring_header {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size; /* sizeof(struct mring_header) */
	uint32_t record_size; /* sizeof(struct mring_record) */
	uint32_t ngroups;     /* counter groups (0..MRING_MAX_GROUPS) */
	uint64_t nslots;      /* a power of two */
	uint64_t lost;        /* records producers dropped because the ring was full */
	uint64_t writers;     /* producers that attached (processes) */
	uint8_t group_nr[MRING_MAX_GROUPS];     /* values in each group */
	uint8_t group_offset[MRING_MAX_GROUPS]; /* first word of each group in data[] */
	uint64_t head;        /* next position to claim (producers) */
	uint8_t pad2[56];
	uint64_t tail;        /* next position to read (consumer) */
	uint8_t pad3[56];
};

/* Bytes of shared memory for a ring of @nslots records. */
size_t mring_size(uint64_t nslots);

/* Initialise a ring in @mem (mring_size(nslots) bytes, zeroed) for
 * @ngroups counter groups of @group_nr[g] values each: the header only
 * (the slots of zeroed memory are free). Returns 0, or -E2BIG when the
 * groups' readings do not fit in a record. */
int mring_init(void *mem, uint64_t nslots, uint32_t ngroups, const uint8_t *group_nr);

/* Make every slot of a used ring of @nslots free again (before
 * mring_init() on memory that held a ring). Touches every slot. */
void mring_clear(void *mem, uint64_t nslots);

/* Words of data[] that @ngroups groups of @group_nr values need. */
unsigned mring_data_words(uint32_t ngroups, const uint8_t *group_nr);

/* Check that @mem (of @size bytes) holds a ring this code understands.
 * Returns 0 or -EPROTO / -EINVAL. */
int mring_check(const void *mem, size_t size);

/* Producer: claim a slot. Returns the record to fill, or NULL when the ring
 * is full (the loss is already counted). Fill everything but seq, then call
 * mring_publish() with the same record. */
struct mring_record *mring_claim(void *mem, uint64_t *pos);
/* Producer: like mring_claim(), but a full ring is no loss (for MRING_LOSS
 * records, which are no marker: stored + lost = marked stays exact). */
struct mring_record *mring_claim_uncounted(void *mem, uint64_t *pos);
void mring_publish(const void *mem, struct mring_record *r, uint64_t pos);

/* A producer whose geometry (where the slots are, how many) lives in its
 * own memory, taken once from a ring it checked: a header rewritten later
 * (by a buggy or hostile writer of the shared memory) can make it lose
 * records, never write outside the @size bytes it was given. libmfu
 * produces through this. */
struct mring_producer {
	struct mring_header *h;
	struct mring_record *slots;
	uint64_t mask;
	uint64_t ready; /* slots [0, ready) mapped here (prefault) */
};

/* Check the ring at @mem (@size bytes: mring_check()) and take its
 * geometry. Returns 0 or -EPROTO / -EINVAL. */
int mring_producer_init(struct mring_producer *p, void *mem, size_t size);
/* As mring_claim() and mring_claim_uncounted(), through @p's geometry. */
struct mring_record *mring_producer_claim(const struct mring_producer *p, uint64_t *pos);
struct mring_record *mring_producer_claim_uncounted(const struct mring_producer *p, uint64_t *pos);
void mring_producer_publish(const struct mring_producer *p, struct mring_record *r, uint64_t pos);

/*
 * Page faults out of the markers. A shared page's first write faults (and
 * the first one anywhere allocates it); inside a marker's counter read that
 * would land in the interval being measured. Mapping the whole ring
 * writable at the start costs its every page (75 MiB at the default size:
 * about 60 ms of CPU, for a program that may mark a hundred times). So a
 * producer maps the first MRING_PREFAULT_FIRST slots at the start, and
 * after each publish, when its position comes within MRING_PREFAULT_CHUNK
 * slots of what is mapped, the next MRING_PREFAULT_CHUNK (one thread does
 * it, with one madvise(MADV_POPULATE_READ), which maps a shared memfd's
 * pages writable; after the record and its counts were taken). Once the
 * positions went round the ring, nothing.
 */
#define MRING_PREFAULT_FIRST 4096u /* 2.3 MB of records */
#define MRING_PREFAULT_CHUNK 2048u
void mring_producer_prefault_start(struct mring_producer *p);
void mring_producer_prefault_more(struct mring_producer *p, uint64_t pos);
static inline void mring_producer_prefault(struct mring_producer *p, uint64_t pos)
{
	uint64_t ready = __atomic_load_n(&p->ready, __ATOMIC_RELAXED);

	if (ready <= p->mask && pos + MRING_PREFAULT_CHUNK >= ready)
		mring_producer_prefault_more(p, pos);
}

/*
 * The consumer (mfu-record). The target can write every byte of the shared
 * memory, header included, at any time: the consumer trusts nothing there
 * but the bytes of one record at a time, and those only as a copy it then
 * checks. Its geometry (where the slots are, how many, the record size)
 * and its read position live in struct mring_consumer, in the recorder's
 * own memory, set when the recorder created the ring; every slot address
 * is the private position masked by the private slot count. The header's
 * tail is written for the producers' sake and never read back.
 *
 * A header that changed (magic, version, sizes, slot count, counter
 * groups), a head that cannot be (behind the private tail, or more than a
 * ring ahead of it, or short of a record published there) or a lost count
 * that went down is tampering: the consumer says why once and reads
 * nothing more (mring_consumer_read() returns -EPROTO from then on). It
 * looks when a read finds nothing published (the end of each drain) and
 * every MRING_CHECK_EVERY records in between.
 */
#define MRING_CHECK_EVERY 4096 /* a power of two */
struct mring_consumer {
	struct mring_header *h;      /* the shared header: never trusted */
	struct mring_record *slots;  /* slot 0, from the private geometry */
	uint64_t nslots, mask;       /* private: as created */
	uint64_t tail;               /* private: the next position to read */
	uint64_t head_seen;          /* the latest plausible head read (it only grows) */
	uint64_t lost_seen;          /* the header's lost count last read */
	uint64_t holes;              /* unpublished slots skipped (lost) */
	uint64_t populated;          /* slots whose pages the recorder populated */
	struct mring_header ref;     /* the header's fixed fields as created */
	int tampered;
	char why[200];               /* what was tampered with, once it was */
};

/* Start consuming the ring of @nslots slots that the recorder itself just
 * initialised at @mem (@size bytes mapped), before any other process could
 * write it: the geometry and the header's fixed fields are taken from it
 * then, and checked against @nslots and @size. Returns 0, or -EINVAL. */
int mring_consumer_init(struct mring_consumer *c, void *mem, size_t size, uint64_t nslots);

/* Allocate and map (MADV_POPULATE_WRITE, in the recorder's mapping) the
 * ring's pages for the slots up to MRING_POPULATE_AHEAD past the latest
 * head seen, if not done yet. A page's first use costs most in allocating
 * and zeroing it (about 1-1.5 us here, against 0.3-0.45 us to map it once
 * it exists): done here, on the recorder's CPU, the producers' prefault
 * only maps. Called when the ring is made and after each drain; errors are
 * ignored (the producers then allocate as they map). */
#define MRING_POPULATE_AHEAD (2 * MRING_PREFAULT_FIRST)
void mring_consumer_populate_ahead(struct mring_consumer *c);

/* Copy the next published record into @out and free its slot. Returns 1,
 * 0 when none is published at the read position (yet), or -EPROTO once the
 * ring was tampered with (c->why says how; nothing is read any more). */
int mring_consumer_read(struct mring_consumer *c, struct mring_record *out);

/* Check the header against what the consumer knows, as reading does now
 * and then: 0, or -EPROTO (tampered, c->why). */
int mring_consumer_check(struct mring_consumer *c);

/* Once no producer should be running: skip the slot at the read position
 * if it was claimed and never published (a writer killed inside a marker),
 * counting it lost. Writes who claimed it to @pid and @tid (a producer
 * writes them first thing after its claim, the consumer clears them when
 * it frees a slot; 0 and 0 when unknown). Returns 1 if a slot was skipped,
 * 0 if there is none to skip (nothing pending, it was published after all,
 * or a whole ring of holes was skipped already), -EPROTO if tampered. */
int mring_consumer_skip_hole(struct mring_consumer *c, int32_t *pid, int32_t *tid);

/* Records lost: those the producers counted (read from the header, which
 * only grows; its last value before any tampering) plus the holes skipped.
 * At most INT64_MAX. */
uint64_t mring_consumer_lost(struct mring_consumer *c);

#endif
