/* caching_alloc.c — see caching_alloc.h. Blocks live in one array, linked per segment; the best
 * fit is a scan of the pool's free blocks, which stay few (hundreds) in training traces. */
#include "estimate/caching_alloc.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"

void ca_init(caching_alloc *ca)
{
    memset(ca, 0, sizeof *ca);
}

void ca_free_all(caching_alloc *ca)
{
    free(ca->blocks);
    free(ca->free_slots);
    memset(ca, 0, sizeof *ca);
}

uint64_t ca_round(uint64_t bytes)
{
    if (bytes < CA_MIN_BLOCK)
        return CA_MIN_BLOCK;
    return (bytes + CA_MIN_BLOCK - 1) / CA_MIN_BLOCK * CA_MIN_BLOCK;
}

uint64_t ca_segment_size(uint64_t rounded)
{
    if (rounded <= CA_SMALL_SIZE)
        return CA_SMALL_BUFFER;
    if (rounded < CA_MIN_LARGE_ALLOC)
        return CA_LARGE_BUFFER;
    return (rounded + CA_ROUND_LARGE - 1) / CA_ROUND_LARGE * CA_ROUND_LARGE;
}

static int new_slot(caching_alloc *ca)
{
    if (ca->nfree_slots)
        return ca->free_slots[--ca->nfree_slots];
    ca_block *nb = array_grow(ca->blocks, &ca->cap, ca->nblocks + 1, sizeof *nb, 256);
    if (!nb)
        return -1;
    ca->blocks = nb;
    return (int)ca->nblocks++;
}

static int drop_slot(caching_alloc *ca, int i)
{
    int *ns = array_grow(ca->free_slots, &ca->free_cap, ca->nfree_slots + 1, sizeof *ns, 64);
    ca->blocks[i].used = -1;
    if (!ns)
        return -1; /* the slot is only lost for reuse */
    ca->free_slots = ns;
    ca->free_slots[ca->nfree_slots++] = i;
    return 0;
}

/* Best fit: the smallest free block of the pool that holds `size`, lowest address on ties
 * (the order of the allocator's std::set of (stream, size, address)). */
static int best_fit(const caching_alloc *ca, int pool, uint64_t size)
{
    int best = -1;
    for (size_t i = 0; i < ca->nblocks; i++) {
        const ca_block *b = &ca->blocks[i];
        if (b->used != 0 || b->pool != pool || b->size < size)
            continue;
        if (best < 0 || b->size < ca->blocks[best].size ||
            (b->size == ca->blocks[best].size && b->addr < ca->blocks[best].addr))
            best = (int)i;
    }
    return best;
}

static int should_split(int pool, uint64_t remaining)
{
    return pool == 0 ? remaining >= CA_MIN_BLOCK : remaining > CA_SMALL_SIZE;
}

int ca_alloc(caching_alloc *ca, uint64_t bytes)
{
    uint64_t size = ca_round(bytes);
    int pool = size <= CA_SMALL_SIZE ? 0 : 1;
    int b = best_fit(ca, pool, size);
    if (b < 0) { /* cudaMalloc a new segment: one free block spanning it */
        uint64_t seg = ca_segment_size(size);
        if ((b = new_slot(ca)) < 0)
            return -1;
        ca->blocks[b] = (ca_block){.addr = ca->next_addr, .size = seg, .prev = -1, .next = -1,
                                   .pool = pool, .used = 0};
        ca->next_addr += seg;
        ca->reserved += seg;
        ca->segments++;
        if (ca->reserved > ca->peak_reserved)
            ca->peak_reserved = ca->reserved;
    }
    uint64_t remaining = ca->blocks[b].size - size;
    if (should_split(pool, remaining)) {
        int r = new_slot(ca);
        if (r < 0)
            return -1;
        ca_block *blk = &ca->blocks[b]; /* new_slot may have moved the array */
        ca->blocks[r] = (ca_block){.addr = blk->addr + size, .size = remaining, .prev = b,
                                   .next = blk->next, .pool = pool, .used = 0};
        if (blk->next >= 0)
            ca->blocks[blk->next].prev = r;
        blk->next = r;
        blk->size = size;
    }
    ca->blocks[b].used = 1;
    ca->allocated += ca->blocks[b].size;
    if (ca->allocated > ca->peak_allocated)
        ca->peak_allocated = ca->allocated;
    return b;
}

/* Merges free block `src` into its free neighbour `dst` (dst directly before src). */
static void merge_into(caching_alloc *ca, int dst, int src)
{
    ca_block *d = &ca->blocks[dst], *s = &ca->blocks[src];
    d->size += s->size;
    d->next = s->next;
    if (s->next >= 0)
        ca->blocks[s->next].prev = dst;
    drop_slot(ca, src);
}

void ca_release(caching_alloc *ca, int h)
{
    if (h < 0 || (size_t)h >= ca->nblocks || ca->blocks[h].used != 1)
        return;
    ca_block *b = &ca->blocks[h];
    ca->allocated -= b->size;
    b->used = 0;
    int next = b->next, prev = b->prev;
    if (next >= 0 && ca->blocks[next].used == 0)
        merge_into(ca, h, next);
    if (prev >= 0 && ca->blocks[prev].used == 0)
        merge_into(ca, prev, h);
}
