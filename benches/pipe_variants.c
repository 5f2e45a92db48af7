/*
 * pipe_variants: perf bench sched pipe's loop (two processes, read/write of an int, the
 * parent's loop timed with gettimeofday), with switches for what ctxbench's ping-pong does
 * differently, so each difference can be measured on its own (benches/pingpong.py):
 *   -t      an idle second thread in the parent (ctxbench's driver is a thread of a
 *           multi-threaded Python process: its watchdog runs beside it)
 *   -m MB   MB of written heap before the fork (ctxbench forks from a ~35 MB process)
 *   -l N    round trips (default 1000000)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
static void *idle(void *p) { (void)p; for (;;) pause(); return 0; }
int main(int argc, char **argv) {
	long loops = 1000000, mb = 0; int thread = 0, c;
	while ((c = getopt(argc, argv, "tm:l:")) != -1) {
		if (c == 't') thread = 1; else if (c == 'm') mb = atol(optarg); else if (c == 'l') loops = atol(optarg);
	}
	if (mb) { char *p = malloc(mb << 20); memset(p, 1, mb << 20); }
	int a[2], b[2]; if (pipe(a) || pipe(b)) return 1;
	pid_t pid = fork();
	if (pid == 0) {
		int m;
		for (long i = 0; i < loops; i++) { if (read(a[0], &m, sizeof m) != sizeof m) _exit(1); if (write(b[1], &m, sizeof m) != sizeof m) _exit(1); }
		_exit(0);
	}
	pthread_t t; if (thread) pthread_create(&t, 0, idle, 0);
	struct timeval s, e; gettimeofday(&s, 0);
	int m = 0;
	for (long i = 0; i < loops; i++) { if (write(a[1], &m, sizeof m) != sizeof m) return 1; if (read(b[0], &m, sizeof m) != sizeof m) return 1; }
	gettimeofday(&e, 0);
	waitpid(pid, 0, 0);
	double us = (e.tv_sec - s.tv_sec) * 1e6 + (e.tv_usec - s.tv_usec);
	printf("%.6f usecs/op\n", us / loops);
	return 0;
}
