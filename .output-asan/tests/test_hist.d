.output-asan/tests/test_hist.o: tests/test_hist.c user/hist.h \
 user/profile.h user/util.h user/symbolizer.h
user/hist.h:
user/profile.h:
user/util.h:
user/symbolizer.h:
