.output-asan/user/hist.o: user/hist.c user/hist.h user/profile.h \
 user/util.h user/symbolizer.h
user/hist.h:
user/profile.h:
user/util.h:
user/symbolizer.h:
