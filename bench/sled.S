/* A workload that spreads its samples over many distinct instruction addresses: SLED_FUNCS
 * functions of SLED_NOPS one-byte nops each, run straight through (each falls into the next)
 * in a loop. Each IP is its own slot of the sample map, so two copies of it fill the map
 * with about 2 x SLED_FUNCS x SLED_NOPS keys, for top's benchmark. */
#ifndef SLED_FUNCS
#define SLED_FUNCS 1600
#endif
#ifndef SLED_NOPS
#define SLED_NOPS 32
#endif

	.altmacro
	.macro func n
	.globl sled_\n
	.type sled_\n, @function
sled_\n:
	.rept SLED_NOPS
	nop
	.endr
	.size sled_\n, . - sled_\n
	.endm

	.text
	.globl main
	.type main, @function
main:
	jmp sled_0
	.size main, . - main

	.set i, 0
	.rept SLED_FUNCS
	func %i
	.set i, i + 1
	.endr

	.globl sled_end
	.type sled_end, @function
sled_end:
	jmp sled_0
	.size sled_end, . - sled_end

	.section .note.GNU-stack, "", @progbits
