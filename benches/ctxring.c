/*
 * ctxring: a minimal lat_ctx-style ring in plain C, written for ctxbench as an independent
 * reference (benches/reference.py compiles it with `cc -O2` and alternates it with
 * `ctxbench lat-ctx`).
 *
 *   ctxring [-s KB] [-N reps] [-T seconds] [-1] [-I] [-Z pattern|memset|calloc] procs
 *
 * The classic algorithm: `procs` pipes; participants 1..procs-1 are forked, participant i
 * reads a 4-byte token from pipe i-1, sums its private array, adds one to the token and
 * writes it to pipe i; participant 0 (this process) writes pipe 0 ... reads pipe procs-1,
 * sums its own array, and times whole trips. The overhead is measured first, in this process
 * alone with hot caches: per hop, write the token into pipe i, read it back, sum the array,
 * cycling over the `procs` pipes. Per switch = trip / procs - overhead per hop.
 * -1 pins everything to one CPU (the lowest this process may use) with sched_setaffinity
 * before forking, like LMBENCH_SCHED=SINGLE.
 * -I is for experiments: after every timed repetition this process runs the overhead loop
 * again, untimed, for as many hops, on pipes of its own, while the ring idles, as
 * ctxbench does when it interleaves its overhead measurement.
 *
 * -Z says how each participant's array is made. "pattern" (the default): mapped before
 * forking, word i set to i, rewritten by each child so its pages are its own; every pass is
 * checked. "memset" and "calloc" do what lmbench3's lat_ctx does, each participant after
 * forking: malloc + bzero, which gcc -O2 turns into calloc (so "memset" calls memset through
 * a volatile pointer to keep its stores), or calloc itself. Fresh pages from calloc are
 * never written: above glibc's mmap threshold (128 KiB) every read maps the kernel's shared
 * zero page, one hot 4 KiB page whatever -s says. Both sum zeros (checksum 0).
 *
 * The workload is the definition ctxbench's src/workload.rs uses, that of lmbench3's bread:
 * 8-byte words; blocks of 128 words, each summed as one expression of 128 terms and then
 * added to the running sum; then blocks of 16 words the same way; then single words. Word i
 * holds i, so a pass over n words returns n(n-1)/2, which every participant checks on every
 * pass (a wrong sum ends it, and a participant's death fails the run).
 *
 * switches_per_hop: the participants' context switches (voluntary and involuntary, from
 * getrusage(RUSAGE_CHILDREN) once they are reaped) over the hops they made (one per trip),
 * as ctxbench's switches_per_hop counts them.
 *
 * Each of `reps` repetitions (11 by default) runs enough trips to last `seconds` (0.01 by
 * default, calibrated once); the medians are reported. Output: one line of key=value pairs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXPROCS 4096
#define MAXREPS 1000

typedef uint64_t word;

#define W1(i) p[i]
#define W2(i) W1(i) + W1(i + 1)
#define W4(i) W2(i) + W2(i + 2)
#define W8(i) W4(i) + W4(i + 4)
#define W16(i) W8(i) + W8(i + 8)
#define W32(i) W16(i) + W16(i + 16)
#define W64(i) W32(i) + W32(i + 32)
#define W128(i) W64(i) + W64(i + 64)

/* One pass over `n` words; see the header. Not inlined: one fixed piece of code. */
__attribute__((noinline)) static word sum_words(const word *p, size_t n)
{
	word sum = 0;
	for (; n >= 128; n -= 128, p += 128)
		sum += W128(0);
	for (; n >= 16; n -= 16, p += 16)
		sum += W16(0);
	for (; n > 0; n--, p++)
		sum += *p;
	return sum;
}

static word *data;
static size_t words;
static word expected;
enum fill { PATTERN, MEMSET, CALLOC };
static enum fill fill = PATTERN;
/* Through a volatile pointer, gcc cannot fold malloc + memset into calloc. */
static void *(*volatile memset_v)(void *, int, size_t) = memset;

/* lmbench3's way, in the participant that will sum it (see -Z). */
static void own_array(void)
{
	if (!words)
		return;
	if (fill == CALLOC) {
		data = calloc(words, sizeof(word));
	} else {
		data = malloc(words * sizeof(word));
		if (data)
			memset_v(data, 0, words * sizeof(word));
	}
	if (!data) {
		fprintf(stderr, "ctxring: out of memory\n");
		_exit(1);
	}
}

static void die(const char *what)
{
	fprintf(stderr, "ctxring: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void work(void)
{
	if (words && sum_words(data, words) != expected) {
		fprintf(stderr, "ctxring: wrong checksum\n");
		_exit(3);
	}
}

static void put(int fd, int32_t *tok)
{
	if (write(fd, tok, sizeof *tok) != sizeof *tok)
		die("write");
}

static void get(int fd, int32_t *tok)
{
	ssize_t r = read(fd, tok, sizeof *tok);
	if (r != sizeof *tok) {
		if (r == 0)
			errno = EPIPE;
		die("read");
	}
}

/* The overhead: `hops` times, write the token into pipe i of `p` and read it back, then sum,
 * cycling over `procs` pipes. */
static void overhead(int (*p)[2], int procs, long hops, int32_t *tok)
{
	for (long h = 0, i = 0; h < hops; h++, i = i + 1 == procs ? 0 : i + 1) {
		put(p[i][1], tok);
		get(p[i][0], tok);
		work();
	}
}

static void participant_died(int sig)
{
	static const char msg[] = "ctxring: a participant died\n";
	(void)sig;
	(void)!write(2, msg, sizeof msg - 1);
	_exit(1);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *xs, int n)
{
	qsort(xs, n, sizeof *xs, cmp);
	return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	long kb = 0;
	int reps = 11, pin = 0, interleave = 0, c;
	double min_time = 0.01;
	while ((c = getopt(argc, argv, "s:N:T:1IZ:")) != -1) {
		switch (c) {
		case 's': kb = atol(optarg); break;
		case 'N': reps = atoi(optarg); break;
		case 'T': min_time = atof(optarg); break;
		case '1': pin = 1; break;
		case 'I': interleave = 1; break;
		case 'Z':
			fill = !strcmp(optarg, "pattern") ? PATTERN
			     : !strcmp(optarg, "memset")  ? MEMSET
			     : !strcmp(optarg, "calloc")  ? CALLOC : (enum fill)-1;
			if (fill != PATTERN && fill != MEMSET && fill != CALLOC)
				goto usage;
			break;
		default: goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	int procs = atoi(argv[optind]);
	if (procs < 2 || procs > MAXPROCS || kb < 0 || reps < 1 || reps > MAXREPS || min_time <= 0)
		goto usage;

	if (pin) {
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof set, &set))
			die("sched_getaffinity");
		int cpu = 0;
		while (!CPU_ISSET(cpu, &set))
			cpu++;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof set, &set))
			die("sched_setaffinity");
	}
	words = (size_t)kb * 1024 / sizeof(word);
	expected = fill == PATTERN ? (word)words * (words ? words - 1 : 0) / 2 : 0;
	if (fill != PATTERN) {
		own_array();
	} else if (words) {
		data = mmap(NULL, words * sizeof(word), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (data == MAP_FAILED)
			die("mmap");
		for (size_t i = 0; i < words; i++)
			data[i] = i;
	}
	/* Two descriptors per pipe: raise the soft limit to the hard one for large rings. */
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
	static int fds[MAXPROCS][2], ofds[MAXPROCS][2];
	for (int i = 0; i < procs; i++)
		if (pipe(fds[i]) || (interleave && pipe(ofds[i])))
			die("pipe");
	int32_t tok = 0;
	long all_trips = 0; /* every trip the participants make: one hop each */
	/* A participant that dies is reported by SIGCHLD; a hung ring ends here. */
	alarm(300);
	double t, per_hop[MAXREPS], per_switch[MAXREPS], trip_us[MAXREPS];

	/* Overhead: this process alone, hot caches, the same pipes and work. */
	long hops = 1;
	for (;;) {
		t = now();
		overhead(fds, procs, hops, &tok);
		t = now() - t;
		if (t >= min_time)
			break;
		hops = t > min_time / 64 ? (long)(hops * min_time / t * 1.1) + 1 : hops * 8;
	}
	for (int r = 0; r < reps; r++) {
		t = now();
		overhead(fds, procs, hops, &tok);
		per_hop[r] = (now() - t) / hops * 1e6;
	}
	double ovr = median(per_hop, reps);

	pid_t pids[MAXPROCS];
	signal(SIGCHLD, participant_died);
	for (int i = 1; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (fill != PATTERN) {
				/* As lmbench3, a fresh array of the child's own; the parent's copy is
				 * left alone (freeing it would hand calloc a used chunk to clear). */
				own_array();
			} else {
				/* Rewrite the pattern: the copy-on-write pages become this child's own. */
				for (size_t w = 0; w < words; w++)
					data[w] = w;
			}
			for (;;) {
				get(fds[i - 1][0], &tok);
				work();
				tok++;
				put(fds[i][1], &tok);
			}
		}
	}
	/* One untimed trip starts everyone and faults their arrays in (at large sizes it alone
	 * can outlast -T, which would leave the calibration at one trip); then calibrate. */
	put(fds[0][1], &tok);
	get(fds[procs - 1][0], &tok);
	work();
	all_trips++;
	long trips = 1;
	for (;;) {
		t = now();
		for (long k = 0; k < trips; k++) {
			int32_t sent = tok;
			put(fds[0][1], &tok);
			get(fds[procs - 1][0], &tok);
			work();
			if (tok != sent + procs - 1) {
				fprintf(stderr, "ctxring: token lost\n");
				exit(1);
			}
		}
		t = now() - t;
		all_trips += trips;
		if (t >= min_time)
			break;
		trips = t > min_time / 64 ? (long)(trips * min_time / t * 1.1) + 1 : trips * 8;
	}
	for (int r = 0; r < reps; r++) {
		t = now();
		for (long k = 0; k < trips; k++) {
			put(fds[0][1], &tok);
			get(fds[procs - 1][0], &tok);
			work();
		}
		trip_us[r] = (now() - t) / trips * 1e6;
		all_trips += trips;
		per_switch[r] = trip_us[r] / procs - ovr;
		if (interleave)
			overhead(ofds, procs, hops, &tok);
	}
	signal(SIGCHLD, SIG_DFL);
	for (int i = 1; i < procs; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	double switches = (double)(ru.ru_nvcsw + ru.ru_nivcsw) / ((double)all_trips * (procs - 1));
	printf("procs=%d size_kb=%ld per_switch_us=%.4f ovr_us=%.4f trip_us=%.4f reps=%d "
	       "trips=%ld hops=%ld switches_per_hop=%.3f\n",
	       procs, kb, median(per_switch, reps), ovr, median(trip_us, reps), reps, trips, hops,
	       switches);
	return 0;
usage:
	fprintf(stderr, "usage: ctxring [-s KB] [-N reps] [-T seconds] [-1] [-I] "
			"[-Z pattern|memset|calloc] procs\n");
	return 2;
}
