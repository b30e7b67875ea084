/* bpf_choose.c - which attach type each eBPF hook of bpf/io.bpf.c gets,
 * from what the kernel offers (lib/bpf_io.h).  Apart from the loader so
 * that the choice is tested without libbpf, privileges or a kernel. */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>

#include "bpf_io.h"

static enum ceems_bpf_attach
choose_one(const struct ceems_bpf_offer *offer, enum ceems_bpf_hook h,
	   bool no_btf)
{
	if (offer->tp_btf[h] && !no_btf)
		return CEEMS_BPF_ATTACH_TP_BTF;
	if (offer->tracepoint[h])
		return CEEMS_BPF_ATTACH_TRACEPOINT;
	return CEEMS_BPF_ATTACH_NONE;
}

int
ceems_bpf_choose(const struct ceems_bpf_offer *offer, bool by_pid,
		 bool no_btf, enum ceems_bpf_attach out[CEEMS_BPF_NHOOKS])
{
	int n = 0;

	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
		out[h] = choose_one(offer, (enum ceems_bpf_hook)h, no_btf);
	/* Without IO nothing is worth loading; without following forks a
	 * cgroup v1 job's processes cannot be told from the node's. */
	if (out[CEEMS_BPF_HOOK_IO] == CEEMS_BPF_ATTACH_NONE ||
	    (by_pid && out[CEEMS_BPF_HOOK_PROC] == CEEMS_BPF_ATTACH_NONE)) {
		for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
			out[h] = CEEMS_BPF_ATTACH_NONE;
		return 0;
	}
	/* On cgroup v2 the process hooks are not needed: not attached. */
	if (!by_pid)
		out[CEEMS_BPF_HOOK_PROC] = CEEMS_BPF_ATTACH_NONE;
	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
		if (out[h] != CEEMS_BPF_ATTACH_NONE)
			n++;
	return n;
}

const char *
ceems_bpf_attach_name(enum ceems_bpf_attach a)
{
	switch (a) {
	case CEEMS_BPF_ATTACH_TP_BTF:
		return "tp_btf";
	case CEEMS_BPF_ATTACH_TRACEPOINT:
		return "tracepoint";
	case CEEMS_BPF_ATTACH_NONE:
		break;
	}
	return "none";
}

const char *
ceems_bpf_hook_name(enum ceems_bpf_hook h)
{
	switch (h) {
	case CEEMS_BPF_HOOK_IO:
		return "io";
	case CEEMS_BPF_HOOK_NET:
		return "net";
	case CEEMS_BPF_HOOK_RETRANS:
		return "tcp_retrans";
	case CEEMS_BPF_HOOK_PROC:
		return "proc";
	case CEEMS_BPF_NHOOKS:
		break;
	}
	return "?";
}
