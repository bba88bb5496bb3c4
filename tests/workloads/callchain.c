/* Seed kernel 2, call chain: a 10-deep chain of functions doing equal work, inside a loop.
 * argv[1]: iterations of the loop (default 3,200,000). */
#include <stdio.h>
#include <stdlib.h>

#define WORK(x)                                 \
	for (int i = 0; i < 40; i++)            \
		x = x * 2862933555777941757ul + i;

__attribute__((noinline)) unsigned long f9(unsigned long x) { WORK(x) return x; }
__attribute__((noinline)) unsigned long f8(unsigned long x) { WORK(x) return f9(x); }
__attribute__((noinline)) unsigned long f7(unsigned long x) { WORK(x) return f8(x); }
__attribute__((noinline)) unsigned long f6(unsigned long x) { WORK(x) return f7(x); }
__attribute__((noinline)) unsigned long f5(unsigned long x) { WORK(x) return f6(x); }
__attribute__((noinline)) unsigned long f4(unsigned long x) { WORK(x) return f5(x); }
__attribute__((noinline)) unsigned long f3(unsigned long x) { WORK(x) return f4(x); }
__attribute__((noinline)) unsigned long f2(unsigned long x) { WORK(x) return f3(x); }
__attribute__((noinline)) unsigned long f1(unsigned long x) { WORK(x) return f2(x); }
__attribute__((noinline)) unsigned long f0(unsigned long x) { WORK(x) return f1(x); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3200000;
	unsigned long x = 1;

	while (n--)
		x = f0(x);
	printf("%lu\n", x);
	return 0;
}
