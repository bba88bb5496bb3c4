.output-asan/user/target.o: user/target.c user/target.h user/util.h
user/target.h:
user/util.h:
