/*
 * noperf: an LD_PRELOAD shim that makes perf_event_open fail with EACCES, as it does for an
 * unprivileged user under perf_event_paranoid >= 2, so that a program runs with no perf event
 * at all and nothing else changed (benches/observer.py compiles it with `cc -O2 -shared`).
 * It wraps glibc's syscall(), through which perf-event2 (and perf's own tools) reach
 * perf_event_open; every other call goes through unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_perf_event_open) {
		errno = EACCES;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
