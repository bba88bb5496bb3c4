/* Seed kernel 3, short blocks (the G4Box case): chains of tests and branches with very short
 * basic blocks, the work split evenly between two functions.
 * argv[1]: points tested (default 80,000,000). */
#include <stdio.h>
#include <stdlib.h>

struct pt {
	double x, y, z;
};

__attribute__((noinline)) int inside_box(const struct pt *p)
{
	if (p->x < -1.0) return 0;
	if (p->x > 1.0) return 0;
	if (p->y < -2.0) return 0;
	if (p->y > 2.0) return 0;
	if (p->z < -3.0) return 0;
	if (p->z > 3.0) return 0;
	return 1;
}

__attribute__((noinline)) int on_surface(const struct pt *p)
{
	int n = 0;

	if (p->x > 0.9) n++;
	if (p->x < -0.9) n++;
	if (p->y > 1.9) n++;
	if (p->y < -1.9) n++;
	if (p->z > 2.9) n++;
	if (p->z < -2.9) n++;
	return n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 80000000, in = 0;
	unsigned long s = 12345;
	struct pt p;

	while (n--) {
		s = s * 6364136223846793005ul + 1442695040888963407ul;
		p.x = ((s >> 11) & 0xffff) / 16384.0 - 2.0;
		p.y = ((s >> 27) & 0xffff) / 8192.0 - 4.0;
		p.z = ((s >> 43) & 0xffff) / 5461.0 - 6.0;
		in += inside_box(&p) + on_surface(&p);
	}
	printf("%ld\n", in);
	return 0;
}
