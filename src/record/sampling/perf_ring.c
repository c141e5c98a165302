#include "perf_ring_impl.h"
/* hdr.size is a u16: no record is larger, so one bounce buffer fits any */




static int online_cpus(int **out)
{
	char buf[4096];
	struct cpumap m = { 0 };
	int err;
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	} else {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		if (c < 1 || strbuf(buf, sizeof(buf), "0-%ld", c - 1) != 0)
			return -ENOENT;
	}
	err = cpumap_parse(&m, buf);
	if (err)
		goto out;
	if (m.n == 0) {
		err = -ENOENT;
		goto out;
	}
	*out = m.cpu;
	err = m.n;
	m.cpu = NULL;
out:
	cpumap_fini(&m);
	return err;
}

static void ring_init(struct ring *r, int cpu)
{
	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	r->fd = -1;
	r->sw_fd = -1;
}

/* Point @r at a mapping laid out as the kernel does it: the header page, then
 * the data area at data_offset (one page on kernels before 4.1 that leave
 * data_offset/data_size 0). */
static int ring_set_map(struct ring *r, void *map, size_t map_len, size_t page)
{
	struct perf_event_mmap_page *meta = map;
	uint64_t off = meta->data_offset, size = meta->data_size;

	if (off == 0 && size == 0) {
		off = page;
		size = map_len > page ? map_len - page : 0;
	}
	if (size == 0 || (size & (size - 1)) || off < sizeof(*meta) || off > map_len ||
	    size > map_len - off || (off & 7))
		return -EINVAL;
	r->meta = meta;
	r->data = (const unsigned char *)map + off;
	r->size = size;
	return 0;
}

static void set_why_open(char *why, size_t whylen, const char *what, pid_t pid, int cpu, int err)
{
	int level = perf_event_paranoid(NULL);

	if (err == -EACCES || err == -EPERM)
		strbuf(why, whylen,
		       "cannot open %s on pid %d, cpu %d: %s (perf_event_paranoid is %d; "
		       "per-task user-mode sampling needs it <= 2, or run as root or with "
		       "CAP_PERFMON)", what, (int)pid, cpu, strerror(-err), level);
	else if (err == -EINVAL)
		strbuf(why, whylen,
		       "cannot open %s on pid %d, cpu %d: %s (sampling frequency above "
		       "/proc/sys/kernel/perf_event_max_sample_rate, or a kernel older than 4.17)",
		       what, (int)pid, cpu, strerror(-err));
	else if (err == -ESRCH)
		strbuf(why, whylen, "cannot open %s on pid %d: no such process", what, (int)pid);
	else
		strbuf(why, whylen, "cannot open %s on pid %d, cpu %d: %s", what, (int)pid, cpu,
		       strerror(-err));
}

static void base_attr(struct perf_event_attr *a, const struct perf_sampler_opts *o, int user_only)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->sample_type = PERF_RING_SAMPLE_TYPE;
	a->inherit = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = o->enable_on_exec ? 1 : 0;
	a->enable_on_exec = o->enable_on_exec ? 1 : 0;
	a->exclude_kernel = user_only ? 1 : 0;
	a->exclude_callchain_kernel = user_only ? 1 : 0;
	a->exclude_hv = 1;
}

static void main_attr(struct perf_event_attr *a, const struct perf_sampler_opts *o, int user_only,
		      uint64_t ring_bytes)
{
	base_attr(a, o, user_only);
	if (o->freq) {
		a->config = PERF_COUNT_SW_CPU_CLOCK;
		a->freq = 1;
		a->sample_freq = o->freq;
	} else {
		/* side-band only: the dummy event never counts or samples */
		a->config = PERF_COUNT_SW_DUMMY;
	}
	a->context_switch = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	/* wake a poll()er when a quarter of the ring is full */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring_bytes / 4);
}

/* The context-switch sampling event. It fires in the scheduler, so its regs
 * (and ip) are kernel ones; the user part of its callchain is unwound from
 * the task's saved user registers, i.e. from where the thread entered the
 * kernel. For that reason it must include kernel mode: with exclude_kernel
 * the kernel drops every one of its samples (checked on 6.18: the event
 * opens, but neither counts nor samples). */
static void switch_attr(struct perf_event_attr *a, const struct perf_sampler_opts *o)
{
	base_attr(a, o, 0);
	a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a->sample_period = 1;
}

static int open_sw(struct perf_sampler *s, pid_t pid, const struct perf_sampler_opts *o)
{
	int err = 0;

	if (s->user_only) {
		strbuf(s->note, sizeof(s->note),
		       "no context-switch samples: perf_event_paranoid (%d) demands exclude_kernel, "
		       "and the kernel drops switch samples then (they are taken in kernel mode); "
		       "the user location of an off-CPU interval is the thread's last cpu-clock "
		       "sample before it", perf_event_paranoid(NULL));
		return -EACCES;
	}
	switch_attr(&s->sw_attr, o);
	for (int i = 0; i < s->n; i++) {
		struct ring *r = &s->r[i];
		err = perf_event_open_fd(&s->sw_attr, pid, r->cpu, -1);
		if (err < 0)
			goto fail;
		r->sw_fd = err;
		/* same CPU and clock: the kernel accepts the redirection */
		if (ioctl(r->sw_fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) != 0 ||
		    ioctl(r->sw_fd, PERF_EVENT_IOC_ID, &r->sw_id) != 0) {
			err = -errno;
			goto fail;
		}
	}
	s->switch_samples = 1;
	return 0;
fail:
	for (int i = 0; i < s->n; i++) {
		if (s->r[i].sw_fd >= 0)
			close(s->r[i].sw_fd);
		s->r[i].sw_fd = -1;
	}
	strbuf(s->note, sizeof(s->note),
	       "no context-switch samples (%s): the user location of an off-CPU interval is "
	       "the thread's last cpu-clock sample before it", strerror(-err));
	return err;
}

static int extra_add(struct perf_sampler *s, int fd, enum perf_ring_kind kind)
{
	uint64_t id;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
		return -errno;
	if (array_grow(&s->xfd, &s->capx, s->nx + 1, sizeof(*s->xfd)))
		return -ENOMEM;
	int rc = idmap_put(&s->xkind, id, (int)kind);
	if (rc)
		return rc;
	s->xfd[s->nx++] = fd;
	return 0;
}

/* The events of thread @tid on every CPU, into the CPU's ring. A thread
 * that is gone is skipped (0). */
static int open_extra_thread(struct perf_sampler *s, pid_t tid, char *why, size_t whylen)
{
	for (int i = 0; i < s->n; i++) {
		struct ring *r = &s->r[i];
		for (int k = 0; k < 2; k++) {
			if (k == 1 && !s->switch_samples)
				break;
			int fd = perf_event_open_fd(k ? &s->sw_attr : &s->attr, tid, r->cpu, -1);
			if (fd == -ESRCH)
				return 0;
			if (fd < 0) {
				set_why_open(why, whylen, k ? "context-switch sampling" : "cpu-clock sampling", tid,
					     r->cpu, fd);
				return fd;
			}
			int err = ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) != 0 ? -errno : 0;
			if (!err)
				err = extra_add(s, fd, k ? PERF_RING_SWITCH_OUT : PERF_RING_CPU_CLOCK);
			if (err) {
				close(fd);
				strbuf(why, whylen, "cannot send thread %d's samples to the ring of cpu %d: %s",
				       (int)tid, r->cpu, strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

int perf_ring_open_sampling_tids(struct perf_sampler **out, const pid_t *tids, size_t ntids,
				 const struct perf_sampler_opts *o, char *why, size_t whylen)
{
	struct perf_sampler *s = NULL;
	int err;

	*out = NULL;
	if (ntids == 0)
		return -EINVAL;
	err = perf_ring_open_sampling(&s, tids[0], o, why, whylen);
	for (size_t t = 1; !err && t < ntids; t++)
		err = open_extra_thread(s, tids[t], why, whylen);
	if (err) {
		perf_ring_close(s);
		return err;
	}
	*out = s;
	return 0;
}

/* @s's rings, one per CPU of @cpus (@n of them), and the map from a CPU
 * number to its ring. */
static int alloc_rings(struct perf_sampler *s, const int *cpus, int n)
{
	int max_cpu = 0;

	s->r = calloc((size_t)n, sizeof(*s->r));
	s->bounce = malloc(BOUNCE_SIZE);
	if (!s->r || !s->bounce)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		ring_init(&s->r[i], cpus[i]);
		if (cpus[i] > max_cpu)
			max_cpu = cpus[i];
	}
	s->n = n;
	s->ncpu_ring = max_cpu + 1;
	s->cpu_ring = malloc((size_t)s->ncpu_ring * sizeof(*s->cpu_ring));
	if (!s->cpu_ring)
		return -ENOMEM;
	for (int c = 0; c < s->ncpu_ring; c++)
		s->cpu_ring[c] = -1;
	for (int i = 0; i < n; i++)
		s->cpu_ring[cpus[i]] = i;
	return 0;
}

/* The first CPU's event, which settles the attributes: kernel samples
 * first; perf_event_paranoid >= 2 refuses them to the unprivileged
 * (EACCES), and only then are they excluded. */
static int open_first(struct perf_sampler *s, pid_t pid, const struct perf_sampler_opts *o,
		      uint64_t ring_bytes, char *why, size_t whylen)
{
	int err;

	main_attr(&s->attr, o, 0, ring_bytes);
	err = perf_event_open_fd(&s->attr, pid, s->r[0].cpu, -1);
	if (err == -EACCES || err == -EPERM) {
		s->user_only = 1;
		main_attr(&s->attr, o, 1, ring_bytes);
		err = perf_event_open_fd(&s->attr, pid, s->r[0].cpu, -1);
	}
	if (err < 0) {
		set_why_open(why, whylen, o->freq ? "cpu-clock sampling" : "side-band event", pid,
			     s->r[0].cpu, err);
		return err;
	}
	s->r[0].fd = err;
	return 0;
}

/* Ring @r of @s: its event opened (unless it is), its id, its mapping. */
static int open_ring(struct perf_sampler *s, struct ring *r, pid_t pid, const struct perf_sampler_opts *o,
		     size_t page, char *why, size_t whylen)
{
	int err;

	if (r->fd < 0) {
		err = perf_event_open_fd(&s->attr, pid, r->cpu, -1);
		if (err < 0) {
			set_why_open(why, whylen, o->freq ? "cpu-clock sampling" : "side-band event",
				     pid, r->cpu, err);
			return err;
		}
		r->fd = err;
	}
	if (ioctl(r->fd, PERF_EVENT_IOC_ID, &r->id) != 0) {
		err = -errno;
		strbuf(why, whylen, "cannot read a perf event's id: %s", strerror(-err));
		return err;
	}
	r->map_len = (1 + (size_t)o->pages) * page;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED) {
		err = -errno;
		r->map = NULL;
		if (err == -EPERM || err == -ENOMEM)
			strbuf(why, whylen,
			       "cannot map a %u-page perf ring for cpu %d: %s (the rings exceed "
			       "/proc/sys/kernel/perf_event_mlock_kb per CPU plus RLIMIT_MEMLOCK; "
			       "use fewer pages)", o->pages, r->cpu, strerror(-err));
		else
			strbuf(why, whylen, "cannot map the perf ring for cpu %d: %s", r->cpu,
			       strerror(-err));
		return err;
	}
	err = ring_set_map(r, r->map, r->map_len, page);
	if (err)
		strbuf(why, whylen, "the kernel's perf ring for cpu %d has an unexpected layout",
		       r->cpu);
	return err;
}

int perf_ring_open_sampling(struct perf_sampler **out, pid_t pid,
			    const struct perf_sampler_opts *o, char *why, size_t whylen)
{
	struct perf_sampler_opts opts = PERF_SAMPLER_OPTS_DEFAULT;
	struct perf_sampler *s = NULL;
	int *cpus = NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int n, err;

	*out = NULL;
	if (!why)
		whylen = 0;
	if (whylen)
		why[0] = '\0';
	if (o)
		opts = *o;
	if (opts.pages == 0)
		opts.pages = 128;
	if (opts.pages & (opts.pages - 1) || opts.pages > (1u << 20)) {
		strbuf(why, whylen, "a ring of %u pages: the size must be a power of two", opts.pages);
		err = -EINVAL;
		goto out;
	}
	o = &opts;

	n = online_cpus(&cpus);
	if (n < 0) {
		strbuf(why, whylen, "cannot read the online CPUs: %s", strerror(-n));
		err = n;
		goto out;
	}
	s = calloc(1, sizeof(*s));
	err = s ? alloc_rings(s, cpus, n) : -ENOMEM;
	if (err)
		goto out;
	err = open_first(s, pid, o, (uint64_t)o->pages * page, why, whylen);
	for (int i = 0; !err && i < n; i++)
		err = open_ring(s, &s->r[i], pid, o, page, why, whylen);
	if (err)
		goto out;

	if (!o->no_switch_samples)
		open_sw(s, pid, o); /* optional: the note says why it is missing */

	*out = s;
	s = NULL;
	err = 0;
out:
	perf_ring_close(s);
	free(cpus);
	return err;
}

void perf_ring_close(struct perf_sampler *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		struct ring *r = &s->r[i];
		if (r->sw_fd >= 0)
			close(r->sw_fd);
		if (r->map)
			munmap(r->map, r->map_len);
		if (r->fd >= 0)
			close(r->fd);
	}
	for (size_t i = 0; i < s->nx; i++)
		close(s->xfd[i]);
	free(s->xfd);
	idmap_fini(&s->xkind);
	free(s->r);
	free(s->cpu_ring);
	free(s->bounce);
	free(s);
}

static int ioctl_all(struct perf_sampler *s, unsigned long req)
{
	for (int i = 0; i < s->n; i++) {
		if (s->r[i].fd >= 0 && ioctl(s->r[i].fd, req, 0) != 0)
			return -errno;
		if (s->r[i].sw_fd >= 0 && ioctl(s->r[i].sw_fd, req, 0) != 0)
			return -errno;
	}
	for (size_t i = 0; i < s->nx; i++)
		if (ioctl(s->xfd[i], req, 0) != 0)
			return -errno;
	return 0;
}

int perf_ring_enable(struct perf_sampler *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_ENABLE);
}

int perf_ring_disable(struct perf_sampler *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_DISABLE);
}

int perf_ring_open_maps(struct perf_sampler **out, void *const maps[], const int cpus[], int n,
			size_t map_len)
{
	struct perf_sampler *s = NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int err, max_cpu = 0;

	*out = NULL;
	if (n <= 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->r = calloc((size_t)n, sizeof(*s->r));
	s->bounce = malloc(BOUNCE_SIZE);
	if (!s->r || !s->bounce) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (cpus[i] < 0) {
			err = -EINVAL;
			goto out;
		}
		ring_init(&s->r[i], cpus[i]);
		s->n = i + 1;
		err = ring_set_map(&s->r[i], maps[i], map_len, page);
		if (err)
			goto out;
		if (cpus[i] > max_cpu)
			max_cpu = cpus[i];
	}
	s->ncpu_ring = max_cpu + 1;
	s->cpu_ring = malloc((size_t)s->ncpu_ring * sizeof(*s->cpu_ring));
	if (!s->cpu_ring) {
		err = -ENOMEM;
		goto out;
	}
	for (int c = 0; c < s->ncpu_ring; c++)
		s->cpu_ring[c] = -1;
	for (int i = 0; i < n; i++)
		s->cpu_ring[cpus[i]] = i;
	*out = s;
	s = NULL;
	err = 0;
out:
	perf_ring_close(s);
	return err;
}

/* Copy @n bytes at ring offset @off (masked) to @dst, across the end. */
static void ring_copy(const struct ring *r, uint64_t off, void *dst, size_t n)
{
	size_t first = (size_t)(r->size - off);

	if (first >= n) {
		memcpy(dst, r->data + off, n);
	} else {
		memcpy(dst, r->data + off, first);
		memcpy((unsigned char *)dst + first, r->data, n - first);
	}
}

