/* bpf_choose.c - which attach type each eBPF hook of bpf/ceems_io.bpf.c
 * gets, from what the kernel accepts (lib/sources/bpf_io.h).  Apart from the
 * loader so that the choice is tested without libbpf, privileges or a
 * kernel.
 *
 * The order is by completeness first, then cost.  fentry/fexit on the
 * read and write functions cost only the calls they hook and miss
 * nothing.  A system call tracepoint (tp_btf sys_exit or
 * syscalls:sys_exit_*) sends every system call of every process of the
 * node through the kernel's slow system call path, but misses nothing
 * either.  The kprobe variants need return probes (kretsyscall), and a
 * return probe misses returns silently when the kernel's kretprobe
 * instances run out (threads blocked in read() on pipes and sockets
 * hold them), so kprobes come last for IO as for the network; where
 * they are used the loader reads their missed count (lib/sources/bpf_io.c).  Retransmissions and processes have tracepoints on
 * every kernel the programs load on: those alone. */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "sources/bpf_io.h"

static const enum ceems_bpf_attach order_io[] = {
	CEEMS_BPF_ATTACH_FENTRY, CEEMS_BPF_ATTACH_TP_BTF,
	CEEMS_BPF_ATTACH_TRACEPOINT, CEEMS_BPF_ATTACH_KPROBE,
};
static const enum ceems_bpf_attach order_net[] = {
	CEEMS_BPF_ATTACH_FENTRY, CEEMS_BPF_ATTACH_TP_BTF,
	CEEMS_BPF_ATTACH_TRACEPOINT, CEEMS_BPF_ATTACH_KPROBE,
};
static const enum ceems_bpf_attach order_tracepoints[] = {
	CEEMS_BPF_ATTACH_TP_BTF, CEEMS_BPF_ATTACH_TRACEPOINT,
};

/* Hook H's variants, best first, into *ORDER; their number. */
static size_t
hook_order(enum ceems_bpf_hook h, const enum ceems_bpf_attach **order)
{
	switch (h) {
	case CEEMS_BPF_HOOK_IO:
		*order = order_io;
		return sizeof(order_io) / sizeof(order_io[0]);
	case CEEMS_BPF_HOOK_NET:
		*order = order_net;
		return sizeof(order_net) / sizeof(order_net[0]);
	case CEEMS_BPF_HOOK_RETRANS:
	case CEEMS_BPF_HOOK_PROC:
	case CEEMS_BPF_NHOOKS:
		break;
	}
	*order = order_tracepoints;
	return sizeof(order_tracepoints) / sizeof(order_tracepoints[0]);
}

static bool
hook_has(enum ceems_bpf_hook h, enum ceems_bpf_attach a)
{
	const enum ceems_bpf_attach *order;
	size_t n = hook_order(h, &order);

	for (size_t i = 0; i < n; i++)
		if (order[i] == a)
			return true;
	return false;
}

int
ceems_bpf_choose_candidates(enum ceems_bpf_hook h, enum ceems_bpf_attach force,
		     enum ceems_bpf_attach list[CEEMS_BPF_NATTACH])
{
	const enum ceems_bpf_attach *order;
	size_t n = hook_order(h, &order);

	if (force != CEEMS_BPF_ATTACH_NONE && hook_has(h, force)) {
		list[0] = force;
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		list[i] = order[i];
	return (int)n;
}

/* The first candidate of hook H that OFFER has, else NONE. */
static enum ceems_bpf_attach
choose_one(const struct ceems_bpf_offer *offer, enum ceems_bpf_hook h,
	   enum ceems_bpf_attach force)
{
	enum ceems_bpf_attach list[CEEMS_BPF_NATTACH];
	int n = ceems_bpf_choose_candidates(h, force, list);

	for (int i = 0; i < n; i++)
		if (offer->offered[h][list[i]])
			return list[i];
	return CEEMS_BPF_ATTACH_NONE;
}

int
ceems_bpf_choose(const struct ceems_bpf_offer *offer, bool by_pid,
		 enum ceems_bpf_attach force,
		 enum ceems_bpf_attach out[CEEMS_BPF_NHOOKS])
{
	bool refused = false;
	int n = 0;

	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++) {
		out[h] = choose_one(offer, (enum ceems_bpf_hook)h, force);
		/* On cgroup v2 the process hooks are not needed. */
		if (h == CEEMS_BPF_HOOK_PROC && !by_pid)
			continue;
		if (force == CEEMS_BPF_ATTACH_NONE ||
		    !hook_has((enum ceems_bpf_hook)h, force) || out[h] == force)
			continue;
		/* A forced type missing for a hook the figures can do
		 * without (the network's events came with Linux 6.3, for
		 * instance) leaves that hook out: its figures are absent. */
		if (h == CEEMS_BPF_HOOK_NET || h == CEEMS_BPF_HOOK_RETRANS)
			out[h] = CEEMS_BPF_ATTACH_NONE;
		else
			refused = true;
	}
	/* Without IO nothing is worth loading; without following forks a
	 * cgroup v1 job's processes cannot be told from the node's; a
	 * forced type the kernel refuses for either is an error, not a
	 * quiet other type. */
	if (refused || out[CEEMS_BPF_HOOK_IO] == CEEMS_BPF_ATTACH_NONE ||
	    (by_pid && out[CEEMS_BPF_HOOK_PROC] == CEEMS_BPF_ATTACH_NONE)) {
		for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
			out[h] = CEEMS_BPF_ATTACH_NONE;
		return 0;
	}
	if (!by_pid)
		out[CEEMS_BPF_HOOK_PROC] = CEEMS_BPF_ATTACH_NONE;
	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
		if (out[h] != CEEMS_BPF_ATTACH_NONE)
			n++;
	return n;
}

int
ceems_bpf_choose_force_from_word(const char *word)
{
	static const struct {
		const char *word;
		enum ceems_bpf_attach attach;
	} words[] = {
		{ "auto", CEEMS_BPF_ATTACH_NONE },
		{ "per-call", CEEMS_BPF_ATTACH_NONE },
		{ "fentry", CEEMS_BPF_ATTACH_FENTRY },
		{ "kprobe", CEEMS_BPF_ATTACH_KPROBE },
		{ "btf", CEEMS_BPF_ATTACH_TP_BTF },
		{ "tracepoint", CEEMS_BPF_ATTACH_TRACEPOINT },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(word, words[i].word) == 0)
			return (int)words[i].attach;
	return -1;
}

const char *
ceems_bpf_choose_attach_name(enum ceems_bpf_attach a)
{
	switch (a) {
	case CEEMS_BPF_ATTACH_TP_BTF:
		return "tp_btf";
	case CEEMS_BPF_ATTACH_TRACEPOINT:
		return "tracepoint";
	case CEEMS_BPF_ATTACH_FENTRY:
		return "fentry";
	case CEEMS_BPF_ATTACH_KPROBE:
		return "kprobe";
	case CEEMS_BPF_ATTACH_NONE:
	case CEEMS_BPF_NATTACH:
		break;
	}
	return "none";
}

const char *
ceems_bpf_choose_hook_name(enum ceems_bpf_hook h)
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
