.output-asan/user/period.o: user/period.c user/period.h user/util.h
user/period.h:
user/util.h:
