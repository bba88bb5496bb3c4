.output-asan/tests/test_sideband.o: tests/test_sideband.c user/sideband.h \
 user/profile.h user/util.h
user/sideband.h:
user/profile.h:
user/util.h:
