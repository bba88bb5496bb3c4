/* Seed kernel 1, latency-biased: while (n--) ((n % 2) ? x /= y : x += y);
 * the long-latency division gathers samples beyond its share of instructions.
 * argv[1]: iterations (default 500,000,000). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) double kernel(long n, double x, double y)
{
	while (n--)
		((n % 2) ? (x /= y) : (x += y));
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000000;

	printf("%g\n", kernel(n, 1.0, 1.0000001));
	return 0;
}
