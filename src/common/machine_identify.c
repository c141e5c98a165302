/* Identification: the model number checked against the ISA (machine_impl.h). */
#include "machine_impl.h"

/* ------------------------------------------------------------------ */
/* Identification: the model number checked against the ISA           */
/* ------------------------------------------------------------------ */

/* Hypervisors may report another CPU model than the host's: a VM seen here
 * says family 6 model 167, a client Rocket Lake (one 512-bit FMA unit,
 * 2-channel DDR4), while it reports AMX, AVX512-FP16 and a 480 MiB L3: a
 * Sapphire Rapids class Xeon. A peak from the wrong row was 2.96x off, so
 * the row is checked against what only some cores have. The rules, and why:
 *
 * Intel, evidence of a Sapphire Rapids or later server core (Golden Cove
 * server and successors: 2x 512-bit FMA, the AMX TMUL):
 *  - any AMX bit: AMX exists on no client core and no Xeon before Sapphire
 *    Rapids;
 *  - AVX512-FP16: Golden Cove and later cores have it, but the only client
 *    ones that expose it are early Alder Lake desktops with AVX-512 unlocked
 *    (E-cores off; one 512-bit FMA), whose brand says "Core" and which are
 *    not VMs. That case is left to the rule on AVX-512 below;
 *  - a "Xeon" brand with an L3 of 64 MiB or more, on a client row: the Xeon
 *    E-2100/2200/2300 and W-1200/1300 are client cores (the brand alone does
 *    not contradict the row) but have at most 20 MiB of L3. No Intel client
 *    has more than 36 MiB and no Xeon before Sapphire Rapids more than
 *    60 MiB (Ice Lake-SP), so a server-sized L3 rules the client row out.
 *    The L3 alone does not overrule a server row: a hypervisor may
 *    synthesize the cache leaf (480 MiB is more than any Sapphire Rapids
 *    has), and the server rows differ from the class only in DRAM speed.
 * A row that has AMX (Sapphire/Emerald/Granite Rapids) is consistent with
 * all of these and stands: an Emerald Rapids VM that hides AMX is still
 * Emerald Rapids. Otherwise the class is sapphire_rapids (granite_rapids
 * with AMX-FP16): the two share the FMA and TMUL rates, and both their
 * server rows have 8 or more DDR5 channels per socket.
 *
 * Intel, AVX-512 on a row whose core has none (a client Skylake or hybrid
 * number) without the evidence above: the row is wrong, but the ISA does
 * not say how many 512-bit units the core has; the estimate from the ISA
 * (one unit) is used, and the bandwidth is left unknown.
 *
 * AMD: AVX-512 on a Zen, Zen 2 or Zen 3 row: the core is Zen 4 or later.
 * Zen 5 added AVX-VNNI (VEX), which Zen 4 lacks, so with it the class is
 * zen5 (512-bit pipes on the server parts), without it zen4 (one 512-bit op
 * per cycle, the lower of the two). AVX512-FP16 is not Intel-only for ever
 * (AMD adds it after Zen 5), which is why the Intel rules check the vendor.
 * The brand is no evidence on AMD: the EPYC 4004 is a Ryzen 7000 die and
 * rightly gets its 2-channel row.
 *
 * AVX512-BF16 and AVX-VNNI are no evidence on Intel: Cooper Lake, the
 * hybrid clients and the servers share them across rows. The hypervisor
 * bit is not evidence either (most VMs report their host's model), but the
 * note names it, as it is what makes a masked model number possible. */

/* Intel rows that are client cores (a "Xeon" with a server-sized L3
 * cannot be one of them). */
static bool intel_client_row(const struct uarch *u)
{
	static const char *const names[] = {
		"skylake", "ice_lake", "tiger_lake", "rocket_lake", "alder_lake", "raptor_lake",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(u->name, names[i]) == 0)
			return true;
	return false;
}

#define SERVER_L3_BYTES (64 * MIB)

#define AMX_BITS (MACHINE_ISA_AMX_TILE | MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_INT8 | \
		  MACHINE_ISA_AMX_FP16)

/* The core class @m's ISA shows when it contradicts row @u (NULL: no row),
 * with the evidence and what the row lacks; NULL when nothing contradicts
 * it. "unknown" means the row is wrong but no class can be named. */
static const char *intel_class(const struct machine *m, const struct uarch *u, char *ev, size_t len,
			       const char **lacks)
{
	bool amx = m->isa & AMX_BITS;
	bool fp16 = (m->isa & MACHINE_ISA_AVX512_FP16) &&
		!(strstr(m->name, "Core") && !m->hypervisor);
	bool xeon_l3 = strstr(m->name, "Xeon") && m->l3_bytes >= SERVER_L3_BYTES &&
		u && intel_client_row(u);

	if (u && u->amx > 0)
		return NULL;
	if (amx || fp16 || xeon_l3) {
		if (amx)
			machine_append(ev, len, "%s", (m->isa & MACHINE_ISA_AMX_TILE) ? "AMX-TILE" : "AMX");
		if (m->isa & MACHINE_ISA_AVX512_FP16)
			machine_append(ev, len, "%sAVX512-FP16", ev[0] ? ", " : "");
		if (xeon_l3 && !amx && !fp16)
			machine_append(ev, len, "%sa \"Xeon\" brand", ev[0] ? ", " : "");
		if (m->l3_bytes >= SERVER_L3_BYTES)
			machine_append(ev, len, "%sa %.0f MiB L3", ev[0] ? ", " : "", m->l3_bytes / MIB);
		*lacks = amx || fp16 ? "which has no AMX or AVX512-FP16" : "a client core";
		return (m->isa & MACHINE_ISA_AMX_FP16) ? "granite_rapids" : "sapphire_rapids";
	}
	if (u && u->fma512 == 0 && (m->isa & MACHINE_ISA_AVX512F)) {
		machine_append(ev, len, "AVX-512");
		if (m->isa & MACHINE_ISA_AVX512_FP16)
			machine_append(ev, len, ", AVX512-FP16");
		*lacks = "which has no AVX-512";
		return "unknown";
	}
	return NULL;
}

static const char *amd_class(const struct machine *m, const struct uarch *u, char *ev, size_t len,
			     const char **lacks)
{
	if (!u || u->fma512 > 0 || !(m->isa & MACHINE_ISA_AVX512F))
		return NULL;
	machine_append(ev, len, "AVX-512");
	if (m->isa & MACHINE_ISA_AVX512_BF16)
		machine_append(ev, len, ", AVX512-BF16");
	if (m->isa & MACHINE_ISA_AVX_VNNI)
		machine_append(ev, len, ", AVX-VNNI");
	*lacks = "which has no AVX-512";
	return (m->isa & MACHINE_ISA_AVX_VNNI) ? "zen5" : "zen4";
}

void machine_identify(struct machine *m)
{
	const struct uarch *u;
	const char *cls = NULL, *lacks = "";
	char ev[192] = "";

	if (!m)
		return;
	u = uarch_by_identity(m);
	m->uarch_from_isa = 0;
	m->ident_note[0] = '\0';
	machine_set_str(m->uarch, sizeof(m->uarch), u ? u->name : "unknown");
	if (strcmp(m->vendor, INTEL) == 0)
		cls = intel_class(m, u, ev, sizeof(ev), &lacks);
	else if (strcmp(m->vendor, AMD) == 0)
		cls = amd_class(m, u, ev, sizeof(ev), &lacks);
	/* no row and no class: the estimate from the ISA, nothing to say */
	if (!cls || (!u && strcmp(cls, "unknown") == 0))
		return;
	m->uarch_from_isa = 1;
	machine_set_str(m->uarch, sizeof(m->uarch), cls);
	if (!u) {
		/* an unknown model with AMX or FP16 is still of that class */
		snprintf(m->ident_note, sizeof(m->ident_note),
			 "%s class from the ISA: CPUID family %d model %d is not in the table, and "
			 "the CPU reports %s", cls, m->family, m->model, ev);
		return;
	}
	snprintf(m->ident_note, sizeof(m->ident_note),
		 "%s class from the ISA: CPUID family %d model %d names %s (%s), %s, but the CPU "
		 "reports %s%s", strcmp(cls, "unknown") ? cls : "estimated", m->family, m->model,
		 u->name, u->platform ? u->platform : "no platform", lacks, ev,
		 m->hypervisor ? " (a hypervisor may mask the model number)" : "");
}

