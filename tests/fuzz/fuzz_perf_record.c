/*
 * libFuzzer target: perf_record_parse() (src/record/sampling/perf_ring.c) on
 * arbitrary records.
 *
 * Input: sample_type (8 bytes, little-endian), a flags byte (bit 0:
 * sample_id_all), then the record: a struct perf_event_header whose size
 * field is not trusted, and the body. The body is copied to its own
 * 8-byte-aligned heap block of exactly the bytes that follow, passed as
 * @len, so AddressSanitizer catches a read past it. On success every
 * pointer the parser returns (callchain, file name, comm) is walked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/sampling/perf_ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch(const struct perf_event_header *hdr, const struct perf_rec *r)
{
	uint64_t s = 0;

	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		for (uint64_t i = 0; i < r->sample.callchain.nr; i++)
			s += r->sample.callchain.ips[i];
		for (uint64_t i = 0; i < r->sample.callchain.nkernel; i++)
			s += r->sample.callchain.kernel[i];
		for (uint64_t i = 0; i < r->sample.callchain.nuser; i++)
			s += r->sample.callchain.user[i];
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		s += strlen(r->mmap.filename);
		break;
	case PERF_RECORD_COMM:
		s += strlen(r->comm.comm);
		break;
	}
	sink += s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_header hdr;
	struct perf_rec rec;
	uint64_t sample_type;
	size_t len;
	void *body;
	int sid_all;

	if (size < 9 + sizeof(hdr))
		return 0;
	memcpy(&sample_type, data, 8);
	sid_all = data[8] & 1;
	memcpy(&hdr, data + 9, sizeof(hdr));
	data += 9 + sizeof(hdr);
	size -= 9 + sizeof(hdr);
	len = size;
	/* malloc's blocks are 16-byte aligned: the parser wants 8 */
	body = malloc(len ? len : 1);
	if (!body)
		return 0;
	memcpy(body, data, len);
	if (perf_record_parse(&hdr, body, len, sample_type, sid_all, &rec) == 0)
		touch(&hdr, &rec);
	free(body);
	return 0;
}
