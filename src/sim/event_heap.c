/* event_heap.c — 4-ary min-heap of simulator events ordered by (time, push order). */
#include "sim/event_heap.h"
#include "util/array.h"

#include <stdlib.h>

static bool earlier(const sim_event *a, const sim_event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void event_heap_init(event_heap *h)
{
    h->items = NULL;
    h->n = h->cap = 0;
    h->next_seq = 0;
}

void event_heap_free(event_heap *h)
{
    free(h->items);
    event_heap_init(h);
}

/* A 4-ary heap: half the levels of a binary one, and a node's children share a cache line or
 * two. At scale (100,000 jobs, a heap of some 10^5 events) popping is a tenth of the run. */
#define ARITY 4

int event_heap_push(event_heap *h, double time, sim_event_kind kind, int32_t job,
                    uint32_t version)
{
    sim_event *items = array_grow(h->items, &h->cap, h->n + 1, sizeof *items, 256);
    if (!items)
        return -1;
    h->items = items;
    sim_event e = {time, h->next_seq++, kind, job, version};
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!earlier(&e, &h->items[parent]))
            break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = e;
    return 0;
}

bool event_heap_pop(event_heap *h, sim_event *out)
{
    if (h->n == 0)
        return false;
    *out = h->items[0];
    sim_event last = h->items[--h->n];
    size_t n = h->n, i = 0;
    for (;;) {
        size_t first = ARITY * i + 1;
        if (first >= n)
            break;
        size_t end = first + ARITY < n ? first + ARITY : n, child = first;
        for (size_t c = first + 1; c < end; c++)
            if (earlier(&h->items[c], &h->items[child]))
                child = c;
        if (!earlier(&h->items[child], &last))
            break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (n > 0)
        h->items[i] = last;
    return true;
}

const sim_event *event_heap_peek(const event_heap *h)
{
    return h->n ? &h->items[0] : NULL;
}
