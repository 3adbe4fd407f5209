/* nbsend.h — writing a buffer to a non-blocking socket a piece at a time, as a poll loop does:
 * what the socket takes now, no more, never blocking and never raising SIGPIPE. */
#ifndef CARMA_UTIL_NBSEND_H
#define CARMA_UTIL_NBSEND_H

#include <stdbool.h>
#include <stddef.h>

/* Sends buf[*off..len) until it is all sent or the socket would block, advancing *off. False
 * when the peer is gone (a send error other than would-block or an interrupt). */
bool nb_send(int fd, const char *buf, size_t len, size_t *off);

#endif
