/* fdclose.h — closing a range of descriptors in a child before it execs another program (a
 * task, the xmem tracer): what the parent had open is not the program's. */
#ifndef CARMA_UTIL_FDCLOSE_H
#define CARMA_UTIL_FDCLOSE_H

/* Closes the descriptors lo..hi: close_range(2) where the kernel has it, else (a kernel before
 * 5.9, a container's seccomp profile) one by one, those /proc/self/fd lists, else every number
 * below the open-files limit. 0, or -1 when none of these could be done. */
int fd_close_span(unsigned lo, unsigned hi);

#endif
