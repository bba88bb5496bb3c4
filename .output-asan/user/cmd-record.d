.output-asan/user/cmd-record.o: user/cmd-record.c user/cmds.h user/util.h \
 user/profile.h user/session.h user/event.h user/period.h
user/cmds.h:
user/util.h:
user/profile.h:
user/session.h:
user/event.h:
user/period.h:
