/* caching_alloc.h — a model of PyTorch 2.x's CUDA caching allocator on one stream (default
 * settings, no PYTORCH_CUDA_ALLOC_CONF): what `memory_reserved` (the part of nvidia-smi's
 * figure that tensors cause) reaches for a sequence of requests and releases. The rules, from
 * c10/cuda/CUDACachingAllocator.cpp:
 *   - every request is rounded up to a multiple of 512 B;
 *   - requests <= 1 MiB come from the small pool, whose segments are 2 MiB; larger ones from the
 *     large pool, whose segments are 20 MiB for requests under 10 MiB, else the request rounded
 *     up to 2 MiB;
 *   - a request takes the smallest free block of its pool that fits (ties: lowest address);
 *   - the block is split when the remainder is >= 512 B (small pool) or > 1 MiB (large pool);
 *   - a released block merges with free neighbours of its segment; segments are never returned
 *     (no empty_cache, no memory pressure). */
#ifndef CARMA_ESTIMATE_CACHING_ALLOC_H
#define CARMA_ESTIMATE_CACHING_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#define CA_MIN_BLOCK 512u
#define CA_SMALL_SIZE (1u << 20)
#define CA_SMALL_BUFFER (2u << 20)
#define CA_MIN_LARGE_ALLOC (10u << 20)
#define CA_LARGE_BUFFER (20u << 20)
#define CA_ROUND_LARGE (2u << 20)

typedef struct ca_block {
    uint64_t addr, size;
    int prev, next; /* neighbours in the same segment, -1 at its ends */
    int pool;       /* 0 small, 1 large */
    int used;       /* 1 allocated, 0 free (cached), -1 slot unused */
} ca_block;

typedef struct caching_alloc {
    ca_block *blocks;
    size_t nblocks, cap;
    int *free_slots; /* unused entries of blocks, for reuse */
    size_t nfree_slots, free_cap;
    uint64_t next_addr;                   /* segments get disjoint, increasing addresses */
    uint64_t reserved, peak_reserved;     /* bytes in segments */
    uint64_t allocated, peak_allocated;   /* bytes in allocated blocks (rounded) */
    size_t segments;
} caching_alloc;

void ca_init(caching_alloc *ca);
void ca_free_all(caching_alloc *ca);

/* Rounds a request as the allocator does (512 B multiples, at least 512 B). */
uint64_t ca_round(uint64_t bytes);
/* The size of the segment cudaMalloc'ed for a (rounded) request that finds no cached block. */
uint64_t ca_segment_size(uint64_t rounded);

/* Allocates `bytes` (> 0); returns the block's handle (>= 0), or -1 when out of host memory. */
int ca_alloc(caching_alloc *ca, uint64_t bytes);
/* Releases a handle from ca_alloc. */
void ca_release(caching_alloc *ca, int handle);

#endif
