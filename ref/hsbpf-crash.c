// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Preloaded into the program (inside the emulator only) so that a crash still ends through
 * exit_group, where QEMU 7.2 calls the collector's exit hook; a fatal signal otherwise kills
 * QEMU before the counts are written. The signal goes to $HSBPF_CRASH_FD, and hsbpf drops this
 * object's own instructions from the truth. */
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int report_fd = -1;
static char altstack[65536];

static void on_fatal(int sig)
{
	unsigned char s = sig;

	if (report_fd >= 0 && write(report_fd, &s, 1) != 1)
		s = 0;
	syscall(SYS_exit_group, 128 + sig);
}

__attribute__((constructor)) static void install(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS };
	struct sigaction sa = { .sa_handler = on_fatal, .sa_flags = SA_ONSTACK };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	const char *fd = getenv("HSBPF_CRASH_FD");

	report_fd = fd ? atoi(fd) : -1;
	sigaltstack(&ss, NULL);
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
