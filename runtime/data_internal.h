/* Data, copies and collections as the runtime sees them. Internal. */
#ifndef RILL_DATA_INTERNAL_H
#define RILL_DATA_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "hmap.h"

typedef enum rill_coherency {
    RILL_COHERENCY_INVALID = 0, /* the copy's bytes are stale */
    RILL_COHERENCY_SHARED,      /* valid, other valid copies may exist */
    RILL_COHERENCY_OWNED,       /* valid, the copy others are refreshed from */
    RILL_COHERENCY_EXCLUSIVE,   /* the only valid copy, being written */
} rill_coherency_t;

/** One device's copy of a datum. */
typedef struct rill_data_copy {
    rill_data_t *data;
    void *ptr;
    int device;            /* index in rill_device_get(); 0 = host */
    atomic_ullong version; /* matches data->version when valid */
    rill_coherency_t coherency;
    atomic_int readers; /* tasks reading it right now */
    bool owns_ptr;      /* ptr is freed with the copy */
} rill_data_copy_t;

struct rill_data {
    rill_context_t *ctx;
    rill_collection_t *dc; /* NULL for standalone data */
    uint64_t key;          /* key in dc (a local serial number for standalone data) */
    int home_rank;
    size_t size;
    atomic_ullong version; /* bumped by each completed write */
    rill_data_copy_t *copies[RILL_MAX_DEVICES];
    /* taskpools that use the datum and have not ended (main thread): while > 0 the datum
     * may not be destroyed; user_tp names the last one, for the error */
    int users;
    uint32_t user_tp;
};

struct rill_collection {
    rill_context_t *ctx;
    uint32_t id; /* creation index: names the collection across ranks */
    size_t datum_size;
    rill_collection_rank_fn rank_of;
    void *arg;
    rill_hmap_t data; /* key -> rill_data_t*, created on first use */
    int users;        /* taskpools that use some datum of it and have not ended */
    uint32_t user_tp; /* the last of them */
};

/** A taskpool starts / stops using a datum (and its collection): while used, destroying
 * it is refused with RILL_ERR_BUSY. Main thread. */
void rill_data_use(rill_data_t *data, uint32_t tp_id);
void rill_data_unuse(rill_data_t *data);

/** Set up a datum's core fields; with ptr, its host copy (borrowed, or owned when
 * owns is true). */
rill_status_t rill_data_init(rill_data_t *data, rill_context_t *ctx, rill_collection_t *dc,
                             uint64_t key, int home_rank, void *ptr, size_t size, bool owns);
void rill_data_fini(rill_data_t *data);

/** The host copy (NULL when this rank has none). */
static inline rill_data_copy_t *rill_data_host_copy(const rill_data_t *data)
{
    return data->copies[0];
}

#endif
