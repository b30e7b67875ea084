/* gpu_internal.h - what the NVML and ROCm SMI backends share: loading a
 * vendor library and its entry points, the error line for the admin,
 * and the PCI bus id in the one spelling the project uses.  Not
 * installed: the agent sees lib/sources/gpu.h only. */
#ifndef CEEMS_GPU_INTERNAL_H
#define CEEMS_GPU_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/dynlib.h"
#include "sources/gpu.h"

/* "dddd:bb:dd.f" and the NUL; a domain over 0xffff has more digits. */
#define CEEMS_GPU_BUS_ID_LEN 13

/* dlopen (RTLD_NOW | RTLD_LOCAL) the first of NAMES[0..NNAMES-1] that
 * loads, and store the address of every SYMS[i] in TABLE (TABLE_SIZE
 * bytes) at the entry's offset (NULL for an optional one that is
 * absent).  The handle, or NULL with TABLE cleared, *ERRNUM -ENOENT and
 * ERR saying which library is missing and what to do (VENDOR names the
 * hardware), or -ENOSYS and ERR naming the first required entry point
 * the library lacks. */
void *ceems_gpu_backend_open_library(const char *const *names, size_t nnames,
			     const char *vendor,
			     const struct ceems_dynlib_symbol *syms, size_t nsyms,
			     void *table, size_t table_size, int *errnum,
			     char *err, size_t err_size);

/* Format one line into ERR (when it is not NULL) and set *ERRNUM. */
void ceems_gpu_backend_set_error(int *errnum, int value, char *err, size_t err_size,
			 const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* A PCI bus id as a management library writes it ("00000000:3B:00.0",
 * "0000:3b:00.0", "3b:00.0", any case) into OUT as "dddd:bb:dd.f", lower
 * case.  0, or -EINVAL when TEXT is not a bus id (OUT is then ""). */
int ceems_gpu_backend_bus_id_normalise(const char *text, char *out, size_t size);

/* The bus id of a packed BDF (ROCm SMI: domain in bits 63..32, bus
 * 15..8, device 7..3, function 2..0) into OUT.  0 or -ENAMETOOLONG. */
int ceems_gpu_backend_bus_id_from_bdf(uint64_t bdf, char *out, size_t size);

/* A backend with OPS, a zeroed PRIV of PRIV_SIZE bytes and no device
 * yet; NULL on memory exhaustion, with *ERRNUM -ENOMEM and ERR. */
struct ceems_gpu_backend *ceems_gpu_backend_new(
	const struct ceems_gpu_backend_ops *ops, size_t priv_size,
	int *errnum, char *err, size_t err_size);

/* Copy a string the library returned into a device field: at most
 * SIZE - 1 bytes, stopped at the first byte outside printable ASCII
 * (a library's string is outside input like any other). */
void ceems_gpu_backend_copy_id(char *dst, size_t size, const char *src,
		       size_t src_size);

#endif
