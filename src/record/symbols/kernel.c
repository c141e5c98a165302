/* Kernel addresses, from /proc/kallsyms (symbols_impl.h). */
#include "symbols_impl.h"

/* ---- kernel ---- */

static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	size_t ua, ub;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Read /proc/kallsyms once. Unreadable, or all addresses 0 (kptr_restrict
 * for an unprivileged reader): no kernel names. Returns 0 or -ENOMEM. */
static int ksyms_read(struct symbols *s)
{
	const char *module = KERNEL_DSO;
	size_t cap = 0, len = 0, k = 0;
	char *line = NULL;
	bool nonzero = false;
	FILE *f;
	int err = 0;

	s->ksyms_read = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	while (getline(&line, &len, f) > 0) {
		char *p = line, *e, *name, *mod;
		uint64_t addr;
		char type;

		line[strcspn(line, "\n")] = '\0';
		errno = 0;
		addr = strtoull(p, &e, 16);
		if (e == p || *e != ' ' || errno == ERANGE || !e[1] || e[2] != ' ')
			continue;
		type = e[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = e + 3;
		mod = strchr(name, '\t');
		if (mod)
			*mod++ = '\0';
		if (array_grow(&s->ksyms, &cap, s->nksyms + 1, sizeof(*s->ksyms))) {
			err = -ENOMEM;
			goto out;
		}
		if (mod && strcmp(mod, module) != 0) {
			module = pool_strdup(&s->pool, mod);
			if (!module) {
				err = -ENOMEM;
				goto out;
			}
		} else if (!mod) {
			module = KERNEL_DSO;
		}
		s->ksyms[s->nksyms].addr = addr;
		s->ksyms[s->nksyms].name = pool_strdup(&s->pool, name);
		s->ksyms[s->nksyms].module = module;
		if (!s->ksyms[s->nksyms].name) {
			err = -ENOMEM;
			goto out;
		}
		s->nksyms++;
		nonzero |= addr != 0;
	}
	if (!nonzero) {
		s->nksyms = 0;
		goto out;
	}
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), ksym_cmp);
	for (size_t i = 0; i < s->nksyms; i++)
		if (k == 0 || s->ksyms[k - 1].addr != s->ksyms[i].addr)
			s->ksyms[k++] = s->ksyms[i];
	s->nksyms = k;
	for (size_t i = 0; i < k; i++) {
		struct ksym *ks = &s->ksyms[i];
		if (i + 1 == k)
			ks->end = ks->addr; /* unknown size: only its first byte */
		else if (s->ksyms[i + 1].module != ks->module && strcmp(s->ksyms[i + 1].module, ks->module))
			ks->end = s->ksyms[i + 1].addr - ks->addr > KSYM_MAX_TAIL ? ks->addr + KSYM_MAX_TAIL
										   : s->ksyms[i + 1].addr;
		else
			ks->end = s->ksyms[i + 1].addr;
	}
out:
	if (err)
		s->nksyms = 0;
	free(line);
	fclose(f);
	return err;
}

int resolve_kernel(struct symbols *s, uint64_t ip, struct symbol_info *out)
{
	size_t lo = 0, hi;
	int err;

	out->kind = SYMBOL_KERNEL;
	out->dso = KERNEL_DSO;
	out->name = KERNEL_NAME;
	if (!s->ksyms_read) {
		err = ksyms_read(s);
		if (err)
			return err;
	}
	hi = s->nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ksyms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || (ip >= s->ksyms[lo - 1].end && ip != s->ksyms[lo - 1].addr))
		return -ENOENT;
	out->dso = s->ksyms[lo - 1].module;
	out->name = s->ksyms[lo - 1].name;
	out->offset = ip - s->ksyms[lo - 1].addr;
	return 0;
}

