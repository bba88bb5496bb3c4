.output-asan/tests/test_profile.o: tests/test_profile.c tests/helpers.h \
 user/profile.h user/util.h
tests/helpers.h:
user/profile.h:
user/util.h:
