.output-asan/user/util.o: user/util.c user/util.h
user/util.h:
