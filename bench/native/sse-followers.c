/*
 * Live followers for bench:followers (LIVE_CLIENTS=native): COUNT HTTP/1.1
 * GETs of one SSE path on one loopback port, read with epoll in a single
 * thread, each event's `id:` stamped with CLOCK_MONOTONIC at the read that
 * brought the event's end (its blank line), as the bench's own client does. It exists because the bench's clients share the machine with the
 * instance they measure: the Node clients take about 0.65 of a core for 1 000
 * followers of a 100 tokens/s run, this one a fraction of that.
 *
 *   sse-followers HOST PORT PATH TOKEN COUNT
 *
 * stdout: "attached" once every follower has its first event (or has closed),
 * then, once every connection has closed, one line per follower: the ids it
 * read with their arrival times, "id:nanoseconds" separated by spaces, or
 * "!" and the HTTP status when its response was not a 200.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  long id;
  int64_t at;
} arrival;

typedef struct {
  int fd;
  int connected;
  int closed;
  /* The response's status (0 until the first 12 bytes, "HTTP/1.1 200", are read; -1 when they are no status line). */
  int status;
  char head[12];
  int head_len;
  /* Parser state: position in the current line (capped), whether the line is an id being read and has a digit yet,
     and the event's id once its line ended (-1: none), recorded at the blank line that ends the event. */
  int line_pos;
  int in_id;
  int digits;
  long id;
  long event_id;
  arrival *seen;
  size_t seen_len, seen_cap;
} follower;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void record(follower *f, long id, int64_t at) {
  if (f->seen_len == f->seen_cap) {
    f->seen_cap = f->seen_cap ? f->seen_cap * 2 : 256;
    f->seen = realloc(f->seen, f->seen_cap * sizeof(arrival));
    if (!f->seen) die("realloc");
  }
  f->seen[f->seen_len++] = (arrival){id, at};
}

/* Gathers the response's first 12 bytes, then reads its status from them ("HTTP/1.1 200"). */
static void read_status(follower *f, const char *data, ssize_t size) {
  while (f->head_len < (int)sizeof f->head && size-- > 0) f->head[f->head_len++] = *data++;
  if (f->head_len < (int)sizeof f->head) return;
  if (memcmp(f->head, "HTTP/1.", 7) != 0 || f->head[8] != ' ') {
    f->status = -1;
    return;
  }
  f->status = (f->head[9] - '0') * 100 + (f->head[10] - '0') * 10 + (f->head[11] - '0');
}

/*
 * Reads the lines "id: <digits>" and records the id, stamped `at`, at the
 * empty line that ends its event; everything else is skipped (headers,
 * chunk sizes, `event:` and `data:` lines).
 */
static void scan(follower *f, const char *data, ssize_t size, int64_t at) {
  static const char prefix[] = "id: ";
  for (ssize_t i = 0; i < size; i++) {
    char c = data[i];
    if (c == '\n') {
      if (f->line_pos == 0 && f->event_id >= 0) {
        record(f, f->event_id, at);
        f->event_id = -1;
      }
      if (f->in_id && f->digits) f->event_id = f->id;
      f->line_pos = 0;
      f->in_id = 0;
      f->digits = 0;
      f->id = 0;
      continue;
    }
    if (f->line_pos < 4) {
      f->in_id = c == prefix[f->line_pos];
      /* not an id line: skip to its end (a line that only starts like one is no id either) */
      f->line_pos = f->in_id ? f->line_pos + 1 : 5;
      continue;
    }
    if (f->line_pos == 4 && f->in_id) {
      if (c >= '0' && c <= '9' && f->digits < 18) {
        f->id = f->id * 10 + (c - '0');
        f->digits++;
      } else {
        f->in_id = 0;
      }
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s HOST PORT PATH TOKEN COUNT\n", argv[0]);
    return 2;
  }
  /* A follower's connection reset before its request was written: that follower fails, not the process. */
  signal(SIGPIPE, SIG_IGN);
  const char *host = argv[1];
  int port = atoi(argv[2]);
  int count = atoi(argv[5]);
  char request[4096];
  int request_len = snprintf(request, sizeof request,
                             "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n",
                             argv[3], host, port, argv[4]);
  if (request_len <= 0 || request_len >= (int)sizeof request) die("request too long");

  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
  if (inet_pton(AF_INET, host, &address.sin_addr) != 1) die("host must be an IPv4 address");

  int epoll = epoll_create1(0);
  if (epoll < 0) die("epoll_create1");
  follower *followers = calloc(count, sizeof(follower));
  if (!followers) die("calloc");
  for (int i = 0; i < count; i++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) die("socket");
    followers[i].fd = fd;
    followers[i].event_id = -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS) die("connect");
    struct epoll_event event = {.events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) < 0) die("epoll_ctl");
  }

  static char buffer[64 * 1024];
  struct epoll_event events[256];
  int open = count, attached = 0, announced = 0;
  while (open > 0) {
    int ready = epoll_wait(epoll, events, 256, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int e = 0; e < ready; e++) {
      follower *f = &followers[events[e].data.u32];
      if (f->closed) continue;
      if (!f->connected && (events[e].events & EPOLLOUT)) {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &error, &length);
        f->connected = 1;
        if (error || write(f->fd, request, request_len) != request_len) {
          events[e].events |= EPOLLHUP;
        } else {
          struct epoll_event in = {.events = EPOLLIN, .data.u32 = events[e].data.u32};
          epoll_ctl(epoll, EPOLL_CTL_MOD, f->fd, &in);
        }
      }
      int ended = (events[e].events & (EPOLLHUP | EPOLLERR)) != 0;
      if (events[e].events & EPOLLIN) {
        for (;;) {
          ssize_t size = read(f->fd, buffer, sizeof buffer);
          if (size > 0) {
            size_t before = f->seen_len;
            if (f->status == 0) read_status(f, buffer, size);
            if (f->status != 0 && f->status != 200) {
              ended = 1;
              break;
            }
            scan(f, buffer, size, now_ns());
            if (before == 0 && f->seen_len > 0) attached++;
            if (size < (ssize_t)sizeof buffer) break;
            continue;
          }
          if (size == 0 || (errno != EAGAIN && errno != EINTR)) ended = 1;
          if (size < 0 && errno == EINTR) continue;
          break;
        }
      }
      if (ended) {
        if (f->seen_len == 0) attached++;
        f->closed = 1;
        close(f->fd);
        open--;
      }
      if (!announced && attached == count) {
        announced = 1;
        fputs("attached\n", stdout);
        fflush(stdout);
      }
    }
  }
  for (int i = 0; i < count; i++) {
    if (followers[i].status != 200) printf("!%d", followers[i].status);
    for (size_t k = 0; k < followers[i].seen_len; k++)
      printf(k ? " %ld:%lld" : "%ld:%lld", followers[i].seen[k].id, (long long)followers[i].seen[k].at);
    putchar('\n');
  }
  fflush(stdout);
  return 0;
}
