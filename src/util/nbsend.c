/* nbsend.c — a non-blocking socket's pending output, sent as far as it goes (nbsend.h). */
#include "util/nbsend.h"

#include <errno.h>
#include <sys/socket.h>

bool nb_send(int fd, const char *buf, size_t len, size_t *off)
{
    while (*off < len) {
        ssize_t w = send(fd, buf + *off, len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        *off += (size_t)w;
    }
    return true;
}
