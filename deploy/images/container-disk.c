/*
 * qvirt's container-disk helper: the process a containerDisk's container runs, copied into the
 * launcher pod's shared bin dir by the container-disk-binary init container, so it must be static
 * (disk images have no libc). Same contract as KubeVirt's cmd/container-disk:
 *   container-disk --no-op             exit 0 (the -init containers only pull the image early)
 *   container-disk --copy-path PATH    listen on PATH.sock and stay up; the node agent finds the
 *                                      disk through the socket's owner; exit on SIGTERM or when the
 *                                      socket file is removed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char sock_path[108];

static void on_term(int sig) {
  (void)sig;
  if (sock_path[0]) unlink(sock_path);
  _exit(0);
}

static int fail(const char *what, const char *path) {
  fprintf(stderr, "container-disk: %s %s: %s\n", what, path, strerror(errno));
  return 1;
}

int main(int argc, char **argv) {
  const char *copy_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-op") == 0) return 0;
    if (strcmp(argv[i], "--copy-path") == 0 && i + 1 < argc) copy_path = argv[++i];
    else if (strncmp(argv[i], "--copy-path=", 12) == 0) copy_path = argv[i] + 12;
    else { fprintf(stderr, "container-disk: unknown argument %s (usage: --no-op | --copy-path PATH)\n", argv[i]); return 1; }
  }
  if (!copy_path) { fprintf(stderr, "container-disk: --copy-path PATH or --no-op is required\n"); return 1; }
  if (strlen(copy_path) > 102) { fprintf(stderr, "container-disk: --copy-path: longer than 102 characters\n"); return 1; }
  snprintf(sock_path, sizeof sock_path, "%s.sock", copy_path);

  char dir[108];
  snprintf(dir, sizeof dir, "%s", copy_path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) { *slash = 0; if (mkdir(dir, 0777) != 0 && errno != EEXIST) return fail("cannot create disk directory", dir); }

  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return fail("cannot create socket", sock_path);
  fcntl(fd, F_SETFL, O_NONBLOCK);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, sock_path, strlen(sock_path));
  unlink(sock_path);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) return fail("cannot bind", sock_path);
  if (listen(fd, 50) != 0) return fail("cannot listen on", sock_path);

  /* Accept and close whatever connects (the queue must not fill); stop once the socket is gone. */
  for (;;) {
    int c = accept(fd, NULL, NULL);
    if (c >= 0) { close(c); continue; }
    if (errno != EAGAIN && errno != EWOULDBLOCK) return fail("accept failed on", sock_path);
    struct stat st;
    if (stat(sock_path, &st) != 0) return 0;
    sleep(1);
  }
}
