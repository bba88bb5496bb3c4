.output-asan/user/hist_print.o: user/hist_print.c user/hist.h \
 user/profile.h user/util.h user/symbolizer.h user/json_writer.h
user/hist.h:
user/profile.h:
user/util.h:
user/symbolizer.h:
user/json_writer.h:
