.output-asan/user/cmd-selftest.o: user/cmd-selftest.c user/cmds.h \
 user/util.h user/sampler.h user/event.h user/period.h user/profile.h
user/cmds.h:
user/util.h:
user/sampler.h:
user/event.h:
user/period.h:
user/profile.h:
