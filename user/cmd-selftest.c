// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf selftest: load every BPF program through the verifier, as the tests do, so that a
 * user can check a machine before recording on it. */
#include <stdio.h>
#include "cmds.h"
#include "sampler.h"

int cmd_selftest(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (sampler__verify_all())
		return 1;
	printf("every BPF program loads on this kernel\n");
	return 0;
}
