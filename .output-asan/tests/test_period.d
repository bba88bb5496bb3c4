.output-asan/tests/test_period.o: tests/test_period.c user/period.h \
 user/util.h
user/period.h:
user/util.h:
