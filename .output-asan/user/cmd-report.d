.output-asan/user/cmd-report.o: user/cmd-report.c user/cmds.h user/hist.h \
 user/profile.h user/util.h user/symbolizer.h user/truth.h
user/cmds.h:
user/hist.h:
user/profile.h:
user/util.h:
user/symbolizer.h:
user/truth.h:
