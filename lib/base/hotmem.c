/* hotmem.c - one region of transparent huge pages for what the node
 * agent touches at every tick (why: hotmem.h).
 *
 * A bump allocator over a 2 MiB-aligned anonymous mapping advised
 * MADV_HUGEPAGE, with one free list per block size (64-byte steps up to
 * CEEMS_HOTMEM_MAX_BLOCK): the agent's hot objects are few sizes (its
 * own state, a job, a reader) allocated and freed as jobs come and go, so
 * a freed block is taken again by the next object of its size and the
 * region does not fragment.  Larger blocks (the agent's tables by job
 * slot, made once) are cut from the region too but not reused once
 * freed.  Nothing is returned to the kernel: the region's high-water
 * mark is what the agent held at its busiest. */
#include "config.h"

#include "base/hotmem.h"

#include <sys/mman.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define HOTMEM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOTMEM_UNDER_ASAN 1
#endif
#endif

#define HUGE_PAGE (2u * 1024u * 1024u)
#define GRANULE 64u
#define HEADER 16u
#define NCLASSES (CEEMS_HOTMEM_MAX_BLOCK / GRANULE + 2)
#define BLOCK_MAGIC 0x686f746du	/* "hotm" */
#define CLASS_LARGE UINT32_MAX	/* above CEEMS_HOTMEM_MAX_BLOCK: not reused */

/* Before each block's payload: its size class, and a word that tells a
 * block of the region from a stray pointer. */
struct block_header {
	uint32_t magic;
	uint32_t class;
	uint64_t pad;
};
_Static_assert(sizeof(struct block_header) == HEADER,
	       "a block's payload keeps 16-byte alignment");

struct free_block {
	struct free_block *next;
};

static struct {
	pthread_mutex_t lock;
	char *base;		/* 2 MiB-aligned; NULL while disabled */
	char *next;		/* first byte never handed out */
	char *end;
	struct free_block *free[NCLASSES];
} hot = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int
under_memory_checker(void)
{
#ifdef HOTMEM_UNDER_ASAN
	return 1;
#elif defined(HAVE_VALGRIND_VALGRIND_H)
	return RUNNING_ON_VALGRIND != 0;
#else
	return 0;
#endif
}

int
ceems_hotmem_enable(size_t reserve)
{
	size_t len;
	char *map, *base;
	int ret = 0;

	if (under_memory_checker())
		return -ENOTSUP;
	if (reserve == 0 || reserve > SIZE_MAX / 2)
		return -EINVAL;
	len = (reserve + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	pthread_mutex_lock(&hot.lock);
	if (hot.base != NULL) {
		ret = -EALREADY;
		goto out;
	}
	/* One huge page more, to start the region on a 2 MiB boundary:
	 * only aligned 2 MiB ranges get huge pages. */
	map = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	base = (char *)(((uintptr_t)map + HUGE_PAGE - 1) &
			~(uintptr_t)(HUGE_PAGE - 1));
	if (base > map)
		munmap(map, (size_t)(base - map));
	if (base + len < map + len + HUGE_PAGE)
		munmap(base + len, (size_t)(map + len + HUGE_PAGE - (base + len)));
	/* Refused where the kernel has no transparent huge pages: the
	 * region still keeps the hot objects on few pages. */
	(void)madvise(base, len, MADV_HUGEPAGE);
	hot.base = base;
	hot.next = base;
	hot.end = base + len;
out:
	pthread_mutex_unlock(&hot.lock);
	return ret;
}

int
ceems_hotmem_enabled(void)
{
	int on;

	pthread_mutex_lock(&hot.lock);
	on = hot.base != NULL;
	pthread_mutex_unlock(&hot.lock);
	return on;
}

/* A block of GRANULES granules, of size class CLASS, from its free list
 * or the bump pointer; NULL when the region is off or full.  Called
 * locked. */
static void *
take_block(size_t granules, uint32_t class)
{
	size_t bytes = granules * GRANULE;
	struct block_header *h;
	struct free_block *f = class != CLASS_LARGE ? hot.free[class] : NULL;

	if (f != NULL) {
		hot.free[class] = f->next;
		memset(f, 0, bytes - HEADER);
		return f;
	}
	if (hot.base == NULL || (size_t)(hot.end - hot.next) < bytes)
		return NULL;
	h = (struct block_header *)(void *)hot.next;
	hot.next += bytes;
	h->magic = BLOCK_MAGIC;
	h->class = class;
	/* Never handed out before: zero since the mapping was made. */
	return (char *)h + HEADER;
}

void *
ceems_hotmem_calloc(size_t n, size_t size)
{
	void *p = NULL;
	size_t bytes, granules;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	if (bytes > 0 && bytes <= SIZE_MAX / 2) {
		granules = (bytes + HEADER + GRANULE - 1) / GRANULE;
		pthread_mutex_lock(&hot.lock);
		p = take_block(granules, bytes <= CEEMS_HOTMEM_MAX_BLOCK ?
				(uint32_t)granules : CLASS_LARGE);
		pthread_mutex_unlock(&hot.lock);
	}
	return p != NULL ? p : calloc(n, size);
}

void
ceems_hotmem_free(void *p)
{
	struct block_header *h;
	struct free_block *f = p;

	if (p == NULL)
		return;
	pthread_mutex_lock(&hot.lock);
	if (hot.base == NULL || (char *)p < hot.base + HEADER ||
	    (char *)p >= hot.next) {
		pthread_mutex_unlock(&hot.lock);
		free(p);
		return;
	}
	h = (struct block_header *)(void *)((char *)p - HEADER);
	if (h->magic != BLOCK_MAGIC ||
	    (h->class != CLASS_LARGE && (h->class == 0 || h->class >= NCLASSES)))
		abort();	/* not a block of ours: memory is corrupt */
	if (h->class != CLASS_LARGE) {
		f->next = hot.free[h->class];
		hot.free[h->class] = f;
	}
	pthread_mutex_unlock(&hot.lock);
}

size_t
ceems_hotmem_used(void)
{
	size_t used;

	pthread_mutex_lock(&hot.lock);
	used = hot.base != NULL ? (size_t)(hot.next - hot.base) : 0;
	pthread_mutex_unlock(&hot.lock);
	return used;
}