int perf_ring_drain(struct perf_sampler *s, perf_ring_cb cb, void *ctx)
{
	int count = 0, corrupt = 0;

	for (int i = 0; i < s->n; i++) {
		struct ring *r = &s->r[i];
		uint64_t head, tail, mask = r->size - 1;

		/* pairs with the kernel's write barrier before it publishes
		 * data_head: the records below head are complete */
		head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		tail = r->meta->data_tail; /* only we write it */
		while (tail != head) {
			struct perf_event_header h;
			const struct perf_event_header *hdr;
			uint64_t avail = head - tail, off = tail & mask;
			int rc;

			if (avail < sizeof(h) || avail > r->size) {
				corrupt = 1;
				tail = head;
				break;
			}
			ring_copy(r, off, &h, sizeof(h));
			if (h.size < sizeof(h) || h.size > avail || (h.size & 7)) {
				corrupt = 1;
				tail = head;
				break;
			}
			if (off + h.size <= r->size) {
				hdr = (const void *)(r->data + off);
			} else {
				ring_copy(r, off, s->bounce, h.size);
				hdr = (const void *)s->bounce;
			}
			if (hdr->type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
				uint64_t lost;
				memcpy(&lost, (const unsigned char *)hdr + sizeof(h) + 8, 8);
				r->lost += lost;
			} else if (hdr->type == PERF_RECORD_LOST_SAMPLES && h.size >= sizeof(h) + 8) {
				uint64_t lost;
				memcpy(&lost, (const unsigned char *)hdr + sizeof(h), 8);
				r->lost_samples += lost;
			}
			tail += h.size;
			count++;
			rc = cb ? cb(ctx, hdr, hdr + 1, r->cpu) : 0;
			if (rc) {
				/* hand back what was read so far; the rest stays */
				__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
				return rc;
			}
		}
		/* our reads of the records happen before the kernel may reuse
		 * the space */
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	return corrupt ? -EPROTO : count;
}

int perf_ring_count(const struct perf_sampler *s)
{
	return s->n;
}

int perf_ring_cpu(const struct perf_sampler *s, int i)
{
	return i >= 0 && i < s->n ? s->r[i].cpu : -1;
}

uint64_t perf_ring_lost(const struct perf_sampler *s, int i)
{
	uint64_t sum = 0;

	if (i >= 0)
		return i < s->n ? s->r[i].lost : 0;
	for (int k = 0; k < s->n; k++)
		sum += s->r[k].lost;
	return sum;
}

uint64_t perf_ring_lost_samples(const struct perf_sampler *s, int i)
{
	uint64_t sum = 0;

	if (i >= 0)
		return i < s->n ? s->r[i].lost_samples : 0;
	for (int k = 0; k < s->n; k++)
		sum += s->r[k].lost_samples;
	return sum;
}

int perf_ring_user_only(const struct perf_sampler *s)
{
	return s->user_only;
}

int perf_ring_switch_samples(const struct perf_sampler *s)
{
	return s->switch_samples;
}

const char *perf_ring_note(const struct perf_sampler *s)
{
	return s->note;
}

const struct perf_event_attr *perf_ring_attr(const struct perf_sampler *s)
{
	return &s->attr;
}

enum perf_ring_kind perf_ring_id_kind(const struct perf_sampler *s, int cpu, uint64_t id)
{
	const struct ring *r;

	if (cpu < 0 || cpu >= s->ncpu_ring || s->cpu_ring[cpu] < 0)
		return PERF_RING_UNKNOWN;
	r = &s->r[s->cpu_ring[cpu]];
	if (id == r->id && r->fd >= 0)
		return PERF_RING_CPU_CLOCK;
	if (id == r->sw_id && r->sw_fd >= 0)
		return PERF_RING_SWITCH_OUT;
	int kind = idmap_get(&s->xkind, id);
	return kind < 0 ? PERF_RING_UNKNOWN : (enum perf_ring_kind)kind;
}

