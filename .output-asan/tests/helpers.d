.output-asan/tests/helpers.o: tests/helpers.c tests/helpers.h \
 user/profile.h user/util.h user/symbolizer.h user/profile.h
tests/helpers.h:
user/profile.h:
user/util.h:
user/symbolizer.h:
user/profile.h:
