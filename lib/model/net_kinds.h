/* net_kinds.h - the kinds a job's network figures are counted by:
 * direction, protocol, family, each an index of the arrays
 * [direction][protocol][family] that the eBPF programs fill
 * (bpf/ceems_io.h) and the measurement model keeps (model/measure.h).
 * One definition for both sides, so that the loader copies the kernel's
 * arrays as they are.  No includes and plain enums only: clang -target
 * bpf reads it too. */
#ifndef CEEMS_NET_KINDS_H
#define CEEMS_NET_KINDS_H

enum { CEEMS_IO_IN = 0, CEEMS_IO_OUT = 1 };
enum { CEEMS_IO_TCP = 0, CEEMS_IO_UDP = 1 };
enum { CEEMS_IO_IPV4 = 0, CEEMS_IO_IPV6 = 1 };

#endif
