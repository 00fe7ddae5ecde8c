/* The zone allocator: carves one region taken once at start (a GPU's memory zone) into
 * aligned blocks, so nothing is allocated from the device after init. Address-ordered
 * segments, first fit, neighbours merged on free. Host-side bookkeeping only: the region
 * itself is never touched, so it works on any address range. Internal. */
#ifndef RILL_DEVICE_ZONE_H
#define RILL_DEVICE_ZONE_H

#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

typedef struct rill_zone rill_zone_t;

/** A zone over [base, base + size), handing out blocks aligned to align (a power of two;
 * base must be aligned too). RILL_ERR_INVALID_ARG otherwise. Caller's thread; a zone is
 * used by one thread (its GPU manager). */
rill_status_t rill_zone_create(uintptr_t base, size_t size, size_t align, rill_zone_t **zone_p);
/** Free the bookkeeping (not the region). *zone_p becomes NULL. */
void rill_zone_destroy(rill_zone_t **zone_p);

/** A block of at least size bytes (rounded up to the alignment; size 0 is one unit):
 * *addr_p is its start. RILL_ERR_NO_MEMORY when no free segment is large enough (the
 * caller evicts and retries), with *addr_p untouched. */
rill_status_t rill_zone_alloc(rill_zone_t *zone, size_t size, uintptr_t *addr_p);
/** Give back the block that starts at addr. RILL_ERR_NOT_FOUND (logged) for an address
 * that is not the start of an allocated block, including a second free. */
rill_status_t rill_zone_free(rill_zone_t *zone, uintptr_t addr);

/** Bytes the zone manages, bytes allocated, the largest free segment, blocks allocated. */
size_t rill_zone_size(const rill_zone_t *zone);
size_t rill_zone_used(const rill_zone_t *zone);
size_t rill_zone_largest_free(const rill_zone_t *zone);
size_t rill_zone_nblocks(const rill_zone_t *zone);

#endif
