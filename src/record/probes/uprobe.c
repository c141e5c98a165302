/* Uprobe perf events: opening, rings, hits (probes_impl.h). */
#include "probes_impl.h"
#include "record/counters/perf_event.h"
#include "record/counters/pmu.h"

/* ==== opening ==== */

/* The first bit of the uprobe PMU's format/ field @name, a field of
 * config ("config:N" or "config:A-B"). */
static int format_shift(const char *name, int *shift)
{
	struct pmu_format f;
	int err = pmu_format(PMU_SYSFS_ROOT, "uprobe", name, &f);

	if (err)
		return err;
	if (f.config != 0)
		return -EINVAL;
	*shift = __builtin_ctzll(f.mask);
	return 0;
}

int probes_open(const struct probe_site *site, pid_t tid, int retprobe, int *fd, char *why,
		size_t whylen)
{
	struct perf_event_attr attr;
	int type, err, ret_shift = 0, ref_shift = 0;
	long r;

	*fd = -1;
	err = pmu_type(PMU_SYSFS_ROOT, "uprobe", &type);
	if (err) {
		probes_why(why, whylen, "this kernel has no uprobe PMU (" UPROBE_PMU "/type: %s); "
			"it needs CONFIG_UPROBE_EVENTS", strerror(-err));
		return -ENODEV;
	}
	if (retprobe && format_shift("retprobe", &ret_shift)) {
		probes_why(why, whylen, "this kernel's uprobe PMU has no retprobe format bit: cannot "
			"probe function returns (%s)", site->name);
		return -EOPNOTSUPP;
	}
	/* semaphores through ref_ctr_offset came with Linux 4.20 */
	if (site->ref_ctr_offset && format_shift("ref_ctr_offset", &ref_shift)) {
		probes_why(why, whylen, "USDT probe %s is guarded by a semaphore and this kernel "
			"cannot set it (no uprobe ref_ctr_offset, Linux < 4.20)", site->name);
		return -EOPNOTSUPP;
	}
	if (site->ref_ctr_offset && ref_shift + 64 - __builtin_clzll(site->ref_ctr_offset) > 64) {
		probes_why(why, whylen, "semaphore offset 0x%" PRIx64 " of %s does not fit the "
			"ref_ctr_offset field", site->ref_ctr_offset, site->name);
		return -EOVERFLOW;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config = (retprobe ? 1ull << ret_shift : 0) |
		      (site->ref_ctr_offset ? site->ref_ctr_offset << ref_shift : 0);
	/* the kernel copies the path during the call; an inherited copy
	 * would re-read this pointer in the child: inherit stays 0 */
	attr.config1 = (uint64_t)(uintptr_t)site->path;
	attr.config2 = site->offset;
	attr.sample_period = 1;
	attr.sample_type = PROBES_SAMPLE_TYPE;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.inherit = 0;
	r = perf_event_open_fd(&attr, tid, -1, -1);
	if (r >= 0) {
		*fd = (int)r;
		return 0;
	}
	err = (int)r;
	switch (err) {
	case -EACCES:
	case -EPERM:
		probes_why(why, whylen, "uprobes need CAP_SYS_ADMIN (run mfu-record as root, or with "
			"sudo)");
		return -EPERM;
	case -ESRCH:
		probes_why(why, whylen, "cannot probe %s in thread %d: no such thread", site->name,
			(int)tid);
		break;
	case -ENOENT:
		probes_why(why, whylen, "cannot probe %s: %s: no such file", site->name, site->path);
		break;
	case -EINVAL:
		probes_why(why, whylen, "cannot place a uprobe on %s at %s+0x%" PRIx64 ": %s (the "
			"offset is past the end of the file, or another uprobe there uses a "
			"different semaphore offset)", site->name, site->path, site->offset,
			strerror(-err));
		break;
	default:
		probes_why(why, whylen, "cannot place a uprobe on %s at %s+0x%" PRIx64 " for thread "
			"%d: %s", site->name, site->path, site->offset, (int)tid, strerror(-err));
		break;
	}
	return err;
}

int probes_event_id(int fd, uint64_t *id)
{
	if (ioctl(fd, PERF_EVENT_IOC_ID, id) != 0)
		return -errno;
	return 0;
}

int probes_map_ring(int fd, unsigned pages, void **map, size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	*map = NULL;
	*len = 0;
	if (pages == 0)
		pages = 8;
	if (pages & (pages - 1))
		return -EINVAL;
	m = mmap(NULL, (1 + (size_t)pages) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	*map = m;
	*len = (1 + (size_t)pages) * page;
	return 0;
}

int probes_share_ring(int fd, int ring_fd)
{
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) != 0)
		return -errno;
	return 0;
}

void probes_unmap_ring(void *map, size_t len)
{
	if (map)
		munmap(map, len);
}

int probes_parse_hit(const struct perf_event_header *hdr, const void *rec, size_t len,
		     struct probe_hit *out)
{
	struct perf_rec r;
	int err;

	memset(out, 0, sizeof(*out));
	if (hdr->type != PERF_RECORD_SAMPLE)
		return -ENOMSG;
	err = perf_record_parse(hdr, rec, len, PROBES_SAMPLE_TYPE, 0, &r);
	if (err)
		return err == -EINVAL ? -EPROTO : err;
	if ((r.has & (PERF_REC_HAS_ID | PERF_REC_HAS_TID | PERF_REC_HAS_TIME)) !=
	    (PERF_REC_HAS_ID | PERF_REC_HAS_TID | PERF_REC_HAS_TIME))
		return -EPROTO;
	out->id = r.id;
	out->ip = r.sample.ip;
	out->pid = r.pid;
	out->tid = r.tid;
	out->time = r.time;
	return 0;
}
