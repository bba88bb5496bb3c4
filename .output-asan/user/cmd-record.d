.output-asan/user/cmd-record.o: user/cmd-record.c user/cgroup.h \
 user/util.h user/cmds.h user/ksyms.h user/profile.h user/sampler.h \
 user/event.h user/period.h user/sideband.h user/target.h
user/cgroup.h:
user/util.h:
user/cmds.h:
user/ksyms.h:
user/profile.h:
user/sampler.h:
user/event.h:
user/period.h:
user/sideband.h:
user/target.h:
