.output-asan/user/profile.o: user/profile.c user/profile.h user/util.h
user/profile.h:
user/util.h:
