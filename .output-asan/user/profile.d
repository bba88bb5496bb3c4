.output-asan/user/profile.o: user/profile.c user/container.h user/util.h \
 user/profile.h
user/container.h:
user/util.h:
user/profile.h:
