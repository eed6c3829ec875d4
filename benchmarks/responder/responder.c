/* A minimal HTTP/1.1 responder for measuring load generators, not servers.
 *
 * One thread, epoll, level-triggered. Every request (a head ending in a blank
 * line; no bodies) gets the same 13-byte answer; pipelined requests get one
 * answer each, written together. A request asking `Connection: close` is
 * answered and the connection closed. It does so little per request that
 * the generator, not the responder, is what runs out of core first.
 *
 *   cc -O2 -o responder responder.c && taskset -c 1 ./responder 18700
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char ANSWER[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";

/* Bytes of an unfinished head carried over between reads, per descriptor (heads here are < 256 bytes). */
#define CARRY 512
static char carry[65536][CARRY];
static int carried[65536];

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 18700;
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {htonl(INADDR_LOOPBACK)}};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096)) {
        perror("responder: bind/listen");
        return 1;
    }
    int epoll = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener}, events[512];
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    static char buffer[65536], out[65536];
    for (;;) {
        int ready = epoll_wait(epoll, events, 512, -1);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (client >= 65536) { close(client); continue; }
                    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    carried[client] = 0;
                    struct epoll_event add = {.events = EPOLLIN, .data.fd = client};
                    epoll_ctl(epoll, EPOLL_CTL_ADD, client, &add);
                }
                continue;
            }
            ssize_t got = read(fd, buffer, sizeof buffer);
            if (got <= 0) { close(fd); continue; }
            /* Count complete heads: the carry-over, then this read. */
            int answers = 0, close_after = 0;
            char *data = buffer;
            size_t length = (size_t)got;
            if (carried[fd] + length < CARRY) {
                memcpy(carry[fd] + carried[fd], buffer, length);
                data = carry[fd];
                length += carried[fd];
            }
            size_t start = 0;
            for (size_t at = 3; at < length; at++) {
                if (data[at] == '\n' && data[at - 1] == '\r' && data[at - 2] == '\n' && data[at - 3] == '\r') {
                    if (memmem(data + start, at - start, "Connection: close", 17)) close_after = 1;
                    answers++;
                    start = at + 1;
                }
            }
            size_t rest = length - start;
            if (data == carry[fd]) memmove(carry[fd], carry[fd] + start, rest);
            else if (rest < CARRY) memcpy(carry[fd], data + start, rest);
            carried[fd] = rest < CARRY ? (int)rest : 0;
            size_t written = 0;
            for (int k = 0; k < answers && written + sizeof ANSWER < sizeof out; k++) {
                memcpy(out + written, ANSWER, sizeof ANSWER - 1);
                written += sizeof ANSWER - 1;
            }
            if (written && write(fd, out, written) < 0) { close(fd); continue; }
            if (close_after) close(fd);
        }
    }
}
