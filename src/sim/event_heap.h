/* event_heap.h — the simulator's event queue: a (4-ary) min-heap on (time, sequence), so events
 * at the same time come out in the order they were pushed. O(log n) push and pop. */
#ifndef CARMA_SIM_EVENT_HEAP_H
#define CARMA_SIM_EVENT_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sim_event_kind {
    EV_ARRIVAL = 0,  /* a job is submitted */
    EV_ALLOCATE,     /* a job's CPU start-up ends: it allocates GPU memory (or crashes) */
    EV_COMPLETE,     /* a job's run ends (stale when `version` is old) */
    EV_RAMP,         /* a job reaches its full memory peak (`version`: its attempt) */
    EV_RETRY         /* time alone may have changed what fits (grace expiry, windows) */
} sim_event_kind;

typedef struct sim_event {
    double time;
    uint64_t seq;     /* push order, breaks ties */
    sim_event_kind kind;
    int32_t job;      /* index of the job, -1 for EV_RETRY */
    uint32_t version; /* EV_COMPLETE: the job's run version when pushed; EV_RAMP: attempt */
} sim_event;

typedef struct event_heap {
    sim_event *items;
    size_t n, cap;
    uint64_t next_seq;
} event_heap;

void event_heap_init(event_heap *h);
void event_heap_free(event_heap *h);
/* Returns -1 on allocation failure. */
int event_heap_push(event_heap *h, double time, sim_event_kind kind, int32_t job,
                    uint32_t version);
/* Removes the earliest event into *out; false when empty. */
bool event_heap_pop(event_heap *h, sim_event *out);
/* The earliest event without removing it; NULL when empty. */
const sim_event *event_heap_peek(const event_heap *h);

#endif
