/* Seed kernel 4, fragmented (the Geant4 test40 case): many small methods, executed
 * conditionally on a simulated particle's position and material, giving a long-tail profile.
 * Generated shape: 48 methods in 6 materials; the particle walks a 3-D grid whose cells hold
 * materials with very unequal volumes. argv[1]: steps (default 45,000,000). */
#include <stdio.h>
#include <stdlib.h>

struct particle {
	double x, y, z, e;
	unsigned long rng;
};

static double rnd(struct particle *p)
{
	p->rng = p->rng * 6364136223846793005ul + 1442695040888963407ul;
	return (p->rng >> 11) * (1.0 / 9007199254740992.0);
}

__attribute__((noinline)) void method_0(struct particle *p)
{
	for (int i = 0; i < 1; i++)
		p->e = p->e * 0.9990 + 0.000;
}

__attribute__((noinline)) void method_1(struct particle *p)
{
	for (int i = 0; i < 2; i++)
		p->e = p->e * 0.9989 + 0.001;
}

__attribute__((noinline)) void method_2(struct particle *p)
{
	for (int i = 0; i < 3; i++)
		p->e = p->e * 0.9988 + 0.002;
}

__attribute__((noinline)) void method_3(struct particle *p)
{
	for (int i = 0; i < 4; i++)
		p->e = p->e * 0.9987 + 0.003;
}

__attribute__((noinline)) void method_4(struct particle *p)
{
	for (int i = 0; i < 5; i++)
		p->e = p->e * 0.9986 + 0.004;
}

__attribute__((noinline)) void method_5(struct particle *p)
{
	for (int i = 0; i < 6; i++)
		p->e = p->e * 0.9985 + 0.005;
}

__attribute__((noinline)) void method_6(struct particle *p)
{
	for (int i = 0; i < 7; i++)
		p->e = p->e * 0.9984 + 0.006;
}

__attribute__((noinline)) void method_7(struct particle *p)
{
	for (int i = 0; i < 1; i++)
		p->e = p->e * 0.9983 + 0.007;
}

__attribute__((noinline)) void method_8(struct particle *p)
{
	for (int i = 0; i < 2; i++)
		p->e = p->e * 0.9982 + 0.008;
}

__attribute__((noinline)) void method_9(struct particle *p)
{
	for (int i = 0; i < 3; i++)
		p->e = p->e * 0.9981 + 0.009;
}

__attribute__((noinline)) void method_10(struct particle *p)
{
	for (int i = 0; i < 4; i++)
		p->e = p->e * 0.9980 + 0.010;
}

__attribute__((noinline)) void method_11(struct particle *p)
{
	for (int i = 0; i < 5; i++)
		p->e = p->e * 0.9979 + 0.011;
}

__attribute__((noinline)) void method_12(struct particle *p)
{
	for (int i = 0; i < 6; i++)
		p->e = p->e * 0.9978 + 0.012;
}

__attribute__((noinline)) void method_13(struct particle *p)
{
	for (int i = 0; i < 7; i++)
		p->e = p->e * 0.9977 + 0.013;
}

__attribute__((noinline)) void method_14(struct particle *p)
{
	for (int i = 0; i < 1; i++)
		p->e = p->e * 0.9976 + 0.014;
}

__attribute__((noinline)) void method_15(struct particle *p)
{
	for (int i = 0; i < 2; i++)
		p->e = p->e * 0.9975 + 0.015;
}

__attribute__((noinline)) void method_16(struct particle *p)
{
	for (int i = 0; i < 3; i++)
		p->e = p->e * 0.9974 + 0.016;
}

__attribute__((noinline)) void method_17(struct particle *p)
{
	for (int i = 0; i < 4; i++)
		p->e = p->e * 0.9973 + 0.017;
}

__attribute__((noinline)) void method_18(struct particle *p)
{
	for (int i = 0; i < 5; i++)
		p->e = p->e * 0.9972 + 0.018;
}

__attribute__((noinline)) void method_19(struct particle *p)
{
	for (int i = 0; i < 6; i++)
		p->e = p->e * 0.9971 + 0.019;
}

__attribute__((noinline)) void method_20(struct particle *p)
{
	for (int i = 0; i < 7; i++)
		p->e = p->e * 0.9970 + 0.020;
}

__attribute__((noinline)) void method_21(struct particle *p)
{
	for (int i = 0; i < 1; i++)
		p->e = p->e * 0.9969 + 0.021;
}

__attribute__((noinline)) void method_22(struct particle *p)
{
	for (int i = 0; i < 2; i++)
		p->e = p->e * 0.9968 + 0.022;
}

__attribute__((noinline)) void method_23(struct particle *p)
{
	for (int i = 0; i < 3; i++)
		p->e = p->e * 0.9967 + 0.023;
}

__attribute__((noinline)) void method_24(struct particle *p)
{
	for (int i = 0; i < 4; i++)
		p->e = p->e * 0.9966 + 0.024;
}

__attribute__((noinline)) void method_25(struct particle *p)
{
	for (int i = 0; i < 5; i++)
		p->e = p->e * 0.9965 + 0.025;
}

__attribute__((noinline)) void method_26(struct particle *p)
{
	for (int i = 0; i < 6; i++)
		p->e = p->e * 0.9964 + 0.026;
}

__attribute__((noinline)) void method_27(struct particle *p)
{
	for (int i = 0; i < 7; i++)
		p->e = p->e * 0.9963 + 0.027;
}

__attribute__((noinline)) void method_28(struct particle *p)
{
	for (int i = 0; i < 1; i++)
		p->e = p->e * 0.9962 + 0.028;
}

__attribute__((noinline)) void method_29(struct particle *p)
{
	for (int i = 0; i < 2; i++)
		p->e = p->e * 0.9961 + 0.029;
}

__attribute__((noinline)) void method_30(struct particle *p)
{
	for (int i = 0; i < 3; i++)
		p->e = p->e * 0.9960 + 0.030;
}

__attribute__((noinline)) void method_31(struct particle *p)
{
	for (int i = 0; i < 4; i++)
		p->e = p->e * 0.9959 + 0.031;
}

__attribute__((noinline)) void method_32(struct particle *p)
{
	for (int i = 0; i < 5; i++)
		p->e = p->e * 0.9958 + 0.032;
}

__attribute__((noinline)) void method_33(struct particle *p)
{
	for (int i = 0; i < 6; i++)
		p->e = p->e * 0.9957 + 0.033;
}

__attribute__((noinline)) void method_34(struct particle *p)
{
	for (int i = 0; i < 7; i++)
		p->e = p->e * 0.9956 + 0.034;
}

__attribute__((noinline)) void method_35(struct particle *p)
{
	for (int i = 0; i < 1; i++)
		p->e = p->e * 0.9955 + 0.035;
}

__attribute__((noinline)) void method_36(struct particle *p)
{
	for (int i = 0; i < 2; i++)
		p->e = p->e * 0.9954 + 0.036;
}

__attribute__((noinline)) void method_37(struct particle *p)
{
	for (int i = 0; i < 3; i++)
		p->e = p->e * 0.9953 + 0.037;
}

__attribute__((noinline)) void method_38(struct particle *p)
{
	for (int i = 0; i < 4; i++)
		p->e = p->e * 0.9952 + 0.038;
}

__attribute__((noinline)) void method_39(struct particle *p)
{
	for (int i = 0; i < 5; i++)
		p->e = p->e * 0.9951 + 0.039;
}

__attribute__((noinline)) void method_40(struct particle *p)
{
	for (int i = 0; i < 6; i++)
		p->e = p->e * 0.9950 + 0.040;
}

__attribute__((noinline)) void method_41(struct particle *p)
{
	for (int i = 0; i < 7; i++)
		p->e = p->e * 0.9949 + 0.041;
}

__attribute__((noinline)) void method_42(struct particle *p)
{
	for (int i = 0; i < 1; i++)
		p->e = p->e * 0.9948 + 0.042;
}

__attribute__((noinline)) void method_43(struct particle *p)
{
	for (int i = 0; i < 2; i++)
		p->e = p->e * 0.9947 + 0.043;
}

__attribute__((noinline)) void method_44(struct particle *p)
{
	for (int i = 0; i < 3; i++)
		p->e = p->e * 0.9946 + 0.044;
}

__attribute__((noinline)) void method_45(struct particle *p)
{
	for (int i = 0; i < 4; i++)
		p->e = p->e * 0.9945 + 0.045;
}

__attribute__((noinline)) void method_46(struct particle *p)
{
	for (int i = 0; i < 5; i++)
		p->e = p->e * 0.9944 + 0.046;
}

__attribute__((noinline)) void method_47(struct particle *p)
{
	for (int i = 0; i < 6; i++)
		p->e = p->e * 0.9943 + 0.047;
}

typedef void (*method_t)(struct particle *);
static const method_t methods[48] = {
	method_0,
	method_1,
	method_2,
	method_3,
	method_4,
	method_5,
	method_6,
	method_7,
	method_8,
	method_9,
	method_10,
	method_11,
	method_12,
	method_13,
	method_14,
	method_15,
	method_16,
	method_17,
	method_18,
	method_19,
	method_20,
	method_21,
	method_22,
	method_23,
	method_24,
	method_25,
	method_26,
	method_27,
	method_28,
	method_29,
	method_30,
	method_31,
	method_32,
	method_33,
	method_34,
	method_35,
	method_36,
	method_37,
	method_38,
	method_39,
	method_40,
	method_41,
	method_42,
	method_43,
	method_44,
	method_45,
	method_46,
	method_47,
};

/* material of a position: nested regions of very different sizes */
static int material(const struct particle *p)
{
	double r2 = p->x * p->x + p->y * p->y + p->z * p->z;

	if (r2 < 0.01) return 5;
	if (r2 < 0.05) return 4;
	if (r2 < 0.2) return 3;
	if (p->z > 0.6) return 2;
	if (p->x > 0.3) return 1;
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 45000000;
	struct particle p = { 0, 0, 0, 1, 42 };

	while (n--) {
		int mat = material(&p), first = mat * 8;
		double u = rnd(&p);

		/* a process chosen by a skewed law inside the material's eight */
		methods[first + (int)(8 * u * u * u)](&p);
		if (u < 0.3)
			methods[(first + 3) % 48](&p);
		if (p.e > 2.0)
			methods[47 - mat](&p);
		p.x += (rnd(&p) - 0.5) * 0.2;
		p.y += (rnd(&p) - 0.5) * 0.2;
		p.z += (rnd(&p) - 0.5) * 0.2;
		if (p.x * p.x + p.y * p.y + p.z * p.z > 1.0)
			p.x = p.y = p.z = 0;
	}
	printf("%g\n", p.e);
	return 0;
}
