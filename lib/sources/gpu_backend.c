/* gpu_backend.c - what every GPU backend shares: the generic calls
 * through the ops, loading the vendor's library and its entry points,
 * the admin's error line, and the PCI bus id in one spelling (NVML
 * writes "00000000:3B:00.0", ROCm SMI packs the numbers, Slurm and
 * sysfs write "0000:3b:00.0": devices are matched on the last). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dynlib.h"
#include "sources/gpu.h"
#include "sources/gpu_internal.h"

const char *
ceems_gpu_backend_vendor_name(enum ceems_gpu_vendor v)
{
	switch (v) {
	case CEEMS_GPU_NVIDIA:
		return "nvidia";
	case CEEMS_GPU_AMD:
		return "amd";
	}
	return "unknown";
}

int
ceems_gpu_backend_read_usage(struct ceems_gpu_backend *b, size_t i,
			     struct ceems_gpu_usage *u)
{
	memset(u, 0, sizeof(*u));
	if (b == NULL || i >= b->ndevices)
		return -EINVAL;
	return b->ops->read_usage(b, i, u);
}

void
ceems_gpu_backend_close(struct ceems_gpu_backend *b)
{
	if (b != NULL)
		b->ops->close(b);
}

struct ceems_gpu_backend *
ceems_gpu_backend_new(const struct ceems_gpu_backend_ops *ops,
		      size_t priv_size, int *errnum, char *err, size_t err_size)
{
	void *priv = calloc(1, priv_size);
	struct ceems_gpu_backend *b = priv != NULL ? calloc(1, sizeof(*b)) : NULL;

	if (b == NULL) {
		free(priv);
		ceems_gpu_backend_set_error(errnum, -ENOMEM, err, err_size,
				    "%s: out of memory", ops->kind);
		return NULL;
	}
	b->ops = ops;
	b->priv = priv;
	return b;
}

void
ceems_gpu_backend_set_error(int *errnum, int value, char *err, size_t err_size,
		    const char *fmt, ...)
{
	va_list ap;

	if (errnum != NULL)
		*errnum = value;
	if (err == NULL || err_size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
}

void *
ceems_gpu_backend_open_library(const char *const *names, size_t nnames,
		       const char *vendor, const struct ceems_dynlib_symbol *syms,
		       size_t nsyms, void *table, size_t table_size,
		       int *errnum, char *err, size_t err_size)
{
	char why[256];
	void *h = ceems_dynlib_open(names, nnames, syms, nsyms, table,
				    table_size, errnum, why, sizeof(why));

	if (h != NULL)
		return h;
	if (*errnum == -ENOSYS)
		ceems_gpu_backend_set_error(errnum, -ENOSYS, err, err_size,
				    "%s has no %s: the library is too old or "
				    "not the vendor's; install the driver's own",
				    names[0], why);
	else
		ceems_gpu_backend_set_error(errnum, -ENOENT, err, err_size,
				    "%s cannot be loaded (%s): no %s GPU is "
				    "measured; install the driver's management "
				    "library or set the library path in ceems.conf",
				    names[0], why, vendor);
	return NULL;
}

void
ceems_gpu_backend_copy_id(char *dst, size_t size, const char *src, size_t src_size)
{
	size_t i;

	if (size == 0)
		return;
	/* Names have blanks inside ("NVIDIA H100 80GB HBM3"), never
	 * control bytes: the copy stops at the first one, the NUL too. */
	for (i = 0; i + 1 < size && i < src_size; i++) {
		unsigned char c = (unsigned char)src[i];

		if (c < 0x20 || c > 0x7e)
			break;
		dst[i] = (char)c;
	}
	while (i > 0 && dst[i - 1] == ' ')
		i--;
	dst[i] = '\0';
}

/* Up to MAX hex digits at *P (at least one), advanced past them. */
static int
take_hex(const char **p, unsigned int max_digits, uint32_t *out)
{
	const char *s = *p;
	uint32_t v = 0;
	unsigned int n = 0;

	for (; n < max_digits; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		v = v * 16 + (uint32_t)d;
	}
	if (n == 0)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

int
ceems_gpu_backend_bus_id_normalise(const char *text, char *out, size_t size)
{
	uint32_t a, b, domain = 0, bus, dev, fn;
	const char *p = text;
	int n;

	if (size > 0)
		out[0] = '\0';
	/* [domain:]bus:device.function; the domain has up to 8 digits. */
	if (take_hex(&p, 8, &a) < 0 || *p++ != ':' ||
	    take_hex(&p, 8, &b) < 0)
		return -EINVAL;
	if (*p == ':') {
		p++;
		domain = a;
		bus = b;
		if (take_hex(&p, 2, &dev) < 0)
			return -EINVAL;
	} else {
		bus = a;
		dev = b;
	}
	if (*p++ != '.' || take_hex(&p, 1, &fn) < 0 || *p != '\0')
		return -EINVAL;
	if (bus > 0xff || dev > 0x1f || fn > 7)
		return -EINVAL;
	n = snprintf(out, size, "%04" PRIx32 ":%02" PRIx32 ":%02" PRIx32
		     ".%" PRIx32, domain, bus, dev, fn);
	if (n < 0 || (size_t)n >= size) {
		if (size > 0)
			out[0] = '\0';
		return -EINVAL;
	}
	return 0;
}

int
ceems_gpu_backend_bus_id_from_bdf(uint64_t bdf, char *out, size_t size)
{
	int n = snprintf(out, size, "%04" PRIx64 ":%02" PRIx64 ":%02" PRIx64
			 ".%" PRIx64, bdf >> 32, (bdf >> 8) & 0xff,
			 (bdf >> 3) & 0x1f, bdf & 0x7);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}
